#!/usr/bin/env python3
"""Encode throughput per pre-tokenizer kind: the project (build/bench/bench_tokenizer)
beside the Hugging Face tokenizers library, one thread each, on the same 5 MB
multilingual text.

  .venv/bin/python bench/tokenizer_throughput.py [--bench build/bench/bench_tokenizer]
      [--rounds 5] [--megabytes 5] [--kinds NAME,...]

The tokenizers are built here as the reference tests build them
(tests/reference/tokenizers_vs_hf.py, regex_tokenizers.py): byte-level BPEs
trained with the library's BpeTrainer on the tests' corpus, with the GPT-2,
Llama-3 and Qwen2 splits (the project's hand-written scanners, and the same
Llama-3 split through Oniguruma: PLAB_SPLIT_SCANNERS=off), tiktoken's r50k,
cl100k and o200k and tekken (transformers' converters), DeepSeek-V3's and
DeepSeek-LLM's Split sequences, and a SentencePiece-style Metaspace BPE.

The text: documents drawn from the tests' multilingual fragments (Latin,
CJK, Hangul, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai, emoji, code,
digits, whitespace runs), one per line, about 5 MB. Each line is one
document, encoded without special tokens: the project's Tokenizer::encode per
line; the library's Tokenizer.encode_batch_fast (its fastest path: no
offsets), with RAYON_NUM_THREADS=1, and encode_batch, the faster of the two
counted. Rounds alternate the two (A, B, A, B ...), each side loading its
tokenizer afresh, so both start with an empty BPE cache; the median of the
rounds is printed, and the ids of the two must agree (a checksum over every
id).
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
sys.dont_write_bytecode = True

import tokenizers  # noqa: E402
from tokenizers import Tokenizer, pre_tokenizers  # noqa: E402

import regex_tokenizers  # noqa: E402
import tokenizers_vs_hf as tv  # noqa: E402


def kinds():
    """name -> (builder(folder) -> Tokenizer, environment for the project's side)."""
    corpus = tv.training_corpus()
    out = {
        "ByteLevel, GPT-2 split (scanner)":
            (lambda folder: tv.byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False), vocab=5000), {}),
        "Split Llama-3 regex (scanner)": (lambda folder: tv.byte_level(tv.split(tv.LLAMA3_REGEX), vocab=5000), {}),
        "Split Llama-3 regex (Oniguruma)":
            (lambda folder: tv.byte_level(tv.split(tv.LLAMA3_REGEX), vocab=5000), {"PLAB_SPLIT_SCANNERS": "off"}),
        "Split Qwen2 regex (scanner)": (lambda folder: tv.byte_level(tv.split(tv.QWEN2_REGEX), vocab=5000), {}),
        "Metaspace (SentencePiece BPE)":
            (lambda folder: tv.sentencepiece(tv.metaspace("always", True), vocab=5000), {}),
    }
    for name, (builder, _) in regex_tokenizers.KINDS.items():
        out[name + " (Oniguruma)"] = ((lambda b: lambda folder: b(corpus, 5000, folder))(builder), {})
    return out


def text_of(megabytes, seed=1):
    rng = random.Random(seed)
    fragments = [f for group in tv.FRAGMENTS.values() for f in group]
    lines, size = [], 0
    while size < megabytes * 1_000_000:
        line = ""
        for _ in range(rng.randint(3, 40)):
            line += (rng.choice(tv.SEPARATORS[:-2]) if line else "") + rng.choice(fragments)
        line = line.replace("\n", " ") + "\n"
        lines.append(line)
        size += len(line.encode())
    return "".join(lines)


def checksum(batches):
    c = 0
    for ids in batches:
        for i in ids:
            c = (c * 31 + i) & 0xFFFFFFFFFFFFFFFF
    return c


def library_round(path, lines):
    tok = Tokenizer.from_file(path)
    best = None
    for method in (tok.encode_batch_fast, tok.encode_batch):
        start = time.perf_counter()
        encodings = method(lines, add_special_tokens=False)
        seconds = time.perf_counter() - start
        if best is None or seconds < best[0]:
            best = (seconds, [e.ids for e in encodings])
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "bench_tokenizer"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--kinds", default="", help="comma-separated substrings of the kinds to run")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="plab-bench-tokenizer-")
    try:
        text_file = os.path.join(work, "text.txt")
        text = text_of(args.megabytes)
        with open(text_file, "w", encoding="utf-8") as f:
            f.write(text)
        lines = text.splitlines(keepends=True)
        nbytes = len(text.encode())
        print(f"tokenizers {tokenizers.__version__}; {nbytes / 1e6:.2f} MB in {len(lines)} documents; "
              f"{args.rounds} interleaved rounds, one thread each; median MB/s")
        print("| pre-tokenizer | project MB/s | tokenizers MB/s | project / tokenizers | ids |")
        print("|---|---|---|---|---|")
        wanted = [k.strip() for k in args.kinds.split(",") if k.strip()]
        for index, (name, (builder, env)) in enumerate(kinds().items()):
            if wanted and not any(w in name for w in wanted):
                continue
            folder = os.path.join(work, f"kind{index}")
            os.makedirs(folder)
            tok = builder(folder)
            tok.save(os.path.join(folder, "tokenizer.json"))
            with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
                json.dump({"tokenizer_class": "PreTrainedTokenizerFast"}, f)
            ours, theirs, same = [], [], True
            for _ in range(args.rounds):
                done = subprocess.run([args.bench, folder, text_file, "1"], capture_output=True, text=True,
                                      env={**os.environ, **env}, check=True)
                result = json.loads(done.stdout.strip().splitlines()[-1])
                ours.append(result["mb_per_s"])
                seconds, ids = library_round(os.path.join(folder, "tokenizer.json"), lines)
                theirs.append(nbytes / seconds / 1e6)
                same = same and result["checksum"] == checksum(ids)
            a, b = statistics.median(ours), statistics.median(theirs)
            print(f"| {name} | {a:.2f} | {b:.2f} | {a / b:.2f}x | {'equal' if same else 'DIFFER'} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
