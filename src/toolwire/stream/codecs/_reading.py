"""Reading a request body of any dialect: the helpers the emulation server's
readers and the bridge's share.

Request bodies come from arbitrary clients: every shape error becomes a
:class:`~toolwire.errors.BadRequest` with a readable message (the servers
answer it with HTTP 400). The media a request carries are read here too, in
each dialect's own shape: :func:`media_kind` names the kind of a content
block, :func:`read_part` rebuilds its :class:`~toolwire.Image`,
:class:`~toolwire.Document` or :class:`~toolwire.Audio`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from toolwire.content import Audio, ContentItem, ContentPart, Document, Image
from toolwire.errors import BadRequest, ContentError
from toolwire.stream import jsonio

__all__ = [
    "as_list",
    "as_object",
    "content_of",
    "media_kind",
    "model_of",
    "read_part",
    "text_of",
]


def as_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRequest(f"{where} must be an object")
    return value


def as_list(value: Any, where: str) -> list[Any]:
    """A JSON array (``None``, an absent field, reads as empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRequest(f"{where} must be an array")
    return value


def model_of(body: Mapping[str, Any], given: str | None = None) -> str:
    """The model a request names (``given`` when its URL names it)."""
    model = given if given is not None else body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' must be a non-empty string")
    return model


def text_of(content: Any) -> str:
    """The text of a message content: a string, or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return jsonio.dumps(content)


_TYPED_MEDIA = {
    "image_url": "images",  # Chat Completions
    "input_image": "images",  # Responses
    "image": "images",  # Anthropic
    "input_audio": "audio",  # Chat Completions
    "file": "documents",  # Chat Completions
    "input_file": "documents",  # Responses
    "document": "documents",  # Anthropic
}
_KEYED_MEDIA = {"image": "images", "document": "documents", "audio": "audio"}  # Converse


def media_kind(value: Mapping[str, Any]) -> str | None:
    """``images``, ``documents`` or ``audio`` for a content block that carries
    media in any dialect's shape; ``None`` for any other block."""
    kind = value.get("type")
    if isinstance(kind, str) and kind in _TYPED_MEDIA:
        return _TYPED_MEDIA[kind]
    for key in ("inlineData", "fileData"):  # Gemini
        inner = value.get(key)
        if isinstance(inner, dict) and isinstance(inner.get("mimeType"), str):
            media = inner["mimeType"].split("/", 1)[0]
            return {"image": "images", "audio": "audio"}.get(media, "documents")
    for key, name in _KEYED_MEDIA.items():
        inner = value.get(key)
        if len(value) == 1 and isinstance(inner, dict) and "source" in inner:
            return name
    return None


_CLASSES: dict[str, type[ContentPart]] = {"images": Image, "documents": Document, "audio": Audio}


def _decoded(raw: Any, where: str) -> bytes:
    if not isinstance(raw, str):
        raise BadRequest(f"{where} must be base64 text")
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequest(f"{where} is not base64") from exc


def _from_url(cls: type[ContentPart], url: Any, media: Any, where: str) -> ContentPart:
    """A part from a ``data:`` URL (its bytes) or a URL the provider fetches."""
    if not isinstance(url, str) or not url:
        raise BadRequest(f"{where} needs a URL")
    if url.startswith("data:"):
        head, sep, data = url[5:].partition(",")
        given, _, encoding = head.partition(";")
        if not sep or encoding != "base64":
            raise BadRequest(f"{where} must be a base64 data: URL")
        return cls(media_type=given or str(media), data=_decoded(data, where))
    if not isinstance(media, str):
        return cls.from_url(url)
    return cls(media_type=media, url=url)


def _anthropic_part(cls: type[ContentPart], block: Mapping[str, Any], where: str) -> ContentPart:
    source = as_object(block.get("source"), f"{where}.source")
    kind = source.get("type")
    if kind == "base64":
        media = source.get("media_type")
        return cls(media_type=str(media), data=_decoded(source.get("data"), f"{where}.data"))
    if kind == "url":
        return _from_url(cls, source.get("url"), None, where)
    if kind == "text":  # a plain-text document
        return cls(media_type="text/plain", data=str(source.get("data") or "").encode())
    raise BadRequest(f"{where}.source.type {kind!r} is not one the bridge reads")


def _typed_part(block: Mapping[str, Any], kind: str, where: str) -> ContentPart:
    cls = _CLASSES[_TYPED_MEDIA[kind]]
    if kind in ("image", "document"):
        return _anthropic_part(cls, block, where)
    if kind == "image_url":
        inner = block.get("image_url")
        url = inner.get("url") if isinstance(inner, Mapping) else inner
        return _from_url(cls, url, None, where)
    if kind == "input_image":
        return _from_url(cls, block.get("image_url"), None, where)
    if kind == "input_audio":
        inner = as_object(block.get("input_audio"), f"{where}.input_audio")
        media = f"audio/{inner.get('format') or 'wav'}"
        return cls(media_type=media, data=_decoded(inner.get("data"), f"{where}.data"))
    inner = block.get("file") if kind == "file" else block
    inner = as_object(inner, where)
    name = inner.get("filename") if isinstance(inner.get("filename"), str) else None
    if isinstance(inner.get("file_url"), str):
        return cls.from_url(inner["file_url"], media_type="application/pdf")
    part = _from_url(cls, inner.get("file_data"), "application/pdf", where)
    return cls(media_type=part.media_type, data=part.data, name=name)


def read_part(block: Mapping[str, Any], where: str) -> ContentPart | None:
    """The part a content block carries, in any dialect's shape (``None``
    for a block that carries no media).

    Raises:
        BadRequest: a media block that is malformed, or of a media type
            toolwire does not send.
    """
    kind = media_kind(block)
    if kind is None:
        return None
    try:
        typed = block.get("type")
        if isinstance(typed, str) and typed in _TYPED_MEDIA:
            return _typed_part(block, typed, where)
        inline, linked = block.get("inlineData"), block.get("fileData")
        if isinstance(inline, Mapping):
            data = _decoded(inline.get("data"), f"{where}.inlineData.data")
            return _CLASSES[kind](media_type=str(inline.get("mimeType")), data=data)
        if isinstance(linked, Mapping):
            uri = linked.get("fileUri")
            return _from_url(_CLASSES[kind], uri, linked.get("mimeType"), where)
    except ContentError as exc:
        raise BadRequest(f"{where}: {exc}") from exc
    return None  # a Converse block: the bridge serves no Converse


def content_of(blocks: Any, where: str) -> tuple[ContentItem, ...]:
    """A message content as text and parts, in order (a string: itself)."""
    if isinstance(blocks, str):
        return (blocks,)
    items: list[ContentItem] = []
    for i, block in enumerate(as_list(blocks, where)):
        if isinstance(block, str):
            items.append(block)
        elif isinstance(block, Mapping):
            part = read_part(block, f"{where}[{i}]")
            if part is not None:
                items.append(part)
            elif isinstance(block.get("text"), str):
                items.append(block["text"])
    return tuple(items)
