"""Shared by the Python binding tests: the run's random seed, input generators, and an independent
numpy model of the bit-exact part of the contract (RCEIL scales and E4M3 round-to-nearest-even,
docs/NUMERICS.md) so that quantized bytes can be compared exactly, not through a round trip only.

The seed comes from the OS unless MXQ_TEST_SEED is set; every failure message carries it."""

import os
import secrets
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import mxq  # noqa: E402
from mxq import formats  # noqa: E402

SEED = int(os.environ.get("MXQ_TEST_SEED") or secrets.randbits(63))

_unpoisoned_empty = mxq._tensor.Allocator.empty


def _poisoned_empty(self, shape, dtype):
    """Every output the helpers allocate starts as 0xA5 bytes, so a result the library did not write
    (or wrote partly) cannot pass for a right one by reusing freed memory."""
    a = _unpoisoned_empty(self, shape, dtype)
    if self.device == "cpu":
        a.view(np.uint8)[...] = 0xA5
    elif type(a).__module__.startswith("torch"):
        import torch
        a.view(torch.uint8).fill_(0xA5)
    else:
        import cupy
        a.view(cupy.uint8).fill(0xA5)
    return a


mxq._tensor.Allocator.empty = _poisoned_empty


def rng(salt):
    """A generator for one test: the run's seed mixed with the test's own salt."""
    return np.random.default_rng([SEED, salt])


def wide_floats(r, shape, lo=-12, hi=12):
    """Random float32 values whose magnitudes vary per 32-block and per element (never all zero)."""
    x = r.standard_normal(shape).astype(np.float32)
    x *= np.exp2(r.integers(lo, hi, size=shape)).astype(np.float32)
    return x


_E4M3_POS = formats.e4m3_to_float32(np.arange(0x7F, dtype=np.uint8)).astype(np.float64)  # codes 0..126


def e4m3_rne(v):
    """float32 -> E4M3 bytes: round to nearest even, saturating to +-448, NaN -> 0x7F."""
    v = np.asarray(v, dtype=np.float32)
    a = np.abs(v.astype(np.float64))
    idx = np.clip(np.searchsorted(_E4M3_POS, a), 1, len(_E4M3_POS) - 1)
    lo, hi = idx - 1, idx
    d_lo, d_hi = a - _E4M3_POS[lo], _E4M3_POS[hi] - a
    code = np.where(d_lo < d_hi, lo, np.where(d_hi < d_lo, hi, np.where(lo % 2 == 0, lo, hi)))
    code = np.where(a >= 448.0, 0x7E, code).astype(np.uint8)
    code |= np.where(np.signbit(v), 0x80, 0).astype(np.uint8)
    return np.where(np.isnan(v), np.uint8(0x7F), code).astype(np.uint8)


_RCP_E4M3 = np.float32(1.0) / np.float32(448.0)


def rceil_e4m3_rowwise(x):
    """Reference rowwise MXFP8 (E4M3, RCEIL, NaN ignored by the block max) of a 2-D float32 array:
    returns (data [R, C] uint8, LINEAR scales [R, ceil(C/32)] uint8)."""
    x = np.asarray(x, dtype=np.float32)
    r, c = x.shape
    nb = -(-c // 32)
    padded = np.zeros((r, nb * 32), np.float32)
    padded[:, :c] = x
    blocks = padded.reshape(r, nb, 32)
    amax = np.max(np.where(np.isnan(blocks), np.float32(0), np.abs(blocks)), axis=2).astype(np.float32)
    s = (amax * _RCP_E4M3).astype(np.float32)
    b = s.view(np.uint32)
    e = ((b >> 23) & 0xFF).astype(np.int64)
    m = (b & 0x7FFFFF).astype(np.int64)
    bump = (m != 0) & (e != 0xFE) & ~((e == 0) & (m <= 0x400000))
    E = np.where(np.isinf(s), 0xFE, np.where(s == 0, 0, e + bump)).astype(np.int64)
    inv_bits = np.where(E == 254, 0x00400000, (254 - np.minimum(E, 254)) << 23).astype(np.uint32)
    inv = inv_bits.view(np.float32)
    scaled = (blocks * inv[:, :, None]).astype(np.float32)
    data = e4m3_rne(scaled).reshape(r, nb * 32)[:, :c]
    return np.ascontiguousarray(data), E.astype(np.uint8)


def dequant_linear(data, scales):
    """Host decode of rowwise E4M3 data [R, C] with LINEAR scales [R, ceil(C/32)]."""
    c = data.shape[1]
    s = formats.ue8m0_to_float32(scales).repeat(32, axis=1)[:, :c]
    return formats.e4m3_to_float32(data) * s


def first_mismatch(got, want):
    """A short description of where two arrays differ (for failure messages)."""
    got, want = np.asarray(got), np.asarray(want)
    bad = np.argwhere(~((got == want) | (np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64)))))
    if len(bad) == 0:
        return "equal"
    i = tuple(bad[0])
    return f"{len(bad)} of {got.size} differ; first at {i}: got {got[i]!r}, want {want[i]!r} (seed {SEED})"
