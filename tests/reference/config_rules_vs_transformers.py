#!/usr/bin/env python3
"""What the project accepts, warns about and refuses, against transformers.

Two parts, each case a tiny model folder written here:

* config sweep: a base config.json per architecture (gpt2, llama, mistral,
  qwen2, qwen3) with one field changed at a time, across the fields
  transformers 5 validates (its typed config fields, validate_architecture,
  validate_token_ids, the RoPE validators of modeling_rope_utils) and the
  values it accepts that the project once refused (rope linear factor 0.5,
  rope_scaling {}, every parameter-free activation of ACT2FN, ...).
  transformers' verdict: "refuse" when AutoConfig / from_config / a forward
  pass raises or gives non-finite logits, "warn" when it loads with a
  warning logged, else "accept". The project (plab_reference_probe config)
  must refuse what transformers refuses, accept with a warning what it warns
  about, and accept silently what it accepts silently; where both accept,
  the project's logits on the weights transformers initialised must equal
  transformers' within 1e-4. A handful of configs are refused on purpose
  (REFUSED_HERE: not implemented, or rope_theta 0, which transformers never
  checks; docs/models.md lists them); for them the test checks that the
  refusal says so.

* file vs config: a saved model whose safetensors disagree with its
  config.json (a tied head with its own lm_head.weight, Qwen2 with
  attention_bias false and q/k/v biases in the file, tensors the model has no
  place for, GPT-2's mask buffers, old rotary inv_freq buffers, a missing
  tensor). The project must do what transformers does (same logits; the
  tensors it warns about are the ones transformers reports as unexpected) or
  refuse with the reason (a missing tensor, which transformers initialises
  at random).
"""
import copy
import functools
import json
import logging
import math
import os
import sys

sys.dont_write_bytecode = True  # nothing written next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_common import run_checks  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file, save_file, save_model  # noqa: E402
from transformers import AutoConfig, AutoModelForCausalLM  # noqa: E402

transformers.utils.logging.disable_progress_bar()
TOLERANCE = 1e-4
VOCAB = 300

GPT2 = {"model_type": "gpt2", "vocab_size": VOCAB, "n_positions": 64, "n_embd": 32, "n_layer": 2, "n_head": 4,
        "bos_token_id": 1, "eos_token_id": 2}
LLAMA = {"vocab_size": VOCAB, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "rope_theta": 10000.0,
         "bos_token_id": 1, "eos_token_id": 2}
BASES = {"gpt2": GPT2, "llama": {"model_type": "llama", **LLAMA}, "mistral": {"model_type": "mistral", **LLAMA},
         "qwen2": {"model_type": "qwen2", **LLAMA}, "qwen3": {"model_type": "qwen3", **LLAMA, "head_dim": 16}}
DELETE = object()

ACTIVATIONS = ["gelu", "gelu_10", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh", "gelu_python_tanh",
               "gelu_accurate", "hardswish", "laplace", "leaky_relu", "linear", "mish", "quick_gelu", "relu", "relu2",
               "relu6", "sigmoid", "silu", "sqrtsoftplus", "swish", "tanh", "prelu", "no_such_activation"]

# (name, architecture, changes): changes are merged into the base (DELETE removes a field).
SWEEP = (
    [(f"hidden_act {a}", "llama", {"hidden_act": a}) for a in ACTIVATIONS]
    + [("activation_function gelu_python", "gpt2", {"activation_function": "gelu_python"}),
       ("activation_function quick_gelu", "gpt2", {"activation_function": "quick_gelu"})]
    + [
        # RoPE, legacy rope_scaling and transformers 5's rope_parameters
        ("rope_scaling linear factor 0.5", "llama", {"rope_scaling": {"rope_type": "linear", "factor": 0.5}}),
        ("rope_scaling linear factor 2", "llama", {"rope_scaling": {"type": "linear", "factor": 2.0}}),
        ("rope_scaling linear factor 0", "llama", {"rope_scaling": {"rope_type": "linear", "factor": 0.0}}),
        ("rope_scaling linear factor '2'", "llama", {"rope_scaling": {"rope_type": "linear", "factor": "2"}}),
        ("rope_scaling linear without factor", "llama", {"rope_scaling": {"rope_type": "linear"}}),
        ("rope_scaling {}", "llama", {"rope_scaling": {}}),
        ("rope_scaling null", "llama", {"rope_scaling": None}),
        ("rope_parameters {}", "llama", {"rope_parameters": {}}),
        ("rope_parameters without rope_theta (top-level 500000)", "llama",
         {"rope_theta": 500000.0, "rope_parameters": {"rope_type": "default"}}),
        ("rope_scaling over rope_parameters", "llama",
         {"rope_scaling": {"rope_type": "linear", "factor": 4.0}, "rope_parameters": {"rope_type": "default"}}),
        ("rope default with an unused factor", "llama", {"rope_scaling": {"rope_type": "default", "factor": 2.0}}),
        ("rope linear with an unknown key", "llama",
         {"rope_scaling": {"rope_type": "linear", "factor": 2.0, "foo": 1}}),
        ("rope dynamic", "llama", {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}),
        ("rope type unknown", "llama", {"rope_scaling": {"rope_type": "nonsense", "factor": 2.0}}),
        ("rope llama3", "llama", {"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                   "high_freq_factor": 4.0, "original_max_position_embeddings": 16}}),
        ("rope llama3 high_freq_factor below low", "llama",
         {"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0, "high_freq_factor": 1.0,
                           "original_max_position_embeddings": 16}}),
        ("rope llama3 original_max_position_embeddings = max", "llama",
         {"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                           "original_max_position_embeddings": 64}}),
        ("rope llama3 without original_max_position_embeddings", "llama",
         {"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}}),
        ("rope llama3 without low_freq_factor", "llama",
         {"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "high_freq_factor": 4.0,
                           "original_max_position_embeddings": 16}}),
        ("rope llama3 factor 0.5", "llama",
         {"rope_scaling": {"rope_type": "llama3", "factor": 0.5, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                           "original_max_position_embeddings": 16}}),
        ("rope yarn", "llama", {"rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                 "original_max_position_embeddings": 16}}),
        ("rope yarn factor 0.5", "llama", {"rope_scaling": {"rope_type": "yarn", "factor": 0.5,
                                                            "original_max_position_embeddings": 32}}),
        ("rope yarn beta_fast below beta_slow", "llama",
         {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                           "beta_fast": 1.0, "beta_slow": 2.0}}),
        ("rope yarn beta_fast 0 (the default)", "llama",
         {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                           "beta_fast": 0}}),
        ("rope yarn attention_factor 1 (an int)", "llama",
         {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                           "attention_factor": 1}}),
        ("rope yarn attention_factor 0", "llama",
         {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                           "attention_factor": 0.0}}),
        ("rope yarn mscale, mscale_all_dim", "llama",
         {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                           "mscale": 0.707, "mscale_all_dim": 1.0}}),
        ("rope yarn factor differs from max / original", "llama",
         {"rope_scaling": {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 16}}),
        ("rope yarn without original_max_position_embeddings", "llama",
         {"rope_scaling": {"rope_type": "yarn", "factor": 2.0}}),
        ("rope_theta 0", "llama", {"rope_theta": 0.0}),
        ("partial_rotary_factor 0.5", "llama", {"partial_rotary_factor": 0.5}),
        # architecture and types
        ("hidden_size not divisible by heads, head_dim given", "llama", {"hidden_size": 66, "head_dim": 16}),
        ("qwen3 hidden_size not divisible by heads, head_dim given", "qwen3", {"hidden_size": 66}),
        ("num_key_value_heads 3 (does not divide 4)", "llama", {"num_key_value_heads": 3}),
        ("head_dim 6 (even, not hidden_size / heads)", "llama", {"head_dim": 6}),
        ("head_dim 5 (odd)", "mistral", {"head_dim": 5}),
        ("hidden_size 64.0 (a float)", "llama", {"hidden_size": 64.0}),
        ("hidden_size '64' (a string)", "llama", {"hidden_size": "64"}),
        ("vocab_size missing", "llama", {"vocab_size": DELETE}),
        ("rms_norm_eps 0 (an int)", "llama", {"rms_norm_eps": 0}),
        ("rms_norm_eps 1e-5", "qwen2", {"rms_norm_eps": 1e-5}),
        ("tie_word_embeddings 1 (an int)", "llama", {"tie_word_embeddings": 1}),
        ("tie_word_embeddings true", "mistral", {"tie_word_embeddings": True}),
        ("attention_bias 'yes'", "llama", {"attention_bias": "yes"}),
        ("attention_dropout 0.1", "llama", {"attention_dropout": 0.1}),
        ("initializer_range 2", "llama", {"initializer_range": 2.0}),
        ("initializer_range 2 (gpt2)", "gpt2", {"initializer_range": 2.0}),
        ("initializer_range -0.1", "llama", {"initializer_range": -0.1}),
        ("max_position_embeddings missing", "llama", {"max_position_embeddings": DELETE}),
        # special token ids: validate_token_ids only warns
        ("pad_token_id -1", "llama", {"pad_token_id": -1}),
        ("eos_token_id 300 (= vocab_size)", "llama", {"eos_token_id": 300}),
        ("eos_token_id [2, 5]", "llama", {"eos_token_id": [2, 5]}),
        ("eos_token_id 2.0 (a float)", "llama", {"eos_token_id": 2.0}),
        ("bos_token_id 50256 (gpt2 default, small vocab)", "gpt2", {"bos_token_id": 50256, "eos_token_id": 50256}),
        ("pad_token_id '0' (a string)", "llama", {"pad_token_id": "0"}),
        ("image_token_id 999", "llama", {"image_token_id": 999}),
        # sliding windows
        ("mistral sliding_window 8", "mistral", {"sliding_window": 8}),
        ("mistral sliding_window null", "mistral", {"sliding_window": None}),
        ("qwen2 use_sliding_window, no sliding layer", "qwen2",
         {"use_sliding_window": True, "sliding_window": 8, "max_window_layers": 2}),
        ("qwen2 use_sliding_window, sliding layers", "qwen2",
         {"use_sliding_window": True, "sliding_window": 8, "max_window_layers": 1}),
        ("qwen2 use_sliding_window false, max_window_layers 0", "qwen2",
         {"use_sliding_window": False, "sliding_window": 8, "max_window_layers": 0}),
        ("qwen2 use_sliding_window, sliding_window null", "qwen2",
         {"use_sliding_window": True, "sliding_window": None, "max_window_layers": 1}),
        ("qwen2 use_sliding_window, sliding_window absent (default 4096)", "qwen2",
         {"use_sliding_window": True, "sliding_window": DELETE, "max_window_layers": 1}),
        ("qwen3 use_sliding_window false, sliding_window 8", "qwen3",
         {"use_sliding_window": False, "sliding_window": 8}),
        ("qwen2 attention_bias false", "qwen2", {"attention_bias": False}),
        ("gpt2 n_inner null", "gpt2", {"n_inner": None}),
        ("gpt2 scale_attn_weights false", "gpt2", {"scale_attn_weights": False}),
        ("gpt2 add_cross_attention", "gpt2", {"add_cross_attention": True}),
    ])

# Accepted by transformers, refused here on purpose, with the words the refusal must contain: what is
# not implemented, and a value transformers does not check at all and computes infinite frequencies with.
REFUSED_HERE = {
    "hidden_act prelu": "unsupported activation",
    "partial_rotary_factor 0.5": "not supported",
    "qwen2 use_sliding_window, sliding layers": "not supported",
    "qwen2 use_sliding_window, sliding_window absent (default 4096)": "not supported",
    "gpt2 add_cross_attention": "not supported",
    "rope_theta 0": "'rope_theta' must be > 0",
}


class WarningLog(logging.Handler):
    """transformers' warnings (its own logger) while a case runs."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def transformers_verdict(folder, ids):
    """(verdict, detail, model or None)."""
    handler = WarningLog()
    logger = transformers.utils.logging.get_logger("transformers")
    logger.addHandler(handler)
    transformers.logging.set_verbosity_warning()
    # warning_once caches messages: a repeated warning must show up again.
    transformers.utils.logging.warning_once.cache_clear() if hasattr(
        transformers.utils.logging.warning_once, "cache_clear") else None
    try:
        config = AutoConfig.from_pretrained(folder)
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()
        with torch.no_grad():  # non-trivial norms and biases
            for name, p in model.named_parameters():
                if name.endswith("bias") or "norm" in name or "ln_" in name:
                    p.add_(torch.randn_like(p) * 0.1)
            out = model(ids).logits
        if not torch.isfinite(out).all():
            return "refuse", "non-finite logits", None
    except Exception as e:  # any refusal of transformers
        return "refuse", f"{type(e).__name__}: {str(e)[:160]}", None
    finally:
        logger.removeHandler(handler)
        transformers.logging.set_verbosity_error()
    messages = [m for m in handler.messages if "torch_dtype" not in m]
    if messages:
        return "warn", messages[0][:160], model
    return "accept", "", model


def write_config(folder, config):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def project_logits(probe, folder, ids, work):
    ids_file, out = os.path.join(folder, "ids.json"), os.path.join(folder, "project.safetensors")
    with open(ids_file, "w") as f:
        json.dump(ids.tolist(), f)
    probe("logits", folder, ids_file, "fp32", out)
    from safetensors import safe_open
    with safe_open(out, "pt") as f:
        warnings = json.loads(f.metadata().get("warnings", "[]"))
    return load_file(out)["logits"], warnings


def run_config_case(index, name, arch, changes, probe, tally, work):
    config = copy.deepcopy(BASES[arch])
    for key, value in changes.items():
        if value is DELETE:
            config.pop(key, None)
        else:
            config[key] = value
    folder = os.path.join(work, f"cfg{index:03d}")
    write_config(folder, config)
    ids = torch.randint(0, VOCAB, (2, 12), generator=torch.Generator().manual_seed(index))
    verdict, detail, model = transformers_verdict(folder, ids)
    result_file = os.path.join(folder, "project.json")
    probe("config", folder, result_file)
    with open(result_file) as f:
        ours = json.load(f)
    mine = "refuse" if not ours["ok"] else ("warn" if ours["warnings"] else "accept")
    said = ours["error"] or "; ".join(ours["warnings"])
    label = f"config sweep: {name} ({arch})"
    if name in REFUSED_HERE:
        words = REFUSED_HERE[name]
        tally.check(f"{label}: refused on purpose", mine == "refuse" and words in (ours["error"] or ""),
                    f"transformers {verdict}; project {mine}: {said[:160]}")
        return
    tally.check(f"{label}: transformers {verdict}, project {mine}", mine == verdict,
                f"transformers: {detail or 'silent'} | project: {said[:200] or 'silent'}")
    if verdict == "refuse" or mine == "refuse":
        return
    save_model(model, os.path.join(folder, "model.safetensors"))
    write_config(folder, config)  # the case's own config.json, not transformers' rewrite
    logits, _ = project_logits(probe, folder, ids, work)
    with torch.no_grad():
        reference = model(ids).logits.float()
    d = (logits - reference).abs().max().item()
    tally.check(f"{label}: logits", d <= TOLERANCE, f"max|dlogit| {d:.3g}")


# --- file vs config ---------------------------------------------------------------------------

def saved_model(folder, arch, changes, seed):
    config = {**copy.deepcopy(BASES[arch]), **changes}
    write_config(folder, config)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder), dtype=torch.float32)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name or "ln_" in name:
                p.add_(torch.randn_like(p) * 0.1)
    return config, {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}


def file_cases():
    """(name, arch, config changes, tensor edit(state) -> state, config edit after saving)."""
    def untied_head(state):
        state = dict(state)
        state["lm_head.weight"] = torch.randn_like(state["lm_head.weight"])
        return state

    def equal_head(state):
        state = dict(state)
        state["lm_head.weight"] = state["model.embed_tokens.weight"].clone()
        return state

    def gpt2_head(state):
        state = dict(state)
        state["lm_head.weight"] = torch.randn_like(state["transformer.wte.weight"])
        return state

    def extra(names):
        def edit(state):
            state = dict(state)
            for n in names:
                state[n] = torch.randn(4, 4)
            return state
        return edit

    def drop(name):
        def edit(state):
            state = dict(state)
            del state[name]
            return state
        return edit

    def with_biases(state):
        state = dict(state)
        for layer in range(2):
            for proj, width in (("q_proj", 64), ("k_proj", 32), ("v_proj", 32), ("o_proj", 64)):
                state[f"model.layers.{layer}.self_attn.{proj}.bias"] = torch.randn(width) * 0.5
        return state

    return [
        ("llama: tie_word_embeddings true, a different lm_head.weight in the file", "llama",
         {"tie_word_embeddings": False}, untied_head, {"tie_word_embeddings": True}),
        ("llama: tie_word_embeddings true, lm_head.weight equal to the embedding", "llama",
         {"tie_word_embeddings": False}, equal_head, {"tie_word_embeddings": True}),
        ("gpt2: tied head, a different lm_head.weight in the file", "gpt2", {}, gpt2_head, {}),
        ("qwen2: attention_bias false, q/k/v biases in the file", "qwen2", {"attention_bias": False}, None, {}),
        ("llama: attention_bias false, q/k/v/o biases in the file", "llama", {}, with_biases, {}),
        ("llama: tensors the model has no place for", "llama", {}, extra(["model.extra.weight", "vision.proj"]), {}),
        ("llama: old rotary inv_freq buffers", "llama", {},
         extra(["model.layers.0.self_attn.rotary_emb.inv_freq"]), {}),
        ("gpt2: attn.bias mask buffers and an unknown tensor", "gpt2", {},
         extra(["transformer.h.0.attn.bias", "transformer.h.1.attn.bias", "transformer.h.0.attn.masked_bias"]), {}),
        ("llama: a tensor missing", "llama", {}, drop("model.layers.1.mlp.up_proj.weight"), {}),
    ]


def run_file_case(index, case, probe, tally, work):
    name, arch, changes, edit, after = case
    folder = os.path.join(work, f"file{index:02d}")
    config, state = saved_model(folder, arch, changes, 900 + index)
    if edit:
        state = edit(state)
    # Tied tensors share memory in a state dict; the file holds plain copies.
    if config.get("tie_word_embeddings", arch == "gpt2") and "lm_head.weight" in state and edit is None:
        state.pop("lm_head.weight")
    save_file({k: v.contiguous() for k, v in state.items()}, os.path.join(folder, "model.safetensors"),
              metadata={"format": "pt"})
    write_config(folder, {**config, **after})
    ids = torch.randint(0, VOCAB, (2, 12), generator=torch.Generator().manual_seed(index))
    transformers.logging.set_verbosity_error()
    loaded, info = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, output_loading_info=True)
    loaded.eval()
    with torch.no_grad():
        reference = loaded(ids).logits.float()
    if info["missing_keys"]:
        try:
            project_logits(probe, folder, ids, work)
            tally.check(f"{name}: refused (transformers initialises {sorted(info['missing_keys'])} at random)", False,
                        "the project loaded it")
        except RuntimeError as e:
            message = str(e).strip().splitlines()[-1]
            tally.check(f"{name}: refused (transformers initialises {sorted(info['missing_keys'])} at random)",
                        "missing tensor" in message, message[:200])
        return
    logits, warnings = project_logits(probe, folder, ids, work)
    d = (logits - reference).abs().max().item()
    tally.check(f"{name}: logits as transformers", d <= TOLERANCE, f"max|dlogit| {d:.3g}")
    unexpected = sorted(info["unexpected_keys"])
    warned = [n for n in unexpected if any(n in w for w in warnings)]
    said = "; ".join(warnings)
    silent_ok = not unexpected and not any("not loaded" in w for w in warnings)
    tally.check(f"{name}: the tensors transformers reports unexpected are the ones warned about",
                warned == unexpected and (silent_ok or unexpected),
                f"transformers unexpected {unexpected}; project: {said[:300] or 'no warning'}")
    tied = loaded.lm_head.weight is (loaded.transformer.wte.weight if arch == "gpt2" else loaded.model.embed_tokens.weight)
    if "lm_head" in name or "head" in name:
        tally.check(f"{name}: head tied as transformers ties it ({tied})",
                    tied == (not any("kept apart" in w for w in warnings)), said[:300] or "no warning")


def main():
    torch.set_num_threads(1)
    checks = [(f"config sweep: {name}", functools.partial(run_config_case, i, name, arch, changes))
              for i, (name, arch, changes) in enumerate(SWEEP)]
    checks += [(case[0], functools.partial(run_file_case, i, case)) for i, case in enumerate(file_cases())]
    return run_checks(__doc__, f"transformers {transformers.__version__}, torch {torch.__version__}",
                      "plab-ref-config-rules-", checks)


if __name__ == "__main__":
    sys.exit(main())
