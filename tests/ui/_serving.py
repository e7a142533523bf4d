"""The demo agent's chat apps served by uvicorn on loopback, in a thread:
AG-UI under ``/agui/``, the UI message stream under ``/chat/``, and the
example page at ``/`` (examples/chat.html)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.responses import FileResponse
from starlette.routing import Mount, Route

import toolwire
from toolwire.ui import agui, vercel

from ._demo import make_agent, start_model

PAGE = Path(__file__).resolve().parents[2] / "examples" / "chat.html"


@dataclass(frozen=True)
class Served:
    base: str
    """``http://127.0.0.1:PORT``."""
    agent: toolwire.Agent


def demo_app(agent: toolwire.Agent) -> Starlette:
    async def page(request: object) -> FileResponse:
        return FileResponse(PAGE, media_type="text/html")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await agent.aclose()  # the provider's connections belong to the server's loop

    return Starlette(
        lifespan=lifespan,
        routes=[
            Route("/", page),
            Mount("/agui", agui.app(agent)),
            Mount("/chat", vercel.app(agent)),
        ],
    )


@contextlib.contextmanager
def serving(journal: Path) -> Iterator[Served]:
    """The demo agent's apps on a free loopback port, until the block ends."""
    model = start_model()
    agent = make_agent(model, journal)
    config = uvicorn.Config(
        demo_app(agent), host="127.0.0.1", port=0, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            thread.join(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield Served(base=f"http://127.0.0.1:{port}", agent=agent)
    finally:
        server.should_exit = True
        thread.join(10)
        model.stop()
