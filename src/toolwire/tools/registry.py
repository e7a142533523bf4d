"""Tools: a typed description of a Python function that a model may call.

Theory of operation: :func:`tool` reads a function once, at decoration time,
and keeps everything the rest of toolwire needs: the name, the description and
per-parameter descriptions from the docstring, a Pydantic model built from the
type hints (the validator), and the JSON Schema that model produces (the
``parameters`` sent to providers). Nothing is inferred again per call.

A parameter annotated with :class:`ToolContext` is not part of the schema: the
executor fills it with the call id, an idempotency key stable across retries of
that call, the attempt number and the run's metadata. A tool that takes it is
*idempotent-capable*, which is why :attr:`Tool.idempotent` is true for it.

Validation happens in :meth:`Tool.validate` (public, raises) and in the
executor through :meth:`Tool._prepare` (returns errors as data), so a bad
argument is described to the model instead of reaching the function.
"""

from __future__ import annotations

import inspect
import logging
import re
import types
import typing
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import PydanticJsonSchemaWarning

from toolwire.errors import ToolArgumentsInvalid, UsageError
from toolwire.tools._docstrings import parse_docstring
from toolwire.tools._schema import (
    JSONSchema,
    NotStrictCompatible,
    clean_schema,
    drop_null_defaults,
    format_pydantic_errors,
    to_openai_strict,
    validate_instance,
)

__all__ = ["RetryOn", "Tool", "ToolContext", "tool"]

logger = logging.getLogger("toolwire.tools")

# The intersection of what OpenAI, Anthropic and Gemini accept as a tool name.
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")

RetryOn = type[BaseException] | tuple[type[BaseException], ...] | Callable[[BaseException], bool]
"""Which exceptions a tool retries: exception classes, or a predicate."""

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """What a running tool may know about its call.

    Declare a parameter annotated ``ToolContext`` (any name, ``ctx`` by
    convention) to receive it; it never appears in the tool's schema.
    """

    call_id: str
    """The id of the tool call being run."""
    idempotency_key: str
    """A key that is the same for every attempt of this call, and again when a
    journal resumes the run: pass it to services that deduplicate writes."""
    attempt: int = 1
    """1 for the first attempt, 2 for the first retry..."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Whatever the caller passed as ``metadata`` to ``execute()``."""
    tool_name: str = ""
    """The name of the tool being run."""
    run_id: str | None = None
    """The run id passed to ``execute()``, if any."""


@dataclass(frozen=True, slots=True)
class _Param:
    """How one schema property maps to the Python call."""

    key: str
    """The field name inside the Pydantic model (``p0``, ``p1``...)."""
    name: str
    """The parameter name, also the JSON property name."""
    positional_only: bool


@dataclass(frozen=True, slots=True)
class _Prepared:
    """Validated arguments, ready for a call."""

    arguments: dict[str, Any]
    """JSON-ready form, recorded in the result and shown to approvers."""
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


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


def _type_hints(func: Callable[..., Any]) -> dict[str, Any]:
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


def _context_param(func: Callable[..., Any]) -> str | None:
    """The name of the parameter that receives a ToolContext, if any."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    hints = _type_hints(func)
    for param in sig.parameters.values():
        if _is_context(hints.get(param.name, param.annotation)):
            return param.name
    return None


def _is_async(func: Callable[..., Any]) -> bool:
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


class Tool:
    """A function a model can call, with its schema and execution options.

    Build one with :func:`tool` (from type hints and a docstring) or
    :meth:`Tool.from_schema` (from an explicit JSON Schema). Calling the tool
    object calls the underlying function directly, unvalidated.

    Attributes:
        name: the name the model calls the tool by.
        description: what the tool does and when to use it.
        parameters: the JSON Schema of the arguments (canonical form).
        function: the Python callable.
        timeout: seconds an attempt may take; ``None`` uses the toolbox default.
        retries: how many times a transient failure is retried.
        retry_on: which exceptions count as transient; ``None`` uses
            :func:`toolwire.tools.is_transient`.
        fallback: called with the same arguments when all attempts failed.
        read_only: the tool changes nothing (safe to repeat or run early).
        requires_approval: the toolbox asks its approval callback first.
        sequential: the tool runs alone: calls before it finish first, calls
            after it wait for it.
        strict: ``True`` requires an OpenAI strict-mode schema, ``False``
            never sends one, ``None`` sends one when the schema allows it.
        max_result_chars: result size budget; ``None`` uses the toolbox's.
        idempotent: repeating a call with the same idempotency key is safe.
        dedupe: identical calls in one batch run once.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str,
        description: str,
        parameters: JSONSchema,
        model: type[BaseModel] | None = None,
        params: tuple[_Param, ...] = (),
        context_param: str | None = None,
        timeout: float | None = None,
        retries: int | None = None,
        retry_on: RetryOn | None = None,
        fallback: Callable[..., Any] | None = None,
        read_only: bool = False,
        requires_approval: bool = False,
        sequential: bool = False,
        strict: bool | None = None,
        max_result_chars: int | None = None,
        idempotent: bool | None = None,
        dedupe: bool = True,
    ) -> None:
        if not _NAME_RE.fullmatch(name):
            raise UsageError(
                f"invalid tool name {name!r}: use 1-64 letters, digits, '_' or '-', "
                "starting with a letter or '_'"
            )
        if timeout is not None and not timeout > 0:
            raise UsageError(f"tool {name!r}: timeout must be a positive number of seconds")
        if retries is not None and retries < 0:
            raise UsageError(f"tool {name!r}: retries must be >= 0")
        if max_result_chars is not None and max_result_chars < 1:
            raise UsageError(f"tool {name!r}: max_result_chars must be >= 1")
        self.function = function
        self.name = name
        self.description = description
        self.parameters = parameters
        self.timeout = timeout
        self.read_only = read_only
        self.requires_approval = requires_approval
        self.sequential = sequential
        self.max_result_chars = max_result_chars
        self.context_param = context_param
        self.idempotent = bool(idempotent) if idempotent is not None else context_param is not None
        # Repeating is safe for tools that change nothing or that can
        # deduplicate by key, so those retry transient errors by default.
        self.retries = (
            retries if retries is not None else (2 if read_only or self.idempotent else 0)
        )
        self.retry_on = retry_on
        self.fallback = fallback
        self.fallback_context_param = _context_param(fallback) if fallback is not None else None
        self.dedupe = dedupe
        self.is_async = _is_async(function)
        self._model = model
        self._params = params
        self._raw_schema: JSONSchema = (
            model.model_json_schema(by_alias=True) if model is not None else parameters
        )
        self.strict: bool | None = strict
        self._strict_parameters: JSONSchema | None = None
        self._strict_problem: str | None = None
        if strict is not False:
            try:
                self._strict_parameters = to_openai_strict(parameters)
            except NotStrictCompatible as exc:
                self._strict_problem = str(exc)
                if strict:
                    raise UsageError(
                        f"tool {name!r} cannot have an OpenAI strict-mode schema: {exc}"
                    ) from exc
        if not description:
            logger.warning(
                "tool %r has no description: models choose tools by their description", name
            )

    # -- construction -------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        **options: Any,
    ) -> Tool:
        """Build a tool from a type-hinted function (what :func:`tool` does).

        Args:
            function: a sync or async callable.
            name: the tool name; defaults to the function's ``__name__``.
            description: overrides the docstring's description.
            **options: any option of :func:`tool`.

        Raises:
            UsageError: the function cannot be described (``*args``, a type
                Pydantic cannot build a schema for, an unresolvable hint...).
        """
        try:
            sig = inspect.signature(function)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"cannot read the signature of {function!r}: {exc}") from exc
        hints = _type_hints(function)
        doc = parse_docstring(inspect.getdoc(function))
        tool_name = name or getattr(function, "__name__", None) or type(function).__name__
        fields: dict[str, Any] = {}
        params: list[_Param] = []
        context_param: str | None = None
        for index, param in enumerate(sig.parameters.values()):
            hint = hints.get(param.name, Any)
            if _is_context(hint):
                context_param = param.name
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
            params.append(_Param(key, param.name, param.kind is param.POSITIONAL_ONLY))
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
        return cls(
            function,
            name=tool_name,
            description=description if description is not None else doc.description,
            parameters=schema,
            model=model,
            params=tuple(params),
            context_param=context_param,
            **options,
        )

    @classmethod
    def from_schema(
        cls,
        function: Callable[..., Any],
        *,
        name: str,
        parameters: Mapping[str, Any],
        description: str = "",
        **options: Any,
    ) -> Tool:
        """Build a tool from an explicit JSON Schema.

        The function receives the validated arguments as keyword arguments
        (plus a :class:`ToolContext` if it declares one).

        Args:
            function: a sync or async callable.
            name: the tool name.
            parameters: a JSON Schema describing an object.
            description: what the tool does and when to use it.
            **options: any option of :func:`tool`.

        Raises:
            UsageError: the schema does not describe an object.
        """
        if not isinstance(parameters, Mapping) or parameters.get("type", "object") != "object":
            raise UsageError(f"tool {name!r}: parameters must be a JSON Schema of type object")
        return cls(
            function,
            name=name,
            description=description,
            parameters=clean_schema(dict(parameters)),
            context_param=_context_param(function),
            **options,
        )

    # -- use ----------------------------------------------------------------

    @property
    def strict_parameters(self) -> JSONSchema | None:
        """The OpenAI strict-mode form of :attr:`parameters`, or ``None``.

        ``None`` when :attr:`strict` is ``False`` or when the schema needs a
        feature strict mode lacks (see :attr:`strict_problem`).
        """
        return self._strict_parameters

    @property
    def strict_problem(self) -> str | None:
        """Why the schema has no strict-mode form, when it has none."""
        return self._strict_problem

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The names of the arguments, in declaration order."""
        if self._model is not None:
            return tuple(p.name for p in self._params)
        props = self.parameters.get("properties", {})
        return tuple(props) if isinstance(props, dict) else ()

    def _prepare(self, arguments: Any) -> tuple[_Prepared | None, list[tuple[str, str]]]:
        """Validate arguments; return the call's pieces or the errors."""
        if not isinstance(arguments, Mapping):
            return None, [
                ("(arguments)", f"expected a JSON object (got {type(arguments).__name__})")
            ]
        cleaned = drop_null_defaults(dict(arguments), self._raw_schema)
        if self._model is None:
            errors = validate_instance(cleaned, self.parameters)
            if errors:
                return None, errors
            return _Prepared(cleaned, (), dict(cleaned)), []
        try:
            instance = self._model.model_validate(cleaned)
        except ValidationError as exc:
            return None, format_pydantic_errors(exc, allowed=self.parameter_names)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for param in self._params:
            value = getattr(instance, param.key)
            if param.positional_only:
                args.append(value)
            else:
                kwargs[param.name] = value
        try:
            dumped = instance.model_dump(mode="json", by_alias=True)
        except Exception:  # a value without a JSON form: record what was sent
            dumped = dict(cleaned)
        return _Prepared(dumped, tuple(args), kwargs), []

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validate arguments as the executor does, without running the tool.

        Args:
            arguments: the parsed arguments of a call.

        Returns:
            The validated arguments in JSON form (defaults not included).

        Raises:
            ToolArgumentsInvalid: with a message naming each bad field.
        """
        prepared, errors = self._prepare(arguments)
        if prepared is None:
            raise ToolArgumentsInvalid(describe_errors(self.name, errors))
        return prepared.arguments

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (no validation, no timeout)."""
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, read_only={self.read_only}, sequential={self.sequential})"


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


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    retry_on: RetryOn | None = None,
    fallback: Callable[..., Any] | None = None,
    read_only: bool = False,
    requires_approval: bool = False,
    sequential: bool = False,
    strict: bool | None = None,
    max_result_chars: int | None = None,
    idempotent: bool | None = None,
    dedupe: bool = True,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    retry_on: RetryOn | None = None,
    fallback: Callable[..., Any] | None = None,
    read_only: bool = False,
    requires_approval: bool = False,
    sequential: bool = False,
    strict: bool | None = None,
    max_result_chars: int | None = None,
    idempotent: bool | None = None,
    dedupe: bool = True,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a tool from a sync or async function: ``@tool`` or ``@tool(...)``.

    The name, description and argument descriptions come from the function and
    its docstring (Google, NumPy or Sphinx style); the JSON Schema and the
    validator come from the type hints through Pydantic (``Literal`` and
    ``Enum`` become ``enum``, ``Annotated[int, Field(ge=1)]`` constraints,
    defaults, ``Optional``, nested models and lists all carry over). A
    parameter annotated :class:`ToolContext` is filled by the executor.

    Args:
        func: the function (when used as ``@tool`` without parentheses).
        name: the tool name; defaults to the function name.
        description: overrides the docstring description.
        timeout: seconds each attempt may take before it is cancelled.
        retries: extra attempts for transient errors; defaults to 2 for
            read-only or idempotent tools and 0 for the others.
        retry_on: exception classes, or a predicate, that count as transient.
        fallback: called with the same arguments when every attempt failed.
        read_only: the tool has no side effects.
        requires_approval: ask the toolbox's approval callback before running.
        sequential: run alone, as a barrier between the calls before and after.
        strict: OpenAI strict-mode schema: required (``True``), never
            (``False``) or when possible (``None``).
        max_result_chars: cut results longer than this.
        idempotent: repeating a call with the same idempotency key is safe
            (defaults to whether the function takes a ``ToolContext``).
        dedupe: run identical calls of one batch once (default ``True``).

    Returns:
        A :class:`Tool`, or a decorator that makes one.
    """
    options: dict[str, Any] = {
        "timeout": timeout,
        "retries": retries,
        "retry_on": retry_on,
        "fallback": fallback,
        "read_only": read_only,
        "requires_approval": requires_approval,
        "sequential": sequential,
        "strict": strict,
        "max_result_chars": max_result_chars,
        "idempotent": idempotent,
        "dedupe": dedupe,
    }

    def decorate(function: Callable[..., Any]) -> Tool:
        if isinstance(function, Tool):
            raise UsageError(f"{function.name!r} is already a tool")
        return Tool.from_function(function, name=name, description=description, **options)

    if func is not None:
        return decorate(func)
    return decorate
