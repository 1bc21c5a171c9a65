"""ProxyServer: the API and every proxy on one event loop.

``serve()`` runs in the foreground (the CLI); ``running()`` runs it on a
background thread for in-process use (tests, benchmarks)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Iterator

from aiohttp import web

from chaos.errors import InfrastructureError
from chaos.proxy.api import build_app
from chaos.proxy.budget import QUEUE_LIMIT, Budget
from chaos.proxy.collection import Collection
from chaos.proxy.heap import HeapTrimmer
from chaos.proxy.loop import loop_name, new_event_loop
from chaos.proxy.net import bind_error_text, bind_socket
from chaos.proxy.version import VERSION

log = logging.getLogger("chaos.proxy")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8474


def bind_api_socket(host: str, port: int) -> socket.socket:
    """Bind the API port or raise InfrastructureError with a hint."""
    try:
        return bind_socket(host, port)
    except socket.gaierror:
        raise InfrastructureError(
            f"cannot listen on {host}:{port}: unknown host {host!r}",
            hint="pass --host with an address of this machine, e.g. 127.0.0.1 or 0.0.0.0",
        ) from None
    except OverflowError:
        raise InfrastructureError(f"invalid port {port}", hint="pass --port between 0 and 65535") from None
    except OSError as exc:
        error, _ = bind_error_text(exc)
        hint = (
            "another server (maybe another toxiproxy) uses it; stop it or pass --port"
            if "in use" in error
            else "pass --host with an address of this machine, e.g. 127.0.0.1"
        )
        raise InfrastructureError(f"cannot listen on {host}:{port}: {error}", hint=hint) from None


class ProxyServer:
    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, queue_limit: int = QUEUE_LIMIT) -> None:
        self.host = host
        self.port = port
        self.queue_limit = queue_limit  # bytes all connections may hold in toxics (chaos.proxy.budget)
        self.budget: Budget | None = None
        self.collection: Collection | None = None
        self.trimmer: HeapTrimmer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None

    @property
    def api_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self, config: str | None = None) -> None:
        """Listen; ``config`` (see ``serve``) is loaded before the API answers,
        as the official server does, so no client sees a partial proxy list."""
        sock = bind_api_socket(self.host, self.port)
        self.loop = asyncio.get_running_loop()
        self.budget = Budget(self.queue_limit)
        self.collection = Collection(self.budget)
        try:
            if config:
                await self.load_config(config)
            self._runner = web.AppRunner(
                build_app(self.collection), access_log=None, handle_signals=False, shutdown_timeout=1.0
            )
            await self._runner.setup()
            await web.SockSite(self._runner, sock).start()
        except BaseException:
            sock.close()
            await self.stop()
            raise
        self.port = sock.getsockname()[1]
        self.trimmer = HeapTrimmer(self.loop, self.budget)
        self.trimmer.start()
        log.info("toxiproxy-compatible server %s listening on %s (%s)", VERSION, self.api_url, loop_name(self.loop))

    async def stop(self) -> None:
        if self.trimmer is not None:
            self.trimmer.stop()
        if self.collection is not None:
            self.collection.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- foreground ----------------------------------------------------------
    def serve(self, config: str | None = None) -> None:
        """Run until SIGINT/SIGTERM; raises InfrastructureError if it cannot start.

        ``config``: a JSON file of proxies created at start, like the official
        server's ``-config`` (the format of ``POST /populate``).
        """
        loop = new_event_loop()
        try:
            loop.run_until_complete(self._serve(config))
        finally:
            loop.close()

    async def load_config(self, path: str) -> None:
        from chaos.proxy.apierror import ApiError
        from chaos.proxy.schema import parse_json, parse_populate

        try:
            with open(path, "rb") as f:
                specs = parse_populate(parse_json(f.read()))
        except OSError as exc:
            raise InfrastructureError(
                f"cannot read --config {path}: {exc.strerror}", hint="pass a readable JSON file of proxies"
            ) from None
        except ApiError as exc:
            raise InfrastructureError(f"--config {path}: {exc}", hint="use the format of POST /populate") from None
        _, error = await self.collection.populate(specs)
        if error is not None:
            raise InfrastructureError(f"--config {path}: {error}", hint="fix the proxy it names")

    async def _serve(self, config: str | None = None) -> None:
        await self.start(config)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
            log.info("stopping")
        finally:
            await self.stop()

    # -- background thread ---------------------------------------------------
    @classmethod
    @contextlib.contextmanager
    def running(cls, host: str = DEFAULT_HOST, port: int = 0, queue_limit: int = QUEUE_LIMIT) -> Iterator[ProxyServer]:
        server = cls(host, port, queue_limit)
        loop = new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(server.start())
            except BaseException as exc:  # handed to the caller's thread
                failure.append(exc)
                started.set()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(server.stop())
            loop.run_until_complete(loop.shutdown_asyncgens())

        thread = threading.Thread(target=run, name="chaos-proxy", daemon=True)
        thread.start()
        started.wait()
        if failure:
            thread.join()
            loop.close()
            raise failure[0]
        try:
            yield server
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            if not thread.is_alive():
                loop.close()
