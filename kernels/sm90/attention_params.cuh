// Parameters of the sm_90a MXFP8 attention forward kernel (kernels/sm90/attention_fwd.cu): a plain
// struct passed by value from the host launcher (src/cuda/op_attention_fwd.cpp, compiled by the
// host compiler, so no CUDA constructs here). The launcher resolves every extent and stride from
// the plan; the kernel indexes with the formulas of core/layout.h.
#pragma once

#include <cstdint>

namespace mxq {

struct alignas(64) AttnFwdSm90Params {
  // TMA descriptors (CUtensorMap, 128 bytes each) of the bf16 K and V workspace [B*Hkv*kv_pad, D],
  // boxes of 128 rows x 64 columns with the 128-byte swizzle. Filled by the launcher per Execute.
  alignas(64) uint8_t tmap_k[128];
  alignas(64) uint8_t tmap_v[128];
  // The FP8 kernel (_f8, D = 128): K' (E4M3 [B*Hkv*kv_pad, 128] in ws_k's bytes, one 128 x 128 box
  // with the 128-byte swizzle) and each unit's factor ws_kf[4 u] (fp32, 16 bytes per unit, after K');
  // V'^T (E4M3, per unit 128 rows d of 128 keys, in ws_v's bytes; one 128 x 128 box) and each
  // (entry, d)'s largest V scale over the sequence (ws_ev, fp32 [B*Hkv, D], after the unit factors).
  alignas(64) uint8_t tmap_k8[128];
  float* ws_kf;
  alignas(64) uint8_t tmap_v8[128];
  float* ws_ev;
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
  uint16_t* ws_k;            // workspace: K and V dequantized to bf16, [B*Hkv, kv_pad, D] each, rows
  uint16_t* ws_v;            //   at or past a sequence's length zero
  int32_t kv_pad;            // round_up(Skv_max, 128)
  float scale_log2;          // softmax_scale * log2(e)
  float p_scale;             // P is quantized as fp8(P * p_scale) / p_scale
  float log2_p_scale;        // log2(p_scale): P * p_scale is computed as exp2(x + log2(p_scale))
  // In-kernel conversion (the _inl kernels): a state word per unit (128 keys of K and V of one
  // entry; unit = entry * kv_pad / 128 + tile) and after them two counters (units taken ahead, and
  // the persistent kernel's work items), in the workspace.
  uint32_t* tile_state;
  int32_t n_units;           // B * Hkv * kv_pad / 128
  int32_t quota;             // units each CTA's converter warps take from the counter at most (per item taken)
  // The persistent kernel's item order (sec_map in attention_fwd.cu): sections of sec_heads (batch,
  // head) pairs, then one last section of tail_heads pairs (0: none), query block outer within a
  // section; conv_sec: the converters' unit counter follows the same sections over the KV entries
  // (sec_heads and tail_heads then multiples of Hq / Hkv).
  int32_t sec_heads;
  int32_t tail_heads;
  int32_t conv_sec;
  // The FP8 path (_f8): a word after the two counters that the kernel sets when an operand's rescale
  // would exceed its error bound (docs/NUMERICS.md); then a second set of n_units + 2 state words and
  // counters for the exact kernel that follows it with gate != 0 and runs only if the flag is set
  // (attn_sm90_f8_flag_word, attn_sm90_exact_state_word).
  uint32_t* f8_flag;
  int32_t gate;
};

// Geometry shared with the launcher: a CTA owns 128 query rows of one (batch, head): a producer
// warpgroup issuing TMA loads and two math warpgroups of 64 rows each, walking 128-key tiles that are
// double-buffered as bf16 in shared memory. The prepass converts K and V with 256-thread blocks.
constexpr int kAttnSm90Threads = 384;
constexpr int kAttnSm90PrepThreads = 256;
constexpr int kAttnSm90TileQ = 128;
constexpr int kAttnSm90TileKV = 128;
// The D = 64 default kernel (mxq_attn_fwd_sm90_d64): three math warpgroups, 192 query rows per CTA.
constexpr int kAttnSm90Threads3 = 512;
constexpr int kAttnSm90TileQ3 = 192;

// Keys per K/V tile of the main kernel: 128, or 64 at D = 192 and 256 (O's accumulator leaves room
// for half as many scores per thread). The workspace stays padded to 128 keys either way.
constexpr int attn_sm90_tile_kv(int64_t d) { return d > 128 ? 64 : kAttnSm90TileKV; }
// The head dims the sm_90a forward kernels are built for.
constexpr bool attn_sm90_fwd_head_dim(int64_t d) { return d == 64 || d == 128 || d == 192 || d == 256; }

// Dynamic shared memory for head dim D: 1 KiB alignment slack, the Q tile (rows_q x D bf16: 128, or
// kAttnSm90TileQ3 for the three-warpgroup kernel), two K and two V tiles (each attn_sm90_tile_kv(D)
// x D bf16) and the pipeline's 8 mbarriers.
constexpr int64_t attn_sm90_smem_bytes(int64_t d, int64_t rows_q = kAttnSm90TileQ) {
  return 1024 + (rows_q + 4 * attn_sm90_tile_kv(d)) * d * 2 + 8 * 8;
}
// The in-kernel-conversion kernels (_inl): 128 bytes of barriers and slots, then the converters'
// staging area (the unit's FP8 K and V rows, K's and V's scales as floats).
constexpr int64_t attn_sm90_smem_bytes_inl(int64_t d) {
  return 1024 + 5 * 128 * d * 2 + 128 + 2 * 128 * d + 4 * (128 * d / 32) + 4 * 4 * d + 16;
}
// The 32-bit words after the K / V workspace, for `units` 128-key units: the units' state words and
// the two counters (units + 2), the FP8 kernel's flag, then the exact kernel's second set of state
// words and counters that runs behind it (units + 2).
constexpr int64_t attn_sm90_f8_flag_word(int64_t units) { return units + 2; }
constexpr int64_t attn_sm90_exact_state_word(int64_t units) { return units + 3; }
constexpr int64_t attn_sm90_state_words(int64_t units) { return 2 * units + 5; }
// Rows of each (batch, KV head) in the bf16 K / V workspace, and the workspace size.
constexpr int64_t attn_sm90_kv_pad(int64_t seqlen_kv) { return (seqlen_kv + 127) / 128 * 128; }
constexpr int64_t attn_sm90_workspace_bytes(int64_t batch, int64_t heads_kv, int64_t seqlen_kv, int64_t d) {
  return 256 + 2 * batch * heads_kv * attn_sm90_kv_pad(seqlen_kv) * d * 2 +
         4 * attn_sm90_state_words(batch * heads_kv * attn_sm90_kv_pad(seqlen_kv) / 128);
}

}  // namespace mxq
