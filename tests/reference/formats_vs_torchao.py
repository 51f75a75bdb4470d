"""The GEMM formats' quantizers (core/formats) against torchao's reference implementations.

Each case is a 2-D tensor; the probe quantizes and dequantizes it through
plab::quantizeDequantize, torchao through its own reference code on the same
values, and every element, block scale and tensor scale must agree bit for bit
(0 differing bits; NaN included):
  fp8-e4m3 / fp8-e5m2: torchao.float8 tensorwise current scaling
      (tensor_to_scale, hp_tensor_and_scale_to_float8, to_original_precision);
      fp8-e4m3's output gradient is e5m2, as Float8LinearConfig's default.
  mxfp8 / mxfp4: MXTensor.to_mx(x, float8_e4m3fn | float4_e2m1fn_x2, 32) with its
      default scale mode (FLOOR, asserted below), then dequantize(float32).
  nvfp4: NVFP4Tensor.to_nvfp4(x, per_tensor_scale=per_tensor_amax_to_scale(max|x|)),
      then dequantize(float32).
Cases: values on (or an ulp beside) rounding ties after scaling, where the order
of torchao's scale arithmetic decides the result (e4m3/e5m2 midpoints over the
tensor scale; e2m1 ties times chosen NVFP4 block scales; three seeds: replacing
NVFP4's (1/s)/b by 1/(s*b), or fp8's x*s by x/(1/s), fails them, while all the
random cases still pass), random tensors over seeds and magnitudes, log-uniform magnitudes across
the whole fp32 range (subnormals to near the max), hand-made edge rows (zeros,
-0, subnormals, at and beyond every format's saturation, ties, all-equal
blocks), +-Inf, NaN, bf16 inputs, and rows of 45 elements (torchao needs whole
blocks: it gets the row padded with zeros to 64, which is what the project's
short last block is defined to equal). One known disagreement is marked: an
all-zero tensor in NVFP4 (torchao's reference divides 0 by 0 and returns NaN;
the project uses tensor scale 1 there, as torchao's Triton training kernel).
"""
import os
import sys

import reference_common  # noqa: F401  (offline setup first)
import torch  # noqa: E402
import torchao  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from torchao.float8.float8_training_tensor import hp_tensor_and_scale_to_float8  # noqa: E402
from torchao.float8.float8_utils import tensor_to_scale  # noqa: E402
from torchao.prototype.mx_formats.mx_tensor import MXTensor, QuantizeTensorToMXKwargs  # noqa: E402
from torchao.prototype.mx_formats.config import ScaleCalculationMode  # noqa: E402
from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale  # noqa: E402

ROW = 64  # two MX blocks, four NVFP4 blocks
INF, NAN = float("inf"), float("nan")


def torchao_quantize(x, fmt, role):
    """(values fp32, block scale codes uint8 or None, tensor scale fp32) as torchao computes them."""
    if fmt.startswith("fp8"):
        dtype = torch.float8_e5m2 if fmt == "fp8-e5m2" or role == "grad-output" else torch.float8_e4m3fn
        x = x.float()  # torchao dequantizes to the input's dtype: compare in fp32
        scale = tensor_to_scale(x, dtype)
        values = hp_tensor_and_scale_to_float8(x, scale, dtype).to_original_precision()
        return values, None, scale.reshape(1)
    if fmt in ("mxfp8", "mxfp4"):
        elem = torch.float8_e4m3fn if fmt == "mxfp8" else torch.float4_e2m1fn_x2
        t = MXTensor.to_mx(x, elem, 32)
        return t.dequantize(torch.float32), t.scale.view(torch.uint8), torch.ones(1)
    assert fmt == "nvfp4"
    pts = per_tensor_amax_to_scale(torch.max(torch.abs(x)))
    t = NVFP4Tensor.to_nvfp4(x, per_tensor_scale=pts)
    return t.dequantize(torch.float32), t.scale.view(torch.uint8), pts.reshape(1).float()


def edge_rows():
    """Rows of 64 values that put every rule at work."""
    sub = 2.0 ** -149
    rows = [
        [0.0] * 64,
        [-0.0] * 64,
        [3.0] * 64,                                 # all-equal blocks
        [-1e-3] * 32 + [7.5] * 32,
        [sub * k for k in range(1, 65)],            # fp32 subnormals
        [2.0 ** -126 * (1 + k / 64) for k in range(64)],
        [448.0, 449.0, 464.0, 465.0, 479.0, 480.0, 500.0, 57344.0, 61439.0, 61440.0, 65536.0, 1e5,
         3e38, -3e38, 6.0, 5.0, 5.5, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 7.0] + [1.0] * 40,
        [2.0 ** k for k in range(-20, 12)] + [-(2.0 ** k) for k in range(-20, 12)],
        [1.0 + k / 16 for k in range(64)],          # ties relative to 1.0 in every element type
        [1e-30] * 31 + [1.0] + [1e-40] * 31 + [6.0 * 2.0 ** -120],
    ]
    return torch.tensor(rows, dtype=torch.float32)


def grid(dtype):
    """Every finite non-negative value of an fp8 type, ascending."""
    v = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dtype).float()
    return torch.unique(v[torch.isfinite(v) & (v >= 0)])


def tie_cases(seed):
    """Values that land on (or one ulp beside) a rounding tie after scaling:
    here the order of torchao's scale arithmetic decides the result, which
    random values almost never test."""
    g = torch.Generator().manual_seed(100 + seed)
    out = []
    for name, dtype, fmt_max in (("e4m3", torch.float8_e4m3fn, 448.0), ("e5m2", torch.float8_e5m2, 57344.0)):
        v = grid(dtype)
        mids = (v[:-1] + v[1:]) / 2  # exact in fp32
        amax = float(torch.rand(1, generator=g) * 10 + 0.1)
        scale = torch.tensor(fmt_max / amax, dtype=torch.float64).float()  # as torchao's amax_to_scale
        x = (mids / scale).repeat(2)[: 20 * ROW]
        x = torch.cat([x, torch.zeros(20 * ROW - x.numel())])
        x[0] = amax
        out.append((f"{name} ties at the tensor scale, seed {seed}", x.view(20, ROW)))
    # NVFP4: blocks whose scale is a chosen e4m3 value, elements at e2m1 ties times the block's scale.
    amax = float(torch.rand(1, generator=g) * 100 + 1)
    pts = torch.tensor(amax, dtype=torch.float32) / 2688.0
    codes = grid(torch.float8_e4m3fn)
    codes = codes[(codes >= 2.0 ** -6) & (codes <= 448)]
    ties = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0])
    rows = []
    for r in range(24):
        row = []
        for b in range(ROW // 16):
            bs = codes[torch.randint(len(codes), (1,), generator=g)].item()
            step = pts * bs
            block = ties[torch.randint(len(ties), (16,), generator=g)] * step
            block[0] = 6.0 * step
            row.append(block * torch.where(torch.rand(16, generator=g) < 0.5, -1.0, 1.0))
        rows.append(torch.cat(row))
    x = torch.stack(rows)
    x = x * torch.clamp(amax / x.abs().max(), max=1.0)
    x[0, 0] = amax
    out.append((f"e2m1 ties at NVFP4 block scales, seed {seed}", x))
    return out


def cases():
    out = []
    for seed in (1, 2, 3):
        out.extend(tie_cases(seed))
    for seed in (1, 2, 3):
        g = torch.Generator().manual_seed(seed)
        for scale in (1e-3, 1.0, 300.0):
            out.append((f"randn*{scale} seed {seed}", torch.randn(24, ROW, generator=g) * scale))
        # Rows of different magnitudes, so blocks and tensor disagree.
        out.append((f"row-scaled seed {seed}", torch.randn(24, ROW, generator=g) * torch.exp2(
            torch.randint(-30, 30, (24, 1), generator=g).float())))
        sign = torch.where(torch.rand(32, ROW, generator=g) < 0.5, -1.0, 1.0)
        out.append((f"log-uniform 2^-149..2^127 seed {seed}",
                    sign * torch.exp2(torch.rand(32, ROW, generator=g) * 276 - 149)))
    out.append(("edge rows", edge_rows()))
    inf = edge_rows()
    inf[2, 5], inf[7, 40] = INF, -INF
    out.append(("edge rows with +-Inf", inf))
    nan = edge_rows()
    nan[3, 0] = NAN
    out.append(("edge rows with a NaN", nan))
    out.append(("all-zero tensor", torch.zeros(4, ROW)))
    g = torch.Generator().manual_seed(9)
    out.append(("bf16 input", (torch.randn(16, ROW, generator=g) * 50).to(torch.bfloat16)))
    return out


FORMATS = [("fp8-e4m3", "input"), ("fp8-e4m3", "grad-output"), ("fp8-e5m2", "weight"),
           ("mxfp8", "input"), ("mxfp4", "input"), ("nvfp4", "input")]


def nan_mask(t, fmt):
    """Where t holds a NaN: fp32 values, or e4m3 scale codes 0x7F / 0xFF (NVFP4)."""
    if t.dtype == torch.float32:
        return torch.isnan(t)
    return (t & 0x7F) == 0x7F if fmt == "nvfp4" else torch.zeros_like(t, dtype=torch.bool)


def differing(a, b, fmt):
    """(elements whose bits differ, NaN against NaN excepted; NaNs whose sign or payload differ).
    NaN payloads are not part of the contract: which NaN an operation on two
    NaNs returns depends on the operand order the compiler picks (torch's
    vectorised kernels and ours differ), and CUDA writes one canonical NaN."""
    a, b = a.contiguous(), b.contiguous()
    na, nb = nan_mask(a, fmt), nan_mask(b, fmt)
    ia = a.view(torch.int32) if a.dtype == torch.float32 else a
    ib = b.view(torch.int32) if b.dtype == torch.float32 else b
    both = na & nb
    return int(((ia != ib) & ~both).sum()), int(((ia != ib) & both).sum())


def compare(probe, tally, work, name, x, fmt, role, theirs, short=None):
    path_in = os.path.join(work, "in.safetensors")
    path_out = os.path.join(work, "out.safetensors")
    save_file({"x": x.contiguous()}, path_in)
    probe("quantize", fmt, role, path_in, path_out)
    ours = load_file(path_out)
    values, scales, tensor_scale = theirs
    if short is not None:  # torchao saw the rows padded: drop the padding
        values = values[:, :short]
        if scales is not None:
            scales = scales[:, : ours["scales"].shape[1]]
    ok, parts = True, []
    for label, mine, theirs_part in (("values", ours["values"], values), ("block scales", ours.get("scales"), scales),
                                     ("tensor scale", ours["tensor_scale"], tensor_scale)):
        if theirs_part is None:
            continue
        d, nan_payloads = differing(mine, theirs_part, fmt)
        ok = ok and d == 0
        parts.append(f"{label} {d} of {theirs_part.numel()} differ"
                     + (f" ({nan_payloads} NaN vs NaN of another sign/payload)" if nan_payloads else ""))
    detail = ", ".join(parts)
    expected = None
    if name == "all-zero tensor" and fmt == "nvfp4":
        expected = "torchao's reference divides 0 by a tensor scale of 0 (NaN); the project uses 1, as its Triton kernel"
    tally.check(f"{fmt} {role}, {name}", ok, detail, expected_failure=expected)


def check_default_mode(probe, tally, work):
    mode = QuantizeTensorToMXKwargs().scaling_mode
    tally.check("torchao's default MX scale mode is FLOOR (the one implemented)", mode == ScaleCalculationMode.FLOOR,
                str(mode))


def check_all(probe, tally, work):
    for name, x in cases():
        for fmt, role in FORMATS:
            compare(probe, tally, work, name, x, fmt, role, torchao_quantize(x, fmt, role))


def check_short_rows(probe, tally, work):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(12, 45, generator=g) * torch.exp2(torch.randint(-8, 8, (12, 1), generator=g).float())
    padded = torch.nn.functional.pad(x, (0, ROW - 45))
    for fmt, role in FORMATS:
        compare(probe, tally, work, "rows of 45 (torchao: zero-padded to 64)", x, fmt, role,
                torchao_quantize(padded, fmt, role), short=45)


def main():
    return reference_common.run_checks(
        __doc__, f"torch {torch.__version__}, torchao {torchao.__version__}", "plab-formats-",
        [("default mode", check_default_mode), ("cases", check_all), ("short rows", check_short_rows)])


if __name__ == "__main__":
    sys.exit(main())
