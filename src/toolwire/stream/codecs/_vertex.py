"""Vertex AI ``partialArgs``: a call's arguments built value by value, by JSONPath.

Vertex streams a call's arguments as pieces ``{jsonPath, stringValue |
numberValue | boolValue | nullValue}``: a string arrives as several
``stringValue`` pieces on the same path, appended (an empty one ends it);
other values are assigned. Objects and arrays on the way are created.

Costs are linear in the input, however it is cut:

* Appends to a string are done in place. The string being appended to is
  held by a single reference, a local, while it grows (CPython then extends
  it without copying); it is put back into its slot only when someone reads
  the value, and taken out again by the next append. The same technique as
  the partial JSON parser's (``_jsonstream.py``).
* A partial value is built only when a delta's ``partial`` is read, by a
  second builder that replays the pieces forward from where it last stopped:
  no copy per chunk, and nothing at all when nobody reads it.

Bounds: a path has at most ``MAX_JSON_DEPTH`` steps, and an array index may
be at most the array's length (the next element): Vertex fills arrays in
order, and an index far ahead would otherwise allocate its gap.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream.limits import MAX_JSON_DEPTH

__all__ = ["ArgsBuilder", "PartialArgs", "parse_path"]

_WHERE: Final = "gemini: partialArgs"
_PATH_TOKEN: Final = re.compile(r"""\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[(?:'([^']*)'|"([^"]*)")\]""")

Key = str | int
Piece = tuple[tuple[Key, ...], Any, bool]
"""``(path, value, append)``: one ``partialArgs`` item, read."""


def parse_path(path: str) -> tuple[Key, ...]:
    """The steps of a JSONPath like ``$.a.b[0]['c d']``."""
    if not path.startswith("$"):
        raise RemoteProtocolError(f"{_WHERE} jsonPath {path[:80]!r} does not start with '$'")
    keys: list[Key] = []
    pos = 1
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if m is None:
            raise RemoteProtocolError(f"{_WHERE} cannot read jsonPath {path[:80]!r} at {pos}")
        if len(keys) >= MAX_JSON_DEPTH:
            raise RemoteProtocolError(f"{_WHERE} jsonPath is deeper than {MAX_JSON_DEPTH} levels")
        name, number, quoted1, quoted2 = m.groups()
        if number is not None:
            keys.append(int(number))
        else:
            keys.append(name if name is not None else (quoted1 if quoted1 is not None else quoted2))
        pos = m.end()
    if not keys:
        raise RemoteProtocolError(f"{_WHERE} cannot replace the whole arguments object")
    return tuple(keys)


class ArgsBuilder:
    """The arguments object, built from pieces in linear time."""

    __slots__ = ("_open_key", "_open_node", "_open_path", "_published", "_text", "root")

    def __init__(self) -> None:
        self.root: dict[str, Any] = {}
        # The string being appended to: its path, container, key and text.
        self._open_path: tuple[Key, ...] | None = None
        self._open_node: Any = None
        self._open_key: Key = ""
        self._text = ""
        self._published = True

    def apply(self, piece: Piece) -> None:
        """Set (or, for a string, extend) the value at the piece's path."""
        path, value, append = piece
        if append and path == self._open_path:
            self._append(value)
            return
        self._close_string()
        node: Any = self.root
        for key, nxt in itertools.pairwise(path):
            node = _child(node, key, [] if isinstance(nxt, int) else {})
        last = path[-1]
        _check_slot(node, last)
        current = node[last] if _has(node, last) else None
        if append and isinstance(current, str):
            self._open_path, self._open_node, self._open_key = path, node, last
            node[last] = None  # the text's only holder is now self._text
            self._text = current
            self._published = False
            del current
            self._append(value)
        else:
            _put(node, last, value)

    def value(self) -> dict[str, Any]:
        """The arguments so far (live: later pieces update it in place)."""
        if not self._published:
            self._open_node[self._open_key] = self._text
            self._published = True
        return self.root

    def _append(self, value: str) -> None:
        if self._published:
            self._open_node[self._open_key] = None  # drop the slot's reference
            self._published = False
        text = self._text
        self._text = ""
        text += value  # in place: ``text`` is the only reference
        self._text = text

    def _close_string(self) -> None:
        if self._open_path is not None:
            self.value()
            self._open_path = self._open_node = None
            self._text = ""


class PartialArgs:
    """The pieces of one streamed call, and its partial values on demand.

    ``partial_at(mark)`` gives the value after the first ``mark`` pieces,
    replaying forward from the last read (reading every delta in order costs
    linear time overall); reading an older mark starts over.
    """

    __slots__ = ("_builder", "_pos", "pieces")

    def __init__(self) -> None:
        self.pieces: list[Piece] = []
        self._builder: ArgsBuilder | None = None
        self._pos = 0

    def partial_at(self, mark: int) -> Any:
        if self._builder is None or mark < self._pos:
            self._builder = ArgsBuilder()
            self._pos = 0
        builder = self._builder
        while self._pos < mark:
            builder.apply(self.pieces[self._pos])
            self._pos += 1
        return builder.value()


def _has(node: Any, key: Key) -> bool:
    return key < len(node) if isinstance(key, int) else key in node


def _check_slot(node: Any, key: Key) -> None:
    if isinstance(key, int):
        if not isinstance(node, list):
            raise RemoteProtocolError(f"{_WHERE} jsonPath indexes a non-array")
        if key > len(node):
            raise RemoteProtocolError(
                f"{_WHERE} jsonPath index {key} skips ahead of the array's {len(node)} elements"
            )
    elif not isinstance(node, dict):
        raise RemoteProtocolError(f"{_WHERE} jsonPath names a key of a non-object")


def _put(node: Any, key: Key, value: Any) -> None:
    if isinstance(key, int) and key == len(node):
        node.append(value)
    else:
        node[key] = value


def _child(node: Any, key: Key, default: Any) -> Any:
    _check_slot(node, key)
    child = node[key] if _has(node, key) else None
    if child is None:
        child = default
        _put(node, key, child)
    return child
