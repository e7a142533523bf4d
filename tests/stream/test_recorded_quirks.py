"""One test per quirk of the recorded streams, named after it.

Each test decodes its recording at every kind of split — whole, one byte at a
time, and at a dozen split points drawn from a generator seeded with the
recording's name — and asserts what the quirk is about on each result. (The
whole corpus against its sidecars is ``test_conformance.py``.)
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from tests.conftest import TRACES, Trace
from toolwire import StreamDecoder, StreamResult
from toolwire.errors import StreamErrorEvent, StreamTruncated


def _trace(name: str) -> Trace:
    return next(t for t in TRACES if t.name == name)


def _splits(body: bytes, name: str) -> Iterator[list[bytes]]:
    yield [body]
    yield [body[i : i + 1] for i in range(len(body))]
    rng = random.Random(name)
    for _ in range(12):
        cuts = sorted(rng.sample(range(len(body) + 1), min(len(body) + 1, rng.randint(1, 30))))
        yield [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def every_split(name: str) -> Iterator[StreamResult]:
    """The recording ``name`` decoded at every kind of split."""
    trace = _trace(name)
    for pieces in _splits(trace.body, name):
        decoder = StreamDecoder(trace.decoder_api)
        for piece in pieces:
            decoder.feed(piece)
        decoder.close()
        yield decoder.result()


def _calls(result: StreamResult) -> list[tuple[str, dict[str, object]]]:
    return [(c.name, c.arguments) for c in result.tool_calls]


# -- trailers -------------------------------------------------------------------


def test_done_trailer_after_cohere_message_end_is_a_clean_end() -> None:
    for result in every_split("cohere/rubyllm_cohere_commanda_weather"):
        assert result.error is None and result.complete
        assert [c.name for c in result.tool_calls] == ["weather"]


def test_done_trailer_after_cohere_no_arg_call_is_a_clean_end() -> None:
    for result in every_split("cohere/rubyllm_cohere_commanda_noargs_noplan"):
        assert result.error is None and result.complete
        assert [args for _, args in _calls(result)] == [{}]


def test_done_trailer_after_openrouter_responses_completed_is_a_clean_end() -> None:
    for result in every_split("openrouter/supp_openrouter_responses_ends_with_DONE"):
        assert result.error is None and result.complete
        assert result.choices[0].finish_reason == "stop"


def test_done_trailer_after_lmstudio_responses_stream_is_a_clean_end() -> None:
    for result in every_split("lmstudio/vercel_lmstudio_glm47_responses_text_then_call"):
        assert result.error is None and result.complete
        assert len(result.tool_calls) == 1


# -- llama.cpp -----------------------------------------------------------------


def test_llamacpp_python_function_call_beside_tool_calls_is_one_call() -> None:
    for name in ("llamacpp/lcp_named_weather", "llamacpp/lcp_named_hangzhou"):
        for result in every_split(name):
            assert len(result.tool_calls) == 1, "the legacy field repeats the same call"
            assert result.choices[0].invalid_tool_calls == ()
            assert result.tool_calls[0].id.startswith("call__0_get_weather_")


def test_llamacpp_python_arguments_cut_inside_a_string_is_one_invalid_call() -> None:
    for result in every_split("llamacpp/lcp_named_search"):
        assert result.tool_calls == ()
        (invalid,) = result.choices[0].invalid_tool_calls
        assert invalid.name == "search"
        assert "not valid JSON" in invalid.error


def test_llamacpp_python_empty_body_after_200_is_a_cut_stream() -> None:
    for result in every_split("llamacpp/lcp_auto_stream"):
        assert isinstance(result.error, StreamTruncated)
        assert not result.complete


def test_llama_server_finish_length_after_closed_json_keeps_the_calls() -> None:
    for name in ("llamacpp/ls_required_parallel", "llamacpp/ls_required_weather"):
        for result in every_split(name):
            assert result.choices[0].finish_reason == "length"
            assert len(result.tool_calls) >= 2
            assert result.choices[0].incomplete_tool_calls == ()


# -- identity and completion -----------------------------------------------------


def test_copilot_two_calls_at_index_zero_are_told_apart_by_id() -> None:
    for result in every_split("copilot/copilot_capi_claude35_two_calls_same_index0"):
        ids = [c.id for c in result.choices[0].invalid_tool_calls]
        assert ids == ["tooluse_448k6WHnTpS28K0Bd1bhgA", "tooluse_2SRF2HShTXOoLdGrjWuGiw"]


def test_copilot_legacy_function_call_alone_still_works() -> None:
    for result in every_split("copilot/copilot_capi_legacy_function_call"):
        assert len(result.tool_calls) == 1
        assert result.choices[0].finish_reason == "tool_calls"


def test_anthropic_cut_by_max_tokens_mid_input_is_incomplete_never_ready() -> None:
    for result in every_split("anthropic/anthropicsdk_cut_by_max_tokens_mid_input"):
        assert result.tool_calls == ()
        (cut,) = result.choices[0].incomplete_tool_calls
        assert cut.name == "make_file"
        assert result.choices[0].finish_reason == "length"


def test_cohere_empty_arguments_without_any_delta_is_an_empty_object() -> None:
    for result in every_split("cohere/vercel_cohere_empty_args_no_delta"):
        assert [args for _, args in _calls(result)] == [{}]


def test_openrouter_duplicate_finish_chunks_keep_one_call() -> None:
    for result in every_split("openrouter/rubyllm_openrouter_haiku45_noargs_dup_finish"):
        assert [args for _, args in _calls(result)] == [{}]
        assert result.usage is not None


def test_kimi_via_openrouter_never_sets_finish_reason_yet_the_call_is_ready() -> None:
    for result in every_split("openai/llm_tools_streaming_variant_b"):
        assert len(result.tool_calls) == 1 and result.complete


def test_responses_arguments_only_in_the_done_event_lmstudio() -> None:
    for result in every_split("lmstudio/vercel_lmstudio_glm47_responses_text_then_call"):
        assert result.tool_calls[0].raw_arguments


def test_responses_item_done_still_in_progress_programmatic_caller() -> None:
    for result in every_split("openai/vercel_openai_responses_program_caller_call"):
        assert len(result.tool_calls) == 1 and result.error is None


def test_responses_number_split_across_deltas_stays_one_number() -> None:
    for result in every_split("openai/pydanticai_openai_responses_digits_split"):
        assert 6666 in _values(result.tool_calls[0].arguments)


def test_groq_tool_use_failed_after_text_is_a_typed_error() -> None:
    for result in every_split("groq/pydanticai_groq_gptoss_text_then_tool_use_failed"):
        assert isinstance(result.error, StreamErrorEvent)
        assert result.error.code == "tool_use_failed"
        assert result.text == "maybe"


def test_deepseek_prompt_cache_hit_tokens_are_the_cached_tokens() -> None:
    for result in every_split("deepseek/rubyllm_deepseek_chat_weather"):
        assert result.usage is not None
        assert result.usage.cached_tokens == result.usage.raw["prompt_cache_hit_tokens"]


# -- framing ---------------------------------------------------------------------


def test_gemini_json_array_pretty_printed_over_many_lines() -> None:
    for result in every_split("gemini/llmgemini_gemini3_json_array_signature"):
        assert [name for name, _ in _calls(result)] == ["multiply"]
        assert result.choices[0].provider_state, "the thought signature is kept"


def test_gemini_body_ending_in_crlf_blank_lines() -> None:
    for result in every_split("gemini/crewai_gemini20flash_double_blank"):
        assert len(result.tool_calls) == 1 and result.error is None


def test_openrouter_processing_comments_are_ignored() -> None:
    for result in every_split("openrouter/rubyllm_openrouter_haiku45_weather"):
        assert len(result.tool_calls) == 1 and result.error is None


def _values(value: object) -> list[object]:
    if isinstance(value, dict):
        return [v for item in value.values() for v in _values(item)]
    if isinstance(value, list):
        return [v for item in value for v in _values(item)]
    return [value]
