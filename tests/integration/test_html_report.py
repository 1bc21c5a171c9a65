"""The HTML report of a real `chaos run`, seen in a real browser: headless
Chromium (Debian's package; bin/test installs it) opens the pages from files
with no network and the test checks what a person sees: the picture is there,
every fault window and mark is drawn inside it, every verdict is on the page,
the worker logs are one click away, no script error, no request off the disk.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from browser import Browser, chromium  # noqa: E402  (conftest puts tests/integration on sys.path)

from chaos.report import read_json
from chaos.report.marks import picture

ROOT = Path(__file__).resolve().parents[2]
NAME = "killed-worker-recovers-from-checkpoint"
SCENARIO = ROOT / "scenarios" / f"{NAME}.yaml"

pytestmark = pytest.mark.skipif(chromium() is None, reason="needs Debian's chromium (bin/test installs it as root)")

# Every drawn group of the figure: its box on the screen and how many shapes it holds.
DRAWN = """(() => {
  const svg = document.querySelector('#timeline-figure svg');
  if (!svg) return null;
  const box = r => ({x: r.left, y: r.top, w: r.width, h: r.height});
  const items = {};
  for (const g of svg.querySelectorAll('g[id]')) {
    const style = getComputedStyle(g);
    items[g.id] = {...box(g.getBoundingClientRect()), shapes: g.querySelectorAll('path, use, text').length,
                   visible: style.visibility !== 'hidden' && style.display !== 'none' && style.opacity !== '0'};
  }
  return {svg: box(svg.getBoundingClientRect()), items: items, svgText: svg.textContent,
          text: document.body.innerText, links: [...document.querySelectorAll('a')].map(a => a.href)};
})()"""


def chaos_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chaos", "run", *args], capture_output=True, text=True, timeout=600, cwd=ROOT
    )


@pytest.fixture(scope="module")
def report_dir(images, tmp_path_factory):
    out = tmp_path_factory.mktemp("html-report")
    proc = chaos_run(str(SCENARIO), "--report-dir", str(out))
    assert proc.returncode in (0, 1), f"chaos run broke:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def browser():
    with Browser(width=1280, height=1000) as b:
        yield b


def inside(item, svg) -> bool:
    cx, cy = item["x"] + item["w"] / 2, item["y"] + item["h"] / 2
    return svg["x"] <= cx <= svg["x"] + svg["w"] and svg["y"] <= cy <= svg["y"] + svg["h"]


def drawn(item, svg) -> bool:
    return item["visible"] and item["shapes"] > 0 and item["w"] > 0 and item["h"] > 0 and inside(item, svg)


def test_the_page_shows_the_picture_with_every_fault_window_and_mark(report_dir, browser):
    report = read_json(report_dir / f"{NAME}.json")
    pic = picture(report)
    # The run must have given the picture something to show, or this test proves nothing.
    assert pic.windows and {"exit", "error", "restart", "restored", "resumed"} <= {m.kind for m in pic.marks}

    browser.open((report_dir / f"{NAME}.html").as_uri())
    seen = browser.evaluate(DRAWN)
    assert seen is not None, "no picture on the page"
    svg, items = seen["svg"], seen["items"]
    assert svg["w"] >= 800 and svg["h"] >= 300  # readable on a laptop screen
    lanes = [f"w{lane.worker}" for lane in pic.lanes]
    assert lanes == ["w0", "w1"] and all(drawn(items[f"steps-{lane}"], svg) for lane in lanes)
    for w in pic.windows:
        for lane in [*lanes, "steptime"]:
            assert drawn(items[f"fault-{w.index}-{lane}"], svg), (w, lane)
        assert w.label in seen["svgText"]
    for lane in pic.lanes:
        for k, m in enumerate(m for m in pic.marks if m.worker == lane.worker):
            assert drawn(items[f"mark-{m.kind}-w{m.worker}-{k}"], svg), m
            assert m.label in seen["text"]  # and listed under the picture
    for label, verdict in report.numbered():
        assert label in seen["text"] and verdict.reason in seen["text"]
    assert report.reproduce in seen["text"]
    assert browser.script_errors() == []
    assert [u for u in browser.requests() if not u.startswith("file://")] == []


def test_worker_logs_are_one_click_away(report_dir, browser):
    browser.open((report_dir / f"{NAME}.html").as_uri())
    links = browser.evaluate(DRAWN)["links"]
    logs = [Path(unquote(urlparse(u).path)) for u in links if u.endswith(".log")]
    assert {p.name for p in logs} >= {"worker-0.log", "worker-1.log"}
    assert all(p.is_file() and p.stat().st_size > 0 for p in logs)
    assert "step" in (report_dir / NAME / "worker-1.log").read_text()


def test_the_index_links_the_page(report_dir, browser):
    browser.open((report_dir / "index.html").as_uri())
    rows = browser.evaluate("[...document.querySelectorAll('tr.scenario')].map(r => [r.className, r.innerText])")
    status = read_json(report_dir / f"{NAME}.json").status.value
    assert len(rows) == 1 and rows[0][0] == f"scenario row-{status}" and NAME in rows[0][1]
    href = browser.evaluate(f"document.querySelector('#row-{NAME} a').href")
    assert Path(unquote(urlparse(href).path)) == report_dir / f"{NAME}.html"
    assert browser.script_errors() == []


def test_a_run_that_broke_is_an_error_row_of_the_index(images, tmp_path, browser):
    proc = chaos_run(str(SCENARIO), "--proxy-image", "tfchaos/no-such-proxy:none", "--report-dir", str(tmp_path))
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    browser.open((tmp_path / "index.html").as_uri())
    rows = browser.evaluate("[...document.querySelectorAll('tr.scenario')].map(r => [r.className, r.innerText])")
    assert len(rows) == 1 and rows[0][0] == "scenario row-error"
    assert NAME in rows[0][1] and "no-such-proxy" in rows[0][1]
    assert browser.script_errors() == []
