"""Parse request bodies into the typed values of ``model``. Every failure is an
ApiError naming the field, the valid values and what to do."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import math
from typing import Any

from chaos.proxy import toxics
from chaos.proxy.apierror import ApiError, bad_request
from chaos.proxy.model import Address, ProxyPatch, ProxySpec, Stream, Toxic, ToxicPatch
from chaos.proxy.toxics.base import MAX_ATTRIBUTE

STREAMS = [s.value for s in Stream]
DEFAULT_LISTEN = "127.0.0.1:0"


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, f"bad request body: {exc}", "body", hint="send a JSON document") from None
    except RecursionError:  # json's decoder recurses once per nesting level
        raise ApiError(400, "bad request body: JSON nested too deeply", "body", hint="send a JSON document") from None


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad_request(
            f"bad request body: {where} must be a JSON object",
            where or "body",
            hint='send a JSON object like {"name": ..., ...}',
        )
    return value


def _name(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise bad_request(f"missing required field: {field}", field, hint=f"{field} must be a non-empty string")
    if "/" in value or len(value) > 200:
        raise bad_request(
            f"invalid {field}: {value[:50]!r}",
            field,
            hint="use at most 200 characters and no '/' (names are URL path segments)",
        )
    return value


def _bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise bad_request(f"invalid {field}: must be true or false", field, valid=[True, False])
    return value


def parse_address(value: Any, field: str, *, listen: bool) -> Address:
    """``host:port``, ``[v6]:port`` or (listen only) ``:port`` for every interface."""
    example = "127.0.0.1:0" if listen else "worker-0:2222"
    hint = f"use host:port, e.g. {example!r}"
    if not isinstance(value, str) or not value:
        raise bad_request(f"missing required field: {field}", field, hint=hint)
    host, sep, port_text = value.rpartition(":")
    if not sep or not port_text.isdigit() or len(port_text) > 5:
        raise bad_request(f"invalid {field}: {value[:80]!r} is not host:port", field, hint=hint)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad_request(f"invalid {field}: bad IPv6 address {host[:60]!r}", field, hint=hint) from None
    elif ":" in host:
        raise bad_request(f"invalid {field}: put IPv6 addresses in brackets", field, hint="e.g. '[::1]:8080'")
    port = int(port_text)
    low = 0 if listen else 1
    if not low <= port <= 65535:
        raise bad_request(
            f"invalid {field}: port {port} out of range",
            field,
            hint=f"port must be {low}..65535" + (" (0 = any free port)" if listen else ""),
        )
    if not host:
        if not listen:
            raise bad_request(f"invalid {field}: missing host", field, hint=hint)
        host = "0.0.0.0"
    if any(c.isspace() for c in host) or len(host) > 253:
        raise bad_request(f"invalid {field}: bad host {host[:60]!r}", field, hint=hint)
    return Address(host, port)


def parse_proxy_spec(body: Any, where: str = "") -> ProxySpec:
    obj = _object(body, where)
    prefix = f"{where}." if where else ""
    listen = obj.get("listen") or DEFAULT_LISTEN
    enabled = obj.get("enabled", True)
    return ProxySpec(
        name=_name(obj.get("name"), prefix + "name"),
        listen=parse_address(listen, prefix + "listen", listen=True),
        upstream=parse_address(obj.get("upstream"), prefix + "upstream", listen=False),
        enabled=True if enabled is None else _bool(enabled, prefix + "enabled"),
    )


def parse_populate(body: Any) -> list[ProxySpec]:
    if not isinstance(body, list):
        raise bad_request(
            "bad request body: expected a JSON array of proxies",
            "body",
            hint='send [{"name": ..., "listen": ..., "upstream": ...}, ...]',
        )
    specs = [parse_proxy_spec(item, f"proxies[{i}]") for i, item in enumerate(body)]
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise bad_request(f"duplicate proxy names in request: {dupes}", "name", hint="give each proxy a unique name")
    return specs


def parse_proxy_patch(body: Any) -> ProxyPatch:
    obj = _object(body, "")

    def opt(key, fn):
        return None if obj.get(key) is None else fn(obj[key], key)

    return ProxyPatch(
        listen=opt("listen", lambda v, f: parse_address(v, f, listen=True)),
        upstream=opt("upstream", lambda v, f: parse_address(v, f, listen=False)),
        enabled=opt("enabled", _bool),
    )


def _toxicity(value: Any) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not 0.0 <= value <= 1.0:
        raise bad_request(
            f"invalid toxicity: {value!r}",
            "toxicity",
            valid=[0.0, 1.0],
            hint="toxicity is the probability (0.0 to 1.0) that a connection gets the toxic",
        )
    return float(value)


def _int_attr(kind, f: dataclasses.Field, value: Any) -> int:
    unit = f.metadata.get("unit", "")
    low = f.metadata.get("minimum", 0)
    field = f"attributes.{f.name}"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise bad_request(
            f"invalid {field} for {kind.name}: {value!r} is not an integer",
            field,
            hint=f"{f.name} is a whole number of {unit}",
        )
    if not low <= value <= MAX_ATTRIBUTE:
        raise bad_request(
            f"invalid {field} for {kind.name}: {value} is out of range",
            field,
            hint=f"{f.name} ({unit}) must be between {low} and {MAX_ATTRIBUTE}",
        )
    return value


def parse_attributes(kind, raw: Any, base: Any = None) -> Any:
    """Build ``kind.Attributes`` from ``raw``; with ``base``, unspecified ones keep its values."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise bad_request(
            "invalid attributes: must be a JSON object",
            "attributes",
            valid=[f.name for f in dataclasses.fields(kind.Attributes)],
        )
    fields = dataclasses.fields(kind.Attributes)
    valid = [f.name for f in fields]
    unknown = sorted(set(raw) - set(valid))
    if unknown:
        raise bad_request(
            f"unknown attributes for {kind.name}: {unknown}",
            f"attributes.{unknown[0]}",
            valid=valid,
            hint=f"{kind.name} takes {valid}",
        )
    values = {}
    for f in fields:
        if f.name in raw:
            values[f.name] = _int_attr(kind, f, raw[f.name])
        elif base is not None:
            values[f.name] = getattr(base, f.name)
        elif f.default is dataclasses.MISSING:
            raise bad_request(
                f"missing required attribute for {kind.name}: {f.name}",
                f"attributes.{f.name}",
                valid=valid,
                hint=f"give attributes.{f.name} in {f.metadata.get('unit', '')}",
            )
    attrs = kind.Attributes(**values)
    problem = kind.check(attrs)
    if problem:
        raise bad_request(f"invalid attributes for {kind.name}: {problem}", "attributes", valid=valid)
    return attrs


def _kind(value: Any):
    kind = toxics.get(value) if isinstance(value, str) else None
    if kind is None:
        raise bad_request(
            "invalid toxic type", "type", valid=toxics.names(), hint=f"{value!r} is not a toxic type this server knows"
        )
    return kind


def _stream(value: Any) -> Stream:
    if isinstance(value, str) and value.lower() in STREAMS:
        return Stream(value.lower())
    raise bad_request("stream was invalid, can be either upstream or downstream", "stream", valid=STREAMS)


def parse_toxic(body: Any) -> Toxic:
    obj = _object(body, "")
    kind = _kind(obj.get("type"))
    stream = _stream(obj.get("stream") or "downstream")
    name = obj.get("name") or f"{kind.name}_{stream.value}"
    toxicity = obj.get("toxicity")
    return Toxic(
        name=_name(name, "name"),
        kind=kind,
        stream=stream,
        toxicity=1.0 if toxicity is None else _toxicity(toxicity),
        attributes=parse_attributes(kind, obj.get("attributes")),
    )


def parse_toxic_patch(body: Any, current: Toxic) -> ToxicPatch:
    obj = _object(body, "")
    for key, now in (("type", current.kind.name), ("stream", current.stream.value), ("name", current.name)):
        given = obj.get(key)
        if given is not None and given != now:
            raise bad_request(
                f"cannot change {key} of a toxic", key, valid=[now], hint="delete the toxic and add a new one instead"
            )
    toxicity = obj.get("toxicity")
    return ToxicPatch(
        attributes=parse_attributes(current.kind, obj.get("attributes"), base=current.attributes),
        toxicity=current.toxicity if toxicity is None else _toxicity(toxicity),
    )
