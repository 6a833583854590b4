// Host side of the GPU attention backward: which plans the sm_90a kernels (kernels/sm90/attention_bwd.cu)
// can run and why not otherwise, the workspace (delta = rowsum(dO * O), fp32 [B, Hq, Sq]; the
// operands the main loops read dequantized to bf16 once: the seven, 14 bytes per (b, h, position,
// channel) over both sides, on the two-kernel path; the q side's four, 8 bytes per (b, q head,
// position, channel), and the fp32 dQ accumulator, 4 bytes, on the fused path), the three launches
// (prep + delta, dK/dV, dQ; or prep + delta + zeroing of the dQ accumulator, dK/dV with fused dQ, dQ
// post pass) and the registry entry. Everything the kernels need is resolved here from the immutable
// plan, so Execute only fills pointers and launches: no allocation, no host synchronization,
// capturable in a CUDA graph.
// Two paths: the two-kernel one (dK/dV and dQ kernels, S and dP recomputed by both: 7 matmuls, no
// atomics, the same bits every run) serves plans with the DETERMINISTIC attribute and is the
// fallback; the fused one (dQ's contribution computed by the dK/dV kernel and reduced with fp32
// atomics: 5 matmuls, dQ's bits depend on the order of the reductions) is the default otherwise.
// MXQ_ATTN_BWD_FUSED_DQ=0/1 forces either for non-deterministic plans (docs/ENVIRONMENT.md).
// The fused path at D = 128 runs S^T and dP^T on FP8 wgmma over operands rescaled within E4M3
// (docs/NUMERICS.md, "Backward on FP8 tensor cores"), with the exact fused kernels behind as the
// fallback for inputs past the rescale's error bound; MXQ_ATTN_BWD_F8=0: the exact kernels only,
// 2: the FP8 kernels without that fallback (tests).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "core/layout.h"
#include "core/logger.h"
#include "cuda/registry.h"
#include "cuda/runtime.h"
#include "sm90/attention_bwd_params.cuh"

namespace mxq {
namespace cuda {
namespace {

constexpr int64_t kMaxGridYZ = 65535;

// Why the sm_90a backward kernels cannot run this plan, or "" when they can.
std::string sm90_bwd_supports(const AttentionDesc& d, const DeviceInfo& dev) {
  if (d.direction != MXQ_ATTN_BACKWARD) return "this is the GPU attention backward kernel; the plan is FORWARD";
  if (d.qkv_dtype != MXQ_DTYPE_E4M3) return "operands must be E4M3 (E5M2 attention backward is not implemented)";
  if (d.head_dim != 64 && d.head_dim != 128)
    return fmt::format("head dim {} is not supported (64 and 128 are)", d.head_dim);
  if (d.heads_q > kMaxGridYZ || d.batch > kMaxGridYZ || d.batch * d.heads_q > kMaxGridYZ)
    return fmt::format("B = {} and Hq = {} must have B*Hq at most {} (grid dimensions)", d.batch, d.heads_q,
                       kMaxGridYZ);
  if (d.heads_q / d.heads_kv > (int64_t(1) << 30)) return "GQA group too large";
  const int64_t smem = std::max(attn_bwd_dkv_smem_bytes(d.head_dim), attn_bwd_dq_smem_bytes(d.head_dim));
  if (smem > dev.smem_optin)
    return fmt::format("needs {} bytes of shared memory per block, the device allows {}", smem, dev.smem_optin);
  return {};
}

// Whether a plan runs the fused-dQ path: never with the DETERMINISTIC attribute (its reductions land
// in any order) nor where the fused kernel's shared memory does not fit; otherwise
// MXQ_ATTN_BWD_FUSED_DQ=0/1 if set, else the measured rule (docs/PERFORMANCE.md, "Fifth session").
bool use_fused_dq(const AttentionDesc& d, const DeviceInfo& dev) {
  if (d.deterministic) return false;
  if (attn_bwd_dkvq_smem_bytes(d.head_dim) > dev.smem_optin) return false;
  if (const char* env = std::getenv("MXQ_ATTN_BWD_FUSED_DQ"); env && *env) return std::string(env) != "0";
  return true;
}

// The dK/dV grid's order under a causal mask (AttnBwdSm90Params::cta_heads): a CTA's walk gets
// shorter with its kv block, and in head-major order the last heads' longest walks start late and run
// alone at the end. Chunks of c (b, kv head) pairs, kv-block-major within a chunk, start each chunk's
// longest walks first; but more heads at once spread the walks over more q tiles in L2 (all of them
// at once: 32% slower, twenty-fourth session). The rule, from measurements (docs/PERFORMANCE.md,
// twenty-fifth session; a list-scheduling simulation had promised more from larger chunks than they
// gave): about 8 MiB of the chunk's q-side tiles and dQ accumulator (8 bytes per query head, position
// and channel), 1 to 4 pairs (B2 H32 S4096: 2 at D = 128, 4 at D = 64; B1 H16 S16384: 1, as 2 measured
// 0.5% slower). MXQ_ATTN_BWD_CTA_HEADS=c overrides it (docs/ENVIRONMENT.md).
int32_t dkv_cta_heads(const AttentionDesc& d) {
  if (layout::ceil_div(d.seqlen_kv, kAttnBwdRowsPerCta) > kMaxGridYZ) return 1;  // kv blocks along y
  const int64_t pairs = d.batch * d.heads_kv;
  if (const char* env = std::getenv("MXQ_ATTN_BWD_CTA_HEADS"); env && *env)
    return static_cast<int32_t>(std::clamp<long long>(std::strtoll(env, nullptr, 10), 1, pairs));
  if (d.mask == MXQ_ATTN_MASK_NONE) return 1;
  const int64_t head_bytes =
      (d.heads_q / d.heads_kv) * layout::round_up(d.seqlen_q, kAttnBwdRowsPerCta) * d.head_dim * 8;
  const int64_t c = std::clamp<int64_t>((int64_t(8) << 20) / std::max<int64_t>(head_bytes, 1), 1, 4);
  return static_cast<int32_t>(std::min(c, pairs));
}

class AttentionBwdSm90 final : public OpImpl {
 public:
  AttentionBwdSm90(const AttentionDesc& d, Device& dev) : d_(d), dev_(dev), fused_(use_fused_dq(d, dev.info())) {
    const int dim = static_cast<int>(d.head_dim);
    if (fused_ && dim == 128) {
      const char* f8 = std::getenv("MXQ_ATTN_BWD_F8");
      const char m = f8 && f8[0] ? f8[0] : '1';
      // (The FP8 kernel's shared memory, with 64 bytes for its static part, where the device allows it.)
      f8_ = m != '0' && attn_bwd_dkvq8_smem_bytes(dim) + 64 <= dev.info().smem_optin;
      f8_fallback_ = f8_ && m != '2';
    }
    // [0] prep (+ delta), [1] dK/dV (fused: + dQ), [2] dQ (fused: the post pass); FP8: the prep and
    // dK/dV kernels of the FP8 products, [3], [4] the exact ones behind them, and [5] the FP8 path's
    // first kernel (the flag cleared, Q_col's, dO_col's and K_col's column factors).
    const char* f8s = f8_ ? "8" : "";
    names_[0] = fmt::format("mxq_attn_bwd_sm90_prep{}_d{}", f8s, dim);
    names_[1] = fmt::format("mxq_attn_bwd_sm90_{}{}_d{}", fused_ ? "dkvq" : "dkv", f8s, dim);
    names_[2] = fmt::format("mxq_attn_bwd_sm90_{}_d{}", fused_ ? "dqpost" : "dq", dim);
    names_[3] = fmt::format("mxq_attn_bwd_sm90_prep_d{}", dim);
    names_[4] = fmt::format("mxq_attn_bwd_sm90_dkvq_d{}", dim);
    names_[5] = fmt::format("mxq_attn_bwd_sm90_f8colmax_d{}", dim);
    for (int i = 0; i < 3; ++i) fn_[i] = dev.kernel(names_[i].c_str());
    if (f8_fallback_)
      for (int i = 3; i < 5; ++i) fn_[i] = dev.kernel(names_[i].c_str());
    if (f8_) fn_[5] = dev.kernel(names_[5].c_str());

    const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
    const int64_t dcols = layout::scale_cols(d.head_dim);
    const int64_t qcols = layout::scale_cols(d.seqlen_q), kvcols = layout::scale_cols(d.seqlen_kv);
    base_.batch = d.batch;
    base_.heads_q = d.heads_q;
    base_.heads_kv = d.heads_kv;
    base_.seqlen_q = d.seqlen_q;
    base_.seqlen_kv = d.seqlen_kv;
    base_.group = static_cast<int32_t>(d.heads_q / d.heads_kv);
    base_.mask = static_cast<int32_t>(d.mask);
    base_.cta_heads = dkv_cta_heads(d);
    if (base_.cta_heads > 1)
      MXQ_LOG_DBG("attention backward: dK/dV grid in chunks of {} (b, kv head) pairs", base_.cta_heads);
    base_.bshd = d.layout == MXQ_ATTN_LAYOUT_BSHD;
    base_.swizzled = swz;
    base_.softmax_scale = d.softmax_scale;
    base_.scale_log2 = static_cast<float>(static_cast<double>(d.softmax_scale) * 1.4426950408889634);
    base_.p_scale = d.p_scale;
    base_.inv_p_scale = 1.0f / d.p_scale;
    base_.log2_p_scale = static_cast<float>(std::log2(static_cast<double>(d.p_scale)));
    base_.ds_scale = static_cast<float>(static_cast<double>(d.softmax_scale) / static_cast<double>(d.p_scale));
    // A factor f folded into dS's quantization (kernels: mx_rows_to_frags): the bits of f * 2^(127-E)
    // are bits(f) + (127 << 23) - (E << 23), a normal float for every E <= 134 when f is in [2^-119, 2).
    auto fold = [](float f, uint32_t& c, int32_t& ok) {
      uint32_t bits = 0;
      std::memcpy(&bits, &f, 4);
      c = bits + (127u << 23);
      ok = f >= 0x1p-119f && f < 2.0f;
    };
    fold(base_.ds_scale, base_.ds_scale_c, base_.ds_fold);
    fold(base_.softmax_scale, base_.sm_scale_c, base_.sm_fold);
    base_.d_scale_ld = swz ? layout::swz_cols(dcols) : dcols;
    base_.q_s_scale_ld = swz ? layout::swz_cols(qcols) : qcols;
    base_.q_s_entry = layout::scale_bytes(swz, d.head_dim, qcols);
    base_.kv_s_scale_ld = swz ? layout::swz_cols(kvcols) : kvcols;
    base_.kv_s_entry = layout::scale_bytes(swz, d.head_dim, kvcols);
    base_.sq_pad = layout::round_up(d.seqlen_q, kAttnBwdRowsPerCta);
    base_.skv_pad = layout::round_up(d.seqlen_kv, kAttnBwdRowsPerCta);
    // Workspace: delta, then the q-side bf16 operands (Q, dO, Q_col^T, dO_col^T), then the kv side
    // (K, V, K_col^T); every piece 256-byte aligned.
    ws_delta_ = layout::round_up(d.batch * d.heads_q * d.seqlen_q * 4, 256);
    ws_q_ = d.batch * d.heads_q * base_.sq_pad * d.head_dim * 2;
    // The fused path's dK/dV kernel dequantizes K, V and K_col itself (no kv-side bf16 copies).
    ws_kv_ = fused_ ? 0 : d.batch * d.heads_kv * base_.skv_pad * d.head_dim * 2;
    ws_dqacc_ = fused_ ? d.batch * d.heads_q * base_.sq_pad * d.head_dim * 4 : 0;
    ws_dqcnt_ = fused_ ? layout::round_up(d.batch * d.heads_q * (base_.sq_pad / kAttnBwdStepRows) * 4, 256) : 0;
    // FP8: the factors of the Q' and dO' tiles (one float per 64-row q tile each: the counters' size),
    // the flag, and Q_col's, dO_col's and K_col's column factors (a float per (b, kv head, d) each). Q', dO',
    // Q_col' and dO_col' themselves take the first half of the bf16 copies' space.
    ws_f8col_ = f8_ ? layout::round_up(d.batch * d.heads_kv * d.head_dim * 4, 256) : 0;
    ws_f8_ = f8_ ? 2 * ws_dqcnt_ + 256 + 3 * ws_f8col_ : 0;
    // The dK/dV kernel's shared memory (the exact fused kernel behind the FP8 one takes smem_exact_).
    smem_exact_ = fused_ ? attn_bwd_dkvq_smem_bytes(dim) : attn_bwd_dkv_smem_bytes(dim);
    smem_kv_ = f8_ ? attn_bwd_dkvq8_smem_bytes(dim) : smem_exact_;
  }

  std::string name() const override { return names_[1]; }
  std::string reason() const override {
    if (f8_)
      return "sm_90a: S^T, dP^T, dK and dV on FP8 wgmma over operands rescaled within E4M3 (one power-of-two factor "
             "per kv row and 64-query tile for S^T and dP^T; per Q and dO column and per dS^T row for dK and dV; the "
             "exact kernels redo the call for inputs past the rescale's error bound), dQ on FP8 wgmma too (per K "
             "column and per dS query row over the CTA's kv rows), fused into the dK/dV kernel (fp32 atomics into the "
             "workspace; not deterministic)";
    return fused_ ? "sm_90a: FP8 operands dequantized exactly to bf16 once (workspace), bf16 wgmma, dQ fused "
                    "into the dK/dV kernel (fp32 atomics into the workspace, 5 matmuls; not deterministic)"
                  : "sm_90a: FP8 operands dequantized exactly to bf16 once (workspace), bf16 wgmma, deterministic "
                    "(dK/dV and dQ kernels, no atomics)";
  }

  size_t workspace_bytes() const override {
    return static_cast<size_t>(ws_delta_ + 4 * ws_q_ + 3 * ws_kv_ + ws_dqacc_ + ws_dqcnt_ + ws_f8_);
  }

  size_t required_alignment(mxqArgSlot_t slot) const override {
    switch (slot) {
      case MXQ_ARG_Q_DATA:
      case MXQ_ARG_K_DATA:
      case MXQ_ARG_V_DATA:
      case MXQ_ARG_DO_DATA:
      case MXQ_ARG_Q_T_DATA:
      case MXQ_ARG_K_T_DATA:
      case MXQ_ARG_DO_T_DATA:
        return 8;  // 8-byte loads of 8 FP8 elements
      case MXQ_ARG_O:
      case MXQ_ARG_DO:
        return 16;  // 16-byte loads of 8 bf16
      case MXQ_ARG_DQ:
      case MXQ_ARG_DK:
      case MXQ_ARG_DV:
        return 4;  // bf16 pairs
      default:
        return 1;
    }
  }

  void run(const ExecArgs& args, void* workspace, size_t, mxqStream_t stream) const override {
    AttnBwdSm90Params p = base_;
    p.q = args.as<const uint8_t>(MXQ_ARG_Q_DATA);
    p.q_sc = args.as<const uint8_t>(MXQ_ARG_Q_SCALES);
    p.k = args.as<const uint8_t>(MXQ_ARG_K_DATA);
    p.k_sc = args.as<const uint8_t>(MXQ_ARG_K_SCALES);
    p.v = args.as<const uint8_t>(MXQ_ARG_V_DATA);
    p.v_sc = args.as<const uint8_t>(MXQ_ARG_V_SCALES);
    p.dout = args.as<const uint8_t>(MXQ_ARG_DO_DATA);
    p.dout_sc = args.as<const uint8_t>(MXQ_ARG_DO_SCALES);
    p.qt = args.as<const uint8_t>(MXQ_ARG_Q_T_DATA);
    p.qt_sc = args.as<const uint8_t>(MXQ_ARG_Q_T_SCALES);
    p.kt = args.as<const uint8_t>(MXQ_ARG_K_T_DATA);
    p.kt_sc = args.as<const uint8_t>(MXQ_ARG_K_T_SCALES);
    p.doutt = args.as<const uint8_t>(MXQ_ARG_DO_T_DATA);
    p.doutt_sc = args.as<const uint8_t>(MXQ_ARG_DO_T_SCALES);
    p.o_bf16 = args.as<const uint16_t>(MXQ_ARG_O);
    p.dout_bf16 = args.as<const uint16_t>(MXQ_ARG_DO);
    p.lse = args.as<const float>(MXQ_ARG_LSE);
    p.dq = args.as<uint16_t>(MXQ_ARG_DQ);
    p.dk = args.as<uint16_t>(MXQ_ARG_DK);
    p.dv = args.as<uint16_t>(MXQ_ARG_DV);
    p.cu_q = d_.varlen ? args.as<const int32_t>(MXQ_ARG_CU_SEQLENS_Q) : nullptr;
    p.cu_kv = d_.varlen ? args.as<const int32_t>(MXQ_ARG_CU_SEQLENS_KV) : nullptr;
    uint8_t* ws = static_cast<uint8_t*>(workspace);
    p.delta = reinterpret_cast<float*>(ws);
    if (ws) {
      uint8_t* at = ws + ws_delta_;
      for (uint16_t** w : {&p.w_q, &p.w_do, &p.w_qt, &p.w_dot}) *w = reinterpret_cast<uint16_t*>(at), at += ws_q_;
      if (fused_) {
        p.dq_acc = reinterpret_cast<float*>(at);
        p.dq_cnt = reinterpret_cast<int32_t*>(at + ws_dqacc_);
        if (f8_) {
          uint8_t* f8 = at + ws_dqacc_ + ws_dqcnt_;
          p.f8_qf = reinterpret_cast<float*>(f8);
          p.f8_dof = reinterpret_cast<float*>(f8 + ws_dqcnt_);
          p.f8_flag = reinterpret_cast<uint32_t*>(f8 + 2 * ws_dqcnt_);
          p.f8_qtc = reinterpret_cast<float*>(f8 + 2 * ws_dqcnt_ + 256);
          p.f8_dotc = reinterpret_cast<float*>(f8 + 2 * ws_dqcnt_ + 256 + ws_f8col_);
          p.f8_ktc = reinterpret_cast<float*>(f8 + 2 * ws_dqcnt_ + 256 + 2 * ws_f8col_);
          p.f8_mode = 1;
        }
      } else {
        for (uint16_t** w : {&p.w_k, &p.w_v, &p.w_kt}) *w = reinterpret_cast<uint16_t*>(at), at += ws_kv_;
      }
    }
    MXQ_REQUIRE(p.q && p.q_sc && p.k && p.k_sc && p.v && p.v_sc && p.dout && p.dout_sc && p.qt && p.qt_sc && p.kt &&
                    p.kt_sc && p.doutt && p.doutt_sc,
                MXQ_STATUS_BAD_PARAM_NULL_POINTER, "attention backward: every FP8 operand and its scales are required");
    MXQ_REQUIRE(p.o_bf16 && p.dout_bf16 && p.lse && p.dq && p.dk && p.dv, MXQ_STATUS_BAD_PARAM_NULL_POINTER,
                "attention backward: O, dO (bf16), LSE, dQ, dK and dV are required");
    MXQ_REQUIRE(!d_.varlen || (p.cu_q && p.cu_kv), MXQ_STATUS_BAD_PARAM_NULL_POINTER,
                "attention backward: CU_SEQLENS_Q and CU_SEQLENS_KV are required with VARLEN");
    MXQ_REQUIRE(p.delta, MXQ_STATUS_BAD_PARAM_WORKSPACE, "attention backward: the workspace ({} bytes) is required",
                workspace_bytes());
    // TMA descriptors of the operands the main loops stream (they hold workspace addresses); FP8:
    // Q' and dO' as E4M3 rows of 128 bytes, one 64-row box each, and the exact kernels' bf16 Q and dO.
    AttnBwdSm90Params pe{};
    {
      const int64_t rq = d_.batch * d_.heads_q, rkv = d_.batch * d_.heads_kv;
      encode(p.w_q, d_.head_dim, rq * base_.sq_pad, kAttnBwdStepRows, p.tmap_q, "Q");
      encode(p.w_do, d_.head_dim, rq * base_.sq_pad, kAttnBwdStepRows, p.tmap_do, "dO");
      encode(p.w_qt, base_.sq_pad, rq * d_.head_dim, d_.head_dim, p.tmap_qt, "Q_col^T");
      encode(p.w_dot, base_.sq_pad, rq * d_.head_dim, d_.head_dim, p.tmap_dot, "dO_col^T");
      if (!fused_) {  // the dQ kernel's streamed kv tiles
        encode(p.w_k, d_.head_dim, rkv * base_.skv_pad, kAttnBwdStepRows, p.tmap_k, "K");
        encode(p.w_v, d_.head_dim, rkv * base_.skv_pad, kAttnBwdStepRows, p.tmap_v, "V");
        encode(p.w_kt, base_.skv_pad, rkv * d_.head_dim, d_.head_dim, p.tmap_kt, "K_col^T");
      }
      if (f8_) {
        pe = p;
        pe.f8_mode = 2;
        encode_tma_2d(p.tmap_q, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.w_q, d_.head_dim, rq * base_.sq_pad, 128,
                      kAttnBwdStepRows, CU_TENSOR_MAP_SWIZZLE_128B, "attention backward Q' workspace");
        encode_tma_2d(p.tmap_do, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.w_do, d_.head_dim, rq * base_.sq_pad, 128,
                      kAttnBwdStepRows, CU_TENSOR_MAP_SWIZZLE_128B, "attention backward dO' workspace");
        // Q_col', dO_col': rows (b, q head, d) of S_pad bytes, boxes of D rows x 64 positions, 64-byte swizzle.
        encode_tma_2d(p.tmap_qt, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.w_qt, base_.sq_pad, rq * d_.head_dim, 64,
                      static_cast<uint32_t>(d_.head_dim), CU_TENSOR_MAP_SWIZZLE_64B,
                      "attention backward Q_col' workspace");
        encode_tma_2d(p.tmap_dot, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.w_dot, base_.sq_pad, rq * d_.head_dim, 64,
                      static_cast<uint32_t>(d_.head_dim), CU_TENSOR_MAP_SWIZZLE_64B,
                      "attention backward dO_col' workspace");
      }
    }

    const int64_t dim = d_.head_dim;
    void* params[] = {&p};
    if (f8_) {  // 0. the FP8 kernels' flag cleared, the column factors of Q_col, dO_col and K_col (a block per
                //    (b, kv head) and tensor)
      Dim3 g, blk;
      g.x = static_cast<unsigned>(d_.batch * d_.heads_kv);
      g.y = 3;
      blk.x = kAttnBwdPrepThreads;
      dev_.launch(fn_[5], g, blk, 0, stream, params, names_[5].c_str());
    }
    // 1. The FP8 operands the main loops stream to bf16, once (positions past each sequence become
    //    zeros; the fused path: only the q side, and the dQ accumulator zeroed), and delta =
    //    rowsum(dO * O) for every query row, as slices of one grid.
    {
      Dim3 g, blk;
      g.x = static_cast<unsigned>((fused_ ? base_.sq_pad : std::max(base_.sq_pad, base_.skv_pad)) / kAttnBwdStepRows);
      g.y = static_cast<unsigned>(d_.batch * d_.heads_q);
      g.z = fused_ ? kAttnBwdPrepSlicesFused : kAttnBwdPrepSlices;
      blk.x = kAttnBwdPrepThreads;
      // FP8: a programmatic dependent of the column-factor kernel (its zeroing and delta slices start
      // at once, the others wait for it).
      dev_.launch(fn_[0], g, blk, 0, stream, params, names_[0].c_str(), /*programmatic=*/f8_);
    }
    // 2. dK, dV (fused: and dQ's contributions): one CTA per (128 kv rows, kv head, batch entry).
    //    Causal masks: (pair, kv block, chunk of base_.cta_heads (b, kv head) pairs), kv-block-major
    //    within a chunk (dkv_cta_heads).
    Dim3 gkv, bkv;
    const int64_t nkvb = layout::ceil_div(d_.seqlen_kv, kAttnBwdRowsPerCta);
    if (base_.cta_heads > 1) {
      gkv.x = static_cast<unsigned>(base_.cta_heads);
      gkv.y = static_cast<unsigned>(nkvb);
      gkv.z = static_cast<unsigned>(layout::ceil_div(d_.batch * d_.heads_kv, int64_t(base_.cta_heads)));
    } else {
      gkv.x = static_cast<unsigned>(nkvb);
      gkv.y = static_cast<unsigned>(d_.heads_kv);
      gkv.z = static_cast<unsigned>(d_.batch);
    }
    bkv.x = kAttnBwdThreads;
    dev_.launch(fn_[1], gkv, bkv, static_cast<size_t>(smem_kv_), stream, params, names_[1].c_str());
    if (fused_) {
      // 3. The fp32 dQ accumulator -> bf16 dQ in the output layout: one block per 64 x 64 tile, a
      //    programmatic dependent of the dK/dV kernel: its blocks run on the SMs that kernel's last
      //    wave leaves idle, each as soon as its tile's counter says every contribution is in.
      Dim3 g, blk;
      g.x = static_cast<unsigned>(layout::ceil_div(d_.seqlen_q, kAttnBwdStepRows) * (dim / 64));
      g.y = static_cast<unsigned>(d_.heads_q);
      g.z = static_cast<unsigned>(d_.batch);
      blk.x = kAttnBwdPostThreads;
      dev_.launch(fn_[2], g, blk, 0, stream, params, names_[2].c_str(), /*programmatic=*/true);
      if (f8_fallback_) {
        // 4. The exact kernels behind the FP8 ones, each doing nothing unless the flag is up: then Q
        //    and dO to bf16 and the dQ accumulator reset, the exact dK/dV kernel and the post pass.
        //    The prep and post grids are a few blocks per SM that walk the blocks (kernels: prep_body,
        //    dq_post_body), so that they cost little when the flag is down; the post pass runs after
        //    the dK/dV kernel here, not as its dependent.
        void* params_e[] = {&pe};
        const int64_t walkers = 4 * int64_t(dev_.sm_count());
        Dim3 gp, bp;
        gp.x = static_cast<unsigned>(std::min<int64_t>(
            (base_.sq_pad / kAttnBwdStepRows) * d_.batch * d_.heads_q * kAttnBwdPrepSlicesFallback, walkers));
        bp.x = kAttnBwdPrepThreads;
        dev_.launch(fn_[3], gp, bp, 0, stream, params_e, names_[3].c_str());
        dev_.launch(fn_[4], gkv, bkv, static_cast<size_t>(smem_exact_), stream, params_e, names_[4].c_str());
        Dim3 gq;
        gq.x = static_cast<unsigned>(std::min<int64_t>(int64_t(g.x) * g.y * g.z, walkers));
        dev_.launch(fn_[2], gq, blk, 0, stream, params_e, names_[2].c_str());
      }
      return;
    }
    // 3. dQ: one CTA per (128 q rows, q head, batch entry).
    {
      Dim3 g, blk;
      g.x = static_cast<unsigned>(layout::ceil_div(d_.seqlen_q, kAttnBwdRowsPerCta));
      g.y = static_cast<unsigned>(d_.heads_q);
      g.z = static_cast<unsigned>(d_.batch);
      blk.x = kAttnBwdThreads;
      dev_.launch(fn_[2], g, blk, static_cast<size_t>(attn_bwd_dq_smem_bytes(dim)), stream, params,
                  names_[2].c_str());
    }
  }

 private:
  // TMA descriptor of a bf16 [rows, cols] workspace tensor (row-major, cols contiguous): boxes of
  // box_rows rows x 64 columns with the 128-byte swizzle, the shared-memory panel layout the
  // kernels' wgmma descriptors read.
  void encode(uint16_t* base, int64_t cols, int64_t rows, int64_t box_rows, uint8_t (&out)[128],
              const char* what) const {
    encode_tma_2d(out, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, cols, rows, 64, static_cast<uint32_t>(box_rows),
                  CU_TENSOR_MAP_SWIZZLE_128B, fmt::format("attention backward {} workspace", what).c_str());
  }

  AttentionDesc d_;
  Device& dev_;
  bool fused_ = false, f8_ = false, f8_fallback_ = false;
  std::string names_[6];
  CUfunction fn_[6] = {};
  AttnBwdSm90Params base_{};
  int64_t ws_delta_ = 0, ws_q_ = 0, ws_kv_ = 0, ws_dqacc_ = 0, ws_dqcnt_ = 0, ws_f8col_ = 0, ws_f8_ = 0;
  int64_t smem_kv_ = 0, smem_exact_ = 0;
};

}  // namespace

void register_attention_bwd_kernels(Registry& r) {
  KernelEntry<AttentionDesc> e;
  e.name = "sm90.attention.bwd.mxfp8.wgmma_bf16";
  e.arch = {90, 90};
  e.in_dtypes = {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2};  // E5M2 reaches supports() and gets a reason
  e.out_dtypes = {MXQ_DTYPE_BF16};
  e.variant = "backward: exact FP8->bf16 dequantization once into the workspace, bf16 wgmma m64nNk16 (fused, "
              "D=128: S^T and dP^T on FP8 wgmma m64n64k32, dK and dV m64n128k32, over operands rescaled within "
              "E4M3, dQ m64n64k32 over dS per query column and K per column, the exact kernels as fallback), TMA "
              "producer (mbarriers) + 2 math warpgroups; "
              "dK/dV kernel with dQ fused by fp32 atomics, or dK/dV and dQ kernels (deterministic); causal grids "
              "in chunks of (batch, kv head) pairs";
  e.priority = 0;
  e.supports = sm90_bwd_supports;
  e.make = [](const AttentionDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
    return std::make_unique<AttentionBwdSm90>(d, dev);
  };
  r.add(std::move(e));
}

}  // namespace cuda
}  // namespace mxq
