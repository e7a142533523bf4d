"""``Provider.resumer()``, ``Resumer`` and ``reader(replay=...)`` are the
glossary's "continuation" now (``continuation()``, ``Continuation``,
``reader(kept_stream=...)``): the old names answer with a warning, and an
override of the old method by a subclass still takes effect, or is refused
when the class also defines the new one. Never silently left uncalled."""

from __future__ import annotations

import importlib
from dataclasses import replace

import pytest

from toolwire.http import HttpRequest
from toolwire.messages import UserMessage
from toolwire.providers import GeminiInteractions
from toolwire.providers._continuation import Continuation

MODEL = "gemini-2.5-flash"


def _request(provider: GeminiInteractions) -> HttpRequest:
    return provider.build_request(model=MODEL, messages=[UserMessage("hi")])


def _other(stream_id: str, after: str | None) -> HttpRequest:
    return HttpRequest(method="GET", url=f"https://other.test/{stream_id}", headers={})


def test_the_old_method_answers_as_the_new_with_a_warning() -> None:
    provider = GeminiInteractions(api_key="k", base_url="https://example.test/v1beta")
    request = _request(provider)
    new = provider.continuation(request)
    with pytest.warns(DeprecationWarning, match=r"Provider\.resumer\(\) is now continuation\(\)"):
        old = provider.resumer(request)
    assert new is not None and old is not None
    assert old.request("s", "e").url == new.request("s", "e").url
    assert (old.attempts, old.timeout) == (new.attempts, new.timeout)


def test_an_override_of_the_old_method_still_takes_effect() -> None:
    with pytest.warns(DeprecationWarning, match=r"OldStyle\.resumer\(\) overrides .* rename it"):

        class OldStyle(GeminiInteractions):
            def resumer(self, request: HttpRequest) -> Continuation | None:
                inner = super().resumer(request)  # the base's, never this override again
                assert inner is not None
                return replace(inner, request=_other, attempts=7)

    provider = OldStyle(api_key="k", base_url="https://example.test/v1beta")
    request = _request(provider)
    with pytest.warns(DeprecationWarning):
        found = provider.continuation(request)  # what reader() asks
    assert found is not None and found.attempts == 7
    assert found.request("x", None).url == "https://other.test/x"
    with pytest.warns(DeprecationWarning):
        stream = provider.reader(request)
    assert stream._continuation is not None and stream._continuation.attempts == 7


def test_an_override_of_the_new_method_below_an_old_one_calls_through() -> None:
    with pytest.warns(DeprecationWarning):

        class OldStyle(GeminiInteractions):
            def resumer(self, request: HttpRequest) -> Continuation | None:
                inner = super().resumer(request)
                return None if inner is None else replace(inner, attempts=5)

    class NewStyle(OldStyle):
        def continuation(self, request: HttpRequest) -> Continuation | None:
            inner = super().continuation(request)
            return None if inner is None else replace(inner, timeout=9.0)

    provider = NewStyle(api_key="k", base_url="https://example.test/v1beta")
    with pytest.warns(DeprecationWarning):
        found = provider.continuation(_request(provider))
    assert found is not None and (found.attempts, found.timeout) == (5, 9.0)


def test_a_class_that_defines_both_names_is_refused() -> None:
    with pytest.raises(TypeError, match=r"defines both resumer\(\) and continuation\(\)"):

        class Both(GeminiInteractions):
            def resumer(self, request: HttpRequest) -> Continuation | None:
                return None

            def continuation(self, request: HttpRequest) -> Continuation | None:
                return None


def test_the_old_keyword_of_reader_and_the_old_class_name_answer_with_a_warning() -> None:
    provider = GeminiInteractions(api_key="k", base_url="https://example.test/v1beta")
    request = _request(provider)
    with pytest.warns(DeprecationWarning, match=r"Provider\.reader: replay is now kept_stream"):
        stream = provider.reader(request, replay="v1_abc")
    assert stream._kept_stream == "v1_abc"
    reads = importlib.import_module("toolwire.providers._reads")
    with pytest.warns(DeprecationWarning, match=r"Resumer is now .*Continuation"):
        assert reads.Resumer is Continuation
