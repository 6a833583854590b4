// CPU reference backend: the oracles. Written for clarity, not speed: each function follows
// DESIGN / docs/NUMERICS.md step by step. Host memory. Throws mxq::Error on invalid data-dependent
// input (e.g. group offsets that decrease or overrun: MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS).
#pragma once

#include <cstdint>
#include <vector>

#include "core/desc.h"

namespace mxq {
namespace cpu {

// ---- scalar numerics (bit-exact contract, docs/NUMERICS.md) ----------------------------------------
float bf16_to_f32(uint16_t h);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16_rne(float f);   // NaN stays NaN (quiet)
uint16_t f32_to_f16_rne(float f);
float fp8_to_f32(uint8_t q, mxqDataType_t fp8);
uint8_t f32_to_fp8_satfinite(float x, mxqDataType_t fp8);  // cvt.rn.satfinite semantics
// UE8M0 exponent byte of a block with absolute max `amax` (already NaN-filtered per policy).
uint8_t scale_exponent(float amax, mxqDataType_t fp8, mxqScaleMode_t mode);
// Multiplier applied to the elements for a scale byte E (the "inv" of docs/NUMERICS.md).
float scale_inverse(uint8_t e);
// silu(g) of the SwiGLU fusion: the fixed fp32 operation sequence of docs/NUMERICS.md (GPU-reproducible).
float silu(float g);

// ---- operations --------------------------------------------------------------------------------
void quantize(const QuantizeDesc& d, const ExecArgs& a);
void dequantize(const DequantizeDesc& d, const ExecArgs& a);
void grouped_gemm(const GemmDesc& d, const ExecArgs& a);
void attention_forward(const AttentionDesc& d, const ExecArgs& a);
void attention_backward(const AttentionDesc& d, const ExecArgs& a);
void swizzle_scales(bool to_swizzled, int64_t batch, int64_t rows, int64_t scale_cols, int64_t linear_ld,
                    const uint8_t* src, uint8_t* dst);

// Reads group end offsets (int32 or int64), validates them against `total` (non-decreasing, >= 0,
// last <= total... see docs/LAYOUTS.md) and returns them as int64 (size G).
std::vector<int64_t> read_group_offsets(const void* p, mxqDataType_t dtype, int64_t groups, int64_t total);

}  // namespace cpu
}  // namespace mxq
