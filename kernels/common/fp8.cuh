// Device-side numeric conversions of the MXFP8 contract (docs/NUMERICS.md), written once so every
// kernel rounds the same way. Hardware cvt instructions are used where their semantics are exactly
// the contract's (fp8 <-> f16/f32 need sm_89+, bf16x2 packing sm_80+; every kernel here targets
// sm_90 or later). Nothing here may be compiled with --use_fast_math / -ftz=true: dequantized values
// and their products with 2^-127 are routinely fp32 subnormals and must not be flushed.
#pragma once

#include <cstdint>

namespace mxq {
namespace dev {

enum class Fp8 { E4M3, E5M2 };
enum class Out { BF16, F16, F32 };

template <Out O>
struct OutTraits;
template <>
struct OutTraits<Out::BF16> {
  using Storage = uint16_t;
};
template <>
struct OutTraits<Out::F16> {
  using Storage = uint16_t;
};
template <>
struct OutTraits<Out::F32> {
  using Storage = float;
};

// Two fp8 values (low byte = first element) to two floats, exactly. fp8 -> f16 is exact for both
// formats (E4M3 subnormals are 2^-9 multiples, far above f16's 2^-24), and f16 -> f32 is exact.
// E4M3 NaN (S.1111.111) and E5M2 NaN/Inf keep their class.
template <Fp8 F>
__device__ __forceinline__ void fp8x2_to_f32x2(uint16_t pair, float& lo, float& hi) {
  uint32_t h2;
  if constexpr (F == Fp8::E4M3) {
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(pair));
  } else {
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h2) : "h"(pair));
  }
  const uint16_t l16 = static_cast<uint16_t>(h2 & 0xFFFFu), h16 = static_cast<uint16_t>(h2 >> 16);
  asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"(l16));
  asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"(h16));
}

template <Fp8 F>
__device__ __forceinline__ float fp8_to_f32(uint8_t q) {
  float lo, hi;
  fp8x2_to_f32x2<F>(static_cast<uint16_t>(q), lo, hi);
  return lo;
}

// Two floats to two fp8 with cvt.rn.satfinite (the quantizer's rounding: RNE, |x| > MAXN -> ±MAXN,
// NaN -> NaN). Returns the pair with `lo` in the low byte.
template <Fp8 F>
__device__ __forceinline__ uint16_t f32x2_to_fp8x2_satfinite(float lo, float hi) {
  uint16_t r;
  if constexpr (F == Fp8::E4M3) {
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  }
  return r;
}

// UE8M0 scale byte -> the fp32 multiplier 2^(E-127) a dequantizer applies. E = 0 is the subnormal
// 2^-127 (exactly representable, so x * scale is still one correctly rounded product); E = 255 is NaN.
__device__ __forceinline__ float ue8m0_to_f32(uint8_t e) {
  const uint32_t bits = e == 0 ? 0x00400000u : e == 255 ? 0x7FC00000u : static_cast<uint32_t>(e) << 23;
  return __uint_as_float(bits);
}

// The output conversions: RNE, overflow to ±Inf, subnormals kept. A NaN comes out as the hardware's
// canonical NaN of the output type: NaN payloads and signs are not part of the contract, only
// NaN-ness. The CPU reference stores the same canonical NaNs, so the backends agree bit for bit.
__device__ __forceinline__ uint32_t f32x2_to_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ uint32_t f32x2_to_f16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Packs two dequantized floats into the output type: one 32-bit word for 16-bit outputs.
template <Out O>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (O == Out::BF16) return f32x2_to_bf16x2(lo, hi);
  else return f32x2_to_f16x2(lo, hi);
}

// One element, for tails and unaligned paths.
template <Out O>
__device__ __forceinline__ void store_one(typename OutTraits<O>::Storage* p, float v) {
  if constexpr (O == Out::F32) {
    *p = v;
  } else {
    *p = static_cast<uint16_t>(pack2<O>(v, 0.0f) & 0xFFFFu);
  }
}

}  // namespace dev
}  // namespace mxq
