"""Content parts in the journal: each part's bytes stored once, by sha256.

Theory of operation: an image, document or audio clip a run carries (in a
prompt, a tool's result, the tool message that hands it on) would be written
into several records as base64, and again into every run that sends it. A
journal that takes blobs (both stores toolwire ships) keeps the bytes once,
in its blob table keyed by their sha256, and the records hold a typed
reference instead (:class:`BlobRef`: ``{"type": "image", "media_type":
"image/png", "size": 2097152, "sha256": "ab12..."}``). :func:`store_parts`
makes the references and gathers the :class:`Blob` rows on the way to the
store, which writes them in the transaction of the record that first names
them; :func:`inline_parts` puts the bytes back where a reader needs the
parts themselves (a resume rebuilds the exact request). Records written
before the blob table existed keep their parts inline, as base64, and read
as they are.

The bytes never go through the journal's secret redaction, which works on
the records' text: an image whose bytes happen to spell a key comes back
byte for byte. A blob larger than the journal's cap
(:data:`MAX_BLOB_BYTES` by default) is refused with
:class:`~toolwire.errors.BlobTooLarge` before anything of its record is
written.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from toolwire.content import part_summary, state_media, with_state_data
from toolwire.journal._errors import JournalError

__all__ = [
    "MAX_BLOB_BYTES",
    "Blob",
    "BlobRef",
    "inline_parts",
    "part_line",
    "part_refs",
    "store_parts",
]

MAX_BLOB_BYTES = 32 * 1024 * 1024
"""The largest part a journal stores by default (32 MiB: the largest
request any provider toolwire speaks takes); ``max_blob_bytes=`` on
:class:`~toolwire.journal.SQLiteJournal` and
:class:`~toolwire.journal.PostgresJournal` changes it."""

_KINDS = frozenset({"image", "document", "audio"})
_PLACES = ("content", "parts")
"""Where a record's JSON holds a list of text and parts: a user message's
``content``, a tool message's or a tool result's ``parts``."""
_STATE = "provider_state"
"""Where an assistant message's JSON holds the media the model made, in the
provider's items (:func:`~toolwire.content.state_media`): the base64 there is
stored as a blob too, ``{"sha256", "size"}`` in its place."""


class Blob(NamedTuple):
    """One part's bytes on their way to a journal's blob table."""

    sha256: str
    """Hex sha256 of ``body``: the row's key."""
    media_type: str
    body: bytes

    @property
    def size(self) -> int:
        return len(self.body)


@dataclass(frozen=True, slots=True)
class BlobRef:
    """What a record holds in place of a part's bytes."""

    kind: str
    """``image``, ``document`` or ``audio``."""
    media_type: str
    size: int
    """The number of bytes."""
    sha256: str
    """Hex sha256 of the bytes: the blob table's key."""
    name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.kind,
            "media_type": self.media_type,
            "size": self.size,
            "sha256": self.sha256,
        }
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, item: Any) -> BlobRef | None:
        """The reference ``item`` is (``None``: a text item, an inline part,
        a URL, or anything else)."""
        if not isinstance(item, Mapping) or "data" in item or "url" in item:
            return None
        kind, media, size = item.get("type"), item.get("media_type"), item.get("size")
        sha, name = item.get("sha256"), item.get("name")
        if kind not in _KINDS or not isinstance(media, str) or not isinstance(sha, str):
            return None
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            return None
        return cls(str(kind), media, size, sha, name if isinstance(name, str) else None)

    def describe(self) -> str:
        """``image/png 34 KB sha256:ab12cd34…``."""
        return part_summary(self.media_type, self.size, self.sha256)


def _decoded(media_type: Any, data: Any) -> Blob | None:
    """The bytes of base64 ``data``, or ``None`` (not what toolwire writes:
    kept as it is)."""
    if not isinstance(media_type, str) or not isinstance(data, str):
        return None
    try:
        body = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return Blob(hashlib.sha256(body).hexdigest(), media_type, body)


def _blob_of(item: Mapping[str, Any]) -> Blob | None:
    """The bytes of an inline part (base64 ``data``), or ``None``."""
    if item.get("type") not in _KINDS:
        return None
    return _decoded(item.get("media_type"), item.get("data"))


def _state_ref(item: Any) -> BlobRef | None:
    """The reference a provider-state item holds in place of the media the
    model made (``{"sha256", "size"}`` where its base64 was), or ``None``."""
    found = state_media(item) if isinstance(item, Mapping) else None
    if found is None or not isinstance(found[0], str) or not isinstance(found[1], Mapping):
        return None
    media, data = found
    kind = next((k for k in ("image", "audio") if media.startswith(f"{k}/")), "document")
    return BlobRef.from_dict({**data, "type": kind, "media_type": media})  # checks it as a part's


def _store_state(items: list[Any], blobs: dict[str, Blob]) -> list[Any]:
    """Provider-state ``items`` with the media the model made as references."""
    stored: list[Any] = []
    for item in items:
        found = state_media(item) if isinstance(item, Mapping) else None
        blob = _decoded(*found) if found is not None else None
        if blob is None:
            stored.append(item)
            continue
        blobs.setdefault(blob.sha256, blob)
        stored.append(with_state_data(item, {"sha256": blob.sha256, "size": blob.size}))
    return stored


def _inline_state(items: list[Any], read: Callable[[str], bytes]) -> list[Any]:
    """Provider-state ``items`` with their references' bytes back, as base64."""
    inlined: list[Any] = []
    for item in items:
        ref = _state_ref(item)
        if ref is None:
            inlined.append(item)
            continue
        inlined.append(with_state_data(item, base64.b64encode(read(ref.sha256)).decode("ascii")))
    return inlined


def store_parts(value: dict[str, Any], blobs: dict[str, Blob]) -> dict[str, Any]:
    """``value`` (a message's or a tool result's JSON) with each inline part
    replaced by its :class:`BlobRef`, the bytes added to ``blobs`` (by sha256).
    ``value`` itself is not changed; without parts it is returned as it is."""
    out = value
    for place in _PLACES:
        items = value.get(place)
        if not isinstance(items, list):
            continue
        stored: list[Any] = []
        for item in items:
            blob = _blob_of(item) if isinstance(item, Mapping) else None
            if blob is None:
                stored.append(item)
                continue
            blobs.setdefault(blob.sha256, blob)
            name = item.get("name")
            ref = BlobRef(
                str(item["type"]),
                blob.media_type,
                blob.size,
                blob.sha256,
                name if isinstance(name, str) else None,
            )
            stored.append(ref.to_dict())
        if stored != items:
            out = {**out, place: stored}
    state = value.get(_STATE)
    if isinstance(state, list):
        kept = _store_state(state, blobs)
        if kept != state:
            out = {**out, _STATE: kept}
    return out


def inline_parts(value: Any, read: Callable[[str], bytes] | None) -> Any:
    """``value`` with each :class:`BlobRef` replaced by the part, its bytes
    read by ``read`` (a journal's ``load_blob``) as base64, the shape
    :func:`~toolwire.content.part_from_dict` reads.

    Raises:
        JournalError: a reference, and no blob to read it from.
    """
    if not isinstance(value, dict):
        return value
    out = value
    for place in _PLACES:
        items = value.get(place)
        if not isinstance(items, list):
            continue
        refs = [BlobRef.from_dict(item) for item in items]
        if not any(refs):
            continue
        if read is None:
            raise JournalError("a recorded part is in the journal's blob table, which is not open")
        inlined: list[Any] = []
        for item, ref in zip(items, refs, strict=True):
            if ref is None:
                inlined.append(item)
                continue
            part = {"type": ref.kind, "media_type": ref.media_type}
            part["data"] = base64.b64encode(read(ref.sha256)).decode("ascii")
            if ref.name is not None:
                part["name"] = ref.name
            inlined.append(part)
        out = {**out, place: inlined}
    state = value.get(_STATE)
    if isinstance(state, list) and any(_state_ref(item) for item in state):
        if read is None:
            raise JournalError("a recorded part is in the journal's blob table, which is not open")
        out = {**out, _STATE: _inline_state(state, read)}
    return out


def part_line(item: Any) -> str | None:
    """``[image/png 34 KB sha256:ab12cd34…]`` for a part's JSON, whether a
    reference or inline (an older journal's); ``None`` for text."""
    ref = BlobRef.from_dict(item)
    if ref is not None:
        return f"[{ref.describe()}]"
    if not isinstance(item, Mapping) or item.get("type") not in _KINDS:
        return None
    if isinstance(item.get("url"), str):
        return f"[{item.get('media_type')} {item.get('url')}]"
    blob = _blob_of(item)
    if blob is None:
        return f"[{item.get('type')}]"
    return f"[{part_summary(blob.media_type, blob.size, blob.sha256)}]"


def part_refs(value: Any) -> Iterator[BlobRef]:
    """The references a message's or a tool result's JSON holds."""
    if not isinstance(value, Mapping):
        return
    for place in _PLACES:
        items = value.get(place)
        if isinstance(items, list):
            for item in items:
                ref = BlobRef.from_dict(item)
                if ref is not None:
                    yield ref
    state = value.get(_STATE)
    for item in state if isinstance(state, list) else ():
        ref = _state_ref(item)
        if ref is not None:
            yield ref
