"""Costs in the viewer show enough digits to tell small runs apart."""

from __future__ import annotations

from toolwire.view._html import money


def test_small_costs_keep_four_significant_digits() -> None:
    # A fixed four decimals showed both of these as $0.0001.
    assert money({"total": 0.00012341}) == "$0.0001234"
    assert money({"total": 0.00012991}) == "$0.0001299"
    assert money({"total": 0.5}) == "$0.5000"
    assert money({"total": 12.3456}) == "$12.35"
    assert money({"total": 0}) == "$0.00"
    assert money({"total": "n/a"}) == "n/a" and money(None) == "-"
