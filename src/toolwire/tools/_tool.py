"""Tools: a typed description of a Python function that a model may call.

Theory of operation: :func:`tool` reads a function once, at decoration time
(:mod:`toolwire.tools._signature`), and keeps everything the rest of toolwire
needs: the name, the description and per-parameter descriptions from the
docstring, the argument validator, and the JSON Schema sent to providers.
Nothing is inferred again per call.

A parameter annotated :class:`ToolContext` is not part of the schema: the
toolbox fills it with the call id, an idempotency key stable across retries of
that call, the attempt number and the run's metadata. Taking it does not make
a tool idempotent: only the tool knows whether it uses the key to deduplicate,
so it says so (``idempotent=True``) before it is retried or re-run on resume.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, overload

from toolwire.errors import ToolArgumentsInvalid, UsageError
from toolwire.stream.codecs import registered
from toolwire.tools._arguments import Arguments, describe_errors
from toolwire.tools._options import RetryOn, ToolOptions, tool_options
from toolwire.tools._schema import clean_schema
from toolwire.tools._signature import context_param, is_async, read_signature

__all__ = ["Tool", "tool"]

logger = logging.getLogger("toolwire.tools")

# The intersection of what OpenAI, Anthropic and Gemini accept as a tool name.
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def _check_options(
    name: str, timeout: float | None, retries: int | None, max_result_chars: int | None
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
        arguments: the argument validator.
        options: the :class:`ToolOptions` it was made with. Each option is
            also an attribute of the tool (``tool.timeout``,
            ``tool.read_only``...; ``coerce`` and ``allow_nul`` are the
            validator's, ``tool.arguments.coerce``), resolved: ``retries``
            and ``accept_repaired`` hold their defaults, ``idempotent`` is a
            bool, ``freeform`` the grammar (``None`` for a function tool).
    """

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str,
        description: str,
        arguments: Arguments,
        context_param: str | None = None,
        options: ToolOptions | None = None,
        **option_values: Any,
    ) -> None:
        opts = tool_options(option_values)
        if options is not None:
            opts = replace(options, **option_values)
        _check_options(name, opts.timeout, opts.retries, opts.max_result_chars)
        self.options = opts
        self.function = function
        self.name = name
        self.description = description
        self.arguments = arguments.with_options(coerce=opts.coerce, allow_nul=opts.allow_nul)
        self.parameters = arguments.parameters
        self.timeout = opts.timeout
        self.read_only = read_only = opts.read_only
        self.requires_approval = opts.requires_approval
        self.external = opts.external
        self.sequential = opts.sequential
        self.max_result_chars = opts.max_result_chars
        self.context_param = context_param
        self.idempotent = bool(opts.idempotent)
        accept_repaired = opts.accept_repaired
        self.accept_repaired = read_only if accept_repaired is None else bool(accept_repaired)
        # Repeating is safe for tools that change nothing or that can
        # deduplicate by key, so those retry transient errors by default.
        default_retries = 2 if read_only or self.idempotent else 0
        self.retries = opts.retries if opts.retries is not None else default_retries
        self.retry_on = opts.retry_on
        self.fallback = opts.fallback
        self.fallback_context_param = context_param_of(opts.fallback)
        self.dedupe = opts.dedupe
        self.is_async = is_async(function)
        self.strict = opts.strict
        self.freeform = _freeform(name, opts.freeform, self.parameters)
        self.anthropic_eager_input_streaming = opts.anthropic_eager_input_streaming
        self.anthropic_toolset = opts.anthropic_toolset
        self.asynchronous = opts.asynchronous
        if opts.strict:
            self._check_strict()
        if not description:
            logger.warning(
                "tool %r has no description: models choose tools by their description", name
            )

    def _check_strict(self) -> None:
        """``strict=True``: every dialect with a strict mode can express the schema."""
        for dialect in registered():
            if dialect.strict_schema is None:
                continue
            try:
                dialect.strict_schema(self.parameters)
            except ValueError as exc:
                raise UsageError(
                    f"tool {self.name!r} cannot have a {dialect.name} strict-mode schema: {exc}"
                ) from exc

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
            **options: any field of :class:`ToolOptions`.

        Raises:
            UsageError: the function cannot be described (``*args``, a type
                Pydantic cannot build a schema for, an unresolvable hint...).
        """
        sig = read_signature(function, name=name)
        return cls(
            function,
            name=sig.name,
            description=description if description is not None else sig.description,
            arguments=Arguments(sig.parameters, model=sig.model, params=sig.params),
            context_param=sig.context_param,
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
            **options: any field of :class:`ToolOptions`.

        Raises:
            UsageError: the schema does not describe an object.
        """
        if not isinstance(parameters, Mapping) or parameters.get("type", "object") != "object":
            raise UsageError(f"tool {name!r}: parameters must be a JSON Schema of type object")
        return cls(
            function,
            name=name,
            description=description,
            arguments=Arguments(clean_schema(dict(parameters))),
            context_param=context_param(function),
            **options,
        )

    # -- use ----------------------------------------------------------------

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The names of the arguments, in declaration order."""
        return self.arguments.names

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validate arguments as the toolbox does, without running the tool.

        Args:
            arguments: the parsed arguments of a call.

        Returns:
            The validated arguments in JSON form (defaults not included).

        Raises:
            ToolArgumentsInvalid: with a message naming each bad field.
        """
        prepared, errors = self.arguments.prepare(arguments)
        if prepared is None:
            raise ToolArgumentsInvalid(describe_errors(self.name, errors))
        return prepared.arguments

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (no validation, no timeout)."""
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, read_only={self.read_only}, sequential={self.sequential})"


def context_param_of(function: Callable[..., Any] | None) -> str | None:
    """The parameter of ``function`` that receives a ToolContext (``None`` for none)."""
    return context_param(function) if function is not None else None


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
    external: bool = False,
    sequential: bool = False,
    strict: bool | None = None,
    max_result_chars: int | None = None,
    idempotent: bool | None = None,
    dedupe: bool = True,
    coerce: bool = False,
    allow_nul: bool = False,
    freeform: bool | Mapping[str, str] = False,
    anthropic_eager_input_streaming: bool | None = None,
    anthropic_toolset: str | None = None,
    asynchronous: bool = False,
    accept_repaired: bool | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    **options: Any,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a tool from a sync or async function: ``@tool`` or ``@tool(...)``.

    The name, description and argument descriptions come from the function and
    its docstring (Google, NumPy or Sphinx style); the JSON Schema and the
    validator come from the type hints through Pydantic (``Literal`` and
    ``Enum`` become ``enum``, ``Annotated[int, Field(ge=1)]`` constraints,
    defaults, ``Optional``, nested models and lists all carry over). A
    parameter annotated :class:`ToolContext` is filled by the toolbox.

    Args:
        func: the function (when used as ``@tool`` without parentheses).
        name: the tool name; defaults to the function name.
        description: overrides the docstring description.
        **options: the fields of :class:`ToolOptions`, each documented
            there: ``@tool(timeout=10, retries=3, read_only=True)``.

    Returns:
        A :class:`Tool`, or a decorator that makes one.

    Raises:
        UsageError: an unknown option, or a function that cannot be described.
    """
    tool_options(options)  # an unknown option fails here, not at decoration

    def decorate(function: Callable[..., Any]) -> Tool:
        if isinstance(function, Tool):
            raise UsageError(f"{function.name!r} is already a tool")
        return Tool.from_function(function, name=name, description=description, **options)

    if func is not None:
        return decorate(func)
    return decorate


def _freeform(
    name: str, freeform: bool | Mapping[str, str], parameters: Mapping[str, Any]
) -> dict[str, str] | None:
    """A custom tool's grammar (``{}`` for any text), ``None`` for a function tool.

    Raises:
        UsageError: the tool does not take exactly ``input: str``, or the
            grammar is not ``{"syntax": "lark" or "regex", "definition": str}``.
    """
    if freeform is False:
        return None
    properties = parameters.get("properties")
    one_string = (
        isinstance(properties, Mapping)
        and list(properties) == ["input"]
        and isinstance(properties["input"], Mapping)
        and properties["input"].get("type") == "string"
        and parameters.get("required") == ["input"]
    )
    if not one_string:
        raise UsageError(f"freeform tool {name!r} must take exactly one parameter: input: str")
    if freeform is True:
        return {}
    grammar = dict(freeform)
    if (
        set(grammar) != {"syntax", "definition"}
        or grammar["syntax"] not in ("lark", "regex")
        or not isinstance(grammar["definition"], str)
        or not grammar["definition"]
    ):
        raise UsageError(
            f"freeform tool {name!r}: the grammar is "
            '{"syntax": "lark" or "regex", "definition": "..."}'
        )
    return grammar
