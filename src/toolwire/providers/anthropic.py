"""Anthropic Messages API (``POST {base_url}/v1/messages``).

The wire format itself (request bodies, streams, whole responses, tool schemas)
is :mod:`toolwire.stream.codecs.anthropic`; the provider adds what is HTTP: the URL, the
credential headers, the options it passes on, and the error bodies.

Theory of operation (of the format the codec writes):
system text is the top-level ``system`` field and the
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

from toolwire.content import CachePoint
from toolwire.errors import ProviderError, UsageError
from toolwire.http import Transport
from toolwire.providers._base import Provider
from toolwire.stream.codecs.request import dict_or_empty

if TYPE_CHECKING:
    from toolwire.http.transport import Timeouts

__all__ = ["Anthropic"]

_DIALECT_NAME = "anthropic-messages"
_OFFICIAL = "https://api.anthropic.com"
_DEFAULT_MAX_TOKENS = 4096


class Anthropic(Provider):
    """The Anthropic Messages dialect (``dialect == "anthropic-messages"``).

    :meth:`build_request` refuses to force a tool while thinking is enabled
    (:class:`~toolwire.errors.UsageError`), as the API would.
    """

    dialect = _DIALECT_NAME
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
        anthropic_cache_tools: CachePoint | None = None,
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
            anthropic_cache_tools: a :class:`~toolwire.CachePoint` after the
                tools (``cache_control`` on the last tool of every request).
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
        self.anthropic_cache_tools = anthropic_cache_tools

    def _auth_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": self.anthropic_version}
        if self._api_key is not None:
            headers["x-api-key"] = self._api_key.reveal()
        if self.anthropic_beta:
            headers["anthropic-beta"] = ",".join(self.anthropic_beta)
        return headers

    def _encoder_options(self) -> dict[str, Any]:
        return dict(
            default_max_tokens=self.anthropic_max_tokens,
            thinking=self.anthropic_thinking,
            disable_parallel_tool_use=self.anthropic_disable_parallel_tool_use,
            cache_tools=self.anthropic_cache_tools,
        )

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        error = dict_or_empty(dict_or_empty(body).get("error"))
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
