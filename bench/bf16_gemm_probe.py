#!/usr/bin/env python3
# Usage: bf16_gemm_probe.py THREADS ROWS 16m|124m ROUNDS slice|full
# The independent check of model/bf16_gemm_choice.h (issue 39.1): times the GPT-2 bf16 products natively,
# upcast to fp32 and in fp32 with torch, as the in-run measurement does (slice: the same output slices).
# Independent probe of the bf16 products' paths (native bf16, upcast to fp32, fp32) on the run's shapes:
# forward + both backward products, interleaved rounds, min and median per shape; step GFLOP/s weighted by count.
import sys, time, torch, torch.nn.functional as F
threads = int(sys.argv[1]); rows = int(sys.argv[2]); cfg = sys.argv[3]; rounds = int(sys.argv[4]); full = sys.argv[5] == "full"
torch.set_num_threads(threads)
if cfg == "16m": d, ff, V, L = 256, 1024, 50257, 4
else: d, ff, V, L = 768, 3072, 50257, 12
shapes = [(d, 3*d, True, L), (d, d, True, L), (d, ff, True, L), (ff, d, True, L), (d, V, False, 1)]
def prep(inn, out, tr, dt):
    x = torch.linspace(-1, 1, rows*inn).reshape(rows, inn).to(dt).requires_grad_()
    w = (torch.linspace(-.02, .02, inn*out).reshape(inn, out) if tr else torch.linspace(-.02, .02, out*inn).reshape(out, inn)).to(dt).requires_grad_()
    g = torch.linspace(-1e-3, 1e-3, rows*out).reshape(rows, out).to(dt)
    return x, w, g
def native(x, w, g, tr):
    y = F.linear(x, w.t() if tr else w); torch.autograd.grad([y], [x, w], [g])
def upcast(x, w, g, tr):
    with torch.no_grad():
        wt = w.t() if tr else w
        y = F.linear(x.float(), wt.float()).bfloat16()
        x32, w32, g32 = x.float(), wt.float(), g.float()
        gx = (g32 @ w32).bfloat16(); gw = (g32.t() @ x32).bfloat16()
def timed(f, *a):
    t = time.perf_counter(); f(*a); return time.perf_counter() - t
res = {}
tot_flops = 0
for (inn, out, tr, cnt) in shapes:
    o = out if full else max(min(64, out), min(out, int(4e8 / (6*rows*inn))))
    scale = out / o
    xb, wb, gb = prep(inn, o, tr, torch.bfloat16); xf, wf, gf = prep(inn, o, tr, torch.float32)
    kinds = {"native": (native, xb, wb, gb), "upcast": (upcast, xb, wb, gb), "fp32": (native, xf, wf, gf)}
    for k, (f, *a) in kinds.items(): f(*a, tr)  # warm-up
    ts = {k: [] for k in kinds}
    names = list(kinds)
    for r in range(rounds):
        for j in range(3):
            k = names[(j + r) % 3]; f, *a = kinds[k]; ts[k].append(timed(f, *a, tr))
    fl = 6.0*rows*inn*o
    tot_flops += 6.0*rows*inn*out*cnt
    res[(inn, out, tr, cnt)] = (scale, ts)
    print(f"shape in {inn} out {out} (timed {o}) x{cnt}: " + ", ".join(f"{k} min {fl/min(v)/1e9:.1f} med {fl/sorted(v)[len(v)//2]/1e9:.1f}" for k, v in ts.items()), flush=True)
for stat in ("min", "med"):
    s = {k: 0.0 for k in ("native", "upcast", "fp32")}
    for (inn, out, tr, cnt), (scale, ts) in res.items():
        for k, v in ts.items(): s[k] += cnt*scale*(min(v) if stat == "min" else sorted(v)[len(v)//2])
    print(f"step GFLOP/s ({stat}): " + ", ".join(f"{k} {tot_flops/v/1e9:.1f}" for k, v in s.items()))
