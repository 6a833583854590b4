// GPU MXFP8 attention backward tests ([attention][bwd]). Every case builds fresh random bf16 Q, K, V, dO,
// quantizes them with the library's CPU quantizer exactly as the API wants (Q, K, V, dO along D:
// rowwise over the [rows, D] memory view; Q, K, dO along S: per (b, h) columnwise, data untransposed;
// V along S for the forward), runs the CPU forward for O and LSE, then runs the backward on the GPU
// and on the CPU reference (the oracle: same quantization points, fp64 elsewhere) with poisoned
// outputs, and compares dQ, dK, dV:
//   - against the oracle by relative Frobenius error <= kTolOracle (docs/NUMERICS.md, "Attention
//     backward on the GPU": the GPU accumulates in fp32 in another order and computes P and dS in
//     fp32, so rare E4M3 rounding flips of P*p_scale and of dS, and rare flips of a dS block's
//     scale, are the only O(2^-4)-per-element differences; a layout, mask or scale bug is O(1)); a
//     miss passes only as isolated flips: at most 2 rows (position, head) differ, each by at most
//     2^-3 of the row (one flip of a dominant P entry can carry more than 1/128 of dV's norm);
//   - every element inside a sequence written (NaN poison would show), nothing written outside;
//   - against a float64 attention backward on the unquantized bf16 inputs, next to the error of the
//     oracle and of a plain bf16 attention backward on the same inputs, printed for every case; the
//     GPU must not be worse than the oracle there by more than kTolOracle.
// Both paths run every case (MXQ_ATTN_BWD_FUSED_DQ=0: dK/dV and dQ kernels; =1: dQ fused into the dK/dV
// kernel with fp32 atomics, unless the plan is DETERMINISTIC). Determinism: two runs are bitwise equal
// (dQ only on the deterministic path: the fused path's reductions land in any order; dK and dV on
// both). Bad input: clear statuses, nothing written.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/layout.h"
#include "gpu/test_gpu_common.h"
#include "mxq/mxq.h"

namespace {

using mxq_test::gpu::DeviceBuffer;
using mxq_test::gpu::Handle;

constexpr double kTolOracle = 1.0 / 128;  // relative Frobenius error, GPU vs CPU oracle

struct Case {
  int64_t b = 1, hq = 1, hkv = 1, sq = 64, skv = 64, d = 64;
  mxqAttentionLayout_t layout = MXQ_ATTN_LAYOUT_BHSD;
  mxqAttentionMask_t mask = MXQ_ATTN_MASK_NONE;
  mxqScaleLayout_t scales = MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  std::vector<int64_t> lens_q, lens_kv;  // varlen when non-empty (sq, skv are then the maxima)
  float p_scale = 256.0f;
  float dout_spread = 0.01f;  // dO's magnitude: large values give dS blocks with large MXFP8 scales
  bool deterministic = false;
  // 1 (Q) or 2 (K): channels 32.. of every row of that tensor scaled by 2^-8, so its 32-blocks'
  // scales differ by 2^8 within a row: past the bound of the FP8 products' rescale (a flag sends the
  // call to the exact kernels). 3: Q's and dO's positions in every other 64-position tile scaled by
  // 2^-8, so their 32-blocks along S differ by 2^8 within a column while each 64-query tile along D
  // stays uniform: the FP8 dK and dV products' column factors take them (no bound, no fallback).
  int outlier = 0;
  bool fallback() const { return outlier == 1 || outlier == 2; }
  // dQ, dK, dV this many bytes past a 256-byte boundary (4: the plan's required alignment, not 16: the
  // FP8 dK/dV kernel then writes dK and dV straight from its accumulators instead of through shared
  // memory).
  int out_misalign = 0;
  bool varlen() const { return !lens_q.empty(); }
};

std::string describe(const Case& c) {
  std::string s = "B" + std::to_string(c.b) + " Hq" + std::to_string(c.hq) + " Hkv" + std::to_string(c.hkv) + " Sq" +
                  std::to_string(c.sq) + " Skv" + std::to_string(c.skv) + " D" + std::to_string(c.d) +
                  (c.layout == MXQ_ATTN_LAYOUT_BSHD ? " BSHD" : " BHSD") +
                  (c.mask == MXQ_ATTN_MASK_NONE ? " no-mask" : c.mask == MXQ_ATTN_MASK_CAUSAL_TOP_LEFT ? " causal-TL" : " causal-BR") +
                  (c.scales == MXQ_SCALE_LAYOUT_LINEAR ? " linear-scales" : " swizzled-scales");
  if (c.dout_spread != 0.01f) s += " dO-spread " + std::to_string(c.dout_spread);
  if (c.outlier) s += c.outlier == 1 ? " Q-blocks-2^-8" : c.outlier == 2 ? " K-blocks-2^-8" : " Q-dO-K-V-tiles-along-S-2^-8";
  if (c.out_misalign) s += " outputs+" + std::to_string(c.out_misalign) + "B";
  if (c.varlen()) {
    s += " varlen q[";
    for (auto l : c.lens_q) s += " " + std::to_string(l);
    s += " ] kv[";
    for (auto l : c.lens_kv) s += " " + std::to_string(l);
    s += " ]";
  }
  return s;
}

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
double from_bf16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
double round_bf16(double x) { return from_bf16(to_bf16(static_cast<float>(x))); }

// Memory geometry of one side (q or kv), as the API defines it.
struct Side {
  bool bshd = false;
  int64_t heads = 0, smax = 0, d = 0, batch = 0;
  std::vector<int64_t> start, len;
  int64_t rows() const { return bshd ? (start.back() + len.back()) * heads : batch * heads * smax; }
  int64_t row(int64_t b, int64_t h, int64_t s) const { return bshd ? (start[b] + s) * heads + h : (b * heads + h) * smax + s; }
};
Side make_side(const Case& c, bool q) {
  Side s;
  s.bshd = c.layout == MXQ_ATTN_LAYOUT_BSHD;
  s.heads = q ? c.hq : c.hkv;
  s.smax = q ? c.sq : c.skv;
  s.d = c.d;
  s.batch = c.b;
  const auto& lens = q ? c.lens_q : c.lens_kv;
  int64_t at = 0;
  for (int64_t b = 0; b < c.b; ++b) {
    const int64_t l = lens.empty() ? s.smax : lens[b];
    s.start.push_back(at);
    s.len.push_back(l);
    at += lens.empty() ? s.smax : l;
  }
  return s;
}

struct Q8 {
  std::vector<uint8_t> data, scales;
};

// CPU quantization of a bf16 tensor [batch, rows, cols], rowwise or columnwise (untransposed).
Q8 quantize(mxqHandle_t cpu, const std::vector<uint16_t>& x, int64_t batch, int64_t rows, int64_t cols, bool colwise,
            mxqScaleLayout_t sl) {
  mxqQuantizePlan_t p = nullptr;
  MXQ_REQUIRE_OK(mxqQuantizePlanCreate(cpu, &p));
  auto set32 = [&](mxqQuantizeAttribute_t a, int32_t v) { MXQ_REQUIRE_OK(mxqQuantizePlanSetAttribute(p, a, &v, 4)); };
  auto set64 = [&](mxqQuantizeAttribute_t a, int64_t v) { MXQ_REQUIRE_OK(mxqQuantizePlanSetAttribute(p, a, &v, 8)); };
  set32(MXQ_QUANTIZE_ATTR_INPUT_DTYPE, MXQ_DTYPE_BF16);
  set32(MXQ_QUANTIZE_ATTR_DIRECTION, colwise ? MXQ_QUANTIZE_COLUMNWISE : MXQ_QUANTIZE_ROWWISE);
  set32(MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED, 0);
  set32(MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, sl);
  set64(MXQ_QUANTIZE_ATTR_BATCH, batch);
  set64(MXQ_QUANTIZE_ATTR_ROWS, rows);
  set64(MXQ_QUANTIZE_ATTR_COLS, cols);
  MXQ_REQUIRE_OK(mxqQuantizePlanFinalize(p));
  const mxqArgSlot_t ds = colwise ? MXQ_ARG_COLWISE_DATA : MXQ_ARG_ROWWISE_DATA;
  const mxqArgSlot_t ss = colwise ? MXQ_ARG_COLWISE_SCALES : MXQ_ARG_ROWWISE_SCALES;
  size_t nd = 0, ns = 0;
  MXQ_REQUIRE_OK(mxqQuantizePlanGetOutputSize(p, ds, &nd));
  MXQ_REQUIRE_OK(mxqQuantizePlanGetOutputSize(p, ss, &ns));
  Q8 q;
  q.data.assign(nd, 0);
  q.scales.assign(ns, 0xFF);  // swizzle padding: NaN scales, so a kernel reading padding shows NaNs
  const mxqExecArg_t args[] = {{MXQ_ARG_X, 0, const_cast<uint16_t*>(x.data())}, {ds, 0, q.data.data()}, {ss, 0, q.scales.data()}};
  MXQ_REQUIRE_OK(mxqQuantizeExecute(cpu, p, args, 3, nullptr, 0, nullptr));
  MXQ_REQUIRE_OK(mxqQuantizePlanDestroy(p));
  return q;
}

// Along D: the [rows, D] memory view, rowwise.
Q8 quantize_along_d(mxqHandle_t cpu, const Side& s, const std::vector<uint16_t>& x, mxqScaleLayout_t sl) {
  return quantize(cpu, x, 1, s.rows(), s.d, false, sl);
}
// Along S: each (b, h) [Smax, D] matrix gathered (zeros past the sequence), quantized columnwise as a
// batched [B*H] tensor; the FP8 data is scattered back into the tensor's own layout.
Q8 quantize_along_s(mxqHandle_t cpu, const Side& s, const std::vector<uint16_t>& x, mxqScaleLayout_t sl) {
  const int64_t n = s.batch * s.heads;
  std::vector<uint16_t> g(static_cast<size_t>(n * s.smax * s.d), 0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t p = 0; p < s.len[b]; ++p)
        std::memcpy(&g[static_cast<size_t>(((b * s.heads + h) * s.smax + p) * s.d)], &x[static_cast<size_t>(s.row(b, h, p) * s.d)],
                    static_cast<size_t>(s.d) * 2);
  Q8 q = quantize(cpu, g, n, s.smax, s.d, true, sl);
  Q8 out;
  out.scales = q.scales;
  out.data.assign(static_cast<size_t>(s.rows() * s.d), 0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t p = 0; p < s.len[b]; ++p)
        std::memcpy(&out.data[static_cast<size_t>(s.row(b, h, p) * s.d)], &q.data[static_cast<size_t>(((b * s.heads + h) * s.smax + p) * s.d)],
                    static_cast<size_t>(s.d));
  return out;
}

mxqAttentionPlan_t make_plan(mxqHandle_t h, const Case& c, mxqAttentionDirection_t dir, mxqStatus_t* fin = nullptr) {
  mxqAttentionPlan_t p = nullptr;
  MXQ_REQUIRE_OK(mxqAttentionPlanCreate(h, &p));
  auto set32 = [&](mxqAttentionAttribute_t a, int32_t v) { MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, a, &v, 4)); };
  auto set64 = [&](mxqAttentionAttribute_t a, int64_t v) { MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, a, &v, 8)); };
  set32(MXQ_ATTN_ATTR_DIRECTION, dir);
  set64(MXQ_ATTN_ATTR_BATCH, c.b);
  set64(MXQ_ATTN_ATTR_HEADS_Q, c.hq);
  set64(MXQ_ATTN_ATTR_HEADS_KV, c.hkv);
  set64(MXQ_ATTN_ATTR_SEQLEN_Q, c.sq);
  set64(MXQ_ATTN_ATTR_SEQLEN_KV, c.skv);
  set64(MXQ_ATTN_ATTR_HEAD_DIM, c.d);
  set32(MXQ_ATTN_ATTR_LAYOUT, c.layout);
  set32(MXQ_ATTN_ATTR_MASK, c.mask);
  set32(MXQ_ATTN_ATTR_SCALE_LAYOUT, c.scales);
  set32(MXQ_ATTN_ATTR_VARLEN, c.varlen() ? 1 : 0);
  set32(MXQ_ATTN_ATTR_DETERMINISTIC, c.deterministic ? 1 : 0);
  MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, MXQ_ATTN_ATTR_P_SCALE, &c.p_scale, 4));
  const mxqStatus_t st = mxqAttentionPlanFinalize(p);
  if (fin) {
    *fin = st;
  } else {
    INFO("finalize: " << mxqGetStatusName(st) << ": " << mxqGetLastErrorMessage());
    REQUIRE(st == MXQ_STATUS_SUCCESS);
  }
  return p;
}

// Everything one backward needs, on the host.
struct Problem {
  Case c;
  Side qs, ks;
  std::vector<uint16_t> q, k, v, dout, o;  // bf16
  std::vector<float> lse;
  Q8 q_d, k_d, v_d, do_d, q_s, k_s, do_s, v_s;
  std::vector<int32_t> cu_q, cu_kv;
  double scale = 0.0;

  Problem(const Case& cs, mxqHandle_t cpu, std::mt19937_64& rng) : c(cs), qs(make_side(cs, true)), ks(make_side(cs, false)) {
    scale = 1.0 / std::sqrt(static_cast<double>(c.d));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    // Per-row magnitudes spread over three binades, so the 32-blocks get different scales while the
    // logits stay O(1) (larger logits make the float64 comparison all about input quantization).
    auto fill = [&](std::vector<uint16_t>& t, int64_t rows, float spread) {
      t.resize(static_cast<size_t>(rows * c.d));
      for (int64_t r = 0; r < rows; ++r) {
        const float mag = std::ldexp(1.0f, static_cast<int>(rng() % 3) - 1) * spread;
        for (int64_t x = 0; x < c.d; ++x) t[static_cast<size_t>(r * c.d + x)] = to_bf16(nd(rng) * mag);
      }
    };
    fill(q, qs.rows(), 1.0f);
    fill(k, ks.rows(), 1.0f);
    fill(v, ks.rows(), 1.0f);
    fill(dout, qs.rows(), c.dout_spread);
    if (c.fallback()) {
      std::vector<uint16_t>& t = c.outlier == 1 ? q : k;
      for (size_t i = 0; i < t.size(); ++i)
        if (static_cast<int64_t>(i) % c.d >= 32) t[i] = to_bf16(static_cast<float>(from_bf16(t[i]) * 0x1p-8));
    } else if (c.outlier == 3) {
      REQUIRE(!c.varlen());  // outlier 3: fixed lengths
      for (int64_t r = 0; r < qs.rows(); ++r) {
        const int64_t pos = c.layout == MXQ_ATTN_LAYOUT_BSHD ? r / c.hq % c.sq : r % c.sq;
        if (pos / 64 % 2 == 1)
          for (int64_t x = 0; x < c.d; ++x)
            for (std::vector<uint16_t>* t : {&q, &dout}) {
              uint16_t& e = (*t)[static_cast<size_t>(r * c.d + x)];
              e = to_bf16(static_cast<float>(from_bf16(e) * 0x1p-8));
            }
      }
      // K too, in alternate 64-position tiles of its own (FP8 dQ's K_col' column factors), and V in
      // alternate 32-position blocks, so that dS = P (dP - delta) of a query spans binades across the
      // kv blocks of a CTA (FP8 dQ's one exponent per query column over 128 kv rows shifts the smaller
      // blocks' codes).
      for (int64_t r = 0; r < ks.rows(); ++r) {
        const int64_t pos = c.layout == MXQ_ATTN_LAYOUT_BSHD ? r / c.hkv % c.skv : r % c.skv;
        for (int64_t x = 0; x < c.d; ++x) {
          uint16_t& e = k[static_cast<size_t>(r * c.d + x)];
          if (pos / 64 % 2 == 0) e = to_bf16(static_cast<float>(from_bf16(e) * 0x1p-8));
          uint16_t& f = v[static_cast<size_t>(r * c.d + x)];
          if (pos / 32 % 2 == 1) f = to_bf16(static_cast<float>(from_bf16(f) * 0x1p-8));
        }
      }
    }
    q_d = quantize_along_d(cpu, qs, q, c.scales);
    k_d = quantize_along_d(cpu, ks, k, c.scales);
    v_d = quantize_along_d(cpu, ks, v, c.scales);
    do_d = quantize_along_d(cpu, qs, dout, c.scales);
    q_s = quantize_along_s(cpu, qs, q, c.scales);
    k_s = quantize_along_s(cpu, ks, k, c.scales);
    v_s = quantize_along_s(cpu, ks, v, c.scales);
    do_s = quantize_along_s(cpu, qs, dout, c.scales);
    if (c.varlen()) {
      cu_q.push_back(0);
      cu_kv.push_back(0);
      for (int64_t b = 0; b < c.b; ++b) {
        cu_q.push_back(static_cast<int32_t>(qs.start[b] + qs.len[b]));
        cu_kv.push_back(static_cast<int32_t>(ks.start[b] + ks.len[b]));
      }
    }
    // O and LSE from the CPU forward.
    o.assign(q.size(), 0);
    lse.assign(static_cast<size_t>(c.b * c.hq * c.sq), 0.0f);
    mxqAttentionPlan_t fwd = make_plan(cpu, c, MXQ_ATTN_FORWARD);
    std::vector<mxqExecArg_t> a = {{MXQ_ARG_Q_DATA, 0, q_d.data.data()}, {MXQ_ARG_Q_SCALES, 0, q_d.scales.data()},
                                   {MXQ_ARG_K_DATA, 0, k_d.data.data()}, {MXQ_ARG_K_SCALES, 0, k_d.scales.data()},
                                   {MXQ_ARG_V_DATA, 0, v_s.data.data()}, {MXQ_ARG_V_SCALES, 0, v_s.scales.data()},
                                   {MXQ_ARG_O, 0, o.data()},             {MXQ_ARG_LSE, 0, lse.data()}};
    if (c.varlen()) {
      a.push_back({MXQ_ARG_CU_SEQLENS_Q, 0, cu_q.data()});
      a.push_back({MXQ_ARG_CU_SEQLENS_KV, 0, cu_kv.data()});
    }
    MXQ_REQUIRE_OK(mxqAttentionExecute(cpu, fwd, a.data(), static_cast<int>(a.size()), nullptr, 0, nullptr));
    MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(fwd));
  }
};

// Backward argument list over the given pointers (host vectors for the CPU, device buffers for the GPU).
struct Ptrs {
  void *q, *qs, *k, *ks, *v, *vs, *dod, *dods, *qt, *qts, *kt, *kts, *dot, *dots, *o, *dout, *lse, *dq, *dk, *dv, *cuq, *cukv;
};
std::vector<mxqExecArg_t> bwd_args(const Ptrs& p, bool varlen) {
  std::vector<mxqExecArg_t> a = {
      {MXQ_ARG_Q_DATA, 0, p.q},        {MXQ_ARG_Q_SCALES, 0, p.qs},     {MXQ_ARG_K_DATA, 0, p.k},
      {MXQ_ARG_K_SCALES, 0, p.ks},     {MXQ_ARG_V_DATA, 0, p.v},        {MXQ_ARG_V_SCALES, 0, p.vs},
      {MXQ_ARG_DO_DATA, 0, p.dod},     {MXQ_ARG_DO_SCALES, 0, p.dods},  {MXQ_ARG_Q_T_DATA, 0, p.qt},
      {MXQ_ARG_Q_T_SCALES, 0, p.qts},  {MXQ_ARG_K_T_DATA, 0, p.kt},     {MXQ_ARG_K_T_SCALES, 0, p.kts},
      {MXQ_ARG_DO_T_DATA, 0, p.dot},   {MXQ_ARG_DO_T_SCALES, 0, p.dots}, {MXQ_ARG_O, 0, p.o},
      {MXQ_ARG_DO, 0, p.dout},         {MXQ_ARG_LSE, 0, p.lse},         {MXQ_ARG_DQ, 0, p.dq},
      {MXQ_ARG_DK, 0, p.dk},           {MXQ_ARG_DV, 0, p.dv}};
  if (varlen) {
    a.push_back({MXQ_ARG_CU_SEQLENS_Q, 0, p.cuq});
    a.push_back({MXQ_ARG_CU_SEQLENS_KV, 0, p.cukv});
  }
  return a;
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}
std::vector<uint16_t> as_u16(const std::vector<uint8_t>& b) {
  std::vector<uint16_t> v(b.size() / 2);
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * 2);
  return v;
}

// Device copies of a problem's inputs and the GPU output buffers.
struct DeviceInputs {
  DeviceBuffer q, qs, k, ks, v, vs, dod, dods, qt, qts, kt, kts, dot, dots, o, dout, lse, cuq, cukv, dq, dk, dv;
  explicit DeviceInputs(const Problem& P)
      : q(P.q_d.data), qs(P.q_d.scales), k(P.k_d.data), ks(P.k_d.scales), v(P.v_d.data), vs(P.v_d.scales),
        dod(P.do_d.data), dods(P.do_d.scales), qt(P.q_s.data), qts(P.q_s.scales), kt(P.k_s.data), kts(P.k_s.scales),
        dot(P.do_s.data), dots(P.do_s.scales), o(bytes_of(P.o)), dout(bytes_of(P.dout)), lse(bytes_of(P.lse)),
        cuq(bytes_of(P.cu_q.empty() ? std::vector<int32_t>{0} : P.cu_q)),
        cukv(bytes_of(P.cu_kv.empty() ? std::vector<int32_t>{0} : P.cu_kv)),
        dq(P.q.size() * 2, static_cast<size_t>(P.c.out_misalign)), dk(P.k.size() * 2, static_cast<size_t>(P.c.out_misalign)),
        dv(P.v.size() * 2, static_cast<size_t>(P.c.out_misalign)) {}
  Ptrs ptrs() const {
    return {q.ptr(), qs.ptr(), k.ptr(), ks.ptr(), v.ptr(), vs.ptr(), dod.ptr(), dods.ptr(), qt.ptr(), qts.ptr(), kt.ptr(),
            kts.ptr(), dot.ptr(), dots.ptr(), o.ptr(), dout.ptr(), lse.ptr(), dq.ptr(), dk.ptr(), dv.ptr(), cuq.ptr(), cukv.ptr()};
  }
  void poison() {
    dq.poison(0xFF);
    dk.poison(0xFF);
    dv.poison(0xFF);
  }
};

// Float64 attention backward on the bf16 inputs, unquantized; with `bf16` set, P and dS are rounded to
// bf16 before their products and the outputs to bf16 (a plain bf16 kernel's rounding points).
void plain_backward(const Problem& P, bool bf16, std::vector<double>& dq, std::vector<double>& dk, std::vector<double>& dv) {
  const Case& c = P.c;
  const int64_t D = c.d, group = c.hq / c.hkv;
  dq.assign(P.q.size(), 0.0);
  dk.assign(P.k.size(), 0.0);
  dv.assign(P.v.size(), 0.0);
  std::vector<double> pr, ds;
  for (int64_t b = 0; b < c.b; ++b) {
    const int64_t lq = P.qs.len[b], lk = P.ks.len[b];
    const int64_t off = c.mask == MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT ? lk - lq : 0;
    for (int64_t h = 0; h < c.hq; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < lq; ++i) {
        const uint16_t* qi = &P.q[static_cast<size_t>(P.qs.row(b, h, i) * D)];
        const uint16_t* gi = &P.dout[static_cast<size_t>(P.qs.row(b, h, i) * D)];
        pr.assign(static_cast<size_t>(lk), 0.0);
        ds.assign(static_cast<size_t>(lk), 0.0);
        double m = -INFINITY;
        for (int64_t j = 0; j < lk; ++j) {
          if (c.mask != MXQ_ATTN_MASK_NONE && j > i + off) {
            pr[j] = -INFINITY;
            continue;
          }
          const uint16_t* kj = &P.k[static_cast<size_t>(P.ks.row(b, hk, j) * D)];
          double s = 0;
          for (int64_t x = 0; x < D; ++x) s += from_bf16(qi[x]) * from_bf16(kj[x]);
          pr[j] = s * P.scale;
          m = std::max(m, pr[j]);
        }
        if (m == -INFINITY) continue;
        double l = 0;
        for (int64_t j = 0; j < lk; ++j) l += pr[j] == -INFINITY ? 0.0 : std::exp(pr[j] - m);
        // O (fp64) and delta = rowsum(dO * O)
        std::vector<double> oi(static_cast<size_t>(D), 0.0);
        for (int64_t j = 0; j < lk; ++j) {
          pr[j] = pr[j] == -INFINITY ? 0.0 : std::exp(pr[j] - m) / l;
          const uint16_t* vj = &P.v[static_cast<size_t>(P.ks.row(b, hk, j) * D)];
          for (int64_t x = 0; x < D; ++x) oi[x] += pr[j] * from_bf16(vj[x]);
        }
        double delta = 0;
        for (int64_t x = 0; x < D; ++x) delta += from_bf16(gi[x]) * (bf16 ? round_bf16(oi[x]) : oi[x]);
        for (int64_t j = 0; j < lk; ++j) {
          if (pr[j] == 0.0) continue;
          const uint16_t* vj = &P.v[static_cast<size_t>(P.ks.row(b, hk, j) * D)];
          double dp = 0;
          for (int64_t x = 0; x < D; ++x) dp += from_bf16(gi[x]) * from_bf16(vj[x]);
          ds[j] = pr[j] * (dp - delta) * P.scale;
          if (bf16) {
            ds[j] = round_bf16(ds[j]);
            pr[j] = round_bf16(pr[j]);
          }
        }
        double* dqi = &dq[static_cast<size_t>(P.qs.row(b, h, i) * D)];
        for (int64_t j = 0; j < lk; ++j) {
          if (pr[j] == 0.0 && ds[j] == 0.0) continue;
          const size_t kr = static_cast<size_t>(P.ks.row(b, hk, j) * D);
          for (int64_t x = 0; x < D; ++x) {
            dqi[x] += ds[j] * from_bf16(P.k[kr + x]);
            dk[kr + x] += ds[j] * from_bf16(qi[x]);
            dv[kr + x] += pr[j] * from_bf16(gi[x]);
          }
        }
      }
    }
  }
  if (bf16)
    for (auto* t : {&dq, &dk, &dv})
      for (auto& e : *t) e = round_bf16(e);
}

// Relative Frobenius error of got (bf16) against want over the elements where want is set (mask).
double rel_err(const std::vector<uint16_t>& got, const std::vector<double>& want, const std::vector<char>& inside) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!inside[i]) continue;
    const double dlt = from_bf16(got[i]) - want[i];
    num += dlt * dlt;
    den += want[i] * want[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}
std::vector<double> to_f64(const std::vector<uint16_t>& v) {
  std::vector<double> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = from_bf16(v[i]);
  return o;
}
// Elements that belong to a sequence (every element when not varlen).
std::vector<char> inside_mask(const Side& s) {
  std::vector<char> m(static_cast<size_t>(s.rows() * s.d), 0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t p = 0; p < s.len[b]; ++p)
        std::fill_n(&m[static_cast<size_t>(s.row(b, h, p) * s.d)], s.d, 1);
  return m;
}

size_t workspace_of(mxqAttentionPlan_t p) {
  size_t ws = 0;
  MXQ_REQUIRE_OK(mxqAttentionPlanGetWorkspaceSize(p, &ws));
  return ws;
}

// One GPU backward of case c on dev's inputs with a fresh plan (made under the environment the caller
// has set), outputs and workspace poisoned first: dQ, dK, dV as bf16 bits.
std::array<std::vector<uint16_t>, 3> gpu_backward(mxqHandle_t gpu, const Case& c, DeviceInputs& dev) {
  mxqAttentionPlan_t bwd = make_plan(gpu, c, MXQ_ATTN_BACKWARD);
  const size_t ws_bytes = workspace_of(bwd);
  DeviceBuffer ws(ws_bytes);
  dev.poison();
  ws.poison(0xFF);
  const auto a = bwd_args(dev.ptrs(), c.varlen());
  MXQ_REQUIRE_OK(mxqAttentionExecute(gpu, bwd, a.data(), static_cast<int>(a.size()), ws.ptr(), ws_bytes, nullptr));
  std::array<std::vector<uint16_t>, 3> out{as_u16(dev.dq.download()), as_u16(dev.dk.download()),
                                           as_u16(dev.dv.download())};
  MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(bwd));
  return out;
}


void run_case(const Case& c, mxqHandle_t gpu, mxqHandle_t cpu) {
  const uint64_t seed = mxq_test::gpu::fresh_seed();
  std::mt19937_64 rng(seed);
  INFO("seed " << seed << " case " << describe(c));
  Problem P(c, cpu, rng);

  // CPU oracle.
  std::vector<uint16_t> dq_ref(P.q.size(), 0xFFFF), dk_ref(P.k.size(), 0xFFFF), dv_ref(P.v.size(), 0xFFFF);
  {
    Problem& M = P;
    const Ptrs hp = {M.q_d.data.data(), M.q_d.scales.data(), M.k_d.data.data(), M.k_d.scales.data(), M.v_d.data.data(),
                     M.v_d.scales.data(), M.do_d.data.data(), M.do_d.scales.data(), M.q_s.data.data(), M.q_s.scales.data(),
                     M.k_s.data.data(), M.k_s.scales.data(), M.do_s.data.data(), M.do_s.scales.data(), M.o.data(),
                     M.dout.data(), M.lse.data(), dq_ref.data(), dk_ref.data(), dv_ref.data(), M.cu_q.data(), M.cu_kv.data()};
    mxqAttentionPlan_t bwd = make_plan(cpu, c, MXQ_ATTN_BACKWARD);
    const auto a = bwd_args(hp, c.varlen());
    std::vector<uint8_t> ws(workspace_of(bwd) + 256);
    void* wsp = ws.empty() ? nullptr : reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(ws.data()) + 255) & ~uintptr_t(255));
    MXQ_REQUIRE_OK(mxqAttentionExecute(cpu, bwd, a.data(), static_cast<int>(a.size()), workspace_of(bwd) ? wsp : nullptr,
                                       workspace_of(bwd), nullptr));
    MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(bwd));
  }

  DeviceInputs dev(P);
  const std::vector<char> in_q = inside_mask(P.qs), in_kv = inside_mask(P.ks);
  std::vector<double> f_dq, f_dk, f_dv, b_dq, b_dk, b_dv;
  plain_backward(P, false, f_dq, f_dk, f_dv);
  plain_backward(P, true, b_dq, b_dk, b_dv);
  // Paths: 0 the two-kernel one; 1 the fused one as plans get it (D = 128: S^T and dP^T on FP8 tensor
  // cores, the exact kernels behind them as the fallback); 2 (D = 128) the fused one, exact kernels only.
  const bool f8 = c.d == 128;
  size_t ws_of_path[3] = {0, 0, 0};
  std::vector<uint16_t> dkv_of_path[3][2];
  for (int path = 0; path < (f8 ? 3 : 2); ++path) {
    const int fused = path > 0;
    const mxq_test::gpu::ScopedEnv env("MXQ_ATTN_BWD_FUSED_DQ", fused ? "1" : "0");
    std::optional<mxq_test::gpu::ScopedEnv> env8;
    if (path == 2) env8.emplace("MXQ_ATTN_BWD_F8", "0");
    const bool dq_deterministic = !fused || c.deterministic;
    INFO("path: MXQ_ATTN_BWD_FUSED_DQ=" << fused << (path == 2 ? " MXQ_ATTN_BWD_F8=0" : ""));
    // GPU, twice (bitwise determinism), outputs poisoned before each run.
    mxqAttentionPlan_t bwd = make_plan(gpu, c, MXQ_ATTN_BACKWARD);
    const size_t ws_bytes = workspace_of(bwd);
    ws_of_path[path] = ws_bytes;
    REQUIRE(ws_bytes >= static_cast<size_t>(c.b * c.hq * c.sq) * 4);
    DeviceBuffer ws(ws_bytes);
    const auto a = bwd_args(dev.ptrs(), c.varlen());
    std::vector<uint16_t> runs[2][3];
    for (int r = 0; r < 2; ++r) {
      dev.poison();
      ws.poison(0xFF);
      MXQ_REQUIRE_OK(mxqAttentionExecute(gpu, bwd, a.data(), static_cast<int>(a.size()), ws.ptr(), ws_bytes, nullptr));
      runs[r][0] = as_u16(dev.dq.download());
      runs[r][1] = as_u16(dev.dk.download());
      runs[r][2] = as_u16(dev.dv.download());
      CHECK(dev.dq.guards_intact(0xFF));
      CHECK(dev.dk.guards_intact(0xFF));
      CHECK(dev.dv.guards_intact(0xFF));
    }
    MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(bwd));
    if (dq_deterministic) CHECK(runs[0][0] == runs[1][0]);
    CHECK(runs[0][1] == runs[1][1]);
    CHECK(runs[0][2] == runs[1][2]);

    // Written exactly where the oracle wrote, nowhere else.
    auto check_written = [&](const std::vector<uint16_t>& got, const std::vector<uint16_t>& ref, const std::vector<char>& in,
                             const char* name) {
      size_t unwritten = 0, stray = 0, nonfinite_ref = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const bool gnan = (got[i] & 0x7F80) == 0x7F80;
        if (in[i]) {
          if ((ref[i] & 0x7F80) == 0x7F80) ++nonfinite_ref;
          else if (gnan) ++unwritten;
        } else if (got[i] != 0xFFFF) {
          ++stray;
        }
      }
      INFO(name << ": " << unwritten << " elements inside a sequence not written (or non-finite), " << stray
                << " written outside, " << nonfinite_ref << " non-finite in the oracle");
      CHECK(unwritten == 0);
      CHECK(stray == 0);
      CHECK(nonfinite_ref == 0);
    };
    check_written(runs[0][0], dq_ref, in_q, "dQ");
    check_written(runs[0][1], dk_ref, in_kv, "dK");
    check_written(runs[0][2], dv_ref, in_kv, "dV");
    if (!dq_deterministic) check_written(runs[1][0], dq_ref, in_q, "dQ (second run)");

    // Errors against the oracle and against float64 / bf16 plain attention.
    const double o_q = rel_err(runs[0][0], to_f64(dq_ref), in_q), o_k = rel_err(runs[0][1], to_f64(dk_ref), in_kv),
                 o_v = rel_err(runs[0][2], to_f64(dv_ref), in_kv);
    const double g_q = rel_err(runs[0][0], f_dq, in_q), g_k = rel_err(runs[0][1], f_dk, in_kv), g_v = rel_err(runs[0][2], f_dv, in_kv);
    const double r_q = rel_err(dq_ref, f_dq, in_q), r_k = rel_err(dk_ref, f_dk, in_kv), r_v = rel_err(dv_ref, f_dv, in_kv);
    auto bf = [](const std::vector<double>& x) {
      std::vector<uint16_t> o(x.size());
      for (size_t i = 0; i < x.size(); ++i) o[i] = to_bf16(static_cast<float>(x[i]));
      return o;
    };
    const double p_q = rel_err(bf(b_dq), f_dq, in_q), p_k = rel_err(bf(b_dk), f_dk, in_kv), p_v = rel_err(bf(b_dv), f_dv, in_kv);
    dkv_of_path[path][0] = runs[0][1];
    dkv_of_path[path][1] = runs[0][2];
    std::printf("attention bwd %s %s\n  vs oracle: dQ %.2e dK %.2e dV %.2e | vs fp64 plain: GPU dQ %.3e dK %.3e dV %.3e, "
                "oracle %.3e %.3e %.3e, plain bf16 %.3e %.3e %.3e\n",
                describe(c).c_str(), path == 2 ? "[fused-dQ env, exact]" : fused ? "[fused-dQ env]" : "[two-kernel env]", o_q, o_k, o_v, g_q, g_k, g_v, r_q, r_k, r_v, p_q, p_k, p_v);
    INFO("vs oracle dQ " << o_q << " dK " << o_k << " dV " << o_v);
    // Rows (position, head) that differ from the oracle, and the largest relative error of one row.
    // A miss of kTolOracle passes only as isolated flips: at most kFlipRows rows differ, none by more
    // than one E4M3 step of a P or dS entry (2^-3 of the row). One flip of a dominant entry (a query
    // whose P is ~1 at one key sits on a rounding boundary of P * p_scale, seen with
    // MXQ_TEST_SEED=15194945609030812085: one dV row 9% off, 2.9e-2 of dV's norm) can exceed
    // kTolOracle alone when few rows carry the norm; a layout, mask or scale bug moves many rows.
    struct RowDiff {
      size_t rows = 0;
      double worst = 0;
      // The largest row difference over max(row norm, a tenth of the tensor's RMS row norm): rows that
      // are cancellation noise in the oracle too (dQ of a query that sees one key: dS = dP - delta
      // = 0 in exact arithmetic) do not count as relative errors of 1.
      double worst_floored = 0;
    };
    auto row_diff = [&](const std::vector<uint16_t>& got, const std::vector<uint16_t>& ref, const std::vector<char>& in,
                        int64_t seq, int64_t heads, const char* name, bool print) {
      std::vector<std::pair<double, size_t>> rows;
      RowDiff rd;
      const size_t d = static_cast<size_t>(c.d);
      double total = 0;
      size_t inside_rows = 0;
      for (size_t r = 0; r * d < got.size(); ++r) {
        if (!in[r * d]) continue;
        ++inside_rows;
        for (size_t x = r * d; x < (r + 1) * d; ++x) total += from_bf16(ref[x]) * from_bf16(ref[x]);
      }
      const double floor2 = inside_rows ? 0.01 * total / static_cast<double>(inside_rows) : 0.0;
      for (size_t r = 0; r * d < got.size(); ++r) {
        double e = 0, n = 0;
        for (size_t x = r * d; x < (r + 1) * d; ++x) {
          if (!in[x]) continue;
          const double df = from_bf16(got[x]) - from_bf16(ref[x]);
          e += df * df;
          n += from_bf16(ref[x]) * from_bf16(ref[x]);
        }
        if (e == 0) continue;
        rows.push_back({e, r});
        rd.worst = std::max(rd.worst, n > 0 ? std::sqrt(e / n) : 1.0);
        rd.worst_floored = std::max(rd.worst_floored, std::max(n, floor2) > 0 ? std::sqrt(e / std::max(n, floor2)) : 1.0);
      }
      rd.rows = rows.size();
      if (!print) return rd;
      std::sort(rows.rbegin(), rows.rend());
      std::printf("  %s: %zu rows differ, worst row %.2e; largest (b, h, s: squared diff):", name, rd.rows, rd.worst);
      for (size_t q = 0; q < rows.size() && q < 8; ++q) {
        const int64_t r = static_cast<int64_t>(rows[q].second);
        const bool bshd = c.layout == MXQ_ATTN_LAYOUT_BSHD;
        std::printf(" (%lld, %lld, %lld: %.2e)", static_cast<long long>(r / (seq * heads)),
                    static_cast<long long>(bshd ? r % heads : r / seq % heads),
                    static_cast<long long>(bshd ? r / heads % seq : r % seq), rows[q].first);
      }
      std::printf("\n");
      return rd;
    };
    constexpr size_t kFlipRows = 2;
    constexpr double kFlipRow = 0.125;
    // The FP8 products (path 1 at D = 128, docs/NUMERICS.md "Backward on FP8 tensor cores") perturb S
    // and dP by about 2^-13 of sum_d |q_d k_d| (the FP8 tensor core's partial sums) and by the
    // rescale's rounding (within 2^-12 of a block's largest value), so P * p_scale and dS cross an E4M3
    // rounding boundary where the oracle's sit within that of one: the same rounding of the recipe,
    // drawn again for a fraction of the entries. Their difference to the oracle is then a fraction of
    // the recipe's own error (measured 0 to 0.37 of it, typically 0.05) and no row moves by more than
    // a flip or two of one E4M3 step (2^-3) of its largest entries (rows that are cancellation noise
    // measured against a tenth of the RMS row); an indexing, factor or mask bug moves whole rows by
    // O(1). Against float64 they must be as close as the oracle (below). Where the recipe itself is
    // within kTolOracle of float64 (a key or two per query: dS is mostly cancellation, measured 7e2 x
    // the recipe's error against the oracle at Sq = Skv = 1), only that comparison is meaningful: the
    // GPU's error against float64 within 1.25 x the recipe's + kTolOracle.
    // The row bound assumes that a row's largest entries round on E4M3's normal grid. dV's rows are sums
    // of Pq = E4M3(P * p_scale) over the queries: with p_scale below 1 (the p_scale 1/32 case) most of
    // them are subnormal codes, 2^-9 apart whatever their size, so one flip can move a dV row whose
    // queries all see its key weakly by much more (measured on an H100: 0.384 on one row of 150 with
    // MXQ_TEST_SEED=3956493290532438785, main's kernels and this one's alike, while the aggregate was
    // 0.098 of the recipe's error). There only the aggregate bound and the float64 comparison apply.
    const bool f8_products = f8 && path == 1 && !c.deterministic && !c.fallback();
    constexpr double kF8Recipe = 0.5, kF8Row = 0.25;
    auto oracle_ok = [&](double o, double recipe, double vs_f64, const std::vector<uint16_t>& got,
                         const std::vector<uint16_t>& ref, const std::vector<char>& in, int64_t seq, int64_t heads,
                         const char* name, bool subnormal_rows = false) {
      if (o <= kTolOracle) return true;
      if (f8_products) {
        if (recipe <= kTolOracle) return vs_f64 <= 1.25 * recipe + kTolOracle;
        const RowDiff rd = row_diff(got, ref, in, seq, heads, name, true);
        std::printf("  %s: FP8 products, %.3f of the recipe's error, worst row %.3f (floored)%s\n", name, o / recipe,
                    rd.worst_floored, subnormal_rows ? " (row bound not applied: subnormal Pq)" : "");
        return o <= kF8Recipe * recipe + kTolOracle && (subnormal_rows || rd.worst_floored <= kF8Row);
      }
      const RowDiff rd = row_diff(got, ref, in, seq, heads, name, true);
      return rd.rows <= kFlipRows && rd.worst <= kFlipRow;
    };
    CHECK(oracle_ok(o_q, r_q, g_q, runs[0][0], dq_ref, in_q, c.sq, c.hq, "dQ"));
    CHECK(oracle_ok(o_k, r_k, g_k, runs[0][1], dk_ref, in_kv, c.skv, c.hkv, "dK"));
    CHECK(oracle_ok(o_v, r_v, g_v, runs[0][2], dv_ref, in_kv, c.skv, c.hkv, "dV", c.p_scale < 1.0f));
    INFO("vs fp64: GPU " << g_q << " " << g_k << " " << g_v << ", oracle " << r_q << " " << r_k << " " << r_v);
    CHECK(g_q <= r_q + kTolOracle);
    CHECK(g_k <= r_k + kTolOracle);
    CHECK(g_v <= r_v + kTolOracle);
    if (!dq_deterministic) {  // the second run's dQ (other reduction order) meets the same bound
      const double o_q2 = rel_err(runs[1][0], to_f64(dq_ref), in_q);
      INFO("second run vs oracle dQ " << o_q2);
      CHECK(oracle_ok(o_q2, r_q, rel_err(runs[1][0], f_dq, in_q), runs[1][0], dq_ref, in_q, c.sq, c.hq,
                      "dQ (second run)"));
    }
  }
  // The fused path (taken unless the plan is deterministic) adds the fp32 dQ accumulator to the
  // workspace and drops the kv side's three bf16 copies (its dK/dV kernel dequantizes K, V and K_col).
  const size_t acc_bytes = static_cast<size_t>(c.b * c.hq * ((c.sq + 127) / 128 * 128) * c.d * 4);
  const size_t kv_bytes = static_cast<size_t>(3 * c.b * c.hkv * ((c.skv + 127) / 128 * 128) * c.d * 2);
  // ... and one int32 counter per 64-row q tile (256-byte aligned).
  const size_t cnt_bytes = static_cast<size_t>((c.b * c.hq * ((c.sq + 127) / 128 * 2) * 4 + 255) / 256 * 256);
  const size_t ws_fused_exact = f8 ? ws_of_path[2] : ws_of_path[1];
  CHECK(ws_fused_exact + (c.deterministic ? 0 : kv_bytes) ==
        ws_of_path[0] + (c.deterministic ? 0 : acc_bytes + cnt_bytes));
  if (f8 && !c.deterministic) {
    // The FP8 products add the Q' and dO' tile factors (a float per 64-row q tile each, 256-byte
    // aligned), the flag (256 bytes) and Q_col's, dO_col's and K_col's column factors (a float per (b,
    // kv head, d) each, 256-byte aligned); Q', dO', Q_col' and dO_col' take half of the bf16 copies'
    // space (the dK/dV kernel writes its K_col' tile itself).
    const size_t col_bytes = static_cast<size_t>((c.b * c.hkv * c.d * 4 + 255) / 256 * 256);
    CHECK(ws_of_path[1] == ws_fused_exact + 2 * cnt_bytes + 256 + 3 * col_bytes);
    // dK and dV are deterministic on the fused path. Past the rescale's bound the flag sends the call
    // to the exact kernels, whose bits these must then be; otherwise the FP8 products ran, and their
    // sums (other roundings than bf16 wgmma's) leave some output different from the exact kernels'.
    if (c.fallback()) {
      CHECK(dkv_of_path[1][0] == dkv_of_path[2][0]);
      CHECK(dkv_of_path[1][1] == dkv_of_path[2][1]);
    } else if (c.sq >= 64 && c.skv >= 64) {
      CHECK((dkv_of_path[1][0] != dkv_of_path[2][0] || dkv_of_path[1][1] != dkv_of_path[2][1]));
    }
  }
}

}  // namespace

TEST_CASE("gpu attention bwd: basic, head dims, layouts, scale layouts", "[gpu][attention][bwd]") {
  Handle gpu(MXQ_BACKEND_CUDA), cpu(MXQ_BACKEND_CPU);
  Case c;
  SECTION("B1 H1 S64 D64") { run_case(c, gpu, cpu); }
  SECTION("D128 S256 GQA BSHD") {
    c.b = 2, c.hq = 4, c.hkv = 2, c.sq = 256, c.skv = 256, c.d = 128, c.layout = MXQ_ATTN_LAYOUT_BSHD;
    run_case(c, gpu, cpu);
  }
  SECTION("D128 outputs 4-byte aligned (dK, dV without the shared-memory epilogue)") {
    c.b = 1, c.hq = 2, c.hkv = 1, c.sq = 200, c.skv = 190, c.d = 128, c.out_misalign = 4;
    run_case(c, gpu, cpu);
  }
  SECTION("D64 linear scales odd lengths") {
    c.b = 2, c.hq = 2, c.hkv = 2, c.sq = 200, c.skv = 129, c.d = 64, c.scales = MXQ_SCALE_LAYOUT_LINEAR;
    run_case(c, gpu, cpu);
  }
  SECTION("D128 linear scales BHSD Sq33 Skv200") {
    c.hq = 3, c.hkv = 3, c.sq = 33, c.skv = 200, c.d = 128, c.scales = MXQ_SCALE_LAYOUT_LINEAR;
    run_case(c, gpu, cpu);
  }
  SECTION("length 1") {
    c.sq = 1, c.skv = 1, c.d = 128;
    run_case(c, gpu, cpu);
    c.sq = 1, c.skv = 129;
    run_case(c, gpu, cpu);
    c.sq = 129, c.skv = 1, c.d = 64;
    run_case(c, gpu, cpu);
  }
  // The fused path stages each step's dQ tile and hands it to the reducer after other work (D = 128:
  // behind the next step's dP^T; D = 64: behind the next step's front): 8 query heads on one KV head
  // give 64 steps per KV block, whose staging tiles rotate many times, and 4 KV blocks add into every
  // dQ row.
  SECTION("many steps per KV block, dQ from 4 KV blocks") {
    c.hq = 8, c.hkv = 1, c.sq = 512, c.skv = 512;
    c.d = 64;
    run_case(c, gpu, cpu);
    c.d = 128;
    run_case(c, gpu, cpu);
  }
  SECTION("p_scale not a power of two") {
    c.sq = 100, c.skv = 150, c.p_scale = 300.0f;
    run_case(c, gpu, cpu);
  }
  // softmax_scale / p_scale >= 2 (here ~2.8 at D = 128, 4 at D = 64): outside the range where the
  // kernels fold it into dS's quantization scales (MXQ_BWD_FOLD), so every dS block takes the exact form.
  SECTION("p_scale 1/32: dS's scale fold out of range") {
    c.sq = 100, c.skv = 150, c.p_scale = 1.0f / 32;
    c.d = 128;
    run_case(c, gpu, cpu);
    c.d = 64;
    run_case(c, gpu, cpu);
  }
  // dS blocks with scale exponents past 134 (amax > 448 * 2^7) leave the kernels' fast E4M3 -> bf16
  // conversion for the exact one (per warp); 2^16 gives a mix of both in one launch, 2^20 mostly the exact one.
  SECTION("large dO: dS scales past the fast conversion") {
    c.sq = 200, c.skv = 129, c.d = 128, c.dout_spread = 65536.0f;
    run_case(c, gpu, cpu);
    c.d = 64, c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, c.dout_spread = 1048576.0f;
    run_case(c, gpu, cpu);
  }
}

// The FP8 products' rescale bound (docs/NUMERICS.md): Q blocks past it are found by the prep kernel
// before the FP8 dK/dV kernel starts, K blocks by that kernel itself (its CTAs that saw no flag have
// run); either way the exact kernels behind redo the whole call (dK, dV bitwise theirs, checked in
// run_case).
TEST_CASE("gpu attention bwd: FP8 products' fallback", "[gpu][attention][bwd]") {
  Handle gpu(MXQ_BACKEND_CUDA), cpu(MXQ_BACKEND_CPU);
  Case c;
  c.hq = 2, c.hkv = 1, c.sq = 200, c.skv = 300, c.d = 128;
  SECTION("Q blocks past the bound") {
    c.outlier = 1;
    run_case(c, gpu, cpu);
  }
  SECTION("K blocks past the bound, causal") {
    c.outlier = 2, c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
    run_case(c, gpu, cpu);
  }
  // Not a fallback: Q's and dO's 32-blocks along S 2^8 apart within a column (the FP8 dK and dV
  // products' Q_col' and dO_col' have one factor per column, so the smaller blocks are shifted by
  // 2^-8 and partly rounded on E4M3's subnormal grid) must still meet the FP8 products' tolerances,
  // and the FP8 kernels must have run (dK, dV differ from the exact kernels', checked in run_case).
  SECTION("Q, dO, K and V tiles 2^8 apart along S (FP8 dK, dV and dQ scale factors, no fallback), GQA BSHD") {
    c.hq = 4, c.hkv = 2, c.sq = 256, c.skv = 200, c.outlier = 3, c.layout = MXQ_ATTN_LAYOUT_BSHD;
    run_case(c, gpu, cpu);
  }
}

// A NaN in dS (here from delta = rowsum(dO * O) of one query row, through a NaN in the bf16 dO, which
// no FP8 operand carries) raises the FP8 dK/dV kernel's flag (ds_rows_to_f8: a NaN or Inf row maximum),
// and the exact kernels behind redo the call: dK and dV are bitwise those of MXQ_ATTN_BWD_F8=0. Under
// the causal mask the NaN reaches only the dK rows of the keys that query sees (dS = P (dP - delta),
// masked entries set to 0), so the other rows, finite, would show the FP8 products' other bits had
// the call stayed on the FP8 kernels; dV holds no NaN (it does not read delta).
TEST_CASE("gpu attention bwd: a NaN in dS sends the FP8 path to the exact kernels", "[gpu][attention][bwd]") {
  Handle gpu(MXQ_BACKEND_CUDA), cpu(MXQ_BACKEND_CPU);
  Case c;
  c.hq = 2, c.hkv = 1, c.sq = 200, c.skv = 150, c.d = 128, c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
  const uint64_t seed = mxq_test::gpu::fresh_seed();
  std::mt19937_64 rng(seed);
  INFO("seed " << seed);
  Problem P(c, cpu, rng);
  P.dout[static_cast<size_t>(P.qs.row(0, 1, 77) * c.d + 5)] = 0x7FC0;  // bf16 NaN: query 77 of head 1
  DeviceInputs dev(P);
  const mxq_test::gpu::ScopedEnv fused("MXQ_ATTN_BWD_FUSED_DQ", "1");
  std::vector<uint16_t> out[2][2];
  for (int path = 0; path < 2; ++path) {
    std::optional<mxq_test::gpu::ScopedEnv> env8;
    if (path == 1) env8.emplace("MXQ_ATTN_BWD_F8", "0");
    auto r = gpu_backward(gpu, c, dev);
    out[path][0] = std::move(r[1]);
    out[path][1] = std::move(r[2]);
  }
  CHECK(out[0][0] == out[1][0]);
  CHECK(out[0][1] == out[1][1]);
  auto nans = [](const std::vector<uint16_t>& t) {
    size_t n = 0;
    for (uint16_t x : t) n += (x & 0x7FFFu) > 0x7F80u;
    return n;
  };
  const size_t dk_nans = nans(out[0][0]);
  INFO("dK NaNs: " << dk_nans << " of " << out[0][0].size());
  CHECK(dk_nans > 0);
  CHECK(dk_nans <= static_cast<size_t>(78 * c.d));  // keys 0..77 of 150 at most
  CHECK(nans(out[0][1]) == 0);
}

TEST_CASE("gpu attention bwd: masks and GQA / MQA", "[gpu][attention][bwd]") {
  Handle gpu(MXQ_BACKEND_CUDA), cpu(MXQ_BACKEND_CPU);
  Case c;
  SECTION("causal top-left D128 S200 GQA") {
    c.b = 2, c.hq = 4, c.hkv = 2, c.sq = 200, c.skv = 200, c.d = 128, c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
    run_case(c, gpu, cpu);
  }
  SECTION("causal top-left Sq > Skv, MQA, BSHD") {
    c.hq = 4, c.hkv = 1, c.sq = 300, c.skv = 129, c.d = 64, c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
    c.layout = MXQ_ATTN_LAYOUT_BSHD;
    run_case(c, gpu, cpu);
  }
  SECTION("causal bottom-right Sq < Skv") {
    c.hq = 2, c.hkv = 1, c.sq = 33, c.skv = 300, c.d = 128, c.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
    run_case(c, gpu, cpu);
  }
  SECTION("causal bottom-right Sq > Skv (rows with no visible key)") {
    c.hq = 2, c.hkv = 2, c.sq = 200, c.skv = 33, c.d = 64, c.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
    c.layout = MXQ_ATTN_LAYOUT_BSHD;
    run_case(c, gpu, cpu);
  }
  // Many dK/dV CTAs of unequal length (3 kv blocks per pair, 9 (batch, KV head) pairs) on both
  // paths and head dims: a CTA that maps to the wrong (batch, head, kv block), or none, leaves
  // poisoned or wrong dK / dV rows (a CTA order by work was tried on this case: PERFORMANCE.md).
  SECTION("causal top-left, 9 (batch, KV head) pairs, 3 kv blocks: both paths, D 128 and 64") {
    c.b = 3, c.hq = 6, c.hkv = 3, c.sq = 300, c.skv = 300, c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
    for (const int64_t d : {128, 64}) {
      for (const bool det : {false, true}) {
        c.d = d, c.deterministic = det;
        run_case(c, gpu, cpu);
      }
    }
  }
  // Fused dQ: the post pass converts a q tile once its counter says every kv CTA that reaches it has
  // added its part (kernels: dq_contributors); here that number differs from tile to tile (1..9 kv
  // blocks), with whole tiles that no key reaches (bottom-right, Sq > Skv). A miscount leaves dQ
  // rows poisoned or partial.
  SECTION("causal, many kv blocks per q tile: bottom-right Sq 700 Skv 1100, top-left Sq 1100 Skv 700") {
    c.b = 1, c.hq = 2, c.hkv = 1, c.d = 128, c.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
    c.sq = 700, c.skv = 1100;
    run_case(c, gpu, cpu);
    c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, c.sq = 1100, c.skv = 700;
    run_case(c, gpu, cpu);
    c.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
    run_case(c, gpu, cpu);
  }
  SECTION("causal top-left, 8 query heads per KV head, deterministic attribute") {
    c.b = 1, c.hq = 8, c.hkv = 1, c.sq = 257, c.skv = 257, c.d = 128, c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
    c.deterministic = true;
    run_case(c, gpu, cpu);
  }
}

// Under a causal mask the plan may launch the dK/dV grid as chunks of (batch, KV head) pairs, kv-block
// major within a chunk (src/cuda/op_attention_bwd.cpp, dkv_cta_heads; the shapes here are too small for
// its rule, so MXQ_ATTN_BWD_CTA_HEADS sets the chunk). 9 pairs in chunks of 2 and 4 leave a short last
// chunk (its missing pairs' CTAs return). A CTA that maps to the wrong or no (batch, head, kv block)
// leaves poisoned or wrong rows (run_case, every path: two-kernel, fused exact, FP8 and its exact
// fallback); each CTA computes its kv rows' dK and dV alone, so they are bitwise the head-major
// order's, and so is dQ on the deterministic path.
TEST_CASE("gpu attention bwd: the dK/dV grid in chunks of (batch, KV head) pairs", "[gpu][attention][bwd]") {
  Handle gpu(MXQ_BACKEND_CUDA), cpu(MXQ_BACKEND_CPU);
  Case c;
  c.b = 3, c.hq = 6, c.hkv = 3, c.sq = 300, c.skv = 300, c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
  SECTION("every path, D 128 and 64, chunks of 2 and 4 pairs") {
    for (const char* chunk : {"2", "4"}) {
      const mxq_test::gpu::ScopedEnv env("MXQ_ATTN_BWD_CTA_HEADS", chunk);
      for (const int64_t d : {128, 64}) {
        for (const bool det : {false, true}) {
          c.d = d, c.deterministic = det;
          run_case(c, gpu, cpu);
        }
      }
    }
  }
  SECTION("the FP8 path's fallback (K blocks past the bound), bottom-right, chunks of 4 pairs") {
    const mxq_test::gpu::ScopedEnv env("MXQ_ATTN_BWD_CTA_HEADS", "4");
    c.d = 128, c.outlier = 2, c.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT, c.sq = 200;
    run_case(c, gpu, cpu);
  }
  SECTION("dK, dV (and the deterministic path's dQ) bitwise the head-major order's") {
    const uint64_t seed = mxq_test::gpu::fresh_seed();
    std::mt19937_64 rng(seed);
    INFO("seed " << seed);
    for (const int64_t d : {128, 64}) {
      for (const bool det : {false, true}) {
        c.d = d, c.deterministic = det;
        INFO("D " << d << (det ? " deterministic" : " fused"));
        Problem P(c, cpu, rng);
        DeviceInputs dev(P);
        std::array<std::vector<uint16_t>, 3> out[2];
        for (int order = 0; order < 2; ++order) {
          const mxq_test::gpu::ScopedEnv env("MXQ_ATTN_BWD_CTA_HEADS", order == 0 ? "1" : "4");
          out[order] = gpu_backward(gpu, c, dev);
        }
        CHECK(out[0][1] == out[1][1]);
        CHECK(out[0][2] == out[1][2]);
        if (det) CHECK(out[0][0] == out[1][0]);
      }
    }
  }
}

TEST_CASE("gpu attention bwd: varlen", "[gpu][attention][bwd]") {
  Handle gpu(MXQ_BACKEND_CUDA), cpu(MXQ_BACKEND_CPU);
  Case c;
  c.layout = MXQ_ATTN_LAYOUT_BSHD;
  c.b = 4, c.hq = 4, c.hkv = 2;
  c.lens_q = {1, 130, 77, 0};
  c.lens_kv = {129, 33, 200, 64};
  c.sq = 130, c.skv = 200;
  SECTION("no mask D64") {
    c.d = 64;
    run_case(c, gpu, cpu);
  }
  SECTION("causal top-left D128 linear scales") {
    c.d = 128, c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, c.scales = MXQ_SCALE_LAYOUT_LINEAR;
    run_case(c, gpu, cpu);
  }
  SECTION("causal bottom-right D128") {
    c.d = 128, c.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
    run_case(c, gpu, cpu);
  }
}

TEST_CASE("gpu attention bwd: plans it declines and bad arguments", "[gpu][attention][bwd]") {
  Handle gpu(MXQ_BACKEND_CUDA), cpu(MXQ_BACKEND_CPU);
  Case c;
  c.sq = 64, c.skv = 64;
  SECTION("head dim 96 is declined with a reason") {
    c.d = 96;
    mxqStatus_t st;
    mxqAttentionPlan_t p = make_plan(gpu, c, MXQ_ATTN_BACKWARD, &st);
    INFO(mxqGetStatusName(st) << ": " << mxqGetLastErrorMessage());
    CHECK(st == MXQ_STATUS_NOT_SUPPORTED_COMBINATION);
    CHECK(std::string(mxqGetLastErrorMessage()).find("head dim 96") != std::string::npos);
    mxqAttentionPlanDestroy(p);
  }
  SECTION("E5M2 is declined with a reason") {
    mxqAttentionPlan_t p = nullptr;
    MXQ_REQUIRE_OK(mxqAttentionPlanCreate(gpu, &p));
    const int64_t one = 1, s = 64, d = 64;
    const int32_t dir = MXQ_ATTN_BACKWARD, dt = MXQ_DTYPE_E5M2;
    MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, MXQ_ATTN_ATTR_DIRECTION, &dir, 4));
    MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, MXQ_ATTN_ATTR_BATCH, &one, 8));
    MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, MXQ_ATTN_ATTR_HEADS_Q, &one, 8));
    MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, MXQ_ATTN_ATTR_SEQLEN_Q, &s, 8));
    MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, MXQ_ATTN_ATTR_SEQLEN_KV, &s, 8));
    MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, MXQ_ATTN_ATTR_HEAD_DIM, &d, 8));
    // The attribute itself may refuse E5M2 (it does today); if a later version accepts it there,
    // Finalize on the GPU must decline with a reason until a kernel exists.
    mxqStatus_t st = mxqAttentionPlanSetAttribute(p, MXQ_ATTN_ATTR_QKV_DTYPE, &dt, 4);
    if (st == MXQ_STATUS_SUCCESS) st = mxqAttentionPlanFinalize(p);
    INFO(mxqGetStatusName(st) << ": " << mxqGetLastErrorMessage());
    CHECK(st / 1000 == 2);
    CHECK(std::string(mxqGetLastErrorMessage()).find("E5M2") != std::string::npos);
    mxqAttentionPlanDestroy(p);
  }
  SECTION("misaligned FP8 pointer, missing workspace: clear statuses, nothing written") {
    std::mt19937_64 rng(mxq_test::gpu::fresh_seed());
    const Problem P(c, cpu, rng);
    DeviceInputs dev(P);
    mxqAttentionPlan_t bwd = make_plan(gpu, c, MXQ_ATTN_BACKWARD);
    const size_t ws_bytes = workspace_of(bwd);
    DeviceBuffer ws(ws_bytes);
    dev.poison();
    Ptrs ptrs = dev.ptrs();
    // 1. workspace missing
    auto a = bwd_args(ptrs, false);
    MXQ_REQUIRE_STATUS(mxqAttentionExecute(gpu, bwd, a.data(), static_cast<int>(a.size()), nullptr, 0, nullptr),
                       MXQ_STATUS_BAD_PARAM_WORKSPACE);
    // 2. Q data 4 bytes off the 8-byte alignment the plan requires
    DeviceBuffer q_mis(P.q_d.data.size(), 4);
    q_mis.upload(P.q_d.data);
    ptrs.q = q_mis.ptr();
    a = bwd_args(ptrs, false);
    MXQ_REQUIRE_STATUS(mxqAttentionExecute(gpu, bwd, a.data(), static_cast<int>(a.size()), ws.ptr(), ws_bytes, nullptr),
                       MXQ_STATUS_BAD_PARAM_MISALIGNED);
    // 3. a required slot missing
    a = bwd_args(dev.ptrs(), false);
    a.erase(a.begin() + 12);  // DO_T_DATA
    MXQ_REQUIRE_STATUS(mxqAttentionExecute(gpu, bwd, a.data(), static_cast<int>(a.size()), ws.ptr(), ws_bytes, nullptr),
                       MXQ_STATUS_BAD_PARAM_ARGUMENT);
    const auto dq = dev.dq.download();
    CHECK(std::all_of(dq.begin(), dq.end(), [](uint8_t x) { return x == 0xFF; }));
    MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(bwd));
  }
}
