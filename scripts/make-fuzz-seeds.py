#!/usr/bin/env python3
"""Write the generated seeds of the fuzz corpora in tests/fuzz_corpus/ (run from anywhere;
standard library only): small GGUF and safetensors files written byte by byte, the first
lines of the committed banks, and single-record Kafka payloads. The hand-written seeds
(configs, templates, tokenizer.json files, hostile shapes) are committed as they are."""

import json
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fuzz_corpus"


def write(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


# --- GGUF -------------------------------------------------------------------------------

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)


def gguf_str(s, wide=True):
    b = s.encode()
    return struct.pack("<Q" if wide else "<I", len(b)) + b


def gguf_value(vtype, v, wide=True):
    fmt = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
           BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}
    if vtype == STRING:
        return gguf_str(v, wide)
    if vtype == ARRAY:
        etype, items = v
        out = struct.pack("<I", etype) + struct.pack("<Q" if wide else "<I", len(items))
        return out + b"".join(gguf_value(etype, x, wide) for x in items)
    return struct.pack(fmt[vtype], v)


def gguf(meta, tensors, version=3, alignment=32):
    """meta: [(key, type, value)]; tensors: [(name, dims, ggml_type, nbytes)] laid out in order,
    each at an aligned offset."""
    wide = version >= 2
    count = "<Q" if wide else "<I"
    out = b"GGUF" + struct.pack("<I", version)
    out += struct.pack(count, len(tensors)) + struct.pack(count, len(meta))
    for key, vtype, v in meta:
        out += gguf_str(key, wide) + struct.pack("<I", vtype) + gguf_value(vtype, v, wide)
    offset, data = 0, b""
    for name, dims, ggml_type, nbytes in tensors:
        out += gguf_str(name, wide) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack(count, d) for d in dims)
        out += struct.pack("<IQ", ggml_type, offset)
        pad = (-nbytes) % alignment
        data += bytes(range(256)) * (nbytes // 256) + bytes(nbytes % 256) + bytes(pad)
        offset += nbytes + pad
    out += bytes((-len(out)) % alignment)
    return out + data


TEMPLATE = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
            "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
            "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")

BPE_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "a", "b", "c", "Ġ", "ab", "Ġa",
              "0", "1", "2", "=", "?", "Ċ", "user", "assistant", "system"]


def llama_arch(n_layers=1, hidden=32, ffn=64, heads=2):
    return [
        ("general.architecture", STRING, "llama"),
        ("general.name", STRING, "fuzz seed"),
        ("llama.block_count", U32, n_layers),
        ("llama.context_length", U32, 64),
        ("llama.embedding_length", U32, hidden),
        ("llama.feed_forward_length", U32, ffn),
        ("llama.attention.head_count", U32, heads),
        ("llama.attention.head_count_kv", U32, heads),
        ("llama.rope.freq_base", F32, 10000.0),
        ("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
    ]


def make_gguf_seeds():
    bpe = [
        ("tokenizer.ggml.model", STRING, "gpt2"),
        ("tokenizer.ggml.pre", STRING, "smollm"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, BPE_TOKENS)),
        ("tokenizer.ggml.token_type", ARRAY, (I32, [3, 3, 3] + [1] * (len(BPE_TOKENS) - 3))),
        ("tokenizer.ggml.merges", ARRAY, (STRING, ["a b", "Ġ a"])),
        ("tokenizer.ggml.bos_token_id", U32, 1),
        ("tokenizer.ggml.eos_token_id", U32, 2),
        ("tokenizer.chat_template", STRING, TEMPLATE),
    ]
    tensors = [
        ("token_embd.weight", [32, len(BPE_TOKENS)], 0, 32 * len(BPE_TOKENS) * 4),
        ("blk.0.ffn_up.weight", [32, 64], 3, 64 * 20),
        ("output_norm.weight", [32], 0, 128),
    ]
    write("gguf", "bpe-llama-v3.gguf", gguf(llama_arch() + bpe, tensors))
    write("gguf", "bpe-llama-v2.gguf", gguf(llama_arch() + bpe, tensors, version=2))
    write("gguf", "bpe-llama-v1.gguf", gguf(llama_arch() + bpe, tensors[:1], version=1))
    sp_tokens = ["<unk>", "<s>", "</s>", "▁", "▁a", "a", "b", "<0x41>", "[INST]"]
    sp = [
        ("tokenizer.ggml.model", STRING, "llama"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, sp_tokens)),
        ("tokenizer.ggml.scores", ARRAY, (F32, [0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -3.5, 0.0, 0.0])),
        ("tokenizer.ggml.token_type", ARRAY, (I32, [2, 3, 3, 1, 1, 1, 1, 6, 4])),
        ("tokenizer.ggml.add_space_prefix", BOOL, True),
        ("tokenizer.ggml.unknown_token_id", U32, 0),
        ("tokenizer.ggml.bos_token_id", U32, 1),
        ("tokenizer.ggml.eos_token_id", U32, 2),
        ("general.alignment", U32, 64),
    ]
    qwen = [(k.replace("llama.", "qwen2."), t, v) for k, t, v in llama_arch()]
    qwen[0] = ("general.architecture", STRING, "qwen2")
    write("gguf", "sentencepiece-qwen2-align64.gguf",
          gguf(qwen + sp, [("blk.0.attn_q.weight", [256, 2], 12, 2 * 144),
                           ("blk.0.attn_k.weight", [64, 2], 8, 2 * 2 * 34),
                           ("blk.0.attn_v.weight", [8, 2], 1, 32)], alignment=64))
    every_type = [
        ("k.u8", U8, 7), ("k.i8", I8, -7), ("k.u16", U16, 7), ("k.i16", I16, -7),
        ("k.u32", U32, 7), ("k.i32", I32, -7), ("k.f32", F32, 0.5), ("k.bool", BOOL, False),
        ("k.str", STRING, "x"), ("k.u64", U64, 7), ("k.i64", I64, -7), ("k.f64", F64, 0.25),
        ("k.nested", ARRAY, (ARRAY, [(U8, [1, 2]), (STRING, ["a", ""])])),
        ("general.alignment", U32, 32),
    ]
    write("gguf", "every-value-type.gguf",
          gguf(every_type, [("t", [4, 2, 1, 1], 30, 16)]))
    # Regression and hostile shapes: refused by the header walk, never by a crash.
    base = gguf(llama_arch() + bpe, tensors)
    write("gguf", "truncated.gguf", base[: len(base) - 100])
    write("gguf", "zero-alignment.gguf",
          gguf(llama_arch() + [("general.alignment", U32, 0)], tensors[:1]))


# --- safetensors ------------------------------------------------------------------------

SIZES = {"F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "U8": 1, "BOOL": 1, "F64": 8,
         "I8": 1, "I16": 2, "U16": 2, "U32": 4, "U64": 8, "F8_E4M3": 1}


def safetensors(tensors, metadata=None):
    header, offset = {}, 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape in tensors:
        n = SIZES[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((-len(text)) % 8)
    return struct.pack("<Q", len(text)) + text + bytes(offset)


def make_safetensors_seeds():
    write("safetensors", "two.safetensors",
          safetensors([("model.embed_tokens.weight", "F32", [4, 3]),
                       ("model.norm.weight", "BF16", [3])], {"format": "pt"}))
    write("safetensors", "many-dtypes.safetensors",
          safetensors([(f"t.{d}", d, [2, 2]) for d in SIZES] + [("scalar", "F32", []),
                                                                ("empty", "F32", [0, 4])]))
    write("safetensors", "empty.safetensors", safetensors([]))
    full = safetensors([("a", "F32", [8]), ("b", "I64", [2])])
    write("safetensors", "truncated.safetensors", full[:-3])
    header = (ROOT / "model/tests/fixtures/hf/qwen3/model.safetensors").read_bytes()
    n = struct.unpack("<Q", header[:8])[0]
    write("safetensors", "qwen3-fixture-header-only.safetensors", header[: 8 + n])


# --- record lines -----------------------------------------------------------------------

def head(path, n):
    return "".join((ROOT / path).read_text().splitlines(keepends=True)[:n])


def make_line_seeds():
    for bank in ["arithmetic-dev", "binding-symbolic", "copy-reverse", "lexical-dev",
                 "semantic-bridge", "twelve-character"]:
        write("item_lines", f"{bank}.jsonl", head(f"data/banks/{bank}.jsonl", 2))
    write("item_lines", "copy-incorrect.jsonl", head("data/panels/copy-incorrect-96.jsonl", 2))
    for bank in ["banking77", "clinc150", "dbpedia219"]:
        write("case_lines", f"{bank}.jsonl", head(f"data/banks/coverage-{bank}.jsonl", 2))
    write("dialogue_lines", "synthetic.jsonl", head("data/banks/dialogue-synthetic.jsonl", 1))
    write("kafka_payload", "item.json", head("data/banks/arithmetic-dev.jsonl", 1).strip())
    write("kafka_payload", "case.json", head("data/banks/coverage-banking77.jsonl", 1).strip())
    write("kafka_payload", "dialogue.json",
          head("data/banks/dialogue-synthetic.jsonl", 1).strip())
    write("kafka_payload", "not-utf8.bin", b'{"item_id":"\xff\xfe"}')
    write("kafka_payload", "empty.bin", b"")


if __name__ == "__main__":
    make_gguf_seeds()
    make_safetensors_seeds()
    make_line_seeds()
