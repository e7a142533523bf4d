"""A weather tool backed by a bundled offline table (no network).

Theory of operation: the table holds one sample observation per city, keyed
by English and Chinese names. Lookups are forgiving about case, spaces,
apostrophes, a trailing "市" or "City", and a ", Country" suffix, so that
"Xi'an", "xian", "西安市" and "Hangzhou, China" all work. An unknown city raises
:class:`toolwire.ModelRetry` listing known cities, so the model can correct
itself instead of inventing weather.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from toolwire.errors import ModelRetry
from toolwire.tools import tool

__all__ = ["CITIES", "City", "find_city", "get_weather"]


@dataclass(frozen=True, slots=True)
class City:
    """One row of the offline weather table."""

    name: str
    name_zh: str
    country: str
    temperature_c: float
    condition: str
    condition_zh: str
    humidity: int
    wind_kph: int
    aliases: tuple[str, ...] = ()


CITIES: tuple[City, ...] = (
    City("Beijing", "北京", "China", 18.0, "sunny", "晴", 35, 14, ("peking",)),
    City("Shanghai", "上海", "China", 22.0, "cloudy", "多云", 68, 12),
    City("Hangzhou", "杭州", "China", 24.0, "light rain", "小雨", 82, 9),
    City("Guangzhou", "广州", "China", 29.0, "thunderstorms", "雷阵雨", 85, 11, ("canton",)),
    City("Shenzhen", "深圳", "China", 28.0, "partly cloudy", "晴间多云", 78, 13),
    City("Chengdu", "成都", "China", 20.0, "overcast", "阴", 74, 6),
    City("Wuhan", "武汉", "China", 23.0, "cloudy", "多云", 70, 10),
    City("Xi'an", "西安", "China", 19.0, "hazy", "霾", 45, 8),
    City("Nanjing", "南京", "China", 21.0, "sunny", "晴", 60, 10),
    City("Chongqing", "重庆", "China", 25.0, "foggy", "雾", 88, 5),
    City("Hong Kong", "香港", "China", 27.0, "showers", "阵雨", 84, 18, ("hk",)),
    City("Taipei", "台北", "China", 26.0, "cloudy", "多云", 80, 12),
    City("Tokyo", "东京", "Japan", 17.0, "clear", "晴", 55, 15),
    City("Seoul", "首尔", "South Korea", 15.0, "sunny", "晴", 48, 12),
    City("Singapore", "新加坡", "Singapore", 31.0, "thunderstorms", "雷阵雨", 83, 10),
    City("Bangkok", "曼谷", "Thailand", 33.0, "hot and humid", "炎热潮湿", 75, 8),
    City("New York", "纽约", "United States", 12.0, "windy", "大风", 52, 30, ("nyc",)),
    City("San Francisco", "旧金山", "United States", 16.0, "fog", "雾", 77, 20, ("sf",)),
    City("Los Angeles", "洛杉矶", "United States", 23.0, "sunny", "晴", 40, 9, ("la",)),
    City("London", "伦敦", "United Kingdom", 11.0, "drizzle", "毛毛雨", 81, 19),
    City("Paris", "巴黎", "France", 13.0, "overcast", "阴", 72, 14),
    City("Berlin", "柏林", "Germany", 10.0, "cloudy", "多云", 66, 16),
    City("Moscow", "莫斯科", "Russia", 4.0, "snow showers", "阵雪", 79, 17),
    City("Sydney", "悉尼", "Australia", 21.0, "sunny", "晴", 58, 22),
    City("Dubai", "迪拜", "United Arab Emirates", 36.0, "sunny", "晴", 30, 12),
)
"""The offline table: sample values, not live observations."""


def _key(name: str) -> str:
    text = name.split(",")[0].split("，")[0].strip().casefold()
    # "北京市", "New York city": a suffix taken off by hand (a pattern with
    # "\s+" before its end read a long run of spaces again from each of them).
    if text.endswith("市"):
        text = text[:-1]
    elif text.endswith("city") and text[:-4].rstrip() != text[:-4]:
        text = text[:-4].rstrip()
    return re.sub(r"[\s'’\-_.]", "", text)


_INDEX: dict[str, City] = {}
for _city in CITIES:
    for _name in (_city.name, _city.name_zh, *_city.aliases):
        _INDEX[_key(_name)] = _city


def find_city(name: str) -> City | None:
    """The table row for a city name in English or Chinese, or ``None``.

    Args:
        name: e.g. ``"Hangzhou"``, ``"杭州"``, ``"hangzhou, china"``.
    """
    return _INDEX.get(_key(name))


@tool(read_only=True, strict=True)
def get_weather(
    city: str,
    unit: Literal["celsius", "fahrenheit"] = "celsius",
) -> dict[str, Any]:
    """Get the current weather for a city (offline sample data).

    Use it when the user asks about the weather, temperature or conditions in
    a city. Accepts English or Chinese city names.

    Args:
        city: The city name, e.g. "Hangzhou" or "杭州".
        unit: The temperature unit.
    """
    row = find_city(city)
    if row is None:
        known = ", ".join(f"{c.name} ({c.name_zh})" for c in CITIES[:8])
        raise ModelRetry(
            f"Unknown city {city[:60]!r}. Known cities include {known}, and "
            f"{len(CITIES) - 8} more. Use a city name in English or Chinese."
        )
    temperature = row.temperature_c
    if unit == "fahrenheit":
        temperature = round(temperature * 9 / 5 + 32, 1)
    return {
        "city": row.name,
        "city_zh": row.name_zh,
        "country": row.country,
        "temperature": temperature,
        "unit": unit,
        "condition": row.condition,
        "condition_zh": row.condition_zh,
        "humidity_percent": row.humidity,
        "wind_kph": row.wind_kph,
        "source": "offline sample table",
    }
