"""Scripted conversations for the emulation server.

Theory of operation: a :class:`Scenario` is a list of :class:`Turn`. The server
is stateless: it answers a request with turn *n*, where *n* is the number of
assistant messages already in the request's history, so any number of
conversations can run at once against one server. A turn streams optional
reasoning, then text, then tool calls, cut into fragments of ``chunk_size``
characters. Text and arguments may quote the tool results the request carries
with ``{result:0}`` (the first result after the last assistant message) or
``{result:get_weather}`` (the latest result of that tool). A turn with
``if_error`` is replaced by that alternative when one of the latest tool results
is an error, which scripts "the model corrects its arguments" conversations.

A turn's ``faults`` are consumed by successive attempts of the same request
(same body), so a client retrying a request sees the next fault, then success.

Scenarios load from a JSON or YAML file (``Scenario.from_file``), from the
bundled set (``Scenario.builtin("weather")``), or replay one recorded body to
every request (``Scenario.replay_file(path)``). The JSON shape::

    {"turns": [
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "杭州"}}],
         "chunk_size": 4, "delay": 0.02,
         "faults": [{"status": 429, "retry_after": 0.05}]},
        {"text": "天气:{result:get_weather}"}
    ]}

A turn may also hold a dialect's own items (:class:`ProviderItem`: Anthropic
server-tool blocks, Gemini built-in tool parts...), its own finish word
(``provider_finish``, e.g. Anthropic's ``pause_turn``) and more fields of the
answer or of a call (``provider_fields``: a ``container``, a ``caller``, a
``thoughtSignature``), each given per dialect.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolwire._compat import renamed_argument
from toolwire.errors import ScenarioError
from toolwire.stream import jsonio
from toolwire.stream.codecs.emulation import hex_token, lower_token, token
from toolwire.stream.limits import MAX_JSON_DEPTH
from toolwire.testing._expect import Expect
from toolwire.testing._wire_quirks import WIRE_QUIRKS, WireQuirk
from toolwire.testing.reading import read_file, regular_file

__all__ = [
    "WIRE_QUIRKS",
    "Expect",
    "Fault",
    "ProviderItem",
    "Scenario",
    "ScenarioError",
    "ScriptedToolCall",
    "Turn",
    "WireQuirk",
    "builtin_names",
    "hex_token",
    "lower_token",
    "token",
]


MAX_SCENARIO_BYTES = 64 * 1024 * 1024
"""The largest scenario file read."""


RESPONSES = "openai-responses"


class _Model(BaseModel):
    # Unknown keys in a scenario file are almost always typos; refuse them.
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fault(_Model):
    """Something to go wrong with one attempt of a request.

    ``status`` answers with that HTTP error instead of a stream (with
    ``Retry-After`` when ``retry_after`` is set); the other fields damage a
    successful answer.
    """

    status: int | None = Field(default=None, ge=400, le=599)
    """Answer with this HTTP error status, in the dialect's error JSON shape."""
    retry_after: float | None = Field(default=None, ge=0)
    """Seconds sent as ``Retry-After`` (and ``retry-after-ms``) with ``status``."""
    message: str | None = None
    """The error message of ``status`` or ``error_event`` (a default otherwise)."""
    cut_after_bytes: int | None = Field(default=None, ge=0)
    """Close the connection after this many body bytes, mid-stream."""
    cut_at_fraction: float | None = Field(default=None, gt=0, lt=1)
    """Close the connection after this fraction of the body's bytes (``0.5``:
    half way), mid-stream."""
    slow_chunk_delay: float | None = Field(default=None, ge=0)
    """Seconds between chunks for this attempt, replacing the turn's ``delay``."""
    malformed_json: bool = False
    """Send one chunk with broken JSON (the chunk ``at_chunk``, default the middle one)."""
    error_event: dict[str, Any] | None = None
    """Send an in-stream error event after HTTP 200, then end the stream. The
    object may set ``message``, ``type``, ``code`` and ``status``; the server wraps
    it in the dialect's error event shape."""
    at_chunk: int | None = Field(default=None, ge=0)
    """Where ``malformed_json`` or ``error_event`` strikes (chunk index)."""

    @model_validator(mode="after")
    def _something_goes_wrong(self) -> Fault:
        if (
            self.status is None
            and self.cut_after_bytes is None
            and self.cut_at_fraction is None
            and self.slow_chunk_delay is None
            and not self.malformed_json
            and self.error_event is None
        ):
            raise ValueError(
                "a fault needs one of status, cut_after_bytes, cut_at_fraction, "
                "slow_chunk_delay, malformed_json, error_event"
            )
        return self


class ScriptedToolCall(_Model):
    """One tool call of a turn."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """An object, or raw text streamed exactly as given (it may be invalid JSON)."""
    custom: bool = False
    """A custom (freeform) tool call of the OpenAI dialects: ``arguments`` is
    its input text, streamed as the dialect's custom tool input."""
    fields: dict[str, Any] = Field(default_factory=dict)
    """More fields sent beside the call, in the OpenAI dialects: Gemini's
    ``extra_content`` (its thought signature) on a Chat Completions tool
    call, a Responses call item's ``caller`` or ``namespace``."""
    provider_fields: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """More fields of the call's wire item, by dialect: an Anthropic
    ``tool_use`` block's ``caller``, a Gemini part's ``thoughtSignature``."""

    @model_validator(mode="after")
    def _custom_input_is_text(self) -> ScriptedToolCall:
        if self.custom and not isinstance(self.arguments, str):
            raise ValueError("a custom tool call's arguments are its input text: a string")
        return self


class ProviderItem(_Model):
    """A provider's own item, sent as it is in that dialect's answers (and
    left out of other dialects'): an OpenAI Responses output item
    (``mcp_approval_request``, ``shell_call``, ``computer_call``,
    ``compaction``...), an Anthropic content block (``server_tool_use``,
    ``web_search_tool_result``, ``compaction``...), a Gemini part
    (``executableCode``, ``toolCall``...). Its strings may quote tool results
    (``{result:0}``)."""

    dialect: str = Field(min_length=1)
    """The dialect whose answers carry it (``"anthropic-messages"``, ``"gemini"``...)."""
    item: dict[str, Any]
    """The item, in the dialect's wire shape."""
    after: Literal["reasoning", "text", "calls"] = "text"
    """Where it goes: after the reasoning (before the text), after the text
    (before the calls) or after the calls. Items with the same ``after``
    keep their order."""

    @model_validator(mode="after")
    def _responses_items_have_a_type(self) -> ProviderItem:
        if self.dialect == RESPONSES and not isinstance(self.item.get("type"), str):
            raise ValueError("every OpenAI Responses item needs a string 'type'")
        return self


class Turn(_Model):
    """What the model answers to one request."""

    text: str = ""
    reasoning: str = ""
    """Thinking text, streamed before the answer in the dialect's reasoning shape."""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    chunk_size: int = Field(default=16, ge=1)
    """Fragment size in characters for text, reasoning and arguments."""
    delay: float = Field(default=0.0, ge=0)
    """Seconds to wait between chunks."""
    faults: list[Fault] = Field(default_factory=list)
    """Fault of attempt 1, 2, ... of the same request; later attempts succeed."""
    provider_items: list[ProviderItem] = Field(default_factory=list)
    """Items of one dialect's own, streamed whole in its answers (see :class:`ProviderItem`)."""
    provider_finish: dict[str, str] = Field(default_factory=dict)
    """The finish word to send instead of the usual one, by dialect (Anthropic's
    ``pause_turn``)."""
    provider_fields: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """More fields of the answer, by dialect: an Anthropic message's ``container``."""
    quirks: list[WireQuirk] = Field(default_factory=list)
    """Departures from the dialect that real servers make (see
    :data:`WIRE_QUIRKS`), played in OpenAI Chat Completions answers
    (``repeated_object`` and ``missing_ids`` in Anthropic and Responses
    answers too); a client under test meets them as it would from such a server."""
    steer: Literal["accepted", "pending", "failed"] | None = None
    """What became of a steer, in the answers that have steering (Responses):
    accepted and the answer ended ``steered``, pending after it, or failed."""
    output: Any = None
    """A typed run's answer (any JSON value; a JSON object as the model writes
    it: for an output type whose schema is not an object, ``{"response": ...}``).
    Played the way the request asks for it: as the text of native structured
    output, or as a call of its final-result tool (``output_tool``, else the
    first whose name starts with ``final_result``), cut by ``chunk_size``.
    Without ``output`` (or with ``null``), the turn plays its text and tool calls."""
    output_tool: str | None = None
    """The final-result tool to call (a union's member: ``final_result_Invoice``)."""
    expect: Expect | None = None
    """How many ``images``, ``documents`` and ``audio`` parts the request this
    turn answers must carry (else HTTP 400 naming them)."""
    if_error: Turn | None = None
    """The turn to play instead when one of the latest tool results is an error:
    an Anthropic ``tool_result`` with ``is_error``, or a result whose content is a
    JSON object with a non-empty ``error`` key (the shape toolwire sends back)."""

    @model_validator(mode="before")
    @classmethod
    def _items_are_provider_items(cls, given: Any) -> Any:
        # ``items``, older: OpenAI Responses output items after the calls.
        if isinstance(given, dict) and "items" in given:
            renamed_argument("Turn", "items")
            given = dict(given)
            items = given.pop("items")
            if not isinstance(items, list):
                raise ValueError("a turn's items are a list of objects")
            moved = [{"dialect": RESPONSES, "item": item, "after": "calls"} for item in items]
            given["provider_items"] = [*moved, *given.get("provider_items", [])]
        return given


class Scenario(_Model):
    """A scripted conversation, or a recorded body replayed to every request."""

    name: str = "scenario"
    description: str = ""
    turns: list[Turn] = Field(default_factory=list)
    replay: Path | None = None
    """A recorded response body (``.sse``) sent verbatim to every request."""

    @model_validator(mode="after")
    def _turns_or_replay(self) -> Scenario:
        if not self.turns and self.replay is None:
            raise ValueError("a scenario needs turns or a replay file")
        if self.turns and self.replay is not None:
            raise ValueError("a scenario has either turns or a replay file, not both")
        return self

    @classmethod
    def from_dict(cls, data: Any, *, base_dir: Path | None = None) -> Scenario:
        """Build a scenario from its JSON shape.

        Args:
            data: the parsed JSON.
            base_dir: directory a relative ``replay`` path is resolved against.

        Raises:
            ScenarioError: the data does not describe a valid scenario.
        """
        try:
            scenario = cls.model_validate(data)
        except ValidationError as exc:
            raise ScenarioError(f"invalid scenario: {exc}{_fault_hint(exc)}") from exc
        if scenario.replay is not None and base_dir is not None:
            if not scenario.replay.is_absolute():
                scenario = scenario.model_copy(update={"replay": base_dir / scenario.replay})
        if scenario.replay is not None and not scenario.replay.is_file():
            raise ScenarioError(f"replay file not found: {scenario.replay}")
        return scenario

    @classmethod
    def from_file(cls, path: str | Path) -> Scenario:
        """Load a scenario from a JSON or YAML file, told apart by its content
        (not its name). A recorded body to replay is :meth:`replay_file`'s.

        Raises:
            ScenarioError: the file is missing, not JSON or YAML, or not a
                valid scenario.
        """
        path = Path(path)
        content = read_file(path, what="scenario", limit=MAX_SCENARIO_BYTES, error=ScenarioError)
        scenario = cls.from_dict(_parse_document(content, path), base_dir=path.parent)
        if scenario.name == "scenario":
            scenario = scenario.model_copy(update={"name": path.stem})
        return scenario

    @classmethod
    def replay_file(cls, path: str | Path) -> Scenario:
        """A scenario that answers every request with the exact bytes of ``path``.

        Raises:
            ScenarioError: the file does not exist.
        """
        path = Path(path)
        regular_file(path, what="replay file", error=ScenarioError)
        if not path.is_file():
            raise ScenarioError(f"replay file not found: {path}")
        return cls(name=path.stem, replay=path)

    @classmethod
    def builtin(cls, name: str) -> Scenario:
        """A scenario bundled with toolwire (see :func:`builtin_names`).

        Raises:
            ScenarioError: there is no bundled scenario of that name.
        """
        if name not in builtin_names():
            known = ", ".join(builtin_names()) or "none"
            raise ScenarioError(f"no built-in scenario {name!r} (known: {known})")
        text = (
            resources.files("toolwire.testing")
            .joinpath("scenarios")
            .joinpath(f"{name}.json")
            .read_bytes()
        )
        scenario = cls.from_dict(jsonio.loads(text))
        return scenario.model_copy(update={"name": name})

    def with_delay(self, seconds: float) -> Scenario:
        """A copy whose turns (and their ``if_error`` turns) wait ``seconds`` between chunks."""

        def retime(turn: Turn) -> Turn:
            alternative = retime(turn.if_error) if turn.if_error is not None else None
            return turn.model_copy(update={"delay": seconds, "if_error": alternative})

        return self.model_copy(update={"turns": [retime(t) for t in self.turns]})

    def turn_for(self, assistant_turns: int, *, last_results_have_error: bool) -> Turn:
        """The turn that answers a request whose history holds ``assistant_turns``
        assistant messages.

        Raises:
            ScenarioError: the scenario has no such turn.
        """
        if assistant_turns >= len(self.turns):
            raise ScenarioError(
                f"scenario {self.name!r} has {len(self.turns)} turn(s); this request "
                f"already holds {assistant_turns} assistant message(s), so it asks "
                f"for turn {assistant_turns + 1}"
            )
        turn = self.turns[assistant_turns]
        if last_results_have_error and turn.if_error is not None:
            return turn.if_error
        return turn


def _fault_hint(error: ValidationError) -> str:
    """A hint when a fault's field was written on a turn itself."""
    for detail in error.errors():
        key = detail["loc"][-1] if detail["loc"] else None
        if detail["type"] == "extra_forbidden" and key in Fault.model_fields:
            return (
                f"\n{key!r} belongs to a fault: list the turn's faults, one per attempt of "
                f'its request, as in {{"text": "...", "faults": [{{"{key}": ...}}]}}'
            )
    return ""


def _parse_document(content: bytes, path: Path) -> Any:
    """A scenario file's data: JSON when it opens with ``{``, YAML otherwise.

    Raises:
        ScenarioError: the content is empty, binary, a recorded stream, or
            neither JSON nor YAML.
    """
    stripped = content.lstrip()
    if not stripped:
        raise ScenarioError(f"scenario {path} is empty")
    if stripped.startswith((b"data:", b"event:", b"[{", b'{"id"', b'{"candidates"')):
        raise ScenarioError(
            f"{path} looks like a recorded response body, not a scenario: replay it with "
            "--replay (Scenario.replay_file)"
        )
    if stripped.startswith(b"{"):
        try:
            return jsonio.loads(content)
        except ValueError as exc:
            raise ScenarioError(f"scenario {path} is not valid JSON: {exc}") from None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{path} is a binary file, not a JSON or YAML scenario") from None
    import yaml

    try:
        data = yaml.safe_load(text)
        depth = jsonio.value_depth(data)
    except RecursionError:
        depth = MAX_JSON_DEPTH + 1
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ScenarioError(f"scenario {path} is neither JSON nor YAML ({first})") from None
    if depth > MAX_JSON_DEPTH:
        raise ScenarioError(f"scenario {path} nests deeper than {MAX_JSON_DEPTH} levels")
    if not isinstance(data, dict):
        raise ScenarioError(
            f"scenario {path} is not a mapping with 'turns' (it reads as "
            f"{type(data).__name__}): a scenario is JSON or YAML"
        )
    return data


def builtin_names() -> list[str]:
    """Names accepted by :meth:`Scenario.builtin`, sorted."""
    folder = resources.files("toolwire.testing").joinpath("scenarios")
    return sorted(
        entry.name.removesuffix(".json")
        for entry in folder.iterdir()
        if entry.name.endswith(".json")
    )


# ---------------------------------------------------------------------------
# Templates

_RESULT_REF = re.compile(r"\{result:([^{}]+)\}")


def substitute(text: str, results: ResultLookup) -> str:
    """Replace every ``{result:KEY}`` in ``text``.

    Raises:
        ScenarioError: a reference names no tool result of the request.
    """
    if "{result:" not in text:
        return text
    return _RESULT_REF.sub(lambda m: results.get(m.group(1).strip()), text)


def substitute_value(value: Any, results: ResultLookup) -> Any:
    """``substitute`` applied to every string inside a JSON value (keys too)."""
    if isinstance(value, str):
        return substitute(value, results)
    if isinstance(value, dict):
        return {substitute(str(k), results): substitute_value(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute_value(v, results) for v in value]
    return value


class ResultLookup:
    """Tool results of a request, addressable by position or by tool name.

    Args:
        latest: ``(name, content)`` of the results after the last assistant
            message, in request order; ``{result:0}`` is the first of these.
        all_results: every ``(name, content)`` of the request, oldest first;
            ``{result:NAME}`` is the latest one of that tool.
    """

    def __init__(
        self,
        latest: list[tuple[str | None, str]],
        all_results: list[tuple[str | None, str]],
    ) -> None:
        self._latest = latest
        self._all = all_results

    def get(self, key: str) -> str:
        """The content a reference stands for; ``KEY.field.sub`` picks a field
        of a result whose content is a JSON object.

        Raises:
            ScenarioError: no tool result matches ``key``, or the field is missing.
        """
        ref, dot, path = key.partition(".")
        content = self._content(ref)
        if not dot:
            return content
        try:
            value: Any = jsonio.loads(content)
        except ValueError:
            raise ScenarioError(f"{{result:{key}}}: the result of {ref!r} is not JSON") from None
        for field_name in path.split("."):
            if isinstance(value, dict) and field_name in value:
                value = value[field_name]
            elif isinstance(value, list) and field_name.isdigit() and int(field_name) < len(value):
                value = value[int(field_name)]
            else:
                raise ScenarioError(f"{{result:{key}}}: the result has no field {field_name!r}")
        return value if isinstance(value, str) else jsonio.dumps(value)

    def _content(self, key: str) -> str:
        if key.isdigit():
            index = int(key)
            if index < len(self._latest):
                return self._latest[index][1]
            raise ScenarioError(
                f"{{result:{key}}}: the request carries {len(self._latest)} tool "
                "result(s) after its last assistant message"
            )
        for name, content in reversed(self._all):
            if name == key:
                return content
        names = sorted({name for name, _ in self._all if name})
        raise ScenarioError(
            f"{{result:{key}}}: the request carries no result of tool {key!r} "
            f"(results of: {', '.join(names) or 'none'})"
        )
