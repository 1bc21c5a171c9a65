"""A proxied TCP connection: two socket sides and two pipes between them.

Both sides are asyncio BufferedProtocols (recv_into the server's one read
buffer, see ``chaos.proxy.budget``).
Flow control: when a side's write buffer fills, reading from the other side
pauses until it drains, so memory stays bounded at any speed mismatch.
Half-closes travel through: EOF from one side becomes a FIN on the other, and
the connection closes once both directions have ended. A closed connection
unlinks its parts, so reference counting frees it at once (no cycles).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from typing import Any

from chaos.proxy.model import Stream
from chaos.proxy.pipe import Pipe

log = logging.getLogger("chaos.proxy")

DIAL_TIMEOUT = 10.0  # seconds to reach the upstream before giving up on a client
# An upstream whose name does not resolve is asked again this often until DIAL_TIMEOUT:
# Docker drops a disconnected container's name at once, where a partitioned host
# would just not answer (and a standby's name appears when it joins the network).
RESOLVE_RETRY_S = 0.25


async def open_upstream(loop, protocol_factory, host: str, port: int):
    """The dial itself (resolution included): one name for tests to fake DNS at."""
    return await loop.create_connection(protocol_factory, host, port)


class _Discard:
    """What the sides of a closed connection read into: a late read is dropped."""

    _scratch = memoryview(bytearray(4096))

    def read_buffer(self) -> memoryview:
        return self._scratch

    def feed(self, nbytes: int) -> None:
        pass

    def feed_eof(self) -> None:
        pass


DISCARD = _Discard()


class Side(asyncio.BufferedProtocol):
    def __init__(self, conn: Connection, role: str) -> None:
        self.conn = conn
        self.role = role
        self.transport: Any = None
        self.out: Pipe | _Discard  # the pipe that carries what this side sends
        self.pauses: set[str] = set()
        self._drain: asyncio.Future | None = None

    # asyncio protocol callbacks
    def connection_made(self, transport: Any) -> None:
        if self.conn.closed:  # an upstream that answered after the client left
            # Not kept: that transport keeps this side as its protocol, and
            # the pair stayed alive as a cycle.
            transport.close()
            return
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        if self.pauses:
            transport.pause_reading()
        self.conn.side_made(self)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.out.read_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        self.out.feed(nbytes)
        if self.pauses and self.transport is not None and self.transport.is_reading():
            # uvloop starts reading after connection_made returns, undoing a
            # pause made there ("dial"): without this a client could fill the
            # proxy's memory while its upstream is being dialled.
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        self.out.feed_eof()
        return True  # keep the socket open: the other direction may still flow

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        self.conn.close()

    def pause_writing(self) -> None:
        if not self.conn.closed:  # a closed connection only flushes what it wrote
            self.conn.other(self).pause("drain")

    def resume_writing(self) -> None:
        if not self.conn.closed:
            self.conn.other(self).resume("drain")
        self._release()

    # used by the pipes
    def pause(self, reason: str) -> None:
        self.pauses.add(reason)
        transport = self.transport
        if transport is not None and not transport.is_closing() and transport.is_reading():
            transport.pause_reading()

    def resume(self, reason: str) -> None:
        if reason not in self.pauses:
            return
        self.pauses.discard(reason)
        if not self.pauses and self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()

    async def drained(self) -> None:
        """Return once our write buffer is below the transport's high-water mark."""
        while not self.conn.closed and "drain" in self.conn.other(self).pauses:
            if self._drain is None:
                self._drain = self.conn.loop.create_future()
            await self._drain

    def _release(self) -> None:
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)
        self._drain = None


class Connection:
    def __init__(self, proxy: Any) -> None:
        self.proxy = proxy
        self.loop = proxy.loop
        self.closed = False
        self.client = Side(self, "client")
        self.upstream = Side(self, "upstream")
        self.up = Pipe(self, Stream.UPSTREAM, self.client, self.upstream, proxy.budget)
        self.down = Pipe(self, Stream.DOWNSTREAM, self.upstream, self.client, proxy.budget)
        self.client.out, self.upstream.out = self.up, self.down
        self.client.pauses.add("dial")  # read nothing until the upstream answers
        self._dial: asyncio.Task | None = None

    def other(self, side: Side) -> Side:
        return self.upstream if side is self.client else self.client

    def side_made(self, side: Side) -> None:
        if side is self.client:
            self.proxy.connections.add(self)
            self.proxy.client_accepted(side.transport.get_extra_info("peername"))
            self.apply_toxics()  # before any byte can arrive from either side
            self._dial = self.loop.create_task(self._connect_upstream())

    async def _connect_upstream(self) -> None:
        host, port = self.proxy.upstream.host, self.proxy.upstream.port
        side = self.upstream  # close() unlinks it; a late answer still needs it (and closes at once)
        unresolved = ""
        try:
            # asyncio.timeout, not wait_for: wait_for's inner task keeps a failed
            # dial's exception, whose traceback keeps wait_for's frame and so
            # that task: a cycle that held every refused connection.
            async with asyncio.timeout(DIAL_TIMEOUT):
                while True:
                    try:
                        await open_upstream(self.loop, lambda: side, host, port)
                        break
                    except socket.gaierror as exc:  # no such name (yet, or any more): like no answer
                        unresolved = str(exc)
                    await asyncio.sleep(RESOLVE_RETRY_S)
        except (TimeoutError, OSError) as exc:
            # A string, not exc: a kept log record would keep its traceback's frames.
            if unresolved and isinstance(exc, asyncio.TimeoutError):
                reason = f"{unresolved} (for {DIAL_TIMEOUT:g} s)"
            else:
                reason = str(exc) or f"no answer within {DIAL_TIMEOUT:g} s"
            log.warning("proxy %s: cannot reach upstream %s: %s", self.proxy.name, self.proxy.upstream, reason)
            self.close()
            return
        finally:
            self._dial = None
        if self.closed:
            return
        self.up.start_pump()
        self.client.resume("dial")

    def apply_toxics(self) -> None:
        toxics = self.proxy.toxics
        self.up.set_toxics(toxics.chain(Stream.UPSTREAM))
        self.down.set_toxics(toxics.chain(Stream.DOWNSTREAM))

    def half_closed(self, pipe: Pipe) -> None:
        """``pipe``'s source sent EOF and it has gone through: pass the FIN on."""
        if self.closed:
            return
        transport = pipe.dst.transport
        try:
            if transport is not None and not transport.is_closing() and transport.can_write_eof():
                transport.write_eof()
        except OSError:
            self.close()
            return
        if not self.closed and self.up.eof_done and self.down.eof_done:
            self.close()

    def close(self) -> None:
        """Close both sockets (pending writes are flushed first) and unlink."""
        if self.closed:
            return
        self.closed = True
        self.proxy.connections.discard(self)
        dial, self._dial = self._dial, None  # (a dial cancelled before it ran never clears it)
        if dial is not None:
            dial.cancel()
        for pipe in (self.up, self.down):
            pipe.shutdown()
        for side in (self.client, self.upstream):
            side._release()
            side.out = DISCARD
            if side.transport is not None and not side.transport.is_closing():
                side.transport.close()
        # Sides, pipes and this object refer to each other. Cut every cycle so a
        # closed connection is freed by reference counting once its transports
        # let go of their sides: left to the cyclic GC, whose full collections
        # a few objects per connection rarely trigger, closed connections piled
        # up with their read buffers (hundreds of MB after a few load rounds).
        self.client = self.upstream = self.up = self.down = None  # type: ignore[assignment]

    def reset(self, side: Side) -> None:
        """Abort both sockets with a TCP RST (SO_LINGER 0), as the official
        server does for reset_peer; ``side`` is the one the toxic writes to."""
        if self.closed:
            return
        for each in (side, self.other(side)):
            transport = each.transport
            if transport is None or transport.is_closing():
                continue
            try:
                transport.get_extra_info("socket").setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
            except (OSError, AttributeError):
                pass
            transport.abort()
        self.close()
