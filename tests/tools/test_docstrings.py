"""Docstrings in the three common styles give the same descriptions."""

from __future__ import annotations

import pytest

from toolwire.tools._docstrings import parse_docstring

GOOGLE = """Find flights between two airports.

    Prices are in the currency of the departure country.

    Args:
        origin: IATA code of the departure
            airport, e.g. "PEK".
        destination (str): IATA code of the arrival airport.
        max_stops (int, optional): How many stops at most.

    Returns:
        A list of flights.

    Raises:
        ValueError: never.
    """

NUMPY = """Find flights between two airports.

    Prices are in the currency of the departure country.

    Parameters
    ----------
    origin : str
        IATA code of the departure
        airport, e.g. "PEK".
    destination : str
        IATA code of the arrival airport.
    max_stops : int, optional
        How many stops at most.

    Returns
    -------
    list
        A list of flights.
    """

SPHINX = """Find flights between two airports.

    Prices are in the currency of the departure country.

    :param origin: IATA code of the departure
        airport, e.g. "PEK".
    :param str destination: IATA code of the arrival airport.
    :param max_stops: How many stops at most.
    :type max_stops: int
    :returns: A list of flights.
    :raises ValueError: never.
    """


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, SPHINX], ids=["google", "numpy", "sphinx"])
def test_three_styles_agree(doc: str) -> None:
    parsed = parse_docstring(doc)
    assert parsed.description == (
        "Find flights between two airports.\n\nPrices are in the currency of the departure country."
    )
    assert parsed.params == {
        "origin": 'IATA code of the departure airport, e.g. "PEK".',
        "destination": "IATA code of the arrival airport.",
        "max_stops": "How many stops at most.",
    }


def test_empty_and_summary_only() -> None:
    assert parse_docstring(None).description == ""
    assert parse_docstring("   ").params == {}
    parsed = parse_docstring("Just a summary.")
    assert parsed.description == "Just a summary."
    assert parsed.params == {}


def test_sections_after_args_are_not_in_the_description() -> None:
    parsed = parse_docstring(
        """Do it.

        Example:
            do_it(1)

        Args:
            x: the x.
        """
    )
    assert parsed.description == "Do it."
    assert parsed.params == {"x": "the x."}


def test_numpy_several_names_on_one_line() -> None:
    parsed = parse_docstring(
        """Add.

        Parameters
        ----------
        a, b : int
            The numbers.
        """
    )
    assert parsed.params == {"a": "The numbers.", "b": "The numbers."}
