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
fp32 layers: fp32 products of torchao's dequantized values (torchao's emulation),
cast to the layer's dtype. bf16 layers: bf16 products of the operands as a
format's GEMM takes them (core/formats/gemm_product.h), built from torchao's
quantized tensors: fp8 the Float8 tensor's fp8 data with scale 1/scale (the
scale torchao hands torch._scaled_mm); MX the MXTensor dequantized to bf16
(torchao's MX emulation; E8M0 scales keep it exact); NVFP4 the e2m1 data times
the e4m3 block scales, with the per-tensor scale as the product's scale (the
operands torchao hands torch._scaled_mm). The product is torch.addmm(b, a, b,
alpha=scale_a * scale_b) in bf16: the scales and the bias applied to the fp32
accumulator before one rounding, as _scaled_mm's epilogue (MX: alpha 1). y, dx, dw and db must agree bit for bit (fp32 and
bf16 layers, every format but bf16, three seeds; sizes are whole blocks, as
torchao requires).
"""
import sys

import reference_common  # noqa: F401  (offline setup first)
import torch  # noqa: E402
import torchao  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from formats_vs_torchao import torchao_quantize  # noqa: E402
from torchao.float8.float8_training_tensor import hp_tensor_and_scale_to_float8  # noqa: E402
from torchao.float8.float8_utils import tensor_to_scale  # noqa: E402
from torchao.prototype.mx_formats.kernels import f4_unpacked_to_f32, unpack_uint4  # noqa: E402
from torchao.prototype.mx_formats.mx_tensor import MXTensor  # noqa: E402
from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale  # noqa: E402

FORMATS = ["fp8-e4m3", "fp8-e5m2", "mxfp8", "mxfp4", "nvfp4"]
N, IN, OUT = 64, 96, 160


def q(t, fmt, role):
    return torchao_quantize(t.contiguous(), fmt, role)[0].float()


def reference(x, w, b, gy, fmt):
    dtype = w.dtype
    if dtype == torch.bfloat16:
        return reference_bf16(x, w, b, gy, fmt)
    y = torch.nn.functional.linear(q(x, fmt, "input"), q(w, fmt, "weight"), b.float())
    w_out = q(w.t(), fmt, "weight").t().contiguous()          # [out, in], blocks along out
    g_tok = q(gy.t(), fmt, "grad-output").t().contiguous()    # [N, out], blocks along the tokens
    x_tok = q(x.t(), fmt, "input").t().contiguous()           # [N, in], blocks along the tokens
    dx = torch.mm(q(gy, fmt, "grad-output"), w_out)
    dw = torch.mm(g_tok.t(), x_tok)
    db = gy.sum(0, dtype=torch.float32)
    return {"y": y.to(dtype), "dx": dx.to(dtype), "dw": dw.to(dtype), "db": db.to(dtype)}


def operand(t, fmt, role):
    """(bf16 values, fp32 scale): the GEMM operand torchao's quantized tensor hands its product."""
    t = t.contiguous()
    if fmt.startswith("fp8"):
        dtype = torch.float8_e5m2 if fmt == "fp8-e5m2" or role == "grad-output" else torch.float8_e4m3fn
        scale = tensor_to_scale(t.float(), dtype)
        data = hp_tensor_and_scale_to_float8(t.float(), scale, dtype)._data
        return data.to(torch.bfloat16), scale.reciprocal()
    if fmt in ("mxfp8", "mxfp4"):
        elem = torch.float8_e4m3fn if fmt == "mxfp8" else torch.float4_e2m1fn_x2
        return MXTensor.to_mx(t, elem, 32).dequantize(torch.bfloat16), torch.tensor(1.0)
    pts = per_tensor_amax_to_scale(torch.max(torch.abs(t)))
    n = NVFP4Tensor.to_nvfp4(t, per_tensor_scale=pts)
    rows = t.shape[0]
    e2m1 = f4_unpacked_to_f32(unpack_uint4(n.qdata)).reshape(rows, -1, 16)
    values = (e2m1 * n.scale.float().reshape(rows, -1, 1)).reshape(t.shape)
    assert torch.equal(values.to(torch.bfloat16).float(), values)  # exact in bf16
    return values.to(torch.bfloat16), pts.float()


def product(a, b, op_a, op_b, bias=None):
    alpha = float(op_a[1] * op_b[1])
    self = torch.zeros((), dtype=torch.bfloat16) if bias is None else bias
    return torch.addmm(self, a, b, beta=0 if bias is None else 1, alpha=alpha)


def reference_bf16(x, w, b, gy, fmt):
    ox, ow, og = operand(x, fmt, "input"), operand(w, fmt, "weight"), operand(gy, fmt, "grad-output")
    y = product(ox[0], ow[0].t(), ox, ow, b)
    w_out = operand(w.t(), fmt, "weight")
    w_out = (w_out[0].t().contiguous(), w_out[1])            # [out, in], blocks along out
    g_tok = operand(gy.t(), fmt, "grad-output")
    g_tok = (g_tok[0].t().contiguous(), g_tok[1])            # [N, out], blocks along the tokens
    x_tok = operand(x.t(), fmt, "input")
    x_tok = (x_tok[0].t().contiguous(), x_tok[1])            # [N, in], blocks along the tokens
    dx = product(og[0], w_out[0], og, w_out)
    dw = product(g_tok[0].t(), x_tok[0], g_tok, x_tok)
    db = gy.sum(0, dtype=torch.float32)
    return {"y": y, "dx": dx, "dw": dw, "db": db.to(torch.bfloat16)}


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
