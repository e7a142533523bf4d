"""Google Gemini API (``generateContent`` / ``streamGenerateContent``).

The wire format itself (request bodies, streams, whole responses, tool schemas)
is :mod:`toolwire.stream.codecs.gemini`; the provider adds what is HTTP: the URL, the
credential headers, the options it passes on, and the error bodies.

Theory of operation (of the format the codec writes):
the conversation is ``contents``, a list of
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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolwire.errors import ProviderError
from toolwire.http import Transport
from toolwire.providers._base import Provider
from toolwire.stream.codecs.request import dict_or_empty, list_or_empty

if TYPE_CHECKING:
    from toolwire.http.transport import Timeouts

__all__ = ["Gemini", "GeminiAPIBase"]

_DIALECT_NAME = "gemini"
_OFFICIAL = "https://generativelanguage.googleapis.com/v1beta"
# A path that already names the API version (".../v1", ".../v1beta").
_VERSIONED = re.compile(r"/v\d+[a-z0-9]*/?$")


class GeminiAPIBase(Provider):
    """What the providers of the Gemini API share (``generateContent`` and
    Interactions): the key (``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``, sent in
    the ``x-goog-api-key`` header, never in the URL), the official root, and
    Google's error bodies."""

    default_base_url = _OFFICIAL
    env_vars = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

    def _auth_headers(self) -> dict[str, str]:
        if self._api_key is None:
            return {}
        return {"x-goog-api-key": self._api_key.reveal()}

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        """``{"error": {"code", "message", "status", "details"}}`` (a
        ``google.rpc.Status``; ``streamGenerateContent`` wraps it in an
        array), with the ``retryDelay`` of its ``RetryInfo`` detail."""
        first = body[0] if isinstance(body, list) and body else body
        error = dict_or_empty(dict_or_empty(first).get("error"))
        message = error.get("message")
        status = error.get("status", error.get("code"))
        retry_after: float | None = None
        for detail in list_or_empty(error.get("details")):
            delay = dict_or_empty(detail).get("retryDelay")
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


class Gemini(GeminiAPIBase):
    """The Gemini dialect (``dialect == "gemini"``)."""

    dialect = _DIALECT_NAME
    in_url = ("model", "stream")
    default_name = "gemini"
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

    def _encoder_options(self) -> dict[str, Any]:
        return dict(
            thinking_budget=self.gemini_thinking_budget,
            include_thoughts=self.gemini_include_thoughts,
        )
