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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolwire.errors import ProviderError, UsageError
from toolwire.messages import Message
from toolwire.providers._base import HttpRequest, Provider, ToolChoice, Transport
from toolwire.providers._reads import Resumer
from toolwire.providers.openai_chat import openai_style_error
from toolwire.stream.codecs._request import merge_extra
from toolwire.stream.codecs.openai_responses_request import resume_path
from toolwire.types import StreamResult

if TYPE_CHECKING:
    from toolwire.http.transport import Timeouts

__all__ = ["OpenAIResponses"]

_API = "openai-responses"
_OFFICIAL = "https://api.openai.com/v1"


class OpenAIResponses(Provider):
    """The OpenAI Responses dialect (``dialect == "openai-responses"``)."""

    dialect = _API
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
        transport: Transport | None = None,
        timeout: Timeouts | float | None = None,
        openai_organization: str | None = None,
        openai_project: str | None = None,
        openai_reasoning: Mapping[str, Any] | None = None,
        openai_store: bool | None = None,
        openai_parallel_tool_calls: bool | None = None,
        openai_background: bool = False,
        resume_attempts: int = 3,
        resume_timeout: float = 30.0,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: the key (else ``OPENAI_API_KEY``).
            base_url: the server's base URL; else ``OPENAI_BASE_URL``, else OpenAI's.
            name: the provider's name in errors.
            headers: extra request headers.
            transport: default transport for ``stream``/``complete``.
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
            resume_attempts: the most reconnections of one cut stream.
            resume_timeout: seconds for each reconnection to open.

        Raises:
            UsageError: ``openai_background`` with ``openai_store=False``
                (background responses are stored), or a resume bound below 1.
        """
        super().__init__(
            api_key=api_key,
            base_url=base_url,
            name=name,
            headers=headers,
            transport=transport,
            timeout=timeout,
        )
        self.openai_organization = openai_organization
        self.openai_project = openai_project
        self.openai_reasoning = dict(openai_reasoning) if openai_reasoning else None
        self.openai_store = openai_store
        self.openai_parallel_tool_calls = openai_parallel_tool_calls
        if openai_background and openai_store is False:
            raise UsageError(
                f"{self.name}: openai_background needs stored responses: drop openai_store=False"
            )
        if resume_attempts < 1 or not resume_timeout > 0:
            raise UsageError(
                f"{self.name}: resume_attempts must be at least 1 and resume_timeout positive"
            )
        self.openai_background = openai_background
        self.resume_attempts = resume_attempts
        self.resume_timeout = resume_timeout

    def _auth_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self._api_key is not None:
            headers["authorization"] = f"Bearer {self._api_key.reveal()}"
        if self.openai_organization:
            headers["openai-organization"] = self.openai_organization
        if self.openai_project:
            headers["openai-project"] = self.openai_project
        return headers

    # -- requests --------------------------------------------------------

    def build_request(
        self,
        *,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        tool_choice: ToolChoice | None = None,
        stream: bool = True,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> HttpRequest:
        """Build a ``/responses`` request (see :meth:`Provider.build_request`)."""
        body = self._encode(
            model=model,
            messages=messages,
            tools=tools,
            tool_choice=tool_choice,
            stream=stream,
            max_tokens=max_tokens,
            temperature=temperature,
            reasoning=self.openai_reasoning,
            store=self.openai_store,
            parallel_tool_calls=self.openai_parallel_tool_calls,
        )
        if self.openai_background and stream:
            body["background"] = True
            body["store"] = True
        merge_extra(body, extra)
        return self._post_model(model, body, stream=stream)

    def resumer(self, request: HttpRequest) -> Resumer | None:
        """A streamed background response (``"background": true`` in the body,
        from ``openai_background`` or ``extra``) is resumed after its last
        event; any other stream is asked again when cut."""
        if not request.stream or request.json.get("background") is not True:
            return None
        base, headers = self.base_url, self._headers(stream=True)
        headers.pop("content-type", None)

        def resume(response_id: str, cursor: int | None) -> HttpRequest:
            return HttpRequest(
                method="GET",
                url=base + resume_path(response_id, cursor),
                headers=headers,
                stream=True,
                dialect=self.dialect,
            )

        return Resumer(request=resume, attempts=self.resume_attempts, timeout=self.resume_timeout)

    # -- responses -------------------------------------------------------

    def parse_response(self, body: Any) -> StreamResult:
        """Read a ``response`` object (see :meth:`Provider.parse_response`)."""
        return self._read_whole(body)

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        return openai_style_error(self, status_code, headers, body)
