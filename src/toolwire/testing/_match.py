"""Which recorded exchange answers a request, and how a request differs from one.

Theory of operation: a request is matched by its method, its path, its query
(credentials removed, as recorded) and the *canonical form* of its body: the
JSON value, its credential members removed as recorded
(:func:`toolwire.http.bodies.scrub_body`) and :data:`VOLATILE_FIELDS` (and
any field the user adds) taken out, compared as values, so key order and
whitespace never matter. A body that is not JSON is compared as bytes.

Among the recorded exchanges that match, the first not yet replayed answers,
so a conversation whose requests repeat (a retry after a 429, the same
question twice) replays in its recorded order; when all have been replayed,
the last one answers again. An unmatched request gets a description of the
nearest recorded request: the same method and path first, then the fewest
differing fields, each named by its path in the body (``messages[2].content``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolwire.http.bodies import scrub_body
from toolwire.http.credentials import redact_query
from toolwire.stream.codecs import registered
from toolwire.testing.cassette import Exchange

__all__ = ["VOLATILE_FIELDS", "Matcher", "Mismatch", "RequestKey", "canonical_body"]

VOLATILE_FIELDS: tuple[str, ...] = tuple(
    sorted({field for d in registered() for field in d.volatile_fields})
)
"""Body fields that change between runs of the same code (user and request
ids, cache keys, usage options), left out when matching. A dotted name
(``"generationConfig.seed"``) reaches into objects."""

_MISSING = object()
_SHOWN = 3  # differences named in a mismatch message


def _drop(value: Any, path: list[str]) -> None:
    if not isinstance(value, dict) or not path:
        return
    head, *rest = path
    if rest:
        _drop(value.get(head), rest)
    else:
        value.pop(head, None)


def canonical_body(
    body: bytes, ignore: Iterable[str] = VOLATILE_FIELDS, content_type: str | None = None
) -> Any:
    """The body's JSON value without its credentials and the ``ignore``
    fields, or the bytes when the body is not JSON."""
    if not body.strip():
        return None
    body = scrub_body(body, content_type).body
    try:
        value = json.loads(body)
    except ValueError:
        return body
    for name in ignore:
        _drop(value, name.split("."))
    return value


@dataclass(frozen=True, slots=True)
class RequestKey:
    """What a request is matched on."""

    method: str
    path: str
    query: str
    text: str | bytes
    """The canonical body, serialized with sorted keys: equal texts are equal
    values of equal types (``1``, ``1.0`` and ``true`` differ)."""
    body: Any = field(compare=False)

    @classmethod
    def of(
        cls,
        method: str,
        path: str,
        query: str,
        body: bytes,
        ignore: Iterable[str],
        content_type: str | None = None,
    ) -> RequestKey:
        value = canonical_body(body, ignore, content_type)
        text = (
            value
            if isinstance(value, bytes)
            else json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        )
        return cls(method.upper(), path, redact_query(query)[0], text, value)

    def differences(self, other: RequestKey) -> list[tuple[str, Any, Any]]:
        """``(where, recorded, received)`` for each difference, ``self`` being
        the recorded request."""
        found: list[tuple[str, Any, Any]] = []
        for name in ("method", "path", "query"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                found.append((name, mine, theirs))
        _diff(self.body, other.body, "body", found)
        return found


def _diff(a: Any, b: Any, where: str, found: list[tuple[str, Any, Any]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            _diff(a.get(key, _MISSING), b.get(key, _MISSING), f"{where}.{key}", found)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            left = a[i] if i < len(a) else _MISSING
            right = b[i] if i < len(b) else _MISSING
            _diff(left, right, f"{where}[{i}]", found)
    elif type(a) is not type(b) or a != b:
        found.append((where, a, b))


def _show(value: Any) -> str:
    if value is _MISSING:
        return "absent"
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:76] + "...(cut)"


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A request no recorded exchange answers, and the nearest one."""

    method: str
    path: str
    nearest: Exchange | None
    differences: tuple[tuple[str, Any, Any], ...]

    def message(self, cassette: str, server: str = "http://HOST:PORT") -> str:
        """The explanation sent to the client and shown by the pytest fixture
        (``server``: the replaying server's root URL, named in the advice)."""
        head = f"no recorded exchange in the cassette {cassette} matches {self.method} {self.path}"
        if self.nearest is None:
            return head + " (the cassette is empty)."
        n = self.nearest
        lines = [
            f"{head}. The nearest is #{n.number} ({n.sidecar.name}) "
            f"{n.request.method} {n.request.path}, which differs at:"
        ]
        for where, recorded, received in self.differences[:_SHOWN]:
            lines.append(f"  {where}: recorded {_show(recorded)}, received {_show(received)}")
        if len(self.differences) > _SHOWN:
            lines.append(f"  ...and {len(self.differences) - _SHOWN} more")
        lines.append(_advice(n.request.path, self.path, self.differences, server))
        return "\n".join(lines)


def _advice(
    recorded: str, received: str, differences: Sequence[tuple[str, Any, Any]], server: str
) -> str:
    """The fix for these differences: the client's base URL when the paths
    differ by a prefix (recording again would not help: the recording is
    right, the client points elsewhere), a new recording when the request
    changed."""
    fix = _prefix_fix(recorded.rstrip("/"), received.rstrip("/"), server)
    if fix is None:
        return (
            "If the request changed on purpose, record the cassette again (TOOLWIRE_RECORD=1); "
            "if a field changes from run to run, leave it out of matching (ignore=...)."
        )
    rest = [where for where, _, _ in differences if where != "path"]
    if rest:
        fix += f" The request also differs at {', '.join(rest[:_SHOWN])}."
    return fix


def _prefix_fix(recorded: str, received: str, server: str) -> str | None:
    """What to do when one path is the other with a prefix; ``None`` otherwise."""
    if not recorded or not received or recorded == received:
        return None
    if recorded.endswith(received):
        missing = recorded[: len(recorded) - len(received)]
        return (
            f"The paths differ only by a {missing!r} prefix: the client's base URL lacks it. "
            f"End the base URL with {missing!r} ({server}{missing}) instead of recording again."
        )
    if received.endswith(recorded):
        extra = received[: len(received) - len(recorded)]
        return (
            f"The paths differ only by a {extra!r} prefix: the client's base URL has it and "
            f"the recording's had not. Drop {extra!r} from the base URL instead of recording again."
        )
    return None


class Matcher:
    """Picks the recorded exchange that answers each request, in order.

    Args:
        exchanges: the cassette's exchanges, in recording order.
        ignore: body fields left out of matching.
    """

    def __init__(self, exchanges: Sequence[Exchange], ignore: Iterable[str]) -> None:
        self.ignore = tuple(ignore)
        self._exchanges = list(exchanges)
        self._keys = [
            RequestKey.of(
                e.request.method,
                e.request.path,
                e.request.query,
                e.request.body,
                self.ignore,
                e.request.header("content-type"),
            )
            for e in self._exchanges
        ]
        self._replayed: set[int] = set()

    def key(
        self, method: str, path: str, query: str, body: bytes, content_type: str | None = None
    ) -> RequestKey:
        return RequestKey.of(method, path, query, body, self.ignore, content_type)

    def match(self, key: RequestKey) -> Exchange | Mismatch:
        """The exchange answering ``key``, or why there is none."""
        hits = [i for i, k in enumerate(self._keys) if k == key]
        if hits:
            fresh = [i for i in hits if i not in self._replayed]
            chosen = fresh[0] if fresh else hits[-1]
            self._replayed.add(chosen)
            return self._exchanges[chosen]
        return self._nearest(key)

    def _nearest(self, key: RequestKey) -> Mismatch:
        best: tuple[tuple[int, int, int], int, list[tuple[str, Any, Any]]] | None = None
        for i, recorded in enumerate(self._keys):
            found = recorded.differences(key)
            place = (recorded.method != key.method) + (recorded.path != key.path)
            score = (place, len(found), i in self._replayed)
            if best is None or score < best[0]:
                best = (score, i, found)
        if best is None:
            return Mismatch(key.method, key.path, None, ())
        return Mismatch(key.method, key.path, self._exchanges[best[1]], tuple(best[2]))
