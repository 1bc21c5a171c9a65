"""The bootstrap in real interpreters: the layer (chaos.agent.layer) first on
PYTHONPATH, a stand-in for Debian's sitecustomize behind it, fake TensorFlow
and Keras packages on disk. CHAOS_AGENT=1 turns the agent on; anything else
leaves the interpreter as it is without the agent; either way the shadowed
sitecustomize runs, and the job's output and exit code do not change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from chaos.agent import layer
from chaos.events import LogLine, parse_line

HERE = Path(__file__).parent

SHADOWED = """\
import sys
print("shadowed sitecustomize ran", file=sys.stderr)
_previous = sys.excepthook
def _apport_like(*info):
    print("shadowed hook saw", info[0].__name__, file=sys.stderr)
    _previous(*info)
sys.excepthook = _apport_like
"""

FAKE_TF = 'print("importing fake tensorflow")\n__version__ = "2.99.0"\n'

# A file-based fake Keras 2: the training module the agent hooks.
FAKE_TRAINING = """\
import sys
import fake_numpy
sys.modules.setdefault("numpy", fake_numpy)
import fake_keras
_modules = fake_keras.make_modules("keras")
sys.modules["keras.src.callbacks"] = _modules["keras.src.callbacks"]
Model = _modules["keras.src.engine.training"].Model
"""


@pytest.fixture
def tree(tmp_path):
    agent = layer.write_tree(tmp_path / "agent")
    shadowed = tmp_path / "debian"
    shadowed.mkdir()
    (shadowed / "sitecustomize.py").write_text(SHADOWED)
    fakes = tmp_path / "fakes"
    (fakes / "tensorflow").mkdir(parents=True)
    (fakes / "tensorflow" / "__init__.py").write_text(FAKE_TF)
    engine = fakes / "keras" / "src" / "engine"
    engine.mkdir(parents=True)
    for pkg in (fakes / "keras", fakes / "keras" / "src", engine):
        (pkg / "__init__.py").write_text("")
    (engine / "training.py").write_text(FAKE_TRAINING)
    return {"agent": agent, "shadowed": shadowed, "fakes": fakes, "tmp": tmp_path}


def run(tree, code: str, agent: str | None, layered: bool = True) -> subprocess.CompletedProcess:
    entries = ([str(tree["agent"])] if layered else []) + [str(tree["shadowed"]), str(tree["fakes"]), str(HERE)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHAOS_", "PYTHON"))}
    env.update(PYTHONPATH=os.pathsep.join(entries), CHAOS_WORKER_INDEX="1")
    if agent is not None:
        env["CHAOS_AGENT"] = agent
    script = tree["tmp"] / "job.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, cwd=tree["tmp"], timeout=60
    )


def events(stdout: str):
    parsed = [parse_line(line, "?", 0.0) for line in stdout.splitlines()]
    return [e for e in parsed if not isinstance(e, LogLine)]


PROBE = """\
import sys
print("finders", [type(f).__name__ for f in sys.meta_path][:1])
print("agent loaded", "chaos.agent.install" in sys.modules)
"""


@pytest.mark.parametrize("value", [None, "0", "", "true"])
def test_without_chaos_agent_1_nothing_is_installed_and_the_shadowed_one_runs(tree, value):
    out = run(tree, PROBE, value)
    assert out.returncode == 0, out.stderr
    assert "agent loaded False" in out.stdout and "PostImportFinder" not in out.stdout
    assert out.stderr == "shadowed sitecustomize ran\n"


def test_with_chaos_agent_1_hooks_are_installed_and_the_shadowed_one_still_runs(tree):
    out = run(tree, PROBE, "1")
    assert out.returncode == 0, out.stderr
    assert "finders ['PostImportFinder']" in out.stdout and "agent loaded True" in out.stdout
    assert out.stderr == "shadowed sitecustomize ran\n"


FIT_JOB = """\
import tensorflow as tf
from keras.src.engine.training import Model
model = Model()
model.fit([0, 0], epochs=2)
print("job done", tf.__version__)
"""


def test_a_job_importing_tensorflow_and_calling_fit_is_reported(tree):
    out = run(tree, FIT_JOB, "1")
    assert out.returncode == 0, out.stderr
    got = events(out.stdout)
    notices = [e for e in got if e.kind == "notice"]  # the fake TF has no tf.function to hook: said once
    assert len(notices) == 1 and "cannot hook this TensorFlow's tf.function (TensorFlow 2.99.0" in notices[0].text
    assert notices[0].topic == "agent-steps-unobserved"  # fit's own steps below keep the agent's evidence
    got = [e for e in got if e.kind != "notice"]
    assert [e.kind for e in got] == ["start", "plan", "step", "step", "epoch_end", "step", "step", "epoch_end", "done"]
    assert {e.source for e in got} == {"worker-1"}
    assert got[0].tf_version == "2.99.0"
    plain = [line for line in out.stdout.splitlines() if line and not line.startswith("{")]
    assert plain == ["importing fake tensorflow", "job done 2.99.0"]


def test_the_same_job_without_the_agent_prints_the_same_and_no_events(tree):
    with_agent, without, unlayered = (
        run(tree, FIT_JOB, "1"),
        run(tree, FIT_JOB, None),
        run(tree, FIT_JOB, "1", layered=False),
    )
    for out in (without, unlayered):
        assert out.returncode == 0 and events(out.stdout) == []
        assert out.stdout == "importing fake tensorflow\njob done 2.99.0\n"
    assert [
        line for line in with_agent.stdout.splitlines() if line and not line.startswith("{")
    ] == without.stdout.splitlines()
    assert with_agent.stderr == without.stderr


FAILING_JOB = """\
import tensorflow
class UnavailableError(Exception):
    pass
UnavailableError.__module__ = "tensorflow.python.framework.errors_impl"
raise UnavailableError("Collective ops is aborted by: Socket closed")
"""


def test_an_uncaught_error_is_an_event_and_the_traceback_and_exit_code_are_unchanged(tree):
    on, off = run(tree, FAILING_JOB, "1"), run(tree, FAILING_JOB, None)
    assert on.returncode == off.returncode == 1
    assert on.stderr == off.stderr  # the same traceback, through the shadowed hook too
    assert "shadowed hook saw UnavailableError" in on.stderr
    error = events(on.stdout)[-1]
    assert error.kind == "error"
    assert error.error_class == "tensorflow.python.framework.errors_impl.UnavailableError"
    assert error.message == "Collective ops is aborted by: Socket closed"


def test_exit_codes_pass_through(tree):
    for code in ("raise SystemExit(3)", "import os; os._exit(5)", "import sys; sys.exit(0)"):
        on, off = run(tree, code, "1"), run(tree, code, None)
        assert on.returncode == off.returncode and events(on.stdout) == []


def test_an_agent_that_cannot_start_says_so_once_and_the_job_runs(tree):
    (tree["agent"] / "chaos" / "agent" / "install.py").unlink()
    out = run(tree, FIT_JOB, "1")
    assert out.returncode == 0
    assert out.stdout == "importing fake tensorflow\njob done 2.99.0\n"
    first, second = out.stderr.splitlines()
    assert first.startswith("tfchaos agent: not started: ImportError: cannot import name 'install'")
    assert second == "shadowed sitecustomize ran"


def test_a_broken_shadowed_sitecustomize_is_reported_by_site_as_without_the_agent(tree):
    (tree["shadowed"] / "sitecustomize.py").write_text("raise RuntimeError('broken image')\n")
    on, off = run(tree, PROBE, "1"), run(tree, PROBE, None)
    assert on.returncode == off.returncode == 0
    assert "Error in sitecustomize" in off.stderr and "broken image" in off.stderr
    assert on.stderr == off.stderr
    assert "agent loaded True" in on.stdout


def test_next_sitecustomize_is_the_first_after_the_agents_directory(tree):
    import importlib.util

    spec = importlib.util.spec_from_file_location("agent_site", tree["agent"] / "sitecustomize.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not named "sitecustomize": defines, does not run
    here = str(tree["agent"])
    other = tree["tmp"] / "before"
    other.mkdir()
    (other / "sitecustomize.py").write_text("")
    found = module.next_sitecustomize([str(other), here, str(tree["fakes"]), str(tree["shadowed"])], here)
    assert found.origin == str(tree["shadowed"] / "sitecustomize.py")
    assert module.next_sitecustomize([here, str(tree["fakes"])], here) is None
    assert module.shadowed is None


def test_events_carry_one_json_object_per_line(tree):
    out = run(tree, FIT_JOB, "1")
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            assert json.loads(line)["source"] == "worker-1"
