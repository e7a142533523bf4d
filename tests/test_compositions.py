"""The decoder, the accumulator and the run driver are each one class in one
module, holding their parts as objects that own their state (issue 37, item
5): none inherits a part from another module whose state it would declare."""

from __future__ import annotations

import pytest

from toolwire.agent._driver import RunDriver
from toolwire.agent._tool_steps import ToolSteps
from toolwire.stream._assembly import CallAssembly
from toolwire.stream._decoding import PayloadDecoder
from toolwire.stream.accumulate import Accumulator
from toolwire.stream.decoder import StreamDecoder


@pytest.mark.parametrize("cls", [StreamDecoder, Accumulator, RunDriver])
def test_the_central_classes_inherit_nothing(cls: type) -> None:
    assert cls.__bases__ == (object,)


def test_each_part_is_an_object_its_class_holds() -> None:
    decoder = StreamDecoder("openai-chat")
    assert isinstance(decoder._payloads, PayloadDecoder)
    assert isinstance(decoder._acc, Accumulator)
    assert isinstance(decoder._acc.calls, CallAssembly)
    assert decoder._payloads._acc is decoder._acc
    # The parts own their state: each declares it in its own __init__.
    assert set(PayloadDecoder.__slots__) == {"_acc", "fast", "short_path_deltas"}
    assert {"choices", "budget", "count", "check_utf8"} <= set(CallAssembly.__slots__)
    assert "__init__" in vars(ToolSteps)
