// Device numerics of the quantizer: the UE8M0 scale of a block, the element conversion, SwiGLU and
// the input element formats. Each function is the GPU twin of one function in src/cpu/numerics.cpp
// (the oracle) and is written in the same order of correctly rounded fp32 operations, with explicit
// __f*_rn intrinsics wherever nvcc could otherwise contract a multiply and an add into an FMA. The
// per-element work is a handful of instructions (convert, |max|, multiply, half a packed cvt); the
// scale itself is integer bit manipulation done once per 32 elements.
#pragma once

#include <cstdint>

#include "common/fp8.cuh"
#include "common/vec.cuh"
#include "mxq/mxq.h"

namespace mxq {
namespace dev {

// ---- element formats ---------------------------------------------------------------------------

enum class In { BF16, F16, F32 };

template <In I>
struct InTraits;
template <>
struct InTraits<In::BF16> {
  using T = uint16_t;
  static constexpr int kVecs = 1;  // 16-byte vectors per 8 elements
  static __device__ __forceinline__ float to_f32(uint16_t h) { return __uint_as_float(uint32_t(h) << 16); }
};
template <>
struct InTraits<In::F16> {
  using T = uint16_t;
  static constexpr int kVecs = 1;
  static __device__ __forceinline__ float to_f32(uint16_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
  }
};
template <>
struct InTraits<In::F32> {
  using T = float;
  static constexpr int kVecs = 2;
  static __device__ __forceinline__ float to_f32(float f) { return f; }
};

// fp32 -> input dtype bits, RNE, NaN -> the canonical NaN the CPU reference writes (0x7FFF for the
// 16-bit types, 0x7FFFFFFF for fp32). Used for the SwiGLU product, which the contract rounds to the input dtype.
template <In I>
__device__ __forceinline__ uint32_t round_to_input_bits(float f) {
  if constexpr (I == In::F32) {
    return f != f ? 0x7FFFFFFFu : __float_as_uint(f);
  } else {
    if (f != f) return 0x7FFFu;
    uint16_t h;
    if constexpr (I == In::BF16) {
      asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    } else {
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    }
    return h;
  }
}

// ---- FP8 element formats -----------------------------------------------------------------------

template <Fp8 F>
struct Fp8Consts;
template <>
struct Fp8Consts<Fp8::E4M3> {
  static constexpr uint32_t kRcpBits = 0x3B124925u;  // fl32(1/448) = 0x1.24924ap-9
  static constexpr int kEmax = 8;
  static constexpr int kMbits = 3;
  static constexpr uint32_t kMaxCode = 0x7Eu;
};
template <>
struct Fp8Consts<Fp8::E5M2> {
  static constexpr uint32_t kRcpBits = 0x37924925u;  // fl32(1/57344) = 0x1.24924ap-16
  static constexpr int kEmax = 15;
  static constexpr int kMbits = 2;
  static constexpr uint32_t kMaxCode = 0x7Bu;
};

// max that propagates NaN (|x| inputs): the PROPAGATE policy's "any NaN in the block" detector.
__device__ __forceinline__ float fmax_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

// UE8M0 exponent of a block whose NaN-free absolute maximum is `amax` (cpu::scale_exponent).
template <Fp8 F>
__device__ __forceinline__ uint32_t scale_exponent(float amax, int mode) {
  using C = Fp8Consts<F>;
  const uint32_t a = __float_as_uint(amax) & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0xFFu;
  if (a == 0x7F800000u) return 0xFEu;
  if (mode == MXQ_SCALE_MODE_RCEIL) {
    const uint32_t b = __float_as_uint(__fmul_rn(__uint_as_float(a), __uint_as_float(C::kRcpBits)));
    if (b == 0x7F800000u) return 0xFEu;
    if (b == 0) return 0;
    uint32_t e = b >> 23;
    const uint32_t m = b & 0x7FFFFFu;
    if ((m != 0 && e != 0xFEu) && !(e == 0 && m <= 0x400000u)) e += 1;
    return e;
  }
  int32_t biased = static_cast<int32_t>(a >> 23);
  if (mode == MXQ_SCALE_MODE_CEIL) {
    biased += (a & 0x7FFFFFu) != 0;
  } else if (mode == MXQ_SCALE_MODE_EVEN) {
    biased = static_cast<int32_t>((a + (1u << (22 - C::kMbits))) >> 23);
  }
  int32_t unbiased = biased - 127 - C::kEmax;
  unbiased = unbiased < -127 ? -127 : unbiased > 127 ? 127 : unbiased;
  return static_cast<uint32_t>(unbiased + 127);
}

// The multiplier applied to the elements for scale byte E (cpu::scale_inverse).
__device__ __forceinline__ float scale_inverse(uint32_t e) {
  if (e == 0xFFu) return __uint_as_float(0x7FFFFFFFu);
  if (e == 0xFEu) return __uint_as_float(0x00400000u);
  return __uint_as_float((254u - e) << 23);
}

// Block exponent under a non-finite policy: `amax` ignores NaN; `pmax` is the NaN-propagating max
// (only read under PROPAGATE, where a NaN or an Inf anywhere in the block gives 0xFF).
template <Fp8 F, bool kPropagate>
__device__ __forceinline__ uint32_t block_exponent(float amax, float pmax, int mode) {
  if (kPropagate && !(pmax < __uint_as_float(0x7F800000u))) return 0xFFu;
  return scale_exponent<F>(amax, mode);
}

// ---- branch-free block exponent (the ring kernel, common/quant_ring.cuh) ---------------------------
//
// scale_exponent() spelled as straight-line integer code, for kernels that compute a scale per 32
// elements on their critical path (a branchy version costs ~35 instructions and several branch
// resolutions per block). Every mode is one formula on the bits x of |amax| * mul:
//   E = clamp((x + k(x)) >> 23, 0, 254)      (arithmetic shift)
//   RCEIL: mul = fl32(1/MAXN), k = 0x7FFFFF for normal x (round the exponent up unless the
//          mantissa is 0) and 0x3FFFFF for subnormal x (1 only above 2^-127); an infinite product
//          gives 0xFF, clamped to 0xFE; the clamp also keeps 0xFE for mantissas above 2^127.
//   FLOOR / CEIL / EVEN: mul = 1, k = K - (EMAX << 23) with K = 0, 0x7FFFFF (biased + (man != 0)),
//          2^(22 - mbits) (round to the element mantissa first); the clamp is the UE8M0 range.
// |amax| = +Inf gives 0xFE in every mode (a select: the non-RCEIL formula would give 255 - EMAX).
// Precondition: amax is not NaN (every caller's amax is a NaN-ignoring max starting from +0).
struct ExpRule {
  float mul;
  int32_t k_sub;   // x < 2^-126 (fp32 subnormal or zero)
  int32_t k_norm;  // otherwise
};

template <Fp8 F>
__device__ __forceinline__ ExpRule exp_rule(int mode) {
  using C = Fp8Consts<F>;
  ExpRule r;
  if (mode == MXQ_SCALE_MODE_RCEIL) {
    r.mul = __uint_as_float(C::kRcpBits);
    r.k_sub = 0x3FFFFF;
    r.k_norm = 0x7FFFFF;
  } else {
    const int32_t k = mode == MXQ_SCALE_MODE_CEIL   ? 0x7FFFFF
                      : mode == MXQ_SCALE_MODE_EVEN ? (1 << (22 - C::kMbits))
                                                    : 0;
    r.mul = 1.0f;
    r.k_sub = r.k_norm = k - (C::kEmax << 23);
  }
  return r;
}

// block_exponent() under the same policies, branch-free: `amax` NaN-free, `pmax` the NaN-propagating
// max (read only under PROPAGATE, where a NaN or an Inf in the block gives 0xFF).
template <bool kPropagate>
__device__ __forceinline__ uint32_t block_exponent_bf(float amax, float pmax, const ExpRule& r) {
  const int32_t x = __float_as_int(__fmul_rn(fabsf(amax), r.mul));
  int32_t e = (x + (x < 0x800000 ? r.k_sub : r.k_norm)) >> 23;
  e = e < 0 ? 0 : e > 254 ? 254 : e;
  if (fabsf(amax) == __uint_as_float(0x7F800000u)) e = 0xFE;
  if (kPropagate && !(pmax < __uint_as_float(0x7F800000u))) e = 0xFF;
  return static_cast<uint32_t>(e);
}

// scale_inverse() branch-free: 2^(127 - E) as fp32 bits (254 - E) << 23, which is 0 for E = 254,
// raised to the subnormal 2^-127 (0x00400000) by a max; E = 255 (PROPAGATE only) gives NaN.
template <bool kPropagate>
__device__ __forceinline__ float scale_inverse_bf(uint32_t e) {
  int32_t b = static_cast<int32_t>(0x7F000000u - e * 0x800000u);
  b = b > 0x00400000 ? b : 0x00400000;
  if (kPropagate && e == 0xFFu) b = 0x7FFFFFFF;
  return __int_as_float(b);
}

// The NaN fix of quantize4 below with fewer operations where the format allows. E4M3's only NaN
// codes are S.1111.111, so a byte is NaN exactly when its low 7 bits are all ones: (b & 0x7F) + 1
// sets bit 7 for those bytes only (no carry leaves a byte), and clearing that bit turns 0xFF into
// the contract's 0x7F and leaves 0x7F as it is. E5M2 keeps the general form.
template <Fp8 F>
__device__ __forceinline__ uint32_t fp8x4_canonical_nan(uint32_t w) {
  if constexpr (F == Fp8::E4M3) {
    const uint32_t t = (w & 0x7F7F7F7Fu) + 0x01010101u;
    uint32_t r;  // w & ~(t & 0x80808080) as one LOP3 (the compiler would spend two)
    asm("lop3.b32 %0, %1, %2, %3, 0x70;" : "=r"(r) : "r"(w), "r"(t), "r"(0x80808080u));
    return r;
  } else {
    constexpr uint32_t kBias = (0x7Fu - Fp8Consts<F>::kMaxCode) * 0x01010101u;
    const uint32_t nan_hi = ((w & 0x7F7F7F7Fu) + kBias) & 0x80808080u;
    return (w | (nan_hi - (nan_hi >> 7))) & ~nan_hi;
  }
}

// quantize4 with the cheaper NaN fix (bit-identical results).
template <Fp8 F>
__device__ __forceinline__ uint32_t quantize4_bf(float a, float b, float c, float d, float inv) {
  const uint32_t lo = f32x2_to_fp8x2_satfinite<F>(__fmul_rn(a, inv), __fmul_rn(b, inv));
  const uint32_t hi = f32x2_to_fp8x2_satfinite<F>(__fmul_rn(c, inv), __fmul_rn(d, inv));
  return fp8x4_canonical_nan<F>(lo | (hi << 16));
}

// Four values times `inv` to four FP8 codes (first value in the low byte): RN fp32 product, then
// cvt.rn.satfinite. Whatever NaN code the conversion emits becomes the contract's 0x7F: a byte whose
// magnitude exceeds the largest finite code can only be a NaN (satfinite never produces Inf).
template <Fp8 F>
__device__ __forceinline__ uint32_t quantize4(float a, float b, float c, float d, float inv) {
  const uint32_t lo = f32x2_to_fp8x2_satfinite<F>(__fmul_rn(a, inv), __fmul_rn(b, inv));
  const uint32_t hi = f32x2_to_fp8x2_satfinite<F>(__fmul_rn(c, inv), __fmul_rn(d, inv));
  const uint32_t w = lo | (hi << 16);
  constexpr uint32_t kBias = (0x7Fu - Fp8Consts<F>::kMaxCode) * 0x01010101u;
  const uint32_t nan_hi = ((w & 0x7F7F7F7Fu) + kBias) & 0x80808080u;  // 0x80 in each NaN byte
  return (w | (nan_hi - (nan_hi >> 7))) & ~nan_hi;                  // NaN bytes -> 0x7F
}

// ---- SwiGLU (cpu::silu, docs/NUMERICS.md "SwiGLU") -----------------------------------------------

// exp(t) for t <= 0 with the reference's exact operation sequence.
__device__ __forceinline__ float exp_nonpositive(float t) {
  if (t < -104.0f) return 0.0f;
  const float kLog2e = 0x1.715476p+0f;
  const float kLn2Hi = 0x1.62e430p-1f;
  const float kLn2Lo = -0x1.05c610p-29f;
  const float n = rintf(__fmul_rn(t, kLog2e));
  float r = __fmaf_rn(n, -kLn2Hi, t);
  r = __fmaf_rn(n, -kLn2Lo, r);
  float p = 0x1.a01a02p-13f;
  p = __fmaf_rn(p, r, 0x1.6c16c2p-10f);
  p = __fmaf_rn(p, r, 0x1.111112p-7f);
  p = __fmaf_rn(p, r, 0x1.555556p-5f);
  p = __fmaf_rn(p, r, 0x1.555556p-3f);
  p = __fmaf_rn(p, r, 0.5f);
  p = __fmaf_rn(p, r, 1.0f);
  p = __fmaf_rn(p, r, 1.0f);
  const int ni = static_cast<int>(n);
  if (ni >= -126) return __fmul_rn(p, __uint_as_float(uint32_t(ni + 127) << 23));
  return __fmul_rn(__fmul_rn(p, __uint_as_float(uint32_t(ni + 64 + 127) << 23)),
                   __uint_as_float(uint32_t(-64 + 127) << 23));
}

__device__ __forceinline__ float silu(float g) {
  if (g != g) return __uint_as_float(0x7FFFFFFFu);
  if (g == -__uint_as_float(0x7F800000u)) return -0.0f;
  const float e = exp_nonpositive(-fabsf(g));
  const float d = __fadd_rn(1.0f, e);
  if (!signbit(g)) return __fdiv_rn(g, d);
  return __fdiv_rn(__fmul_rn(g, e), d);
}

// silu(gate) * up in fp32, rounded to the input dtype (the value that is quantized).
template <In I>
__device__ __forceinline__ uint32_t swiglu_bits(float gate, float up) {
  return round_to_input_bits<I>(__fmul_rn(silu(gate), up));
}

}  // namespace dev
}  // namespace mxq
