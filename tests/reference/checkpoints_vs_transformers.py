#!/usr/bin/env python3
"""The other direction: what the project writes, read by transformers.

A run's checkpoint-<step>/ folder is written by saveCheckpoint (config.json +
model.safetensors, tensors in the dtype they train in). A user takes it out
after fine-tuning and opens it with AutoModelForCausalLM.from_pretrained. For
each architecture: a tiny transformers model is saved, loaded by the probe the
way a run loads it and written back with the project's checkpoint writer;

* fp32 plan: from_pretrained must load it with no missing or unexpected
  weights, every weight bit-identical to the original, and its logits within
  1e-4 of the original model's (they are expected to be identical);
* all-bf16 plan (a bf16 run's checkpoint): the stored tensors are bf16 and
  bit-identical to the original .to(torch.bfloat16), and transformers' bf16
  logits from the checkpoint are within 1e-4 of the original .to(bfloat16)
  model's (same weights, same code: expected identical);
* the architecture fields of config.json that decide the forward pass read
  back as the original's.
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
        loaded, info = AutoModelForCausalLM.from_pretrained(out, dtype=dtype, output_loading_info=True)
        loaded.eval()
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


def main():
    torch.set_num_threads(1)
    checks = [(name, functools.partial(run_variant, i, name, cls, kwargs))
              for i, (name, cls, kwargs) in enumerate(VARIANTS)]
    return run_checks(__doc__, f"transformers {transformers.__version__}, torch {torch.__version__}",
                      "plab-ref-checkpoints-", checks)

if __name__ == "__main__":
    sys.exit(main())
