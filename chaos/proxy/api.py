"""The Toxiproxy 2.x HTTP API on aiohttp. Handlers parse the body into typed
values (``schema``), call the collection and render JSON; every failure is a
JSON error body, never a 5xx for bad input and never a crashed server."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from chaos.proxy import schema
from chaos.proxy.apierror import ApiError
from chaos.proxy.collection import Collection
from chaos.proxy.version import VERSION

log = logging.getLogger("chaos.proxy")
COLLECTION = web.AppKey("collection", Collection)

ROUTES = [
    "GET /version",
    "GET /proxies",
    "POST /proxies",
    "POST /populate",
    "POST /reset",
    "GET|POST|PATCH|DELETE /proxies/{proxy}",
    "GET|POST /proxies/{proxy}/toxics",
    "GET|POST|PATCH|DELETE /proxies/{proxy}/toxics/{toxic}",
]


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status)


async def _body(request: web.Request) -> Any:
    return schema.parse_json(await request.read())


@web.middleware
async def errors_as_json(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
    try:
        return await handler(request)
    except ApiError as exc:
        return _json(exc.body(), exc.status)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        err = ApiError(exc.status, exc.reason.lower())
        if exc.status == 404:
            err.hint, err.valid = "no such endpoint", ROUTES
        elif exc.status == 405:
            err.field, err.valid = "method", sorted(getattr(exc, "allowed_methods", ()))
        return _json(err.body(), exc.status)
    except Exception:  # a bug: log it, answer, keep serving
        log.exception("internal error handling %s %s", request.method, request.path)
        return _json({"error": "internal error", "status": 500}, 500)


def _collection(request: web.Request) -> Collection:
    return request.app[COLLECTION]


async def version(request: web.Request) -> web.Response:
    return _json({"version": VERSION})


async def proxy_index(request: web.Request) -> web.Response:
    return _json({name: p.to_json() for name, p in _collection(request).proxies.items()})


async def proxy_create(request: web.Request) -> web.Response:
    spec = schema.parse_proxy_spec(await _body(request))
    proxy = await _collection(request).add(spec)
    return _json(proxy.to_json(), 201)


async def populate(request: web.Request) -> web.Response:
    specs = schema.parse_populate(await _body(request))
    done, error = await _collection(request).populate(specs)
    proxies = [p.to_json() for p in done]
    if error is not None:
        error.extra["proxies"] = proxies
        raise error
    return _json({"proxies": proxies}, 201)


async def reset(request: web.Request) -> web.Response:
    failed = await _collection(request).reset()
    if failed:
        raise ApiError(
            409,
            "toxics removed but some proxies could not listen again",
            "listen",
            valid=failed,
            hint="their ports are taken by another process; free them or change listen",
        )
    return web.Response(status=204)


async def proxy_show(request: web.Request) -> web.Response:
    return _json(_collection(request).get(request.match_info["proxy"]).to_json())


async def proxy_update(request: web.Request) -> web.Response:
    name = request.match_info["proxy"]
    _collection(request).get(name)  # 404 before 400, like the official server
    patch = schema.parse_proxy_patch(await _body(request))
    proxy = await _collection(request).update(name, patch)
    return _json(proxy.to_json())


async def proxy_delete(request: web.Request) -> web.Response:
    await _collection(request).remove(request.match_info["proxy"])
    return web.Response(status=204)


async def toxic_index(request: web.Request) -> web.Response:
    proxy = _collection(request).get(request.match_info["proxy"])
    return _json([t.to_json() for t in proxy.toxics.all()])


async def toxic_create(request: web.Request) -> web.Response:
    proxy = _collection(request).get(request.match_info["proxy"])
    toxic = proxy.toxics.add(schema.parse_toxic(await _body(request)))
    log.info("proxy %s: added toxic %s", proxy.name, _describe(toxic))
    return _json(toxic.to_json())  # 200, as the official server answers


async def toxic_show(request: web.Request) -> web.Response:
    proxy = _collection(request).get(request.match_info["proxy"])
    return _json(proxy.toxics.get(request.match_info["toxic"]).to_json())


async def toxic_update(request: web.Request) -> web.Response:
    proxy = _collection(request).get(request.match_info["proxy"])
    current = proxy.toxics.get(request.match_info["toxic"])
    toxic = proxy.toxics.update(current.name, schema.parse_toxic_patch(await _body(request), current))
    log.info("proxy %s: updated toxic %s", proxy.name, _describe(toxic))
    return _json(toxic.to_json())


async def toxic_delete(request: web.Request) -> web.Response:
    proxy = _collection(request).get(request.match_info["proxy"])
    proxy.toxics.remove(request.match_info["toxic"])
    log.info("proxy %s: removed toxic %s", proxy.name, request.match_info["toxic"])
    return web.Response(status=204)


def _describe(toxic) -> str:
    j = toxic.to_json()
    return f"{j['name']} type={j['type']} stream={j['stream']} toxicity={j['toxicity']} attributes={j['attributes']}"


def build_app(collection: Collection) -> web.Application:
    app = web.Application(middlewares=[errors_as_json], client_max_size=1024 * 1024)
    app[COLLECTION] = collection
    r = app.router
    r.add_get("/version", version, allow_head=False)
    r.add_get("/proxies", proxy_index, allow_head=False)
    r.add_post("/proxies", proxy_create)
    r.add_post("/populate", populate)
    r.add_post("/reset", reset)
    r.add_get("/proxies/{proxy}", proxy_show, allow_head=False)
    r.add_post("/proxies/{proxy}", proxy_update)
    r.add_patch("/proxies/{proxy}", proxy_update)
    r.add_delete("/proxies/{proxy}", proxy_delete)
    r.add_get("/proxies/{proxy}/toxics", toxic_index, allow_head=False)
    r.add_post("/proxies/{proxy}/toxics", toxic_create)
    r.add_get("/proxies/{proxy}/toxics/{toxic}", toxic_show, allow_head=False)
    r.add_post("/proxies/{proxy}/toxics/{toxic}", toxic_update)
    r.add_patch("/proxies/{proxy}/toxics/{toxic}", toxic_update)
    r.add_delete("/proxies/{proxy}/toxics/{toxic}", toxic_delete)
    return app
