"""Socket set-up with errors a caller can act on: binding listeners and
checking that an upstream host resolves."""

from __future__ import annotations

import asyncio
import errno
import socket

from chaos.proxy.apierror import ApiError
from chaos.proxy.model import Address

RESOLVE_TIMEOUT = 3.0


def _pick(infos: list) -> tuple:
    # One address only: binding every result of "localhost" to port 0 would
    # give each family a different port. Prefer IPv4, like most clients.
    for info in infos:
        if info[0] == socket.AF_INET:
            return info
    return infos[0]


def bind_socket(host: str, port: int, infos: list | None = None) -> socket.socket:
    """A bound, non-blocking TCP socket; raises OSError / socket.gaierror."""
    if infos is None:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, type_, proto, _, sockaddr = _pick(infos)
    sock = socket.socket(family, type_, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT only, never two listeners
        sock.bind(sockaddr)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def bind_error_text(exc: OSError) -> tuple[str, str]:
    """(error, hint) for a failed bind."""
    if exc.errno == errno.EADDRINUSE:
        return "address already in use", "pick another port, or 0 for any free port"
    if exc.errno == errno.EADDRNOTAVAIL:
        return "address is not one of this machine's", "use 127.0.0.1, 0.0.0.0 or an address of this host"
    if exc.errno == errno.EACCES:
        return "permission denied (privileged port?)", "use a port above 1023"
    return str(exc.strerror or exc), "check the listen address"


async def bind_listen(address: Address, field: str = "listen") -> socket.socket:
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(address.host, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE),
            RESOLVE_TIMEOUT,
        )
    except (TimeoutError, OSError):
        raise ApiError(
            400,
            f"cannot resolve listen host {address.host!r}",
            field,
            hint="use an IP address of this machine, e.g. 127.0.0.1 or 0.0.0.0",
        ) from None
    try:
        return bind_socket(address.host, address.port, infos)
    except OSError as exc:
        error, hint = bind_error_text(exc)
        raise ApiError(400, f"cannot listen on {address}: {error}", field, hint=hint) from None


async def check_upstream(address: Address, field: str = "upstream") -> None:
    """Reject an upstream whose host does not resolve now (a typo would
    otherwise surface only as silently refused connections)."""
    loop = asyncio.get_running_loop()
    try:
        await asyncio.wait_for(loop.getaddrinfo(address.host, address.port, type=socket.SOCK_STREAM), RESOLVE_TIMEOUT)
    except (TimeoutError, OSError, UnicodeError):
        raise ApiError(
            400,
            f"cannot resolve upstream host {address.host!r}",
            field,
            hint="use a resolvable host name or an IP address, e.g. '127.0.0.1:2222'",
        ) from None
