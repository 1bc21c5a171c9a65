"""Readiness waits: tenacity polls, and a timeout error that shows the
container's status, the tail of its log and a hint."""

from __future__ import annotations

from collections.abc import Callable

from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed

from chaos.errors import InfrastructureError


def container_report(container) -> str:
    try:
        container.reload()
        state = container.attrs.get("State", {})
        status = f"{container.name}: status={state.get('Status')} exit_code={state.get('ExitCode')}"
        if state.get("OOMKilled"):
            status += " OOMKilled"
        tail = container.logs(tail=15).decode("utf-8", "replace").rstrip()
        return status + ("\n  last log lines:\n    " + tail.replace("\n", "\n    ") if tail else "")
    except Exception as exc:  # the container may be gone already
        return f"{getattr(container, 'name', '?')}: not inspectable ({exc})"


def wait_until(
    check: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    containers: list = (),
    hint: str,
    interval: float = 0.2,
) -> None:
    """Poll ``check`` until true; on timeout raise InfrastructureError with evidence."""

    def attempt() -> bool:
        try:
            return bool(check())
        except Exception:
            return False

    retrying = Retrying(
        stop=stop_after_delay(timeout),
        wait=wait_fixed(interval),
        retry=retry_if_result(lambda ok: not ok),
    )
    try:
        retrying(attempt)
    except RetryError:
        details = "\n".join(container_report(c) for c in containers)
        raise InfrastructureError(
            f"timed out after {timeout:g}s waiting for {what}" + (f"\n{details}" if details else ""),
            hint=hint,
        ) from None
