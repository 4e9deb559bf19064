#!/usr/bin/env python3
"""Tiny tokenizers and text encoders, and float64 checks of dit-run's prompt
encoding against transcriptions written from reading transformers' CLIP,
T5 and UMT5 and diffusers' encode_prompt (FLUX, SD3, Wan). NumPy, the
`regex` module (CLIP's \\p{L} pattern), SentencePiece's Python binding and
spm_train; nothing else.

  text_check.py make SNAPSHOT --family flux|sd3|wan --transformer CONFIG.json
                [--seed S] [--dtype f32|f16|bf16] [--break KIND:ARG]
      Adds to SNAPSHOT (a pipeline folder, or a new one) the family's
      tokenizers and random text encoders under transformers' names, sized
      for the transformer config (T5's d_model its joint_attention_dim or
      text_dim, the CLIPs' pooled outputs its pooled_projection_dim), and
      model_index.json's entries. The CLIP vocabulary is learned from
      Inputs/corpus.txt by BPE; T5's spiece.model by spm_train. --break
      spoils a file on purpose: missing:FILE, shape:TENSOR, garbage:FILE.
  text_check.py tokenize FOLDER --prompt TEXT [--max-length N]
      The reference ids of TEXT, as dit-run --tokenize prints them.
  text_check.py tokenizer-cases FOLDER --dit-run DIT_RUN --label L [--max-length N]
      dit-run --tokenize against the reference on empty, long, Unicode,
      decomposed, CJK, emoji, spaced, control-character and special-token
      prompts; a truncated prompt must also warn.
  text_check.py check SNAPSHOT --family F --prompt P [--negative N]
                --branches K --batch B --tokens T --embeds E.npy [--pooled P.npy]
      Encodes the prompt in float64 as the pipeline does and prints the
      largest error of E (and P) relative to the reference's largest value.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import unicodedata

import numpy as np
import regex

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import snapshot  # noqa: E402  (write_safetensors, read_safetensors)

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs", "corpus.txt")

# ---------------------------------------------------------------------------
# CLIP's tokenizer, transformers' slow class without ftfy
# ---------------------------------------------------------------------------


def gpt2_byte_map():
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) +
                 list(range(0xAE, 0xFF + 1)))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_MAP = gpt2_byte_map()
CLIP_PATTERN = regex.compile(
    r"<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+",
    regex.IGNORECASE)


def _control(ch):
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def _space(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _cjk(cp):
    return any(lo <= cp <= hi for lo, hi in (
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


def clip_normalize(text):
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or _control(ch):
            continue
        if _space(ch):
            out.append(" ")
        elif _cjk(cp):
            out.append(" " + ch + " ")
        else:
            out.append(ch)
    text = unicodedata.normalize("NFC", "".join(out))
    return " ".join(word.lower() for word in text.split())


def read_special(folder, defaults):
    roles = dict(defaults)
    added = {}

    def text_of(value):
        if isinstance(value, dict):
            return value["content"]
        return value

    def read(path):
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
        for role in ("bos", "eos", "unk", "pad"):
            if config.get(role + "_token") is not None:
                roles[role] = text_of(config[role + "_token"])
        for token in config.get("additional_special_tokens", []) or []:
            added.setdefault(text_of(token), None)
        return config

    config = read(os.path.join(folder, "tokenizer_config.json"))
    for key, value in (config.get("added_tokens_decoder") or {}).items():
        added[text_of(value)] = int(key)
    special_map = os.path.join(folder, "special_tokens_map.json")
    if os.path.exists(special_map):
        read(special_map)
    for text in roles.values():
        added.setdefault(text, None)
    return roles, added, config


def split_special(text, specials):
    pieces, start, at = [], 0, 0
    while at < len(text):
        match = max((s for s in specials if text.startswith(s, at)), key=len, default=None)
        if match is None:
            at += 1
            continue
        if at > start:
            pieces.append((text[start:at], False))
        pieces.append((match, True))
        at += len(match)
        start = at
    if start < len(text):
        pieces.append((text[start:], False))
    return pieces


class ClipReference:
    def __init__(self, folder):
        self.roles, self.added, config = read_special(folder, {
            "bos": "<|startoftext|>", "eos": "<|endoftext|>", "unk": "<|endoftext|>",
            "pad": "<|endoftext|>"})
        self.max_length = int(config.get("model_max_length", 77))
        with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
            self.vocab = json.load(f)
        with open(os.path.join(folder, "merges.txt"), encoding="utf-8") as f:
            lines = f.read().strip().split("\n")[1:49152 - 256 - 2 + 1]
        self.ranks = {tuple(line.split()): i for i, line in enumerate(lines)}

    def id_of(self, token):
        # transformers looks up added tokens first, then the vocabulary.
        if self.added.get(token) is not None:
            return self.added[token]
        if token in self.vocab:
            return self.vocab[token]
        return self.vocab[self.roles["unk"]]

    def bpe(self, token):
        word = tuple(token[:-1]) + (token[-1] + "</w>",)
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            best = min(pairs, key=lambda p: self.ranks.get(p, math.inf))
            if best not in self.ranks:
                break
            merged, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and word[i] == best[0] and word[i + 1] == best[1]:
                    merged.append(word[i] + word[i + 1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = tuple(merged)
        return list(word)

    def tokens(self, text):
        out = []
        for piece, special in split_special(text, list(self.added)):
            if special:
                out.append(piece)
                continue
            for match in CLIP_PATTERN.findall(clip_normalize(piece)):
                if match in ("<|startoftext|>", "<|endoftext|>"):
                    out.append(match)
                    continue
                out.extend(self.bpe("".join(BYTE_MAP[b] for b in match.encode("utf-8"))))
        return out

    def encode(self, text, max_length):
        ids = [self.id_of(t) for t in self.tokens(text)]
        full = len(ids) + 2
        ids = [self.id_of(self.roles["bos"])] + ids[:max_length - 2] + [self.id_of(self.roles["eos"])]
        mask = [1] * len(ids) + [0] * (max_length - len(ids))
        ids = ids + [self.id_of(self.roles["pad"])] * (max_length - len(ids))
        return ids, mask, full


class SentencePieceReference:
    def __init__(self, folder):
        import sentencepiece
        self.sp = sentencepiece.SentencePieceProcessor(
            model_file=os.path.join(folder, "spiece.model"))
        self.roles, self.added, config = read_special(
            folder, {"eos": "</s>", "unk": "<unk>", "pad": "<pad>"})
        self.max_length = int(config.get("model_max_length", 512))

    def id_of_special(self, text):
        if self.added.get(text) is not None:
            return self.added[text]
        return self.sp.piece_to_id(text)

    def encode(self, text, max_length):
        ids = []
        for piece, special in split_special(text, list(self.added)):
            ids += [self.id_of_special(piece)] if special else self.sp.encode(piece)
        full = len(ids) + 1
        ids = ids[:max_length - 1] + [self.id_of_special(self.roles["eos"])]
        mask = [1] * len(ids) + [0] * (max_length - len(ids))
        ids = ids + [self.id_of_special(self.roles["pad"])] * (max_length - len(ids))
        return ids, mask, full


def open_tokenizer(folder):
    with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
        cls = json.load(f).get("tokenizer_class", "")
    return SentencePieceReference(folder) if cls.startswith("T5") else ClipReference(folder)


# ---------------------------------------------------------------------------
# The encoders in float64
# ---------------------------------------------------------------------------


def rms(x, w, eps):
    return w * (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps))


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def activation(name, x):
    if name == "gelu_new":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if name == "gelu":
        from math import erf
        return 0.5 * x * (1 + np.vectorize(erf)(x / math.sqrt(2)))
    if name == "quick_gelu":
        return x / (1 + np.exp(-1.702 * x))
    return np.maximum(x, 0)


def t5_buckets(length, buckets, max_distance):
    """The bidirectional bucket of key k seen from query q, computed in float32
    as transformers computes it."""
    q = np.arange(length)[:, None]
    k = np.arange(length)[None, :]
    rel = k - q
    half = buckets // 2
    out = np.where(rel > 0, half, 0)
    dist = np.abs(rel)
    exact = half // 2
    with np.errstate(divide="ignore"):
        large = (np.log(dist.astype(np.float32) / np.float32(exact)) /
                 np.float32(math.log(max_distance / exact)) * np.float32(half - exact))
    large = exact + np.where(np.isfinite(large), large, 0).astype(np.int64)
    large = np.minimum(large, half - 1)
    return out + np.where(dist < exact, dist, large)


def t5_encode(config, w, ids, mask):
    umt5 = config["model_type"] == "umt5"
    heads, dkv = config["num_heads"], config["d_kv"]
    eps = config.get("layer_norm_epsilon", 1e-6)
    # T5Config's default is "relu", UMT5Config's "gated-gelu".
    proj = config.get("feed_forward_proj", "gated-gelu" if umt5 else "relu")
    gated = proj.startswith("gated-")
    act = "gelu_new" if proj == "gated-gelu" else proj.replace("gated-", "")
    embed = w.get("shared.weight", w.get("encoder.embed_tokens.weight"))
    x = embed[ids]
    batch, length = ids.shape
    table = t5_buckets(length, config.get("relative_attention_num_buckets", 32),
                       config.get("relative_attention_max_distance", 128))
    mask_bias = None
    if mask is not None:
        mask_bias = (1.0 - mask)[:, None, None, :] * np.finfo(np.float32).min
    bias = None
    for i in range(config["num_layers"]):
        b = f"encoder.block.{i}."
        a = b + "layer.0.SelfAttention."
        if i == 0 or umt5:
            bias = w[a + "relative_attention_bias.weight"][table].transpose(2, 0, 1)[None]
            if mask_bias is not None:
                bias = bias + mask_bias
        h = rms(x, w[b + "layer.0.layer_norm.weight"], eps)

        def split(t):
            return t.reshape(batch, length, heads, dkv).transpose(0, 2, 1, 3)
        q, k, v = (split(h @ w[a + n + ".weight"].T) for n in "qkv")
        att = softmax(q @ k.transpose(0, 1, 3, 2) + bias) @ v
        x = x + att.transpose(0, 2, 1, 3).reshape(batch, length, heads * dkv) @ w[a + "o.weight"].T
        f = b + "layer.1.DenseReluDense."
        h = rms(x, w[b + "layer.1.layer_norm.weight"], eps)
        if gated:
            inner = activation(act, h @ w[f + "wi_0.weight"].T) * (h @ w[f + "wi_1.weight"].T)
        else:
            inner = activation(act, h @ w[f + "wi.weight"].T)
        x = x + inner @ w[f + "wo.weight"].T
    return rms(x, w["encoder.final_layer_norm.weight"], eps)


def clip_encode(config, w, ids):
    """(last states, penultimate states, pooled or projected pooled)."""
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    eps = config.get("layer_norm_eps", 1e-5)
    act = config.get("hidden_act", "quick_gelu")
    batch, length = ids.shape
    p = "text_model."
    x = w[p + "embeddings.token_embedding.weight"][ids] + \
        w[p + "embeddings.position_embedding.weight"][:length]
    causal = np.triu(np.full((length, length), np.finfo(np.float32).min), 1)
    penultimate = None
    for i in range(config["num_hidden_layers"]):
        if i == config["num_hidden_layers"] - 1:
            penultimate = x
        l = f"{p}encoder.layers.{i}."
        h = layer_norm(x, w[l + "layer_norm1.weight"], w[l + "layer_norm1.bias"], eps)

        def proj(name, t):
            return t @ w[l + name + ".weight"].T + w[l + name + ".bias"]

        def split(t):
            return t.reshape(batch, length, heads, -1).transpose(0, 2, 1, 3)
        q, k, v = (split(proj("self_attn." + n, h)) for n in ("q_proj", "k_proj", "v_proj"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hidden // heads) + causal
        att = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = x + proj("self_attn.out_proj", att)
        h = layer_norm(x, w[l + "layer_norm2.weight"], w[l + "layer_norm2.bias"], eps)
        x = x + proj("mlp.fc2", activation(act, proj("mlp.fc1", h)))
    last = layer_norm(x, w[p + "final_layer_norm.weight"], w[p + "final_layer_norm.bias"], eps)
    eos = config.get("eos_token_id", 49407)  # CLIPTextConfig's default
    where = ids.argmax(-1) if eos == 2 else (ids == eos).astype(np.int64).argmax(-1)
    pooled = last[np.arange(batch), where]
    if "text_projection.weight" in w:
        pooled = pooled @ w["text_projection.weight"].T
    return last, penultimate, pooled


# ---------------------------------------------------------------------------
# Pipelines
# ---------------------------------------------------------------------------

FAMILIES = {
    "flux": [("text_encoder", "tokenizer"), ("text_encoder_2", "tokenizer_2")],
    "sd3": [("text_encoder", "tokenizer"), ("text_encoder_2", "tokenizer_2"),
            ("text_encoder_3", "tokenizer_3")],
    "wan": [("text_encoder", "tokenizer")],
}


def load_encoder(snapshot_dir, name):
    folder = os.path.join(snapshot_dir, name)
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    return config, snapshot.read_safetensors(os.path.join(folder, "model.safetensors"))


def html_unescape(text):
    import html
    return html.unescape(text)


def wan_clean(text):
    # diffusers' prompt_clean without ftfy (not in Debian): html.unescape
    # twice, whitespace collapsed.
    text = html_unescape(html_unescape(text)).strip()
    return regex.sub(r"\s+", " ", text).strip()


def encode_prompts(snapshot_dir, family, prompts, tokens):
    parts = []
    for encoder, tokenizer in FAMILIES[family]:
        config, w = load_encoder(snapshot_dir, encoder)
        parts.append((config, w, open_tokenizer(os.path.join(snapshot_dir, tokenizer))))

    def ids_of(tok, texts, length):
        rows = [tok.encode(t, length) for t in texts]
        return np.array([r[0] for r in rows]), np.array([r[1] for r in rows], dtype=np.float64)

    if family == "flux":
        (cc, cw, ct), (tc, tw, tt) = parts
        pooled = clip_encode(cc, cw, ids_of(ct, prompts, 77)[0])[2]
        text = t5_encode(tc, tw, ids_of(tt, prompts, tokens)[0], None)
        return text, pooled
    if family == "sd3":
        (lc, lw, lt), (gc, gw, gt), (tc, tw, tt) = parts
        _, l_pen, l_pool = clip_encode(lc, lw, ids_of(lt, prompts, 77)[0])
        _, g_pen, g_pool = clip_encode(gc, gw, ids_of(gt, prompts, 77)[0])
        t5 = t5_encode(tc, tw, ids_of(tt, prompts, tokens - 77)[0], None)
        clip = np.concatenate([l_pen, g_pen], -1)
        clip = np.pad(clip, ((0, 0), (0, 0), (0, t5.shape[-1] - clip.shape[-1])))
        return np.concatenate([clip, t5], -2), np.concatenate([l_pool, g_pool], -1)
    (uc, uw, ut), = parts
    ids, mask = ids_of(ut, [wan_clean(p) for p in prompts], tokens)
    states = t5_encode(uc, uw, ids, mask)
    return states * mask[..., None], None


# ---------------------------------------------------------------------------
# Making tiny tokenizers and encoders
# ---------------------------------------------------------------------------


def learn_bpe(corpus_lines, merges_count):
    """Plain BPE over CLIP's pre-tokenized, byte-mapped words."""
    from collections import Counter
    words = Counter()
    for line in corpus_lines:
        for match in CLIP_PATTERN.findall(clip_normalize(line)):
            mapped = "".join(BYTE_MAP[b] for b in match.encode("utf-8"))
            words[tuple(mapped[:-1]) + (mapped[-1] + "</w>",)] += 1
    merges = []
    for _ in range(merges_count):
        pairs = Counter()
        for word, n in words.items():
            for i in range(len(word) - 1):
                pairs[(word[i], word[i + 1])] += n
        if not pairs:
            break
        best = max(sorted(pairs), key=lambda p: pairs[p])
        merges.append(best)
        merged = Counter()
        for word, n in words.items():
            out, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += n
        words = merged
    return merges


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def make_clip_tokenizer(folder, pad_token):
    os.makedirs(folder, exist_ok=True)
    with open(CORPUS, encoding="utf-8") as f:
        lines = f.read().splitlines()
    merges = learn_bpe(lines, 300)
    # Byte tokens in bytes_to_unicode's order (printable bytes first), so
    # "!" is id 0 as in CLIP's vocabulary.
    order = sorted(range(256), key=lambda b: (ord(BYTE_MAP[b]) >= 256, ord(BYTE_MAP[b])))
    tokens = [BYTE_MAP[b] for b in order] + [BYTE_MAP[b] + "</w>" for b in order]
    tokens += [a + b for a, b in merges]
    tokens += ["<|startoftext|>", "<|endoftext|>"]
    vocab = {}
    for t in tokens:
        vocab.setdefault(t, len(vocab))
    write_json(os.path.join(folder, "vocab.json"), vocab)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")
    write_json(os.path.join(folder, "tokenizer_config.json"), {
        "tokenizer_class": "CLIPTokenizer", "model_max_length": 77,
        "bos_token": {"content": "<|startoftext|>", "lstrip": False, "rstrip": False},
        "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>", "pad_token": pad_token,
        "do_lower_case": True})
    write_json(os.path.join(folder, "special_tokens_map.json"), {
        "bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>",
        "unk_token": "<|endoftext|>", "pad_token": pad_token})
    return len(vocab), vocab["<|endoftext|>"]


def make_t5_tokenizer(folder, vocab_size):
    os.makedirs(folder, exist_ok=True)
    prefix = os.path.join(folder, "spiece")
    subprocess.run(["spm_train", f"--input={CORPUS}", f"--model_prefix={prefix}",
                    f"--vocab_size={vocab_size}", "--model_type=unigram",
                    "--pad_id=0", "--eos_id=1", "--unk_id=2", "--bos_id=-1",
                    "--character_coverage=1.0", "--num_threads=1", "--minloglevel=2",
                    "--seed_sentencepiece_size=100000"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.remove(prefix + ".vocab")
    write_json(os.path.join(folder, "tokenizer_config.json"), {
        "tokenizer_class": "T5Tokenizer", "model_max_length": 512, "extra_ids": 0,
        "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>", "legacy": True})
    write_json(os.path.join(folder, "special_tokens_map.json"), {
        "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"})


def clip_config(vocab, eos, hidden, heads, layers, projection, act, with_projection):
    return {"architectures": ["CLIPTextModelWithProjection" if with_projection else "CLIPTextModel"],
            "model_type": "clip_text_model", "vocab_size": vocab, "hidden_size": hidden,
            "intermediate_size": hidden * 2 + 2, "num_hidden_layers": layers,
            "num_attention_heads": heads, "max_position_embeddings": 77,
            "hidden_act": act, "layer_norm_eps": 1e-5, "projection_dim": projection,
            "bos_token_id": 0, "eos_token_id": eos, "pad_token_id": 1}


def t5_config(vocab, d_model, umt5, heads=3):
    return {"architectures": ["UMT5EncoderModel" if umt5 else "T5EncoderModel"],
            "model_type": "umt5" if umt5 else "t5", "vocab_size": vocab, "d_model": d_model,
            "d_kv": 4, "d_ff": d_model + 8, "num_layers": 2, "num_heads": heads,
            "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
            "layer_norm_epsilon": 1e-6, "feed_forward_proj": "gated-gelu",
            "is_encoder_decoder": True, "tie_word_embeddings": False}


def random_weights(config, rng):
    w = {}

    def normal(shape, scale):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def linear(name, out, inp, bias=True):
        w[name + ".weight"] = normal((out, inp), 1 / math.sqrt(inp))
        if bias:
            w[name + ".bias"] = normal((out,), 0.1)

    def norm(name, n, bias=True):
        w[name + ".weight"] = 1 + normal((n,), 0.1)
        if bias:
            w[name + ".bias"] = normal((n,), 0.1)

    if config["model_type"] in ("t5", "umt5"):
        d, inner, ff = config["d_model"], config["num_heads"] * config["d_kv"], config["d_ff"]
        w["shared.weight"] = normal((config["vocab_size"], d), 1.0)
        for i in range(config["num_layers"]):
            b = f"encoder.block.{i}."
            a = b + "layer.0.SelfAttention."
            norm(b + "layer.0.layer_norm", d, False)
            for n in "qkv":
                linear(a + n, inner, d, False)
            linear(a + "o", d, inner, False)
            if i == 0 or config["model_type"] == "umt5":
                w[a + "relative_attention_bias.weight"] = normal(
                    (config["relative_attention_num_buckets"], config["num_heads"]), 1.0)
            f = b + "layer.1.DenseReluDense."
            norm(b + "layer.1.layer_norm", d, False)
            linear(f + "wi_0", ff, d, False)
            linear(f + "wi_1", ff, d, False)
            linear(f + "wo", d, ff, False)
        norm("encoder.final_layer_norm", d, False)
        return w
    h = config["hidden_size"]
    p = "text_model."
    w[p + "embeddings.token_embedding.weight"] = normal((config["vocab_size"], h), 1.0)
    w[p + "embeddings.position_embedding.weight"] = normal((77, h), 0.5)
    for i in range(config["num_hidden_layers"]):
        l = f"{p}encoder.layers.{i}."
        norm(l + "layer_norm1", h)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            linear(l + "self_attn." + n, h, h)
        norm(l + "layer_norm2", h)
        linear(l + "mlp.fc1", config["intermediate_size"], h)
        linear(l + "mlp.fc2", h, config["intermediate_size"])
    norm(p + "final_layer_norm", h)
    if config["architectures"][0].endswith("WithProjection"):
        linear("text_projection", config["projection_dim"], h, False)
    return w


def write_encoder(folder, config, weights, dtype):
    os.makedirs(folder, exist_ok=True)
    write_json(os.path.join(folder, "config.json"), config)
    snapshot.write_safetensors(os.path.join(folder, "model.safetensors"), weights, dtype)


def make(args):
    with open(args.transformer) as f:
        transformer = json.load(f)
    out = args.snapshot
    os.makedirs(out, exist_ok=True)
    index_path = os.path.join(out, "model_index.json")
    index = {}
    if os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f)
    rng = np.random.default_rng(args.seed)
    dtype = {"f32": "F32", "f16": "F16", "bf16": "BF16"}[args.dtype]
    encoders = []
    if args.family == "flux":
        index["_class_name"] = "FluxPipeline"
        vocab, eos = make_clip_tokenizer(os.path.join(out, "tokenizer"), "<|endoftext|>")
        # FLUX's CLIP-L config keeps the legacy eos_token_id 2.
        encoders.append(("text_encoder", "tokenizer", "CLIPTextModel", "CLIPTokenizer",
                         clip_config(vocab, 2, transformer["pooled_projection_dim"], 2, 2,
                                     transformer["pooled_projection_dim"], "quick_gelu", False)))
        make_t5_tokenizer(os.path.join(out, "tokenizer_2"), 200)
        encoders.append(("text_encoder_2", "tokenizer_2", "T5EncoderModel", "T5TokenizerFast",
                         t5_config(200, transformer["joint_attention_dim"], False, args.t5_heads)))
    elif args.family == "sd3":
        index["_class_name"] = "StableDiffusion3Pipeline"
        pooled = transformer["pooled_projection_dim"]
        vocab, eos = make_clip_tokenizer(os.path.join(out, "tokenizer"), "<|endoftext|>")
        encoders.append(("text_encoder", "tokenizer", "CLIPTextModelWithProjection",
                         "CLIPTokenizer",
                         clip_config(vocab, eos, 4, 2, 2, pooled // 2, "quick_gelu", True)))
        # CLIP-G pads with "!", as SD3's tokenizer_2 does.
        vocab, eos = make_clip_tokenizer(os.path.join(out, "tokenizer_2"), "!")
        encoders.append(("text_encoder_2", "tokenizer_2", "CLIPTextModelWithProjection",
                         "CLIPTokenizer",
                         clip_config(vocab, eos, 8, 2, 3, pooled - pooled // 2, "gelu", True)))
        make_t5_tokenizer(os.path.join(out, "tokenizer_3"), 200)
        encoders.append(("text_encoder_3", "tokenizer_3", "T5EncoderModel", "T5TokenizerFast",
                         t5_config(200, transformer["joint_attention_dim"], False, args.t5_heads)))
    else:
        index["_class_name"] = "WanPipeline"
        make_t5_tokenizer(os.path.join(out, "tokenizer"), 200)
        encoders.append(("text_encoder", "tokenizer", "UMT5EncoderModel", "T5TokenizerFast",
                         t5_config(200, transformer["text_dim"], True, args.t5_heads)))
    for encoder, tokenizer, cls, tcls, config in encoders:
        index[encoder] = ["transformers", cls]
        index[tokenizer] = ["transformers", tcls]
        write_encoder(os.path.join(out, encoder), config, random_weights(config, rng), dtype)
    vae_config = os.path.join(out, "vae", "config.json")
    if os.path.exists(vae_config):
        with open(vae_config) as f:
            index["vae"] = ["diffusers", json.load(f).get("_class_name", "AutoencoderKL")]
    write_json(index_path, index)
    if args.break_:
        kind, _, arg = args.break_.partition(":")
        if kind == "missing":
            os.remove(os.path.join(out, arg))
        elif kind == "garbage":
            with open(os.path.join(out, arg), "wb") as f:
                f.write(b"\x00\x01garbage\xff")
        elif kind == "shape":
            folder = os.path.join(out, encoders[-1][0])
            w = snapshot.read_safetensors(os.path.join(folder, "model.safetensors"))
            w = {k: v.astype(np.float32) for k, v in w.items()}
            w[arg] = w[arg][..., :-1]
            snapshot.write_safetensors(os.path.join(folder, "model.safetensors"), w, dtype)
        else:
            sys.exit(f"text_check.py: unknown --break {args.break_}")


def check(args):
    embeds = np.load(args.embeds).astype(np.float64)
    prompts = [args.prompt, args.negative if args.negative is not None else ""]
    ok = True
    pooled_given = np.load(args.pooled).astype(np.float64) if args.pooled else None
    for branch in range(args.branches):
        text, pooled = encode_prompts(args.snapshot, args.family,
                                      [prompts[min(branch, 1)]] * args.batch, args.tokens)
        if embeds.shape[1:] != text.shape:
            print(f"branch {branch}: shape {embeds.shape[1:]} but the reference is {text.shape}")
            return 1
        error = np.abs(embeds[branch] - text).max() / np.abs(text).max()
        good = error <= args.tolerance
        ok &= good
        print(f"{args.family} branch {branch} text vs float64 reference: max relative error "
              f"{error:.3e}: {'ok' if good else 'MISMATCH'}")
        if pooled is not None and pooled_given is not None:
            error = np.abs(pooled_given[branch] - pooled).max() / np.abs(pooled).max()
            good = error <= args.tolerance
            ok &= good
            print(f"{args.family} branch {branch} pooled vs float64 reference: max relative "
                  f"error {error:.3e}: {'ok' if good else 'MISMATCH'}")
        if args.family == "wan":
            # Past each prompt's length the pipeline pads with zeros: exactly 0.
            padded = np.all(text == 0, -1)
            exact = bool(np.all(embeds[branch][padded] == 0)) and padded.any()
            ok &= exact
            print(f"wan branch {branch} rows past the prompt are zero: "
                  f"{'ok' if exact else 'MISMATCH'}")
    return 0 if ok else 1


def tokenize(args):
    tok = open_tokenizer(args.folder)
    length = args.max_length or tok.max_length
    ids, mask, full = tok.encode(args.prompt, length)
    kept = mask.count(1)
    print(json.dumps({"ids": ids[:kept], "length": kept, "untruncated": full}))
    return 0


TOKENIZER_CASES = [
    ("empty", ""),
    ("plain", "a photo of a cat sitting on a red chair"),
    ("several spaces", "  a   cat \t on\n\n a  chair  "),
    ("unicode", "Ünïcödé café naïve ÀÉÎÕÜ ß Straße İstanbul ΣΊΣΥΦΟΣ"),
    ("decomposed accents", "cafe\u0301 nai\u0308ve"),
    ("cjk", "東京の夜景 and 富士山"),
    ("emoji", "a smiling face 😀 and a red heart ❤️ 👍🏽"),
    ("contractions and digits", "it's 2024, we'll see 1,000 cats at 7:30pm!!"),
    ("case-folded contraction", "IT'S a cat; it'\u017f a dog"),
    ("compatibility expansion", "\ufdfa \ufdfa \ufb01ne \u2460"),
    ("control characters", "a\x07b\x1bc\u200bd\ufeffe\u2028f"),
    ("special token text", "a <|endoftext|> b </s> c <pad> d"),
    ("long", " ".join(["a photo of a very detailed mountain lake at sunset"] * 30)),
]


def tokenizer_cases(args):
    ok = True
    for name, prompt in TOKENIZER_CASES:
        tok = open_tokenizer(args.folder)
        ids, mask, full = tok.encode(prompt, tok.max_length if not args.max_length else args.max_length)
        kept = mask.count(1)
        expected = {"ids": ids[:kept], "length": kept, "untruncated": full}
        command = [args.dit_run, "--tokenize", args.folder, "--prompt", prompt]
        if args.max_length:
            command += ["--max-length", str(args.max_length)]
        run = subprocess.run(command, capture_output=True, text=True)
        got = json.loads(run.stdout) if run.returncode == 0 else {"exit": run.returncode,
                                                                     "stderr": run.stderr}
        same = got == expected
        ok &= same
        truncated = " (truncated)" if full > kept else ""
        print(f"{args.label} {name}: {kept} ids{truncated}: "
              f"{'ok' if same else 'MISMATCH ' + json.dumps(got) + ' vs ' + json.dumps(expected)}")
        if full > kept and "truncated" not in run.stderr and "keeps the first" not in run.stderr:
            print(f"{args.label} {name}: no truncation warning: MISMATCH")
            ok = False
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("snapshot")
    p.add_argument("--family", choices=sorted(FAMILIES), required=True)
    p.add_argument("--transformer", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32")
    p.add_argument("--break", dest="break_")
    p.add_argument("--t5-heads", type=int, default=3,
                   help="T5's heads: 3 by default, 4 for a T5 that TP 2 splits")
    p = sub.add_parser("tokenize")
    p.add_argument("folder")
    p.add_argument("--prompt", required=True)
    p.add_argument("--max-length", type=int, default=0)
    p = sub.add_parser("tokenizer-cases")
    p.add_argument("folder")
    p.add_argument("--dit-run", required=True)
    p.add_argument("--label", required=True)
    p.add_argument("--max-length", type=int, default=0)
    p = sub.add_parser("check")
    p.add_argument("snapshot")
    p.add_argument("--family", choices=sorted(FAMILIES), required=True)
    p.add_argument("--prompt", required=True)
    p.add_argument("--negative")
    p.add_argument("--branches", type=int, required=True)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("--embeds", required=True)
    p.add_argument("--pooled")
    p.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    if args.command == "make":
        make(args)
        return 0
    if args.command == "tokenize":
        return tokenize(args)
    if args.command == "tokenizer-cases":
        return tokenizer_cases(args)
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
