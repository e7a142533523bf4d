"""Inflating a compressed body in bounded pieces.

httpx decodes ``gzip`` and ``deflate`` one network read at a time: a 64 KiB
read of a compression bomb becomes hundreds of megabytes at once, before any
cap downstream can say no. Here the raw bytes are inflated at most
``piece_bytes`` at a time, and the body is refused (a typed
:class:`~toolwire.errors.RemoteProtocolError`) as soon as it inflates more
than ``max_ratio`` times the bytes received (past a small allowance, for the
few bytes a tiny body compresses to).
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

from toolwire.errors import RemoteProtocolError

__all__ = ["INFLATED", "inflate"]

INFLATED = frozenset({"gzip", "x-gzip", "deflate"})
"""The content encodings inflated here; others are left to httpx."""


async def inflate(
    raw: AsyncIterator[bytes],
    encoding: str,
    *,
    max_ratio: int,
    piece_bytes: int = 1024 * 1024,
    allowance: int = 1024 * 1024,
) -> AsyncIterator[bytes]:
    """The inflated body of ``raw`` (the bytes as received), piece by piece.

    Raises:
        RemoteProtocolError: the bytes are not valid for ``encoding``, or they
            inflate past ``max_ratio`` times their size.
    """
    try:
        async for piece in _inflate(raw, encoding, max_ratio, piece_bytes, allowance):
            yield piece
    finally:
        close = getattr(raw, "aclose", None)
        if close is not None:
            await close()


async def _inflate(
    raw: AsyncIterator[bytes], encoding: str, max_ratio: int, piece_bytes: int, allowance: int
) -> AsyncIterator[bytes]:
    gzip = encoding in ("gzip", "x-gzip")
    inflater = zlib.decompressobj(31 if gzip else 15)
    received = produced = 0
    first = True
    async for chunk in raw:
        received += len(chunk)
        data = chunk
        while data:
            try:
                piece = inflater.decompress(data, piece_bytes)
            except zlib.error:
                if first and not gzip:  # "deflate" sent without its zlib header
                    inflater = zlib.decompressobj(-15)
                    first = False
                    continue
                raise RemoteProtocolError(f"the body is not valid {encoding} data") from None
            first = False
            data = inflater.unconsumed_tail
            if inflater.eof and inflater.unused_data:  # another gzip member follows
                data = inflater.unused_data + data
                inflater = zlib.decompressobj(31 if gzip else 15)
            produced += len(piece)
            if produced > max(max_ratio * received, allowance):
                raise RemoteProtocolError(
                    f"the {encoding} body inflates more than {max_ratio} times its size "
                    f"({produced} bytes from {received}): refused as a compression bomb"
                )
            if piece:
                yield piece
    rest = inflater.flush()
    if rest:
        yield rest
