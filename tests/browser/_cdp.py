"""Headless Chromium driven over the Chrome DevTools Protocol (raw CDP on a
websocket): start it, open a page, evaluate JavaScript, take screenshots."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

BINARIES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium")
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--window-size=1280,900",
    "--remote-debugging-port=0",
)
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


def binary() -> str:
    """The Chromium binary (``make test-browser`` installs Debian's)."""
    for path in BINARIES:
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("chromium")
    if found is None:
        raise RuntimeError("no chromium: run make test-browser, which installs it")
    return found


class Browser:
    """One headless Chromium with one page, driven over CDP."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.process: subprocess.Popen[str] | None = None
        self.socket: ClientConnection | None = None
        self.session = ""
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    async def __aenter__(self) -> Browser:
        url = await asyncio.wait_for(asyncio.to_thread(self._launch), 30)
        self.socket = await connect(url, max_size=64 * 1024 * 1024)
        target = await self.send("Target.createTarget", {"url": "about:blank"}, browser=True)
        attached = await self.send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, browser=True
        )
        self.session = attached["sessionId"]
        await self.send("Page.enable")
        await self.send("Runtime.enable")
        return self

    def _launch(self) -> str:
        """Start Chromium; the URL of its DevTools websocket."""
        self.process = subprocess.Popen(
            [binary(), *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={  # Chromium's caches and settings stay in the profile
                **os.environ,
                "HOME": str(self.profile),
                "XDG_CONFIG_HOME": str(self.profile / "config"),
                "XDG_CACHE_HOME": str(self.profile / "cache"),
            },
        )
        assert self.process.stderr is not None
        for line in self.process.stderr:
            found = _LISTENING.search(line)
            if found:
                return found.group(1)
        raise RuntimeError("chromium exited before it listened")

    async def __aexit__(self, *exc: object) -> None:
        if self.socket is not None:
            await self.socket.close()
        if self.process is not None:
            await asyncio.to_thread(self._stop, self.process)

    @staticmethod
    def _stop(process: subprocess.Popen[str]) -> None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr is not None:
            process.stderr.close()

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False
    ) -> dict[str, Any]:
        """Send a command; its result (events that arrive meanwhile are kept)."""
        assert self.socket is not None
        number = next(self.ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if not browser:
            message["sessionId"] = self.session
        await self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(await asyncio.wait_for(self.socket.recv(), 30))
            if reply.get("id") == number:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self.events.append(reply)

    async def open(self, url: str) -> None:
        """Navigate and wait for the page's load event."""
        self.events.clear()
        await self.send("Page.navigate", {"url": url})
        await self.wait_for_event("Page.loadEventFired")

    async def wait_for_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        assert self.socket is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    self.events.remove(event)
                    return event
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no {method} in {timeout} s")
            self.events.append(json.loads(await asyncio.wait_for(self.socket.recv(), left)))

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def until(self, expression: str, timeout: float = 15) -> Any:
        """Poll an expression until it is truthy (bounded by ``timeout``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if loop.time() > deadline:
                raise TimeoutError(f"still false after {timeout} s: {expression}")
            await asyncio.sleep(0.05)

    async def screenshot(self, path: Path, *, height: int | None = None) -> None:
        """The viewport as PNG (``height``: that many pixels of the page from its top)."""
        params: dict[str, Any] = {"format": "png"}
        if height is not None:
            params["clip"] = {"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1}
            params["captureBeyondViewport"] = True
        shot = await self.send("Page.captureScreenshot", params)
        await asyncio.to_thread(_save, path, base64.b64decode(shot["data"]))


def _save(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
