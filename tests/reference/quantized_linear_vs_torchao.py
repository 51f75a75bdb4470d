"""The quantized linear layer (core/model/quantized_linear.h) against the same layer built from torchao's quantizers.

The probe runs plab::quantizedLinear forward and backward on x [N, in], w [out, in],
b [out] and an output gradient gy [N, out]; here the same products are written with
torchao's reference quantizers (formats_vs_torchao.torchao_quantize), each operand
quantized along the product's reduction dimension, as torchao's float8 and MX
training do:
  y  = Q_in(x) . Q_w(w)^T + b             (x and w along in-features)
  dx = Q_g(gy) . Q_w(w^T)^T                (gy and w along out-features)
  dw = Q_g(gy^T) . Q_in(x^T)^T             (gy and x along the tokens)
  db = sum of gy over the tokens (unquantized)
in fp32 products (same layouts as the project's, so the same kernels), cast to the
layer's dtype. y, dx, dw and db must agree bit for bit (fp32 and bf16 layers, every
format but bf16, three seeds; sizes are whole blocks, as torchao requires).
"""
import sys

import reference_common  # noqa: F401  (offline setup first)
import torch  # noqa: E402
import torchao  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from formats_vs_torchao import torchao_quantize  # noqa: E402

FORMATS = ["fp8-e4m3", "fp8-e5m2", "mxfp8", "mxfp4", "nvfp4"]
N, IN, OUT = 64, 96, 160


def q(t, fmt, role):
    return torchao_quantize(t.contiguous(), fmt, role)[0].float()


def reference(x, w, b, gy, fmt):
    dtype = w.dtype
    y = torch.nn.functional.linear(q(x, fmt, "input"), q(w, fmt, "weight"), b.float())
    w_out = q(w.t(), fmt, "weight").t().contiguous()          # [out, in], blocks along out
    g_tok = q(gy.t(), fmt, "grad-output").t().contiguous()    # [N, out], blocks along the tokens
    x_tok = q(x.t(), fmt, "input").t().contiguous()           # [N, in], blocks along the tokens
    dx = torch.mm(q(gy, fmt, "grad-output"), w_out)
    dw = torch.mm(g_tok.t(), x_tok)
    db = gy.sum(0, dtype=torch.float32)
    return {"y": y.to(dtype), "dx": dx.to(dtype), "dw": dw.to(dtype), "db": db.to(dtype)}


def check_layers(probe, tally, work):
    for seed in (1, 2, 3):
        g = torch.Generator().manual_seed(seed)
        spread = lambda *s: torch.randn(*s, generator=g) * torch.exp(torch.randn(*s, generator=g))  # noqa: E731
        base = {"x": spread(N, IN), "w": spread(OUT, IN) * 0.1, "b": spread(OUT), "gy": spread(N, OUT) * 1e-3}
        for dtype in (torch.float32, torch.bfloat16):
            tensors = {k: v.to(dtype) for k, v in base.items()}
            path_in = f"{work}/qlinear-in-{seed}-{str(dtype)[6:]}.safetensors"
            save_file(tensors, path_in)
            for fmt in FORMATS:
                path_out = f"{work}/qlinear-out-{seed}-{str(dtype)[6:]}-{fmt}.safetensors"
                probe("qlinear", fmt, path_in, path_out)
                ours = load_file(path_out)
                theirs = reference(tensors["x"], tensors["w"], tensors["b"], tensors["gy"], fmt)
                for name in ("y", "dx", "dw", "db"):
                    a, r = ours[name], theirs[name]
                    same = a.dtype == r.dtype and a.shape == r.shape and torch.equal(a, r)
                    detail = "" if same else (f"{(a.float() != r.float()).sum().item()} of {a.numel()} differ, "
                                              f"max |diff| {(a.float() - r.float()).abs().max().item():.3g}")
                    tally.check(f"seed {seed} {str(dtype)[6:]} {fmt} {name}", same, detail)


def main():
    return reference_common.run_checks(
        __doc__, f"torch {torch.__version__}, torchao {torchao.__version__}", "plab-qlinear-",
        [("layers", check_layers)])


if __name__ == "__main__":
    sys.exit(main())
