// Device helpers both MXFP8 attention kernels (attention_fwd.cu, attention_bwd.cu) share: where a
// sequence's rows are, scale offsets of tensors quantized along D, the exact E4M3 -> bf16
// dequantization, the recipe's P quantization, and the SFU exponent. The one place these are written.
#pragma once

#include <cstdint>

#include "common/fp8.cuh"
#include "core/layout.h"
#include "sm90/gemm_bf16_convert.cuh"

namespace mxq {
namespace attn {

// The rows of one (batch, head) sequence: memory row of position s is base + s * step, s < len.
struct SeqRows {
  int64_t base, step, len;
  __device__ __forceinline__ int64_t row(int64_t s) const { return base + s * step; }
};

// BHSD: (b*H + h)*S + s; BSHD: (start + s)*H + h with start = b*S, or cu[b] with varlen. Varlen
// offsets are clamped (start >= 0, 0 <= len <= S_max): the GPU cannot report malformed cu_seqlens
// without a host synchronization, and no index then leaves the sequence's rows.
__device__ __forceinline__ SeqRows seq_rows(bool bshd, const int32_t* cu, int64_t smax, int64_t heads, int64_t b,
                                            int64_t h) {
  int64_t start = b * smax, len = smax;
  if (cu) {
    const int64_t c0 = cu[b], c1 = cu[b + 1];
    start = c0 < 0 ? 0 : c0;
    len = c1 - start;
    len = len < 0 ? 0 : len > smax ? smax : len;
  }
  if (bshd) return {start * heads + h, heads, len};
  return {(b * heads + h) * smax, 1, len};
}

// Scale byte offset of (memory row, 32-block c) of a tensor quantized along D, whose scale rows
// have ld columns (the swizzle's Cpad, or the LINEAR row length).
__device__ __forceinline__ int64_t along_d_scale_offset(bool swizzled, int64_t row, int64_t c, int64_t ld) {
  return swizzled ? layout::swizzled_offset(row, c, ld) : row * ld + c;
}

// Two E4M3 codes (low byte first) times their scale multipliers -> a bf16 pair: exact while the
// product is a bf16 normal or zero (E4M3 has 3 mantissa bits); NaN stays NaN.
__device__ __forceinline__ uint32_t e4m3x2_to_bf16x2(uint32_t pair, float ma, float mb) {
  float a, b;
  dev::fp8x2_to_f32x2<dev::Fp8::E4M3>(static_cast<uint16_t>(pair), a, b);
  return dev::f32x2_to_bf16x2(__fmul_rn(a, ma), __fmul_rn(b, mb));
}

// The recipe's P quantization of a pair already multiplied by p_scale: E4M3 (RNE, satfinite),
// returned as the exact bf16 pair of those E4M3 values.
__device__ __forceinline__ uint32_t e4m3_round_bf16x2(float a, float b) {
  float qa, qb;
  dev::fp8x2_to_f32x2<dev::Fp8::E4M3>(dev::f32x2_to_fp8x2_satfinite<dev::Fp8::E4M3>(a, b), qa, qb);
  return dev::f32x2_to_bf16x2(qa, qb);  // no multiply: __fmul_rn by 1 would not be folded away
}

// The forward's P quantization without the fp32 round trip: a, b = P * p_scale (>= 0, or NaN) ->
// E4M3 (RNE, satfinite) -> f16x2 (exact: every E4M3 value is an f16 normal) -> bf16x2. An f16 code
// of an E4M3 value shifted right by 3 is the bf16 code of the value times 2^-112 (the f16 exponent
// field lands in bf16's, the 3 mantissa bits at the top of bf16's 7; the upper half's low 3 bits
// are zero, so nothing crosses into the lower half), and one bf16x2 multiply by 2^112 is exact.
// 4 instructions per pair instead of 5 (e4m3_round_bf16x2). A NaN comes out finite (and may
// spoil its pair's other half): only for callers where a NaN P also reaches the result another way
// (the forward's row sum, which is then NaN and makes the row's O and LSE NaN, as before).
// Checked exhaustively against e4m3_round_bf16x2 over every float in [0, 512) on an H100.
__device__ __forceinline__ uint32_t p_e4m3_bf16x2(float a, float b) {
  const uint32_t q = dev::f32x2_to_fp8x2_satfinite<dev::Fp8::E4M3>(a, b);
  uint32_t h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<uint16_t>(q)));
  return sm90gemm::mul_bf16x2(h2 >> 3, ((127u + 112u) << 7) * 0x00010001u);
}

// 2^x by the SFU (ex2.approx, relative error ~2^-22): ex2 keeps subnormal results, ex2_ftz flushes
// them (for softmax numerators that are quantized after a p_scale factor anyway).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float ex2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The FP8 paths (forward kF8, backward kF8): 16 E4M3 values times f = 2^-k (k >= 0: a block's scale over its row's,
// tile's or column's largest) rounded back to E4M3 (RNE, satfinite): through f16, where the product
// is exact for k <= 15 (E4M3's smallest step 2^-9 times 2^-15 is f16's smallest), so one rounding;
// NaN stays NaN. f = 0 (a row past a sequence's end, whose scales read as 0) gives zeros.
__device__ __forceinline__ uint32_t e4m3x4_rescale(uint32_t w, uint32_t f2) {
  uint32_t lo, hi;
  asm("{\n.reg .b16 a, b;\nmov.b32 {a, b}, %2;\n"
      "cvt.rn.f16x2.e4m3x2 %0, a;\ncvt.rn.f16x2.e4m3x2 %1, b;\n}\n"
      : "=r"(lo), "=r"(hi) : "r"(w));
  asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(lo) : "r"(f2));
  asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(hi) : "r"(f2));
  uint32_t out;
  asm("{\n.reg .b16 a, b;\ncvt.rn.satfinite.e4m3x2.f16x2 a, %1;\ncvt.rn.satfinite.e4m3x2.f16x2 b, %2;\n"
      "mov.b32 %0, {a, b};\n}\n"
      : "=r"(out) : "r"(lo), "r"(hi));
  return out;
}
__device__ __forceinline__ uint4 e4m3x16_rescale(const uint4& raw, float f) {
  uint32_t f2;
  asm("{\n.reg .b16 h;\ncvt.rn.f16.f32 h, %1;\nmov.b32 %0, {h, h};\n}\n" : "=r"(f2) : "f"(f));
  return make_uint4(e4m3x4_rescale(raw.x, f2), e4m3x4_rescale(raw.y, f2), e4m3x4_rescale(raw.z, f2),
                    e4m3x4_rescale(raw.w, f2));
}
// The factor of a block with scale sc in a row whose largest scale is mx (both powers of two or 0):
// sc times r = f8_rcp(mx), which is exact (1 / 2^k is a float for every UE8M0 scale), so the product
// is the quotient sc / mx rounded once, as a division would give it; r = 0 for mx = 0 or NaN.
__device__ __forceinline__ float f8_rcp(float mx) { return mx > 0.0f ? __frcp_rn(mx) : 0.0f; }
__device__ __forceinline__ float f8_factor(float sc, float r) { return sc * r; }
// The rescale's error bound (docs/NUMERICS.md), per 16 rescaled values: bit 0 set when one of them
// is at least 4 in magnitude (E4M3 code 0x48 or above: byte + 0x38 carries into bit 7), bit 1 when a
// raw value is nonzero. A 32-block (two such chunks, their codes ORed) that was shifted (factor < 1)
// is accepted when it is all zeros or its largest magnitude after the shift is at least 4, so the
// rounding of the values shifted below E4M3's normal range (at most 2^-10) stays within 2^-12 of the
// block's largest value; else the call's flag goes up and the exact kernel redoes the call. A
// quantizer's block (largest magnitude >= 256) passes for shifts up to 2^-6.
__device__ __forceinline__ uint32_t f8_chunk_code(const uint4& raw, const uint4& o) {
  constexpr uint32_t kM = 0x7F7F7F7Fu, kA = 0x38383838u;
  const uint32_t nz = (raw.x | raw.y | raw.z | raw.w) & kM;
  const uint32_t big = ((o.x & kM) + kA) | ((o.y & kM) + kA) | ((o.z & kM) + kA) | ((o.w & kM) + kA);
  return ((big & 0x80808080u) != 0u ? 1u : 0u) | (nz != 0u ? 2u : 0u);
}
__device__ __forceinline__ bool f8_block_bad(uint32_t code, bool shifted) { return shifted && code == 2u; }

}  // namespace attn
}  // namespace mxq
