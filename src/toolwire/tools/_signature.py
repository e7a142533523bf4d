"""Reading a Python function once, for a tool: its parameters, its type hints,
the Pydantic model that validates its arguments and the JSON Schema that model
produces.

Theory of operation: one Pydantic field per parameter, aliased to the
parameter's name and keyed ``p0``, ``p1``... so that names such as ``json`` or
``model_name`` never clash with Pydantic's own attributes. A parameter
annotated :class:`~toolwire.tools.ToolContext` is not part of the model: the
toolbox fills it. Nothing here is done again per call.
"""

from __future__ import annotations

import inspect
import types
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import PydanticJsonSchemaWarning

from toolwire.errors import UsageError
from toolwire.tools._context import ToolContext
from toolwire.tools._docstrings import parse_docstring
from toolwire.tools._schema import JSONSchema, clean_schema

__all__ = ["Param", "Signature", "context_param", "is_async", "read_signature", "type_hints"]


@dataclass(frozen=True, slots=True)
class Param:
    """How one schema property maps to the Python call."""

    key: str
    """The field name inside the Pydantic model (``p0``, ``p1``...)."""
    name: str
    """The parameter name, also the JSON property name."""
    positional_only: bool


@dataclass(frozen=True, slots=True)
class Signature:
    """What a function tells a tool about itself."""

    name: str
    """The tool name: the one asked for, else the function's name."""
    description: str
    """The docstring's description."""
    model: type[BaseModel]
    """The validator of the arguments."""
    parameters: JSONSchema
    """The cleaned JSON Schema of the arguments."""
    params: tuple[Param, ...]
    context_param: str | None
    """The parameter that receives a ToolContext, if any."""


def _is_context(hint: Any) -> bool:
    if hint is ToolContext:
        return True
    origin = typing.get_origin(hint)
    if origin is Annotated:
        return _is_context(typing.get_args(hint)[0])
    if origin is typing.Union or type(hint).__name__ == "UnionType":
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return len(args) == 1 and args[0] is ToolContext
    return False


def _callable_target(func: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isfunction(func) or inspect.ismethod(func) or inspect.isbuiltin(func):
        return func
    call = getattr(func, "__call__", None)  # noqa: B004 - a callable object's method
    return call if call is not None and not inspect.isclass(func) else func


def type_hints(func: Callable[..., Any]) -> dict[str, Any]:
    target = _callable_target(func)
    while hasattr(target, "func") and not hasattr(target, "__code__"):  # functools.partial
        target = target.func
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # NameError for unresolvable forward references, and more
        first_error = exc
    # The return annotation may name a type only the function body can see
    # (a local class); it is not needed, so resolve the parameters alone.
    annotations = {k: v for k, v in getattr(target, "__annotations__", {}).items() if k != "return"}
    try:
        localns = dict(inspect.getclosurevars(target).nonlocals)
    except (TypeError, ValueError):
        localns = {}
    shim = types.SimpleNamespace(
        __annotations__=annotations, __globals__=getattr(target, "__globals__", {})
    )
    try:
        return typing.get_type_hints(shim, localns=localns, include_extras=True)
    except Exception:
        raise UsageError(
            f"cannot read the type hints of {getattr(func, '__qualname__', func)!r}: {first_error}"
        ) from first_error


def context_param(func: Callable[..., Any]) -> str | None:
    """The name of the parameter that receives a ToolContext, if any."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    hints = type_hints(func)
    for param in sig.parameters.values():
        if _is_context(hints.get(param.name, param.annotation)):
            return param.name
    return None


def is_async(func: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(func):
        return True
    call = getattr(func, "__call__", None)  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


def _has_field_description(hint: Any) -> bool:
    if typing.get_origin(hint) is not Annotated:
        return False
    return any(
        isinstance(meta, FieldInfo) and meta.description for meta in typing.get_args(hint)[1:]
    )


def read_signature(function: Callable[..., Any], *, name: str | None = None) -> Signature:
    """Read ``function``: its parameters, hints and docstring, as a tool needs them.

    Raises:
        UsageError: the function cannot be described (``*args``, a type
            Pydantic cannot build a schema for, an unresolvable hint...).
    """
    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"cannot read the signature of {function!r}: {exc}") from exc
    hints = type_hints(function)
    doc = parse_docstring(inspect.getdoc(function))
    tool_name = name or getattr(function, "__name__", None) or type(function).__name__
    fields: dict[str, Any] = {}
    params: list[Param] = []
    context: str | None = None
    for index, param in enumerate(sig.parameters.values()):
        hint = hints.get(param.name, Any)
        if _is_context(hint):
            context = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise UsageError(
                f"tool {tool_name!r}: *{param.name} parameters cannot be described to a "
                "model; declare each argument"
            )
        key = f"p{index}"
        info: dict[str, Any] = {"alias": param.name}
        if param.default is not param.empty:
            info["default"] = param.default
        if param.name in doc.params and not _has_field_description(hint):
            info["description"] = doc.params[param.name]
        fields[key] = (hint, Field(**info))
        params.append(Param(key, param.name, param.kind is param.POSITIONAL_ONLY))
    model, schema = _build_model(tool_name, fields)
    return Signature(tool_name, doc.description, model, schema, tuple(params), context)


def _build_model(tool_name: str, fields: dict[str, Any]) -> tuple[type[BaseModel], JSONSchema]:
    try:
        model = create_model(
            f"{tool_name}_arguments",
            __config__=ConfigDict(
                extra="forbid", protected_namespaces=(), arbitrary_types_allowed=False
            ),
            **fields,
        )
        with warnings.catch_warnings():
            # A default that is not JSON (a sentinel object) is left out of
            # the schema; that is fine, the function still applies it.
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            schema = clean_schema(model.model_json_schema(by_alias=True))
    except UsageError:
        raise
    except Exception as exc:  # PydanticSchemaGenerationError, PydanticUserError...
        raise UsageError(f"tool {tool_name!r}: cannot build a schema: {exc}") from exc
    return model, schema
