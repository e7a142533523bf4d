"""Content parts: strict media types, reprs without bytes, journal shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolwire
from toolwire.content import part_from_dict
from toolwire.messages import ToolResultMessage, UserMessage, message_from_dict, prompt_messages

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def test_a_part_is_made_from_bytes_a_path_or_a_url(tmp_path: Path) -> None:
    path = tmp_path / "chart.png"
    path.write_bytes(PNG)
    from_path = toolwire.Image.from_path(path)
    assert from_path == toolwire.Image.from_bytes(PNG, media_type="image/png", name="chart.png")
    assert from_path.media_type == "image/png" and from_path.data == PNG
    doc = toolwire.Document.from_url("https://example.com/report.pdf")
    assert doc.media_type == "application/pdf" and doc.data is None
    assert toolwire.Audio.from_bytes(b"RIFF", media_type="audio/mp3").media_type == "audio/mpeg"


def test_media_types_are_checked_strictly() -> None:
    with pytest.raises(toolwire.ContentError, match="'image/bmp' is not an image media type"):
        toolwire.Image.from_bytes(PNG, media_type="image/bmp")
    with pytest.raises(toolwire.ContentError, match="not a document media type"):
        toolwire.Document.from_bytes(b"x", media_type="image/png")
    with pytest.raises(toolwire.ContentError, match="give media_type="):
        toolwire.Image.from_url("https://example.com/picture")
    with pytest.raises(toolwire.ContentError, match="cannot read"):
        toolwire.Image.from_path("/nonexistent/x.png")
    with pytest.raises(toolwire.ContentError, match="must be bytes"):
        toolwire.Image.from_bytes("text", media_type="image/png")  # type: ignore[arg-type]
    assert issubclass(toolwire.ContentError, toolwire.UsageError)


def test_a_repr_never_shows_the_bytes() -> None:
    image = toolwire.Image.from_bytes(b"secret-bytes" * 3000, media_type="image/png")
    assert repr(image).startswith("Image(image/png 35 KB sha256:")
    assert "secret" not in repr(image) and "secret" not in repr(UserMessage(content=[image]))


def test_parts_round_trip_through_the_journal_shape() -> None:
    image = toolwire.Image.from_bytes(PNG, media_type="image/png")
    user = UserMessage(content=["Describe this chart.", image, "briefly"])
    assert user.text == "Describe this chart.\nbriefly" and user.parts == (image,)
    assert message_from_dict(user.to_dict()) == user
    result = ToolResultMessage("c1", "shot", "the page", parts=(image, "the page"))
    assert message_from_dict(result.to_dict()) == result
    assert part_from_dict(image.to_dict()) == image
    # Text-only messages keep the shape older journals hold.
    assert UserMessage("hi").to_dict() == {"kind": "user", "text": "hi"}
    assert "parts" not in ToolResultMessage("c", "t", "x", parts=("x",)).to_dict()
    with pytest.raises(toolwire.UsageError, match="'content'"):
        message_from_dict({"kind": "user", "text": "", "content": [{"type": "image"}]})


def test_a_prompt_of_text_and_parts_is_one_user_message() -> None:
    image = toolwire.Image.from_bytes(PNG, media_type="image/png")
    (message,) = prompt_messages(["Describe this chart.", image])
    assert isinstance(message, UserMessage) and message.content == ("Describe this chart.", image)
    assert prompt_messages("hi") == [UserMessage("hi")]
    with pytest.raises(toolwire.UsageError, match="not a mix"):
        prompt_messages([UserMessage("a"), image])  # type: ignore[list-item]
