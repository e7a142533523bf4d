"""OpenAI Responses API (``POST {base_url}/responses``).

The wire format itself (request bodies, streams, whole responses, tool schemas)
is :mod:`toolwire.stream.codecs.openai_responses`; the provider adds what is HTTP: the URL, the
credential headers, the options it passes on, and the error bodies.

Theory of operation (of the format the codec writes):
the conversation is an ``input`` list of items rather
than messages. A call the model made is a ``function_call`` item
(``call_id``, ``name``, ``arguments`` as a JSON string) and its result a
``function_call_output`` item with the same ``call_id``; leading system
messages become ``instructions``. Tools are flat (``{"type": "function",
"name": ...}``) and forcing one is ``{"type": "function", "name": ...}``.

Reasoning models return ``reasoning`` items that must be sent back with
the calls that followed them (the API rejects a reasoning item without its
following item). They are kept as provider_state, as received — the same
items the stream decoder keeps; one that came after some calls also carries
``"after_tool_calls": k`` (removed before sending) so the interleaving of
reasoning and calls is rebuilt. Items of hosted tools (web search, MCP...)
are reported as :class:`~toolwire.types.ServerToolCall`.

With ``transport="websocket"`` each agent run opens one WebSocket to
``wss://…/v1/responses`` and sends its turns there, later turns continuing
the previous response with only the new items, HTTP taking over when the
socket cannot serve a request (:mod:`toolwire.providers._socket`).
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from toolwire.errors import ProviderError, UsageError
from toolwire.http import HttpRequest, Transport
from toolwire.providers._base import Provider
from toolwire.providers._socket import SocketTransport
from toolwire.providers.openai_chat import openai_auth_headers, openai_style_error

if TYPE_CHECKING:
    from toolwire.http.transport import Timeouts

__all__ = ["OpenAIResponses"]

_DIALECT_NAME = "openai-responses"
_OFFICIAL = "https://api.openai.com/v1"


class OpenAIResponses(Provider):
    """The OpenAI Responses dialect (``dialect == "openai-responses"``)."""

    dialect = _DIALECT_NAME
    default_name = "openai-responses"
    default_base_url = _OFFICIAL
    env_vars = ("OPENAI_API_KEY",)
    base_url_env_vars = ("OPENAI_BASE_URL",)

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        transport: Transport | Literal["http", "websocket"] | None = None,
        timeout: Timeouts | float | None = None,
        openai_organization: str | None = None,
        openai_project: str | None = None,
        openai_reasoning: Mapping[str, Any] | None = None,
        openai_store: bool | None = None,
        openai_parallel_tool_calls: bool | None = None,
        openai_background: bool = False,
        continuation_attempts: int = 3,
        continuation_timeout: float = 30.0,
        resume_attempts: int | None = None,
        resume_timeout: float | None = None,
        websocket_max_age: float = 3600.0,
        websocket_renew_before: float = 300.0,
        websocket_clock: Callable[[], float] | None = None,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: the key (else ``OPENAI_API_KEY``).
            base_url: the server's base URL; else ``OPENAI_BASE_URL``, else OpenAI's.
            name: the provider's name in errors.
            headers: extra request headers.
            transport: default transport for ``stream``/``complete``; or
                ``"websocket"``: each agent run sends its turns over one
                WebSocket (``wss://…/responses``; ``ws://`` for an
                ``http://`` base URL), HTTP taking over when it fails
                (``"http"``, the default: every turn is a POST).
            timeout: timeouts of the transport created when none is given.
            openai_organization: sent as ``OpenAI-Organization``.
            openai_project: sent as ``OpenAI-Project``.
            openai_reasoning: the ``reasoning`` object
                (``{"effort": "low", "summary": "auto"}``).
            openai_store: sent as ``store``; with ``False`` the encrypted
                reasoning is requested so that stateless turns keep it.
            openai_parallel_tool_calls: sent as ``parallel_tool_calls`` when set.
            openai_background: run each response in background mode
                (``background: true``, with ``store: true``): OpenAI keeps
                generating when the connection drops, and a stream cut
                mid-turn is resumed after its last event
                (``GET /responses/{id}?stream=true&starting_after=N``) instead
                of being asked (and paid) again.
            continuation_attempts: the most reopenings of one cut background
                stream (``0``: a cut is reported, and the agent may ask again).
            continuation_timeout: seconds for each reopening to be answered.
            resume_attempts: older name of ``continuation_attempts``.
            resume_timeout: older name of ``continuation_timeout``.
            websocket_max_age: how long the server keeps a socket open, in
                seconds (OpenAI: 60 minutes).
            websocket_renew_before: a socket this close to its
                ``websocket_max_age`` is replaced before a turn is sent on it.
            websocket_clock: the clock of socket ages (``time.monotonic``).

        Raises:
            UsageError: ``openai_background`` with ``openai_store=False``
                (background responses are stored), ``continuation_attempts``
                below 0 or ``continuation_timeout`` not positive,
                ``transport`` an unknown word, ``"websocket"`` without
                wsproto installed, ``websocket_renew_before`` not below
                ``websocket_max_age``.
        """
        mode = transport if isinstance(transport, str) else None
        super().__init__(
            api_key=api_key,
            base_url=base_url,
            name=name,
            headers=headers,
            transport=None if isinstance(transport, str) else transport,
            timeout=timeout,
        )
        if mode not in (None, "http", "websocket"):
            raise UsageError(f"{self.name}: transport is 'http', 'websocket' or a Transport")
        if not 0 <= websocket_renew_before < websocket_max_age:
            raise UsageError(f"{self.name}: websocket_renew_before must be below websocket_max_age")
        self.websocket = mode == "websocket"
        """Whether agent runs send their turns over a WebSocket."""
        if self.websocket and importlib.util.find_spec("wsproto") is None:
            raise UsageError(
                f"{self.name}: transport='websocket' needs wsproto: "
                "pip install 'toolwire[websocket]'"
            )
        self._socket_ages = (websocket_max_age, websocket_renew_before, websocket_clock)
        self.openai_organization = openai_organization
        self.openai_project = openai_project
        self.openai_reasoning = dict(openai_reasoning) if openai_reasoning else None
        self.openai_store = openai_store
        self.openai_parallel_tool_calls = openai_parallel_tool_calls
        if openai_background and openai_store is False:
            raise UsageError(
                f"{self.name}: openai_background needs stored responses: drop openai_store=False"
            )
        self.openai_background = openai_background
        self._continuation_options(
            "OpenAIResponses",
            continuation_attempts,
            continuation_timeout,
            resume_attempts,
            resume_timeout,
        )

    def _auth_headers(self) -> dict[str, str]:
        return openai_auth_headers(self._api_key, self.openai_organization, self.openai_project)

    def _encoder_options(self) -> dict[str, Any]:
        return dict(
            reasoning=self.openai_reasoning,
            store=self.openai_store,
            parallel_tool_calls=self.openai_parallel_tool_calls,
        )

    def _post_model(self, model: str, body: dict[str, Any], *, stream: bool) -> HttpRequest:
        if self.openai_background and stream:  # ``extra`` may still say otherwise
            body.setdefault("background", True)
            body.setdefault("store", True)
        return super()._post_model(model, body, stream=stream)

    def _keeps(self, request: HttpRequest) -> bool:
        """A streamed background response (``"background": true`` in the body,
        from ``openai_background`` or ``extra``) is kept, and resumed after
        its last event; any other stream is asked again when cut."""
        return request.json.get("background") is True

    @contextlib.asynccontextmanager
    async def run_transport(self, transport: Transport | None) -> AsyncIterator[Transport | None]:
        """One WebSocket per agent run in WebSocket mode (HTTP behind it:
        ``transport``, else the provider's own); else ``transport``."""
        if not self.websocket:
            yield transport
            return
        mode = self.wire.socket
        assert mode is not None  # the Responses dialect has its socket
        from toolwire.http.transport import Timeouts

        max_age, renew_before, clock = self._socket_ages
        timeouts = Timeouts.coerce(self._timeout)
        headers = self._headers(stream=True)
        socket = SocketTransport(
            mode=mode,
            url=mode.url(self.base_url),
            headers={k: v for k, v in headers.items() if k not in ("content-type", "accept")},
            http=self._transport_for(transport),
            clock=clock,
            max_age=max_age,
            renew_before=renew_before,
            connect_timeout=timeouts.connect or 10.0,
            read_timeout=timeouts.read or 300.0,
            total_timeout=timeouts.total,
        )
        try:
            yield socket
        finally:
            await socket.aclose()

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        return openai_style_error(self, status_code, headers, body)
