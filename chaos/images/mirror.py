"""Find the machine's Debian mirror in its apt configuration (never hard-coded).

Reads ``/etc/apt/sources.list`` and ``/etc/apt/sources.list.d/*.list`` (one-line
format) and ``/etc/apt/sources.list.d/*.sources`` (deb822 format) and returns the
first ``deb`` URI that serves the wanted suite (``bookworm``, not
``bookworm-security``/``bookworm-updates``).
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

from chaos.errors import InfrastructureError

DEFAULT_APT_ROOT = "/etc/apt"


@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]
    origin: str  # file the entry came from


def parse_one_line(text: str, origin: str = "<text>") -> list[AptSource]:
    """Parse the one-line format: ``deb [opts] URI SUITE [COMPONENT...]``."""
    out: list[AptSource] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        line = re.sub(r"\[[^\]]*\]", " ", line)  # drop [arch=amd64 signed-by=...]
        parts = line.split()
        if len(parts) < 3 or parts[0] != "deb":
            continue  # deb-src or junk
        out.append(AptSource(parts[1], (parts[2],), tuple(parts[3:]), origin))
    return out


def parse_deb822(text: str, origin: str = "<text>") -> list[AptSource]:
    """Parse the deb822 format (stanzas separated by blank lines)."""
    out: list[AptSource] = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for raw in stanza.splitlines():
            if raw.lstrip().startswith("#"):
                continue
            if raw[:1] in (" ", "\t") and key:  # continuation line
                fields[key] += " " + raw.strip()
                continue
            if ":" not in raw:
                continue
            key, value = raw.split(":", 1)
            key = key.strip().lower()
            fields[key] = value.strip()
        if not fields:
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        if "deb" not in fields.get("types", "").split():
            continue
        suites = tuple(fields.get("suites", "").split())
        comps = tuple(fields.get("components", "").split())
        for uri in fields.get("uris", "").split():
            out.append(AptSource(uri, suites, comps, origin))
    return out


def apt_sources(apt_root: str = DEFAULT_APT_ROOT) -> list[AptSource]:
    sources: list[AptSource] = []
    files = [os.path.join(apt_root, "sources.list")]
    files += sorted(glob.glob(os.path.join(apt_root, "sources.list.d", "*.list")))
    files += sorted(glob.glob(os.path.join(apt_root, "sources.list.d", "*.sources")))
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        if path.endswith(".sources"):
            sources += parse_deb822(text, path)
        else:
            sources += parse_one_line(text, path)
    return sources


def debian_mirror(suite: str = "bookworm", apt_root: str = DEFAULT_APT_ROOT) -> str:
    """The URI of the first apt source that serves ``suite`` itself."""
    sources = apt_sources(apt_root)
    for src in sources:
        if suite in src.suites and src.uri.startswith(("http://", "https://", "file:/")):
            return src.uri.rstrip("/")
    seen = ", ".join(sorted({f"{s.uri} ({' '.join(s.suites)})" for s in sources})) or "none"
    raise InfrastructureError(
        f"no Debian mirror for suite '{suite}' in the apt configuration under {apt_root} (found: {seen})",
        hint=f"add a 'deb <mirror> {suite} main' source to /etc/apt/sources.list, "
        "or set TFCHAOS_DEBIAN_MIRROR to the mirror URL",
    )


def resolve_mirror(suite: str = "bookworm", apt_root: str = DEFAULT_APT_ROOT) -> str:
    """``TFCHAOS_DEBIAN_MIRROR`` if set, else the apt configuration's mirror."""
    env = os.environ.get("TFCHAOS_DEBIAN_MIRROR", "").strip()
    return env.rstrip("/") if env else debian_mirror(suite, apt_root)
