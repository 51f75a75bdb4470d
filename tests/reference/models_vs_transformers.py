#!/usr/bin/env python3
"""The project's forward pass against transformers, for every supported
architecture and config variant (docs/models.md).

Each variant is a tiny model built by transformers (config class + model class,
random init made sharper and with non-trivial biases and norm weights, see
`sharpen`) and written by save_pretrained. The probe loads that folder the way a
run does and computes logits:

* fp32: against transformers in fp32, eager and sdpa attention:
  max |dlogit| <= 1e-4.
* all-bf16 plan: against the same transformers model after .to(torch.bfloat16)
  (what a user's bf16 run is), eager and sdpa, with the bf16 tolerance below.

bf16 tolerance. bf16 keeps 8 significant bits, so every rounding moves a value
by up to 2^-9 of itself, and a forward pass rounds dozens of times on the way
to the logits. The two sides round at different points (the project keeps the
residual stream and the logits in fp32; transformers after .to(bfloat16) rounds
every activation, the residual stream included), so their bf16 logits cannot
agree bit for bit; each carries its own bf16 error against the fp32 function.
The yardstick is transformers' own: E_t = max|transformers bf16 - transformers
fp32| for the same attention implementation. A bf16 forward that rounds at
other points has an error of the same kind and size (measured: the project's
E_p is 0.8-1.6 E_t), and two such errors differ by at most their sum; the check
is max|project bf16 - transformers bf16| <= 2 E_t. E_t, E_p and the difference
are printed, also in bf16 ulps of the largest |logit| (one ulp of a value in
[2^e, 2^(e+1)) is 2^(e-7)): E_t is 1.4 to 20 such ulps on these models
(GPT-2 1.4-4, the Llama family 4-20), which is why a fixed number of ulps is no
yardstick. What this bound cannot see is a bf16-only deviation smaller than
2 E_t; the fp32 comparison above covers the arithmetic itself.

Sensitivity. Where a variant is defined by a config flag, the same weights are
also run through transformers with that flag off; the printed difference shows
the fp32 check above would catch the flag being ignored (asserted > 100x the
fp32 tolerance).

Config layout. transformers 5 writes RoPE settings as config.json
"rope_parameters" (rope_theta inside it); transformers 4 and most Hub models
wrote top-level "rope_theta" and "rope_scaling", which transformers 5 still
reads. Variants with non-default RoPE are checked in both layouts.

Documented refusals (docs/models.md: other model_types, Qwen2/Qwen3
use_sliding_window, partial_rotary_factor != 1, rope types other than
default/linear/llama3/yarn) must fail loudly, not compute something else.
"""
import copy
import functools
import json
import math
import os
import shutil
import sys

sys.dont_write_bytecode = True  # nothing written next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_common import run_checks  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from transformers import (  # noqa: E402
    AutoModelForCausalLM,
    GPT2Config,
    LlamaConfig,
    MistralConfig,
    Qwen2Config,
    Qwen3Config,
)

transformers.logging.set_verbosity_error()
transformers.utils.logging.disable_progress_bar()

FP32_TOLERANCE = 1e-4
BF16_FACTOR = 2  # times transformers' own bf16 error, see above
SENSITIVITY_FACTOR = 100
SEQ_LEN = 24
BATCH = 2
VOCAB = 300  # >= 257: the folders carry no tokenizer, so a run gives them the byte tokenizer

# bos/eos inside the tiny vocabulary (GPT2Config's default 50256 is refused by the project's config checks)
GPT2 = dict(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4, initializer_range=0.2,
            bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1)
LLAMA = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, initializer_range=0.2, rms_norm_eps=1e-5)


def rope(kind="default", theta=10000.0, **extra):
    return {"rope_type": kind, "rope_theta": theta, **extra}


# name, config class, kwargs, kwargs that switch the variant's feature off (None: no such flag)
VARIANTS = [
    ("gpt2 (tied head)", GPT2Config, GPT2, None),
    ("gpt2 untied head", GPT2Config, {**GPT2, "tie_word_embeddings": False}, None),
    ("gpt2 scale_attn_weights=false", GPT2Config, {**GPT2, "scale_attn_weights": False},
     {"scale_attn_weights": True}),
    ("gpt2 scale_attn_by_inverse_layer_idx", GPT2Config, {**GPT2, "scale_attn_by_inverse_layer_idx": True},
     {"scale_attn_by_inverse_layer_idx": False}),
    ("gpt2 reorder_and_upcast_attn", GPT2Config, {**GPT2, "reorder_and_upcast_attn": True},
     {"reorder_and_upcast_attn": False}),
    ("llama GQA (2 kv heads of 4), untied", LlamaConfig, LLAMA, None),
    ("llama MQA (1 kv head), tied head", LlamaConfig, {**LLAMA, "num_key_value_heads": 1, "tie_word_embeddings": True},
     None),
    ("llama attention_bias + mlp_bias + head_dim 24", LlamaConfig,
     {**LLAMA, "attention_bias": True, "mlp_bias": True, "head_dim": 24}, None),
    ("llama rope_theta 500000", LlamaConfig, {**LLAMA, "rope_parameters": rope(theta=500000.0)},
     {"rope_parameters": rope()}),
    ("llama rope linear", LlamaConfig, {**LLAMA, "rope_parameters": rope("linear", factor=2.0)},
     {"rope_parameters": rope()}),
    ("llama rope llama3", LlamaConfig,
     {**LLAMA, "rope_parameters": rope("llama3", 500000.0, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                       original_max_position_embeddings=16)},
     {"rope_parameters": rope(theta=500000.0)}),
    ("llama rope yarn", LlamaConfig,
     {**LLAMA, "rope_parameters": rope("yarn", factor=4.0, original_max_position_embeddings=8)},
     {"rope_parameters": rope()}),
    ("llama rope yarn beta/attention_factor/truncate=false", LlamaConfig,
     {**LLAMA, "rope_parameters": rope("yarn", 50000.0, factor=3.0, original_max_position_embeddings=16, beta_fast=16.0,
                                       beta_slow=2.0, attention_factor=1.25, truncate=False)},
     {"rope_parameters": rope(theta=50000.0)}),
    ("llama rope yarn mscale/mscale_all_dim", LlamaConfig,
     {**LLAMA, "rope_parameters": rope("yarn", factor=4.0, original_max_position_embeddings=8, mscale=1.0,
                                       mscale_all_dim=0.5)},
     {"rope_parameters": rope()}),
    ("mistral sliding_window 5 < seq 24", MistralConfig, {**LLAMA, "sliding_window": 5}, {"sliding_window": None}),
    ("qwen2 (q/k/v biases), tied head", Qwen2Config, {**LLAMA, "tie_word_embeddings": True}, None),
    ("qwen3 q_norm/k_norm, head_dim 32", Qwen3Config, {**LLAMA, "head_dim": 32}, None),
]

# config.json edits the docs name as refused, and a word the error must name. Sliding
# Qwen2 layers (on a real Qwen2 file with its biases) and dynamic rope (now accepted, as
# transformers accepts it) are checked against transformers in config_rules_vs_transformers.py.
REFUSED = [
    ("unknown model_type", {"model_type": "gemma"}, "gemma"),
    ("partial_rotary_factor 0.5", {"partial_rotary_factor": 0.5}, "partial_rotary_factor"),
    ("rope_scaling longrope", {"rope_scaling": {"rope_type": "longrope", "factor": 2.0, "short_factor": [1.0] * 8,
                                                "long_factor": [1.0] * 8}}, "longrope"),
]


def sharpen(model, seed):
    """Random biases and norm weights (transformers initialises them to 0 and
    1, which would hide a dropped bias or norm weight)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
            elif "norm" in name or ".ln_" in name or name.endswith("ln_f.weight"):
                p.copy_(1.0 + torch.randn(p.shape, generator=gen) * 0.2)


def legacy_layout(config_json):
    """transformers 4's config.json layout: top-level rope_theta and rope_scaling."""
    j = dict(config_json)
    params = j.pop("rope_parameters", None)
    if params is None:
        return None
    params = dict(params)
    theta = params.pop("rope_theta", 10000.0)
    if params.get("rope_type", "default") == "default" and theta == 10000.0:
        return None
    j["rope_theta"] = theta
    if params.get("rope_type", "default") != "default":
        j["rope_scaling"] = params
    return j


def bf16_ulp(x):
    return 2.0 ** (math.floor(math.log2(x)) - 7)


def reference_logits(folder, impl, dtype, ids):
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation=impl, dtype=dtype)
    model.eval()
    with torch.no_grad():
        return model(ids).logits.float()


def probe_logits(probe, folder, ids_file, plan, work):
    out = os.path.join(work, f"logits-{plan}.safetensors")
    probe("logits", folder, ids_file, plan, out)
    return load_file(out)["logits"]


def max_diff(a, b):
    return (a - b).abs().max().item()


def run_variant(index, name, cls, kwargs, off, probe, tally, work_root):
    work = os.path.join(work_root, f"v{index:02d}")
    folder = os.path.join(work, "saved")
    torch.manual_seed(1000 + index)
    config = cls(**kwargs)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    sharpen(model, 2000 + index)
    model.eval()
    model.save_pretrained(folder)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ_LEN), generator=torch.Generator().manual_seed(3000 + index))
    ids_file = os.path.join(work, "ids.json")
    with open(ids_file, "w") as f:
        json.dump(ids.tolist(), f)

    with open(os.path.join(folder, "config.json")) as f:
        saved_json = json.load(f)
    legacy = legacy_layout(saved_json)
    primary = folder
    if legacy is not None:
        primary = os.path.join(work, "legacy-layout")
        os.makedirs(primary)
        shutil.copy(os.path.join(folder, "model.safetensors"), primary)
        with open(os.path.join(primary, "config.json"), "w") as f:
            json.dump(legacy, f, indent=2)

    impls = ["eager", "sdpa"]
    if kwargs.get("reorder_and_upcast_attn"):
        impls = ["eager"]  # transformers applies it in eager attention only
    ref32 = {impl: reference_logits(folder, impl, torch.float32, ids) for impl in impls}
    ref16 = {impl: reference_logits(folder, impl, torch.bfloat16, ids) for impl in impls}
    scale = ref32["eager"].abs().max().item()
    ulp = bf16_ulp(scale)

    ours32 = probe_logits(probe, primary, ids_file, "fp32", work)
    ours16 = probe_logits(probe, primary, ids_file, "all-bf16", work)
    layout = " (transformers 4 layout: rope_theta/rope_scaling)" if legacy is not None else ""
    for impl in impls:
        d = max_diff(ours32, ref32[impl])
        tally.check(f"{name}{layout} fp32 vs {impl}", d <= FP32_TOLERANCE,
                    f"max|dlogit| {d:.3g} (tolerance {FP32_TOLERANCE:g}, max|logit| {scale:.3g})")
    for impl in impls:
        d = max_diff(ours16, ref16[impl])
        ours_err = max_diff(ours16, ref32[impl])
        ref_err = max_diff(ref16[impl], ref32[impl])
        tally.check(f"{name}{layout} all-bf16 vs {impl} .to(bfloat16)", d <= BF16_FACTOR * ref_err,
                    f"max|dlogit| {d:.3g} ({d / ulp:.1f} ulps; tolerance 2 E_t = {BF16_FACTOR * ref_err:.3g}); "
                    f"bf16 vs fp32: transformers E_t {ref_err:.3g} ({ref_err / ulp:.1f} ulps), project E_p "
                    f"{ours_err:.3g} ({ours_err / ulp:.1f} ulps); max|logit| {scale:.3g}")

    if legacy is not None:
        ours_saved = probe_logits(probe, folder, ids_file, "fp32", work)
        d = max_diff(ours_saved, ref32["eager"])
        tally.check(f"{name} fp32, config.json as transformers 5 saves it (rope_parameters)", d <= FP32_TOLERANCE,
                    f"max|dlogit| {d:.3g}")

    if off is not None:
        off_config = copy.deepcopy(config)
        for key, value in off.items():
            setattr(off_config, key, value)
        off_model = AutoModelForCausalLM.from_config(off_config, dtype=torch.float32, attn_implementation="eager")
        off_model.load_state_dict(model.state_dict())
        off_model.eval()
        with torch.no_grad():
            s = max_diff(off_model(ids).logits.float(), ref32["eager"])
        feature = ", ".join(f"{k}={v}" for k, v in off.items())
        if kwargs.get("reorder_and_upcast_attn"):
            # docs/models.md: it changes nothing (scores are fp32 either way): nothing to be sensitive to.
            print(f"     sensitivity: {feature} changes transformers' fp32 logits by {s:.3g} (expected ~0)")
        else:
            tally.check(f"{name} sensitivity", s > SENSITIVITY_FACTOR * FP32_TOLERANCE,
                        f"with {feature} transformers' logits move by {s:.3g}")


def run_refused(probe, tally, work_root):
    # Weights of a valid llama; only config.json is edited.
    base = os.path.join(work_root, "refused-base")
    model = AutoModelForCausalLM.from_config(LlamaConfig(**LLAMA), dtype=torch.float32)
    model.save_pretrained(base)
    with open(os.path.join(base, "config.json")) as f:
        base_json = json.load(f)
    ids_file = os.path.join(work_root, "refused-ids.json")
    with open(ids_file, "w") as f:
        json.dump([[1, 2, 3]], f)
    for i, (name, edit, word) in enumerate(REFUSED):
        folder = os.path.join(work_root, f"refused-{i}")
        os.makedirs(folder)
        shutil.copy(os.path.join(base, "model.safetensors"), folder)
        j = {k: v for k, v in base_json.items() if k != "rope_parameters"}
        j["rope_theta"] = 10000.0
        j.update(edit)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(j, f)
        try:
            probe("logits", folder, ids_file, "fp32", os.path.join(folder, "out.safetensors"))
            tally.check(f"refused: {name}", False, "the probe computed logits instead of refusing")
        except RuntimeError as e:
            message = str(e).strip().splitlines()[-1]
            tally.check(f"refused: {name}", word in message, message)


def main():
    torch.set_num_threads(1)
    checks = [(name, functools.partial(run_variant, i, name, cls, kwargs, off))
              for i, (name, cls, kwargs, off) in enumerate(VARIANTS)]
    checks.append(("refusals", run_refused))
    return run_checks(__doc__, f"transformers {transformers.__version__}, torch {torch.__version__}",
                      "plab-ref-models-", checks)

if __name__ == "__main__":
    sys.exit(main())
