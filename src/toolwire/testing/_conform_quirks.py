"""The quirks ``toolwire conform`` knows, and how each is told from one probe.

A probe's evidence is two readings of the same bytes: the wire's
(:func:`toolwire.stream.codecs.wire_calls.read_wire`, each call as sent) and
the decoder's (its :class:`~toolwire.types.StreamResult`, after toolwire's
repairs). A quirk the decoder absorbs is seen on the wire only (a merged
opener, a split call, a repeated object, an object for arguments, a missing
id); a finish word is read as the decoder reads it, and a lost call is what
neither reading holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toolwire.stream.codecs.wire_calls import WireCall, WireReading, trailing_repeat
from toolwire.types import IncompleteToolCall, InvalidToolCall, StreamResult, ToolCall

__all__ = ["QUIRKS", "Evidence", "Quirk"]


@dataclass(frozen=True)
class Evidence:
    """What one probe saw: its wire, its decoded result, the calls it asked for."""

    wire: WireReading
    result: StreamResult
    asked: int

    @property
    def decoded(self) -> bool:
        """Whether the decoder read the stream to its end (no failure)."""
        return self.result.error is None


Judgment = tuple[bool, str] | None
"""``(seen, detail)``; ``None``: the probe cannot tell (no call to judge)."""


@dataclass(frozen=True)
class Quirk:
    """One known departure of servers from their dialect."""

    id: str
    title: str
    handling: str
    """What toolwire does about it."""
    judge: Callable[[Evidence], Judgment]


def _named(call: WireCall) -> str:
    return f"call {call.index}" + (f" ({call.name})" if call.name else "")


def _shown(text: str, width: int = 24) -> str:
    return repr(text if len(text) <= width else text[:width] + "…")


def _opened(evidence: Evidence) -> list[WireCall]:
    return [call for call in evidence.wire.calls if call.opened]


def _merged_opener(evidence: Evidence) -> Judgment:
    calls = _opened(evidence)
    if not calls:
        return None
    merged = [c for c in calls if c.opener_args and not c.as_value]
    if not merged:
        return False, "openers carry no argument text"
    first = merged[0]
    rest = "the whole arguments" if not first.pieces else f"{_shown(first.opener_args)}"
    return True, f"{len(merged)} of {len(calls)} openers carry arguments ({_named(first)}: {rest})"


def _repeated_object(evidence: Evidence) -> Judgment:
    calls = [c for c in evidence.wire.calls if c.text]
    if not calls:
        return None
    repeated = [c for c in calls if trailing_repeat(c.text)]
    if not repeated:
        return False, "no call's arguments hold their object twice"
    repaired = {c.name for c in _decoded(evidence) if isinstance(c, ToolCall) and c.repaired}
    after = " (decoded once, repaired)" if repeated[0].name in repaired else ""
    return True, f"{_named(repeated[0])}: the object again after it closed{after}"


def _split_call(evidence: Evidence) -> Judgment:
    calls = [c for c in evidence.wire.calls if c.text or c.opened]
    if not calls:
        return None
    orphans = [c for c in calls if not c.opened and c.text]
    if not orphans:
        return False, "every index with arguments was opened by its call"
    orphan = orphans[0]
    return True, f"index {orphan.index} carries {_shown(orphan.text)} and no id or name"


def _missing_ids(evidence: Evidence) -> Judgment:
    calls = _opened(evidence)
    if not calls:
        return None
    missing = [c for c in calls if not c.id]
    if not missing:
        return False, f"{len(calls)} of {len(calls)} calls have ids"
    return True, f"{len(missing)} of {len(calls)} calls opened without an id"


def _length_finish(evidence: Evidence) -> Judgment:
    if not evidence.decoded or not evidence.result.choices:
        return None
    choice = evidence.result.choices[0]
    if not choice.tool_calls:
        return None
    word = evidence.wire.finish
    if choice.finish_reason != "length":
        return False, f"finish {word!r} after {len(choice.tool_calls)} complete call(s)"
    if choice.incomplete_tool_calls:
        return False, f"finish {word!r}: a call was cut by the token limit"
    return True, f"finish {word!r} after {len(choice.tool_calls)} complete call(s)"


def _object_arguments(evidence: Evidence) -> Judgment:
    calls = [c for c in evidence.wire.calls if c.text]
    if not calls:
        return None
    objects = [c for c in calls if c.as_value]
    if not objects:
        return False, "arguments arrive as strings"
    return True, f"{len(objects)} of {len(calls)} calls' arguments arrive as JSON objects"


def _lost_call(evidence: Evidence) -> Judgment:
    if evidence.asked < 2:
        return None
    sent = len(_opened(evidence))
    decoded = len(_decoded(evidence)) + len(_cut(evidence)) if evidence.decoded else sent
    if decoded >= evidence.asked:
        return False, f"asked for {evidence.asked} calls, got {decoded}"
    return True, f"asked for {evidence.asked} calls, got {decoded} ({sent} opened on the wire)"


def _decoded(evidence: Evidence) -> list[ToolCall | InvalidToolCall]:
    choices = evidence.result.choices
    return [*choices[0].tool_calls, *choices[0].invalid_tool_calls] if choices else []


def _cut(evidence: Evidence) -> list[IncompleteToolCall]:
    choices = evidence.result.choices
    return list(choices[0].incomplete_tool_calls) if choices else []


QUIRKS: tuple[Quirk, ...] = (
    Quirk(
        "merged_opener",
        "an opener merged with its first fragment",
        "the fragment is kept as the start of the arguments",
        _merged_opener,
    ),
    Quirk(
        "repeated_object",
        "a whole object repeated at the end of a call's arguments",
        "the repeat is dropped (or the doubled text repaired, flagged repaired)",
        _repeated_object,
    ),
    Quirk(
        "split_call",
        "one call split across indices",
        "the rest joins its call when that is unambiguous",
        _split_call,
    ),
    Quirk("missing_ids", "missing call ids", "ids are minted (minted_id)", _missing_ids),
    Quirk(
        "length_finish",
        "`length` where `tool_calls` was due",
        "complete calls are ready; a call the limit cut is never run",
        _length_finish,
    ),
    Quirk(
        "object_arguments",
        "arguments as an object instead of a string",
        "the object is taken as the arguments",
        _object_arguments,
    ),
    Quirk(
        "lost_call",
        "a second (parallel) call lost",
        "nothing to recover: the server never sent it",
        _lost_call,
    ),
)
"""The quirks checked, in the order they are reported."""
