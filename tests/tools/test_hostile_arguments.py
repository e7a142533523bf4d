"""Arguments that used to crash a validator or slip past it: ``multipleOf``
on huge numbers, lax conversions to NaN and infinities, numbers too large for
a float."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire import tool
from toolwire.tools import Tool

HUGE_INT = int("9" * 400)


@pytest.mark.parametrize(
    ("value", "step", "ok"),
    [
        (1e308, 0.01, False),
        (-1e308, 0.5, True),
        (HUGE_INT, 0.01, False),  # 0.01 as a float is not exactly 1/100
        (HUGE_INT, 3, True),
        (HUGE_INT + 1, 3, False),
        (HUGE_INT, 7, False),
        (HUGE_INT, 0.75, True),
        (HUGE_INT + 1, 0.75, False),
        (0.3, 0.1, True),
        (0.35, 0.1, False),
        (10, 2.5, True),
        (5e-324, 1e308, True),  # a quotient within 1e-9 of an integer (0)
    ],
    ids=lambda v: str(v)[:12],
)
def test_multiple_of_on_huge_numbers_is_a_typed_answer(value: Any, step: float, ok: bool) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number", "multipleOf": step}}}
    t = Tool.from_schema(lambda **kw: kw, name="t", parameters=schema)
    prepared, errors = t.arguments.prepare({"n": value})
    assert (prepared is not None) is ok
    if not ok:
        assert errors and "must be a multiple of" in errors[0][1]
        assert len(errors[0][1]) < 200


@pytest.mark.parametrize("text", ["NaN", "nan", "Infinity", "-Infinity", "inf", "1e999"])
def test_lax_conversions_make_no_nan_or_infinity(text: str) -> None:
    @tool(coerce=True)
    def scale(factor: float, items: list[float] | None = None) -> float:
        """Scale.

        Args:
            factor: by how much.
            items: what.
        """
        return factor

    for arguments in ({"factor": text}, {"factor": 1, "items": [1, text]}):
        prepared, errors = scale.arguments.prepare(arguments)
        assert prepared is None and "NaN and Infinity are not JSON numbers" in errors[0][1]
    prepared, _ = scale.arguments.prepare({"factor": "1.5"})
    assert prepared is not None and prepared.kwargs == {"factor": 1.5, "items": None}
