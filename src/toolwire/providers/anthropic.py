"""Anthropic Messages API (``POST {base_url}/v1/messages``).

Theory of operation: system text is the top-level ``system`` field and the
conversation alternates ``user`` and ``assistant`` messages of content
blocks. A call is a ``tool_use`` block (``id``, ``name``, ``input`` object);
its result a ``tool_result`` block (``tool_use_id``, ``content``,
``is_error``) inside a *user* message. All results of one assistant turn go
in one user message, results first, as the API requires; a user message
that follows them joins that same message as a text block.

With extended thinking the assistant turn starts with ``thinking`` blocks
(with a ``signature``) or ``redacted_thinking`` blocks, which must be sent
back unchanged before the ``tool_use`` they led to. They are kept as
provider_state, as the blocks themselves — the same items the stream
decoder keeps; a block that came after some calls (interleaved thinking)
also carries ``"after_tool_calls": k``, removed before sending, so it goes
back in its place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolwire.codecs._common import (
    int_or_none,
)
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
    as_dict,
    check_tool_choice,
    merge_extra,
    placed,
    state_items,
    tool_names,
)
from toolwire.types import (
    StreamResult,
    ToolCall,
)

if TYPE_CHECKING:
    from toolwire.transport import Timeouts

__all__ = ["Anthropic"]

_API = "anthropic-messages"
_OFFICIAL = "https://api.anthropic.com"
_DEFAULT_MAX_TOKENS = 4096
_STATE_BLOCKS = ("thinking", "redacted_thinking")


class Anthropic(Provider):
    """The Anthropic Messages dialect (``api == "anthropic-messages"``)."""

    api = _API
    default_name = "anthropic"
    default_base_url = _OFFICIAL
    env_vars = ("ANTHROPIC_API_KEY",)
    base_url_env_vars = ("ANTHROPIC_BASE_URL",)

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        timeout: Timeouts | float | None = None,
        anthropic_version: str = "2023-06-01",
        anthropic_beta: Sequence[str] = (),
        anthropic_thinking: int | Mapping[str, Any] | None = None,
        anthropic_max_tokens: int = _DEFAULT_MAX_TOKENS,
        anthropic_disable_parallel_tool_use: bool | None = None,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: the key (else ``ANTHROPIC_API_KEY``).
            base_url: the server's base URL; else ``ANTHROPIC_BASE_URL``, else
                Anthropic's.
            name: the provider's name in errors.
            headers: extra request headers.
            transport: default transport for ``stream``/``complete``.
            timeout: timeouts of the transport created when none is given.
            anthropic_version: the ``anthropic-version`` header.
            anthropic_beta: beta feature names for ``anthropic-beta``.
            anthropic_thinking: a thinking budget in tokens, or the whole
                ``thinking`` object (``{"type": "enabled", "budget_tokens": N}``).
            anthropic_max_tokens: ``max_tokens`` when a request gives none
                (the API requires one); raised above the thinking budget.
            anthropic_disable_parallel_tool_use: sent in ``tool_choice``.
        """
        super().__init__(
            api_key=api_key,
            base_url=base_url,
            name=name,
            headers=headers,
            transport=transport,
            timeout=timeout,
        )
        self.anthropic_version = anthropic_version
        self.anthropic_beta = tuple(anthropic_beta)
        if isinstance(anthropic_thinking, bool):
            raise UsageError("anthropic_thinking is a token budget or a thinking object")
        if isinstance(anthropic_thinking, int):
            if anthropic_thinking < 1:
                raise UsageError("anthropic_thinking budget must be a positive number of tokens")
            self.anthropic_thinking: dict[str, Any] | None = {
                "type": "enabled",
                "budget_tokens": anthropic_thinking,
            }
        else:
            self.anthropic_thinking = dict(anthropic_thinking) if anthropic_thinking else None
        self.anthropic_max_tokens = anthropic_max_tokens
        self.anthropic_disable_parallel_tool_use = anthropic_disable_parallel_tool_use

    def _auth_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": self.anthropic_version}
        if self._api_key is not None:
            headers["x-api-key"] = self._api_key.reveal()
        if self.anthropic_beta:
            headers["anthropic-beta"] = ",".join(self.anthropic_beta)
        return headers

    # -- requests --------------------------------------------------------

    def _assistant_blocks(self, message: AssistantMessage) -> list[dict[str, Any]]:
        by_position = placed(state_items(message, _STATE_BLOCKS))
        blocks = list(by_position.pop(0, []))
        if message.text:
            blocks.append({"type": "text", "text": message.text})
        for position, call in enumerate(message.tool_calls, start=1):
            arguments = call.arguments if isinstance(call, ToolCall) else {}
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}
            )
            blocks.extend(by_position.pop(position, []))
        for position in sorted(by_position):
            blocks.extend(by_position[position])
        return blocks

    def wire_messages(self, messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
        """``(system, messages)`` for a conversation."""
        system: list[str] = []
        out: list[dict[str, Any]] = []

        def user_blocks() -> list[dict[str, Any]]:
            # Consecutive user-side content (tool results, then user text) is
            # one user message: results of one turn must share a message.
            if out and out[-1]["role"] == "user":
                content: list[dict[str, Any]] = out[-1]["content"]
                return content
            out.append({"role": "user", "content": []})
            return out[-1]["content"]  # type: ignore[no-any-return]

        for message in messages:
            if isinstance(message, SystemMessage):
                system.append(message.text)
            elif isinstance(message, UserMessage):
                user_blocks().append({"type": "text", "text": message.text})
            elif isinstance(message, ToolResultMessage):
                blocks = user_blocks()
                result = {
                    "type": "tool_result",
                    "tool_use_id": message.call_id,
                    "content": message.content,
                    "is_error": message.is_error,
                }
                # tool_result blocks must precede any text in the message.
                first_text = next(
                    (i for i, b in enumerate(blocks) if b.get("type") != "tool_result"), None
                )
                if first_text is None:
                    blocks.append(result)
                else:
                    blocks.insert(first_text, result)
            elif isinstance(message, AssistantMessage):
                blocks = self._assistant_blocks(message)
                if not blocks:
                    continue  # an empty turn carries nothing and the API rejects it
                if out and out[-1]["role"] == "assistant":
                    out[-1]["content"].extend(blocks)
                else:
                    out.append({"role": "assistant", "content": blocks})
            else:
                raise UsageError(f"not a toolwire message: {type(message).__name__}")
        return ("\n\n".join(system) if system else None), out

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
        """Build a ``/v1/messages`` request (see :meth:`Provider.build_request`).

        Raises:
            UsageError: forcing a tool while thinking is enabled (the API
                refuses it), or an invalid ``tool_choice``.
        """
        system, wire = self.wire_messages(messages)
        if max_tokens is None:
            max_tokens = self.anthropic_max_tokens
            budget = int_or_none(as_dict(self.anthropic_thinking).get("budget_tokens"))
            if budget is not None and max_tokens <= budget:
                max_tokens = budget + self.anthropic_max_tokens
        body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": wire}
        if system is not None:
            body["system"] = system
        if tools:
            body["tools"] = [dict(t) for t in tools]
            forced = check_tool_choice(tool_choice, tool_names(tools, lambda t: t.get("name")))
            choice: dict[str, Any] | None = None
            if forced is not None:
                choice = {"type": "tool", "name": forced}
            elif tool_choice == "required":
                choice = {"type": "any"}
            elif tool_choice in ("auto", "none"):
                choice = {"type": tool_choice}
            if self.anthropic_disable_parallel_tool_use is not None and (
                choice is None or choice["type"] != "none"
            ):
                choice = choice or {"type": "auto"}
                choice["disable_parallel_tool_use"] = self.anthropic_disable_parallel_tool_use
            if choice is not None:
                if self.anthropic_thinking and choice["type"] in ("any", "tool"):
                    raise UsageError(
                        "Anthropic does not allow forcing a tool while thinking is enabled"
                    )
                body["tool_choice"] = choice
        elif tool_choice not in (None, "none", "auto"):
            raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
        if temperature is not None:
            body["temperature"] = temperature
        if self.anthropic_thinking is not None:
            body["thinking"] = dict(self.anthropic_thinking)
        if stream:
            body["stream"] = True
        merge_extra(body, extra)
        return self._post(f"{self.base_url}/v1/messages", body, stream=stream)

    # -- responses -------------------------------------------------------

    def parse_response(self, body: Any) -> StreamResult:
        """Read a ``message`` object (see :meth:`Provider.parse_response`)."""
        if isinstance(body, dict) and body.get("type") == "error":
            return StreamResult(api=_API, choices=(), error=self._parse_error(200, {}, body))
        return decode_response(_API, body)

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        error = as_dict(as_dict(body).get("error"))
        message = error.get("message")
        error_type = error.get("type")
        return self._build_error(
            status_code,
            headers,
            body,
            message=message if isinstance(message, str) else None,
            error_type=error_type,
            overloaded=error_type == "overloaded_error",
        )
