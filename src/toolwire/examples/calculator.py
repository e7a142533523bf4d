"""A calculator tool that never runs ``eval``.

Theory of operation: the expression is parsed with :mod:`ast` and walked by a
tiny interpreter that knows numbers, ``+ - * / // % **``, unary signs,
parentheses, a few :mod:`math` functions and constants. Anything else (names,
attributes, calls to other functions, comprehensions, strings) is refused with
a message the model can act on.

Every operation is refused by its *cost*, estimated before any work is done,
not only by the size of what it returns: the expression's length and number
of nodes, the exponent of ``**``, the size in bits of an integer result, the
shift of ``<<`` and ``>>``, the argument of ``factorial`` and the precision of
``round``. So ``9**9**9``, ``1 << 10**8``, ``factorial(10**6)`` and
``round(1, -10**8)`` (which would hold the interpreter for minutes computing
``10**(10**8)``, however small its answer) are refused in microseconds.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from toolwire.errors import ModelRetry
from toolwire.tools import tool

__all__ = [
    "MAX_EXPONENT",
    "MAX_EXPRESSION_CHARS",
    "MAX_INT_BITS",
    "MAX_ROUND_DIGITS",
    "calculator",
    "evaluate",
]

MAX_EXPRESSION_CHARS = 500
"""Longest expression accepted."""
MAX_EXPONENT = 1000
"""Largest absolute exponent accepted by ``**``."""
MAX_INT_BITS = 4096
"""Largest integer result, in bits (about 1233 decimal digits)."""
MAX_ROUND_DIGITS = 400
"""Largest absolute precision accepted by ``round`` (floats have ~17 digits,
integers at most ~1,233)."""
_MAX_NODES = 200
_MAX_DEPTH = 40

Number = int | float

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_SYMBOL = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "floor": math.floor,
    "ceil": math.ceil,
    "factorial": math.factorial,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}
_ALLOWED = (
    "numbers, + - * / // % ** << >> and parentheses, the constants "
    + ", ".join(_CONSTANTS)
    + ", and the functions "
    + ", ".join(_FUNCTIONS)
)


class _Refused(Exception):
    """Internal: the expression is refused, with a reason for the model."""


def _check_int(value: Number) -> Number:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise _Refused(f"the result has more than {MAX_INT_BITS} bits and is too large")
    return value


def _power(base: Number, exponent: Number) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        raise _Refused(f"the exponent {exponent} is too large (the limit is {MAX_EXPONENT})")
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        # Check the size before computing: 9**999 is fine, (10**300)**999 is not.
        if (abs(base).bit_length() - 1) * exponent > MAX_INT_BITS:
            raise _Refused(f"the result has more than {MAX_INT_BITS} bits and is too large")
    result = base**exponent
    if isinstance(result, complex):
        raise _Refused("the result is not a real number")
    return result


def _shift(left: Number, right: Number, *, to_left: bool) -> Number:
    if not isinstance(left, int) or not isinstance(right, int):
        raise _Refused("shifts take integers")
    if right < 0:
        raise _Refused("a shift count cannot be negative")
    if to_left and left and left.bit_length() + right > MAX_INT_BITS:
        raise _Refused(f"the result has more than {MAX_INT_BITS} bits and is too large")
    if not to_left and right > MAX_INT_BITS:
        return -1 if left < 0 else 0  # every bit is shifted out
    return left << right if to_left else left >> right


def _call_function(name: str, args: list[Number]) -> Number:
    """Call an allowed function after checking what it would cost."""
    if name == "factorial" and args:
        n = args[0]
        if not isinstance(n, int) or n < 0:
            raise _Refused("factorial takes a non-negative integer")
        # log2(n!) from lgamma, before computing anything.
        if n > 1 and math.lgamma(n + 1) / math.log(2) > MAX_INT_BITS:
            raise _Refused(f"factorial({n}) has more than {MAX_INT_BITS} bits and is too large")
    if name == "round" and len(args) == 2:
        digits = args[1]
        if isinstance(digits, int) and abs(digits) > MAX_ROUND_DIGITS:
            raise _Refused(
                f"round() takes a precision between -{MAX_ROUND_DIGITS} and {MAX_ROUND_DIGITS}"
            )
    return _check_int(_FUNCTIONS[name](*args))


def _eval(node: ast.AST, depth: int) -> Number:
    if depth > _MAX_DEPTH:
        raise _Refused("the expression is nested too deeply")
    if isinstance(node, ast.Expression):
        return _eval(node.body, depth + 1)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise _Refused(f"{node.value!r} is not a number")
        return _check_int(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        operand = _eval(node.operand, depth + 1)
        return operand if isinstance(node.op, ast.UAdd) else -operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _eval(node.left, depth + 1)
        right = _eval(node.right, depth + 1)
        if isinstance(node.op, ast.Pow):
            return _check_int(_power(left, right))
        if isinstance(node.op, (ast.LShift, ast.RShift)):
            return _shift(left, right, to_left=isinstance(node.op, ast.LShift))
        if (
            isinstance(node.op, ast.Mult)
            and isinstance(left, int)
            and isinstance(right, int)
            and left.bit_length() + right.bit_length() > MAX_INT_BITS + 1
        ):
            raise _Refused(f"the result has more than {MAX_INT_BITS} bits and is too large")
        result: Number = _BINARY[type(node.op)](left, right)
        return _check_int(result)
    if isinstance(node, ast.BinOp):
        raise _Refused(f"the operator {type(node.op).__name__} is not allowed; use {_ALLOWED}")
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise _Refused(f"the name {node.id!r} is not allowed; use {_ALLOWED}")
    if isinstance(node, ast.Call):
        func = node.func.id if isinstance(node.func, ast.Name) else None
        if func is None or func not in _FUNCTIONS:
            shown = func or ast.unparse(node.func)[:40]
            raise _Refused(f"the function {shown!r} is not allowed; use {_ALLOWED}")
        if node.keywords:
            raise _Refused(f"{func}() takes no keyword arguments here")
        return _call_function(func, [_eval(arg, depth + 1) for arg in node.args])
    raise _Refused(f"{type(node).__name__} is not allowed in an expression; use {_ALLOWED}")


def evaluate(expression: str) -> Number:
    """Evaluate an arithmetic expression safely.

    Args:
        expression: e.g. ``"(3 + 5) * 2 ** 10 / sqrt(16)"``.

    Returns:
        The value: an ``int`` when the arithmetic stays in integers, else a
        ``float`` rounded to 15 significant digits (so ``0.1 + 0.2`` is 0.3).

    Raises:
        ModelRetry: the expression is too long, is not arithmetic, uses
            something not allowed, or its value is too large or undefined.
    """
    text = expression.strip()
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ModelRetry(
            f"The expression is {len(text)} characters long; the limit is "
            f"{MAX_EXPRESSION_CHARS}. Split the calculation into smaller steps."
        )
    if not text:
        raise ModelRetry("The expression is empty. Send an arithmetic expression such as '2 + 2'.")
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise ModelRetry(f"Cannot parse {text[:80]!r} as arithmetic. Use {_ALLOWED}.") from None
    if sum(1 for _ in ast.walk(tree)) > _MAX_NODES:
        raise ModelRetry("The expression is too complex; split it into smaller steps.")
    try:
        value = _eval(tree, 0)
    except _Refused as exc:
        raise ModelRetry(f"Cannot evaluate {text[:80]!r}: {exc}.") from None
    except ZeroDivisionError:
        raise ModelRetry(f"Cannot evaluate {text[:80]!r}: division by zero.") from None
    except OverflowError:
        raise ModelRetry(f"Cannot evaluate {text[:80]!r}: the result is too large.") from None
    except (ValueError, TypeError) as exc:
        raise ModelRetry(f"Cannot evaluate {text[:80]!r}: {exc}.") from None
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ModelRetry(f"Cannot evaluate {text[:80]!r}: the result is not a finite number.")
        value = float(f"{value:.15g}")
    return value


@tool(read_only=True, strict=True)
def calculator(
    expression: Annotated[str, Field(max_length=MAX_EXPRESSION_CHARS)],
) -> dict[str, Any]:
    """Evaluate an arithmetic expression exactly, instead of computing it in your head.

    Supports numbers, + - * / // % ** (or ^) << >>, parentheses, pi, e, and
    the functions sqrt, log, log10, log2, exp, sin, cos, tan, abs, round,
    floor, ceil, min, max and factorial.

    Args:
        expression: The expression, e.g. "(12 + 8) * 3" or "sqrt(2) * 10".
    """
    return {"expression": expression, "result": evaluate(expression)}
