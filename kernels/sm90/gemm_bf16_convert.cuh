// The exact FP8 -> bf16 conversion of the sm_90a BF16-path GEMM kernels: an E4M3 / E5M2 value times
// its UE8M0 scale 2^k is a bf16 value (3 or 2 mantissa bits, 8-bit exponent), so converting each
// operand element once and running bf16 wgmma with fp32 accumulation gives exact products.
//
// Fast conversion (2 instructions per element, no table, no cvt unit): for a word of four FP8 bytes,
// PRMT spreads bytes (0, 2) and (1, 3) into sign-extended 16-bit lanes; a shift and a mask leave
// sign | exponent | mantissa in bf16 position, which is the value times 2^-120 (E4M3; E5M2: 2^-112),
// subnormals included; one bf16x2 multiply by 2^(E-127+120) applies the scale, exactly (the result
// has <= 4 significant bits) unless it leaves bf16's range. The pairs (0, 2) / (1, 3) permute K
// inside each 4-byte word; A and B use the same permutation, so the dot products are unchanged.
// Words holding an FP8 NaN/Inf, or scales the single multiply cannot reach (E > 134 for E4M3, > 142
// for E5M2, E = 255 NaN), take the exact per-element path (fp8 -> f32, times 2^(E-127), -> bf16):
// NaN stays NaN, and results below bf16's subnormal range (|x| < 2^-133) round, where fp32 output
// would be subnormal anyway.
#pragma once

#include <cstdint>

#include "common/fp8.cuh"
#include "ptx/wgmma.cuh"  // Fp8Kind

namespace mxq {
namespace sm90gemm {

using ptx::Fp8Kind;

template <Fp8Kind K>
struct Fp8Bits {
  static constexpr bool kE4M3 = K == Fp8Kind::E4M3;
  static constexpr uint32_t kShift = kE4M3 ? 4 : 5;
  static constexpr uint32_t kMask = kE4M3 ? 0x87F087F0u : 0x8FE08FE0u;
  static constexpr int kBias = kE4M3 ? 120 : 112;       // shifted bits = value * 2^-kBias
  static constexpr int kMaxFastE = 254 - kBias;          // multiplier 2^(E-127+kBias) still a bf16 normal
  static constexpr uint32_t kSpecialMask = kE4M3 ? 0x7F7F7F7Fu : 0x7C7C7C7Cu;  // NaN (E4M3), Inf/NaN (E5M2)
  static constexpr uint32_t kSpecialAdd = kE4M3 ? 0x01010101u : 0x04040404u;
  static constexpr dev::Fp8 kDev = kE4M3 ? dev::Fp8::E4M3 : dev::Fp8::E5M2;
};

__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t sel) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(0u), "r"(sel));
  return d;
}
__device__ __forceinline__ uint32_t mul_bf16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// Bit 7 of some byte set iff the word holds an FP8 special (NaN; E5M2 also Inf).
template <Fp8Kind K>
__device__ __forceinline__ uint32_t special_bits(uint32_t w) {
  return (w & Fp8Bits<K>::kSpecialMask) + Fp8Bits<K>::kSpecialAdd;
}

// A row's scale for one 32-block: the bf16x2 fast multiplier (0 when the block is masked), the
// exact fp32 multiplier for the slow path, and whether the fast one cannot represent it.
struct Scale {
  uint32_t fast;
  float exact;
  bool slow;
};
template <Fp8Kind K>
__device__ __forceinline__ Scale make_scale(uint32_t e, bool valid) {
  Scale s;
  s.fast = valid ? ((e + Fp8Bits<K>::kBias) << 7) * 0x00010001u : 0u;
  s.exact = valid ? dev::ue8m0_to_f32(static_cast<uint8_t>(e)) : 0.0f;
  s.slow = valid && static_cast<int>(e) > Fp8Bits<K>::kMaxFastE;
  return s;
}

// Word w of FP8 bytes (b0..b3) -> bf16x2 (b0, b2) * s in `lo`, (b1, b3) * s in `hi`.
template <Fp8Kind K>
__device__ __forceinline__ void cvt_fast(uint32_t w, uint32_t s, uint32_t& lo, uint32_t& hi) {
  using B = Fp8Bits<K>;
  lo = mul_bf16x2((prmt(w, 0xA280u) << B::kShift) & B::kMask, s);
  hi = mul_bf16x2((prmt(w, 0xB391u) << B::kShift) & B::kMask, s);
}
// Two FP8 codes in the low half of `pair` (the first in the low byte, as cvt.*x2 writes them) ->
// bf16x2 (b0, b1) * s, in order: the same arithmetic as cvt_fast without the K permutation, for
// values that go straight into A fragments. The caller handles NaN codes and scales past kMaxFastE.
template <Fp8Kind K>
__device__ __forceinline__ uint32_t cvt_fast_pair(uint32_t pair, uint32_t s) {
  using B = Fp8Bits<K>;
  return mul_bf16x2((prmt(pair, 0x9180u) << B::kShift) & B::kMask, s);
}
template <Fp8Kind K>
__device__ __forceinline__ void cvt_exact(uint32_t w, float s, uint32_t& lo, uint32_t& hi) {
  constexpr dev::Fp8 F = Fp8Bits<K>::kDev;
  const float v0 = dev::fp8_to_f32<F>(static_cast<uint8_t>(w)) * s;
  const float v1 = dev::fp8_to_f32<F>(static_cast<uint8_t>(w >> 8)) * s;
  const float v2 = dev::fp8_to_f32<F>(static_cast<uint8_t>(w >> 16)) * s;
  const float v3 = dev::fp8_to_f32<F>(static_cast<uint8_t>(w >> 24)) * s;
  lo = dev::f32x2_to_bf16x2(v0, v2);
  hi = dev::f32x2_to_bf16x2(v1, v3);
}

// K step j (16 bf16 columns) of a converted 64-wide stage row: 16-byte unit 2j holds the `lo` halves
// of word j of the stage's four 16-byte FP8 chunks, unit 2j + 1 their `hi` halves -- the K order of
// the A fragments (the B pre-kernels of gemm_mxfp8_tma.cu write the same unit order). Units are
// XORed with `swz` (row & 7 under the 128-byte swizzle of a bf16 slot).
__device__ __forceinline__ void store_kstep(uint8_t* row, uint32_t swz, int j, const uint32_t* lo, const uint32_t* hi) {
  *reinterpret_cast<uint4*>(row + (((2 * j) ^ swz) << 4)) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
  *reinterpret_cast<uint4*>(row + (((2 * j + 1) ^ swz) << 4)) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
}

__device__ __forceinline__ void prefetch_l1(const void* p) {
  asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
}


// Two-scale forms, for a word whose bytes straddle a 32-block boundary (K-grouped ranges that start
// inside a 16-byte chunk): byte b of the word uses the `hi` block's scale when its bit b of `sel` is
// set, else the `lo` block's. The fast form takes the two blocks' 16-bit bf16 multipliers.
template <Fp8Kind K>
__device__ __forceinline__ void cvt_fast_sel(uint32_t w, uint32_t m_lo, uint32_t m_hi, uint32_t sel, uint32_t& lo,
                                             uint32_t& hi) {
  using B = Fp8Bits<K>;
  const uint32_t s02 = ((sel & 4u) ? m_hi : m_lo) << 16 | ((sel & 1u) ? m_hi : m_lo);
  const uint32_t s13 = ((sel & 8u) ? m_hi : m_lo) << 16 | ((sel & 2u) ? m_hi : m_lo);
  lo = mul_bf16x2((prmt(w, 0xA280u) << B::kShift) & B::kMask, s02);
  hi = mul_bf16x2((prmt(w, 0xB391u) << B::kShift) & B::kMask, s13);
}
template <Fp8Kind K>
__device__ __forceinline__ void cvt_exact_sel(uint32_t w, float s_lo, float s_hi, uint32_t sel, uint32_t& lo,
                                              uint32_t& hi) {
  constexpr dev::Fp8 F = Fp8Bits<K>::kDev;
  float v[4];
#pragma unroll
  for (int b = 0; b < 4; ++b)
    v[b] = dev::fp8_to_f32<F>(static_cast<uint8_t>(w >> (8 * b))) * (((sel >> b) & 1u) ? s_hi : s_lo);
  lo = dev::f32x2_to_bf16x2(v[0], v[2]);
  hi = dev::f32x2_to_bf16x2(v[1], v[3]);
}
}  // namespace sm90gemm
}  // namespace mxq
