"""What each dialect does with content parts: which kinds and media types it
carries in a prompt and in a tool result, which it takes as URLs, and the
provider's documented limits, checked before a request is sent.

Theory of operation: each request encoder declares one :class:`ContentSupport`
and asks it, for every part it is about to write, :meth:`ContentSupport.check`
(a :class:`~toolwire.errors.ContentNotSupported` naming the dialect, the
place and the part), then :meth:`ContentSupport.check_request` over the whole
conversation (a :class:`~toolwire.errors.ContentLimitExceeded` naming the
limit). Nothing is shrunk or dropped to fit. The table in ``docs/content.md``
is these declarations (a docs test checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from toolwire.content import (
    AUDIO_TYPES,
    DOCUMENT_TYPES,
    IMAGE_TYPES,
    CachePoint,
    ContentItem,
    ContentPart,
    content_parts,
)
from toolwire.errors import ContentLimitExceeded, ContentNotSupported
from toolwire.messages import Message, SystemMessage, ToolResultMessage, UserMessage

__all__ = [
    "MB",
    "PDF",
    "ContentLimits",
    "ContentSupport",
    "Place",
    "every",
    "message_parts",
    "openai_cache_fields",
    "split_cached",
    "split_text",
    "support_table",
    "with_carried_parts",
]

Place: TypeAlias = Literal["prompt", "tool_result"]
"""Where a part stands: in a user message, or in a tool's result."""

MB = 1024 * 1024
PDF = frozenset({"application/pdf"})
_ALL = {"image": IMAGE_TYPES, "document": DOCUMENT_TYPES, "audio": AUDIO_TYPES}


@dataclass(frozen=True, slots=True, kw_only=True)
class ContentLimits:
    """A provider's documented limits on the parts of one request."""

    part_bytes: Mapping[str, int] = field(default_factory=dict)
    """The largest part of each kind, in bytes (``{"image": 5 * MB}``)."""
    per_request: Mapping[str, int] = field(default_factory=dict)
    """The most parts of each kind one request may carry."""
    request_bytes: int | None = None
    """The most bytes of parts one request may carry."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContentSupport:
    """What one dialect carries, where, and how much."""

    dialect: str
    prompt: Mapping[str, frozenset[str]]
    """Kind -> the media types a user message carries natively."""
    tool_result: Mapping[str, frozenset[str]]
    """Kind -> the media types a tool result carries (natively, or, where
    :attr:`result_follow_up` says so, in a user message right after it)."""
    urls: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Kind -> the media types sent as a URL the provider fetches; a part by
    URL of any other kind or type is refused."""
    url_schemes: tuple[str, ...] = ("https://", "http://")
    """The URL schemes the provider fetches."""
    result_follow_up: bool = False
    """Tool messages carry text only: a result's parts go in a user message
    right after the results, naming the call (Chat Completions)."""
    limits: ContentLimits = field(default_factory=ContentLimits)

    def check(self, part: ContentPart, place: Place) -> None:
        """Refuse a part this dialect cannot carry in ``place``.

        Raises:
            ContentNotSupported: the kind, the media type or the URL.
        """
        table = self.prompt if place == "prompt" else self.tool_result
        where = "a prompt" if place == "prompt" else "a tool result"
        if part.media_type not in table.get(part.kind, frozenset()):
            taken = ", ".join(sorted(table.get(part.kind, ()))) or f"no {part.kind}"
            raise ContentNotSupported(
                f"{self.dialect} does not take {part.kind} {part.media_type} in {where} "
                f"(it takes {taken})",
                dialect=self.dialect,
                place=place,
                part=f"{part.kind} {part.media_type}",
            )
        if part.url is None:
            return
        fetched = part.media_type in self.urls.get(part.kind, frozenset())
        if not fetched or not part.url.startswith(self.url_schemes):
            schemes = " or ".join(s.rstrip("/:") for s in self.url_schemes)
            how = (
                "an agent run fetches it first, or toolwire.http.fetch.fetch_messages()"
                if part.fetch is not None
                else "give the bytes (from_bytes or from_path), or let toolwire fetch it "
                "(from_url(url, fetch=True))"
            )
            raise ContentNotSupported(
                f"{self.dialect} does not fetch {part.kind} {part.media_type} from a URL"
                + (f" (only {schemes} URLs)" if fetched else "")
                + f": {how}",
                dialect=self.dialect,
                place=place,
                part=f"{part.kind} from a URL",
            )

    def check_request(self, messages: Sequence[Message]) -> None:
        """Every part of the conversation allowed where it is, and within the
        provider's limits, before anything is sent.

        Raises:
            ContentNotSupported: a part the dialect cannot carry.
            ContentLimitExceeded: a limit passed (its name in the message).
        """
        counts: dict[str, int] = {}
        total = 0
        for place, part in message_parts(messages):
            self.check(part, place)
            largest = self.limits.part_bytes.get(part.kind)
            if largest is not None and part.size > largest:
                raise ContentLimitExceeded(
                    self.dialect, f"{part.kind}_bytes", maximum=largest, value=part.size
                )
            counts[part.kind] = counts.get(part.kind, 0) + 1
            total += part.size
        for kind, count in counts.items():
            most = self.limits.per_request.get(kind)
            if most is not None and count > most:
                raise ContentLimitExceeded(
                    self.dialect, f"{kind}s_per_request", maximum=most, value=count
                )
        most_bytes = self.limits.request_bytes
        if most_bytes is not None and total > most_bytes:
            raise ContentLimitExceeded(
                self.dialect, "content_bytes_per_request", maximum=most_bytes, value=total
            )


def every(kind: str) -> frozenset[str]:
    """Every media type toolwire knows of ``kind``."""
    return _ALL[kind]


def message_parts(messages: Iterable[Message]) -> list[tuple[Place, ContentPart]]:
    """Every part of a conversation, with the place it stands in."""
    out: list[tuple[Place, ContentPart]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.extend(("prompt", part) for part in message.parts)
        elif isinstance(message, ToolResultMessage):
            out.extend(("tool_result", part) for part in content_parts(message.parts))
    return out


def openai_cache_fields(messages: Iterable[Message]) -> dict[str, Any]:
    """``prompt_cache_key``/``prompt_cache_retention`` from the conversation's
    cache points (the last one that gives each wins); OpenAI caches prompts
    implicitly, so a point without them adds nothing."""
    out: dict[str, Any] = {}
    for message in messages:
        points: Iterable[CachePoint] = ()
        if isinstance(message, UserMessage):
            points = message.cache_points
        elif isinstance(message, SystemMessage) and message.cache is not None:
            points = (message.cache,)
        for point in points:
            if point.key is not None:
                out["prompt_cache_key"] = point.key
            if point.retention is not None:
                out["prompt_cache_retention"] = point.retention
    return out


def with_carried_parts(
    messages: Sequence[Message],
    encode: Callable[[Message], dict[str, Any]],
    follow_up: Callable[[Sequence[ToolResultMessage]], dict[str, Any]],
) -> list[dict[str, Any]]:
    """The messages of a dialect whose tool messages carry text only: each
    message as ``encode`` writes it, and after each run of tool results that
    hold parts, one user message (``follow_up``'s) that carries their parts,
    as such providers document."""
    out: list[dict[str, Any]] = []
    carried: list[ToolResultMessage] = []
    for message in messages:
        if carried and not isinstance(message, ToolResultMessage):
            out.append(follow_up(carried))
            carried = []
        out.append(encode(message))
        if isinstance(message, ToolResultMessage) and message.parts:
            carried.append(message)
    if carried:
        out.append(follow_up(carried))
    return out


def split_text(items: Sequence[ContentItem]) -> list[str | ContentPart]:
    """``items`` without empty text (the APIs refuse blank text blocks) and
    without cache points (a no-op where the provider caches implicitly)."""
    return [
        item
        for item in items
        if not isinstance(item, CachePoint) and (item or not isinstance(item, str))
    ]


def split_cached(items: Sequence[ContentItem]) -> list[ContentItem]:
    """``items`` without empty text, cache points kept in place."""
    return [item for item in items if not isinstance(item, str) or item]


def _cell(support: ContentSupport, table: Mapping[str, frozenset[str]], kind: str) -> str:
    types = sorted(table.get(kind, ()))
    if not types:
        return "—"
    text = ", ".join(t.split("/", 1)[1] for t in types)
    fetched = sorted(support.urls.get(kind, frozenset()) & set(types))
    if fetched:
        schemes = "/".join(s.split(":", 1)[0] for s in support.url_schemes)
        text += f"; {schemes} URL" + (
            "" if fetched == types else " (" + ", ".join(t.split("/", 1)[1] for t in fetched) + ")"
        )
    return text


def support_table(supports: Iterable[ContentSupport]) -> str:
    """The Markdown table of what each dialect carries where (docs/content.md)."""
    lines = [
        "| dialect | place | image | document | audio |",
        "|---|---|---|---|---|",
    ]
    for support in supports:
        for place, table in (("prompt", support.prompt), ("tool result", support.tool_result)):
            if place == "tool result" and support.result_follow_up:
                place = "tool result (a user message after it)"
            cells = " | ".join(
                _cell(support, table, kind) for kind in ("image", "document", "audio")
            )
            lines.append(f"| {support.dialect} | {place} | {cells} |")
    return "\n".join(lines) + "\n"
