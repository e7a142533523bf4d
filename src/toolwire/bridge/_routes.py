"""The bridge's model map: which upstream answers each model a client names.

A route's target is written ``dialect:model@base_url`` (``openai-chat:qwen3-coder@http://127.0.0.1:8080/v1``),
or given as a provider (with its model); a list of them is a fallback chain
(:class:`~toolwire.providers.Fallback`). The model ``*`` routes every
model the map does not name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from toolwire.errors import UsageError
from toolwire.providers import (
    Fallback,
    Provider,
)

__all__ = ["PROVIDER_CLASSES", "Route", "Target", "parse_target", "routes_from"]


def _provider_classes() -> dict[str, type[Provider]]:
    import toolwire.providers as providers
    from toolwire.stream.codecs import registered

    return {
        dialect.name: getattr(providers, dialect.provider.class_name)
        for dialect in registered()
        if dialect.provider is not None and hasattr(providers, dialect.provider.class_name)
    }


PROVIDER_CLASSES: dict[str, type[Provider]] = _provider_classes()
"""The provider of each upstream dialect a target may name (from each
dialect's registration)."""

Target = str | Provider | tuple[Provider, str]
"""A route's upstream: ``dialect:model@base_url``, a provider, or a provider and its model."""


@dataclass(frozen=True, slots=True)
class Route:
    """Where one model's requests go."""

    provider: Provider
    """The upstream (a :class:`~toolwire.providers.Fallback` for a chain)."""
    model: str | None
    """The upstream's model (``None``: the model the client named)."""


def parse_target(spec: str, *, api_key: str | None = None) -> tuple[Provider, str | None]:
    """A provider and its model from ``dialect:model@base_url`` (the model
    and the URL may be left out: ``dialect@base_url``, ``dialect:model``).

    Raises:
        UsageError: an unknown dialect, or no key for an official endpoint.
    """
    head, _, base_url = spec.partition("@")
    dialect, _, model = head.partition(":")
    cls = PROVIDER_CLASSES.get(dialect)
    if cls is None:
        known = ", ".join(PROVIDER_CLASSES)
        raise UsageError(f"unknown upstream dialect {dialect!r} in {spec!r}; known: {known}")
    provider = cls(api_key=api_key or ("bridge" if base_url else None), base_url=base_url or None)
    return provider, model or None


def _route(target: Target | Sequence[Target], api_key: str | None) -> Route:
    if isinstance(target, Provider):
        return Route(target, None)
    if isinstance(target, str):
        return Route(*parse_target(target, api_key=api_key))
    if isinstance(target, tuple) and len(target) == 2 and isinstance(target[0], Provider):
        return Route(target[0], str(target[1]))
    chain = [_route(t, api_key) for t in target]
    if len(chain) == 1:
        return chain[0]
    links = [(r.provider, r.model) if r.model else r.provider for r in chain]
    return Route(Fallback(links), None)


def routes_from(
    models: Mapping[str, Target | Sequence[Target]], *, api_key: str | None = None
) -> dict[str, Route]:
    """The routes of a model map (``api_key``: the upstream's key, for targets written as text).

    Raises:
        UsageError: an empty map, or a target that cannot be read.
    """
    if not models:
        raise UsageError("the bridge needs at least one route (the model '*' routes every model)")
    return {name: _route(target, api_key) for name, target in models.items()}
