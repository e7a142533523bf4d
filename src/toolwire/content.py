"""Content parts: images, documents and audio in prompts and tool results.

Theory of operation: a part is a frozen value holding either its bytes or a
URL, and its media type, checked strictly when it is made (a type toolwire
does not know is refused, never guessed into another). Messages hold
sequences of text (``str``) and parts (:data:`ContentItem`); each dialect's
request encoder writes them in its own native shape, or refuses with
:class:`~toolwire.errors.ContentNotSupported` before anything is sent.

A part's ``repr`` never shows its bytes: ``Image(image/png, 34 KB,
sha256:ab12cd34…)``. ``to_dict()``/:func:`part_from_dict` give the
journal's JSON shape, the bytes as base64.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, TypeAlias, TypeVar

from toolwire.errors import ContentError

__all__ = [
    "AUDIO_TYPES",
    "DOCUMENT_TYPES",
    "GENERATED_IMAGE",
    "IMAGE_TYPES",
    "Audio",
    "CachePoint",
    "ContentItem",
    "ContentPart",
    "Document",
    "Image",
    "UrlFetch",
    "cache_points_in",
    "content_from_dicts",
    "content_parts",
    "content_text",
    "content_to_dicts",
    "is_part",
    "normalize_content",
    "output_part",
    "part_from_dict",
    "part_summary",
    "state_media",
    "with_state_data",
]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image media types toolwire sends (the ones every provider takes)."""
DOCUMENT_TYPES = frozenset(
    {"application/pdf", "text/plain", "text/markdown", "text/csv", "text/html"}
)
"""PDF and text files."""
AUDIO_TYPES = frozenset(
    {"audio/wav", "audio/mpeg", "audio/ogg", "audio/flac", "audio/aac", "audio/webm"}
)
"""The audio media types toolwire sends."""

_ALIASES = {
    "image/jpg": "image/jpeg",
    "audio/mp3": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "text/x-markdown": "text/markdown",
}
"""Spellings of a media type that mean one toolwire knows."""

_SUFFIXES = {".md": "text/markdown", ".webp": "image/webp", ".flac": "audio/flac"}
"""Suffixes the platform's ``mimetypes`` table may lack."""


def _an(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def part_summary(media_type: str, size: int, sha256: str) -> str:
    """A part as people read it: ``image/png 34 KB sha256:ab12cd34…``."""
    return f"{media_type} {_size(size)} sha256:{sha256[:8]}…"


@dataclass(frozen=True, slots=True, kw_only=True)
class UrlFetch:
    """How toolwire may fetch a part's URL itself, for a provider that
    fetches none (``Image.from_url(url, fetch=True)`` takes the defaults).

    The fetch is bounded: https only unless ``allow_http``, at most
    ``max_bytes``, within ``timeout`` seconds (redirects included, each one
    checked again), the served media type must be the part's, and a host
    that is a loopback, private, link-local or reserved address is refused
    unless ``allow_private`` (it is checked as resolved and as connected).
    """

    max_bytes: int = 20 * 1024 * 1024
    timeout: float = 10.0
    allow_http: bool = False
    allow_private: bool = False
    max_redirects: int = 3

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or not 0 < self.timeout <= 300 or self.max_redirects < 0:
            raise ContentError("UrlFetch needs max_bytes >= 1, 0 < timeout <= 300, redirects >= 0")

    def to_dict(self) -> dict[str, Any]:
        """The journal's JSON shape."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> UrlFetch:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            ContentError: not a fetch policy toolwire wrote.
        """
        try:
            return cls(**data)
        except TypeError as exc:
            raise ContentError(f"not a URL fetch policy: {data!r:.80}") from exc


P = TypeVar("P", bound="_Part")


@dataclass(frozen=True, slots=True, repr=False)
class _Part:
    """What the three kinds of part share (see :class:`Image`)."""

    media_type: str
    """The media type, checked against the kind's list (``image/png``...)."""
    data: bytes | None = None
    """The bytes, or ``None`` for a part given by URL."""
    url: str | None = None
    """The URL, or ``None`` for a part given by its bytes."""
    name: str | None = None
    """A file name, for the providers that want one (Bedrock documents,
    OpenAI files); defaults to the file's when made ``from_path``."""
    fetch: UrlFetch | None = None
    """For a part by URL: toolwire fetches it and sends its bytes (a run
    does, before the prompt or the tool result is journaled); ``None``: the
    URL is sent as it is, where the provider fetches URLs."""

    KIND: ClassVar[str] = ""
    TYPES: ClassVar[frozenset[str]] = frozenset()

    def __post_init__(self) -> None:
        kind = type(self).KIND
        media = _ALIASES.get(self.media_type.lower(), self.media_type.lower())
        if media not in type(self).TYPES:
            known = ", ".join(sorted(type(self).TYPES))
            raise ContentError(
                f"{self.media_type!r} is not {_an(kind)} media type toolwire sends ({known})"
            )
        object.__setattr__(self, "media_type", media)
        if self.fetch is not None and (self.url is None or not isinstance(self.fetch, UrlFetch)):
            raise ContentError(f"{_an(kind)} part's fetch is a UrlFetch, and only for a URL")
        if (self.data is None) == (self.url is None):
            raise ContentError(f"{_an(kind)} part holds either bytes or a URL, not both or neither")
        data: object = self.data
        if data is not None and not isinstance(data, bytes):
            if not isinstance(data, (bytearray, memoryview)):
                raise ContentError(
                    f"{_an(kind)} part's data must be bytes, got {type(data).__name__}"
                )
            object.__setattr__(self, "data", bytes(data))
        if self.url is not None and not self.url.startswith(
            ("https://", "http://", "gs://", "s3://")
        ):
            raise ContentError(f"{_an(kind)} URL must be https://, http://, gs:// or s3://")

    @property
    def kind(self) -> str:
        """``image``, ``document`` or ``audio``."""
        return type(self).KIND

    @property
    def size(self) -> int:
        """The number of bytes (0 for a part given by URL)."""
        return len(self.data) if self.data is not None else 0

    @property
    def sha256(self) -> str:
        """The hex sha256 of the bytes (of the URL for a part given by URL)."""
        raw = self.data if self.data is not None else (self.url or "").encode()
        return hashlib.sha256(raw).hexdigest()

    def base64(self) -> str:
        """The bytes as base64 text.

        Raises:
            ContentError: the part is a URL.
        """
        if self.data is None:
            raise ContentError(f"this {self.kind} is a URL, it has no bytes to encode")
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """``data:<media type>;base64,...`` (or the URL itself)."""
        return (
            self.url if self.url is not None else f"data:{self.media_type};base64,{self.base64()}"
        )

    def describe(self) -> str:
        """A short line for people: ``image/png 34 KB sha256:ab12cd34…``."""
        if self.url is not None:
            return f"{self.media_type} {self.url}"
        return part_summary(self.media_type, self.size, self.sha256)

    def __repr__(self) -> str:
        name = f", name={self.name!r}" if self.name else ""
        return f"{type(self).__name__}({self.describe()}{name})"

    @classmethod
    def from_bytes(cls: type[P], data: bytes, *, media_type: str, name: str | None = None) -> P:
        """A part made of ``data``.

        Raises:
            ContentError: an unknown media type, or ``data`` not bytes.
        """
        return cls(media_type=media_type, data=data, name=name)

    @classmethod
    def from_path(
        cls: type[P], path: str | os.PathLike[str], *, media_type: str | None = None
    ) -> P:
        """A part made of a file's bytes; the media type comes from the
        file's suffix unless given.

        Raises:
            ContentError: the file cannot be read, or its type is unknown.
        """
        text = os.fspath(path)
        guessed = media_type or _SUFFIXES.get(os.path.splitext(text)[1].lower())
        guessed = guessed or mimetypes.guess_type(text)[0]
        if guessed is None:
            raise ContentError(f"cannot tell the media type of {text!r}: give media_type=")
        try:
            with open(text, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise ContentError(f"cannot read {text!r}: {exc.strerror or exc}") from exc
        return cls(media_type=guessed, data=data, name=os.path.basename(text))

    @classmethod
    def from_url(
        cls: type[P],
        url: str,
        *,
        media_type: str | None = None,
        fetch: bool | UrlFetch = False,
    ) -> P:
        """A part the provider fetches from ``url`` (dialects whose API
        fetches no URLs refuse it with :class:`~toolwire.ContentNotSupported`),
        or, with ``fetch``, one toolwire fetches itself and sends as bytes
        (``True``: the bounds of :class:`UrlFetch`'s defaults).

        Raises:
            ContentError: an unknown media type, or not an http(s)/gs/s3 URL.
        """
        guessed = media_type or mimetypes.guess_type(url.split("?", 1)[0])[0]
        if guessed is None:
            raise ContentError(f"cannot tell the media type of {url!r}: give media_type=")
        policy = UrlFetch() if fetch is True else fetch or None
        return cls(media_type=guessed, url=url, fetch=policy)

    def to_dict(self) -> dict[str, Any]:
        """The journal's JSON shape (bytes as base64)."""
        out: dict[str, Any] = {"type": self.kind, "media_type": self.media_type}
        if self.data is not None:
            out["data"] = self.base64()
        else:
            out["url"] = self.url
        if self.name is not None:
            out["name"] = self.name
        if self.fetch is not None:
            out["fetch"] = self.fetch.to_dict()
        return out


@dataclass(frozen=True, slots=True, repr=False)
class Image(_Part):
    """An image: PNG, JPEG, GIF or WebP.

    ``Image.from_path("chart.png")``, ``Image.from_bytes(png,
    media_type="image/png")``, ``Image.from_url("https://...")``.
    """

    KIND: ClassVar[str] = "image"
    TYPES: ClassVar[frozenset[str]] = IMAGE_TYPES


@dataclass(frozen=True, slots=True, repr=False)
class Document(_Part):
    """A document: a PDF or a text file (plain, Markdown, CSV, HTML)."""

    KIND: ClassVar[str] = "document"
    TYPES: ClassVar[frozenset[str]] = DOCUMENT_TYPES


@dataclass(frozen=True, slots=True, repr=False)
class Audio(_Part):
    """A sound clip: WAV, MP3, Ogg, FLAC, AAC or WebM."""

    KIND: ClassVar[str] = "audio"
    TYPES: ClassVar[frozenset[str]] = AUDIO_TYPES


CACHE_TTLS = ("5m", "1h")


@dataclass(frozen=True, slots=True)
class CachePoint:
    """A prompt-cache breakpoint: everything before it may be cached.

    Put one in a user message's content (``UserMessage(content=[long_text,
    CachePoint(ttl="1h")])``), after the system prompt (``Agent(system=[text,
    CachePoint()])``) or on the tools (``Agent(cache_tools=CachePoint())``).
    Anthropic gets ``cache_control`` on the block before it, Bedrock Converse a
    ``cachePoint`` block; OpenAI and Gemini cache implicitly, so it is a
    no-op there, except that ``key``/``retention`` are sent as OpenAI's
    ``prompt_cache_key``/``prompt_cache_retention``. See ``docs/content.md``.

    Raises:
        ContentError: a ``ttl`` other than ``"5m"`` or ``"1h"``.
    """

    ttl: str = "5m"
    """How long the cache entry lives: ``"5m"`` or ``"1h"`` (priced apart)."""
    key: str | None = None
    """OpenAI's ``prompt_cache_key`` (requests with one key share a cache)."""
    retention: str | None = None
    """OpenAI's ``prompt_cache_retention`` (``"in_memory"`` or ``"24h"``)."""

    def __post_init__(self) -> None:
        if self.ttl not in CACHE_TTLS:
            raise ContentError(f"a cache point's ttl is '5m' or '1h', not {self.ttl!r}")

    def to_dict(self) -> dict[str, Any]:
        """The journal's JSON shape: ``{"type": "cache_point", "ttl": ...}``."""
        out: dict[str, Any] = {"type": "cache_point", "ttl": self.ttl}
        if self.key is not None:
            out["key"] = self.key
        if self.retention is not None:
            out["retention"] = self.retention
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CachePoint:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            ContentError: not a cache point toolwire wrote.
        """
        ttl, key, retention = data.get("ttl", "5m"), data.get("key"), data.get("retention")
        if not isinstance(ttl, str) or not all(
            v is None or isinstance(v, str) for v in (key, retention)
        ):
            raise ContentError(f"not a cache point: {dict(data)!r:.80}")
        return cls(ttl=ttl, key=key, retention=retention)


ContentPart: TypeAlias = "Image | Document | Audio"
"""Any part that is not text."""
ContentItem: TypeAlias = "str | Image | Document | Audio | CachePoint"
"""One item of a message's content: text, a part, or a :class:`CachePoint`."""

_KINDS: dict[str, type[Image] | type[Document] | type[Audio]] = {
    "image": Image,
    "document": Document,
    "audio": Audio,
}


def is_part(value: object) -> bool:
    """Whether ``value`` is an :class:`Image`, :class:`Document` or :class:`Audio`."""
    return isinstance(value, (Image, Document, Audio))


def normalize_content(items: Iterable[Any]) -> tuple[ContentItem, ...]:
    """``items`` as a tuple of text and parts.

    Raises:
        ContentError: an item that is neither text nor a part.
    """
    out: list[ContentItem] = []
    for item in items:
        if not isinstance(item, (str, CachePoint)) and not is_part(item):
            raise ContentError(
                "message content holds text, Image/Document/Audio parts and CachePoints, "
                f"got {type(item).__name__}"
            )
        out.append(item)
    return tuple(out)


def content_text(items: Iterable[ContentItem]) -> str:
    """The text items of a content sequence, joined by newlines."""
    return "\n".join(item for item in items if isinstance(item, str))


def content_parts(items: Iterable[ContentItem]) -> tuple[ContentPart, ...]:
    """The parts (not the text, nor cache points) of a content sequence."""
    return tuple(item for item in items if isinstance(item, (Image, Document, Audio)))


def cache_points_in(items: Iterable[ContentItem]) -> tuple[CachePoint, ...]:
    """The :class:`CachePoint` items of a content sequence."""
    return tuple(item for item in items if isinstance(item, CachePoint))


def part_from_dict(data: Mapping[str, Any]) -> ContentPart:
    """Rebuild a part from its ``to_dict()`` shape.

    Raises:
        ContentError: not a part toolwire wrote.
    """
    kind = data.get("type") if isinstance(data, Mapping) else None
    cls = _KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ContentError(f"not a content part: {data!r:.80}")
    media, raw, url, name = (
        data.get("media_type"),
        data.get("data"),
        data.get("url"),
        data.get("name"),
    )
    if not isinstance(media, str) or (name is not None and not isinstance(name, str)):
        raise ContentError("a content part needs a string 'media_type' (and 'name')")
    if isinstance(raw, str):
        try:
            decoded = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ContentError("a content part's 'data' is not base64") from exc
        return cls(media_type=media, data=decoded, name=name)
    if isinstance(url, str):
        fetch = data.get("fetch")
        policy = UrlFetch.from_dict(fetch) if fetch is not None else None
        return cls(media_type=media, url=url, name=name, fetch=policy)
    raise ContentError("a content part needs base64 'data' or a 'url'")


def content_to_dicts(items: Iterable[ContentItem]) -> list[dict[str, Any]]:
    """A content sequence in the journal's JSON shape."""
    return [
        {"type": "text", "text": item} if isinstance(item, str) else item.to_dict()
        for item in items
    ]


def content_from_dicts(data: Any) -> tuple[ContentItem, ...]:
    """Rebuild :func:`content_to_dicts` output.

    Raises:
        ContentError: not a list of text and parts.
    """
    if not isinstance(data, list):
        raise ContentError("message content must be a list")
    out: list[ContentItem] = []
    for item in data:
        if isinstance(item, Mapping) and item.get("type") == "text":
            text = item.get("text")
            if not isinstance(text, str):
                raise ContentError("a text item needs a string 'text'")
            out.append(text)
        elif isinstance(item, Mapping) and item.get("type") == "cache_point":
            out.append(CachePoint.from_dict(item))
        else:
            out.append(part_from_dict(item))
    return tuple(out)


GENERATED_IMAGE = "generated_image"
"""The provider-state item of an image a model made (a Responses
``image_generation_call`` result): ``{"type", "id", "media_type", "data"}``."""


def state_media(item: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """The media type and data, as they are, of a provider-state item holding
    media the model made (see :func:`output_part`); ``None`` for another."""
    if item.get("type") == GENERATED_IMAGE:
        return item.get("media_type"), item.get("data")
    part = item.get("part") if item.get("type") == "part" else None
    inline = part.get("inlineData") if isinstance(part, Mapping) else None
    return (inline.get("mimeType"), inline.get("data")) if isinstance(inline, Mapping) else None


def with_state_data(item: Mapping[str, Any], data: Any) -> dict[str, Any]:
    """A copy of ``item`` (:func:`state_media` reads it) with ``data`` in its media's."""
    if item.get("type") == GENERATED_IMAGE:
        return {**item, "data": data}
    part = item["part"]
    return {**item, "part": {**part, "inlineData": {**part["inlineData"], "data": data}}}


def output_part(item: Mapping[str, Any]) -> ContentPart | None:
    """The part a provider-state item holds, when it is media the model
    made: a Gemini ``inlineData`` part, or a :data:`GENERATED_IMAGE`."""
    media, data = state_media(item) or (None, None)
    if not isinstance(media, str) or not isinstance(data, str):
        return None
    cls = Image if media.startswith("image/") else Audio if media.startswith("audio/") else Document
    try:
        return cls(media_type=media, data=base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError, ContentError):
        return None  # a type toolwire does not send: the item stays as it came
