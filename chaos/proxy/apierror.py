"""The one error type the API layer raises: it carries everything the JSON
error body needs, so handlers never build responses for failures by hand."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass
class ApiError(Exception):
    """A 4xx answer. ``error`` and ``status`` match the official server's body;
    ``field``/``valid``/``hint`` are additions that tell the caller what to fix."""

    status: int
    error: str
    field: str | None = None
    valid: list[Any] | None = None
    hint: str | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __str__(self) -> str:
        return self.error

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.error, "status": self.status}
        if self.field is not None:
            out["field"] = self.field
        if self.valid is not None:
            out["valid"] = self.valid
        if self.hint is not None:
            out["hint"] = self.hint
        out.update(self.extra)
        return out


def bad_request(error: str, field: str | None = None, *, valid=None, hint=None) -> ApiError:
    return ApiError(400, error, field, valid, hint)


def proxy_not_found(name: str) -> ApiError:
    return ApiError(404, "proxy not found", "proxy", hint=f"no proxy named {name!r}; GET /proxies lists them")


def toxic_not_found(name: str) -> ApiError:
    return ApiError(
        404, "toxic not found", "toxic", hint=f"no toxic named {name!r}; GET /proxies/<proxy>/toxics lists them"
    )
