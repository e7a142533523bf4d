"""OpenAI Chat Completions, and every server that speaks it.

Theory of operation: requests are ``POST {base_url}/chat/completions`` with a
``messages`` array. An assistant turn's calls go in ``tool_calls`` with
``function.arguments`` as a JSON *string*; each result is its own
``{"role": "tool", "tool_call_id": ...}`` message. The same code serves
OpenAI, Azure-style gateways, DashScope/Qwen, DeepSeek, vLLM, Ollama's
``/v1``, Groq, Mistral and OpenRouter: only ``base_url`` changes.

Reasoning servers put the model's thinking in ``reasoning_content`` (DeepSeek,
Qwen, vLLM) or ``reasoning`` (OpenRouter, Groq). DeepSeek requires the
``reasoning_content`` of a turn that called tools to be sent back in every
later request. A non-streaming response's reasoning fields are kept as a
provider_state item ``{"type": "message_fields", "fields": {...}}`` whose
fields are merged into the assistant message when it is sent again; for a
streamed turn (whose reasoning arrives as text), ``openai_reasoning_field``
names the field the reasoning is sent back in (``reasoning_content``, chosen
automatically for DeepSeek).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolwire import _json
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
    state_items,
    tool_names,
)
from toolwire.types import InvalidToolCall, StreamResult, ToolCall

if TYPE_CHECKING:
    from toolwire.transport import Timeouts

__all__ = ["OpenAIChat"]

_API = "openai-chat"
_OFFICIAL = "https://api.openai.com/v1"


def call_arguments_text(call: ToolCall | InvalidToolCall) -> str:
    """The arguments string to send back for a call the model made.

    The model's own text is sent when it parsed as is (byte-identical history
    keeps prompt caches warm); repaired calls are sent re-serialized so the
    history holds valid JSON; invalid calls keep what the model wrote, since
    the error result that follows explains what was wrong with it.
    """
    if isinstance(call, InvalidToolCall):
        return call.raw_arguments
    if call.raw_arguments.strip() and not call.repaired:
        return call.raw_arguments
    return _json.dumps(call.arguments)


class OpenAIChat(Provider):
    """The OpenAI Chat Completions dialect (``api == "openai-chat"``).

    Example::

        qwen = OpenAIChat(api_key=key, base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
                          name="qwen")
    """

    api = _API
    default_name = "openai"
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
        openai_stream_usage: bool = True,
        openai_max_tokens_field: str | None = None,
        openai_parallel_tool_calls: bool | None = None,
        openai_reasoning_field: str | None = "auto",
    ) -> None:
        """Configure the provider.

        Args:
            api_key: the key (else ``OPENAI_API_KEY``). Optional for a custom
                ``base_url``: local servers (vLLM, Ollama) need none.
            base_url: e.g. ``https://api.deepseek.com/v1`` or
                ``http://127.0.0.1:11434/v1``; else ``OPENAI_BASE_URL``, else
                OpenAI's.
            name: the provider's name in errors (``"deepseek"``...).
            headers: extra request headers.
            transport: default transport for ``stream``/``complete``.
            timeout: timeouts of the transport created when none is given.
            openai_organization: sent as ``OpenAI-Organization``.
            openai_project: sent as ``OpenAI-Project``.
            openai_stream_usage: ask for usage in streams
                (``stream_options.include_usage``); turn off for servers
                that reject ``stream_options``.
            openai_max_tokens_field: ``"max_completion_tokens"`` (the default
                at OpenAI, required by reasoning models) or ``"max_tokens"``
                (the default elsewhere).
            openai_parallel_tool_calls: sent as ``parallel_tool_calls`` when set.
            openai_reasoning_field: the assistant-message field that carries
                a tool-calling turn's reasoning back to the server
                (``"reasoning_content"``); ``"auto"`` picks it for DeepSeek
                URLs and sends nothing elsewhere, ``None`` never sends it.
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
        self.openai_stream_usage = openai_stream_usage
        if openai_max_tokens_field is None:
            official = self.base_url == _OFFICIAL
            openai_max_tokens_field = "max_completion_tokens" if official else "max_tokens"
        if openai_max_tokens_field not in ("max_tokens", "max_completion_tokens"):
            raise UsageError(
                "openai_max_tokens_field must be 'max_tokens' or 'max_completion_tokens'"
            )
        self.openai_max_tokens_field = openai_max_tokens_field
        self.openai_parallel_tool_calls = openai_parallel_tool_calls
        if openai_reasoning_field == "auto":
            # DeepSeek rejects a tool-calling turn sent back without its
            # reasoning_content; other servers may reject the unknown field.
            deepseek = "deepseek" in self.base_url.lower()
            openai_reasoning_field = "reasoning_content" if deepseek else None
        self.openai_reasoning_field = openai_reasoning_field

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

    def _assistant(self, message: AssistantMessage) -> dict[str, Any]:
        # Calls without text go with "content": "" rather than null: OpenAI
        # accepts both, but llama-cpp-python's server answers HTTP 500 to null.
        out: dict[str, Any] = {"role": "assistant", "content": message.text}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call_arguments_text(call)},
                }
                for call in message.tool_calls
            ]
        for item in state_items(message, ("message_fields",)):
            for key, value in as_dict(item.get("fields")).items():
                if key not in ("role", "content", "tool_calls"):
                    out[key] = value
        field = self.openai_reasoning_field
        if field and message.reasoning and message.tool_calls and field not in out:
            out[field] = message.reasoning
        return out

    def wire_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The ``messages`` array for a conversation."""
        out: list[dict[str, Any]] = []
        for message in messages:
            if isinstance(message, SystemMessage):
                out.append({"role": "system", "content": message.text})
            elif isinstance(message, UserMessage):
                out.append({"role": "user", "content": message.text})
            elif isinstance(message, AssistantMessage):
                out.append(self._assistant(message))
            elif isinstance(message, ToolResultMessage):
                out.append(
                    {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
                )
            else:
                raise UsageError(f"not a toolwire message: {type(message).__name__}")
        return out

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
        """Build a ``/chat/completions`` request (see :meth:`Provider.build_request`)."""
        body: dict[str, Any] = {"model": model, "messages": self.wire_messages(messages)}
        if tools:
            body["tools"] = [dict(t) for t in tools]
            names = tool_names(tools, lambda t: as_dict(t.get("function")).get("name"))
            forced = check_tool_choice(tool_choice, names)
            if forced is not None:
                body["tool_choice"] = {"type": "function", "function": {"name": forced}}
            elif tool_choice is not None:
                body["tool_choice"] = tool_choice
            if self.openai_parallel_tool_calls is not None:
                body["parallel_tool_calls"] = self.openai_parallel_tool_calls
        elif tool_choice not in (None, "none", "auto"):
            raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
        if max_tokens is not None:
            body[self.openai_max_tokens_field] = max_tokens
        if temperature is not None:
            body["temperature"] = temperature
        if stream:
            body["stream"] = True
            if self.openai_stream_usage:
                body["stream_options"] = {"include_usage": True}
        merge_extra(body, extra)
        return self._post(f"{self.base_url}/chat/completions", body, stream=stream)

    # -- responses -------------------------------------------------------

    def parse_response(self, body: Any) -> StreamResult:
        """Read a ``chat.completion`` object (see :meth:`Provider.parse_response`)."""
        if isinstance(body, dict) and "choices" not in body and body.get("error") is not None:
            # OpenRouter and some gateways answer 200 with an error object.
            return StreamResult(
                api=_API, choices=(), error=self._parse_error(200, {}, body), complete=True
            )
        return decode_response(_API, body)

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        return openai_style_error(self, status_code, headers, body)


def openai_style_error(
    provider: Provider, status_code: int, headers: Mapping[str, str], body: Any
) -> ProviderError:
    """Read the error shapes of OpenAI and compatible servers: ``{"error": {...}}``
    (OpenAI, Groq, DeepSeek), ``{"error": "text"}`` (Ollama), ``{"message": ...}``
    (vLLM, Mistral), ``{"detail": ...}`` (FastAPI-based servers)."""
    message: Any = None
    code: Any = None
    error_type: Any = None
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body_obj: dict[str, Any] = body[0]
    else:
        body_obj = as_dict(body)
    error = body_obj.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        code = error.get("code")
        error_type = error.get("type")
    elif isinstance(error, str):
        message = error
    if message is None:
        message = body_obj.get("message") or body_obj.get("detail")
        code = code if code is not None else body_obj.get("code")
        error_type = error_type or body_obj.get("type")
    if message is not None and not isinstance(message, str):
        message = _json.dumps(message)
    return provider._build_error(
        status_code, headers, body, message=message, code=code, error_type=error_type
    )
