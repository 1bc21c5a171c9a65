"""Error events: an exception that escapes ``fit`` or reaches the top of a
thread. The class is given as ``module.qualname`` and the message cut at 4000
characters, as the harness does. The original hooks still run, so the job
prints its traceback and exits as it would without the agent."""

from __future__ import annotations

import sys

from chaos.agent.guard import swallow

MAX_MESSAGE = 4000
_MARK = "_tfchaos_agent_hook"
_reported: list[BaseException] = []  # kept alive, so an id is never reused


def qualified_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def reported() -> bool:
    """Whether any error was reported in this process."""
    return bool(_reported)


def report_exception(exc: BaseException) -> None:
    """One error event per exception object, however many hooks see it. Never raises."""
    try:
        if any(seen is exc for seen in _reported):
            return
        _reported.append(exc)
        del _reported[:-64]
        from chaos.agent.runtime import emitter  # here, not at start-up: chaos.events is not cheap
        from chaos.events import ErrorEvent

        emitter().emit(ErrorEvent, error_class=qualified_name(type(exc)), message=str(exc)[:MAX_MESSAGE])
    except Exception as failure:  # noqa: BLE001
        swallow("reporting an error", failure)


def _wrap_excepthook(previous):
    def excepthook(exc_type, exc, tb):
        if exc is not None:
            report_exception(exc)
        previous(exc_type, exc, tb)

    setattr(excepthook, _MARK, True)
    return excepthook


def _wrap_thread_excepthook(previous):
    def thread_excepthook(args):
        # threading's default is silent about SystemExit; so are we.
        if args.exc_value is not None and not issubclass(args.exc_type, SystemExit):
            report_exception(args.exc_value)
        previous(args)

    setattr(thread_excepthook, _MARK, True)
    return thread_excepthook


def install() -> None:
    """Wrap sys.excepthook and threading.excepthook, unless ours already are.

    Called again when TensorFlow is imported: a hook the job or a library set
    since then gets wrapped too (reports are deduplicated per exception). The
    threading hook only once threading is imported (it is by then): importing
    it at every interpreter start would cost every process of the job.
    """
    if not getattr(sys.excepthook, _MARK, False):
        sys.excepthook = _wrap_excepthook(sys.excepthook)
    threading = sys.modules.get("threading")
    if threading is not None and not getattr(threading.excepthook, _MARK, False):
        threading.excepthook = _wrap_thread_excepthook(threading.excepthook)
