"""Validating a call's arguments before anything runs.

:class:`Arguments` holds a tool's validator (its Pydantic model, or its
explicit JSON Schema) and turns the model's parsed arguments into the
function's ``args``/``kwargs`` (:class:`Prepared`), or into ``(path,
message)`` errors described to the model by :func:`describe_errors`, so a bad
argument never reaches the function.

The model's input is held to JSON as written, strictly, by default:

* no conversions between JSON types: ``true`` is not ``1``, ``"500"`` and
  ``500.0`` are not the integer ``500`` (a payment tool must not pay what the
  model did not say); conversions *from* JSON that JSON has no type for stay
  (an ISO date string to a ``date``, a string to its ``Enum`` member, an array
  to a ``tuple``, an integer to a ``float``);
* no ``NaN`` or ``Infinity`` (nor a number too large to be finite): they are
  not JSON numbers;
* no key twice in one object (which value would the model have meant?);
* no NUL character in a string, unless the tool opts in (``allow_nul``);
* no nesting deeper than :data:`MAX_DEPTH`.

A tool that wants lax conversions says so (``@tool(coerce=True)``): Pydantic's
lax mode then decides, as it documents.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from toolwire.tools._schema import JSONSchema, drop_null_defaults
from toolwire.tools._signature import Param
from toolwire.tools._validation import format_pydantic_errors, path_of, validate_instance

__all__ = ["MAX_DEPTH", "Arguments", "Prepared", "describe_errors", "json_problems"]

Errors = list[tuple[str, str]]

MAX_DEPTH = 100
"""How deeply a call's arguments may nest (objects and arrays)."""


def json_problems(value: Any, raw: str | None = None, *, allow_nul: bool = False) -> Errors:
    """What makes ``value`` (parsed from ``raw``, the model's text) not strict JSON:
    NaN or infinite numbers, NUL characters, nesting beyond :data:`MAX_DEPTH`,
    and keys written twice in one object (only ``raw`` shows those)."""
    if _flat_and_clean(value):
        return _written_twice(raw, len(value))
    errors: Errors = []
    keys = 0
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(value, ())]
    while stack:
        item, loc = stack.pop()
        if len(loc) > MAX_DEPTH:
            return [(path_of(loc[:3]) + "...", f"nested more than {MAX_DEPTH} levels deep")]
        if isinstance(item, float) and not math.isfinite(item):
            errors.append((path_of(loc), "NaN and Infinity are not JSON numbers"))
        elif isinstance(item, str):
            if "\x00" in item and not allow_nul:
                errors.append((path_of(loc), "NUL characters (\\u0000) are not accepted"))
        elif isinstance(item, Mapping):
            keys += len(item)
            for key in reversed(list(item)):
                if "\x00" in key and not allow_nul:
                    errors.append(
                        (path_of(loc), "NUL characters (\\u0000) are not accepted in keys")
                    )
                stack.append((item[key], (*loc, key)))
        elif isinstance(item, list):
            stack.extend((item[i], (*loc, i)) for i in reversed(range(len(item))))
    return errors or _written_twice(raw, keys)


def _flat_and_clean(value: Any) -> bool:
    """Whether ``value`` is an object of strings without NUL characters,
    booleans, integers and nulls, under keys without NUL characters: nothing
    for the walk of :func:`json_problems` to find (what it would say of
    anything else is left to it)."""
    if type(value) is not dict:
        return False
    for key, item in value.items():
        if type(key) is not str or "\x00" in key:
            return False
        kind = type(item)
        if kind is str:
            if "\x00" in item:
                return False
        elif kind is not bool and kind is not int and item is not None:
            return False
    return True


def _written_twice(raw: str | None, keys: int) -> Errors:
    """The keys ``raw`` writes twice in one object, given the parsed value's
    number of keys."""
    if raw and len(_KEY_END.findall(raw)) != keys:
        return _duplicate_keys(raw)
    return []


_KEY_END = re.compile(r'"[ \t\n\r]*:')
"""Where a key of JSON text ends. Every key of the text matches once (its
closing quote, JSON whitespace, the colon: one quote per match, so no two
keys share one), and text inside strings may match too: as many matches as
keys in the parsed value means no key was written twice, without parsing the
text again."""


def _duplicate_keys(raw: str) -> Errors:
    repeated: list[str] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                repeated.append(key)
            seen.add(key)
        return dict(pairs)

    try:
        json.loads(raw, object_pairs_hook=pairs_hook)
    except (ValueError, RecursionError):  # text that needed repair: the parsed value decides
        return []
    return [
        ("(arguments)", f"the key {key!r} is written more than once in one object; send it once")
        for key in dict.fromkeys(repeated)
    ]


@dataclass(frozen=True, slots=True)
class Prepared:
    """Validated arguments, ready for a call."""

    arguments: dict[str, Any]
    """JSON-ready form, recorded in the result and shown to approvers."""
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class Arguments:
    """A tool's argument validator.

    Args:
        parameters: the tool's JSON Schema.
        model: the Pydantic model of a tool built from a function (``None``
            for a tool built from an explicit schema).
        params: how the model's fields map to the function's parameters.
        coerce: accept lax conversions (``"500"`` or ``500.0`` for an integer,
            ``true`` for ``1``...); strict by default.
        allow_nul: accept NUL characters in strings.
    """

    def __init__(
        self,
        parameters: JSONSchema,
        *,
        model: type[BaseModel] | None = None,
        params: tuple[Param, ...] = (),
        coerce: bool = False,
        allow_nul: bool = False,
    ) -> None:
        self.parameters = parameters
        self.model = model
        self.params = params
        self.coerce = coerce
        self.allow_nul = allow_nul
        self._raw_schema: JSONSchema = (
            model.model_json_schema(by_alias=True) if model is not None else parameters
        )
        self._plain = _plain_fields(model, params)

    def with_options(self, *, coerce: bool, allow_nul: bool) -> Arguments:
        """This validator with other strictness options."""
        if (coerce, allow_nul) == (self.coerce, self.allow_nul):
            return self
        other = copy.copy(self)
        other.coerce, other.allow_nul = coerce, allow_nul
        return other

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the arguments, in declaration order."""
        if self.model is not None:
            return tuple(p.name for p in self.params)
        props = self.parameters.get("properties", {})
        return tuple(props) if isinstance(props, dict) else ()

    def prepare(self, arguments: Any, *, raw: str | None = None) -> tuple[Prepared | None, Errors]:
        """Validate arguments; return the call's pieces or the errors.

        Args:
            arguments: the parsed arguments.
            raw: the model's text they were parsed from, when there is one
                (only the text shows a key written twice).
        """
        if not isinstance(arguments, Mapping):
            return None, [
                ("(arguments)", f"expected a JSON object (got {type(arguments).__name__})")
            ]
        problems = json_problems(arguments, raw, allow_nul=self.allow_nul)
        if problems:
            return None, problems
        if self._plain is not None and not self.coerce:
            plain = _prepare_plain(arguments, self._plain)
            if plain is not None:
                return plain, []
        cleaned = drop_null_defaults(dict(arguments), self._raw_schema)
        if self.model is None:
            errors = validate_instance(cleaned, self.parameters, strict=not self.coerce)
            if errors:
                return None, errors
            return Prepared(cleaned, (), dict(cleaned)), []
        # JSON types strictly (unless the tool coerces), then Pydantic, which
        # converts within them; every problem is reported at once.
        strict_errors = (
            [] if self.coerce else validate_instance(cleaned, self._raw_schema, types_only=True)
        )
        try:
            instance = self.model.model_validate(cleaned)
        except ValidationError as exc:
            errors = format_pydantic_errors(exc, allowed=self.names)
            flagged = {where for where, _ in errors}
            return None, errors + [e for e in strict_errors if e[0] not in flagged]
        if strict_errors:
            return None, strict_errors
        if self.coerce:
            # Lax conversions may make NaN or an infinity of a string
            # ("NaN", "Infinity", "1e999"): no more a number than JSON's own.
            converted = json_problems(instance.model_dump(), allow_nul=True)
            if converted:
                return None, converted
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for param in self.params:
            value = getattr(instance, param.key)
            if param.positional_only:
                args.append(value)
            else:
                kwargs[param.name] = value
        try:
            dumped = instance.model_dump(mode="json", by_alias=True)
        except Exception:  # a value without a JSON form: record what was sent
            dumped = dict(cleaned)
        return Prepared(dumped, tuple(args), kwargs), []


PlainField = tuple[str, type, bool]
"""A parameter's name, its JSON type (``str`` or ``bool``), and whether it is
positional-only."""


def _plain_fields(
    model: type[BaseModel] | None, params: tuple[Param, ...]
) -> tuple[PlainField, ...] | None:
    """The fields of a model whose arguments validation gives back unchanged,
    or ``None`` when one might change or refuse a well-typed value.

    Every field must be required and annotated plain ``str`` or ``bool``,
    without constraints, default or other alias than its parameter name, and
    the model without validators or serializers of its own: then a value of
    exactly that type passes the strict types check and Pydantic as it is,
    and is dumped as it is."""
    if model is None or model.model_config.get("extra") != "forbid":
        return None
    decorators = model.__pydantic_decorators__
    if any(
        (
            decorators.validators,
            decorators.field_validators,
            decorators.root_validators,
            decorators.field_serializers,
            decorators.model_serializers,
            decorators.model_validators,
            decorators.computed_fields,
        )
    ):
        return None
    fields = model.model_fields
    if [p.key for p in params] != list(fields):
        return None
    plain: list[PlainField] = []
    for param in params:
        info = fields[param.key]
        if (
            info.annotation not in (str, bool)
            or info.metadata
            or not info.is_required()
            or info.alias != param.name
            or info.validation_alias not in (None, param.name)
            or info.serialization_alias not in (None, param.name)
        ):
            return None
        plain.append((param.name, info.annotation, param.positional_only))
    return tuple(plain)


def _prepare_plain(arguments: Mapping[str, Any], fields: tuple[PlainField, ...]) -> Prepared | None:
    """The prepared call when every field is given once, a value of exactly
    its type, and nothing else is (what the full path would return); ``None``
    to let the full path decide, and word any error."""
    if type(arguments) is not dict or len(arguments) != len(fields):
        return None
    dumped: dict[str, Any] = {}
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for name, kind, positional in fields:
        value = arguments.get(name, None)
        if type(value) is not kind:
            return None
        dumped[name] = value
        if positional:
            args.append(value)
        else:
            kwargs[name] = value
    return Prepared(dumped, tuple(args), kwargs)


def describe_errors(tool_name: str, errors: list[tuple[str, str]]) -> str:
    """The message a model gets for invalid arguments.

    Args:
        tool_name: the tool called.
        errors: ``(path, message)`` pairs.
    """
    lines = [f"Invalid arguments for tool {tool_name!r}:"]
    lines += [f"- {path}: {message}" for path, message in errors[:10]]
    if len(errors) > 10:
        lines.append(f"- ... and {len(errors) - 10} more problems")
    lines.append("Fix these arguments and call the tool again.")
    return "\n".join(lines)
