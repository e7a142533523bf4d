"""The bridge: serve any dialect from any model, without losing a tool call.

Theory of operation: the bridge is the two halves toolwire already has,
joined. A client's request, in the dialect served (Anthropic Messages,
OpenAI Chat Completions or Responses, Gemini), is read into toolwire's
messages and tools (:mod:`toolwire.stream.codecs.bridge`), routed by its model
through the model map to an upstream provider (a fallback chain:
:class:`~toolwire.providers.Fallback`), and sent as that provider's own
request. The upstream's stream is decoded by toolwire's stream decoder into
complete calls, and written back as it comes in the served dialect
(:class:`~toolwire.stream.codecs.bridge.Answer`): a call closed only once complete,
its argument fragments streamed as the dialect's own delta events, the
finish never ``stop`` while a call is pending, usage translated. A request
refused upstream before its answer began is answered with the upstream's
status in the served dialect's error shape; a stream broken after, with the
served dialect's error event. Every request is journaled as a run of one
turn when a journal is given.

:func:`app` is the ASGI app; :class:`BridgeServer` serves it on loopback
(``toolwire bridge``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from toolwire.bridge._app import SERVED, app
from toolwire.bridge._routes import PROVIDER_CLASSES, Route, Target, parse_target, routes_from
from toolwire.cost import Prices
from toolwire.errors import UsageError
from toolwire.http import RateLimiter, Transport
from toolwire.http.transport import HttpRetryPolicy
from toolwire.journal import Journal
from toolwire.stream.codecs import wire_dialect
from toolwire.stream.codecs.bridge import Asked, read_request
from toolwire.testing import ServerLimits
from toolwire.testing.serving import LoopbackServer, is_loopback

__all__ = [
    "PROVIDER_CLASSES",
    "SERVED",
    "Asked",
    "BridgeServer",
    "Route",
    "Target",
    "app",
    "parse_target",
    "read_request",
    "routes_from",
]


class BridgeServer(LoopbackServer):
    """The bridge's app served on loopback; any other host needs ``api_key``.

    Args:
        models: the model map (see :func:`app`).
        serve: the dialects served.
        host: the interface; loopback unless ``api_key`` is given.
        port: the port (0: a free one).
        api_key: the key clients must send; required off loopback.
        journal, transport, retry, rate_limiter, upstream_key, log, prices: as
            :func:`app`.
        limits: what the server accepts from its clients (connections, body
            sizes, how long an idle connection is kept: 5 s by default).

    Raises:
        UsageError: a host off loopback without an API key of the bridge's own.
    """

    label = "bridge"
    uvicorn_options: ClassVar[Mapping[str, Any]] = {"lifespan": "on"}
    """The app's lifespan runs: at shutdown, it closes the upstreams' connections."""

    def __init__(
        self,
        models: Mapping[str, Target | Sequence[Target]],
        *,
        serve: str | Sequence[str] = SERVED,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        journal: Journal | None = None,
        transport: Transport | None = None,
        retry: HttpRetryPolicy | None = None,
        rate_limiter: RateLimiter | None = None,
        upstream_key: str | None = None,
        log: Callable[[str], None] | None = None,
        prices: Prices | bool | None = None,
        limits: ServerLimits | None = None,
    ) -> None:
        if not is_loopback(host) and not api_key:
            raise UsageError(
                f"refusing to listen on {host!r} without an API key: the bridge listens "
                "on loopback only unless it has a key of its own (api_key=, --api-key-env)"
            )
        self.served = (serve,) if isinstance(serve, str) else tuple(serve)
        asgi = app(
            models,
            serve=self.served,
            journal=journal,
            transport=transport,
            retry=retry,
            rate_limiter=rate_limiter,
            api_key=api_key,
            upstream_key=upstream_key,
            log=log,
            prices=prices,
        )
        super().__init__(
            asgi, host=host, port=port, allow_remote=api_key is not None, limits=limits
        )

    def url_for(self, dialect: str) -> str:
        """The base URL a client of ``dialect`` wants (its SDK's ``base_url``)."""
        if dialect not in self.served:
            raise UsageError(f"this bridge serves {', '.join(self.served)}, not {dialect!r}")
        return self.base_url + wire_dialect(dialect).base_path
