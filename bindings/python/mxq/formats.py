"""numpy conversions for the formats numpy lacks: bfloat16 (as uint16 bit patterns), FP8 E4M3 / E5M2
and UE8M0 scale bytes (as uint8). For inspecting results and preparing inputs on the CPU backend;
the library itself never needs them."""

import numpy as np


def float32_to_bf16(x):
    """Round float32 values to bfloat16 (round to nearest even, NaN kept NaN); returns uint16 bits."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((bits >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16), rounded)


def bf16_to_float32(bits):
    """Widen bfloat16 bit patterns (uint16) to float32 (exact)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _fp8_table(exp_bits, man_bits, bias, ieee_special):
    codes = np.arange(256, dtype=np.uint32)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = codes & ((1 << man_bits) - 1)
    mag = np.where(e == 0, m / 2.0**man_bits * 2.0**(1 - bias), (1 + m / 2.0**man_bits) * 2.0**(e.astype(np.int64) - bias))
    top = (1 << exp_bits) - 1
    if ieee_special:  # E5M2: exponent all ones is Inf (m = 0) or NaN
        mag = np.where(e == top, np.where(m == 0, np.inf, np.nan), mag)
    else:  # E4M3 "fn": only S.1111.111 is NaN, no Inf
        mag = np.where((e == top) & (m == (1 << man_bits) - 1), np.nan, mag)
    return (sign * mag).astype(np.float32)


_E4M3 = _fp8_table(4, 3, 7, False)
_E5M2 = _fp8_table(5, 2, 15, True)


def e4m3_to_float32(codes):
    """Decode FP8 E4M3 bytes (uint8) to float32."""
    return _E4M3[np.asarray(codes, dtype=np.uint8)]


def e5m2_to_float32(codes):
    """Decode FP8 E5M2 bytes (uint8) to float32."""
    return _E5M2[np.asarray(codes, dtype=np.uint8)]


def ue8m0_to_float32(codes):
    """Decode UE8M0 scale bytes: 2^(E-127), 0xFF is NaN."""
    e = np.asarray(codes, dtype=np.uint8).astype(np.int32)
    return np.where(e == 255, np.nan, np.ldexp(1.0, np.minimum(e, 254) - 127)).astype(np.float32)
