"""All proxies by name. Every change holds one lock, so concurrent API calls
(which interleave at DNS look-ups and binds) cannot race on a name or port.
Each change is atomic: on error the previous state keeps serving."""

from __future__ import annotations

import asyncio
import logging

from chaos.proxy.apierror import ApiError, proxy_not_found
from chaos.proxy.budget import Budget
from chaos.proxy.model import ProxyPatch, ProxySpec
from chaos.proxy.net import check_upstream
from chaos.proxy.proxy import Proxy

log = logging.getLogger("chaos.proxy")


class Collection:
    def __init__(self, budget: Budget) -> None:
        self.proxies: dict[str, Proxy] = {}
        self.lock = asyncio.Lock()
        self.budget = budget

    def get(self, name: str) -> Proxy:
        proxy = self.proxies.get(name)
        if proxy is None:
            raise proxy_not_found(name)
        return proxy

    async def _build(self, spec: ProxySpec, field_prefix: str = "") -> Proxy:
        await check_upstream(spec.upstream, field_prefix + "upstream")
        proxy = Proxy(spec.name, spec.listen, spec.upstream, self.budget)
        if spec.enabled:
            sock = await proxy.bind()
            await proxy.serve(sock)
        return proxy

    async def add(self, spec: ProxySpec) -> Proxy:
        async with self.lock:
            if spec.name in self.proxies:
                raise ApiError(
                    409,
                    "proxy already exists",
                    "name",
                    hint=f"a proxy named {spec.name!r} exists; update or delete it first",
                )
            proxy = await self._build(spec)
            self.proxies[spec.name] = proxy
        log.info(
            "created proxy %s listen=%s upstream=%s enabled=%s", proxy.name, proxy.listen, proxy.upstream, proxy.enabled
        )
        return proxy

    async def populate(self, specs: list[ProxySpec]) -> tuple[list[Proxy], ApiError | None]:
        """Create or replace each proxy in turn (kept if listen and upstream are
        unchanged). Stops at the first error and returns what was done."""
        done: list[Proxy] = []
        async with self.lock:
            for i, spec in enumerate(specs):
                existing = self.proxies.get(spec.name)
                if (
                    existing is not None
                    and str(existing.listen) == str(spec.listen)
                    and existing.upstream == spec.upstream
                ):
                    done.append(existing)
                    continue
                if existing is not None:
                    existing.stop()  # frees its port for the replacement
                try:
                    proxy = await self._build(spec, f"proxies[{i}].")
                except ApiError as exc:
                    if existing is not None:
                        await self._restore(existing)
                    return done, exc
                self.proxies[spec.name] = proxy
                done.append(proxy)
        log.info("populated %d proxies: %s", len(done), ", ".join(p.name for p in done))
        return done, None

    async def _restore(self, proxy: Proxy) -> None:
        try:
            await proxy.start()
        except ApiError:
            log.warning("proxy %s could not listen again on %s", proxy.name, proxy.listen)

    async def update(self, name: str, patch: ProxyPatch) -> Proxy:
        async with self.lock:
            proxy = self.get(name)
            enabled = proxy.enabled if patch.enabled is None else patch.enabled
            new_listen = patch.listen is not None and str(patch.listen) != str(proxy.listen)
            new_upstream = patch.upstream is not None and patch.upstream != proxy.upstream
            if new_upstream:
                await check_upstream(patch.upstream)
            if new_listen:
                if enabled:
                    # Bind the new address before letting go of the old one.
                    await proxy.serve(await proxy.bind(patch.listen))
                else:
                    proxy.stop()
                    proxy.listen = patch.listen
            if new_upstream:
                proxy.upstream = patch.upstream
                proxy.drop_connections()  # a restart: open connections went to the old upstream
            if enabled and not proxy.enabled:
                await proxy.start()
            elif not enabled and proxy.enabled:
                proxy.stop()
        log.info(
            "updated proxy %s listen=%s upstream=%s enabled=%s", proxy.name, proxy.listen, proxy.upstream, proxy.enabled
        )
        return proxy

    async def remove(self, name: str) -> None:
        async with self.lock:
            self.get(name).stop()
            del self.proxies[name]
        log.info("deleted proxy %s", name)

    async def reset(self) -> list[str]:
        """Enable every proxy and remove every toxic; returns proxies that
        could not listen again (their port was taken meanwhile)."""
        failed = []
        async with self.lock:
            for proxy in self.proxies.values():
                proxy.toxics.clear()
                if not proxy.enabled:
                    try:
                        await proxy.start()
                    except ApiError:
                        failed.append(proxy.name)
        log.info(
            "reset: all toxics removed, all proxies enabled%s", f" (could not listen again: {failed})" if failed else ""
        )
        return failed

    def close(self) -> None:
        for proxy in self.proxies.values():
            proxy.stop()
        self.proxies.clear()
