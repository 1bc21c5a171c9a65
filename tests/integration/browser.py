"""A headless Chromium (Debian's package) driven over the Chrome DevTools
protocol with websocket-client: open a file:// page, collect script errors
and every request the page made, evaluate JavaScript, take a screenshot.

No browser download (Playwright and Selenium's managers fetch their own
builds, which this machine cannot); just the ``chromium`` on PATH. The
browser gets a proxy that leads nowhere, so a page that tried the network
would fail, and every request is recorded so a test can say which.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

START_TIMEOUT_S = 30
CALL_TIMEOUT_S = 30


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self, width: int = 1280, height: int = 1000) -> None:
        import websocket  # websocket-client

        self._profile = tempfile.TemporaryDirectory(prefix="tfchaos-chromium-")
        self.proc = subprocess.Popen(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--proxy-server=127.0.0.1:9",
                "--proxy-bypass-list=<-loopback>",
                f"--window-size={width},{height}",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: close() ends the helpers with it
        )
        port = self._port()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5))
                page = next(t for t in targets if t["type"] == "page")
                break
            except (OSError, StopIteration):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.ws = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=CALL_TIMEOUT_S, suppress_origin=True
        )
        self._id = 0
        self.events: list[dict] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def _port(self) -> int:
        deadline = time.monotonic() + START_TIMEOUT_S
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            seen.append(line)
            match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if match:
                return int(match.group(1))
            if not line and self.proc.poll() is not None:
                break
        self.close()
        raise RuntimeError(f"chromium did not start its DevTools server; it said: {''.join(seen)[-2000:]}")

    def call(self, method: str, **params) -> dict:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = CALL_TIMEOUT_S) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv())
            self.events.append(message)
            if message.get("method") == method:
                return message
        raise TimeoutError(method)

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        # A load event can be about:blank's, read late on a loaded machine: wait
        # until this very page has loaded before anything reads it.
        deadline = time.monotonic() + CALL_TIMEOUT_S
        loaded = f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
        while not self.evaluate(loaded):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load; the page is {self.evaluate('location.href')}")
            time.sleep(0.05)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def script_errors(self) -> list[str]:
        out = []
        for m in self.events:
            method, p = m.get("method"), m.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("text", "exception"))
            elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(p["entry"]["text"])
            elif method == "Runtime.consoleAPICalled" and p["type"] == "error":
                out.append(str(p.get("args")))
        return out

    def requests(self) -> list[str]:
        return [m["params"]["request"]["url"] for m in self.events if m.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path, selector: str | None = None, margin: int = 12) -> None:
        """The whole page, or the box around the elements ``selector`` matches."""
        if selector is None:
            box = self.evaluate("[0, 0, document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        else:
            box = self.evaluate(
                f"(() => {{ const rs = [...document.querySelectorAll({json.dumps(selector)})]"
                ".map(e => e.getBoundingClientRect());"
                "const x = Math.min(...rs.map(r => r.left)), y = Math.min(...rs.map(r => r.top)) + scrollY;"
                "return [x, y, Math.max(...rs.map(r => r.right)) - x, Math.max(...rs.map(r => r.bottom)) + scrollY - y]; })()"
            )
            box = [box[0] - margin, box[1] - margin, box[2] + 2 * margin, box[3] + 2 * margin]
        params = {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": max(0, box[0]), "y": max(0, box[1]), "width": box[2], "height": box[3], "scale": 1},
        }
        data = self.call("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))

    def close(self) -> None:
        try:
            if getattr(self, "ws", None):
                self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            # Chromium's helper processes outlive the browser by a moment and still
            # write to the profile ('Directory not empty: Default' in 2 of 15 closes):
            # end the group, then remove the profile.
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + 10
            while True:
                try:
                    self._profile.cleanup()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
