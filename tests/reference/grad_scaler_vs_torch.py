"""Dynamic loss scaling (core/precision/loss_scale) against torch.amp.GradScaler("cpu").

Each case is a deterministic sequence of steps, each with a loss and a few
scaled gradient tensors, some steps with an Inf, -Inf or NaN injected. Torch
runs GradScaler as a training loop does (scale(loss), unscale_(optimizer),
step(optimizer) with a dummy optimizer that records whether it ran,
update()); the probe runs DynamicLossScale on the same tensors. Per step,
with 0 differing bits: the scaled loss, the scale used, the scale and the
growth tracker after update(), found_inf, whether the step was skipped, and
every unscaled gradient (NaN included). Cases: GradScaler's defaults (2^16,
x2, x0.5, interval 2000) over a few steps; interval 3 over a stretch of clean
steps (growth and backoff both happen); odd factors (1.37, 0.29; init 1000)
where the scale is no power of two and inv_scale = float(1/double(scale))
rounds; the state written to JSON and read back after every step; bf16
gradients beside fp32 ones; growth stopping below fp32's overflow. Each case
also asserts that torch's own sequence shows the behaviour it is meant to
test, so a case that stopped exercising it fails.

Then the fp16-mixed training mode on its own gradients (check_trainer_gradients):
the Trainer's scale sequence, skipped steps and unscaled gradients against
GradScaler replaying the scaled fp16 gradients the Trainer wrote.
"""
import json
import os
import sys

import reference_common  # noqa: F401  (offline setup first)
import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

SHAPES = [((6, 5), torch.float32), ((17,), torch.float32), ((3, 4, 2), torch.float32)]
BAD = [float("inf"), float("nan"), float("-inf")]


class Recorder(torch.optim.Optimizer):
    """Records whether GradScaler let it step; changes nothing."""

    def __init__(self, params):
        super().__init__(params, {})
        self.stepped = False

    def step(self, closure=None):
        self.stepped = True


def make_steps(seed, steps, bad_steps, shapes):
    """(losses [steps], [[grad tensors] per step]) with Inf/NaN at bad_steps."""
    g = torch.Generator().manual_seed(seed)
    losses = torch.rand(steps, generator=g) * 10
    out = []
    for i in range(steps):
        grads = []
        for k, (shape, dtype) in enumerate(shapes):
            x = torch.randn(shape, generator=g) * torch.exp2(torch.randint(-30, 30, (), generator=g).float())
            flat = x.view(-1)
            flat[0] = float(torch.randn((), generator=g)) * 1e-40  # an fp32 subnormal
            flat[1] = float(torch.rand((), generator=g) * 2 - 1) * 3e38  # up to near fp32's max, finite
            grads.append(x.to(dtype))
        if i in bad_steps:
            t = grads[i % len(grads)].view(-1)
            t[int(torch.randint(t.numel(), (), generator=g))] = BAD[i % len(BAD)]
        out.append(grads)
    return losses, out


def run_torch(config, losses, steps_grads, shapes):
    params = [torch.nn.Parameter(torch.zeros(shape, dtype=dtype)) for shape, dtype in shapes]
    opt = Recorder(params)
    scaler = torch.amp.GradScaler("cpu", init_scale=config["init_scale"], growth_factor=config["growth_factor"],
                                  backoff_factor=config["backoff_factor"], growth_interval=config["growth_interval"])
    rec = {k: [] for k in ("scaled_loss", "scale_used", "found_inf", "skipped", "scale_after", "tracker_after")}
    grads_out = {}
    for i, grads in enumerate(steps_grads):
        opt.stepped = False
        rec["scaled_loss"].append(scaler.scale(losses[i]))
        rec["scale_used"].append(scaler._scale.clone())
        for p, grad in zip(params, grads):
            p.grad = grad.clone()
        scaler.unscale_(opt)
        rec["found_inf"].append(int(sum(v.item() for v in scaler._found_inf_per_device(opt).values()) != 0))
        scaler.step(opt)
        rec["skipped"].append(int(not opt.stepped))
        scaler.update()
        rec["scale_after"].append(scaler._scale.clone())
        rec["tracker_after"].append(scaler._get_growth_tracker())
        for k, p in enumerate(params):
            grads_out[f"s{i}.g{k}"] = p.grad.clone()
    return {
        "scaled_loss": torch.stack(rec["scaled_loss"]), "scale_used": torch.stack(rec["scale_used"]),
        "found_inf": torch.tensor(rec["found_inf"], dtype=torch.uint8),
        "skipped": torch.tensor(rec["skipped"], dtype=torch.uint8),
        "scale_after": torch.stack(rec["scale_after"]),
        "tracker_after": torch.tensor(rec["tracker_after"], dtype=torch.int32), **grads_out}


def int_view(t):
    t = t.contiguous()
    if t.dtype == torch.float32:
        return t.view(torch.int32)
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.view(torch.int16)
    return t


def compare_case(probe, tally, work, name, config, seed, steps, bad_steps, shapes, expect):
    losses, steps_grads = make_steps(seed, steps, bad_steps, shapes)
    theirs = run_torch(config, losses, steps_grads, shapes)
    tensors = {"loss": losses}
    for i, grads in enumerate(steps_grads):
        for k, grad in enumerate(grads):
            tensors[f"s{i}.g{k}"] = grad
    case = dict(config, steps=steps, grads_per_step=len(shapes), reload_every_step=config.get("reload", False))
    case.pop("reload", None)
    paths = [os.path.join(work, f) for f in ("case.json", "grads.safetensors", "out.safetensors")]
    with open(paths[0], "w") as f:
        json.dump(case, f)
    save_file(tensors, paths[1])
    probe("grad-scaler", *paths)
    ours = load_file(paths[2])
    parts, ok = [], True
    per_step = ("scaled_loss", "scale_used", "found_inf", "skipped", "scale_after", "tracker_after")
    for key in per_step:
        d = int((int_view(ours[key]) != int_view(theirs[key])).sum())
        ok = ok and d == 0
        if d:
            first = int((int_view(ours[key]) != int_view(theirs[key])).nonzero()[0])
            parts.append(f"{key}: {d} of {steps} steps differ (first step {first}: ours {ours[key][first].item()}, "
                         f"torch {theirs[key][first].item()})")
    if ok:
        parts.append(f"per step ({', '.join(per_step)}): 0 of {steps} steps differ")
    grad_keys = [k for k in theirs if k not in per_step]
    elements = sum(theirs[k].numel() for k in grad_keys)
    d = sum(int((int_view(ours[k]) != int_view(theirs[k])).sum()) for k in grad_keys)
    ok = ok and d == 0
    parts.append(f"unscaled gradients: {d} of {elements} elements differ in their bits")
    skipped = int(theirs["skipped"].sum())
    parts.append(f"{skipped} of {steps} steps skipped, scale {theirs['scale_used'][0].item():g} -> "
                 f"{theirs['scale_after'][-1].item():g}")
    tally.check(name, ok, "; ".join(parts))
    tally.check(f"{name}: torch's sequence shows {expect.__doc__}", expect(theirs))


def grows_and_backs_off(t):
    """growth and backoff"""
    ratio = t["scale_after"] / t["scale_used"]
    return bool((ratio > 1).any() and (ratio < 1).any())


def backs_off_only(t):
    """backoff, no growth (interval 2000)"""
    ratio = t["scale_after"] / t["scale_used"]
    return bool((ratio < 1).any() and not (ratio > 1).any() and int(t["tracker_after"].max()) > 5)


def odd_scales(t):
    """scales that are no power of two, growth and backoff"""
    m, _ = torch.frexp(t["scale_after"])
    return grows_and_backs_off(t) and bool((m != 0.5).sum() > 10)


def growth_stops(t):
    """the scale stopping at 2^127 (growth would overflow fp32)"""
    return bool((t["scale_after"] == 2.0 ** 127).sum() > 3 and torch.isfinite(t["scale_after"]).all())


def defaults():
    return {"init_scale": 2.0 ** 16, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000}


CASES = [
    ("GradScaler's defaults", defaults(), 1, 30, {2, 3, 9, 20}, SHAPES, backs_off_only),
    ("interval 3", dict(defaults(), growth_interval=3), 2, 60, {0, 1, 12, 13, 14, 30, 31, 45}, SHAPES,
     grows_and_backs_off),
    ("odd factors 1.37 / 0.29 from 1000, interval 2", {"init_scale": 1000.0, "growth_factor": 1.37,
     "backoff_factor": 0.29, "growth_interval": 2}, 3, 50, set(range(3, 50, 7)), SHAPES, odd_scales),
    ("odd factors, state through JSON after every step", {"init_scale": 1000.0, "growth_factor": 1.37,
     "backoff_factor": 0.29, "growth_interval": 2, "reload": True}, 4, 50, set(range(5, 50, 6)), SHAPES, odd_scales),
    ("interval 3, state through JSON after every step", dict(defaults(), growth_interval=3, reload=True), 5, 40,
     {4, 5, 20}, SHAPES, grows_and_backs_off),
    ("bf16 gradients beside fp32", dict(defaults(), growth_interval=2), 6, 30, {7, 8, 16},
     SHAPES + [((9,), torch.bfloat16), ((2, 3), torch.bfloat16)], grows_and_backs_off),
    ("growth stops below fp32 overflow", dict(defaults(), init_scale=2.0 ** 120, growth_interval=1), 7, 20, {15},
     SHAPES, growth_stops),
]


def check_cases(probe, tally, work):
    for name, config, seed, steps, bad, shapes, expect in CASES:
        try:
            compare_case(probe, tally, work, name, config, seed, steps, bad, shapes, expect)
        except Exception as e:  # one broken case must not hide the others
            tally.error(name, e)


def same_bits_or_both_nan(a, b):
    nan = torch.isnan(a)
    return bool(torch.equal(nan, torch.isnan(b)) and torch.equal(int_view(a)[~nan], int_view(b)[~nan]))


def check_trainer_gradients(probe, tally, work):
    """The fp16-mixed Trainer's own gradients: a run of the embedded tiny
    GPT-2 whose fp16 gradients overflow at its initial scale (2^26; interval
    3, so the scale also grows) writes each step's scaled fp16 gradients and
    its unscaled fp32 ones; GradScaler replays the scaled ones (as fp32, the
    dtype GradScaler takes) and must give the scale of every step,
    metrics.jsonl's loss_scale and step_skipped, and the unscaled gradients
    bit for bit."""
    run_dir, dump_dir = os.path.join(work, "fp16-mixed-run"), os.path.join(work, "fp16-mixed-grads")
    os.makedirs(dump_dir, exist_ok=True)
    steps, init, interval = 28, 2.0 ** 26, 3
    config = {"name": "fp16-mixed-reference", "mode": "fp16-mixed", "steps": steps, "batch_size": 4, "seq_len": 16,
              "warmup_steps": 0, "eval_every": 0, "eval_batches": 1, "layer_stats_every": 5, "update_window": 0,
              "device": "cpu", "adamw": {"eps": 1e-4, "lr": 1e-3}, "output_dir": run_dir,
              "loss_scale": {"init_scale": init, "growth_interval": interval}}
    config_path = os.path.join(work, "fp16-mixed-run.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    probe("train", config_path, dump_dir)
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    dumps = [load_file(os.path.join(dump_dir, f"step-{i + 1}.safetensors")) for i in range(steps)]
    names = sorted(k[len("scaled/"):] for k in dumps[0] if k.startswith("scaled/"))
    params = [torch.nn.Parameter(torch.zeros(dumps[0][f"scaled/{n}"].shape)) for n in names]
    opt = Recorder(params)
    scaler = torch.amp.GradScaler("cpu", init_scale=init, growth_factor=2.0, backoff_factor=0.5,
                                  growth_interval=interval)
    scale_diff, skip_diff, grad_diff, elements, fp16 = 0, 0, 0, 0, True
    torch_skips = []
    for i, dump in enumerate(dumps):
        opt.stepped = False
        scaler.scale(torch.ones(()))  # as scaler.scale(loss).backward() does, first of all
        used = float(scaler._scale)
        for n, p in zip(names, params):
            fp16 = fp16 and dump[f"scaled/{n}"].dtype == torch.float16
            p.grad = dump[f"scaled/{n}"].float()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        torch_skips.append(not opt.stepped)
        scale_diff += int(used != lines[i]["loss_scale"])
        skip_diff += int((not opt.stepped) != lines[i]["step_skipped"])
        for n, p in zip(names, params):
            ours = dump[f"unscaled/{n}"]
            elements += ours.numel()
            grad_diff += 0 if same_bits_or_both_nan(ours, p.grad) else int((int_view(ours) != int_view(p.grad)).sum())
    scales = [line["loss_scale"] for line in lines]
    tally.check("fp16-mixed Trainer: its gradients are fp16 as autograd hands them over", fp16,
                f"{len(names)} parameters")
    tally.check("fp16-mixed Trainer vs GradScaler on the Trainer's gradients", scale_diff == 0 and skip_diff == 0
                and grad_diff == 0,
                f"over {steps} steps: scale differs at {scale_diff}, skip flag at {skip_diff} steps; unscaled "
                f"gradients: {grad_diff} of {elements} elements differ in their bits; scales "
                + " ".join(f"{s:g}{'*' if k else ''}" for s, k in zip(scales, torch_skips)) + " (* skipped)")
    grew = any(b > a for a, b in zip(scales, scales[1:]))
    tally.check("fp16-mixed Trainer: the run skips steps, backs off and grows", sum(torch_skips) >= 2 and grew
                and not all(torch_skips), f"{sum(torch_skips)} of {steps} steps skipped; grew: {grew}")


def main():
    return reference_common.run_checks(__doc__, f"torch {torch.__version__}", "plab-grad-scaler-",
                                       [("cases", check_cases), ("trainer", check_trainer_gradients)])


if __name__ == "__main__":
    sys.exit(main())
