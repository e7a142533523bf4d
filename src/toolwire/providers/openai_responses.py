"""OpenAI Responses API (``POST {base_url}/responses``).

Theory of operation: the conversation is an ``input`` list of items rather
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

from toolwire.decoder import decode_response
from toolwire.errors import ProviderError, UsageError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.providers._base import (
    HttpRequest,
    Provider,
    ToolChoice,
    Transport,
    check_tool_choice,
    merge_extra,
    placed,
    state_items,
    tool_names,
)
from toolwire.providers.openai_chat import call_arguments_text, openai_style_error
from toolwire.types import (
    StreamResult,
)

if TYPE_CHECKING:
    from toolwire.transport import Timeouts

__all__ = ["OpenAIResponses"]

_API = "openai-responses"
_OFFICIAL = "https://api.openai.com/v1"


class OpenAIResponses(Provider):
    """The OpenAI Responses dialect (``api == "openai-responses"``)."""

    api = _API
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

    def _assistant_items(self, message: AssistantMessage) -> list[dict[str, Any]]:
        by_position = placed(state_items(message, ("reasoning",)))
        out = list(by_position.pop(0, []))
        if message.text:
            out.append({"role": "assistant", "content": message.text})
        for position, call in enumerate(message.tool_calls, start=1):
            out.append(
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call_arguments_text(call),
                }
            )
            out.extend(by_position.pop(position, []))
        for position in sorted(by_position):  # positions past the last call
            out.extend(by_position[position])
        return out

    def wire_input(self, messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
        """``(instructions, input)`` for a conversation."""
        instructions: list[str] = []
        items: list[dict[str, Any]] = []
        for message in messages:
            if isinstance(message, SystemMessage):
                if items:  # a later system message stays where it was said
                    items.append({"role": "system", "content": message.text})
                else:
                    instructions.append(message.text)
            elif isinstance(message, UserMessage):
                items.append({"role": "user", "content": message.text})
            elif isinstance(message, AssistantMessage):
                items.extend(self._assistant_items(message))
            elif isinstance(message, ToolResultMessage):
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": message.call_id,
                        "output": message.content,
                    }
                )
            else:
                raise UsageError(f"not a toolwire message: {type(message).__name__}")
        return ("\n\n".join(instructions) if instructions else None), items

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
        instructions, items = self.wire_input(messages)
        body: dict[str, Any] = {"model": model, "input": items}
        if instructions is not None:
            body["instructions"] = instructions
        if tools:
            body["tools"] = [dict(t) for t in tools]
            forced = check_tool_choice(tool_choice, tool_names(tools, lambda t: t.get("name")))
            if forced is not None:
                body["tool_choice"] = {"type": "function", "name": forced}
            elif tool_choice is not None:
                body["tool_choice"] = tool_choice
            if self.openai_parallel_tool_calls is not None:
                body["parallel_tool_calls"] = self.openai_parallel_tool_calls
        elif tool_choice not in (None, "none", "auto"):
            raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
        if max_tokens is not None:
            body["max_output_tokens"] = max_tokens
        if temperature is not None:
            body["temperature"] = temperature
        if self.openai_reasoning is not None:
            body["reasoning"] = dict(self.openai_reasoning)
        if self.openai_store is not None:
            body["store"] = self.openai_store
            if not self.openai_store:
                body["include"] = ["reasoning.encrypted_content"]
        if stream:
            body["stream"] = True
        merge_extra(body, extra)
        return self._post(f"{self.base_url}/responses", body, stream=stream)

    # -- responses -------------------------------------------------------

    def parse_response(self, body: Any) -> StreamResult:
        """Read a ``response`` object (see :meth:`Provider.parse_response`)."""
        if isinstance(body, dict) and "output" not in body and body.get("error") is not None:
            return StreamResult(api=_API, choices=(), error=self._parse_error(200, {}, body))
        return decode_response(_API, body)

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        return openai_style_error(self, status_code, headers, body)
