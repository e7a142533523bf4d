"""What the emulation server does with one request: parse it, pick the
scenario's turn, render and encode the answer, apply the faults, and remember
the latest requests (a bounded list) and attempts (a bounded count).

See :mod:`toolwire.testing.server` for the theory of operation.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

import anyio
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from toolwire.stream import jsonio
from toolwire.stream.codecs import wire_dialect
from toolwire.stream.framing.eventstream import MEDIA_TYPE as EVENT_STREAM
from toolwire.testing._expect import check_expected
from toolwire.testing._kept import KeptStream, KeptStreams
from toolwire.testing._parse import BadRequest, parse_request
from toolwire.testing._ratelimit import ServerRateLimit
from toolwire.testing._render import prompt_size, render
from toolwire.testing.encoders import Encoder, Reply
from toolwire.testing.scenario import (
    Fault,
    Scenario,
    ScenarioError,
    Turn,
)

__all__ = ["FAULT_HEADER", "Handler", "RecentRequests", "WireResponse", "render"]


FAULT_HEADER = "x-toolwire-fault"
"""Request header forcing a fault (a :class:`Fault` as JSON) on that one request."""


class WireResponse(Response):
    """Sends prepared chunks one by one, with delays, and can hang up mid-body."""

    def __init__(
        self,
        chunks: list[bytes],
        *,
        status: int,
        headers: dict[str, str],
        delay: float = 0.0,
        cut_after: int | None = None,
    ) -> None:
        # Response.__init__ would render a body and a Content-Length; the
        # headers here are complete as given.
        self.chunks = chunks
        self.status_code = status
        self.delay = delay
        self.cut_after = cut_after
        self.background = None
        self.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        sent = 0
        for n, chunk in enumerate(self.chunks):
            if n and self.delay:
                await anyio.sleep(self.delay)
            if self.cut_after is not None and sent + len(chunk) >= self.cut_after:
                part = chunk[: self.cut_after - sent]
                if part:
                    await send({"type": "http.response.body", "body": part, "more_body": True})
                # Returning without the final empty body makes uvicorn close the
                # connection: the client sees a truncated chunked body.
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            sent += len(chunk)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


_MAX_KEPT_STREAMS = 256
"""Streamed answers kept for continuations, at most (the oldest go first)."""

_MAX_COUNTED_BODIES = 10_000
"""Distinct request bodies whose attempts are counted (for faults), at most."""


MAX_KEPT_BODY_BYTES = 256 * 1024
"""A request body larger than this is kept in :attr:`EmulationServer.requests`
as ``{"toolwire_body_digest": sha256, "bytes": size}`` only."""


class RecentRequests(list[Any]):
    """A list that keeps only the latest ``limit`` items appended to it."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def append(self, item: Any) -> None:
        """Add ``item``, dropping the oldest beyond the limit."""
        super().append(item)
        if len(self) > self.limit:
            del self[: len(self) - self.limit]


class Handler:
    """The request handling shared by every route; holds the per-server state."""

    label = "emulation server"

    def __init__(
        self,
        scenario: Scenario,
        requests: list[Any],
        log: Callable[[str], None] | None,
        rate_limit: ServerRateLimit | None = None,
        kept: KeptStreams | None = None,
        continuations: list[Any] | None = None,
    ) -> None:
        self.scenario = scenario
        self.requests = requests
        self.log = log
        self.rate_limit = rate_limit
        self.kept = kept if kept is not None else KeptStreams(_MAX_KEPT_STREAMS)
        """The streams sent again after a cut (see :mod:`toolwire.testing._kept`)."""
        self.continuations = continuations if continuations is not None else []
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()

    @staticmethod
    def _attempts_key(path: str, body: bytes) -> str:
        return hashlib.sha256(path.encode() + b"\0" + body).hexdigest()

    def _attempt(self, key: str) -> int:
        """The number (from 0) of this attempt of the request ``key`` names."""
        with self.lock:
            attempt = self.attempts.pop(key, 0)
            self.attempts[key] = attempt + 1  # the newest last
            if len(self.attempts) > _MAX_COUNTED_BODIES:  # forget the oldest
                del self.attempts[next(iter(self.attempts))]
        return attempt

    def _record(self, body: bytes) -> None:
        if len(body) > MAX_KEPT_BODY_BYTES:  # a digest: a crowd of uploads holds nothing
            digest = hashlib.sha256(body).hexdigest()
            self.requests.append({"toolwire_body_digest": digest, "bytes": len(body)})
            return
        try:
            self.requests.append(jsonio.loads(body))
        except ValueError:
            self.requests.append(body.decode("utf-8", "replace"))

    @staticmethod
    def _headers(encoder: Encoder, media_type: str, request_seed: str) -> dict[str, str]:
        rid = hashlib.sha256(request_seed.encode()).hexdigest()[:24]
        name = wire_dialect(encoder.dialect).request_id_header
        return {"content-type": media_type, name: f"req_{rid}"}

    def _error(
        self,
        encoder: Encoder,
        status: int,
        message: str,
        *,
        retry_after: float | None = None,
        seed: str = "",
    ) -> WireResponse:
        body = encoder.dumps_body(encoder.error_body(status, message))
        headers = self._headers(encoder, encoder.json_media_type, seed or message)
        headers["content-length"] = str(len(body))
        if retry_after is not None:
            seconds = int(retry_after) if float(retry_after).is_integer() else retry_after
            headers["retry-after"] = str(seconds)
            headers["retry-after-ms"] = str(round(retry_after * 1000))
        return WireResponse([body], status=status, headers=headers)

    def _log(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    async def replay(self, request: Request) -> Response:
        """Every request gets the recorded bytes."""
        self._record(await request.body())
        path = self.scenario.replay
        assert path is not None
        data = path.read_bytes()
        media = "text/event-stream; charset=utf-8"
        stripped = data.lstrip()
        if stripped.startswith(b"["):
            media = "application/json; charset=UTF-8"
        elif stripped.startswith(b"{"):
            media = "application/x-ndjson"
        elif data.startswith(b"\x00"):  # an AWS event stream's first length
            media = EVENT_STREAM
        self._log(f"{request.method} {request.url.path} 200 replay {path.name}")
        return WireResponse(
            [data], status=200, headers={"content-type": media, "content-length": str(len(data))}
        )

    async def handle(
        self,
        request: Request,
        dialect: str,
        encoder: Encoder,
        *,
        model: str | None = None,
        stream: bool | None = None,
    ) -> Response:
        """Answer one request of ``dialect``."""
        body = await request.body()
        self._record(body)
        rate = self.rate_limit
        if rate is not None:
            wait = rate.admit(len(body))
            if wait > 0:
                self._log(f"POST {request.url.path} 429 rate limit")
                refused = self._error(
                    encoder, 429, _DEFAULT_MESSAGES[429], retry_after=round(wait, 3)
                )
                refused.headers.update(rate.headers(dialect))
                return refused
        response = await self._handle(request, dialect, encoder, body, model=model, stream=stream)
        if rate is not None:
            response.headers.update(rate.headers(dialect))
        return response

    async def _handle(
        self,
        request: Request,
        dialect: str,
        encoder: Encoder,
        body: bytes,
        *,
        model: str | None,
        stream: bool | None,
    ) -> Response:
        path = request.url.path
        attempts_key = self._attempts_key(path, body)
        attempt = self._attempt(attempts_key)
        seed = f"{path}:{attempt}:{hashlib.sha256(body).hexdigest()}"
        header = request.headers.get(FAULT_HEADER)
        forced: Fault | None = None
        if header is not None:
            try:
                forced = Fault.model_validate(jsonio.loads(header))
            except (jsonio.JSONDecodeError, ValidationError) as exc:
                self._log(f"POST {path} 400 bad {FAULT_HEADER} header")
                return self._error(encoder, 400, f"invalid {FAULT_HEADER} header: {exc}")
        try:
            parsed = parse_request(dialect, body, model=model, stream=stream)
            turn = self.scenario.turn_for(
                parsed.assistant_turns, last_results_have_error=parsed.latest_has_error
            )
            check_expected(turn.expect, parsed.media, parsed.assistant_turns + 1)
            reply = render(turn, parsed, input_tokens=prompt_size(body) // 4)
        except (BadRequest, ScenarioError) as exc:
            message = exc.message
            if isinstance(exc, ScenarioError):  # the script, not the request, is at odds
                message = f"scenario {self.scenario.name!r} cannot answer this request: {message}"
            self._log(f"POST {path} 400 {message}")
            return self._error(encoder, 400, message, seed=seed)
        fault = forced
        if fault is None and attempt < len(turn.faults):
            fault = turn.faults[attempt]
        where = f"turn {parsed.assistant_turns + 1}, attempt {attempt + 1}"

        def log(outcome: str) -> None:
            self._log(f"POST {path} {outcome} ({where})")

        if reply.request.stream:
            self._keep(encoder, reply, turn, attempts_key)
        return self._answer(encoder, reply, turn, fault, seed=seed, log=log)

    def _keep(self, encoder: Encoder, reply: Reply, turn: Turn, attempts_key: str) -> None:
        """Keep a stream the provider keeps (the encoder's ``stream_key``)
        for its resumptions."""
        stream_id = encoder.stream_key(reply)
        if stream_id is not None:
            ids = tuple(encoder.event_id(frame) for frame in encoder.stream(reply))
            chunks = tuple(self._stream_chunks(encoder, reply, None))
            self.kept.keep(stream_id, KeptStream(chunks, ids, reply, attempts_key, turn))

    async def continuation(
        self, request: Request, encoder: Encoder, stream_id: str, event_id: str | None
    ) -> Response:
        """A kept stream again, from the event after ``event_id`` (the first
        when ``None``), or its whole answer without ``stream=true``: one more
        attempt of the request that started it."""
        kept = self.kept.get(stream_id)
        seed = f"resume:{stream_id}"
        path = request.url.path
        if kept is None:
            self._log(f"GET {path} 404 no such stream")
            return self._error(encoder, 404, f"no stream {stream_id[:80]!r} kept", seed=seed)
        after = kept.after(event_id)
        if after is None:
            self._log(f"GET {path} 400 no such event")
            message = f"no event {str(event_id)[:80]!r} in stream {stream_id[:80]!r}"
            return self._error(encoder, 400, message, seed=seed)
        streamed = request.query_params.get("stream") == "true"
        if streamed:  # a continuation (a whole answer read is not)
            self.continuations.append({"stream_id": stream_id, "after": after})
        attempt = self._attempt(kept.attempts_key)
        fault = kept.turn.faults[attempt] if attempt < len(kept.turn.faults) else None
        if fault is not None and fault.status is not None:
            self._log(f"GET {path} {fault.status} fault")
            message = fault.message or _DEFAULT_MESSAGES.get(fault.status, "Injected server error.")
            return self._error(encoder, fault.status, message, seed=seed)
        if not streamed:
            try:
                data = encoder.dumps_body(encoder.body(kept.reply))
            except ValueError as exc:
                self._log(f"GET {path} 500 {exc}")
                return self._error(encoder, 500, str(exc), seed=seed)
            headers = self._headers(encoder, encoder.json_media_type, seed)
            headers["content-length"] = str(len(data))
            self._log(f"GET {path} 200 json")
            return WireResponse([data], status=200, headers=headers)
        chunks = list(kept.chunks[after + 1 :])
        headers = self._headers(encoder, encoder.stream_media_type, seed)
        headers["cache-control"] = "no-cache"
        self._log(f"GET {path} 200 stream after event {after}" + (" with fault" if fault else ""))
        return WireResponse(
            chunks,
            status=200,
            headers=headers,
            delay=kept.turn.delay,
            cut_after=cut_at(chunks, fault),
        )

    def _answer(
        self,
        encoder: Encoder,
        reply: Reply,
        turn: Turn,
        fault: Fault | None,
        *,
        seed: str,
        log: Callable[[str], None],
    ) -> Response:
        """The answer to a request understood: the scripted turn, faults applied;
        ``log`` is told the outcome."""
        if fault is not None and fault.status is not None:
            log(f"{fault.status} fault")
            message = fault.message or _DEFAULT_MESSAGES.get(fault.status, "Injected server error.")
            return self._error(
                encoder, fault.status, message, retry_after=fault.retry_after, seed=seed
            )
        delay = turn.delay
        if fault is not None and fault.slow_chunk_delay is not None:
            delay = fault.slow_chunk_delay
        if reply.request.stream:
            chunks = self._stream_chunks(encoder, reply, fault)
            headers = self._headers(encoder, encoder.stream_media_type, seed)
            headers["cache-control"] = "no-cache"
        else:
            if fault is not None and fault.error_event is not None:
                # A non-streaming answer has no room for an event: the error
                # becomes the HTTP answer.
                status = int(fault.error_event.get("status", 500))
                message = str(fault.error_event.get("message", "Injected server error."))
                log(f"{status} fault")
                return self._error(encoder, status, message, seed=seed)
            try:
                data = encoder.dumps_body(encoder.body(reply))
            except ValueError as exc:
                log(f"500 {exc}")
                return self._error(encoder, 500, str(exc), seed=seed)
            if fault is not None and fault.malformed_json:
                data = data[: len(data) // 2]
            chunks = [data]
            headers = self._headers(encoder, encoder.json_media_type, seed)
            if cut_at(chunks, fault) is None:
                headers["content-length"] = str(len(data))
        cut_after = cut_at(chunks, fault)
        kind = "stream" if reply.request.stream else "json"
        log(f"200 {kind}" if fault is None else f"200 {kind} with fault")
        return WireResponse(chunks, status=200, headers=headers, delay=delay, cut_after=cut_after)

    @staticmethod
    def _stream_chunks(encoder: Encoder, reply: Reply, fault: Fault | None) -> list[bytes]:
        frames = encoder.stream(reply)
        broken: int | None = None
        if fault is not None and fault.error_event is not None:
            at = fault.at_chunk if fault.at_chunk is not None else len(frames) // 2
            at = min(at, len(frames))
            frames = [*frames[:at], encoder.error_frame(dict(fault.error_event), at)]
        if fault is not None and fault.malformed_json:
            # Never break the [DONE] marker or the ping: they are not JSON objects.
            candidates = [i for i, f in enumerate(frames) if f.raw is None]
            at = fault.at_chunk if fault.at_chunk is not None else len(frames) // 2
            broken = min(candidates, key=lambda i: abs(i - at)) if candidates else None
        chunks = [encoder.frame(f, i, broken=i == broken) for i, f in enumerate(frames)]
        trailer = encoder.trailer()
        if trailer:
            chunks[-1] += trailer
        return chunks


def cut_at(chunks: list[bytes], fault: Fault | None) -> int | None:
    """After how many body bytes ``fault`` cuts the connection (``None``: it does not)."""
    if fault is None:
        return None
    if fault.cut_at_fraction is not None:
        return int(sum(len(chunk) for chunk in chunks) * fault.cut_at_fraction)
    return fault.cut_after_bytes


_DEFAULT_MESSAGES = {
    400: "Invalid request.",
    401: "Invalid API key.",
    404: "Not found.",
    429: "Rate limit reached for requests. Please try again shortly.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The service is temporarily overloaded.",
    529: "Overloaded",
}
