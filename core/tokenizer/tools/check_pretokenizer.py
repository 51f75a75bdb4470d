#!/usr/bin/env python3
"""Cross-checks the pre-tokenizer scanners (core/tokenizer/pretokenizer.cpp)
against the GPT-2 / Llama-3 / Qwen2 regexes evaluated by python3's `regex`
module on random strings. Usage, from the repository root:
  g++ -O1 -std=c++17 -I core core/tokenizer/tools/pretokenizer_driver.cc \
      core/tokenizer/pretokenizer.cpp core/tokenizer/unicode_classes.cpp \
      core/tokenizer/unicode_tables.cpp -o /tmp/pretokenizer_driver
  python3 core/tokenizer/tools/check_pretokenizer.py /tmp/pretokenizer_driver
Characters whose class differs between Unicode versions, and \\x1c-\\x1f
(which Python counts as \\s but Unicode White_Space does not), are avoided.
"""
import random
import subprocess
import sys

import regex

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
ALPHABET = list("abcXYZ'sStTrReEvVmMlLdD019") + [" ", " ", " ", "\n", "\r", "\t", "!", ",", ".", "-", "é", "日", "٣",
                                                  "²", "🙂", "\u3000", "\u00a0", "Ж", "ǅ"]


def main(driver, count=6000):
    patterns = [regex.compile(p) for p in (GPT2, LLAMA3, QWEN2)]
    rng = random.Random(0)
    cases = [(n % 3, "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 25)))) for n in range(count)]
    stdin = "".join(f"{rule}\t{text.encode().hex()}\n" for rule, text in cases)
    lines = subprocess.run([driver], input=stdin.encode(), capture_output=True, check=True).stdout.decode().split("\n")
    bad = 0
    for (rule, text), line in zip(cases, lines):
        mine = [bytes.fromhex(p).decode() for p in line.split(",")] if line else []
        if mine != patterns[rule].findall(text):
            bad += 1
            print("rule", rule, repr(text), "scanner", mine, "regex", patterns[rule].findall(text))
    print(f"{bad} mismatches in {count} strings")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
