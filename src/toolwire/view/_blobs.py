"""A run's images, documents and audio, served from the journal's blobs.

Theory of operation: the run's page refers to each part by the viewer's
route ``/runs/{run_id}/blobs/{sha256}`` (behind the viewer's guard, like
every page). A part is served only when the run's own records refer to it
(a sha256 of another run's part is 404 here), with the media type its
record names: an image of a raster type inline (what an ``<img>`` shows),
anything else (a PDF, a text or HTML file, audio) as a download
(``Content-Disposition: attachment``), which a browser saves rather than
renders; the viewer's ``nosniff`` and content security policy cover both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from starlette.responses import PlainTextResponse, Response

from toolwire.journal import (
    BlobRef,
    JournalReader,
    ModelResponse,
    RunLog,
    ToolOutcome,
    part_refs,
)

__all__ = ["RASTER", "blob_response", "run_refs"]

RASTER = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The media types shown inline (never SVG: it is a document that runs script)."""
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_SUFFIX = {"application/pdf": ".pdf", "text/plain": ".txt", "text/markdown": ".md"}
_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def run_refs(log: RunLog) -> Iterator[BlobRef]:
    """Every part the run's messages, the model's answers and the tool
    results refer to."""
    for message in log.messages:
        yield from part_refs(message)
    for event in log.events:
        if isinstance(event.record, ToolOutcome):
            yield from part_refs(event.record.result)
        elif isinstance(event.record, ModelResponse):
            yield from part_refs(event.record.assistant)


def _filename(ref: BlobRef) -> str:
    """A download's file name: the part's own (cut to safe characters), or
    its kind and hash."""
    given = _NAME.sub("_", ref.name or "").strip("._")[:80]
    if given:
        return given
    suffix = _SUFFIX.get(ref.media_type, "." + ref.media_type.rpartition("/")[2][:8])
    return f"{ref.kind}-{ref.sha256[:12]}{_NAME.sub('', suffix)}"


def blob_response(journal: JournalReader, run_ref: str, sha256: str) -> Response:
    """The part ``sha256`` of the run ``run_ref`` names, as its response.

    Raises:
        JournalError: no such run, or the journal cannot be read.
    """
    if not _SHA256.match(sha256):
        return PlainTextResponse("not a part's sha256\n", status_code=404)
    log = journal.load_run(journal.find_run(run_ref))
    ref = next((r for r in run_refs(log) if r.sha256 == sha256), None)
    if ref is None:
        return PlainTextResponse("this run holds no such part\n", status_code=404)
    body = journal.load_blob(sha256)
    if ref.media_type in RASTER:
        return Response(body, media_type=ref.media_type)
    disposition = f'attachment; filename="{_filename(ref)}"'
    return Response(body, media_type=ref.media_type, headers={"content-disposition": disposition})
