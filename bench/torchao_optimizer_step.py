#!/usr/bin/env python3
"""Time of one torchao.optim.AdamW8bit, AdamW4bit and AdamWFp8 step on the CPU
(fp32 weights; bf16 weights without and with bf16_stochastic_round), on the shapes
bench_optimizer steps (layers of width 1024 and their biases adding up to
about ELEMENTS parameters, gradients randn * 1e-3), as users run it
(torch.compile'd single_param_adam; the compilation is left out with the
warm-up steps). Prints one line per optimizer and weight dtype: the median ms of STEPS steps.
  torchao_optimizer_step.py [elements=4000000] [steps=20] [warmup=3] [threads=0: torch's default]
"""
import statistics
import sys
import time
import warnings

import torch
from torchao.optim import AdamW4bit, AdamW8bit, AdamWFp8

warnings.filterwarnings("ignore")


def make_params(elements):
    out, total, width = [], 0, 1024
    while total < elements:
        rows = min(width, max(1, (elements - total) // width))
        out += [torch.randn(rows, width) * 0.02, torch.zeros(rows)]
        total += rows * width + rows
    return out


def main():
    elements = int(sys.argv[1]) if len(sys.argv) > 1 else 4000000
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    warmup = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    if len(sys.argv) > 4 and int(sys.argv[4]) > 0:
        torch.set_num_threads(int(sys.argv[4]))
    torch.manual_seed(0)
    rows = [(cls, label, dtype, sr) for cls in (AdamW8bit, AdamW4bit, AdamWFp8)
            for label, dtype, sr in (("fp32 weights", torch.float32, False),
                                     ("bf16 weights, nearest", torch.bfloat16, False),
                                     ("bf16 weights, bf16_stochastic_round", torch.bfloat16, True))]
    for cls, label, dtype, sr in rows:
        params = [torch.nn.Parameter(p.to(dtype)) for p in make_params(elements)]
        for p in params:
            p.grad = (torch.randn(p.shape) * 1e-3).to(dtype)
        opt = cls(params, lr=1e-3, weight_decay=0.01, bf16_stochastic_round=sr)
        times = []
        for i in range(warmup + steps):
            t0 = time.perf_counter()
            opt.step()
            if i >= warmup:
                times.append(1000 * (time.perf_counter() - t0))
        n = sum(p.numel() for p in params)
        print(f"torchao {cls.__name__}, {label}: {statistics.median(times):.2f} ms/step (median of {steps}), "
              f"{n} parameters, {torch.get_num_threads()} threads", flush=True)


if __name__ == "__main__":
    main()
