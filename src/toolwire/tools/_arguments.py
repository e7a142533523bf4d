"""Validating a call's arguments before anything runs.

:class:`Arguments` holds a tool's validator (its Pydantic model, or its
explicit JSON Schema) and turns the model's parsed arguments into the
function's ``args``/``kwargs`` (:class:`Prepared`), or into ``(path,
message)`` errors described to the model by :func:`describe_errors`, so a bad
argument never reaches the function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from toolwire.tools._schema import JSONSchema, drop_null_defaults
from toolwire.tools._signature import Param
from toolwire.tools._validation import format_pydantic_errors, validate_instance

__all__ = ["Arguments", "Prepared", "describe_errors"]

Errors = list[tuple[str, str]]


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
    """

    def __init__(
        self,
        parameters: JSONSchema,
        *,
        model: type[BaseModel] | None = None,
        params: tuple[Param, ...] = (),
    ) -> None:
        self.parameters = parameters
        self.model = model
        self.params = params
        self._raw_schema: JSONSchema = (
            model.model_json_schema(by_alias=True) if model is not None else parameters
        )

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the arguments, in declaration order."""
        if self.model is not None:
            return tuple(p.name for p in self.params)
        props = self.parameters.get("properties", {})
        return tuple(props) if isinstance(props, dict) else ()

    def prepare(self, arguments: Any) -> tuple[Prepared | None, Errors]:
        """Validate arguments; return the call's pieces or the errors."""
        if not isinstance(arguments, Mapping):
            return None, [
                ("(arguments)", f"expected a JSON object (got {type(arguments).__name__})")
            ]
        cleaned = drop_null_defaults(dict(arguments), self._raw_schema)
        if self.model is None:
            errors = validate_instance(cleaned, self.parameters)
            if errors:
                return None, errors
            return Prepared(cleaned, (), dict(cleaned)), []
        try:
            instance = self.model.model_validate(cleaned)
        except ValidationError as exc:
            return None, format_pydantic_errors(exc, allowed=self.names)
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
