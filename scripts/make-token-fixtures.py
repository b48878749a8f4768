#!/usr/bin/env python3
"""Regenerates the tokenizer fixtures of model/tests/tokenizers.rs with an independent
implementation: llama.cpp (through llama-cpp-python), tokenizing with

    llama_cpp.Llama(model_path, vocab_only=True).tokenize(text.encode(), add_bos=False, special=True)

Run it with the venv of scripts/fetch-llamacpp.sh (llama-cpp-python 0.3.36 and gguf):

    $(scripts/fetch-llamacpp.sh) scripts/make-token-fixtures.py [--prompts /tmp/c2s-prompts.jsonl]

It needs models/SmolLM2-135M-Instruct.Q4_1.gguf (scripts/fetch-model.sh) and
models/Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf (scripts/fetch-qwen.sh). It writes, in
model/tests/fixtures/tokens/:

- smollm2.json  the shipped SmolLM2 GGUF (tokenizer.ggml.pre = smollm);
- qwen2.json    the Qwen2.5-Coder GGUF (pre = qwen2);
- smollm2-vocab-pre-{gpt-2,llama-bpe,qwen2}.json
                SmolLM2's vocabulary with only `tokenizer.ggml.pre` replaced (llama.cpp picks the
                pre-tokenizer from that key): a vocab-only GGUF holding every metadata key of the
                SmolLM2 GGUF but no tensors is written to a temporary directory and tokenized;
- bpe-tiny.gguf + bpe-tiny-pre-{llama-bpe,qwen2,gpt-2,smollm}.json
                a small byte-level BPE vocabulary (tokenizer.ggml.model = gpt2, pre = llama-bpe)
                learnt from the corpus and digit runs, so it has multi-digit tokens: SmolLM2's and
                Qwen's vocabularies have none, so on them llama-bpe's `\p{N}{1,3}` and qwen2's
                `\p{N}` give the same ids. Tokenized with `pre` replaced, as above;
- spm-tiny.gguf + spm-tiny.json
                a small SentencePiece vocabulary (tokenizer.ggml.model = llama: <unk>, <s>, </s>,
                the 256 byte tokens, characters and BPE-style merged pieces with scores, learnt
                deterministically from the corpus's words; add_space_prefix = true, add_bos_token =
                false, no tokenizer.ggml.pre key, as in converted SentencePiece GGUFs), for
                Llama-2/Mistral/Gemma-style GGUFs. spm-tiny.gguf is rewritten on every run.

Each fixture: {"tool", "tool_versions", "model_file", "model_sha256", "pre_tokenizer", "cases":
[{"text", "ids"}]}. The corpus is fixed (edge cases below) plus the rendered prompts of the
quickstart panel: read from --prompts (one JSON object per line, field `text`) when that file
exists (for qwen2.json their conversations are also re-rendered with Qwen's template), else a
built-in panel rendered here from the dev banks, with each GGUF's own chat template and as
system-less ChatML. Every text is NFC-normalized. The output is deterministic.

Texts containing an ordinary (non-control) token spelt like an end-of-generation marker (e.g.
"</s>" in Qwen's vocabulary) are refused for BPE fixtures: llama.cpp promotes such tokens to
control tokens, Hugging Face tokenizers do not.
"""
import argparse
import collections
import hashlib
import json
import re
import sys
import tempfile
import unicodedata
from pathlib import Path

import gguf
import jinja2
import llama_cpp

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "model/tests/fixtures/tokens"
SMOLLM2 = ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf"
QWEN = ROOT / "models/Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf"

LLAMA_CPP_PYTHON = "0.3.36"
# The llama.cpp commit llama-cpp-python 0.3.36 bundles (its CHANGELOG: "update llama.cpp to
# ggml-org/llama.cpp@0c1e57098").
LLAMA_CPP_COMMIT = "0c1e57098"
TOOL = (
    f"llama.cpp ggml-org/llama.cpp@{LLAMA_CPP_COMMIT} via llama-cpp-python {LLAMA_CPP_PYTHON}: "
    "Llama(model_path, vocab_only=True).tokenize(text.encode('utf-8'), add_bos=False, special=True)"
)

# ---------------------------------------------------------------------------------------------
# The fixed corpus.

EDGE_CASES = [
    # empty and whitespace
    "", " ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", " \n ", "  \n  ",
    "a\n\nb", "  x  ", "a b", "a  b", "a   b", "a    b", "    x", "x    ", " leading", "trailing ",
    "a\tb", "a\t\tb", "\tindented", "a \n b", "a\n b\n  c\n   d", "line1\r\nline2\r\n",
    "word\n\n\n\nword", " \t \n", "x\u00a0y",
    # digits
    "12345", "3.14159", "x=007", "1,234,567", "0", "00", "000", "0000", "1234567890", "2024-01-15",
    "0x1F", "1e-10", "-42", "+7", "$12.50", "100%", "v1.2.3", "abc123def", "1st 2nd 3rd",
    "12 * 34 = 408", "What is 81 * 9?", "a1b22c333d4444", "٣٤٥", "１２３",
    # JSON and escapes
    r'{"a": "b\n\"c\""}', r"\u00e9", r'"caf\u00e9"', r'{"k":[1,2,{"x":null}],"t":true}',
    r'"tab\there"', r'C:\\path\\to\\file', r'{"state": "{\"candidates\": [\"123\", \"456\"]}"}',
    '["0","1","2","3","4","5","6","7","8","9"]', r'"\\n"', "{}", "[]", '""',
    # contractions
    "I'm, don't, THEY'LL", "you've we'd she's it's", "I'M", "'s", "'S", "'ll've", "rock'n'roll",
    "don\u2019t", "O'Neil's", "can't won't shan't", "it'S WE'RE", "'",
    # punctuation runs
    "!!!", "...", "?!?!", "---", "=====", "(((x)))", "<<>>", "a.b.c", "foo@bar.com",
    "https://example.com/a?b=c&d=e#f", "#$%^&*", "~~~", "...and then...", ";;", "!?", "\u2026",
    "\u00ab\u00bb \u201cquoted\u201d", "a--b", "__init__", "**bold**", "`code`",
    # letters and case
    "Hello World", "HELLO", "hello", "CamelCaseWord", "snake_case_word", "iPhone", "ABCdef",
    "The quick brown fox jumps over the lazy dog.",
    # non-ASCII (NFC)
    "caf\u00e9", "\u00fcber", "Stra\u00dfe", "\u00c5ngstr\u00f6m", "na\u00efve", "se\u00f1or",
    "\u65e5\u672c\u8a9e", "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8", "\u4e2d\u6587 text",
    "\U0001f642", "emoji \U0001f642\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\u03b1\u03b2\u03b3 \u0394", "\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440",
    "\u0645\u0631\u062d\u0628\u0627", "\u0928\u092e\u0938\u094d\u0924\u0947", "\ud55c\uad6d\uc5b4",
    "q\u0307", "\u1e09", "\u00e4\u0332", "\ufb01le", "\u2160 \u2167",
    "\u00e9t\u00e9 \u00c9T\u00c9", "x\u00b2 + y\u00b3", "\u20ac5 \u00a35 \u00a55",
    # code
    "def f(x):\n    return x * 2\n", "fn main() {\n\tprintln!(\"hi\");\n}\n",
    "if (a && b) { c++; }", "SELECT * FROM t WHERE id = 42;", "<div class=\"x\">&amp;</div>",
    "x = [1, 2, 3]", "const y = {a: 1};", "for i in range(10):\n\tprint(i)",
    "#include <stdio.h>\nint main(void) { return 0; }", "a->b::c", "x != y && y >= z",
    "// comment\n/* block */", "    if x:\n        pass\n",
]

# Special-token handling (ChatML control tokens are shared by SmolLM2 and Qwen; Qwen adds
# <tool_call> as a user-defined token and has unused [PAD…] tokens).
SPECIAL_CASES = [
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\n{\"question\":\"What is 12 * 34?\"}<|im_end|>\n<|im_start|>assistant\n4",
    "<|endoftext|>", "<|im_start|><|im_end|>", "text<|im_end|>more", " <|im_start|> spaced ",
    "<|im_start", "im_start|>", "<|im_start|>\n\n", "<|im_end|>\n<|im_end|>",
    "<tool_call>x</tool_call>", "[PAD151665]", "<unk>",
]

# SentencePiece control tokens, for spm-tiny only: in the byte-level BPE vocabularies "</s>" is an
# ordinary token, but llama.cpp promotes any token spelt like an end-of-generation marker to a
# control token (see EOG_LOOKALIKES), which Hugging Face tokenizers do not.
SPM_CASES = ["<s>hello</s>", "hello</s> world", "</s>", "<s> x", "<s>\n"]

# Token texts that llama.cpp@0c1e57098 (src/llama-vocab.cpp, the EOT/EOG search) marks as control
# tokens in every vocabulary, whatever their type in the GGUF. A BPE fixture text containing one
# that is an ordinary token of the vocabulary would record that llama.cpp quirk, not the
# model's tokenization: such texts are refused.
EOG_LOOKALIKES = [
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
]

# ---------------------------------------------------------------------------------------------
# The quickstart panel's prompts.

QUESTION_NATIVE = "Select the complete correct answer from the provided candidates."
QUESTION_SERIAL = (
    "Solve the original problem. Select its true answer character at the specified position. "
    "The current prefix is a draft and may contain errors; it does not change the original answer."
)
CODE_RESPONSE_FORMAT = "Select one choice and output only its single-character code."
LOCAL_DIRECT_CONTRACT = "Output only the single requested lowercase letter or digit."


def compact(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def canonical(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def builtin_user_messages():
    """User messages in the layout of protocol/src/prompts.rs (question, choices or
    allowed_values, response_format, state as canonical JSON text) for a few dev-bank items:
    Native (scored codes) and Serial (allowed values) at two steps."""
    msgs = []
    for bank in ("arithmetic-dev", "lexical-dev"):
        items = [json.loads(l) for l in (ROOT / f"data/banks/{bank}.jsonl").read_text().splitlines() if l.strip()]
        for item in items[:: max(1, len(items) // 4)][:4]:
            cands = item["candidates"]
            codes = [chr(ord("A") + i) for i in range(len(cands))]
            state = {"candidates": cands, "problem": item["problem"], "target_length": item["length"]}
            msgs.append(compact({
                "question": QUESTION_NATIVE,
                "choices": dict(zip(codes, cands)),
                "response_format": CODE_RESPONSE_FORMAT,
                "state": canonical(state),
            }))
            alphabet = list("0123456789") if item["domain"] == "arithmetic" else list("abcdefghijklmnopqrstuvwxyz")
            for pos in (1, min(2, item["length"])):
                st = dict(state, position=pos, current_prefix=item["target"][: pos - 1])
                msgs.append(compact({
                    "question": QUESTION_SERIAL,
                    "allowed_values": alphabet,
                    "response_format": LOCAL_DIRECT_CONTRACT,
                    "state": canonical(st),
                }))
    # The brief's example, with escaped JSON inside JSON.
    msgs.append(compact({
        "state": canonical({"candidates": ["123", "456"], "current_prefix": "12", "position": 3}),
        "question": "What is 12 * 34?",
        "allowed_values": ["0", "1"],
        "response_format": LOCAL_DIRECT_CONTRACT,
    }))
    return msgs


def render(template_src, messages):
    """`messages` (a user message's text, or a list of {role, content}) rendered as Hugging Face
    does (Jinja with trim_blocks and lstrip_blocks), with the generation prompt."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template_src).render(
        messages=messages, add_generation_prompt=True, bos_token="", eos_token="",
        enable_thinking=False,
    )


def chatml_systemless(user):
    return f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


SMOLLM2_DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
CHATML_TURN = re.compile(r"<\|im_start\|>(\w+)\n(.*?)<\|im_end\|>\n", re.S)


def panel(prompts_path, template_src):
    """Rendered prompts: from the prompts file when present (texts as given, plus their user
    turns re-rendered with `template_src`), else the built-in panel (the model's own template
    and system-less ChatML)."""
    texts = []
    if prompts_path and prompts_path.exists():
        given = [json.loads(l)["text"] for l in prompts_path.read_text().splitlines() if l.strip()]
        source = f"{prompts_path} ({len(given)} lines)"
        texts += given
        for t in given:
            # The same conversation under `template_src` (SmolLM2's default system turn dropped).
            turns = [{"role": r, "content": c} for r, c in CHATML_TURN.findall(t)]
            if turns and turns[0]["role"] == "system" and turns[0]["content"] == SMOLLM2_DEFAULT_SYSTEM:
                turns = turns[1:]
            if turns and t.endswith("<|im_start|>assistant\n"):
                texts.append(render(template_src, turns))
    else:
        source = "built-in panel (scripts/make-token-fixtures.py), dev banks"
        for u in builtin_user_messages():
            texts.append(render(template_src, u))
            texts.append(chatml_systemless(u))
    return dedupe(texts), source


def dedupe(texts):
    seen, out = set(), []
    for t in texts:
        t = unicodedata.normalize("NFC", t)
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


# ---------------------------------------------------------------------------------------------
# GGUF helpers.


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def copy_metadata_with_pre(src, dst, pre):
    """A vocab-only GGUF: every metadata key of `src` (no tensors), `tokenizer.ggml.pre` = pre."""
    r = gguf.GGUFReader(src)
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(dst, arch)
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        vtype = f.types[0]
        val = f.contents()
        if name == "tokenizer.ggml.pre":
            val = pre
        sub = f.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, val, vtype, sub_type=sub)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def gguf_str(path, key):
    r = gguf.GGUFReader(path)
    return r.fields[key].contents() if key in r.fields else None


# ---------------------------------------------------------------------------------------------
# The tiny SentencePiece vocabulary.

SPM_SPACE = "\u2581"
SPM_MERGES = 320


def spm_tiny(words_texts, path):
    """Learn a BPE-style SentencePiece vocabulary from the corpus words (spaces as U+2581
    attached to the following word, as SentencePiece does), deterministically: the most frequent
    adjacent pair is merged first, ties broken by the pair's text. Pieces are scored -rank (higher
    = merged earlier), so llama.cpp's score-ordered merging is non-trivial; characters get lower
    scores than every merged piece. Characters outside Latin scripts are left out so that they
    fall back to byte tokens."""
    counts = collections.Counter()
    for t in words_texts:
        for w in re.findall(r"\S+", t):
            counts[SPM_SPACE + w] += 1
    def allowed(c):
        return c == SPM_SPACE or (c.isprintable() and ord(c) < 0x250)
    chars = sorted({c for w in counts for c in w if allowed(c)} | {SPM_SPACE})
    # Words as tuples of symbols; symbols outside the alphabet split words (never merged).
    seqs = collections.Counter()
    for w, n in counts.items():
        cur = []
        for c in w:
            if allowed(c):
                cur.append(c)
            elif cur:
                seqs[tuple(cur)] += n
                cur = []
        if cur:
            seqs[tuple(cur)] += n
    merged = []
    vocab_set = set(chars)
    for _ in range(SPM_MERGES):
        pairs = collections.Counter()
        for s, n in seqs.items():
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += n
        if not pairs:
            break
        (a, b), _n = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        new = a + b
        merged.append(new)
        vocab_set.add(new)
        nxt = collections.Counter()
        for s, n in seqs.items():
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            nxt[tuple(out)] += n
        seqs = nxt
    tokens, scores, types = [], [], []
    T = gguf.TokenType
    for t, ty in (("<unk>", T.UNKNOWN), ("<s>", T.CONTROL), ("</s>", T.CONTROL)):
        tokens.append(t); scores.append(0.0); types.append(ty)
    for b in range(256):
        tokens.append(f"<0x{b:02X}>"); scores.append(0.0); types.append(T.BYTE)
    for i, p in enumerate(merged):
        tokens.append(p); scores.append(-float(i)); types.append(T.NORMAL)
    for i, c in enumerate(chars):
        if c in merged:
            continue
        tokens.append(c); scores.append(-float(len(merged) + i)); types.append(T.NORMAL)
    assert len(set(tokens)) == len(tokens)
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("spm-tiny (choice2seq tokenizer fixture)")
    w.add_context_length(2048)
    w.add_embedding_length(64)
    w.add_block_count(1)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(16)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types([int(t) for t in types])
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(False)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return len(tokens), len(merged)


# ---------------------------------------------------------------------------------------------
# The tiny byte-level BPE vocabulary (multi-digit tokens, which SmolLM2 and Qwen lack).

BPE_MERGES = 480


def byte_chars():
    """GPT-2's bytes_to_unicode: the printable stand-in of every byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def bpe_tiny(texts, path):
    """A byte-level BPE vocabulary (tokenizer.ggml.model = gpt2) learnt deterministically from
    `texts` plus runs of digits, so that it holds multi-digit tokens ("12", "123", " 2024"…) and
    the digit rules of the pre-tokenizers (single digits, groups of three, leading space or not)
    give different ids. Control tokens <|endoftext|>, <|im_start|>, <|im_end|> are ids 0-2, then
    the 256 byte characters, then the merged tokens; tokenizer.ggml.pre = llama-bpe."""
    bc = byte_chars()
    digits = " ".join(str((i * 7919) % 100000) for i in range(400)) + " 1,234,567 3.14159 2024-01-15"
    counts = collections.Counter()
    for t in list(texts) + [digits]:
        for w in re.findall(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+", t):
            counts[tuple(bc[b] for b in w.encode("utf-8"))] += 1
    seqs = counts
    merges = []
    for _ in range(BPE_MERGES):
        pairs = collections.Counter()
        for sq, n in seqs.items():
            for a, b in zip(sq, sq[1:]):
                pairs[(a, b)] += n
        if not pairs:
            break
        (a, b), _n = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        merges.append((a, b))
        nxt = collections.Counter()
        for sq, n in seqs.items():
            out, i = [], 0
            while i < len(sq):
                if i + 1 < len(sq) and sq[i] == a and sq[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(sq[i])
                    i += 1
            nxt[tuple(out)] += n
        seqs = nxt
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokens = specials + [bc[b] for b in range(256)]
    seen = set(tokens)
    for a, b in merges:
        if a + b not in seen:
            seen.add(a + b)
            tokens.append(a + b)
    T = gguf.TokenType
    types = [T.CONTROL] * len(specials) + [T.NORMAL] * (len(tokens) - len(specials))
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("bpe-tiny (choice2seq tokenizer fixture)")
    w.add_context_length(2048)
    w.add_embedding_length(64)
    w.add_block_count(1)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(16)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("llama-bpe")
    w.add_token_list(tokens)
    w.add_token_types([int(t) for t in types])
    w.add_token_merges([f"{a} {b}" for a, b in merges])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(2)
    w.add_add_bos_token(False)
    w.add_add_space_prefix(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    multi_digit = [t for t in tokens if re.fullmatch("\u0120?[0-9]{2,}", t)]
    assert len(multi_digit) >= 20, multi_digit
    return len(tokens), len(merges), len(multi_digit)


# ---------------------------------------------------------------------------------------------


def check_no_lookalikes(model_path, texts):
    r = gguf.GGUFReader(model_path)
    toks = r.fields["tokenizer.ggml.tokens"].contents()
    types = r.fields["tokenizer.ggml.token_type"].contents()
    promoted = [toks[i] for i in range(len(toks)) if toks[i] in EOG_LOOKALIKES and types[i] != gguf.TokenType.CONTROL]
    for t in texts:
        hit = [p for p in promoted if p in t]
        if hit:
            sys.exit(f"{model_path}: case {t!r} contains {hit}, ordinary tokens that llama.cpp treats as control")


def tokenize_all(model_path, texts):
    if gguf_str(model_path, "tokenizer.ggml.model") == "gpt2":
        check_no_lookalikes(model_path, texts)
    llm = llama_cpp.Llama(model_path=str(model_path), vocab_only=True, verbose=False)
    out = []
    for t in texts:
        ids = llm.tokenize(t.encode("utf-8"), add_bos=False, special=True)
        out.append({"text": t, "ids": [int(i) for i in ids]})
    llm.close()
    return out


def write_fixture(name, model_file, model_sha, pre, cases, extra=None):
    doc = {
        "tool": TOOL,
        "tool_versions": {
            "llama_cpp_python": llama_cpp.__version__,
            "llama_cpp_commit": LLAMA_CPP_COMMIT,
            "gguf_py": gguf_version(),
        },
        "model_file": model_file,
        "model_sha256": model_sha,
        "pre_tokenizer": pre,
    }
    if extra:
        doc.update(extra)
    doc["cases"] = cases
    text = json.dumps(doc, ensure_ascii=False, indent=None, separators=(",", ":"))
    # One case per line: readable diffs, small files.
    text = text.replace(',{"text":', ',\n{"text":').replace('"cases":[{"text":', '"cases":[\n{"text":')
    (OUT / name).write_text(text + "\n", encoding="utf-8")
    print(f"{name}: {len(cases)} cases, {(OUT / name).stat().st_size} bytes", file=sys.stderr)


def gguf_version():
    try:
        from importlib.metadata import version
        return version("gguf")
    except Exception:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=Path, default=Path("/tmp/c2s-prompts.jsonl"),
                    help="rendered quickstart prompts, one JSON object per line with field `text`")
    ap.add_argument("--max-panel", type=int, default=None,
                    help="panel prompts kept in smollm2.json and qwen2.json (default: all)")
    ap.add_argument("--max-panel-variants", type=int, default=24,
                    help="panel prompts kept in the pre-tokenizer-variant and SPM fixtures")
    args = ap.parse_args()
    if llama_cpp.__version__ != LLAMA_CPP_PYTHON:
        sys.exit(f"llama-cpp-python {LLAMA_CPP_PYTHON} expected, found {llama_cpp.__version__}")
    for p in (SMOLLM2, QWEN):
        if not p.exists():
            sys.exit(f"{p} is missing: run scripts/fetch-model.sh and scripts/fetch-qwen.sh")
    OUT.mkdir(parents=True, exist_ok=True)
    for t in EDGE_CASES + SPECIAL_CASES + SPM_CASES:
        assert unicodedata.is_normalized("NFC", t), repr(t)

    fixed = dedupe(EDGE_CASES + SPECIAL_CASES)
    smol_panel, source = panel(args.prompts, gguf_str(SMOLLM2, "tokenizer.chat_template"))
    qwen_panel, _ = panel(args.prompts, gguf_str(QWEN, "tokenizer.chat_template"))
    smol_panel, qwen_panel = smol_panel[: args.max_panel], qwen_panel[: args.max_panel]
    panel_note = {"panel_source": source}
    print(f"corpus: {len(fixed)} fixed cases; panel from {source}", file=sys.stderr)

    smol_sha = sha256(SMOLLM2)
    rel = lambda p: str(Path(p).resolve().relative_to(ROOT))
    write_fixture("smollm2.json", rel(SMOLLM2), smol_sha, "smollm",
                  tokenize_all(SMOLLM2, dedupe(fixed + smol_panel)), panel_note)
    write_fixture("qwen2.json", rel(QWEN), sha256(QWEN), "qwen2",
                  tokenize_all(QWEN, dedupe(fixed + qwen_panel)), panel_note)

    variant_corpus = dedupe(fixed + smol_panel[: args.max_panel_variants])
    with tempfile.TemporaryDirectory() as tmp:
        for pre in ("gpt-2", "llama-bpe", "qwen2"):
            g = Path(tmp) / f"smollm2-vocab-pre-{pre}.gguf"
            copy_metadata_with_pre(SMOLLM2, g, pre)
            assert gguf_str(g, "tokenizer.ggml.pre") == pre
            write_fixture(
                f"smollm2-vocab-pre-{pre}.json", rel(SMOLLM2), smol_sha, pre,
                tokenize_all(g, variant_corpus),
                dict(panel_note, synthetic=(
                    "vocab-only GGUF holding every metadata key of model_file (no tensors) with "
                    f"tokenizer.ggml.pre replaced by {pre!r}")),
            )

    bpe_path = OUT / "bpe-tiny.gguf"
    n_tok, n_merge, n_digit = bpe_tiny(EDGE_CASES + builtin_user_messages(), bpe_path)
    bpe_sha = sha256(bpe_path)
    with tempfile.TemporaryDirectory() as tmp:
        for pre in ("llama-bpe", "qwen2", "gpt-2", "smollm"):
            g = Path(tmp) / f"bpe-tiny-pre-{pre}.gguf"
            copy_metadata_with_pre(bpe_path, g, pre)
            write_fixture(
                f"bpe-tiny-pre-{pre}.json", rel(bpe_path), bpe_sha, pre,
                tokenize_all(g, variant_corpus),
                dict(panel_note, synthetic=(
                    f"byte-level BPE vocabulary (tokenizer.ggml.model = gpt2, {n_tok} tokens, "
                    f"{n_merge} merges, {n_digit} multi-digit tokens) learnt from this script's "
                    f"edge cases, built-in panel and digit runs; model_file has pre = llama-bpe, "
                    f"tokenized with tokenizer.ggml.pre replaced by {pre!r}")),
            )

    spm_path = OUT / "spm-tiny.gguf"
    n_tok, n_merge = spm_tiny(EDGE_CASES + builtin_user_messages(), spm_path)
    spm_corpus = dedupe(fixed + SPM_CASES + smol_panel[:4])
    write_fixture(
        "spm-tiny.json", rel(spm_path), sha256(spm_path), None,
        tokenize_all(spm_path, spm_corpus),
        dict(panel_note, synthetic=(
            f"SentencePiece vocabulary (tokenizer.ggml.model = llama, add_space_prefix = true, "
            f"add_bos_token = false): <unk>, <s>, </s>, 256 byte tokens, {n_merge} merged pieces "
            f"and characters, {n_tok} tokens, learnt from this script's edge cases and built-in panel")),
    )

    total = sum(f.stat().st_size for f in OUT.iterdir() if f.is_file())
    print(f"fixtures: {total} bytes in {OUT}", file=sys.stderr)
    if total > 2_000_000:
        sys.exit(f"the fixtures exceed 2 MB ({total} bytes): rerun with --max-panel N")


if __name__ == "__main__":
    main()
