"""Every relative link in README.md, docs/**/*.md and field/README.md resolves: the file (or folder)
exists, and a #anchor names a heading of the page it points to, spelled as GitHub
spells heading anchors. Links inside code (fenced blocks, `inline`) are not links."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "field" / "README.md"]
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~)")


def prose_with_code_headings(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, inline code kept (a heading's `code` is
    part of its anchor)."""
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append((number, line))
    return out


def prose(text: str) -> list[tuple[int, str]]:
    """The same lines with inline code blanked (a link inside `code` is no link)."""
    return [
        (number, re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), line))
        for number, line in prose_with_code_headings(text)
    ]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose_with_code_headings(page.read_text()):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def links(page: Path) -> list[tuple[int, str]]:
    return [(n, m.group(1)) for n, line in prose(page.read_text()) for m in LINK.finditer(line)]


def broken(page: Path) -> list[str]:
    problems = []
    for number, target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
            continue  # a URL, not a relative link
        path, _, anchor = target.partition("#")
        resolved = (page.parent / unquote(path)).resolve() if path else page
        where = f"{page.relative_to(ROOT)}:{number}: {target}"
        if not resolved.exists():
            problems.append(f"{where}: no such file")
        elif anchor and resolved.suffix == ".md" and unquote(anchor) not in anchors(resolved):
            problems.append(f"{where}: no heading with that anchor in {resolved.relative_to(ROOT)}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken(page) == []


def test_the_slugs_are_githubs():
    assert slug("`chaos diagnose`: which failure does my job have?") == "chaos-diagnose-which-failure-does-my-job-have"
    assert slug("Round 7: two more held-out splits (`heldout-7`, `heldout-8`)") == (
        "round-7-two-more-held-out-splits-heldout-7-heldout-8"
    )
    assert slug("Accuracy on real users' logs") == "accuracy-on-real-users-logs"
    assert slug("A node lost: `node_lost`") == "a-node-lost-node_lost"


def test_a_broken_link_and_a_broken_anchor_are_found(tmp_path):
    (tmp_path / "b.md").write_text("# Title here\n")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md#title-here) [gone](c.md) [bad](b.md#nope) `[code](x.md)`\n```\n[fenced](y.md)\n```\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert broken(page) == [
            "a.md:1: c.md: no such file",
            "a.md:1: b.md#nope: no heading with that anchor in b.md",
        ]
    finally:
        ROOT = saved
