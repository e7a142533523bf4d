"""Google's Gemini Interactions API (``POST /v1beta/interactions``).

The wire format (input steps, tools, the SSE stream of steps, whole
interactions) is :mod:`toolwire.stream.codecs.gemini_interactions`; the
provider adds what is HTTP: the URL, the ``x-goog-api-key`` header, the
options it passes on, the error bodies, and two things this API allows:

* **chaining** (``chain=True``): each assistant turn keeps the id of its
  interaction; the next request names it in ``previous_interaction_id`` and
  sends only the newer messages (tool results, the user's next question).
  Off by default: a stateless request carries the whole conversation and
  still works when the stored interaction has expired (a run suspended for
  days, ``store=False``, another region).
* **continuation of a cut stream**: every event has an ``event_id``; a
  stream cut while read is picked up with ``GET
  /v1beta/interactions/{id}?stream=true&last_event_id=...`` and its rest fed
  to the same decoder, at most three times per turn, each within the
  transport's timeouts. The turn is neither asked nor paid for twice. On by
  default (``continue_cut_streams=False`` turns it off: a cut is then reported
  and the agent's ``stream_retries`` decide).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolwire.errors import ProviderError, UsageError
from toolwire.providers._base import HttpRequest, Provider, Transport
from toolwire.providers._reads import Continuation
from toolwire.stream.codecs._request import dict_or_empty

if TYPE_CHECKING:
    from toolwire.http.transport import Timeouts

__all__ = ["GeminiInteractions"]

_OFFICIAL = "https://generativelanguage.googleapis.com/v1beta"


class GeminiInteractions(Provider):
    """The Interactions dialect (``dialect == "gemini-interactions"``)."""

    dialect = "gemini-interactions"
    default_name = "gemini-interactions"
    default_base_url = _OFFICIAL
    env_vars = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    base_url_env_vars = ("GEMINI_BASE_URL",)

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        timeout: Timeouts | float | None = None,
        chain: bool = False,
        store: bool | None = None,
        continue_cut_streams: bool = True,
        thinking_level: str | None = None,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: the key (else ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``);
                sent in the ``x-goog-api-key`` header, never in the URL.
            base_url: the API root including the version; else
                ``GEMINI_BASE_URL``, else
                ``https://generativelanguage.googleapis.com/v1beta``.
            name: the provider's name in errors.
            headers: extra request headers.
            transport: default transport for ``stream``/``complete``.
            timeout: timeouts of the transport created when none is given.
            chain: send ``previous_interaction_id`` and only the messages
                after the latest turn (see the module's notes).
            store: the requests' ``store`` (``None``: the server's default,
                which stores; chaining and continuations need it).
            continue_cut_streams: pick up a cut stream from its last event.
            thinking_level: ``generation_config.thinking_level``
                (``"minimal"``, ``"low"``, ``"medium"``, ``"high"``).

        Raises:
            UsageError: no key for the official endpoint, or ``chain`` with
                ``store=False``.
        """
        super().__init__(
            api_key=api_key,
            base_url=base_url,
            name=name,
            headers=headers,
            transport=transport,
            timeout=timeout,
        )
        if chain and store is False:
            raise UsageError("chain=True needs stored interactions: leave store unset or True")
        self.chain = chain
        self.store = store
        self.continue_cut_streams = continue_cut_streams
        self.thinking_level = thinking_level

    def _auth_headers(self) -> dict[str, str]:
        if self._api_key is None:
            return {}
        return {"x-goog-api-key": self._api_key.reveal()}

    # -- requests --------------------------------------------------------

    def _encoder_options(self) -> dict[str, Any]:
        return {"thinking_level": self.thinking_level, "chain": self.chain, "store": self.store}

    def continuation(self) -> Continuation | None:
        """``GET .../interactions/{id}?stream=true&last_event_id=...`` for a
        cut stream (``None`` with ``continue_cut_streams=False`` or
        ``store=False``: nothing is kept to continue from)."""
        path = self.wire.continuation_path
        if not self.continue_cut_streams or self.store is False or path is None:
            return None

        def request(point: tuple[str, str]) -> HttpRequest:
            return HttpRequest(
                method="GET",
                url=self.base_url + path(*point),
                headers={
                    "accept": "text/event-stream",
                    **self._auth_headers(),
                    **self._extra_headers,
                },
                stream=True,
                dialect=self.dialect,
            )

        return request

    # -- responses -------------------------------------------------------

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        error = dict_or_empty(dict_or_empty(body).get("error"))
        message = error.get("message")
        status = error.get("status", error.get("code"))
        return self._build_error(
            status_code,
            headers,
            body,
            message=message if isinstance(message, str) else None,
            code=status,
            overloaded=status == "UNAVAILABLE",
        )
