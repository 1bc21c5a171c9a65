"""Ctrl-C while ``chaos`` still imports (its first seconds: every subcommand's
module, scipy, aiohttp, docker, ...) ends with one line and exit 130, never a
KeyboardInterrupt traceback, for ``python -m chaos.cli`` and for the installed
``chaos`` entry point.

The signal must land inside chaos's import, never in Python's own start (its
``site`` import, which no program can guard): a CI run under load sent it 0.36 s
after the spawn, still inside ``site``, and timed delays missed the import on a
loaded machine. So each command runs behind an import hook that writes a line on
stderr when one of chaos's subcommand modules starts importing, and the signal
goes as that line arrives: inside the import on a fast or a loaded machine
alike. Docker is pointed at a socket that does not exist: a process that got
past its imports ends at the preflight and touches nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "killed-worker-recovers-from-checkpoint.yaml"
NOT_STARTED = "interrupted before the command started: nothing was created"
# Subcommand modules chaos.cli.build_parser imports (inside its guard), in order:
# the signal goes as each starts importing.
AT = ["chaos.scenario.cli", "chaos.backends.docker.cli", "chaos.compose.cli", "chaos.compare.cli"]
MARK = "importing "
# An import hook announcing those modules, then the command as it would run.
HOOK = (
    "import sys\n"
    "class Announce:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    f"        if name in {AT!r}: sys.stderr.write({MARK!r} + name + '\\n'); sys.stderr.flush()\n"
    "sys.meta_path.insert(0, Announce())\n"
    "import runpy\n"
)


def env():
    return {
        **os.environ,
        "DOCKER_HOST": "unix:///nonexistent/docker.sock",
        "TERM": "dumb",
        "CI": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def entry_point():
    script = Path(sys.executable).parent / "chaos"
    return str(script) if script.is_file() else None


def announced(run: str, argv: list[str]) -> list[str]:
    return [sys.executable, "-c", HOOK + f"sys.argv = {argv!r}\n" + run]


COMMANDS = {
    "python -m chaos.cli": lambda args: announced(
        "runpy.run_module('chaos.cli', run_name='__main__', alter_sys=True)", ["chaos", *args]
    ),
    "the chaos entry point": (
        lambda args: announced(f"runpy.run_path({entry_point()!r}, run_name='__main__')", [entry_point(), *args])
    )
    if entry_point()
    else None,
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_ctrl_c_while_importing_exits_130_with_one_line_and_no_traceback(name):
    command = COMMANDS[name]
    if command is None:
        pytest.skip("no installed chaos entry point beside this interpreter")
    for module in AT:
        process = subprocess.Popen(
            command(["run", str(SCENARIO)]),
            env=env(),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        while (line := process.stderr.readline()) not in ("", MARK + module + "\n"):
            pass
        assert line, f"{name} never imported {module}"
        process.send_signal(signal.SIGINT)
        stdout, rest = process.communicate(timeout=60)
        stderr = "".join(l for l in rest.splitlines(keepends=True) if not l.startswith(MARK))
        said = f"{name}, SIGINT as {module} started importing: exit {process.returncode}\n{stderr}"
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, said
        assert process.returncode == 130, said
        assert stderr.strip() == NOT_STARTED, said
        assert stdout == "", said


def test_the_message_of_an_interrupt_before_the_command_started_claims_no_teardown(monkeypatch, capsys):
    import chaos.cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(chaos.cli, "build_parser", interrupted)
    try:
        code = chaos.cli.main(["run"])
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped chaos.cli.main")
    assert code == 130
    assert capsys.readouterr().err == "interrupted before the command started: nothing was created\n"


# --- chaos called in-process by a host (a test session) --------------------------------


def _interrupting_command(monkeypatch):
    """`chaos validate` whose work is interrupted, as Ctrl-C would interrupt a run."""
    import chaos.scenario.cli as scenario_cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(scenario_cli, "validate_command", interrupted, raising=False)
    real_register = scenario_cli.register

    def register(sub):
        real_register(sub)
        sub.choices["validate"].set_defaults(func=interrupted)

    monkeypatch.setattr(scenario_cli, "register", register)


def test_an_embedded_command_passes_the_interrupt_on_to_its_host(monkeypatch, capsys):
    """A test that runs `chaos compare` in-process must not swallow the Ctrl-C that
    should stop the test session (it did: the test failed and the session went on)."""
    from chaos.cli import main

    _interrupting_command(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        main(["validate", str(SCENARIO)], embedded=True)
    assert "interrupted; everything this run created was torn down" in capsys.readouterr().err


def test_the_program_ends_an_interrupted_command_with_130(monkeypatch, capsys):
    from chaos.cli import main

    _interrupting_command(monkeypatch)
    assert main(["validate", str(SCENARIO)]) == 130


def test_the_hosts_sigterm_handler_is_back_after_a_command():
    from chaos.cli import main

    def host_handler(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, host_handler)
    try:
        main(["validate", str(SCENARIO)])
        assert signal.getsignal(signal.SIGTERM) is host_handler
    finally:
        signal.signal(signal.SIGTERM, previous)
