"""One direction of one proxied connection: read from ``src``, write to ``dst``.

Every read lands in the server's one shared buffer (``Budget.read_buffer``),
so an idle connection holds no buffer at all.

Fast path: no toxic applies and nothing is queued -> the bytes just read are
written straight to the other socket inside the read callback (no task switch,
no copy unless the kernel did not take them all).

Toxic path: chunks are queued with their arrival time and a pump task runs each
through the toxics that apply *now* (the chain is replaced whenever toxics
change, and re-read per chunk and per stage), so a change reaches connections
that are already open. Sleeping toxics wake up early when toxics change.
The bytes a direction holds (queued or inside the toxics) are counted against
the server's ``Budget``, which decides when to pause reading the source.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from typing import Any

from chaos.proxy.budget import MIN_READ, Budget
from chaos.proxy.model import Stream, Toxic

log = logging.getLogger("chaos.proxy")


class Pipe:
    def __init__(self, conn: Any, stream: Stream, src: Any, dst: Any, budget: Budget) -> None:
        self.conn = conn
        self.stream = stream
        self.src = src
        self.dst = dst
        self.loop = conn.loop
        self.budget = budget
        self.chain: tuple[Toxic, ...] = ()  # toxics that apply to this connection, in order
        self.states: dict[int, Any] = {}  # uid -> per-connection state of an applying toxic
        self._by_uid: dict[int, Toxic] = {}
        self.rolls: dict[int, bool] = {}  # uid -> toxicity decision for this connection
        self.queue: deque[tuple[bytes | None, float]] = deque()
        self.held = 0  # bytes read and not yet written on (toxic path)
        self.pump: asyncio.Task | None = None
        self.wake: asyncio.Future = self.loop.create_future()
        self.eof_done = False

    # -- reading (called from the source protocol) ---------------------------
    def read_buffer(self) -> memoryview:
        """Where the next read goes; on the toxic path no larger than the room left."""
        buffer = self.budget.read_buffer
        if self.chain or self.pump is not None or self.queue:
            room = self.budget.high_water() - self.held
            if room < len(buffer):
                return buffer[: max(room, MIN_READ)]
        return buffer

    def feed(self, n: int) -> None:
        # The data is at the start of the shared buffer until the next read.
        data = self.budget.read_buffer[:n]
        transport = self.dst.transport
        if not self.chain and self.pump is None and not self.queue and transport is not None:
            if self.conn.closed:
                return
            transport.write(data)
            if transport.get_write_buffer_size():
                self.budget.renew_read_buffer()  # the transport may keep a view of it
            return
        self._enqueue(bytes(data))

    def feed_eof(self) -> None:
        if not self.chain and self.pump is None and not self.queue and self.dst.transport is not None:
            self._finish_eof()
        else:
            self._enqueue(None)

    def _enqueue(self, data: bytes | None) -> None:
        self.queue.append((data, time.monotonic()))
        if data is not None:
            self.held += len(data)
            self.budget.take(len(data))
            if self.held >= self.budget.high_water():
                self.src.pause("queue")
        self.start_pump()

    def _delivered(self, nbytes: int) -> None:
        """A chunk went through the toxics (written on, or dropped by one)."""
        self.held -= nbytes
        self.budget.give(nbytes)
        if self.held <= self.budget.low_water():
            self.src.resume("queue")

    def start_pump(self) -> None:
        # Until the other side is connected, chunks wait in the queue
        # (uvloop may deliver data even when reading is paused in connection_made).
        if self.pump is None and self.queue and self.dst.transport is not None:
            self.pump = self.loop.create_task(self._run_pump())

    # -- the toxic path ------------------------------------------------------
    async def _run_pump(self) -> None:
        try:
            while self.queue and not self.conn.closed:
                data, stamp = self.queue.popleft()
                if data is None:
                    await self._through_eof(self.chain)
                    continue
                await self._through(self.chain, 0, data, stamp)
                if not self.conn.closed:  # else shutdown() gave everything back
                    self._delivered(len(data))
        except asyncio.CancelledError:
            raise
        except Exception:  # a toxic bug must cost one connection, not the server
            log.exception("toxic pipeline failed; closing the connection")
            self.conn.close()
        finally:
            self.pump = None

    async def _through(self, chain: tuple[Toxic, ...], i: int, data: bytes, stamp: float) -> None:
        # Skip stages whose toxic was removed since this chunk started.
        while i < len(chain) and chain[i].uid not in self.states:
            i += 1
        if i == len(chain):
            await self._write(data)
            return
        toxic = chain[i]

        async def emit(piece: bytes) -> None:
            await self._through(chain, i + 1, piece, stamp)

        await toxic.kind.on_data(self, toxic, self.states[toxic.uid], data, stamp, emit)

    async def _through_eof(self, chain: tuple[Toxic, ...]) -> None:
        for toxic in chain:
            if toxic.uid in self.states:
                await toxic.kind.on_eof(self, toxic, self.states[toxic.uid])
        self._finish_eof()

    async def _write(self, data: bytes) -> None:
        transport = self.dst.transport
        if not data or self.conn.closed or transport is None:
            return
        transport.write(data)
        await self.dst.drained()

    def _finish_eof(self) -> None:
        self.eof_done = True
        self.conn.half_closed(self)

    # -- toxic changes -------------------------------------------------------
    def set_toxics(self, toxics: tuple[Toxic, ...]) -> None:
        """Install the proxy's current toxics for this direction (all of them;
        toxicity is rolled here once per connection and toxic version)."""
        current = {t.uid for t in toxics}
        for uid in [u for u in self.states if u not in current]:
            old = self._by_uid.pop(uid)
            old.kind.on_deactivate(self, old, self.states.pop(uid))
        self.rolls = {u: r for u, r in self.rolls.items() if u in current}
        chain = []
        for toxic in toxics:
            if toxic.uid not in self.rolls:
                self.rolls[toxic.uid] = random.random() < toxic.toxicity
            if self.rolls[toxic.uid]:
                chain.append(toxic)
        self.chain = tuple(chain)
        for toxic in self.chain:
            if toxic.uid not in self.states:
                self.states[toxic.uid] = toxic.kind.new_state(toxic.attributes)
                self._by_uid[toxic.uid] = toxic
                toxic.kind.on_activate(self, toxic, self.states[toxic.uid])
        self._wake_sleepers()

    def shutdown(self) -> None:
        """The connection closed: stop timers, wake and stop the pump."""
        self.set_toxics(())
        self.queue.clear()
        self.budget.give(self.held)
        self.held = 0
        # Let go of the task: one cancelled before its first step never runs
        # the ``finally`` that clears it, and would keep this pipe in a cycle.
        pump, self.pump = self.pump, None
        if pump is not None and pump is not asyncio.current_task():
            pump.cancel()

    def _wake_sleepers(self) -> None:
        wake, self.wake = self.wake, self.loop.create_future()
        wake.set_result(None)

    # -- what toxics may call (the ``ctx`` of toxics.base) --------------------
    # Deadlines use time.monotonic(), not loop.time(): uvloop's clock is cached
    # per iteration with 1 ms resolution, which let delays come out short.
    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Any) -> asyncio.TimerHandle:
        return self.loop.call_later(delay, callback)

    async def sleep(self, seconds: float, toxic: Toxic) -> bool:
        return await self.sleep_until(time.monotonic() + seconds, toxic)

    async def sleep_until(self, deadline: float, toxic: Toxic) -> bool:
        """Wait until ``deadline``; False if the toxic stopped applying first
        (removed, updated, connection closed), True if the time ran out."""
        while toxic.uid in self.states and not self.conn.closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            waiter = self.loop.create_future()

            def done(_: Any = None, waiter: asyncio.Future = waiter) -> None:
                if not waiter.done():
                    waiter.set_result(None)

            wake = self.wake
            wake.add_done_callback(done)
            timer = self.loop.call_later(remaining, done)
            try:
                await waiter
            finally:
                timer.cancel()
                wake.remove_done_callback(done)
        return False

    def close(self) -> None:
        self.conn.close()

    def reset(self) -> None:
        self.conn.reset(self.dst)
