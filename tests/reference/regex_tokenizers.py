"""tokenizer.json files with the pre-tokenizers of published tokenizers,
built offline (no download) the way their published files were made:

* cl100k, o200k, r50k: tiktoken's split patterns (the current ones, with
  possessive quantifiers and `\\s++$`) and a byte-level BPE trained here with
  the `tokenizers` BpeTrainer, written as a tiktoken .tiktoken rank file and
  converted by transformers' own TikTokenConverter (its loader of that file
  format is replaced by a reader of the file written here: the `tiktoken`
  package is not needed);
* tekken: a Mistral tekken.json with tekken's pattern and such ranks,
  converted by transformers' MistralConverter;
* DeepSeek-V3 and DeepSeek-LLM: their Sequence of Split pre-tokenizers (CJK
  runs, digit runs, a punctuation/letter regex; DeepSeek-LLM with `\\s+$` and
  a Digits pre-tokenizer), built with the `tokenizers` API.

Shared by tokenizers_vs_hf.py (ids against `tokenizers`) and
bench/tokenizer_throughput.py (encode speed beside `tokenizers`).
"""
import base64
import json
import os

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers.convert_slow_tokenizer import TikTokenConverter, bytes_to_unicode
from transformers.integrations.mistral.tokenizer import MistralConverter

R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
          r"""\s*[\r\n]|\s+(?!\S)|\s""")
O200K = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
TEKKEN = (r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"""
          r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}|"""
          r""" ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
DEEPSEEK_V3 = [
    r"\p{N}{1,3}",
    "[一-龥\u3040-ゟ゠-ヿ]+",
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|"""
    r"""\s*[\r\n]+|\s+(?!\S)|\s+""",
]
DEEPSEEK_LLM = [
    "[\r\n]",
    r"\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
    r"\s?[!-/:-~！-／：-～‘-‟　-。]+",
    r"\s+$",
    "[一-龥ࠀ-一가-퟿]+",
]


def trained_ranks(pre_tokenizer, corpus, vocab_size):
    """Byte strings in rank order (the 256 bytes first, then the merges in
    the order the trainer learnt them), as a .tiktoken file lists them."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer)
    decoder = {c: b for b, c in bytes_to_unicode().items()}
    ranked = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    out = [bytes(decoder[c] for c in token) for token, _ in ranked]
    singles = [t for t in out if len(t) == 1]
    assert len(singles) == 256, "the trainer's alphabet must hold every byte"
    return singles + [t for t in out if len(t) > 1]


def split_then_bytes(patterns):
    return pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(p), behavior="isolated", invert=False) for p in patterns]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


class FileTikTokenConverter(TikTokenConverter):
    """transformers' converter, reading the rank file written here itself."""

    @staticmethod
    def load_tiktoken_bpe(path):
        ranks = {}
        with open(path, "rb") as f:
            for line in f:
                if line.strip():
                    token, rank = line.split()
                    ranks[base64.b64decode(token)] = int(rank)
        return ranks


def tiktoken_style(pattern, corpus, vocab_size, folder):
    ranks = trained_ranks(split_then_bytes([pattern]), corpus, vocab_size)
    path = os.path.join(folder, "ranks.tiktoken")
    with open(path, "wb") as f:
        for rank, token in enumerate(ranks):
            f.write(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    return FileTikTokenConverter(vocab_file=path, pattern=pattern,
                                 extra_special_tokens=["<|endoftext|>", "<|im_end|>"]).converted()


def tekken_style(corpus, vocab_size, folder):
    ranks = trained_ranks(split_then_bytes([TEKKEN]), corpus, vocab_size)
    specials = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]"]
    tekken = {
        "config": {"pattern": TEKKEN, "num_vocab_tokens": len(ranks) + len(specials),
                   "default_vocab_size": len(ranks) + len(specials), "default_num_special_tokens": len(specials),
                   "version": "v7"},
        "vocab": [{"rank": r, "token_bytes": base64.b64encode(t).decode(), "token_str": None}
                  for r, t in enumerate(ranks)],
        "special_tokens": [{"rank": r, "token_str": s, "is_control": True} for r, s in enumerate(specials)],
    }
    path = os.path.join(folder, "tekken.json")
    with open(path, "w") as f:
        json.dump(tekken, f)
    return MistralConverter(path).converted()


def deepseek_style(patterns, corpus, vocab_size, digits=False):
    steps = [pre_tokenizers.Split(Regex(p), behavior="isolated", invert=False) for p in patterns]
    if digits:
        steps.append(pre_tokenizers.Digits(individual_digits=True))
    pre = pre_tokenizers.Sequence(steps + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  special_tokens=["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


# name -> (builder(corpus, vocab_size, folder) -> Tokenizer, tokenizer_config fields)
KINDS = {
    "r50k (tiktoken, TikTokenConverter)": (
        lambda corpus, n, folder: tiktoken_style(R50K, corpus, n, folder), {"eos_token": "<|endoftext|>"}),
    "cl100k (tiktoken, TikTokenConverter)": (
        lambda corpus, n, folder: tiktoken_style(CL100K, corpus, n, folder), {"eos_token": "<|endoftext|>"}),
    "o200k (tiktoken, TikTokenConverter)": (
        lambda corpus, n, folder: tiktoken_style(O200K, corpus, n, folder), {"eos_token": "<|endoftext|>"}),
    "tekken (Mistral, MistralConverter)": (
        lambda corpus, n, folder: tekken_style(corpus, n, folder), {"bos_token": "<s>", "eos_token": "</s>"}),
    "DeepSeek-V3 (Split sequence)": (
        lambda corpus, n, folder: deepseek_style(DEEPSEEK_V3, corpus, n),
        {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}),
    "DeepSeek-LLM (Split sequence, \\s+$, Digits)": (
        lambda corpus, n, folder: deepseek_style(DEEPSEEK_LLM, corpus, n, digits=True),
        {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}),
}
