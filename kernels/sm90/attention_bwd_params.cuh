// Parameters of the sm_90a MXFP8 attention backward kernels (kernels/sm90/attention_bwd.cu): a plain
// struct that crosses from the host launcher (src/cuda/op_attention_bwd.cpp, compiled by the host
// compiler, so this header holds no CUDA constructs) to the device by value, and the geometry both
// sides must agree on. The launcher resolves every extent and stride from the plan; the kernels
// only index, with the scale formulas of core/layout.h.
#pragma once

#include <cstdint>

namespace mxq {

struct alignas(64) AttnBwdSm90Params {
  // TMA descriptors (CUtensorMap, 128 bytes each) of the bf16 workspace operands the main loops
  // stream, filled by the launcher per Execute (they hold the workspace address), 128-byte swizzle:
  // along D ([B*H*S_pad, D]) boxes of 64 rows x 64 columns; along S ([B*H*D, S_pad]) boxes of
  // D rows x 64 positions. The kernels take the struct as a __grid_constant__ parameter.
  alignas(64) uint8_t tmap_q[128];
  alignas(64) uint8_t tmap_do[128];
  alignas(64) uint8_t tmap_qt[128];
  alignas(64) uint8_t tmap_dot[128];
  alignas(64) uint8_t tmap_k[128];
  alignas(64) uint8_t tmap_v[128];
  alignas(64) uint8_t tmap_kt[128];
  // Quantized along D (rowwise scales of the [rows, D] memory view).
  const uint8_t* q;
  const uint8_t* q_sc;
  const uint8_t* k;
  const uint8_t* k_sc;
  const uint8_t* v;
  const uint8_t* v_sc;
  const uint8_t* dout;
  const uint8_t* dout_sc;
  // Quantized along S (batched [B*H] columnwise scales, r := d, c := s/32; data not transposed).
  const uint8_t* qt;
  const uint8_t* qt_sc;
  const uint8_t* kt;
  const uint8_t* kt_sc;
  const uint8_t* doutt;
  const uint8_t* doutt_sc;
  const uint16_t* o_bf16;     // O, bf16, Q's layout
  const uint16_t* dout_bf16;  // dO, bf16
  const float* lse;           // [B, Hq, Sq_max]
  float* delta;               // workspace [B, Hq, Sq_max]: rowsum(dO * O) from the bf16 copies
  // Workspace: the operands dequantized to bf16 once, per (b, h) entry of their side, positions past
  // the sequence zero. Along D: [B*H][S_pad][D]; along S, transposed: [B*H][D][S_pad].
  uint16_t* w_q;
  uint16_t* w_do;
  uint16_t* w_k;
  uint16_t* w_v;
  uint16_t* w_qt;
  uint16_t* w_dot;
  uint16_t* w_kt;
  int64_t sq_pad, skv_pad;    // round_up(S_max, 128) of each side
  uint16_t* dq;               // bf16, Q's layout
  float* dq_acc;              // fused-dQ path: fp32 workspace [B*Hq][Sq_pad/64][D/64][64 x 64 tile in fragment
                              // order] (dq_post_body), zeroed by the prep kernel
  int32_t* dq_cnt;            // fused-dQ path: per (b, q head, 64-row q step) tile, minus the number of kv
                              // CTAs adding to it (prep); each adds 1 once its reduction is complete, and
                              // the post pass converts the tile at 0 (docs/ARCHITECTURE.md)
  // FP8 S^T and dP^T (fused path, D = 128, docs/NUMERICS.md "Backward on FP8 tensor cores"): the
  // prep writes Q' and dO' (E4M3, rescaled to one power-of-two factor per 64-row q tile, rows of 128
  // bytes in w_q / w_do) and those factors (f8_qf, f8_dof: [B*Hq][Sq_pad/64]); the dK/dV kernel
  // rescales its K and V rows itself. A block past the rescale's error bound raises f8_flag, and the
  // exact kernels behind redo the call.
  float* f8_qf;
  float* f8_dof;
  // FP8 dK and dV: Q and dO along S as E4M3 tiles of the dK and dV products (w_qt, w_dot,
  // [B*Hq][D][S_pad] bytes), each column d rescaled to f8_qtc / f8_dotc[(b, kv head, d)], its largest
  // scale over the sequence and the group's query heads (a first kernel writes them and clears the flag).
  float* f8_qtc;
  float* f8_dotc;
  // FP8 dQ: K along S rescaled per column d to f8_ktc[(b, kv head, d)], its largest scale over the
  // sequence (the dK/dV kernel writes its K_col' tile itself; the post pass multiplies dQ by it).
  float* f8_ktc;
  uint32_t* f8_flag;
  int32_t f8_mode;            // 0: exact kernels only; 1: the FP8 kernels (nothing to do once the flag
                              // is up); 2: the exact kernels behind them (nothing to do unless it is up)
  uint16_t* dk;               // bf16, K's layout
  uint16_t* dv;               // bf16, V's layout
  const int32_t* cu_q;        // varlen: [B + 1] sequence starts (device), else null
  const int32_t* cu_kv;
  int64_t batch, heads_q, heads_kv, seqlen_q, seqlen_kv;  // seqlens: the maxima with varlen
  int32_t group;              // Hq / Hkv
  int32_t mask;               // mxqAttentionMask_t
  int32_t cta_heads;          // dK/dV grid order: (b, kv head) pairs per kv-block-major chunk (1: head-major)
  int32_t bshd;               // layout BSHD (else BHSD)
  int32_t swizzled;           // scale layout SWIZZLED_128x4 (else LINEAR)
  float softmax_scale;
  float scale_log2;           // softmax_scale * log2(e)
  float p_scale;
  float inv_p_scale;          // 1 / p_scale, applied to dV once in fp32
  float log2_p_scale;         // log2(p_scale): P * p_scale straight from the exponential
  float ds_scale;             // softmax_scale / p_scale: dS from P * p_scale, folded into dS's quantization
  uint32_t ds_scale_c;        // bits(ds_scale) + (127 << 23): bits of ds_scale * 2^(127 - E) are this - (E << 23)
  int32_t ds_fold;            // ds_scale in [2^-119, 2): that fold is valid for every scale exponent E <= 134
  uint32_t sm_scale_c;        // the same for softmax_scale, folded into the dQ kernel's dS quantization
  int32_t sm_fold;            // softmax_scale in [2^-119, 2)
  int64_t d_scale_ld;         // scale columns per row along D: Cpad (swizzled) or ceil(D/32)
  int64_t q_s_scale_ld;       // along S, Q side: Cpad of ceil(Sq/32) (swizzled) or ceil(Sq/32)
  int64_t q_s_entry;          // bytes per (b, h) entry of a Q-side along-S scale tensor
  int64_t kv_s_scale_ld;      // the same for the K/V side
  int64_t kv_s_entry;
};

// Geometry. Every CTA of the two main kernels has one producer warpgroup (one thread issues TMA loads
// of the bf16 workspace tiles into 128-byte-swizzled shared memory, completing on mbarriers) and two
// math warpgroups of 64 rows each.
constexpr int kAttnBwdThreads = 384;
constexpr int kAttnBwdRowsPerCta = 128;  // kv rows (dK/dV kernel) or q rows (dQ kernel) per CTA
constexpr int kAttnBwdStepRows = 64;     // q rows (dK/dV) or kv rows (dQ) per pipeline step
constexpr int kAttnBwdStages = 2;    // dK/dV kernel
constexpr int kAttnBwdDqStages = 3;  // dQ kernel: a stage is held until the next step's dQ product is done
constexpr int kAttnBwdPrepThreads = 256;
// FP8 prep blocks resident per SM (__launch_bounds__ of `_prep8_d128`: at most 32 registers per
// thread, 16 bytes of spills outside loops). The prep is memory-bound; at the 62 registers ptxas
// chose before, 4 blocks (44% occupancy) kept too few loads in flight: 8 took it from 244 to 213 us
// under ncu at B2 H32 S4096 D128 (docs/PERFORMANCE.md, twenty-fourth session). The exact preps keep
// their 64 registers (at 32 they spill 176 bytes).
constexpr int kAttnBwdPrepBlocksPerSm = 8;
// The prep kernel's blockIdx.z slices. Two-kernel path: Q, dO, K, V along D, Q, dO, K along S to bf16,
// then delta = rowsum(dO * O). Fused path (the dK/dV kernel dequantizes its resident K, V and K_col
// itself): Q, dO along D, Q, dO along S, the dQ accumulator's zeroing, delta.
constexpr int kAttnBwdPrepSlices = 8;
constexpr int kAttnBwdPrepSlicesFused = 6;
// The exact fallback behind the FP8 kernels: Q, dO, Q_col, dO_col to bf16 and the dQ accumulator reset.
constexpr int kAttnBwdPrepSlicesFallback = 5;
constexpr int kAttnBwdPostThreads = 256;
constexpr int kAttnBwdDsTile = kAttnBwdRowsPerCta * kAttnBwdStepRows * 2;  // dS^T tile, bf16 [128 kv][64 q]
constexpr int kAttnBwdDqTileBytes = 64 * 64 * 4;  // fused dQ: a warpgroup's fp32 64 x 64 tile per step

// Dynamic shared memory of each kernel for head dimension d (1 KiB alignment slack included):
// dK/dV: resident K, V [128 x d] bf16; per stage Q, dO [64 x d] and Q_col^T, dO_col^T [d x 64] bf16;
//        a full and an empty mbarrier per stage (64 bytes reserved).
// dQ:    resident Q, dO [128 x d] bf16 and LSE/delta of the 128 rows; per stage (3) K, V [64 x d] and
//        K_col^T [d x 64] bf16; the stages' mbarriers (64 bytes).
constexpr int64_t attn_bwd_dkv_smem_bytes(int64_t d) {
  return 1024 + 2 * kAttnBwdRowsPerCta * d * 2 + kAttnBwdStages * 4 * kAttnBwdStepRows * d * 2 + 64;
}
// dK/dV with fused dQ (non-deterministic path): dK/dV's layout plus the resident K_col^T [d x 128]
// bf16 (two 64-position panels), the dS^T tiles (D = 128: written over the stage's Q tile, which only
// S^T reads; D = 64: one per stage), the fp32 dQ staging tiles of the bulk reductions (D = 128: the
// stage's dO and dO_col^T tiles; D = 64: two per warpgroup, double-buffered for the reducer thread),
// 1 KiB of per-warp exponent exchange and 128 bytes of mbarriers (the stages' full/empty, the staging
// tiles' full/empty).
constexpr int64_t attn_bwd_dkvq_smem_bytes(int64_t d) {
  return 1024 + 2 * kAttnBwdRowsPerCta * d * 2 + kAttnBwdStages * 4 * kAttnBwdStepRows * d * 2 +
         kAttnBwdRowsPerCta * d * 2 + (d == 128 ? 0 : kAttnBwdStages * kAttnBwdDsTile + 4 * kAttnBwdDqTileBytes) +
         1024 + 128;
}
// The FP8 dK/dV kernel (fused, D = 128): the same, plus K' and V' row factors (bf16, 2 x 128); its
// dQ staging tiles take the halves of the K and V tiles that K' and V' leave free.
constexpr int64_t attn_bwd_dkvq8_smem_bytes(int64_t d) {
  return attn_bwd_dkvq_smem_bytes(d) + 2 * kAttnBwdRowsPerCta * 2;
}
constexpr int64_t attn_bwd_dq_smem_bytes(int64_t d) {
  return 1024 + 2 * kAttnBwdRowsPerCta * d * 2 + 2 * kAttnBwdRowsPerCta * 4 + kAttnBwdDqStages * 3 * kAttnBwdStepRows * d * 2 + 64;
}

}  // namespace mxq
