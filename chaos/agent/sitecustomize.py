"""tfchaos agent bootstrap: the ``sitecustomize`` of a worker's Python.

Layered into the worker's image as ``/opt/tfchaos-agent/sitecustomize.py``
(see chaos/agent/layer.py), that directory first on PYTHONPATH, so every
Python process of the job imports it at start-up. With CHAOS_AGENT=1 it turns
the agent on (chaos.agent.install); with anything else it does nothing. Either
way it then runs the ``sitecustomize`` it shadows, the next one on sys.path
(Debian's python3 ships /usr/lib/python3.X/sitecustomize.py), so the
interpreter starts as it would without the agent. An agent that cannot start
prints one line on stderr; it never stops the job.
"""

import os
import sys


def _say(text):
    try:
        sys.stderr.write("tfchaos agent: " + text + "\n")
    except Exception:  # noqa: BLE001
        pass


def _turn_on():
    if os.environ.get("CHAOS_AGENT") != "1":
        return None
    try:
        from chaos.agent import install

        install.install_import_hooks()
        return install
    except Exception as exc:  # noqa: BLE001 - the job runs without the agent
        _say("not started: %s: %s" % (type(exc).__name__, exc))
        return None


def _same_dir(entry, here):
    try:
        return os.path.realpath(entry or os.curdir) == here
    except Exception:  # noqa: BLE001
        return False


def next_sitecustomize(path=None, here=None):
    """The spec of the sitecustomize this file shadows: the first on ``path``
    after this file's directory (None when there is none)."""
    import importlib.machinery

    path = list(sys.path if path is None else path)
    here = os.path.realpath(here or os.path.dirname(os.path.abspath(__file__)))
    mine = [i for i, entry in enumerate(path) if _same_dir(entry, here)]
    rest = path[mine[0] + 1 :] if mine else path
    rest = [entry for entry in rest if not _same_dir(entry, here)]
    return importlib.machinery.PathFinder.find_spec("sitecustomize", rest)


shadowed = None  # the module next_sitecustomize found, once it ran


def _chain():
    global shadowed
    try:  # importlib.util's own module_from_spec, without the imports importlib.util makes
        from importlib._bootstrap import module_from_spec
    except ImportError:  # pragma: no cover - other Pythons
        from importlib.util import module_from_spec
    try:
        spec = next_sitecustomize()
    except Exception as exc:  # noqa: BLE001
        _say("could not look for the next sitecustomize: %s: %s" % (type(exc).__name__, exc))
        return
    if spec is None or spec.loader is None:
        return
    module = module_from_spec(spec)
    # Its own errors propagate to site.py, which reports them as it would
    # without the agent ("Error in sitecustomize; ...").
    spec.loader.exec_module(module)
    shadowed = module


def _main():
    agent = _turn_on()
    try:
        _chain()
    finally:
        if agent is not None:
            try:
                agent.install_excepthooks()
            except Exception as exc:  # noqa: BLE001
                _say("exception hooks not installed: %s: %s" % (type(exc).__name__, exc))


if __name__ == "sitecustomize":  # site.py's import; a plain import of chaos.agent.sitecustomize does nothing
    _main()
