"""Content parts toolwire will not make or send: refused before any request."""

from __future__ import annotations

from typing import Any

from toolwire.errors._usage import UsageError

__all__ = ["ContentError", "ContentFetchFailed", "ContentLimitExceeded", "ContentNotSupported"]


class ContentError(UsageError):
    """A content part (:class:`~toolwire.Image`, :class:`~toolwire.Document`,
    :class:`~toolwire.Audio`) that toolwire will not make or send: a media
    type it does not know, a file it cannot read, or one of the two below.
    Raised before any request is sent."""

    type_name = "content_error"


class ContentNotSupported(ContentError):
    """A dialect cannot carry this part in this place: a kind of part its
    API does not take (audio in an Anthropic request), or a URL where the
    provider does not fetch URLs (give the bytes instead).

    Attributes:
        dialect: the dialect's name (``anthropic-messages``...).
        place: ``prompt`` or ``tool_result``.
        part: the part's kind and media type (``audio audio/wav``), or
            ``image from a URL``.
    """

    type_name = "content_not_supported"

    def __init__(self, message: str, *, dialect: str, place: str, part: str) -> None:
        super().__init__(message)
        self.dialect = dialect
        self.place = place
        self.part = part

    def to_dict(self) -> dict[str, Any]:
        """``{"type", "message", "dialect", "place", "part"}``."""
        return {
            **super().to_dict(),
            "dialect": self.dialect,
            "place": self.place,
            "part": self.part,
        }


class ContentLimitExceeded(ContentError):
    """A request would pass one of its provider's documented content limits
    (an image's size, the number of documents in a request...). toolwire
    never downscales or drops a part to fit.

    Attributes:
        dialect: the dialect's name.
        limit: the limit's name (``image_bytes``, ``images_per_request``...).
        maximum: the limit's value.
        value: what the request has.
    """

    type_name = "content_limit_exceeded"

    def __init__(self, dialect: str, limit: str, *, maximum: int, value: int) -> None:
        super().__init__(
            f"{dialect}: the {limit} limit is {maximum:,}, this request has {value:,}"
            " (toolwire does not shrink or drop parts; send fewer or smaller ones)"
        )
        self.dialect = dialect
        self.limit = limit
        self.maximum = maximum
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        """``{"type", "message", "dialect", "limit", "maximum", "value"}``."""
        return {
            **super().to_dict(),
            "dialect": self.dialect,
            "limit": self.limit,
            "maximum": self.maximum,
            "value": self.value,
        }


class ContentFetchFailed(ContentError):
    """A part toolwire was asked to fetch (``from_url(url, fetch=True)``)
    could not be fetched within its bounds: a scheme or an address it
    refuses, an HTTP error, a body past its byte cap, a deadline, or a media
    type other than the part's. Nothing was sent to the model.

    Attributes:
        url: the URL, with its secrets taken out (query values, userinfo).
        reason: what went wrong, for people.
    """

    type_name = "content_fetch_failed"

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot fetch {url}: {reason}")
        self.url = url
        self.reason = reason

    def to_dict(self) -> dict[str, Any]:
        """``{"type", "message", "url", "reason"}``."""
        return {**super().to_dict(), "url": self.url, "reason": self.reason}
