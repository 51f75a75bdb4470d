#!/usr/bin/env python3
"""The quantized moment stores (adamw.moments "8bit", "4bit", "fp8") against
torchao's AdamW8bit, AdamW4bit and AdamWFp8.

Inputs: parameters of odd sizes, some that torchao quantizes (at least 4096
elements and a whole number of blocks, 256 elements for 8 bits: 4096,
257x256, 129x256, the last spanning two of the CPU loop's tasks; 128 for 4
bits: those and 4224) and some it keeps in the parameter's dtype (1031,
4097; 4224 under 8 bits); 100 steps of fixed gradients of
varying scale (some exact zeros); lr 1e-3 / wd 0.01 and lr 1e-2 / wd 0.1
(fp32 weights), lr 1e-2 / wd 0.1 (bf16, nearest), lr 1e-3 / wd 0.01 (SR).
The probe runs PrecisionAdamW as a run does (statistics on step 1 and every
5 steps). torchao runs as users run it: its optimizer torch.compile's
single_param_adam (one compilation per shape, dtype and hyper-parameters,
cached by inductor on disk, so the first run of this test is the slow one).
Its eager form rounds differently (torch's eager lerp is one fused
multiply-add, its eager fp32 sqrt (MKL) is off by an ulp in ~20 % of the
elements; the compiled code multiplies and adds separately and takes a
correctly rounded root): the project follows the compiled step.

* fp32 weights (bf16-nearest with the all-fp32 plan; every param fp32) and
  bf16 weights with round-to-nearest writes (bf16-nearest, torchao with
  bf16_stochastic_round=False): weights, dequantized moments, codes and
  scales bit for bit after 100 steps; the small tensors' plain moments too.
* Stochastic rounding (bf16-sr against bf16_stochastic_round=True): exact
  equality of the weights is impossible, torchao draws its bits from torch's
  generator inside its compiled step and the project from Philox keyed by
  the run's seed. With fixed gradients the moments do not depend on the
  weights, so they (codes, scales) must still be bit for bit torchao's; the
  weights are compared as the rule's statistics (check_stochastic): after
  one step, every weight one of the two bf16 neighbours of torchao's fp32
  result and rounded away from zero as often as the rule says; after 100,
  the deviations from an fp32-weight run distributed as torchao's. A
  bf16-nearest run is the control each comparison must tell apart.
* Kahan writes (bf16-kahan + 8bit) have no torchao counterpart: only their
  moments are held to torchao's (they cannot depend on the weight rule).
* "4bit" (AdamW4bit: packed 4-bit codes, the signed 16-value dynamic map
  for m, the linear map 1/16..1 without zero for v, blocks of 128): fp32
  weights and bf16 weights written to nearest, bit for bit as for 8 bits.
* "fp8" (AdamWFp8: e4m3 codes, scale = the block's largest magnitude / 448,
  blocks of 256): likewise.
* The moment error (docs/metrics.md) per window: the probe's figure against
  the one computed from torchao's own states (8 bits, 4 bits, fp8).
"""
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # nothing written next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_common import run_checks  # noqa: E402

import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

import torchao  # noqa: E402
from torchao.optim import AdamW4bit, AdamW8bit, AdamWFp8  # noqa: E402
from torchao.optim.quant_utils import quantize_4bit_with_qmap, quantize_8bit_with_qmap, scale_tensor  # noqa: E402
from torchao.optim.subclass_4bit import OptimState4bit  # noqa: E402
from torchao.optim.subclass_8bit import OptimState8bit  # noqa: E402
from torchao.optim.subclass_fp8 import OptimStateFp8, quantize_fp8  # noqa: E402

# adamw.moments -> torchao's optimizer, its state class and its block size.
STORES = {"8bit": (AdamW8bit, OptimState8bit, 256), "4bit": (AdamW4bit, OptimState4bit, 128),
          "fp8": (AdamWFp8, OptimStateFp8, 256)}
QUANTIZED = (OptimState8bit, OptimState4bit, OptimStateFp8)


def code_bytes(codes):
    """Codes as the project holds them: uint8 (fp8 e4m3 codes by their bits)."""
    return codes.view(torch.uint8) if codes.dtype == torch.float8_e4m3fn else codes

STEPS = 100
SHAPES = {"w1031": (1031,), "w4097": (4097,), "w4096": (4096,), "m257x256": (257, 256), "m129x256": (129, 256),
          "w4224": (4224,)}  # 33 blocks of 128: 4bit quantizes it, 8bit does not
HYPERS = [
    {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01},
    {"lr": 1e-2, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.1},
]


def make_inputs(seed):
    gen = torch.Generator().manual_seed(seed)
    tensors = {}
    for name, shape in SHAPES.items():
        tensors[f"param/{name}"] = torch.randn(shape, generator=gen) * (0.5 + torch.rand(shape, generator=gen))
        scales = 10.0 ** (-3 * torch.rand((STEPS,) + (1,) * len(shape), generator=gen))
        grads = torch.randn((STEPS,) + shape, generator=gen) * scales
        grads[torch.rand(grads.shape, generator=gen) < 0.02] = 0.0
        tensors[f"grads/{name}"] = grads.contiguous()
    return tensors


def names_of(inputs):
    return sorted(k[6:] for k in inputs if k.startswith("param/"))


def run_probe(probe, work, mode, inputs, hyper, tag, steps=STEPS):
    inp, hyp, out = (os.path.join(work, f"{tag}.{ext}") for ext in ("in.safetensors", "hyper.json", "out.safetensors"))
    save_file(inputs, inp)
    with open(hyp, "w") as f:
        json.dump(hyper, f)
    probe("adamw", mode, steps, inp, hyp, out)
    return load_file(out)


def torchao_adamw8bit(inputs, hyper, dtype, stochastic, steps=STEPS, eager=False, store="8bit"):
    """torchao's AdamW8bit (store "4bit": AdamW4bit) over `steps` steps;
    eager=True runs its step without torch.compile
    (torch.compiler.set_stance("force_eager"))."""
    if eager:
        with torch.compiler.set_stance("force_eager"):
            return torchao_adamw8bit(inputs, hyper, dtype, stochastic, steps, store=store)
    names = names_of(inputs)
    params = [torch.nn.Parameter(inputs[f"param/{n}"].to(dtype).clone()) for n in names]
    opt = STORES[store][0](params, lr=hyper["lr"], betas=(hyper["beta1"], hyper["beta2"]), eps=hyper["eps"],
                           weight_decay=hyper["weight_decay"], bf16_stochastic_round=stochastic)
    for t in range(steps):
        for n, p in zip(names, params):
            p.grad = inputs[f"grads/{n}"][t].to(dtype).clone()
        opt.step()
    out = {}
    for n, p in zip(names, params):
        out[f"param/{n}"] = p.detach().clone()
        for key in ("exp_avg", "exp_avg_sq"):
            state = opt.state[p][key]
            if isinstance(state, QUANTIZED):
                out[f"state/{n}.{key}"] = code_bytes(state.codes).clone()
                out[f"state/{n}.{key}.scale"] = state.scale.clone()
                out[f"dequant/{n}.{key}"] = state.dequantize().float()
            else:
                out[f"state/{n}.{key}"] = state.detach().clone()
                out[f"dequant/{n}.{key}"] = state.detach().float()
    return out


def same_bits(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[a.element_size()]
    nan = torch.isnan(a) if a.is_floating_point() else torch.zeros_like(a, dtype=torch.bool)
    return bool(torch.equal(nan, torch.isnan(b) if b.is_floating_point() else nan)
                and torch.equal(a.contiguous().view(width)[~nan], b.contiguous().view(width)[~nan]))


def compare(ours, theirs, keys):
    """(keys whose bits differ, elements differing) over keys both hold."""
    bad, elements = [], 0
    for k in keys:
        if k not in ours or k not in theirs:
            bad.append(f"{k} missing ({'ours' if k not in ours else 'torchao'})")
            continue
        if not same_bits(ours[k], theirs[k]):
            a, b = ours[k], theirs[k]
            n = int((a.float() != b.float()).sum()) if a.shape == b.shape else -1
            elements += max(n, 0)
            bad.append(f"{k} ({n} differ; {a.dtype} vs {b.dtype})")
    return bad, elements


def moment_keys(theirs):
    return sorted(k for k in theirs if k.startswith("state/") or k.startswith("dequant/"))


def quantized_count(theirs):
    return sum(1 for k in theirs if k.endswith(".exp_avg.scale"))


def check_exact(probe, tally, work):
    # Each (shape, dtype, hyper-parameters) is one torch.compile of torchao's step: a few cases only.
    cases = [("fp32 weights", "bf16-nearest", "all-fp32", torch.float32, 0, "8bit"),
             ("fp32 weights", "bf16-nearest", "all-fp32", torch.float32, 1, "8bit"),
             ("bf16 weights, nearest", "bf16-nearest", "all-bf16", torch.bfloat16, 1, "8bit"),
             ("fp32 weights", "bf16-nearest", "all-fp32", torch.float32, 1, "4bit"),
             ("bf16 weights, nearest", "bf16-nearest", "all-bf16", torch.bfloat16, 1, "4bit"),
             ("fp32 weights", "bf16-nearest", "all-fp32", torch.float32, 1, "fp8"),
             ("bf16 weights, nearest", "bf16-nearest", "all-bf16", torch.bfloat16, 1, "fp8")]
    for case, mode, plan, dtype, hi, store in cases:
        hyper = HYPERS[hi]
        inputs = make_inputs(20 + hi)
        label = f"lr {hyper['lr']:g} wd {hyper['weight_decay']:g}"
        h = dict(hyper, moments=store, plan=plan, seed=7)
        ours = run_probe(probe, work, mode, inputs, h, tag=f"exact-{hi}-{plan}-{store}")
        theirs = torchao_adamw8bit(inputs, hyper, dtype, stochastic=False, store=store)
        torchao_name = STORES[store][0].__name__
        params = [k for k in theirs if k.startswith("param/")]
        tally.check(f"{store}, {case} ({label}): the probe's parameters are {dtype}",
                    all(ours[k].dtype == dtype for k in params), ", ".join(sorted({str(ours[k].dtype) for k in params})))
        keys = moment_keys(theirs)
        bad, n = compare(ours, theirs, keys)
        tally.check(f"{store}, {case} ({label}): codes, scales and dequantized moments == torchao {torchao_name}",
                    not bad, f"{len(keys)} tensors, {quantized_count(theirs)} params quantized; "
                    + ("; ".join(bad[:6]) if bad else "all bit for bit"))
        bad, n = compare(ours, theirs, params)
        tally.check(f"{store}, {case} ({label}): weights == torchao {torchao_name} after {STEPS} steps", not bad,
                    "; ".join(bad[:6]) if bad else f"{sum(theirs[k].numel() for k in params)} weights bit for bit")
        if dtype == torch.float32 and hi == 1 and store == "8bit":
            # Why the project follows the compiled step: torchao's eager step
            # (what it runs without torch.compile) rounds differently.
            eager = torchao_adamw8bit(inputs, hyper, dtype, stochastic=False, eager=True)
            count = lambda key: int((eager[key] != theirs[key]).sum())  # noqa: E731
            differ = {k: count(f"{k}/m257x256" if k == "param" else f"dequant/m257x256.{k}")
                      for k in ("param", "exp_avg", "exp_avg_sq")}
            tally.check(f"8bit, {case} ({label}): torchao's eager step ends elsewhere than its compiled one "
                        "(the project follows the compiled step)", all(differ.values()),
                        f"m257x256 ({257 * 256} elements): {differ['param']} weights, {differ['exp_avg']} m and "
                        f"{differ['exp_avg_sq']} v values differ after {STEPS} steps")


def quantized_names(inputs):
    """The params torchao quantizes (at least 4096 elements, whole blocks)."""
    return [n for n in names_of(inputs) if inputs[f"param/{n}"].numel() >= 4096 and inputs[f"param/{n}"].numel() % 256 == 0]


def as_bf16_values(inputs):
    """The inputs with params and gradients rounded to bf16 values, kept in
    fp32: torchao's fp32-weight run on them computes, at each step, the fp32
    value a bf16 run rounds (same fp32 arithmetic, same moments)."""
    return {k: v.bfloat16().float() for k, v in inputs.items()}


def deviations(run, base, names):
    return torch.cat([(run[f"param/{n}"].double() - base[f"param/{n}"].double()).flatten() for n in names])


def ks_statistic(a, b):
    """Two-sample Kolmogorov-Smirnov statistic: the largest gap between the
    empirical distribution functions."""
    a, b = a.sort().values, b.sort().values
    at = torch.cat([a, b])
    return float((torch.searchsorted(a, at, right=True).double() / a.numel()
                  - torch.searchsorted(b, at, right=True).double() / b.numel()).abs().max())


def ks_critical(n, m, alpha=1e-4):
    """The KS statistic two independent samples of sizes n and m from one
    distribution exceed with probability alpha. Conservative here: the two
    runs share every element's gradients, which makes their empirical
    distributions closer than independent samples'."""
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


def stalled_share(run, start, names):
    """Share of the weights that end where they started (bf16 values)."""
    w = torch.cat([run[f"param/{n}"].float().flatten() for n in names])
    w0 = torch.cat([start[f"param/{n}"].flatten() for n in names])
    return float((w == w0).double().mean()), w.numel()


def sr_rounds_away(bf16, exact):
    """Per element: None where `bf16` is not one of the two bf16 neighbours of
    the fp32 value `exact` (toward zero: its upper 16 bits; away: one more),
    else whether it is the one away from zero; and torchao's rule's
    probability of rounding away (the lower 16 bits / 2^16)."""
    bits = exact.contiguous().view(torch.int32)
    toward = (bits & -65536).view(torch.float32).bfloat16()
    away = ((bits & -65536) + 65536).view(torch.float32).bfloat16()
    is_toward = bf16.view(torch.int16) == toward.view(torch.int16)
    is_away = bf16.view(torch.int16) == away.view(torch.int16)
    return bool((is_toward | is_away).all()), is_away & ~is_toward, (bits & 0xFFFF).double() / 65536


def check_stochastic(probe, tally, work):
    """bf16-sr + 8bit against AdamW8bit(bf16_stochastic_round=True). Their
    random bits differ (torchao: torch's generator inside its compiled step;
    the project: Philox keyed by the run's seed), so the weights cannot be
    equal; what can be compared is compared:
    - the moments (codes, scales): bit for bit, since with fixed gradients
      they do not depend on the weights;
    - one step: every weight is one of the two bf16 neighbours of the fp32
      value torchao computes (the same step on fp32 weights holding the bf16
      values), and the number rounded away from zero is the sum of torchao's
      rule's probabilities within 5 standard deviations (torchao's own output
      is held to the same test; bf16-nearest, the control, must fail it);
    - after 100 steps: the distribution of each weight's deviation from that
      fp32 run (two-sample KS test) and the share of weights that never moved
      agree with torchao's; bf16-nearest, the control, must differ.
    The rounding rule itself, given torchao's bits, is held bit for bit to
    torchao's _fp32_to_bf16_sr in reference_optimizer."""
    hyper = HYPERS[0]
    inputs = make_inputs(30)
    label = f"lr {hyper['lr']:g} wd {hyper['weight_decay']:g}"
    names = quantized_names(inputs)
    exact = as_bf16_values(inputs)

    # One step.
    fp32_1 = torchao_adamw8bit(exact, hyper, torch.float32, stochastic=False, steps=1)
    torch.manual_seed(1)
    runs = {"torchao": torchao_adamw8bit(inputs, hyper, torch.bfloat16, stochastic=True, steps=1),
            "project bf16-sr": run_probe(probe, work, "bf16-sr", inputs, dict(hyper, moments="8bit", seed=3),
                                          tag="sr1", steps=1),
            "control: project bf16-nearest": run_probe(probe, work, "bf16-nearest", inputs,
                                                       dict(hyper, moments="8bit", seed=3), tag="near1", steps=1)}
    for who, run in runs.items():
        bracketed, away, p = zip(*(sr_rounds_away(run[f"param/{n}"], fp32_1[f"param/{n}"]) for n in names))
        away, p = torch.cat([a.flatten() for a in away]), torch.cat([q.flatten() for q in p])
        # Per eighth of the probability: rounding to nearest matches the rule's
        # total count but never rounds away below one half, always above.
        zs = []
        for b in range(8):
            inside = (p >= b / 8) & (p < (b + 1) / 8)
            pb = p[inside]
            sd = float((pb * (1 - pb)).sum().sqrt())
            zs.append((int(away[inside].sum()) - float(pb.sum())) / max(sd, 1e-300))
        worst = max(zs, key=abs)
        control = who.startswith("control")
        tally.check(f"8bit + stochastic rounding, 1 step ({label}), {who}: every weight a bf16 neighbour of "
                    "torchao's fp32 result" + (", rounded away as often as torchao's rule says" if not control
                                               else "; the rounding away is NOT the rule's (control)"),
                    all(bracketed) and ((abs(worst) <= 5) != control),
                    f"{int(away.sum())} of {away.numel()} rounded away, rule's expectation {float(p.sum()):.0f}; "
                    f"per eighth of the probability the largest gap is {worst:+.2f} sd"
                    f"{'' if all(bracketed) else '; some weights outside the bracket'}")

    # A hundred steps.
    base = torchao_adamw8bit(exact, hyper, torch.float32, stochastic=False)
    torch.manual_seed(1)
    theirs = torchao_adamw8bit(inputs, hyper, torch.bfloat16, stochastic=True)
    ours = run_probe(probe, work, "bf16-sr", inputs, dict(hyper, moments="8bit", seed=3), tag="sr")
    nearest = run_probe(probe, work, "bf16-nearest", inputs, dict(hyper, moments="8bit", seed=3), tag="sr-nearest")
    keys = moment_keys(theirs)
    bad, _ = compare(ours, theirs, keys)
    tally.check(f"8bit, bf16 weights, stochastic rounding ({label}): codes, scales, dequantized moments == torchao's "
                "after 100 steps (the moments do not depend on the weights)", not bad,
                "; ".join(bad[:6]) if bad else f"{len(keys)} tensors bit for bit")
    d_theirs = deviations(theirs, base, names)
    share_theirs, n = stalled_share(theirs, exact, names)
    critical = ks_critical(n, n)
    se = math.sqrt(2 * share_theirs * (1 - share_theirs) / n)
    for who, run in (("project bf16-sr", ours), ("control: project bf16-nearest", nearest)):
        ks = ks_statistic(deviations(run, base, names), d_theirs)
        share, _ = stalled_share(run, exact, names)
        same = ks <= critical and abs(share - share_theirs) <= 5 * se
        control = who.startswith("control")
        tally.check(f"8bit + stochastic rounding, {STEPS} steps ({label}), {who}: weights' deviation from the fp32 run "
                    + ("distributed as torchao's (KS test, alpha 1e-4) and as many weights never moved"
                       if not control else "told apart from torchao's SR (control)"),
                    same != control,
                    f"KS {ks:.4f} (critical {critical:.4f}); never moved: {share:.4f} vs torchao {share_theirs:.4f} "
                    f"(5 SE = {5 * se:.4f}); {n} weights")
    kahan = run_probe(probe, work, "bf16-kahan", inputs, dict(hyper, moments="8bit", seed=3), tag="kahan")
    bad, _ = compare(kahan, theirs, keys)
    tally.check(f"8bit + bf16-kahan ({label}): moments == torchao's (no torchao Kahan to compare weights with)",
                not bad, "; ".join(bad[:6]) if bad else f"{len(keys)} tensors bit for bit")


def moment_values(state):
    """A moment as the next step reads it, fp32 (torchao dequantizes its codes)."""
    return state.dequantize().float() if isinstance(state, QUANTIZED) else state.detach().float()


def requantize(exact, state):
    """torchao's copy_ of fp32 values into its quantized state, as new tensors:
    (codes, scale) as that state holds them."""
    if isinstance(state, OptimStateFp8):
        codes, scale = quantize_fp8(exact, state.block_size)
        return code_bytes(codes), scale
    scaled, scale = scale_tensor(exact.reshape(-1), state.block_size)
    if isinstance(state, OptimState4bit):
        codes = quantize_4bit_with_qmap(scaled, state.qmap)
        return (codes[::2] << 4) | codes[1::2], scale
    return quantize_8bit_with_qmap(scaled, state.qmap).view(state.codes.shape), scale


def torchao_moment_error(inputs, hyper, dtype, window, steps=STEPS, store="8bit"):
    """The moment error (docs/metrics.md) of torchao's AdamW8bit, computed
    here from torchao's own states: each step's exact fp32 moments from the
    stored ones before it (its compiled lerp, prev + (g - prev) * (1 - beta),
    each operation rounded once), the stored ones after it, summed over all
    parameters and the window's steps. Returns [(step, m error, v error)]
    and whether torchao's quantizer (quantize_8bit_with_qmap on the block
    scales), applied to those exact moments, gives back its stored codes:
    that they are the values its step quantized."""
    names = names_of(inputs)
    params = [torch.nn.Parameter(inputs[f"param/{n}"].to(dtype).clone()) for n in names]
    opt = STORES[store][0](params, lr=hyper["lr"], betas=(hyper["beta1"], hyper["beta2"]), eps=hyper["eps"],
                           weight_decay=hyper["weight_decay"])
    weights = {"exp_avg": 1 - hyper["beta1"], "exp_avg_sq": 1 - hyper["beta2"]}
    sums = {k: [0.0, 0.0] for k in weights}
    out, requantized = [], True
    for t in range(steps):
        exact = {}
        for n, p in zip(names, params):
            p.grad = inputs[f"grads/{n}"][t].to(dtype).clone()
            g = p.grad.float()
            for key, w in weights.items():
                prev = moment_values(opt.state[p][key]) if opt.state[p] else torch.zeros_like(g)
                target = g if key == "exp_avg" else g.square()
                exact[(n, key)] = prev + (target - prev) * w
        opt.step()
        for n, p in zip(names, params):
            for key in weights:
                state, e = opt.state[p][key], exact[(n, key)]
                stored = moment_values(state)
                sums[key][0] += float((stored.double() - e.double()).square().sum())
                sums[key][1] += float(e.double().square().sum())
                if isinstance(state, QUANTIZED):
                    codes, scale = requantize(e, state)
                    requantized = (requantized and torch.equal(codes, code_bytes(state.codes))
                                   and torch.equal(scale, state.scale))
        if (t + 1) % window == 0:
            out.append((t + 1, *(math.sqrt(sums[k][0] / sums[k][1]) for k in weights)))
            sums = {k: [0.0, 0.0] for k in weights}
    return out, requantized


def check_moment_error(probe, tally, work):
    """The probe's moment error per window (PrecisionAdamW's window
    statistics, all parameters) against the same figure computed from
    torchao's AdamW8bit states (torchao_moment_error). The moments do not
    depend on lr or weight decay: HYPERS[1], whose compiled steps
    check_exact has made already (a cold inductor cache compiles each
    (shape, dtype, hyper-parameters) once, about 3 CPU-s a graph)."""
    hyper = HYPERS[1]
    window = 20
    for case, mode, plan, dtype, store in (("fp32 weights", "bf16-nearest", "all-fp32", torch.float32, "8bit"),
                                           ("bf16 weights, nearest", "bf16-nearest", "all-bf16", torch.bfloat16, "8bit"),
                                           ("fp32 weights", "bf16-nearest", "all-fp32", torch.float32, "4bit"),
                                           ("fp32 weights", "bf16-nearest", "all-fp32", torch.float32, "fp8")):
        inputs = make_inputs(40)
        ours = run_probe(probe, work, mode, inputs, dict(hyper, moments=store, plan=plan, seed=7, update_window=window),
                         tag=f"moment-error-{plan}-{store}")
        theirs, requantized = torchao_moment_error(inputs, hyper, dtype, window, store=store)
        case = f"{store}, {case}"
        tally.check(f"moment error, {case}: torchao's quantizer applied to the exact moments gives its stored codes "
                    "and scales on every step (the exact moments are what its step quantized)", requantized,
                    f"{STEPS} steps, {len(quantized_names(inputs))} quantized parameters")
        got = ours.get("moment_error")
        rows = [] if got is None else [tuple(float(x) for x in r) for r in got]
        worst = max((abs(a - b) / b for r, q in zip(rows, theirs) for a, b in zip(r[1:], q[1:])), default=math.inf)
        tally.check(f"moment error, {case}: per window (m, v) == the figure from torchao's states (rel. 1e-9)",
                    len(rows) == len(theirs) and all(r[0] == q[0] for r, q in zip(rows, theirs)) and worst <= 1e-9,
                    f"{len(rows)} windows of {window} steps; torchao " +
                    ", ".join(f"step {q[0]}: m {q[1]:.4%} v {q[2]:.4%}" for q in theirs[:2]) +
                    f"; largest relative difference {worst:.2e}")


def main():
    torch.set_num_threads(1)
    checks = [(c.__name__, c) for c in (check_exact, check_stochastic, check_moment_error)]
    return run_checks(__doc__, f"torch {torch.__version__}, torchao {torchao.__version__}", "plab-ref-states-", checks)


if __name__ == "__main__":
    sys.exit(main())
