"""The sans-I/O core: bytes of a provider's response in, typed events out.

``framing/`` cuts the body into payloads (SSE, NDJSON, a streamed JSON
array), ``codecs/`` turns each dialect's payloads into normalized parts,
the accumulator (:mod:`toolwire.stream.accumulate`) puts tool calls together
and hands on only complete ones, and :mod:`toolwire.stream.decoder` drives
the three. Nothing here does I/O, reads a clock or imports httpx, anyio or
pydantic; ``tests/test_layers.py`` keeps it so. The public face is
:class:`toolwire.StreamDecoder`.
"""
