#!/usr/bin/env python3
"""The other direction: what the project writes, read by transformers.

A run's checkpoint-<step>/ folder is written by saveCheckpoint (config.json +
model.safetensors, tensors in the dtype they train in). A user takes it out
after fine-tuning and opens it with AutoModelForCausalLM.from_pretrained. For
each architecture: a tiny transformers model is saved, loaded by the probe the
way a run loads it and written back with the project's checkpoint writer;

* fp32 plan: from_pretrained (default arguments: config.json's dtype) must
  load it in fp32 with no missing or unexpected weights, every weight bit-identical to the original, and its logits within
  1e-4 of the original model's (they are expected to be identical);
* all-bf16 plan (a bf16 run's checkpoint): the stored tensors are bf16 and
  bit-identical to the original .to(torch.bfloat16), from_pretrained loads
  them as bf16 with no dtype given, and transformers' bf16
  logits from the checkpoint are within 1e-4 of the original .to(bfloat16)
  model's (same weights, same code: expected identical);
* the architecture fields of config.json that decide the forward pass read
  back as the original's.

Then real runs (the probe's Trainer, checkpoint_every 1) from source folders
as published (tokenizer files, generation_config.json): each checkpoint-1/
must be a complete model folder for transformers with default arguments.
AutoModelForCausalLM.from_pretrained(checkpoint) with no dtype must give the
stored tensors bit for bit in their own dtype (config.json's dtype names it:
a bf16 source trained in fp32 gives float32, an fp32 source trained in bf16
gives bfloat16, a mixed plan float32) and logits equal to the project's
forward of the checkpoint (within 1e-4); AutoTokenizer.from_pretrained(
checkpoint) must give the run's ids (the project's tokenizer of the source)
on the multilingual corpus of tokenizers_vs_hf.py and the same EOS (None
included); the source's generation_config.json must be there unchanged;
run_info.json must record the separator put between the 200 documents
(document_separator) and, when the tokenizer names no EOS, warn about it
(model_warnings). Sources: a Llama saved in bf16 with tokenizer.json,
tokenizer_config.json, special_tokens_map.json and generation_config.json;
GPT-2 with vocab.json + merges.txt; a Llama whose tokenizer names no EOS; a
model built from config.json alone (the byte tokenizer, whose tokenizer.json
the checkpoint gets).
"""
import functools
import json
import os
import sys

sys.dont_write_bytecode = True  # nothing written next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_common import run_checks  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from transformers import AutoModelForCausalLM, GPT2Config, LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config  # noqa: E402,E501

transformers.logging.set_verbosity_error()
transformers.utils.logging.disable_progress_bar()

TOLERANCE = 1e-4
VOCAB = 300
GPT2 = dict(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4, initializer_range=0.2,
            bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1)
LLAMA = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, initializer_range=0.2)

VARIANTS = [
    ("gpt2 tied head", GPT2Config, GPT2),
    ("gpt2 untied head, scale_attn_by_inverse_layer_idx", GPT2Config,
     {**GPT2, "tie_word_embeddings": False, "scale_attn_by_inverse_layer_idx": True}),
    ("llama GQA untied, biases", LlamaConfig, {**LLAMA, "attention_bias": True, "mlp_bias": True}),
    ("llama tied head", LlamaConfig, {**LLAMA, "tie_word_embeddings": True}),
    ("llama rope yarn", LlamaConfig,
     {**LLAMA, "rope_parameters": {"rope_type": "yarn", "rope_theta": 50000.0, "factor": 4.0,
                                   "original_max_position_embeddings": 8}}),
    ("mistral sliding_window 5", MistralConfig, {**LLAMA, "sliding_window": 5}),
    ("qwen2 tied head", Qwen2Config, {**LLAMA, "tie_word_embeddings": True}),
    ("qwen3 head_dim 32", Qwen3Config, {**LLAMA, "head_dim": 32}),
]
FIELDS = ["model_type", "vocab_size", "hidden_size", "n_embd", "num_hidden_layers", "n_layer", "num_attention_heads",
          "n_head", "num_key_value_heads", "intermediate_size", "head_dim", "tie_word_embeddings", "rope_parameters",
          "sliding_window", "attention_bias", "mlp_bias", "rms_norm_eps", "layer_norm_epsilon",
          "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "hidden_act", "activation_function"]


def transformers4_layout(folder):
    """The project reads rope settings only from top-level rope_theta /
    rope_scaling (models_vs_transformers.py reports that); write them that way."""
    path = os.path.join(folder, "config.json")
    with open(path) as f:
        j = json.load(f)
    params = dict(j.pop("rope_parameters", {}) or {})
    j["rope_theta"] = params.pop("rope_theta", 10000.0)
    if params.get("rope_type", "default") != "default":
        j["rope_scaling"] = params
    with open(path, "w") as f:
        json.dump(j, f, indent=2)


def logits(model, ids):
    with torch.no_grad():
        return model(ids).logits.float()


def run_variant(index, name, cls, kwargs, probe, tally, work):
    source = os.path.join(work, f"c{index}-source")
    torch.manual_seed(500 + index)
    model = AutoModelForCausalLM.from_config(cls(**kwargs), dtype=torch.float32)
    with torch.no_grad():  # non-trivial biases and norm weights
        for pname, p in model.named_parameters():
            if pname.endswith("bias") or "norm" in pname or "ln_" in pname:
                p.add_(torch.randn_like(p) * 0.1)
    model.eval()
    model.save_pretrained(source)
    transformers4_layout(source)
    ids = torch.randint(0, VOCAB, (2, 20), generator=torch.Generator().manual_seed(index))
    original = model.state_dict()

    for plan, dtype in (("fp32", torch.float32), ("all-bf16", torch.bfloat16)):
        out = os.path.join(work, f"c{index}-{plan}")
        probe("save", source, out, plan)
        stored = load_file(os.path.join(out, "model.safetensors"))
        # Default arguments: config.json's dtype decides.
        loaded, info = AutoModelForCausalLM.from_pretrained(out, output_loading_info=True)
        loaded.eval()
        tally.check(f"{name} ({plan} checkpoint): from_pretrained with no dtype loads {dtype}", loaded.dtype == dtype,
                    f"loaded {loaded.dtype}")
        problems = {k: v for k, v in info.items() if v}
        tally.check(f"{name} ({plan} checkpoint): from_pretrained loads every weight", not problems,
                    f"{problems}" if problems else f"{len(stored)} tensors in model.safetensors")
        dtypes = sorted({str(t.dtype).replace("torch.", "") for t in stored.values()})
        reference = {k: v.to(dtype) for k, v in original.items()}
        unequal = [k for k, v in loaded.state_dict().items() if not torch.equal(v, reference[k])]
        tally.check(f"{name} ({plan} checkpoint): weights bit-identical to the original{' .to(bf16)' if plan != 'fp32' else ''}",
                    not unequal and dtypes == [str(dtype).replace("torch.", "")],
                    f"stored dtypes {dtypes}" + (f"; differ: {unequal[:4]}" if unequal else ""))
        ref_model = model if plan == "fp32" else AutoModelForCausalLM.from_pretrained(source, dtype=dtype).eval()
        d = (logits(loaded, ids) - logits(ref_model, ids)).abs().max().item()
        tally.check(f"{name} ({plan} checkpoint): logits vs the original", d <= TOLERANCE,
                    f"max|dlogit| {d:.3g} (tolerance {TOLERANCE:g})")
        if plan == "fp32":
            a, b = model.config.to_dict(), loaded.config.to_dict()
            fields = [k for k in FIELDS if k in a]
            differ = {k: (a.get(k), b.get(k)) for k in fields if a.get(k) != b.get(k)}
            extra = sorted(k for k in FIELDS if k not in a and k in b)
            tally.check(f"{name}: config.json written by the project reads back the same", not differ,
                        (f"differ: {differ}" if differ else f"{len(fields)} fields equal")
                        + (f"; also written, unused by {type(model.config).__name__}: {extra}" if extra else ""))


# --- checkpoints of real runs as model folders -----------------------------------------------

def corpus_cases():
    import tokenizers_vs_hf
    return tokenizers_vs_hf.generate_cases(7, 300, [])


def write_docs(path):
    import tokenizers_vs_hf
    with open(path, "w") as f:
        for text in tokenizers_vs_hf.training_corpus()[:200]:
            f.write(json.dumps({"text": text}) + "\n")


def source_folders(work):
    """name -> (folder, mode, plan preset, expected checkpoint dtype)."""
    import tokenizers_vs_hf as tv
    from tokenizers import pre_tokenizers
    from transformers import GenerationConfig, GPT2Config as G2, LlamaConfig as LC
    out = {}
    tok = tv.byte_level(tv.split(tv.LLAMA3_REGEX), specials=("<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"))
    bos, eos = tok.token_to_id("<|begin_of_text|>"), tok.token_to_id("<|end_of_text|>")
    llama = os.path.join(work, "src-llama-bf16")
    torch.manual_seed(1)
    AutoModelForCausalLM.from_config(LC(**{**LLAMA, "vocab_size": 1600}, bos_token_id=bos, eos_token_id=eos)).to(
        torch.bfloat16).save_pretrained(llama)
    tok.save(os.path.join(llama, "tokenizer.json"))
    with open(os.path.join(llama, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|begin_of_text|>",
                   "eos_token": "<|end_of_text|>", "clean_up_tokenization_spaces": False}, f)
    with open(os.path.join(llama, "special_tokens_map.json"), "w") as f:
        json.dump({"eos_token": {"content": "<|eot_id|>"}}, f)
    GenerationConfig(bos_token_id=bos, eos_token_id=[eos, tok.token_to_id("<|eot_id|>")], do_sample=True,
                     temperature=0.6).save_pretrained(llama)
    out["llama bf16 source, fp32 run"] = (llama, "fp32", "all-fp32", torch.float32)
    out["llama bf16 source, bf16-kahan run (linear-bf16 plan)"] = (llama, "bf16-kahan", "linear-bf16", torch.float32)

    llama32 = os.path.join(work, "src-llama-fp32")
    torch.manual_seed(2)
    AutoModelForCausalLM.from_config(LC(**{**LLAMA, "vocab_size": 1600})).save_pretrained(llama32)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        with open(os.path.join(llama, name)) as a, open(os.path.join(llama32, name), "w") as b:
            b.write(a.read())
    out["llama fp32 source, all-bf16 run"] = (llama32, "bf16-kahan", "all-bf16", torch.bfloat16)

    gpt2 = os.path.join(work, "src-gpt2-slow")
    torch.manual_seed(3)
    AutoModelForCausalLM.from_config(G2(**{**GPT2, "vocab_size": 1600})).save_pretrained(gpt2)
    tv.byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False)).model.save(gpt2)
    with open(os.path.join(gpt2, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                   "unk_token": "<|endoftext|>", "clean_up_tokenization_spaces": False}, f)
    out["gpt2 vocab.json + merges.txt source, fp32 run"] = (gpt2, "fp32", "all-fp32", torch.float32)

    # A tokenizer that names no EOS (transformers' eos_token_id None): the
    # run joins its 200 documents with config.json's eos_token_id and says so.
    no_eos = os.path.join(work, "src-llama-no-eos")
    torch.manual_seed(4)
    AutoModelForCausalLM.from_config(LC(**{**LLAMA, "vocab_size": 1600}, eos_token_id=1)).save_pretrained(no_eos)
    tok.save(os.path.join(no_eos, "tokenizer.json"))
    with open(os.path.join(no_eos, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False}, f)
    out["llama whose tokenizer names no EOS, fp32 run"] = (no_eos, "fp32", "all-fp32", torch.float32)

    scratch = os.path.join(work, "src-config-only")
    os.makedirs(scratch, exist_ok=True)
    with open(os.path.join(scratch, "config.json"), "w") as f:
        json.dump({"model_type": "llama", **{**LLAMA, "vocab_size": 300}}, f)
    out["llama from config.json alone (byte tokenizer), fp32 run"] = (scratch, "fp32", "all-fp32", torch.float32)
    return out


def run_checkpoint_folder(name, source, mode, plan, dtype, probe, tally, work):
    import numbers
    from transformers import AutoTokenizer
    index = abs(hash(name)) % 10000
    run_dir = os.path.join(work, f"run-{index}")
    docs = os.path.join(work, "docs.jsonl")
    if not os.path.exists(docs):
        write_docs(docs)
    from_config = not os.path.exists(os.path.join(source, "model.safetensors"))
    config = {"name": f"ckpt-{index}", "mode": mode, "plan": {"preset": plan}, "steps": 1, "checkpoint_every": 1,
              "batch_size": 2, "seq_len": 16, "warmup_steps": 0, "eval_every": 0, "eval_batches": 1,
              "update_window": 0, "device": "cpu", "threads": 1, "output_dir": run_dir,
              "model": {"source": "config" if from_config else "folder", "path": source, "tokenizer": "auto"},
              "data": {"path": docs, "val_fraction": 0.1}}
    config_path = os.path.join(work, f"run-{index}.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    probe("train", config_path, os.path.join(work, f"dump-{index}"))
    ckpt = os.path.join(run_dir, "checkpoint-1")

    stored = load_file(os.path.join(ckpt, "model.safetensors"))
    loaded = AutoModelForCausalLM.from_pretrained(ckpt).eval()  # default arguments
    state = loaded.state_dict()
    differ = [k for k, v in stored.items() if k not in state or state[k].dtype != v.to(dtype).dtype
              or not torch.equal(state[k], v.to(dtype))]
    with open(os.path.join(ckpt, "config.json")) as f:
        written = json.load(f)
    tally.check(f"{name}: from_pretrained(checkpoint) with no dtype gives the stored weights bit for bit",
                loaded.dtype == dtype and not differ,
                f"config.json dtype {written.get('dtype')!r} / torch_dtype {written.get('torch_dtype')!r}; loaded "
                f"{loaded.dtype}, expected {dtype}; stored {sorted({str(v.dtype) for v in stored.values()})}"
                + (f"; differ: {differ[:4]}" if differ else f"; {len(stored)} tensors equal"))
    ids = torch.randint(0, loaded.config.vocab_size, (2, 12), generator=torch.Generator().manual_seed(index))
    ids_file, out = os.path.join(work, f"ids-{index}.json"), os.path.join(work, f"logits-{index}.safetensors")
    with open(ids_file, "w") as f:
        json.dump(ids.tolist(), f)
    probe("logits", ckpt, ids_file, "fp32", out)
    ours = load_file(out)["logits"]
    with torch.no_grad():
        theirs = loaded.float()(ids).logits.float()
    d = (ours - theirs).abs().max().item()
    tally.check(f"{name}: logits of the checkpoint, transformers vs the project", d <= TOLERANCE,
                f"max|dlogit| {d:.3g}")

    cases = corpus_cases()
    cases_file, encoded = os.path.join(work, f"cases-{index}.json"), os.path.join(work, f"encoded-{index}.json")
    with open(cases_file, "w") as f:
        json.dump({"texts": cases, "piece_bytes": 64}, f)
    if from_config:
        run_ids = [list(t.encode("utf-8")) for t in cases]  # the byte tokenizer
        run_eos = separator = 256
    else:
        probe("encode", source, cases_file, encoded)
        with open(encoded) as f:
            project = json.load(f)
        run_ids = [c["ids"] for c in project["cases"]]
        run_eos, separator = project["tokenizer_eos_id"], project["eos_id"]
    auto = AutoTokenizer.from_pretrained(ckpt)
    theirs = auto(cases, add_special_tokens=False)["input_ids"]
    bad = [i for i in range(len(cases)) if theirs[i] != run_ids[i]]
    tally.check(f"{name}: AutoTokenizer(checkpoint) gives the run's ids", not bad,
                f"{len(cases) - len(bad)}/{len(cases)} texts agree" +
                (f"; first: {cases[bad[0]][:60]!r} {theirs[bad[0]][:12]} vs {run_ids[bad[0]][:12]}" if bad else "")
                + f"; files {sorted(n for n in os.listdir(ckpt) if 'token' in n or n.endswith('.txt'))}")
    tally.check(f"{name}: AutoTokenizer(checkpoint).eos_token_id is the run's tokenizer's EOS",
                (auto.eos_token_id is None or isinstance(auto.eos_token_id, numbers.Integral))
                and auto.eos_token_id == run_eos, f"transformers {auto.eos_token_id}, run {run_eos}")
    with open(os.path.join(run_dir, "run_info.json")) as f:
        info = json.load(f)
    recorded = info.get("document_separator") or {}
    warned = [w for w in info.get("model_warnings", []) if "names no EOS" in w]
    tally.check(f"{name}: run_info.json records the document separator, and warns when it is not the EOS",
                recorded.get("id") == separator and recorded.get("tokenizer_eos") == (run_eos is not None)
                and bool(warned) == (run_eos is None),
                f"document_separator {recorded}; warnings {warned}")
    gen = os.path.join(source, "generation_config.json")
    if os.path.exists(gen):
        with open(gen, "rb") as a, open(os.path.join(ckpt, "generation_config.json"), "rb") as b:
            same = a.read() == b.read()
        tally.check(f"{name}: generation_config.json copied unchanged", same)


def run_checkpoint_folders(probe, tally, work):
    for name, (source, mode, plan, dtype) in source_folders(work).items():
        try:
            run_checkpoint_folder(name, source, mode, plan, dtype, probe, tally, work)
        except Exception as e:  # one broken case must not hide the others
            tally.error(name, e)


def main():
    torch.set_num_threads(1)
    checks = [(name, functools.partial(run_variant, i, name, cls, kwargs))
              for i, (name, cls, kwargs) in enumerate(VARIANTS)]
    checks.append(("checkpoints of runs as model folders", run_checkpoint_folders))
    return run_checks(__doc__, f"transformers {transformers.__version__}, torch {torch.__version__}",
                      "plab-ref-checkpoints-", checks)

if __name__ == "__main__":
    sys.exit(main())
