"""Oracle for kforge's float8 rounding and Float8Linear, written from the OCP 8-bit floating point specification.

Usage:
  float8_reference.py cast DIR FORMAT   FORMAT e4m3 or e5m2. Writes DIR/inputs.npy (float32: every code's value, the
      midpoints between neighbours and the fp32 values next to them, a window of fp32 values around every midpoint,
      the boundaries of saturation and underflow, +-0, +-inf, NaN, and random fp32 bit patterns) and DIR/expected.npy
      (each rounded to FORMAT as torchao's to_fp8_saturated does: clamp to +-max, then round to nearest, ties to the
      even code).
  float8_reference.py linear DIR        Reads DIR/x.npy [m, k], DIR/w.npy [n, k], DIR/dy.npy [m, n] (float32); writes
      out_y.npy, out_dx.npy, out_dw.npy (torchao TENSORWISE Float8Linear on bf16 operands: y = x_e4m3 w_e4m3^T,
      dx = dy_e5m2 w_e4m3, dw = dy_e5m2^T x_e4m3, each summed in fp32, times the reciprocal scales, rounded to bf16)
      and out_{y,dx,dw}_abs.npy (float64: the same products over |operands|, scaled: the sum bound's magnitude).

The rounding is independent of torch's float8 dtypes (torch 1.13 has none) and of kforge's arithmetic: it decodes
the 256 codes from their sign, exponent and mantissa bits, and rounds by searching the sorted table of finite values,
breaking ties by the code's last mantissa bit.
"""
import os
import sys

import numpy as np
import torch

# OCP FP8: (exponent bits, mantissa bits, bias); e4m3fn has no infinities and one NaN mantissa (S.1111.111),
# e5m2 is IEEE-like (exponent 11111: infinity with mantissa 0, NaN otherwise).
FORMATS = {"e4m3": (4, 3, 7), "e5m2": (5, 2, 15)}


def decode(code, fmt):
    """The value of an 8-bit code, as float64 (nan for NaN codes, inf for e5m2's infinities)."""
    ebits, mbits, bias = FORMATS[fmt]
    sign = -1.0 if code >> 7 else 1.0
    exponent = (code >> mbits) & ((1 << ebits) - 1)
    mantissa = code & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    if fmt == "e4m3" and exponent == top and mantissa == (1 << mbits) - 1:
        return float("nan")
    if fmt == "e5m2" and exponent == top:
        return sign * float("inf") if mantissa == 0 else float("nan")
    if exponent == 0:  # subnormal
        return sign * 2.0 ** (1 - bias) * mantissa / (1 << mbits)
    return sign * 2.0 ** (exponent - bias) * (1 + mantissa / (1 << mbits))


def finite_table(fmt):
    """The non-negative finite values, ascending, and whether each one's code is even (its last mantissa bit 0)."""
    values = sorted((decode(c, fmt), c % 2 == 0) for c in range(128) if np.isfinite(decode(c, fmt)))
    return torch.tensor([v for v, _ in values], dtype=torch.float64), torch.tensor([e for _, e in values])


def round_to(x, fmt):
    """float32 tensor -> float32 tensor of FORMAT's values: clamp to +-max, nearest, ties to the even code."""
    table, even = finite_table(fmt)
    wide = x.double()
    magnitude = wide.abs().clamp(max=table[-1].item())
    i = torch.searchsorted(table, magnitude).clamp(1, len(table) - 1)  # table[i - 1] <= magnitude <= table[i]
    below, above = table[i - 1], table[i]
    down, up = magnitude - below, above - magnitude  # exact: fp32 inputs and fp8 values fit float64's 53 bits
    pick_above = (up < down) | ((up == down) & even[i])
    rounded = torch.where(pick_above, above, below)
    rounded = torch.copysign(rounded, wide)
    return torch.where(torch.isnan(wide), wide, rounded).float()


def fp32_neighbours(v):
    """The fp32 values just below and just above float32 v."""
    v = torch.tensor([v], dtype=torch.float32)
    return [torch.nextafter(v, torch.tensor([-np.inf])).item(), torch.nextafter(v, torch.tensor([np.inf])).item()]


def cast_inputs(fmt):
    table, _ = finite_table(fmt)
    values = table.tolist()
    points = list(values)
    for lo, hi in zip(values, values[1:]):
        mid = (lo + hi) / 2  # exact in fp32: lo and hi differ in the last of at most 4 significant bits
        points += [mid] + fp32_neighbours(mid) + [lo + (hi - lo) / 4, hi - (hi - lo) / 4]
    big = values[-1]
    points += [big * 1.03, big * 2, 3.0e38, float(np.finfo(np.float32).max), values[1] / 2, values[1] / 4]
    points += fp32_neighbours(big) + fp32_neighbours(values[1] / 2) + [float(np.finfo(np.float32).tiny), 1e-45]
    base = torch.tensor(points, dtype=torch.float32)
    # A window of 64 fp32 values either side of every midpoint, through the bit patterns.
    mids = torch.tensor([(lo + hi) / 2 for lo, hi in zip(values, values[1:])], dtype=torch.float32)
    offsets = torch.arange(-64, 65, dtype=torch.int32)
    window = (mids.view(torch.int32)[:, None] + offsets[None, :]).reshape(-1).view(torch.float32)
    # Random fp32 bit patterns over the whole range (NaNs and infinities included).
    gen = torch.Generator().manual_seed(8)
    bits = torch.randint(-(2**31), 2**31, (200000,), generator=gen, dtype=torch.int64).to(torch.int32)
    special = torch.tensor([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=torch.float32)
    everything = torch.cat([base, window, bits.view(torch.float32), special])
    return torch.cat([everything, -everything])


def to_float8(t, fmt):
    """torchao's hp_tensor_to_float8_dynamic on bf16 t: (float8 values in float32, reciprocal scale in float32)."""
    high = t.to(torch.bfloat16).float()
    amax = high.abs().max().double()
    fmax = finite_table(fmt)[0][-1].item()
    scale = (fmax / torch.clamp(amax, min=1e-12)).float()
    return round_to(high * scale, fmt), scale.reciprocal()


def scaled_mm(a, b, a_inverse, b_inverse):
    """(product in fp32 times the reciprocal scales, rounded to bf16, as float32; the bound's magnitude, float64)."""
    unscale = a_inverse * b_inverse
    out = (torch.mm(a, b) * unscale).to(torch.bfloat16).float()
    magnitude = torch.mm(a.double().abs(), b.double().abs()) * unscale.double()
    return out, magnitude


def linear(d):
    load = lambda name: torch.from_numpy(np.load(os.path.join(d, name)))  # noqa: E731
    x, w, dy = load("x.npy"), load("w.npy"), load("dy.npy")
    xq, x_inv = to_float8(x, "e4m3")
    wq, w_inv = to_float8(w, "e4m3")
    dyq, dy_inv = to_float8(dy, "e5m2")
    results = {
        "y": scaled_mm(xq, wq.t(), x_inv, w_inv),
        "dx": scaled_mm(dyq, wq, dy_inv, w_inv),
        "dw": scaled_mm(dyq.t(), xq, dy_inv, x_inv),
    }
    for name, (value, magnitude) in results.items():
        np.save(os.path.join(d, "out_" + name + ".npy"), value.numpy())
        np.save(os.path.join(d, "out_" + name + "_abs.npy"), magnitude.numpy())
    print("float8 linear oracle: torch", torch.__version__)


def cast(d, fmt):
    inputs = cast_inputs(fmt)
    np.save(os.path.join(d, "inputs.npy"), inputs.numpy())
    np.save(os.path.join(d, "expected.npy"), round_to(inputs, fmt).numpy())
    print("float8 cast oracle:", fmt, inputs.numel(), "inputs")


if __name__ == "__main__":
    if sys.argv[1] == "cast":
        cast(sys.argv[2], sys.argv[3])
    else:
        linear(sys.argv[2])
