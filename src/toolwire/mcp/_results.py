"""Pure mappings between MCP and toolwire: tool names, results, errors."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import TYPE_CHECKING, Any

from toolwire.content import Audio, ContentItem, Document, Image
from toolwire.errors import ContentError
from toolwire.stream import jsonio

if TYPE_CHECKING:  # pragma: no cover - the SDK is optional
    import mcp_types

_NAME_OK = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_NAME_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(mcp_name: str, *, prefix: str = "") -> str:
    """The toolwire name of an MCP tool: ``prefix + name``, made acceptable
    to every provider.

    Providers accept 1-64 letters, digits, ``_`` and ``-``, starting with a
    letter or ``_``; MCP also allows ``.`` and ``/``. Other characters become
    ``_``; a name that would still be too long keeps its first 55 characters
    and gets a short hash of the full name, so two long names stay distinct.

    Args:
        mcp_name: the tool's name on the server.
        prefix: prepended first (``"fs_"``), to keep two servers' tools apart.
    """
    wanted = prefix + mcp_name
    if _NAME_OK.fullmatch(wanted):
        return wanted
    name = _NAME_BAD_CHARS.sub("_", wanted) or "_"
    if not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        name = "_" + name
    if len(name) > 64:
        digest = hashlib.sha256(wanted.encode()).hexdigest()[:8]
        name = f"{name[:55]}_{digest}"
    return name


def _size(base64_data: str) -> int:
    """Decoded size of base64 text, without decoding it."""
    data = base64_data.strip()
    return max(len(data) * 3 // 4 - data[-2:].count("="), 0)


def _describe_block(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_size(block.data)} bytes]"
    if kind == "resource_link":
        mime = f", {block.mime_type}" if block.mime_type else ""
        return f"[resource link: {block.name} <{block.uri}>{mime}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text
        mime = f", {resource.mime_type}" if resource.mime_type else ""
        return f"[resource: <{resource.uri}>{mime}, {_size(resource.blob)} bytes]"
    # A content type newer than this code: say so rather than drop it.
    return f"[{kind or type(block).__name__} content]"


def result_content(result: mcp_types.CallToolResult) -> str:
    """The text a model gets for a successful ``tools/call`` result.

    ``structuredContent`` as JSON when the server sent it; otherwise the
    content blocks joined with newlines (non-text blocks described on one
    line each).

    Args:
        result: the SDK's ``CallToolResult``.
    """
    if result.structured_content is not None or "structured_content" in result.model_fields_set:
        return jsonio.dumps(result.structured_content)
    return "\n".join(_describe_block(block) for block in result.content)


_PART_TYPES: dict[str, type[Image] | type[Audio]] = {"image": Image, "audio": Audio}


def _part(block: Any) -> ContentItem:
    """A block as a content part when toolwire sends its kind and media type;
    otherwise its one-line description (never dropped)."""
    kind = getattr(block, "type", None)
    data: Any = None
    mime: Any = None
    cls: type[Image] | type[Audio] | type[Document] | None = None
    if kind in _PART_TYPES:
        data, mime, cls = block.data, block.mime_type, _PART_TYPES[kind]
    elif kind == "resource" and isinstance(getattr(block.resource, "blob", None), str):
        data, mime = block.resource.blob, block.resource.mime_type or ""
        cls = (
            Image if mime.startswith("image/") else Audio if mime.startswith("audio/") else Document
        )
    if cls is None or not isinstance(data, str) or not isinstance(mime, str):
        return _describe_block(block)
    try:
        raw = base64.b64decode(data, validate=True)
        return cls.from_bytes(raw, media_type=mime)
    except (binascii.Error, ValueError, ContentError):
        return _describe_block(block)


def result_parts(result: mcp_types.CallToolResult) -> list[ContentItem] | None:
    """A successful result's content as text and parts, when it holds an
    image, audio or an embedded resource toolwire can send as a part
    (``None`` otherwise: :func:`result_content` is its text). Text blocks
    stay text; blocks of media types toolwire does not send are described.

    Args:
        result: the SDK's ``CallToolResult``.
    """
    if result.structured_content is not None or "structured_content" in result.model_fields_set:
        return None
    items = [_part(block) for block in result.content]
    return items if any(not isinstance(item, str) for item in items) else None


def _error_message(result: mcp_types.CallToolResult) -> str:
    text = "\n".join(_describe_block(block) for block in result.content).strip()
    return text or "the server reported an error without a message"


def _first_error(exc: BaseException) -> BaseException:
    """The single cause inside nested exception groups, for a readable message."""
    # Duck-typed: BaseExceptionGroup is built in from Python 3.11 only.
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc
