#!/usr/bin/env python3
"""What users would run instead: a nanoGPT-style GPT-2 trained by a plain
PyTorch loop with torch.optim.AdamW, for the throughput comparison of
bench/compare_pytorch_loop.sh. Naive bf16 is model.to(torch.bfloat16).

  pytorch_loop.py CONFIG.json --dtype fp32|bf16 --batch B --seq T --steps N

Prints one line: tokens/s (median step after 2 warm-up steps). Random token
ids: this measures speed, not learning. Same structure as the engine's GPT-2
(learned positions, pre-LayerNorm blocks, gelu_new MLP, tied head, logits and
loss in fp32, gradient clipping at 1.0)."""
import argparse, json, math, time

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
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("config")
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    a = p.parse_args()
    c = json.load(open(a.config))
    torch.manual_seed(0)
    model = GPT(c)
    if a.dtype == "bf16":
        model = model.to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.0)
    times = []
    for step in range(a.steps + 2):
        idx = torch.randint(0, c["vocab_size"], (a.batch, a.seq + 1))
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(idx[:, :-1])
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), idx[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step >= 2:
            times.append(time.perf_counter() - t0)
    # Mean throughput of the steps after 2 warm-up steps, as compare_pytorch_loop.sh reads ours.
    print(f"{a.batch * a.seq * len(times) / sum(times):.0f}")


if __name__ == "__main__":
    main()
