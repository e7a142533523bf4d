"""The sample tools: calculator, weather, current time, payments."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from toolwire import ModelRetry, ToolCall
from toolwire.examples import (
    CITIES,
    SAMPLE_TOOLS,
    PaymentLedger,
    evaluate,
    find_city,
    get_current_time,
    get_weather,
    payment_tool,
    sample_toolbox,
)
from toolwire.stream.codecs.openai_schema import strict_form
from toolwire.tools import Toolbox


def call(name: str, call_id: str = "c1", **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def test_sample_tools_are_read_only() -> None:
    assert [t.name for t in SAMPLE_TOOLS] == ["get_current_time", "get_weather", "calculator"]
    assert all(t.read_only and not t.requires_approval for t in SAMPLE_TOOLS)
    assert all(strict_form(t)[0] is not None for t in SAMPLE_TOOLS)


# ---------------------------------------------------------------------------
# calculator


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("(12 + 8) * 3", 60),
        ("2 ** 10", 1024),
        ("2^10", 1024),
        ("0.1 + 0.2", 0.3),
        ("7 // 2", 3),
        ("-3 % 5", 2),
        ("10 / 4", 2.5),
        ("2 ** -1", 0.5),
        ("sqrt(16) + abs(-2)", 6.0),
        ("max(1, 7, 3) - min(4, 2)", 5),
        ("round(pi, 4)", 3.1416),
        ("9 ** 999 % 10", 9),
    ],
)
def test_calculator_arithmetic(expression: str, value: float) -> None:
    result = evaluate(expression)
    assert result == value
    assert type(result) is type(value)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os')", "the function '__import__' is not allowed"),
        ("__import__('os').system('echo pwned')", "is not allowed"),
        ("2**10**10", "the exponent 10000000000 is too large (the limit is 1000)"),
        ("9**9**9", "the exponent 387420489 is too large"),
        ("(10**300)**999", "more than 4096 bits"),
        ("1" * 10_000, "10000 characters long; the limit is 500"),
        ("().__class__", "Attribute is not allowed"),
        ("open('/etc/passwd')", "the function 'open' is not allowed"),
        ("'a' * 3", "'a' is not a number"),
        ("[1] * 10", "List is not allowed"),
        ("lambda: 1", "Lambda is not allowed"),
        ("x + 1", "the name 'x' is not allowed"),
        ("1 / 0", "division by zero"),
        ("(-8) ** (1/3)", "not a real number"),
        ("exp(1000)", "too large"),
        ("1 +", "Cannot parse"),
        ("True + 1", "True is not a number"),
        ("", "empty"),
        ("1 << 10**8", "more than 4096 bits"),
        ("1 << -1", "a shift count cannot be negative"),
        ("factorial(10**6)", "factorial(1000000) has more than 4096 bits"),
        ("factorial(-1)", "factorial takes a non-negative integer"),
        ("round(1, 10**6)", "round() takes a precision between -400 and 400"),
    ],
)
def test_calculator_refuses_with_a_clear_error(expression: str, message: str) -> None:
    with pytest.raises(ModelRetry) as info:
        evaluate(expression)
    assert message in info.value.message


def test_calculator_refuses_by_cost_what_would_hold_the_interpreter() -> None:
    # round(1, -10**8) is 0, but computing it takes 10**(10**8): minutes with
    # the GIL held, which no timeout can interrupt. It must be refused before
    # any work; a child process keeps this test from hanging if it is not.
    code = (
        "from toolwire.examples.calculator import evaluate\n"
        "from toolwire import ModelRetry\n"
        "for e in ('round(1, -10**8)', '7 << 10**9', 'factorial(10**9)'):\n"
        "    try:\n"
        "        print(evaluate(e))\n"
        "    except ModelRetry as exc:\n"
        "        print(exc.message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    lines = done.stdout.splitlines()
    assert lines == [
        "Cannot evaluate 'round(1, -10**8)': round() takes a precision between -400 and 400.",
        "Cannot evaluate '7 << 10**9': the result has more than 4096 bits and is too large.",
        "Cannot evaluate 'factorial(10**9)': factorial(1000000000) has more than 4096 bits "
        "and is too large.",
    ]


@pytest.mark.parametrize(
    ("expression", "value"),
    [("1 << 10", 1024), ("-5 >> 1", -3), ("5 >> 10**9", 0), ("factorial(20)", 2432902008176640000),
     ("round(1234, -2)", 1200), ("round(2.675, 2)", 2.67)],
)  # fmt: skip
def test_calculator_shifts_factorial_and_round(expression: str, value: float) -> None:
    assert evaluate(expression) == value


@pytest.mark.anyio
async def test_calculator_through_the_toolbox() -> None:
    box = sample_toolbox()
    ok, danger, huge, too_long = await box.execute(
        [
            call("calculator", "a", expression="(3 + 5) * 2"),
            call("calculator", "b", expression="__import__('os').getcwd()"),
            call("calculator", "c", expression="2**10**10"),
            call("calculator", "d", expression="1+" * 5_000 + "1"),
        ]
    )
    assert ok.ok and ok.content == '{"expression":"(3 + 5) * 2","result":16}'
    assert (danger.ok, danger.error) == (False, "invalid_arguments")
    assert "the function \"__import__('os').getcwd\" is not allowed" in danger.message
    assert "exponent" in huge.content and huge.error == "invalid_arguments"
    assert too_long.error == "invalid_arguments" and too_long.attempts == 0
    assert "- expression: String should have at most 500 characters" in too_long.content


# ---------------------------------------------------------------------------
# weather


def test_weather_table_has_twenty_cities_in_two_languages() -> None:
    assert len(CITIES) >= 20
    assert len({c.name for c in CITIES}) == len({c.name_zh for c in CITIES}) == len(CITIES)
    for city in CITIES:
        assert find_city(city.name) is city
        assert find_city(city.name_zh) is city


@pytest.mark.parametrize(
    ("name", "english"),
    [
        ("杭州", "Hangzhou"),
        ("hangzhou", "Hangzhou"),
        ("Hangzhou, China", "Hangzhou"),
        ("杭州市", "Hangzhou"),
        ("北京", "Beijing"),
        ("Shanghai City", "Shanghai"),
        ("xian", "Xi'an"),
        ("西安", "Xi'an"),
        ("new york", "New York"),
        ("NYC", "New York"),
    ],
)
def test_city_names(name: str, english: str) -> None:
    city = find_city(name)
    assert city is not None and city.name == english


def test_weather_units() -> None:
    celsius = get_weather("杭州")
    fahrenheit = get_weather("Hangzhou", unit="fahrenheit")
    assert celsius["city"] == fahrenheit["city"] == "Hangzhou"
    assert celsius["city_zh"] == "杭州"
    assert celsius["temperature"] == 24.0 and celsius["unit"] == "celsius"
    assert fahrenheit["temperature"] == 75.2 and fahrenheit["unit"] == "fahrenheit"


@pytest.mark.anyio
async def test_weather_errors_go_back_to_the_model() -> None:
    unknown, bad_unit = await sample_toolbox().execute(
        [
            call("get_weather", "a", city="Atlantis"),
            call("get_weather", "b", city="Paris", unit="kelvin"),
        ]
    )
    assert (unknown.ok, unknown.error, unknown.model_retry) == (False, "invalid_arguments", True)
    assert "Unknown city 'Atlantis'" in unknown.content and "Beijing (北京)" in unknown.content
    assert bad_unit.error == "invalid_arguments" and "- unit:" in bad_unit.content
    assert "'celsius' or 'fahrenheit'" in bad_unit.content


# ---------------------------------------------------------------------------
# current time


def test_current_time_in_a_zone() -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)  # the stamp is to the second
    result = get_current_time("Asia/Shanghai")
    after = datetime.now(timezone.utc)
    assert result["timezone"] == "Asia/Shanghai"
    assert result["utc_offset"] == "+08:00"
    stamp = datetime.fromisoformat(result["datetime"])
    assert before <= stamp <= after, "the time of the call"
    assert stamp.utcoffset() == timedelta(hours=8)
    assert result["weekday"] == stamp.strftime("%A")


def test_current_time_defaults_and_dst_zones() -> None:
    assert get_current_time()["utc_offset"] == "+00:00"
    assert get_current_time("utc")["timezone"] == "UTC"
    assert get_current_time("America/New_York")["utc_offset"] in ("-05:00", "-04:00")


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "../../etc/passwd", ""])
def test_current_time_unknown_zone(zone: str) -> None:
    with pytest.raises(ModelRetry, match="IANA"):
        get_current_time(zone)


# ---------------------------------------------------------------------------
# payments


def test_payment_tool_shape() -> None:
    t = payment_tool(PaymentLedger())
    assert t.name == "send_payment"
    assert not t.read_only and not t.requires_approval
    assert t.idempotent and t.context_param == "ctx"
    assert list(t.parameters["properties"]) == ["to", "amount_cents"]


@pytest.mark.anyio
async def test_a_payment_is_made_once_per_key() -> None:
    ledger = PaymentLedger()
    box = Toolbox([payment_tool(ledger)])
    pay = call("send_payment", "call_1", to="alice", amount_cents=1250)
    [first] = await box.execute([pay], run_id="run-1")
    [again] = await box.execute([pay], run_id="run-1")  # a replay of the same call
    [other_run] = await box.execute([pay], run_id="run-2")
    assert first.ok and '"status":"sent"' in first.content
    assert again.ok and '"status":"already_sent"' in again.content
    assert '"status":"sent"' in other_run.content
    assert len(ledger) == 2
    assert (
        first.content.split('"payment_id":"')[1][:20]
        == again.content.split('"payment_id":"')[1][:20]
    )


@pytest.mark.anyio
async def test_a_sqlite_ledger_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    pay = call("send_payment", "call_9", to="bob", amount_cents=500)
    [first] = await Toolbox([payment_tool(PaymentLedger(path))]).execute([pay], run_id="r")
    # A new process: a new ledger object and toolbox on the same file.
    ledger = PaymentLedger(path)
    [resumed] = await Toolbox([payment_tool(ledger)]).execute([pay], run_id="r")
    assert '"status":"sent"' in first.content
    assert '"status":"already_sent"' in resumed.content
    [row] = ledger.payments()
    assert (row["to"], row["amount_cents"]) == ("bob", 500)


@pytest.mark.anyio
async def test_a_key_reused_for_another_payment_is_refused(tmp_path: Path) -> None:
    for ledger in (PaymentLedger(), PaymentLedger(tmp_path / "l.db")):
        box = Toolbox([payment_tool(ledger)])
        keys = {"a": "shared-key", "b": "shared-key"}
        [first] = await box.execute(
            [call("send_payment", "a", to="carol", amount_cents=100)], idempotency_keys=keys
        )
        [second] = await box.execute(
            [call("send_payment", "b", to="carol", amount_cents=999)], idempotency_keys=keys
        )
        assert first.ok
        assert (second.ok, second.error) == (False, "failed")
        assert "different payment" in second.content
        assert len(ledger) == 1


@pytest.mark.anyio
async def test_payment_arguments_are_validated() -> None:
    ledger = PaymentLedger()
    [result] = await Toolbox([payment_tool(ledger)]).execute(
        [call("send_payment", to="dave", amount_cents=0)]
    )
    assert result.error == "invalid_arguments" and "- amount_cents:" in result.content
    assert len(ledger) == 0
