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
* **resumption of a cut stream**: every event has an ``event_id``; a
  stream cut while read is reopened with ``GET
  /v1beta/interactions/{id}?stream=true&last_event_id=...`` and its rest fed
  to the same decoder (:mod:`toolwire.providers._reads`, as for a Responses
  background response), at most ``continuation_attempts`` times per turn, each
  within ``continuation_timeout``. The turn is neither asked nor paid for twice.
  On by default, since stored interactions cost nothing more
  (``continuation_attempts=0`` turns it off: a cut is then reported and the
  agent's ``stream_retries`` decide).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolwire.errors import UsageError
from toolwire.http import HttpRequest, Transport
from toolwire.providers.gemini import GeminiAPIBase

if TYPE_CHECKING:
    from toolwire.http.transport import Timeouts

__all__ = ["GeminiInteractions"]


class GeminiInteractions(GeminiAPIBase):
    """The Interactions dialect (``dialect == "gemini-interactions"``)."""

    dialect = "gemini-interactions"
    default_name = "gemini-interactions"
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
        thinking_level: str | None = None,
        continuation_attempts: int = 3,
        continuation_timeout: float = 30.0,
        resume_attempts: int | None = None,
        resume_timeout: float | None = None,
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
            thinking_level: ``generation_config.thinking_level``
                (``"minimal"``, ``"low"``, ``"medium"``, ``"high"``).
            continuation_attempts: the most reopenings of one cut stream after its
                last event (``0``: a cut is reported, and the agent may ask
                again); none with ``store=False``, which keeps nothing.
            continuation_timeout: seconds for each reopening to be answered.
            resume_attempts: older name of ``continuation_attempts``.
            resume_timeout: older name of ``continuation_timeout``.

        Raises:
            UsageError: no key for the official endpoint, ``chain`` with
                ``store=False``, ``continuation_attempts`` below 0 or
                ``continuation_timeout`` not positive.
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
        self._continuation_options(
            "GeminiInteractions",
            continuation_attempts,
            continuation_timeout,
            resume_attempts,
            resume_timeout,
        )
        self.thinking_level = thinking_level

    # -- requests --------------------------------------------------------

    def _encoder_options(self) -> dict[str, Any]:
        return {"thinking_level": self.thinking_level, "chain": self.chain, "store": self.store}

    def _keeps(self, request: HttpRequest) -> bool:
        """A stored interaction (``store`` not ``False``, in the provider or
        ``extra``) is kept, and resumed after its last event."""
        return self.store is not False and request.json.get("store") is not False
