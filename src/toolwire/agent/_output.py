"""Typed output: what a run asks the model for, and how its answer is validated.

Theory of operation
-------------------
``Agent(output_type=T)`` (or ``run(..., output_type=T)``) makes an
:class:`OutputSpec` of ``T``: a pydantic :class:`~pydantic.TypeAdapter` per
member of ``T`` (one for a plain type, one per member of a union) and the JSON
Schema of each. A schema whose root is not an object (a ``list[...]``, a
``Literal``, a union) is *wrapped* as ``{"response": ...}``, since neither the
native structured outputs nor tool arguments take another root.

The run asks in one of two ways (:meth:`OutputSpec.mode_for`):

* ``native``: the dialect's structured-output member
  (:mod:`toolwire.stream.codecs.structured`) holds the answer text to the whole
  schema; the text of the turn without tool calls is the output;
* ``tool``: one final-result tool per member (``final_result``, or
  ``final_result_<Member>`` for a union); the run ends at the first valid call
  of one of them.

Validation is strict in JSON mode (:meth:`~pydantic.TypeAdapter.validate_json`
with ``strict=True``): ``"500"`` is not an integer, an ISO date string is a
date. An answer that fails is told to the model with the errors (as the
result of its final-result call, or a user message after a native answer) up
to ``output_retries`` times; then :class:`~toolwire.errors.OutputInvalid`.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, Union, get_args, get_origin

from pydantic import PydanticUserError, TypeAdapter, ValidationError

from toolwire.agent._partial import PartialOutput, Settled, Shape, shape_of
from toolwire.errors import UsageError
from toolwire.stream import jsonio
from toolwire.stream.codecs import model_has_structured_output, structured_output
from toolwire.stream.jsonschema import JSONSchema
from toolwire.tools import clean_schema, format_pydantic_errors

__all__ = [
    "FINAL_RESULT",
    "OutputFailure",
    "OutputMember",
    "OutputMode",
    "OutputSpec",
    "output_spec",
]

T = TypeVar("T")

OutputMode = Literal["auto", "native", "tool"]
"""How a typed run asks: ``auto`` (native where the dialect and model have
it, else the tool), ``native`` or ``tool``."""

FINAL_RESULT = "final_result"
"""The name of the final-result tool (``final_result_<Member>`` per union member)."""

WRAPPER = "response"
"""The one property of a wrapped schema."""

_DESCRIPTION = "Give your final answer: call this tool with it, as its arguments."


@dataclass(frozen=True, slots=True)
class OutputFailure:
    """An answer that did not validate: its raw text and what was wrong."""

    raw: str
    errors: tuple[tuple[str, str], ...]

    def feedback(self) -> str:
        """What the model is told."""
        lines = "; ".join(f"{path or 'the answer'}: {message}" for path, message in self.errors)
        return f"Your answer did not validate: {lines}. Answer again, fixing these."


@dataclass(frozen=True, slots=True, eq=False)
class OutputMember:
    """One member of an output type: a final-result tool, or the native schema.

    It has the attributes the dialects' tool shaping reads
    (:class:`~toolwire.stream.codecs.SchemaTool`)."""

    name: str
    adapter: TypeAdapter[Any]
    parameters: JSONSchema
    """The (object) schema the model answers to."""
    wrapped: bool
    description: str = _DESCRIPTION
    strict: bool | None = None
    freeform: Mapping[str, str] | None = None
    anthropic_eager_input_streaming: bool | None = None
    anthropic_toolset: str | None = None
    asynchronous: bool = False
    output_type: Any = None
    """The type this member validates to."""

    def validate(self, raw: str, *, strict: bool) -> Any:
        """The value of the JSON text ``raw``.

        Raises:
            ValidationError: it does not validate.
            ValueError: it is not JSON (or, wrapped, not an object with ``response``).
        """
        if not self.wrapped:
            return self.adapter.validate_json(raw, strict=strict)
        value = jsonio.loads(raw)
        if not isinstance(value, dict) or WRAPPER not in value:
            raise ValueError(f'the answer must be a JSON object {{"{WRAPPER}": ...}}')
        return self.adapter.validate_json(jsonio.dumps(value[WRAPPER]), strict=strict)

    def unwrap(self, partial: Any) -> Any:
        """The part of a partial JSON value that is the output's."""
        if self.wrapped:
            return partial.get(WRAPPER) if isinstance(partial, dict) else None
        return partial


class OutputSpec(Generic[T]):
    """The output a typed run asks for (see the module docstring)."""

    def __init__(self, output_type: Any, *, mode: OutputMode, strict: bool = True) -> None:
        if mode not in ("auto", "native", "tool"):
            raise UsageError(f"output_mode must be auto, native or tool, not {mode!r}")
        self.output_type = output_type
        self.mode = mode
        self.strict = strict
        self._shapes: dict[str, Shape | None] = {}
        try:
            found = _union_members(output_type)
            self.whole = _member(FINAL_RESULT, output_type)
            if len(found) > 1:
                self.members = tuple(
                    _member(f"{FINAL_RESULT}_{_type_name(m, i)}", m) for i, m in enumerate(found)
                )
            else:
                self.members = (self.whole,)
        except (PydanticUserError, TypeError, ValueError) as exc:
            raise UsageError(f"output_type {output_type!r} has no JSON Schema: {exc}") from exc

    def __repr__(self) -> str:
        return f"OutputSpec({self.output_type!r}, mode={self.mode!r})"

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.members)

    def mode_for(
        self, dialect: str, model: str, native: bool | None = None
    ) -> Literal["native", "tool"]:
        """How a run over ``dialect`` and ``model`` asks. With ``auto``, natively
        where the model has it (``native``, else the dialect's registration:
        :func:`~toolwire.stream.codecs.model_has_structured_output`) and the
        dialect can hold the answer to the schema; else by the tool.

        Raises:
            UsageError: ``native`` asked of a dialect that has none.
        """
        found = structured_output(dialect)
        if self.mode == "tool":
            return "tool"
        if self.mode == "native":
            if found is None:
                raise UsageError(f"{dialect} has no native structured output; use the tool")
            return "native"
        has = model_has_structured_output(dialect, model) if native is None else native
        if found is None or not has:
            return "tool"
        try:
            found.body(self.whole.name, self.whole.parameters)
        except ValueError:  # a schema the dialect cannot hold the model to
            return "tool"
        return "native"

    @property
    def schema_name(self) -> str:
        """The name native structured output gives the schema: the type's, else ``output``."""
        name = _type_name(self.output_type, -1)
        return name if name != "0" else "output"

    def native_body(self, dialect: str) -> dict[str, Any]:
        """The request members of native structured output in ``dialect``.

        Raises:
            UsageError: the dialect has none, or cannot express the schema.
        """
        native = structured_output(dialect)
        if native is None:
            raise UsageError(f"{dialect} has no native structured output; use output_mode='tool'")
        try:
            return native.body(self.schema_name, self.whole.parameters)
        except ValueError as exc:
            raise UsageError(f"{dialect} cannot hold an answer to this schema: {exc}") from exc

    def partial_output(self, member: OutputMember, settled: Settled) -> PartialOutput | None:
        """The builder of one answer's partial ``T`` (``None``: built only whole)."""
        if member.name not in self._shapes:
            self._shapes[member.name] = shape_of(member.output_type)
        shape = self._shapes[member.name]
        if shape is None:
            return None
        depth = 1 if member.wrapped else 0
        return PartialOutput(shape, settled, depth=depth, strict=self.strict)

    def member(self, tool: str) -> OutputMember | None:
        """The member whose final-result tool is called ``tool``."""
        for m in self.members:
            if m.name == tool:
                return m
        return None

    def check(self, member: OutputMember, raw: str) -> T | OutputFailure:
        """The output ``raw`` gives, or why it does not."""
        try:
            value: T = member.validate(raw, strict=self.strict)
        except ValidationError as exc:
            return OutputFailure(raw, tuple(format_pydantic_errors(exc)))
        except ValueError as exc:
            return OutputFailure(raw, (("", str(exc)),))
        return value


def output_spec(
    output_type: Any, mode: OutputMode = "auto", *, strict: bool = True
) -> OutputSpec[Any] | None:
    """The spec of ``output_type``; ``None`` for ``str`` (a plain text answer)."""
    if output_type is None or output_type is str:
        return None
    return OutputSpec(output_type, mode=mode, strict=strict)


def _union_members(output_type: Any) -> tuple[Any, ...]:
    if get_origin(output_type) in (Union, types.UnionType):
        return get_args(output_type)
    return (output_type,)


def _type_name(member: Any, index: int) -> str:
    name = getattr(member, "__name__", "")
    if not isinstance(name, str) or get_origin(member) is not None:
        name = ""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:40]
    return name or str(index + 1)


def _member(name: str, output_type: Any) -> OutputMember:
    adapter: TypeAdapter[Any] = TypeAdapter(output_type)
    raw = adapter.json_schema()
    if raw.get("type") == "object" and "properties" in raw:
        return OutputMember(
            name, adapter, clean_schema(raw), wrapped=False, output_type=output_type
        )
    defs = raw.pop("$defs", None)
    wrapper: JSONSchema = {
        "type": "object",
        "properties": {WRAPPER: raw},
        "required": [WRAPPER],
        "additionalProperties": False,
    }
    if defs:
        wrapper["$defs"] = defs
    return OutputMember(name, adapter, clean_schema(wrapper), wrapped=True, output_type=output_type)
