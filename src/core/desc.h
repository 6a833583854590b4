// Plan descriptors: the validated, immutable description of one operation that a finalized plan
// holds and every backend (CPU reference, CUDA kernels) executes. The C API fills these from
// attributes (src/core/attributes.cpp), validate_*() in src/core/validate.cpp checks them at
// Finalize, and backends receive them together with the bound execution arguments.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mxq/mxq.h"

namespace mxq {

struct QuantizeDesc {
  mxqDataType_t in_dtype = MXQ_DTYPE_BF16;
  mxqDataType_t out_dtype = MXQ_DTYPE_E4M3;
  mxqScaleMode_t scale_mode = MXQ_SCALE_MODE_RCEIL;
  mxqNonfinitePolicy_t nonfinite = MXQ_NONFINITE_TE_COMPATIBLE;
  int32_t direction = MXQ_QUANTIZE_ROWWISE;  // bit mask of mxqQuantizeDirection_t
  bool colwise_transposed = true;
  mxqScaleLayout_t scale_layout = MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  bool block_2d = false;
  int64_t rows = 0;            // R
  int64_t cols = 0;            // K (output columns; SwiGLU input has 2K)
  int64_t batch = 1;           // L
  int64_t in_ld = 0;           // input row stride in elements (resolved at finalize)
  int64_t in_batch_stride = 0; // input batch stride in elements (resolved at finalize)
  mxqGrouping_t grouping = MXQ_GROUPING_NONE;
  int64_t num_groups = 0;
  mxqDataType_t offsets_dtype = MXQ_DTYPE_INT32;
  mxqFusion_t fusion = MXQ_FUSION_NONE;

  bool rowwise() const { return (direction & MXQ_QUANTIZE_ROWWISE) != 0; }
  bool colwise() const { return (direction & MXQ_QUANTIZE_COLUMNWISE) != 0; }
  int64_t in_cols() const { return fusion == MXQ_FUSION_SWIGLU ? 2 * cols : cols; }
};

struct DequantizeDesc {
  mxqDataType_t in_dtype = MXQ_DTYPE_E4M3;
  mxqDataType_t out_dtype = MXQ_DTYPE_BF16;
  int32_t direction = MXQ_QUANTIZE_ROWWISE;  // ROWWISE or COLUMNWISE (not both)
  bool colwise_transposed = true;
  mxqScaleLayout_t scale_layout = MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t batch = 1;
  int64_t out_ld = 0;          // resolved at finalize
  mxqGrouping_t grouping = MXQ_GROUPING_NONE;
  int64_t num_groups = 0;
  mxqDataType_t offsets_dtype = MXQ_DTYPE_INT32;
};

struct GemmDesc {
  mxqGemmGrouping_t grouping = MXQ_GEMM_GROUPING_NONE;
  int64_t m = 0, n = 0, k = 0;
  int64_t num_groups = 0;      // resolved: 1 for GROUPING_NONE
  int64_t batch = 1;
  mxqDataType_t a_dtype = MXQ_DTYPE_E4M3;
  mxqDataType_t b_dtype = MXQ_DTYPE_E4M3;
  mxqDataType_t d_dtype = MXQ_DTYPE_BF16;
  mxqScaleLayout_t scale_layout = MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  float alpha = 1.0f;
  bool accumulate = false;
  mxqDataType_t offsets_dtype = MXQ_DTYPE_INT32;
  bool b_block_2d = false;
  int64_t workspace_limit = INT64_MAX;  // MXQ_GEMM_ATTR_WORKSPACE_LIMIT
};

struct AttentionDesc {
  mxqAttentionDirection_t direction = MXQ_ATTN_FORWARD;
  int64_t batch = 0, heads_q = 0, heads_kv = 0, seqlen_q = 0, seqlen_kv = 0, head_dim = 0;
  mxqAttentionLayout_t layout = MXQ_ATTN_LAYOUT_BHSD;
  mxqAttentionMask_t mask = MXQ_ATTN_MASK_NONE;
  float softmax_scale = 0.0f;  // resolved at finalize (default 1/sqrt(D))
  bool softmax_scale_set = false;
  float p_scale = 256.0f;
  mxqScaleLayout_t scale_layout = MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  bool varlen = false;
  bool deterministic = false;
  mxqDataType_t qkv_dtype = MXQ_DTYPE_E4M3;
};

// Execution arguments bound to slots. Index by mxqArgSlot_t value.
struct ExecArgs {
  static constexpr int kMaxSlot = 64;
  void* ptr[kMaxSlot] = {};
  void* get(mxqArgSlot_t s) const { return ptr[s]; }
  template <typename T>
  T* as(mxqArgSlot_t s) const { return static_cast<T*>(ptr[s]); }
};

}  // namespace mxq
