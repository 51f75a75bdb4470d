#!/usr/bin/env python3
"""Throughput and ids of SentencePiece-style tokenizer.json files, against
the Hugging Face `tokenizers` package. Not a test: a dev tool for the encode
speed of texts that reach the BPE merge as one long piece (Llama-2's
Prepend + Replace normalizers without a pre-tokenizer, Mistral's Metaspace
with split: false). Usage, from the repository root:
  g++ -O2 -std=c++17 -I core core/tokenizer/tools/encode_speed_driver.cc \
      core/tokenizer/*.cpp core/util/json_limits.cpp -lutf8proc -o /tmp/encode_speed
  .venv/bin/python core/tokenizer/tools/sentencepiece_speed.py /tmp/encode_speed [workdir]
It trains a small SentencePiece-style BPE (byte fallback, 8000 tokens) on
the docstrings of the installed transformers package, writes it in four
layouts (Llama-2 normalizers; Metaspace split false / true; and a Llama-2
layout trained without word boundaries, whose merges cross "▁"), times the
driver on one ~1 MB document and on many short ones, and compares every id
with tokenizers' encode(add_special_tokens=False).
"""
import ast
import glob
import json
import os
import random
import subprocess
import sys
import time

from tokenizers import Tokenizer, models, pre_tokenizers, trainers, normalizers

MARK = "\u2581"


def corpus():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.join(here, "..", "..", "..")
    pattern = os.path.join(root, ".venv/lib/python3*/site-packages/transformers/models/*/modeling_*.py")
    docs = []
    for path in sorted(glob.glob(pattern))[:400]:
        try:
            tree = ast.parse(open(path, encoding="utf-8").read())
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > 200:
                    docs.append(doc)
    return docs


def train(docs, word_boundaries):
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend(MARK), normalizers.Replace(" ", MARK)])
    if word_boundaries:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=MARK, prepend_scheme="never", split=True)
    trainer = trainers.BpeTrainer(vocab_size=8000, special_tokens=["<unk>", "<s>", "</s>"], limit_alphabet=200,
                                  show_progress=False)
    tok.train_from_iterator(docs, trainer)
    return json.loads(tok.to_str())


def llama2_layout(trained):
    """Llama-2's ids: <unk> <s> </s>, <0x00>..<0xFF>, then the trained pieces."""
    model = trained["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = 3 + b
    for token, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1]):
        if token not in vocab:
            vocab[token] = len(vocab)
    added = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for c, i in (("<unk>", 0), ("<s>", 1), ("</s>", 2))]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": MARK},
                                                           {"type": "Replace", "pattern": {"String": " "},
                                                            "content": MARK}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": model["merges"]},
    }


def metaspace_layout(llama2, split):
    j = json.loads(json.dumps(llama2))
    j["normalizer"] = None
    j["pre_tokenizer"] = {"type": "Metaspace", "replacement": MARK, "prepend_scheme": "first", "split": split}
    return j


def main(driver, workdir="/tmp/sentencepiece-speed"):
    os.makedirs(workdir, exist_ok=True)
    docs = corpus()
    rng = random.Random(0)
    # Some characters outside the training alphabet: byte fallback.
    extra = ["\u65e5\u672c", "caf\u00e9", "\U0001F642", "\n\n", "  ", "\t"]
    long_doc = "\n\n".join(docs[: len(docs) // 2])[: 1 << 20]
    long_doc = "".join(c + (rng.choice(extra) if rng.random() < 0.002 else "") for c in long_doc)
    short_docs = [d for d in docs[len(docs) // 2:]][:1000]
    with_boundaries = llama2_layout(train(docs, True))
    layouts = {
        "llama2": with_boundaries,
        "metaspace-nosplit": metaspace_layout(with_boundaries, False),
        "metaspace-split": metaspace_layout(with_boundaries, True),
        "llama2-crossing": llama2_layout(train(docs, False)),
    }
    crossing = sum(1 for m in layouts["llama2-crossing"]["model"]["merges"]
                   if MARK in "".join(m if isinstance(m, list) else m.split(" "))[1:])
    print(f"llama2-crossing: {crossing} merges with a '{MARK}' after their first character")
    texts = {"long": [long_doc], "short": short_docs}
    ok = True
    for name, layout in layouts.items():
        path = os.path.join(workdir, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(layout, f, ensure_ascii=False)
        reference = Tokenizer.from_file(path)
        for kind, items in texts.items():
            text_path = os.path.join(workdir, kind + ".txt")
            with open(text_path, "w", encoding="utf-8") as f:
                f.write("\0".join(items))  # the driver encodes each NUL-separated document on its own
            t0 = time.perf_counter()
            expected = [reference.encode(d, add_special_tokens=False).ids for d in items]
            hf_seconds = time.perf_counter() - t0
            out_path = os.path.join(workdir, f"{name}-{kind}.ids")
            result = subprocess.run([driver, path, text_path, out_path], capture_output=True, text=True, check=True)
            with open(out_path) as f:
                got = [[int(x) for x in line.split()] for line in f.read().split("\n")[: len(items)]]
            same = got == expected
            ok = ok and same
            mb = sum(len(d.encode()) for d in items) / 1e6
            print(f"{name:18} {kind:5} {mb:6.2f} MB  plab {result.stdout.strip():>12}  "
                  f"tokenizers {mb / hf_seconds:7.2f} MB/s  ids {'identical' if same else 'DIFFER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
