#!/usr/bin/env python3
"""The project's tokenizers against Hugging Face `tokenizers` and transformers.

Every tokenizer.json here is made by `tokenizers`' own BpeTrainer on a
generated corpus, in the layouts docs/models.md lists as supported: byte-level
BPE (GPT-2 split; Llama-3 and Qwen2 Split regexes; NFC, NFKC + Lowercase and
Replace normalizers) and SentencePiece-style BPE (byte_fallback; Metaspace
with prepend_scheme first/always/never and split on/off; Llama-2's Prepend +
Replace normalizers without a pre-tokenizer; unk_token with fuse_unk), with
special and non-special added tokens; and GPT-2's vocab.json + merges.txt
without a tokenizer.json. The pre-tokenizers of published tokenizers, run
through the regex engine (regex_tokenizers.py): tiktoken's r50k, cl100k and
o200k converted by transformers' TikTokenConverter, a Mistral tekken.json by
its MistralConverter, DeepSeek-V3's and DeepSeek-LLM's Split sequences (the
latter with Digits); a Split with each behavior (Removed, MergedWithPrevious,
MergedWithNext, Contiguous, inverted) and a literal String pattern. The
special tokens of tokenizer_config.json also appear inside the test texts. A
tokenizer_config.json written here names the special tokens for
transformers' AutoTokenizer, including ones the vocabulary lacks (an EOS
transformers adds as a new token), ones that are ordinary vocabulary entries
(transformers then matches them as special tokens in the text),
special_tokens_map.json overriding tokenizer_config.json, and none at all.

The test cases (at least 2,000, generated deterministically below) mix
accented Latin, CJK, Hangul, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai,
emoji (ZWJ sequences, flags, skin tones), digits, whitespace runs, code,
contractions, added tokens inside text, plus a few multi-kilobyte documents.

Per tokenizer and case, exactly equal ids:
* ids:          project encode()  ==  AutoTokenizer(text, add_special_tokens=False), and
                ==  tokenizers.Tokenizer.encode(text, add_special_tokens=False) where
                tokenizer_config.json names no special token that tokenizer.json lacks
                (the library alone does not know those)
* with_special: project encodeWithSpecialTokens()  ==  AutoTokenizer(text)["input_ids"]
                (add_special_tokens=True: BOS/EOS where the tokenizer adds them)
* document:     the ids the project stores for the text as one training
                document (DocumentEncoder, streamed in 16-byte pieces and cut at
                the tokenizer's safe cuts)  ==  the same AutoTokenizer ids
For the GPT-2, Llama-3 and Qwen2 splits, which the project runs through
hand-written scanners, the ids must also equal the project's own with the
same regex through Oniguruma (PLAB_SPLIT_SCANNERS=off).
And once per tokenizer: the project's EOS is AutoTokenizer's eos_token_id
(None included: then the project warns that documents are joined by the
separator it chose, or by none).

Not covered (docs/models.md: not supported): added-token lstrip/rstrip/normalized
flags (added tokens here are normalized=False, as the project matches them
literally), Regex-pattern Replace, WordPiece/Unigram models.
"""
import functools
import json
import os
import random
import sys

sys.dont_write_bytecode = True  # nothing written next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_common import run_checks  # noqa: E402

import tokenizers  # noqa: E402
import transformers  # noqa: E402
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402,E501
from transformers import AutoTokenizer  # noqa: E402

import regex_tokenizers  # noqa: E402

transformers.logging.set_verbosity_error()

MIN_CASES = 2000
PIECE_BYTES = 16

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")

FRAGMENTS = {
    "latin": ["café", "naïve", "Ångström", "über", "façade", "São Paulo", "Œuvre", "ﬁnancial", "ｆｕｌｌｗｉｄｔｈ",
              "résumé", "Zürich", "piñata", "Dvořák", "Łódź", "crème brûlée", "ÉCOLE", "İstanbul", "straße",
              "e\u0301tude", "Ａ１", "Hello", "world", "The quick brown fox", "jumps over", "the lazy dog",
              "tokenization", "HTTPServer", "camelCaseWord", "snake_case_name"],
    "cjk": ["日本語のテキスト", "中文分词测试", "東京都", "漢字かなカナ", "你好，世界！", "これはペンです。", "一二三四五",
            "ｶﾀｶﾅ", "𠀀𠀁", "龍"],
    "hangul": ["한국어 문장", "안녕하세요", "서울특별시"],
    "cyrillic": ["Привет мир", "ёлка", "Ёжик в тумане", "Слава", "україна", "БОЛЬШИЕ буквы"],
    "greek": ["Καλημέρα", "ΑΒΓΔ", "λόγος"],
    "arabic": ["مرحبا بالعالم", "العربية", "كِتَابٌ", "٣٤٥٦"],
    "hebrew": ["שלום עולם", "עִבְרִית"],
    "indic": ["हिन्दी भाषा", "नमस्ते", "தமிழ்"],
    "thai": ["ภาษาไทยไม่มีช่องว่าง", "สวัสดี"],
    "emoji": ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷🇯🇵", "❤️", "🤖🚀", "✨", "🏳️‍🌈", "©®™"],
    "digits": ["12345", "3.14159", "1,000,000", "2024-01-31", "0x1F", "①②③", "½", "1e-9", "007", "99999999999"],
    "space": [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", " \n ", "\r\n", "\u00a0", "\u3000", "\u2003", " \t\n"],
    "code": ["def f(x):\n    return x**2", "if (a && b) { c++; }", "<div class=\"x\">", "SELECT * FROM t;",
             "x = [1, 2, 3]  # comment", "for i in range(10):", "std::vector<int> v;", "#include <stdio.h>",
             "console.log('hi');", "a->b", "~/path/to/file.txt", "https://example.com/a?b=c&d=e", "    indented",
             "/* block */", "λx.x"],
    "english": ["don't", "I'm", "they'll", "It's", "DON'T", "we've", "you'd", "she's", "O'Neil", "rock'n'roll"],
    "punct": ["!!!", "...", "—", "«quote»", "“curly”", "¿Qué?", "¡Hola!", "(a)", "[b]", "{c}", "@user", "#tag",
              "$100", "%", "^_^", "***", "---", "==="],
}
SEPARATORS = ["", " ", " ", " ", "  ", "\n", "\t", ", ", ". ", " - "]


def generate_cases(seed, count, added_words):
    rng = random.Random(seed)
    fragments = [f for group in FRAGMENTS.values() for f in group]
    cases = list(fragments)
    cases += [f" {f}" for f in fragments[:40]] + [f"{f} " for f in fragments[40:80]]
    cases += ["", " ", "a", "\n", "  leading", "trailing  ", "multiple   inner   spaces"]
    for word in added_words:
        cases += [word, f"x{word}y", f"before {word} after", f"{word}{word}", f" {word} "]
    while len(cases) < count:
        parts = [rng.choice(fragments) for _ in range(rng.randint(1, 6))]
        if added_words and rng.random() < 0.08:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice(added_words))
        text = ""
        for p in parts:
            text += (rng.choice(SEPARATORS) if text else "") + p
        if rng.random() < 0.1:
            text = text.upper() if rng.random() < 0.5 else text.lower()
        cases.append(text)
    # A few long documents: the training pipeline streams them in pieces.
    for n in range(6):
        cases.append("\n".join(rng.choice(fragments) + rng.choice(SEPARATORS) + rng.choice(fragments)
                               for _ in range(300 + 50 * n)))
    return cases


def training_corpus():
    rng = random.Random(7)
    fragments = [f for group in FRAGMENTS.values() for f in group]
    return [" ".join(rng.choice(fragments) for _ in range(rng.randint(2, 8))) for _ in range(4000)]


# --- tokenizer builders --------------------------------------------------------------------------

def byte_level(pre, normalizer=None, template=None, specials=("<|endoftext|>",), vocab=1500):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=list(specials), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(training_corpus(), trainer)
    post = processors.ByteLevel(trim_offsets=False)
    if template:
        bos = template
        post = processors.Sequence([post, processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tok.token_to_id(bos))])])
    tok.post_processor = post
    return tok


def with_byte_tokens(tok):
    """SentencePiece layout: <unk>, <s>, </s> at 0..2, then <0x00>..<0xFF>, then the trained pieces."""
    j = json.loads(tok.to_str())
    vocab = j["model"]["vocab"]
    specials = ["<unk>", "<s>", "</s>"]
    out = {s: i for i, s in enumerate(specials)}
    for b in range(256):
        out[f"<0x{b:02X}>"] = len(out)
    for piece, _ in sorted(vocab.items(), key=lambda kv: kv[1]):
        if piece not in out:
            out[piece] = len(out)
    j["model"]["vocab"] = out
    return Tokenizer.from_str(json.dumps(j))


def sentencepiece(pre=None, normalizer=None, byte_fallback=True, vocab=1200, limit_alphabet=120):
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=byte_fallback, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False,
                                  limit_alphabet=limit_alphabet)
    tok.train_from_iterator(training_corpus(), trainer)
    if byte_fallback:
        tok = with_byte_tokens(tok)
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                       special_tokens=[("<s>", 1)])
    return tok


def metaspace(scheme, split):
    return pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=scheme, split=split)


def split(regex):
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def regex_split(regex, behavior, invert=False):
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(regex), behavior=behavior, invert=invert),
                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def tokenizer_specs():
    """name, builder(folder), added tokens [(content, special)], tokenizer_config fields (a
    "special_tokens_map" entry becomes special_tokens_map.json)"""
    gpt2_config = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
    llama3_specials = ("<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>")
    qwen_specials = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
    sp_config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
    return [
        ("byte-level GPT-2 split", lambda: byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False)),
         [("<|fim_prefix|>", True), ("[CUSTOM]", False)], gpt2_config),
        ("byte-level Llama-3 split + BOS template", lambda: byte_level(
            split(LLAMA3_REGEX), template="<|begin_of_text|>", specials=llama3_specials),
         [("<|start_header_id|>", True), ("<|end_header_id|>", True), ("my_tool", False)],
         {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}),
        ("byte-level Qwen2 split + NFC", lambda: byte_level(split(QWEN2_REGEX), normalizers.NFC(),
                                                            specials=qwen_specials),
         [("<tool_call>", False)], {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}),
        ("byte-level NFKC + Lowercase", lambda: byte_level(
            pre_tokenizers.ByteLevel(add_prefix_space=False),
            normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])),
         [("<|sep|>", True)], gpt2_config),
        ("byte-level NFD + Replace", lambda: byte_level(
            pre_tokenizers.ByteLevel(add_prefix_space=False),
            normalizers.Sequence([normalizers.NFD(), normalizers.Replace("\t", "    "), normalizers.Replace("``", "\"")])),
         [], gpt2_config),
        ("SentencePiece BPE Metaspace first, byte_fallback", lambda: sentencepiece(metaspace("first", False)),
         [("<|im_start|>", True), ("<|im_end|>", True), ("[INST]", False)], sp_config),
        ("SentencePiece BPE Metaspace always split", lambda: sentencepiece(metaspace("always", True)),
         [("<pad>", True)], sp_config),
        ("SentencePiece BPE Metaspace never split", lambda: sentencepiece(metaspace("never", True)), [], sp_config),
        ("SentencePiece BPE Llama-2 (Prepend + Replace, no pre-tokenizer)", lambda: sentencepiece(
            None, normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])),
         [("<<SYS>>", False)], sp_config),
        ("SentencePiece BPE unk + fuse_unk (no byte_fallback)", lambda: sentencepiece(
            metaspace("always", True), byte_fallback=False, limit_alphabet=60), [], sp_config),
        # GPT-2's slow-tokenizer files only: its special tokens come from tokenizer_config.json.
        ("GPT-2 vocab.json + merges.txt (no tokenizer.json)",
         lambda: byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False)), [],
         {**gpt2_config, "tokenizer_class": "GPT2Tokenizer", "files": "vocab.json + merges.txt"}),
        # Split behaviors and patterns a real regex engine runs.
        ("Split \\s+ MergedWithPrevious", lambda: byte_level(regex_split(r"\s+", "merged_with_previous")), [],
         gpt2_config),
        ("Split [.,!?] MergedWithNext", lambda: byte_level(regex_split(r"[.,!?]", "merged_with_next")), [], gpt2_config),
        ("Split \\p{L}+ Contiguous, inverted", lambda: byte_level(regex_split(r"\p{L}+", "contiguous", True)), [],
         gpt2_config),
        ("Split \\s+ Removed (spaces dropped)", lambda: byte_level(regex_split(r"\s+", "removed")), [], gpt2_config),
        ("Split (?<=[a-z])(?=[A-Z]) look-around Isolated",
         lambda: byte_level(regex_split(r"(?<=\p{Ll})(?=\p{Lu})|\s+", "isolated")), [], gpt2_config),
        ("Split by the literal String ', '", lambda: byte_level(pre_tokenizers.Sequence(
            [pre_tokenizers.Split(", ", behavior="isolated"),
             pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])), [], gpt2_config),
        ("ByteLevel add_prefix_space after a Split", lambda: byte_level(pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated"),
             pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False)])), [], gpt2_config),
        # EOS and special tokens as transformers resolves them.
        ("EOS <|im_end|> named, not in the vocabulary (transformers adds it)",
         lambda: byte_level(split(QWEN2_REGEX), specials=("<|endoftext|>",)), [],
         {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}),
        ("special tokens that are ordinary vocabulary entries (matched as specials)",
         lambda: byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False)), [],
         {"eos_token": "the", "pad_token": "ing", "unk_token": "<|endoftext|>",
          "additional_special_tokens": ["<extra_1>", "world"]}),
        ("special_tokens_map.json overrides tokenizer_config.json",
         lambda: byte_level(split(LLAMA3_REGEX), specials=("<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>")),
         [], {"eos_token": "<|end_of_text|>", "special_tokens_map": {"eos_token": {"content": "<|eot_id|>"}}}),
        ("no EOS named (transformers: eos_token_id None)",
         lambda: byte_level(split(LLAMA3_REGEX), specials=("<|endoftext|>",)), [], {}),
    ] + [(f"regex pre-tokenizer: {name}", functools.partial(builder, training_corpus(), 1500), [], config)
         for name, (builder, config) in regex_tokenizers.KINDS.items()]


def build_folder(folder, builder, added, config_fields):
    """Writes tokenizer.json (or, with config_fields["files"], vocab.json +
    merges.txt only) and tokenizer_config.json; returns the `tokenizers`
    reference."""
    os.makedirs(folder)
    tok = builder(folder) if isinstance(builder, functools.partial) else builder()
    for content, special in added:
        token = AddedToken(content, special=special, normalized=False)
        if special:
            tok.add_special_tokens([token])
        else:
            tok.add_tokens([token])
    config_fields = dict(config_fields)
    special_map = config_fields.pop("special_tokens_map", None)
    if special_map:
        with open(os.path.join(folder, "special_tokens_map.json"), "w") as f:
            json.dump(special_map, f)
    if config_fields.pop("files", None):
        tok.model.save(folder)  # vocab.json + merges.txt
    else:
        tok.save(os.path.join(folder, "tokenizer.json"))
        tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1 << 30,
              "clean_up_tokenization_spaces": False, **config_fields}
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return tok


def show(ids, limit=24):
    return str(ids[:limit]) + (" ..." if len(ids) > limit else "")


def compare(tally, name, what, cases, ours, theirs):
    bad = [i for i in range(len(cases)) if ours[i] != theirs[i]]
    for i in bad[:3]:
        print(f"     mismatch {what} on {cases[i][:80]!r}:\n       project      {show(ours[i])}\n"
              f"       reference    {show(theirs[i])}")
    tally.check(f"{name}: {what}", not bad, f"{len(cases) - len(bad)}/{len(cases)} cases agree")


# The tokenizers whose split the project runs through a hand-written scanner.
SCANNER_SPECS = ("byte-level GPT-2 split", "byte-level Llama-3 split", "byte-level Qwen2 split")


def run_tokenizer(index, spec, probe, tally, work):
    name, builder, added, config_fields = spec
    folder = os.path.join(work, f"tok{index:02d}")
    tok = build_folder(folder, builder, added, config_fields)
    named = [v for k, v in config_fields.items() if k.endswith("_token")]
    named += config_fields.get("additional_special_tokens", [])
    named += [v["content"] if isinstance(v, dict) else v for v in config_fields.get("special_tokens_map", {}).values()]
    words = [c for c, _ in added] + sorted(set(named))
    cases = generate_cases(100 + index, MIN_CASES, words)
    cases_file = os.path.join(folder, "cases.json")
    with open(cases_file, "w") as f:
        json.dump({"texts": cases, "piece_bytes": PIECE_BYTES}, f)
    out_file = os.path.join(folder, "project.json")
    probe("encode", folder, cases_file, out_file)
    with open(out_file) as f:
        ours = json.load(f)
    print(f"{name}: project kind {ours['kind']}, {ours['vocab_size']} ids, {len(cases)} cases")

    auto = AutoTokenizer.from_pretrained(folder)
    framed = auto(cases, add_special_tokens=True)["input_ids"]
    compare(tally, name, "ids vs AutoTokenizer (add_special_tokens=False)", cases, [c["ids"] for c in ours["cases"]],
            auto(cases, add_special_tokens=False)["input_ids"])
    if name.split(" + ")[0] in SCANNER_SPECS:
        # The hand-written scanners are kept only where they give the regex's
        # pieces: the same regex through Oniguruma must give the same ids.
        engine_file = os.path.join(folder, "project-oniguruma.json")
        os.environ["PLAB_SPLIT_SCANNERS"] = "off"
        try:
            probe("encode", folder, cases_file, engine_file)
        finally:
            del os.environ["PLAB_SPLIT_SCANNERS"]
        with open(engine_file) as f:
            engine = json.load(f)
        compare(tally, name, "scanner ids vs the same regex through Oniguruma", cases,
                [c["ids"] for c in ours["cases"]], [c["ids"] for c in engine["cases"]])
    # The tokenizers library alone knows only tokenizer.json's added tokens:
    # where tokenizer_config.json names others, transformers' ids are the reference.
    library_specials = {t.content for t in tok.get_added_tokens_decoder().values()}
    if set(auto.all_special_tokens) <= library_specials:
        plain = [e.ids for e in tok.encode_batch(cases, add_special_tokens=False)]
        compare(tally, name, "ids vs tokenizers (add_special_tokens=False)", cases,
                [c["ids"] for c in ours["cases"]], plain)
    compare(tally, name, "with_special vs AutoTokenizer (add_special_tokens=True)", cases,
            [c["with_special"] for c in ours["cases"]], framed)
    compare(tally, name, f"training document ({PIECE_BYTES}-byte pieces) vs AutoTokenizer", cases,
            [c["document"] for c in ours["cases"]], framed)
    tally.check(f"{name}: EOS", ours["tokenizer_eos_id"] == auto.eos_token_id,
                f"project EOS {ours['tokenizer_eos_id']}, AutoTokenizer eos_token_id {auto.eos_token_id} "
                f"({auto.eos_token!r}); project puts {ours['special_before']} before, {ours['special_after']} after")
    if auto.eos_token_id is None:
        tally.check(f"{name}: without an EOS the separator is named and warned about",
                    bool(ours["separator_warning"]), ours["separator_warning"] or "no warning")
    tally.check(f"{name}: vocabulary size as AutoTokenizer's len()", ours["vocab_size"] == len(auto),
                f"project {ours['vocab_size']}, len(AutoTokenizer) {len(auto)}")


def main():
    checks = [(spec[0], functools.partial(run_tokenizer, i, spec)) for i, spec in enumerate(tokenizer_specs())]
    return run_checks(__doc__, f"tokenizers {tokenizers.__version__}, transformers {transformers.__version__}",
                      "plab-ref-tokenizers-", checks)

if __name__ == "__main__":
    sys.exit(main())
