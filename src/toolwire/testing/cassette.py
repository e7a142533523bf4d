"""Cassettes: HTTP exchanges recorded at the wire, as files people can read.

A cassette is a directory. Each exchange is a JSON *sidecar*,
``0001.json``, beside the response body exactly as the upstream sent it,
``0001.response.sse`` (``.json``, ``.ndjson``, ``.txt`` or ``.bin`` after the
content type), so that ``toolwire inspect 0001.response.sse`` reads it like
any recorded stream and a diff of two recordings shows what changed. The
sidecar holds the request (method, path, query, headers, body), the response
status and headers, and the size and arrival time of every chunk, so a
replay can send the same bytes in the same chunks, at the same pace if asked.
docs/cassettes.md describes the format field by field.

No credential is ever written: credential headers, query parameters and
members of a JSON request body are replaced by ``<redacted>``
(:mod:`toolwire.http.credentials`, :mod:`toolwire.http.bodies`), userinfo
is taken out of URLs (:mod:`toolwire.http.urls`), and the values they held
are replaced wherever else they occur, response bodies included. Files are
created readable by their owner only.
"""

from __future__ import annotations

import base64
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

from toolwire.errors import CassetteError
from toolwire.stream import jsonio
from toolwire.testing.reading import open_file, read_file

__all__ = [
    "FORMAT_VERSION",
    "Cassette",
    "CassetteError",
    "CassetteWriter",
    "Exchange",
    "RecordedRequest",
    "RecordedResponse",
    "body_extension",
    "header_bytes",
    "is_sidecar",
    "load_exchange",
]

FORMAT_VERSION = 1
"""The ``toolwire_cassette`` value of sidecars this version writes and reads."""

_SIDECAR = re.compile(r"^(\d{4,})\.json$")
_BODY = re.compile(r"^(\d{4,})\.response\.[a-z]+$")


def body_extension(content_type: str) -> str:
    """The body file's extension for a response ``content_type``."""
    media = content_type.split(";")[0].strip().lower()
    if media == "text/event-stream":
        return "sse"
    if media in ("application/x-ndjson", "application/ndjson", "application/jsonl"):
        return "ndjson"
    if media == "application/json" or media.endswith("+json"):
        return "json"
    if media.startswith("text/"):
        return "txt"
    return "bin"


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    """A request as recorded, credentials removed."""

    method: str
    path: str
    """The path the client asked the proxy for (relative to the upstream's URL)."""
    query: str
    """The raw query string, without ``?``."""
    headers: tuple[tuple[str, str], ...]
    body: bytes
    """The body (as recorded: JSON bodies are re-serialized from the sidecar)."""

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), if any."""
        wanted = name.lower()
        return next((v for k, v in self.headers if k.lower() == wanted), None)

    def json(self) -> Any:
        """The body parsed as JSON, or ``None`` when it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedResponse:
    """A response as received: status, headers, and the body file's chunks."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body_file: Path
    chunks: tuple[tuple[int, float], ...]
    """``(size, milliseconds after the request was sent)`` of each chunk."""
    headers_ms: float
    """When the status line and headers arrived."""
    complete: bool
    """False when the body was cut (see ``error``)."""
    error: str | None

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), if any."""
        wanted = name.lower()
        return next((v for k, v in self.headers if k.lower() == wanted), None)

    def body(self) -> bytes:
        """The whole body file."""
        return read_file(self.body_file, what="cassette body", links=False, error=CassetteError)

    def iter_chunks(self) -> Iterator[tuple[bytes, float]]:
        """The body as recorded, chunk by chunk, with each one's arrival time.

        A body file edited by hand since the recording is still sent whole:
        the recorded sizes cut it while they fit, and the last chunk takes
        the rest.
        """
        try:
            with open_file(
                self.body_file, what="cassette body", links=False, error=CassetteError
            ) as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise CassetteError(f"{self.body_file} is not a regular file")
                for n, (size, at) in enumerate(self.chunks):
                    last = n == len(self.chunks) - 1
                    data = f.read() if last else f.read(size)
                    if not data:
                        return
                    yield data, at
                if not self.chunks and (rest := f.read()):
                    yield rest, self.headers_ms
        except OSError as exc:
            raise CassetteError(f"cannot read {self.body_file}: {exc.strerror or exc}") from exc


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """One recorded request and its response."""

    number: int
    dialect: str | None
    """The wire dialect, told from the path (``None`` for other endpoints)."""
    upstream: str
    """The upstream's base URL, without userinfo."""
    recorded_at: str
    request: RecordedRequest
    response: RecordedResponse
    sidecar: Path

    @property
    def ttfb_ms(self) -> float | None:
        """When the first body byte arrived, after the request was sent."""
        return self.response.chunks[0][1] if self.response.chunks else None

    @property
    def duration_ms(self) -> float:
        """When the last body byte arrived (or the headers, for no body)."""
        return self.response.chunks[-1][1] if self.response.chunks else self.response.headers_ms


class Cassette:
    """The exchanges of a cassette directory, in recording order."""

    def __init__(self, directory: Path, exchanges: list[Exchange]) -> None:
        self.directory = directory
        self.exchanges = exchanges

    def __repr__(self) -> str:
        return f"<Cassette {str(self.directory)!r}, {len(self.exchanges)} exchanges>"

    def __len__(self) -> int:
        return len(self.exchanges)

    def __iter__(self) -> Iterator[Exchange]:
        return iter(self.exchanges)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Cassette:
        """Read every sidecar of ``directory``.

        Raises:
            CassetteError: no such directory, or a sidecar or body that
                cannot be read.
        """
        path = Path(directory)
        if not path.is_dir():
            raise CassetteError(f"no cassette at {path}: not a directory")
        sidecars = sorted(
            (int(m.group(1)), p) for p in path.iterdir() if (m := _SIDECAR.match(p.name))
        )
        return cls(path, [load_exchange(p) for _, p in sidecars])


def is_sidecar(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a cassette's sidecar (by name and content)."""
    p = Path(path)
    if not _SIDECAR.match(p.name) or not p.is_file():
        return False
    try:
        with p.open("rb") as f:
            return b'"toolwire_cassette"' in f.read(200)
    except OSError:
        return False


def load_exchange(sidecar: Path) -> Exchange:
    """Read one sidecar.

    Raises:
        CassetteError: the file cannot be read or is not a sidecar of this version.
    """
    if sidecar.is_symlink():
        raise CassetteError(f"{sidecar} is a symbolic link: a cassette holds files only")
    data = read_file(sidecar, what="cassette sidecar", limit=MAX_SIDECAR_BYTES, error=CassetteError)
    try:
        meta = jsonio.loads(data)
    except ValueError as exc:
        raise CassetteError(f"{sidecar} is not valid JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("toolwire_cassette") != FORMAT_VERSION:
        raise CassetteError(
            f"{sidecar} is not a toolwire cassette sidecar of version {FORMAT_VERSION}"
        )
    try:
        return _exchange(meta, sidecar)
    except (KeyError, TypeError, ValueError) as exc:
        raise CassetteError(f"{sidecar}: missing or invalid field ({exc!r})") from exc


def _exchange(meta: dict[str, Any], sidecar: Path) -> Exchange:
    req, res = meta["request"], meta["response"]
    body_file = _body_file(sidecar, res["body_file"])
    status = int(res["status"])
    if not 100 <= status <= 599:
        raise ValueError(f"status {status} is not an HTTP status")
    error = res.get("error")
    dialect = meta.get("dialect", meta.get("api"))
    if not isinstance(error, (str, type(None))) or not isinstance(dialect, (str, type(None))):
        raise TypeError("'error' and 'dialect' must be strings")
    return Exchange(
        number=int(meta["exchange"]),
        dialect=dialect,
        upstream=str(meta.get("upstream", "")),
        recorded_at=str(meta.get("recorded_at", "")),
        request=RecordedRequest(
            method=_token(req["method"]),
            path=_line(req["path"]),
            query=_line(req.get("query", "")),
            headers=_headers(req.get("headers", [])),
            body=_request_body(req),
        ),
        response=RecordedResponse(
            status=status,
            headers=_headers(res.get("headers", [])),
            body_file=body_file,
            chunks=tuple((_size(size), _ms(at)) for size, at in res.get("chunks", [])),
            headers_ms=_ms(res.get("headers_ms", 0.0)),
            complete=bool(res.get("complete", True)),
            error=error,
        ),
        sidecar=sidecar,
    )


MAX_SIDECAR_BYTES = 64 * 1024 * 1024
"""The largest sidecar a cassette may hold (request bodies are kept in it)."""
_HEADER_TEXT = re.compile(r"[^\r\n\x00]*")
_FIELD_VALUE = re.compile(r"[^\x00-\x08\x0a-\x1f\x7f]*")  # RFC 9110 section 5.5
_TCHARS = re.compile(r"[!#$%&'+*.^_`|~0-9A-Za-z-]+")  # RFC 9110 section 5.6.2


def _body_file(sidecar: Path, name: Any) -> Path:
    """The body file a sidecar names: a regular file beside it, never a link."""
    if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
        raise ValueError("body_file must name a file beside the sidecar")
    body_file = sidecar.parent / name
    try:
        mode = os.lstat(body_file).st_mode
    except FileNotFoundError:
        raise CassetteError(f"{sidecar}: its body file {name} is missing") from None
    if stat.S_ISLNK(mode):
        raise CassetteError(f"{sidecar}: its body file {name} is a symbolic link")
    if not stat.S_ISREG(mode):
        raise CassetteError(f"{sidecar}: its body file {name} is not a regular file")
    return body_file


def _headers(pairs: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(pairs, list):
        raise TypeError("headers must be a list of [name, value] pairs")
    headers = []
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2:
            raise TypeError("headers must be a list of [name, value] pairs")
        headers.append((_token(pair[0]), _field_value(pair[1])))
    return tuple(headers)


def _token(value: Any) -> str:
    text = _line(value)
    if _TCHARS.fullmatch(text) is None:
        raise ValueError(f"{text[:40]!r} is not an HTTP token")
    return text


def header_bytes(value: str) -> bytes:
    """A header value as it is sent: without the whitespace around it (RFC
    9110 section 5.5: none of the value), in Latin-1, as the proxy read it
    off the wire, or in UTF-8 when Latin-1 cannot hold it (a sidecar edited
    by hand: ``"x-note": "日本"``)."""
    value = value.strip(" \t")
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace")


def _line(value: Any) -> str:
    if not isinstance(value, str) or _HEADER_TEXT.fullmatch(value) is None:
        raise ValueError("a method, path, query or header must be a string on one line")
    return value


def _field_value(value: Any) -> str:
    if not isinstance(value, str) or _FIELD_VALUE.fullmatch(value) is None:
        raise ValueError("a header value must be a string on one line, without control characters")
    return value


def _size(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError("a chunk size must be a non-negative integer")
    return value


def _ms(value: Any) -> float:
    if type(value) not in (int, float) or not 0 <= value < 1e9:
        raise ValueError("a time must be a non-negative number of milliseconds")
    return float(value)


def _request_body(req: dict[str, Any]) -> bytes:
    if "body" in req:
        return json.dumps(req["body"], ensure_ascii=False).encode()
    if "body_text" in req:
        return str(req["body_text"]).encode()
    if "body_base64" in req:
        return base64.b64decode(req["body_base64"])
    return b""


def _request_fields(body: bytes) -> dict[str, Any]:
    """The request body as sidecar fields: JSON when it is a JSON object or
    array (readable in a diff), else text, else base64."""
    if not body:
        return {}
    if body.lstrip()[:1] in (b"{", b"["):
        try:
            return {"body": json.loads(body)}
        except (ValueError, RecursionError):  # not JSON, or too deep to be read back
            pass
    try:
        return {"body_text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(body).decode("ascii")}


_PAIR = re.compile(r"\[\n\s+(-?[\d.eE+-]+),\n\s+(-?[\d.eE+-]+)\n\s+\]")
_HEADER = re.compile(r'\[\n\s+("(?:[^"\\]|\\.)*"),\n\s+("(?:[^"\\]|\\.)*")\n\s+\]')


def _dumps(meta: dict[str, Any]) -> bytes:
    """Indented JSON with each chunk and header pair on one line (diff-friendly)."""
    text = json.dumps(meta, indent=2, ensure_ascii=False)
    text = _PAIR.sub(r"[\1, \2]", text)
    return (_HEADER.sub(r"[\1, \2]", text) + "\n").encode()


def _private_file(path: Path) -> BinaryIO:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    return os.fdopen(fd, "wb")


class CassetteWriter:
    """Writes exchanges into a cassette directory, numbered after those present.

    Args:
        directory: created (readable by its owner only) if missing.
        upstream: the upstream's base URL, already without userinfo.
        fresh: delete the cassette files already there first (other files
            are left alone).

    Raises:
        CassetteError: the directory cannot be created or cleared.
    """

    def __init__(self, directory: str | os.PathLike[str], *, upstream: str, fresh: bool = False):
        self.directory = Path(directory)
        self.upstream = upstream
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            names = [
                p for p in self.directory.iterdir() if _SIDECAR.match(p.name) or _BODY.match(p.name)
            ]
            if fresh:
                for p in names:
                    p.unlink()
                names = []
        except OSError as exc:
            raise CassetteError(
                f"cannot use {self.directory} for a cassette: {exc.strerror or exc}"
            ) from exc
        numbers = [int(p.name.split(".")[0]) for p in names]
        self._next = max(numbers, default=0) + 1

    def __repr__(self) -> str:
        return f"<CassetteWriter {str(self.directory)!r}, next exchange {self._next}>"

    def next_number(self) -> int:
        """Reserve the number of the next exchange."""
        number = self._next
        self._next += 1
        return number

    def open_body(self, number: int, content_type: str) -> tuple[str, BinaryIO]:
        """Create the body file of exchange ``number``: its name and the open file."""
        name = f"{number:04d}.response.{body_extension(content_type)}"
        try:
            return name, _private_file(self.directory / name)
        except OSError as exc:
            raise CassetteError(f"cannot write {name}: {exc.strerror or exc}") from exc

    def write_sidecar(
        self,
        number: int,
        *,
        dialect: str | None,
        request: RecordedRequest,
        status: int,
        headers: list[tuple[str, str]],
        body_file: str,
        chunks: list[tuple[int, float]],
        headers_ms: float,
        error: str | None,
    ) -> Path:
        """Write exchange ``number``'s sidecar (atomically: a reader never
        sees half of it). ``request`` and ``headers`` must be free of
        credentials already."""
        meta: dict[str, Any] = {
            "toolwire_cassette": FORMAT_VERSION,
            "exchange": number,
            "dialect": dialect,
            "upstream": self.upstream,
            "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "request": {
                "method": request.method,
                "path": request.path,
                "query": request.query,
                "headers": [list(h) for h in request.headers],
                **_request_fields(request.body),
            },
            "response": {
                "status": status,
                "headers": [list(h) for h in headers],
                "body_file": body_file,
                "size": sum(size for size, _ in chunks),
                "headers_ms": round(headers_ms, 3),
                "chunks": [[size, round(at, 3)] for size, at in chunks],
                "complete": error is None,
                "error": error,
            },
        }
        path = self.directory / f"{number:04d}.json"
        temporary = self.directory / f".{number:04d}.json.tmp"
        try:
            with _private_file(temporary) as f:
                f.write(_dumps(meta))
            os.replace(temporary, path)
        except OSError as exc:
            raise CassetteError(f"cannot write {path.name}: {exc.strerror or exc}") from exc
        return path
