"""Make the tier's tiny model: ``python make_model.py VOCAB TEMPLATE OUT_GGUF OUT_TOKENS``.

Runs in the cache's virtualenv (numpy, and the ``gguf`` package vendored in
llama.cpp's tree on ``PYTHONPATH``), not in toolwire's.

A 25 MB llama-architecture GGUF with random weights (2 layers, width 64,
fixed seed): fast on any CPU, and it says nothing sensible, which is the
point: the servers' grammars and the tests' ``logit_bias`` decide its shape.
It uses a real tokenizer, Qwen2's (the vocab-only ``ggml-vocab-qwen2.gguf``
that llama.cpp vendors) with Qwen2.5's added tokens (``<tool_call>`` is
151657), and the real Qwen2.5-7B-Instruct chat template, so llama-server
renders tools and parses ``<tool_call>`` blocks as it does for that model.

OUT_TOKENS is a JSON file of the token ids the tests steer with.
"""

from __future__ import annotations

import json
import sys

import gguf
import numpy as np

QWEN25_ADDED = [  # (text, token type) from id 151646 on, where Qwen2's vocab has [PAD] slots
    ("<|object_ref_start|>", 3),
    ("<|object_ref_end|>", 3),
    ("<|box_start|>", 3),
    ("<|box_end|>", 3),
    ("<|quad_start|>", 3),
    ("<|quad_end|>", 3),
    ("<|vision_start|>", 3),
    ("<|vision_end|>", 3),
    ("<|vision_pad|>", 3),
    ("<|image_pad|>", 3),
    ("<|video_pad|>", 3),
    ("<tool_call>", 4),
    ("</tool_call>", 4),
    ("<|fim_prefix|>", 4),
    ("<|fim_middle|>", 4),
    ("<|fim_suffix|>", 4),
    ("<|fim_pad|>", 4),
    ("<|repo_name|>", 4),
    ("<|file_sep|>", 4),
]
FIRST_ADDED = 151646
N_EMBD, N_HEAD, N_LAYER, N_FF, N_CTX = 64, 4, 2, 128, 2048


def read_vocab(path: str) -> tuple[list[str], list[int], list[str]]:
    reader = gguf.GGUFReader(path)
    tokens = list(reader.fields["tokenizer.ggml.tokens"].contents())
    types = list(reader.fields["tokenizer.ggml.token_type"].contents())
    merges = list(reader.fields["tokenizer.ggml.merges"].contents())
    for offset, (text, kind) in enumerate(QWEN25_ADDED):
        assert tokens[FIRST_ADDED + offset].startswith("[PAD"), tokens[FIRST_ADDED + offset]
        tokens[FIRST_ADDED + offset] = text
        types[FIRST_ADDED + offset] = kind
    return tokens, types, merges


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, reversed: token character -> byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    others = [b for b in range(256) if b not in printable]
    chars = {b: chr(b) for b in printable} | {b: chr(256 + n) for n, b in enumerate(others)}
    return {char: b for b, char in chars.items()}


def whitespace_ids(tokens: list[str]) -> list[int]:
    """Ids of the tokens that decode to whitespace only."""
    decode, found = byte_decoder(), []
    for token_id, token in enumerate(tokens):
        try:
            text = bytes(decode[char] for char in token).decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            continue
        if text and not text.strip():
            found.append(token_id)
    return found


def write_header(
    writer: gguf.GGUFWriter, tokens: list[str], types: list[int], merges: list[str], template: str
) -> None:
    writer.add_name("tiny-random-qwen2tok")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_rope_freq_base(1000000.0)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(151643)  # <|endoftext|>
    writer.add_eos_token_id(151645)  # <|im_end|>
    writer.add_pad_token_id(151643)
    writer.add_add_bos_token(False)
    writer.add_chat_template(template)


def write_tensors(writer: gguf.GGUFWriter, n_vocab: int) -> None:
    rng = np.random.default_rng(1234)

    def weights(*shape: int, std: float = 0.2, dtype: type = np.float32) -> object:
        return (rng.standard_normal(shape) * std).astype(dtype)

    ones = np.ones(N_EMBD, dtype=np.float32)
    # numpy shapes are (out, in); gguf stores them reversed.
    writer.add_tensor("token_embd.weight", weights(n_vocab, N_EMBD, std=0.5, dtype=np.float16))
    writer.add_tensor("output_norm.weight", ones)
    for layer in range(N_LAYER):
        prefix = f"blk.{layer}."
        writer.add_tensor(prefix + "attn_norm.weight", ones)
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(prefix + name + ".weight", weights(N_EMBD, N_EMBD))
        writer.add_tensor(prefix + "ffn_norm.weight", ones)
        writer.add_tensor(prefix + "ffn_gate.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(prefix + "ffn_up.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(prefix + "ffn_down.weight", weights(N_EMBD, N_FF))


def main(vocab: str, template_path: str, out_model: str, out_tokens: str) -> None:
    tokens, types, merges = read_vocab(vocab)
    with open(template_path, encoding="utf-8") as file:
        template = file.read()
    writer = gguf.GGUFWriter(out_model, "llama")
    write_header(writer, tokens, types, merges, template)
    write_tensors(writer, len(tokens))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    ids = {
        "tool_call": tokens.index("<tool_call>"),
        "newline": tokens.index("\u010a"),  # "\n" in the byte-level alphabet
        "message": tokens.index("message"),
        "whitespace": whitespace_ids(tokens),
    }
    with open(out_tokens, "w", encoding="utf-8") as file:
        json.dump(ids, file)


if __name__ == "__main__":
    main(*sys.argv[1:5])
