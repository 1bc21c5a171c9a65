"""The data plane's memory, shared by every connection of one server: one read
buffer, and a cap on the bytes that wait in toxic pipelines.

Bounds (docs/proxy.md), in bytes read from one side and not yet written to
the other, i.e. queued or inside a toxic:
  * one direction of one connection: ``QUEUE_HIGH + MIN_READ`` (a read is cut
    to the room left, never below MIN_READ);
  * all connections together: ``limit + READ_SIZE + 2 * connections * (FLOOR +
    MIN_READ)``: once they hold ``limit``, each direction may only fill to
    ``FLOOR``, so none is starved by the others and none is dropped (reading
    pauses, as it does at QUEUE_HIGH).
Idle connections hold no buffer: reads land in the one shared buffer and are
written on or copied out before the next read.
"""

from __future__ import annotations

READ_SIZE = 256 * 1024  # one recv_into; large so bulk transfers take few callbacks
QUEUE_HIGH = 4 * 1024 * 1024  # per direction: stop reading the source at this many bytes held...
FLOOR = 64 * 1024  # ...or at this many while the server is over its limit
MIN_READ = 16 * 1024  # smallest read offered (a paused source may still deliver one)
QUEUE_LIMIT = 64 * 1024 * 1024  # all connections together, before directions drop to FLOOR


class Budget:
    def __init__(self, limit: int = QUEUE_LIMIT) -> None:
        self.limit = limit
        self.held = 0  # bytes in toxic pipelines now, all connections
        self.peak = 0  # the most ever held at once (benchmarks, tests)
        self.read_buffer = memoryview(bytearray(READ_SIZE))

    def renew_read_buffer(self) -> None:
        """The transport kept a view of the shared buffer: read into a new one."""
        self.read_buffer = memoryview(bytearray(READ_SIZE))

    def take(self, nbytes: int) -> None:
        self.held += nbytes
        if self.held > self.peak:
            self.peak = self.held

    def give(self, nbytes: int) -> None:
        self.held -= nbytes

    def high_water(self) -> int:
        """How much one direction may hold now."""
        return QUEUE_HIGH if self.held < self.limit else FLOOR

    def low_water(self) -> int:
        """A paused direction reads again once it holds no more than this."""
        return self.high_water() // 4
