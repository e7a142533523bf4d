"""Google Gemini API (``generateContent`` / ``streamGenerateContent``).

Theory of operation: the conversation is ``contents``, a list of
``{"role": "user" | "model", "parts": [...]}``; system text is
``systemInstruction``. A call is a ``functionCall`` part (``name``, ``args``
object, and an ``id`` on servers that send one); its result a
``functionResponse`` part (``name``, ``response`` object: the result under
``"output"``, or the failure under ``"error"``, as the API documents) in a
``user`` content. All results of a turn share one content, in call order,
so the API can match them to the calls. Tools go in
``tools: [{"functionDeclarations": [...]}]`` and ``tool_choice`` becomes
``toolConfig.functionCallingConfig`` (``AUTO``/``ANY``/``NONE`` and
``allowedFunctionNames``). Streaming uses ``:streamGenerateContent?alt=sse``.

Thinking models attach a ``thoughtSignature`` to parts (the first call of a
turn, a text part, a thought part) that must come back on the same part.
They are kept as provider_state items ``{"type": "thought_signature",
"signature": s, "call": k}`` for the k-th call, without ``call`` for a text
or thought part — the same items the stream decoder keeps. Gemini's API
sends no call ids (toolwire mints them), so a minted id is never sent back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

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
    as_list,
    check_tool_choice,
    merge_extra,
    state_items,
)
from toolwire.types import StreamResult, ToolCall

if TYPE_CHECKING:
    from toolwire.transport import Timeouts

__all__ = ["Gemini"]

_API = "gemini"
_OFFICIAL = "https://generativelanguage.googleapis.com/v1beta"
# A path that already names the API version (".../v1", ".../v1beta").
_VERSIONED = re.compile(r"/v\d+[a-z0-9]*/?$")
_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
# Keys of a Gemini ``Tool`` object: a list of these is already in wire shape.
_TOOL_KEYS = frozenset(
    {
        "functionDeclarations",
        "googleSearch",
        "googleSearchRetrieval",
        "codeExecution",
        "urlContext",
        "retrieval",
    }
)


class Gemini(Provider):
    """The Gemini dialect (``api == "gemini"``)."""

    api = _API
    default_name = "gemini"
    default_base_url = _OFFICIAL
    env_vars = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    base_url_env_vars = ("GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL")

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        timeout: Timeouts | float | None = None,
        gemini_thinking_budget: int | None = None,
        gemini_include_thoughts: bool | None = None,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: the key (else ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``);
                sent in the ``x-goog-api-key`` header, never in the URL.
            base_url: the API root including the version; else
                ``GEMINI_BASE_URL`` (the same form), else ``GOOGLE_GEMINI_BASE_URL``
                (the ``google-genai`` SDK's host root, to which ``/v1beta`` is
                added when it names no version), else
                ``https://generativelanguage.googleapis.com/v1beta``.
            name: the provider's name in errors.
            headers: extra request headers.
            transport: default transport for ``stream``/``complete``.
            timeout: timeouts of the transport created when none is given.
            gemini_thinking_budget: ``thinkingConfig.thinkingBudget``.
            gemini_include_thoughts: ``thinkingConfig.includeThoughts``.
        """
        super().__init__(
            api_key=api_key,
            base_url=base_url,
            name=name,
            headers=headers,
            transport=transport,
            timeout=timeout,
        )
        self.gemini_thinking_budget = gemini_thinking_budget
        self.gemini_include_thoughts = gemini_include_thoughts

    def _base_url_from_env(self, var: str, value: str) -> str:
        if var == "GOOGLE_GEMINI_BASE_URL" and not _VERSIONED.search(urlsplit(value).path):
            return value.rstrip("/") + "/v1beta"
        return value

    def _auth_headers(self) -> dict[str, str]:
        if self._api_key is None:
            return {}
        return {"x-goog-api-key": self._api_key.reveal()}

    # -- requests --------------------------------------------------------

    @staticmethod
    def _model_parts(message: AssistantMessage) -> list[dict[str, Any]]:
        call_signatures: dict[int, str] = {}
        loose: list[str] = []  # signatures of text or thought parts
        for item in state_items(message, ("thought_signature",)):
            signature = item.get("signature")
            if not isinstance(signature, str) or not signature:
                continue
            position = int_or_none(item.get("call"))
            if position is not None:
                call_signatures[position] = signature
            else:
                loose.append(signature)
        parts: list[dict[str, Any]] = []
        # Gemini puts a text answer's signature on its last part (often an
        # empty one at the end of a stream): the last loose signature goes on
        # the text, any earlier ones on empty parts before it.
        for signature in loose[:-1]:
            parts.append({"text": "", "thoughtSignature": signature})
        if message.text or loose:
            part: dict[str, Any] = {"text": message.text}
            if loose:
                part["thoughtSignature"] = loose[-1]
            parts.append(part)
        for index, call in enumerate(message.tool_calls):
            function: dict[str, Any] = {
                "name": call.name,
                "args": call.arguments if isinstance(call, ToolCall) else {},
            }
            if not call.minted_id:
                function["id"] = call.id
            part = {"functionCall": function}
            if index in call_signatures:
                part["thoughtSignature"] = call_signatures[index]
            parts.append(part)
        return parts

    def wire_contents(
        self, messages: Sequence[Message]
    ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """``(systemInstruction, contents)`` for a conversation."""
        system: list[str] = []
        contents: list[dict[str, Any]] = []
        provider_ids: set[str] = set()  # call ids Gemini itself sent

        def add(role: str, parts: list[dict[str, Any]]) -> None:
            # Gemini wants turns to alternate: same-role neighbours share a content.
            if contents and contents[-1]["role"] == role:
                contents[-1]["parts"].extend(parts)
            else:
                contents.append({"role": role, "parts": parts})

        for message in messages:
            if isinstance(message, SystemMessage):
                system.append(message.text)
            elif isinstance(message, UserMessage):
                add("user", [{"text": message.text}])
            elif isinstance(message, AssistantMessage):
                provider_ids.update(c.id for c in message.tool_calls if not c.minted_id)
                parts = self._model_parts(message)
                if parts:
                    add("model", parts)
            elif isinstance(message, ToolResultMessage):
                key = "error" if message.is_error else "output"
                response: dict[str, Any] = {
                    "name": message.name,
                    "response": {key: message.content},
                }
                if message.call_id in provider_ids:
                    response["id"] = message.call_id
                add("user", [{"functionResponse": response}])
            else:
                raise UsageError(f"not a toolwire message: {type(message).__name__}")
        instruction = {"parts": [{"text": "\n\n".join(system)}]} if system else None
        return instruction, contents

    @staticmethod
    def wire_tools(tools: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
        """Gemini ``tools`` and the declared function names.

        Accepts either ``Tool`` objects (``{"functionDeclarations": [...]}``)
        or bare function declarations, which are wrapped in one ``Tool``.
        """
        names: list[str] = []
        for tool in tools:
            if not isinstance(tool, Mapping):
                raise UsageError(f"a tool schema must be a JSON object, got {type(tool).__name__}")
        if all(_TOOL_KEYS.intersection(tool) for tool in tools):
            for tool in tools:
                for decl in as_list(tool.get("functionDeclarations")):
                    if isinstance(as_dict(decl).get("name"), str):
                        names.append(decl["name"])
            return [dict(t) for t in tools], names
        for tool in tools:
            if not isinstance(tool.get("name"), str):
                raise UsageError("a Gemini function declaration needs a 'name'")
            names.append(tool["name"])
        return [{"functionDeclarations": [dict(t) for t in tools]}], names

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
        """Build a ``generateContent`` request (see :meth:`Provider.build_request`)."""
        instruction, contents = self.wire_contents(messages)
        body: dict[str, Any] = {"contents": contents}
        if instruction is not None:
            body["systemInstruction"] = instruction
        if tools:
            body["tools"], names = self.wire_tools(tools)
            forced = check_tool_choice(tool_choice, names)
            if forced is not None:
                config: dict[str, Any] = {"mode": "ANY", "allowedFunctionNames": [forced]}
            elif tool_choice is not None:
                config = {
                    "mode": {"auto": "AUTO", "required": "ANY", "none": "NONE"}[str(tool_choice)]
                }
            if tool_choice is not None:
                body["toolConfig"] = {"functionCallingConfig": config}
        elif tool_choice not in (None, "none", "auto"):
            raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
        generation: dict[str, Any] = {}
        if max_tokens is not None:
            generation["maxOutputTokens"] = max_tokens
        if temperature is not None:
            generation["temperature"] = temperature
        thinking: dict[str, Any] = {}
        if self.gemini_thinking_budget is not None:
            thinking["thinkingBudget"] = self.gemini_thinking_budget
        if self.gemini_include_thoughts is not None:
            thinking["includeThoughts"] = self.gemini_include_thoughts
        if thinking:
            generation["thinkingConfig"] = thinking
        if generation:
            body["generationConfig"] = generation
        merge_extra(body, extra)
        model_id = model.removeprefix("models/")
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return self._post(
            f"{self.base_url}/models/{quote(model_id, safe='-._~')}:{method}", body, stream=stream
        )

    # -- responses -------------------------------------------------------

    def parse_response(self, body: Any) -> StreamResult:
        """Read a ``GenerateContentResponse`` (see :meth:`Provider.parse_response`)."""
        if isinstance(body, dict) and body.get("error") is not None and "candidates" not in body:
            return StreamResult(api=_API, choices=(), error=self._parse_error(200, {}, body))
        return decode_response(_API, body)

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        # The streaming endpoint wraps the error object in an array.
        first = body[0] if isinstance(body, list) and body else body
        error = as_dict(as_dict(first).get("error"))
        message = error.get("message")
        status = error.get("status")
        retry_after: float | None = None
        for detail in as_list(error.get("details")):
            delay = as_dict(detail).get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    retry_after = max(0.0, float(delay[:-1]))
                except ValueError:
                    retry_after = None
        return self._build_error(
            status_code,
            headers,
            body,
            message=message if isinstance(message, str) else None,
            code=status,
            overloaded=status == "UNAVAILABLE",
            retry_after=retry_after,
        )
