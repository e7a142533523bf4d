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

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolwire.errors import ProviderError, UsageError
from toolwire.http import HttpRequest, Transport
from toolwire.providers._base import Provider
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
        transport: Transport | None = None,
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
            continuation_attempts: the most reopenings of one cut background
                stream (``0``: a cut is reported, and the agent may ask again).
            continuation_timeout: seconds for each reopening to be answered.
            resume_attempts: older name of ``continuation_attempts``.
            resume_timeout: older name of ``continuation_timeout``.

        Raises:
            UsageError: ``openai_background`` with ``openai_store=False``
                (background responses are stored), ``continuation_attempts``
                below 0 or ``continuation_timeout`` not positive.
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

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        return openai_style_error(self, status_code, headers, body)
