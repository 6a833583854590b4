// GroupedGemm and Attention plans: attribute tables, finalize-time validation, argument rules.
#include <cmath>
#include <limits>

#include "core/plan_ops.h"

namespace mxq {

// ---- Grouped GEMM ------------------------------------------------------------------------------
const std::vector<AttrDef<GemmDesc>>& PlanOps<GemmDesc>::attrs() {
  using D = GemmDesc;
  static const std::vector<AttrDef<D>> t = {
      MXQ_ATTR_ENUM(D, MXQ_GEMM_ATTR_GROUPING, grouping, mxqGemmGrouping_t, MXQ_GEMM_GROUPING_NONE,
                    MXQ_GEMM_GROUPING_M, MXQ_GEMM_GROUPING_K),
      MXQ_ATTR_DIM(D, MXQ_GEMM_ATTR_M, m, 1),
      MXQ_ATTR_DIM(D, MXQ_GEMM_ATTR_N, n, 1),
      MXQ_ATTR_DIM(D, MXQ_GEMM_ATTR_K, k, 1),
      MXQ_ATTR_DIM(D, MXQ_GEMM_ATTR_NUM_GROUPS, num_groups, 1),
      MXQ_ATTR_DIM(D, MXQ_GEMM_ATTR_BATCH, batch, 1),
      MXQ_ATTR_DTYPE(D, MXQ_GEMM_ATTR_A_DTYPE, a_dtype, MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2),
      MXQ_ATTR_DTYPE(D, MXQ_GEMM_ATTR_B_DTYPE, b_dtype, MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2),
      MXQ_ATTR_DTYPE(D, MXQ_GEMM_ATTR_D_DTYPE, d_dtype, MXQ_DTYPE_BF16, MXQ_DTYPE_FP32),
      MXQ_ATTR_ENUM(D, MXQ_GEMM_ATTR_SCALE_LAYOUT, scale_layout, mxqScaleLayout_t, MXQ_SCALE_LAYOUT_SWIZZLED_128x4,
                    MXQ_SCALE_LAYOUT_LINEAR),
      AttrDef<D>{MXQ_GEMM_ATTR_ALPHA, "MXQ_GEMM_ATTR_ALPHA", AttrType::F32,
                 [](D& d, const void* v) {
                   float a = read_f32(v);
                   MXQ_REQUIRE(std::isfinite(a), MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
                               "MXQ_GEMM_ATTR_ALPHA must be finite (is {})", a);
                   d.alpha = a;
                 },
                 [](const D& d, void* v) { write_f32(v, d.alpha); }},
      MXQ_ATTR_BOOL(D, MXQ_GEMM_ATTR_ACCUMULATE, accumulate),
      MXQ_ATTR_DTYPE(D, MXQ_GEMM_ATTR_GROUP_OFFSETS_DTYPE, offsets_dtype, MXQ_DTYPE_INT32, MXQ_DTYPE_INT64),
      MXQ_ATTR_BOOL(D, MXQ_GEMM_ATTR_B_BLOCK_2D, b_block_2d),
      MXQ_ATTR_DIM(D, MXQ_GEMM_ATTR_WORKSPACE_LIMIT, workspace_limit, 0),
  };
  return t;
}

void PlanOps<GemmDesc>::finalize(GemmDesc& d, const PlanT<GemmDesc>& p) {
  MXQ_REQUIRE(p.was_set(MXQ_GEMM_ATTR_M) && p.was_set(MXQ_GEMM_ATTR_N) && p.was_set(MXQ_GEMM_ATTR_K),
              MXQ_STATUS_BAD_PARAM_SHAPE, "MXQ_GEMM_ATTR_M, _N and _K are required");
  MXQ_REQUIRE(!(d.a_dtype == MXQ_DTYPE_E5M2 && d.b_dtype == MXQ_DTYPE_E5M2), MXQ_STATUS_NOT_SUPPORTED_DTYPE,
              "A and B cannot both be E5M2 (the tensor cores take E4M3xE4M3, E4M3xE5M2 and E5M2xE4M3)");
  if (d.grouping == MXQ_GEMM_GROUPING_NONE) {
    MXQ_REQUIRE(!p.was_set(MXQ_GEMM_ATTR_NUM_GROUPS) || d.num_groups == 1, MXQ_STATUS_NOT_SUPPORTED_COMBINATION,
                "MXQ_GEMM_ATTR_NUM_GROUPS = {} needs a grouping (M or K)", d.num_groups);
    d.num_groups = 1;
  } else {
    MXQ_REQUIRE(p.was_set(MXQ_GEMM_ATTR_NUM_GROUPS), MXQ_STATUS_BAD_PARAM_SHAPE,
                "MXQ_GEMM_ATTR_NUM_GROUPS is required for a grouped GEMM");
    MXQ_REQUIRE(d.batch == 1, MXQ_STATUS_NOT_SUPPORTED_COMBINATION, "a grouped GEMM has batch 1 (is {})", d.batch);
    MXQ_REQUIRE(d.num_groups <= (int64_t(1) << 24), MXQ_STATUS_BAD_PARAM_SHAPE, "{} groups exceed the limit of 2^24",
                d.num_groups);
  }
  const int64_t b_rows = d.grouping == MXQ_GEMM_GROUPING_M ? checked_mul(d.num_groups, d.n, "G x N") : d.n;
  checked_mul(checked_mul(d.batch, d.m + 256, "M"), d.k + 256, "A bytes");
  checked_mul(checked_mul(d.batch, b_rows + 256, "N"), d.k + 256, "B bytes");
  checked_mul(checked_mul(checked_mul(d.batch * d.num_groups, d.m, "M"), d.n, "D elements"), 4, "D bytes");
}

std::vector<SlotRule> PlanOps<GemmDesc>::slots(const GemmDesc& d) {
  std::vector<SlotRule> r = {{MXQ_ARG_A_DATA, true, 1, "A FP8 data"},
                             {MXQ_ARG_A_SCALES, true, 1, "A scales"},
                             {MXQ_ARG_B_DATA, true, 1, "B FP8 data"},
                             {MXQ_ARG_B_SCALES, true, 1, "B scales"},
                             {MXQ_ARG_D, true, dtype_size(d.d_dtype), "D (output)"}};
  if (d.grouping != MXQ_GEMM_GROUPING_NONE)
    r.push_back({MXQ_ARG_GROUP_OFFSETS, true, dtype_size(d.offsets_dtype), "group end offsets"});
  return r;
}

// ---- Attention ---------------------------------------------------------------------------------
const std::vector<AttrDef<AttentionDesc>>& PlanOps<AttentionDesc>::attrs() {
  using D = AttentionDesc;
  static const std::vector<AttrDef<D>> t = {
      MXQ_ATTR_ENUM(D, MXQ_ATTN_ATTR_DIRECTION, direction, mxqAttentionDirection_t, MXQ_ATTN_FORWARD, MXQ_ATTN_BACKWARD),
      MXQ_ATTR_DIM(D, MXQ_ATTN_ATTR_BATCH, batch, 1),
      MXQ_ATTR_DIM(D, MXQ_ATTN_ATTR_HEADS_Q, heads_q, 1),
      MXQ_ATTR_DIM(D, MXQ_ATTN_ATTR_HEADS_KV, heads_kv, 1),
      MXQ_ATTR_DIM(D, MXQ_ATTN_ATTR_SEQLEN_Q, seqlen_q, 1),
      MXQ_ATTR_DIM(D, MXQ_ATTN_ATTR_SEQLEN_KV, seqlen_kv, 1),
      MXQ_ATTR_DIM(D, MXQ_ATTN_ATTR_HEAD_DIM, head_dim, 1),
      MXQ_ATTR_ENUM(D, MXQ_ATTN_ATTR_LAYOUT, layout, mxqAttentionLayout_t, MXQ_ATTN_LAYOUT_BHSD, MXQ_ATTN_LAYOUT_BSHD),
      MXQ_ATTR_ENUM(D, MXQ_ATTN_ATTR_MASK, mask, mxqAttentionMask_t, MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT,
                    MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT),
      AttrDef<D>{MXQ_ATTN_ATTR_SOFTMAX_SCALE, "MXQ_ATTN_ATTR_SOFTMAX_SCALE", AttrType::F32,
                 [](D& d, const void* v) {
                   float s = read_f32(v);
                   MXQ_REQUIRE(std::isfinite(s) && s > 0, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
                               "MXQ_ATTN_ATTR_SOFTMAX_SCALE must be finite and > 0 (is {})", s);
                   d.softmax_scale = s;
                   d.softmax_scale_set = true;
                 },
                 [](const D& d, void* v) {
                   write_f32(v, d.softmax_scale_set || d.head_dim <= 0
                                    ? d.softmax_scale
                                    : static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.head_dim))));
                 }},
      AttrDef<D>{MXQ_ATTN_ATTR_P_SCALE, "MXQ_ATTN_ATTR_P_SCALE", AttrType::F32,
                 [](D& d, const void* v) {
                   float s = read_f32(v);
                   MXQ_REQUIRE(std::isfinite(s) && s > 0, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
                               "MXQ_ATTN_ATTR_P_SCALE must be finite and > 0 (is {})", s);
                   d.p_scale = s;
                 },
                 [](const D& d, void* v) { write_f32(v, d.p_scale); }},
      MXQ_ATTR_ENUM(D, MXQ_ATTN_ATTR_SCALE_LAYOUT, scale_layout, mxqScaleLayout_t, MXQ_SCALE_LAYOUT_SWIZZLED_128x4,
                    MXQ_SCALE_LAYOUT_LINEAR),
      MXQ_ATTR_BOOL(D, MXQ_ATTN_ATTR_VARLEN, varlen),
      MXQ_ATTR_BOOL(D, MXQ_ATTN_ATTR_DETERMINISTIC, deterministic),
      MXQ_ATTR_DTYPE(D, MXQ_ATTN_ATTR_QKV_DTYPE, qkv_dtype, MXQ_DTYPE_E4M3),
  };
  return t;
}

void PlanOps<AttentionDesc>::finalize(AttentionDesc& d, const PlanT<AttentionDesc>& p) {
  MXQ_REQUIRE(p.was_set(MXQ_ATTN_ATTR_BATCH) && p.was_set(MXQ_ATTN_ATTR_HEADS_Q) && p.was_set(MXQ_ATTN_ATTR_SEQLEN_Q) &&
                  p.was_set(MXQ_ATTN_ATTR_SEQLEN_KV) && p.was_set(MXQ_ATTN_ATTR_HEAD_DIM),
              MXQ_STATUS_BAD_PARAM_SHAPE, "BATCH, HEADS_Q, SEQLEN_Q, SEQLEN_KV and HEAD_DIM are required");
  if (!p.was_set(MXQ_ATTN_ATTR_HEADS_KV)) d.heads_kv = d.heads_q;
  MXQ_REQUIRE(d.heads_q % d.heads_kv == 0, MXQ_STATUS_BAD_PARAM_SHAPE,
              "HEADS_Q ({}) must be a multiple of HEADS_KV ({})", d.heads_q, d.heads_kv);
  if (!d.softmax_scale_set) d.softmax_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.head_dim)));
  MXQ_REQUIRE(!d.varlen || d.layout == MXQ_ATTN_LAYOUT_BSHD, MXQ_STATUS_NOT_SUPPORTED_COMBINATION,
              "variable-length (packed) sequences need the BSHD layout");
  const int64_t s_max = d.seqlen_q > d.seqlen_kv ? d.seqlen_q : d.seqlen_kv;
  const int64_t h_max = d.heads_q;
  checked_mul(checked_mul(checked_mul(checked_mul(d.batch, h_max, "B x H"), s_max + 128, "x S"), d.head_dim + 128, "x D"),
              4, "tensor bytes");
}

std::vector<SlotRule> PlanOps<AttentionDesc>::slots(const AttentionDesc& d) {
  std::vector<SlotRule> r = {
      {MXQ_ARG_Q_DATA, true, 1, "Q FP8 (along D)"}, {MXQ_ARG_Q_SCALES, true, 1, "Q scales"},
      {MXQ_ARG_K_DATA, true, 1, "K FP8 (along D)"}, {MXQ_ARG_K_SCALES, true, 1, "K scales"},
      {MXQ_ARG_V_DATA, true, 1, "V FP8"},           {MXQ_ARG_V_SCALES, true, 1, "V scales"},
      {MXQ_ARG_O, true, 2, "O (bf16)"},             {MXQ_ARG_LSE, true, 4, "LSE (fp32)"},
  };
  if (d.direction == MXQ_ATTN_BACKWARD) {
    const SlotRule bwd[] = {
        {MXQ_ARG_DO_DATA, true, 1, "dO FP8 (along D)"},  {MXQ_ARG_DO_SCALES, true, 1, "dO scales"},
        {MXQ_ARG_DO, true, 2, "dO (bf16)"},              {MXQ_ARG_Q_T_DATA, true, 1, "Q FP8 (along S)"},
        {MXQ_ARG_Q_T_SCALES, true, 1, "Q (along S) scales"}, {MXQ_ARG_K_T_DATA, true, 1, "K FP8 (along S)"},
        {MXQ_ARG_K_T_SCALES, true, 1, "K (along S) scales"}, {MXQ_ARG_DO_T_DATA, true, 1, "dO FP8 (along S)"},
        {MXQ_ARG_DO_T_SCALES, true, 1, "dO (along S) scales"}, {MXQ_ARG_DQ, true, 2, "dQ (bf16)"},
        {MXQ_ARG_DK, true, 2, "dK (bf16)"},              {MXQ_ARG_DV, true, 2, "dV (bf16)"},
    };
    r.insert(r.end(), std::begin(bwd), std::end(bwd));
  }
  if (d.varlen) {
    r.push_back({MXQ_ARG_CU_SEQLENS_Q, true, 4, "cu_seqlens_q (int32)"});
    r.push_back({MXQ_ARG_CU_SEQLENS_KV, true, 4, "cu_seqlens_kv (int32)"});
  }
  return r;
}

}  // namespace mxq
