#!/usr/bin/env python3
"""What users would run instead: a nanoGPT-style GPT-2 trained by a plain
PyTorch loop with torch.optim.AdamW, for the throughput comparisons of
bench/compare_pytorch_loop.sh and `precision-lab-cli bench` (which carries
this file in its binary and runs it beside its own runs, interleaved). Naive
bf16 is model.to(torch.bfloat16).

  pytorch_loop.py CONFIG.json --dtype fp32|bf16 --batch B --seq T --steps N [--threads N] [--json]
                  [--optimizer adamw|adamw-fused|optimi-kahan|torchao-sr]
  pytorch_loop.py CONFIG.json --reference [--batch B --seq T --steps N] > pytorch-loop.json

Prints one line: tokens/s (mean of the steps after 2 warm-up steps); with
--json, that, tokens per CPU-second of this process over the same steps, the
torch version and its thread count as one JSON object; with --reference,
both dtypes as the JSON that `precision-lab-cli bench --pytorch` reads. Random token ids: this measures speed, not learning. Same structure as the engine's GPT-2
(learned positions, pre-LayerNorm blocks, gelu_new MLP, tied head, logits and
loss in fp32, gradient clipping at 1.0)."""
import argparse, datetime, json, platform, time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads, eps):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        # Fused attention, as a PyTorch 2.x user writes it (nanoGPT).
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["n_embd"]
        self.wte = nn.Embedding(c["vocab_size"], d)
        self.wpe = nn.Embedding(c["n_positions"], d)
        self.h = nn.ModuleList(Block(d, c["n_head"], c.get("layer_norm_epsilon", 1e-5)) for _ in range(c["n_layer"]))
        self.ln_f = nn.LayerNorm(d, eps=c.get("layer_norm_epsilon", 1e-5))

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight).float()  # tied head, fp32 logits


def make_optimizer(name, params):
    """What users run: torch's AdamW in its default (for-loop on the CPU) or
    fused form, optimi's Kahan-summed AdamW, torchao's AdamW with bf16
    stochastic rounding (the last two on bf16 weights)."""
    if name == "adamw":
        return torch.optim.AdamW(params, lr=5e-5, weight_decay=0.0)
    if name == "adamw-fused":
        return torch.optim.AdamW(params, lr=5e-5, weight_decay=0.0, fused=True)
    if name == "optimi-kahan":
        import optimi
        return optimi.AdamW(params, lr=5e-5, weight_decay=0.0, kahan_sum=True, foreach=False, triton=False)
    if name == "torchao-sr":
        from torchao.optim import _AdamW
        return _AdamW(params, lr=5e-5, weight_decay=0.0, bf16_stochastic_round=True)
    raise SystemExit(f"unknown optimizer {name}")


def tokens_per_second(c, dtype, batch, seq, steps, optimizer="adamw"):
    torch.manual_seed(0)
    model = GPT(c)
    if dtype == "bf16":
        model = model.to(torch.bfloat16)
    opt = make_optimizer(optimizer, list(model.parameters()))
    times = []
    cpu = 0.0
    for step in range(steps + 2):
        idx = torch.randint(0, c["vocab_size"], (batch, seq + 1))
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        logits = model(idx[:, :-1])
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), idx[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step >= 2:
            times.append(time.perf_counter() - t0)
            cpu += time.process_time() - c0
    # Mean throughput of the steps after 2 warm-up steps, as compare_pytorch_loop.sh reads ours;
    # and per CPU-second of this process (all its threads) over the same steps.
    tokens = batch * seq * len(times)
    return tokens / sum(times), (tokens / cpu if cpu > 0 else 0.0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("config")
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--reference", action="store_true")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    p.add_argument("--optimizer", choices=["adamw", "adamw-fused", "optimi-kahan", "torchao-sr"], default="adamw")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    c = json.load(open(a.config))
    if not a.reference:
        wall, cpu = tokens_per_second(c, a.dtype, a.batch, a.seq, a.steps, a.optimizer)
        if a.json:
            print(json.dumps({"tokens_per_second": wall, "tokens_per_cpu_second": cpu, "torch": torch.__version__,
                              "threads": torch.get_num_threads(), "steps": a.steps, "optimizer": a.optimizer}))
        else:
            print(f"{wall:.0f}")
        return
    figures = {d: round(tokens_per_second(c, d, a.batch, a.seq, a.steps)[0]) for d in ("fp32", "bf16")}
    cpu = platform.machine()
    try:
        names = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
        cpu = f"{len(names)} x {names[0]}" if names else cpu
    except OSError:
        pass
    print(json.dumps({
        "recorded": f"{datetime.date.today()}, {cpu}, torch {torch.__version__}, "
                    f"{torch.get_num_threads()} intra-op threads",
        "config": a.config, "batch_size": a.batch, "seq_len": a.seq, "steps": a.steps,
        "tokens_per_second": figures}, indent=1))


if __name__ == "__main__":
    main()
