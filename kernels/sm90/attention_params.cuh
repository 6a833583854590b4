// Parameters of the sm_90a MXFP8 attention forward kernel (kernels/sm90/attention_fwd.cu): a plain
// struct passed by value from the host launcher (src/cuda/op_attention_fwd.cpp, compiled by the
// host compiler, so no CUDA constructs here). The launcher resolves every extent and stride from
// the plan; the kernel indexes with the formulas of core/layout.h.
#pragma once

#include <cstdint>

namespace mxq {

struct AttnFwdSm90Params {
  const uint8_t* q;          // FP8, quantized along D, [rows, D] in the plan's layout
  const uint8_t* k;          // FP8, quantized along D
  const uint8_t* v;          // FP8, quantized along S_kv (data not transposed)
  const uint8_t* q_scales;   // rowwise scales of Q seen as 2D [rows, D]
  const uint8_t* k_scales;
  const uint8_t* v_scales;   // batched [B*Hkv] columnwise scales (r := d, c := s/32)
  uint16_t* o;               // bf16, Q's layout
  float* lse;                // fp32 [B, Hq, Sq_max]
  const int32_t* cu_q;       // varlen: int32 [B + 1] sequence starts, else null
  const int32_t* cu_kv;
  int32_t batch, heads_q, heads_kv, seqlen_q, seqlen_kv;  // sequence lengths: the maxima
  int32_t bshd;              // layout BSHD (else BHSD); varlen implies BSHD
  int32_t mask;              // mxqAttentionMask_t
  int32_t swizzled;          // scale layout SWIZZLED_128x4 (else LINEAR)
  int32_t d_scale_ld;        // scale columns per row along D: Cpad (swizzled) or ceil(D/32)
  int32_t s_scale_cols;      // ceil(Skv_max/32): V's scale columns along S per (b, h)
  int32_t s_scale_ld;        // swizzled: round_up(s_scale_cols, 4); LINEAR: s_scale_cols
  int64_t v_scale_entry;     // bytes of one (b, h) entry of V's scales
  float scale_log2;          // softmax_scale * log2(e)
  float p_scale;             // P is quantized as fp8(P * p_scale) / p_scale
};

// Geometry shared with the launcher: a CTA owns 128 query rows (two warpgroups of 64) of one
// (batch, head) and walks 128-key tiles; K and V tiles are double-buffered as bf16 in shared memory.
constexpr int kAttnSm90Threads = 256;
constexpr int kAttnSm90TileQ = 128;
constexpr int kAttnSm90TileKV = 128;

// Dynamic shared memory for head dim D: 1 KiB alignment slack, Q, and two K and two V tiles, each
// 128 x D bf16.
constexpr int64_t attn_sm90_smem_bytes(int64_t d) { return 1024 + 5 * 128 * d * 2; }

}  // namespace mxq
