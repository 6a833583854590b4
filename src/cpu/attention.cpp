// CPU reference MXFP8 attention, forward and backward: the oracle for the GPU kernels. It follows
// cuDNN's MXFP8 SDPA recipe (DESIGN §2.3, docs/NUMERICS.md "Attention") line by line in fp64,
// except at the recipe's quantization points, which are emulated exactly:
//   - P is rounded to fp32 (the kernel's precision), multiplied by p_scale in fp32 and converted to
//     E4M3 with RNE satfinite, then divided by p_scale: Pq = fp8(P * p_scale) / p_scale;
//   - dS is rounded to fp32 and MXFP8-quantized (E4M3, 1x32 blocks, RCEIL scale, DESIGN §1.1) along
//     s_kv for dQ and along s_q for dK, then dequantized;
//   - O, dQ, dK, dV are rounded fp64 -> fp32 -> bf16 (RNE) and LSE fp64 -> fp32.
// The oracle uses the final row max, so a kernel with an online softmax differs from it in Pq
// rounding: GPU results are compared by tolerance, not bit for bit.
//
// Operand conventions (include/mxq/mxq.h, attention section). Every tensor is indexed by the
// logical (b, h, s, d) of its sequence; its memory row is
//   BHSD: (b*H + h)*S + s      BSHD: (b*S + s)*H + h      varlen (BSHD, packed): (cu[b] + s)*H + h
// and the element is at row*D + d.
//   - Quantized along D: the rowwise scales of the data seen as one 2D [rows, D] tensor in memory
//     order: scale (row, d/32), ceil(D/32) scale columns (Cpad = round_up(., 4) when swizzled).
//   - Quantized along S: for each (b, h), the columnwise scales of its [S, D] matrix, stored as a
//     batched [B*H] tensor with entry b*H + h, r := d, c := s/32, C = ceil(S/32) — whatever the data
//     layout. Varlen: S is the maximum sequence length (desc.seqlen_*) and s is the position inside
//     sequence b, so 32-blocks restart at every sequence start and each (b, h) owns ceil(Smax/32)
//     scale columns (the padded-batch layout: with equal lengths it equals the non-varlen one).
//   - LSE is fp32 [B, Hq, Sq] (Sq = the maximum with varlen; entries past a sequence are untouched).
//
// Parallel over (b, query head); the backward accumulates dK/dV per query head in fp64 and sums the
// heads of each KV group in a second pass, so no two threads write the same element.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/layout.h"
#include "core/parallel.h"
#include "cpu/reference.h"

namespace mxq {
namespace cpu {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double ue8m0_value(uint8_t e) { return e == 0xFF ? kNaN : std::ldexp(1.0, int(e) - 127); }

std::array<double, 256> fp8_table(mxqDataType_t dt) {
  std::array<double, 256> t{};
  for (int q = 0; q < 256; ++q) t[q] = fp8_to_f32(static_cast<uint8_t>(q), dt);
  return t;
}

uint16_t to_bf16(double v) { return f32_to_bf16_rne(static_cast<float>(v)); }

// Memory geometry of the query side or the key/value side: where the row of (b, h, s) is, and which
// positions each sequence has.
struct Side {
  mxqAttentionLayout_t layout = MXQ_ATTN_LAYOUT_BHSD;
  int64_t heads = 0, max_len = 0, dim = 0;
  std::vector<int64_t> start;  // first token of sequence b on the token axis (BSHD / varlen)
  std::vector<int64_t> len;    // positions in sequence b

  int64_t row(int64_t b, int64_t h, int64_t s) const {
    return layout == MXQ_ATTN_LAYOUT_BHSD ? (b * heads + h) * max_len + s : (start[b] + s) * heads + h;
  }
};

// cu_seqlens (int32 [B + 1]) -> per-sequence starts and lengths, validated against the maximum.
void read_cu_seqlens(const int32_t* cu, int64_t batch, int64_t max_len, const char* which, Side& side) {
  MXQ_REQUIRE(cu, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "attention: {} is required with VARLEN", which);
  MXQ_REQUIRE(cu[0] >= 0, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS, "attention: {}[0] = {} is negative", which, cu[0]);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = int64_t(cu[b + 1]) - int64_t(cu[b]);
    MXQ_REQUIRE(len >= 0, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS, "attention: {} decreases at {} ({} -> {})", which, b,
                cu[b], cu[b + 1]);
    MXQ_REQUIRE(len <= max_len, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS,
                "attention: sequence {} has {} tokens in {}, more than the maximum {}", b, len, which, max_len);
    side.start[b] = cu[b];
    side.len[b] = len;
  }
}

Side make_side(const AttentionDesc& d, int64_t heads, int64_t max_len, const int32_t* cu, const char* cu_name) {
  Side s;
  s.layout = d.layout;
  s.heads = heads;
  s.max_len = max_len;
  s.dim = d.head_dim;
  s.start.resize(static_cast<size_t>(d.batch));
  s.len.resize(static_cast<size_t>(d.batch));
  if (d.varlen) {
    read_cu_seqlens(cu, d.batch, max_len, cu_name, s);
  } else {
    for (int64_t b = 0; b < d.batch; ++b) {
      s.start[b] = b * max_len;
      s.len[b] = max_len;
    }
  }
  return s;
}

enum class Along { D, S };

// One MXFP8 operand as passed: data in the side's memory layout, scales per the conventions above.
struct Fp8Tensor {
  const uint8_t* data;
  const uint8_t* scales;
  Along along;
};

// Dequantizes the [len_b, D] matrix of (b, h) of an operand into fp64, row-major.
std::vector<double> dequantize(const Side& side, const Fp8Tensor& t, const std::array<double, 256>& lut, bool swz,
                               int64_t b, int64_t h) {
  using namespace layout;
  const int64_t dim = side.dim, len = side.len[b];
  const int64_t dcols = scale_cols(dim), dcpad = swz_cols(dcols);           // along D
  const int64_t scols = scale_cols(side.max_len), scpad = swz_cols(scols);  // along S
  const int64_t entry = (b * side.heads + h) * scale_bytes(swz, dim, scols);
  std::vector<double> out(static_cast<size_t>(len * dim));
  for (int64_t s = 0; s < len; ++s) {
    const int64_t r = side.row(b, h, s);
    for (int64_t x = 0; x < dim; ++x) {
      int64_t off;
      if (t.along == Along::D)
        off = swz ? swizzled_offset(r, x / kBlock, dcpad) : r * dcols + x / kBlock;
      else
        off = entry + (swz ? swizzled_offset(x, s / kBlock, scpad) : x * scols + s / kBlock);
      out[s * dim + x] = lut[t.data[r * dim + x]] * ue8m0_value(t.scales[off]);
    }
  }
  return out;
}

// A bf16 tensor ([len_b, D] of (b, h)) as fp64.
std::vector<double> load_bf16(const Side& side, const uint16_t* p, int64_t b, int64_t h) {
  const int64_t dim = side.dim, len = side.len[b];
  std::vector<double> out(static_cast<size_t>(len * dim));
  for (int64_t s = 0; s < len; ++s)
    for (int64_t x = 0; x < dim; ++x) out[s * dim + x] = bf16_to_f32(p[side.row(b, h, s) * dim + x]);
  return out;
}

void store_bf16(const Side& side, uint16_t* p, int64_t b, int64_t h, const std::vector<double>& v) {
  const int64_t dim = side.dim, len = side.len[b];
  for (int64_t s = 0; s < len; ++s)
    for (int64_t x = 0; x < dim; ++x) p[side.row(b, h, s) * dim + x] = to_bf16(v[s * dim + x]);
}

// Key j visible to query i of a sequence with lq queries and lk keys.
bool visible(mxqAttentionMask_t mask, int64_t i, int64_t j, int64_t lq, int64_t lk) {
  switch (mask) {
    case MXQ_ATTN_MASK_CAUSAL_TOP_LEFT: return j <= i;
    case MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT: return j <= i + lk - lq;
    default: return true;
  }
}

double dot(const double* a, const double* b, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// The recipe's P quantization: fp8_e4m3(fl32(fl32(P) * p_scale)) / p_scale.
double quantize_p(double p, float p_scale) {
  const float x = static_cast<float>(p) * p_scale;
  return static_cast<double>(fp8_to_f32(f32_to_fp8_satfinite(x, MXQ_DTYPE_E4M3), MXQ_DTYPE_E4M3)) /
         static_cast<double>(p_scale);
}

// MXFP8 quantize-dequantize of the n (<= 32) elements x[0], x[stride], ... forming one 32-block of
// dS, as a kernel does it on its fp32 dS: E4M3, RCEIL scale from the fp32 block max (NaN ignored by
// the max, kept as NaN), elements multiplied by the scale inverse in fp32 and converted satfinite.
// Missing elements of a partial block count as zero.
void mx_roundtrip(double* x, int64_t n, int64_t stride) {
  float f[layout::kBlock];
  float amax = 0.0f;
  for (int64_t t = 0; t < n; ++t) {
    f[t] = static_cast<float>(x[t * stride]);
    if (!std::isnan(f[t])) amax = std::fmax(amax, std::fabs(f[t]));
  }
  const uint8_t e = scale_exponent(amax, MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL);
  const float inv = scale_inverse(e);
  const double scale = ue8m0_value(e);
  for (int64_t t = 0; t < n; ++t) {
    const uint8_t q = f32_to_fp8_satfinite(f[t] * inv, MXQ_DTYPE_E4M3);
    x[t * stride] = static_cast<double>(fp8_to_f32(q, MXQ_DTYPE_E4M3)) * scale;
  }
}

// Everything both directions need, validated once.
struct Problem {
  Side q, kv;
  bool swz = false;
  double scale = 0.0;
  int64_t group = 1;  // query heads per KV head
  std::array<double, 256> lut{};
};

Problem make_problem(const AttentionDesc& d, const ExecArgs& a) {
  MXQ_REQUIRE(d.batch > 0 && d.heads_q > 0 && d.heads_kv > 0 && d.seqlen_q > 0 && d.seqlen_kv > 0 && d.head_dim > 0,
              MXQ_STATUS_BAD_PARAM_SHAPE, "attention: B, Hq, Hkv, Sq, Skv, D must be > 0 (are {}, {}, {}, {}, {}, {})",
              d.batch, d.heads_q, d.heads_kv, d.seqlen_q, d.seqlen_kv, d.head_dim);
  MXQ_REQUIRE(d.heads_q % d.heads_kv == 0, MXQ_STATUS_BAD_PARAM_SHAPE,
              "attention: Hq ({}) must be a multiple of Hkv ({})", d.heads_q, d.heads_kv);
  MXQ_REQUIRE(!d.varlen || d.layout == MXQ_ATTN_LAYOUT_BSHD, MXQ_STATUS_NOT_SUPPORTED_COMBINATION,
              "attention: VARLEN needs the BSHD layout");
  MXQ_REQUIRE(d.layout == MXQ_ATTN_LAYOUT_BHSD || d.layout == MXQ_ATTN_LAYOUT_BSHD,
              MXQ_STATUS_BAD_PARAM_INVALID_VALUE, "attention: unknown layout {}", int(d.layout));
  MXQ_REQUIRE(d.qkv_dtype == MXQ_DTYPE_E4M3 || d.qkv_dtype == MXQ_DTYPE_E5M2, MXQ_STATUS_NOT_SUPPORTED_DTYPE,
              "attention: operands must be E4M3 or E5M2 (is {})", int(d.qkv_dtype));
  MXQ_REQUIRE(std::isfinite(d.softmax_scale) && d.softmax_scale > 0.0f, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
              "attention: softmax_scale must be resolved to a finite value > 0 (is {})", d.softmax_scale);
  MXQ_REQUIRE(std::isfinite(d.p_scale) && d.p_scale > 0.0f, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
              "attention: p_scale must be finite and > 0 (is {})", d.p_scale);
  Problem p;
  p.q = make_side(d, d.heads_q, d.seqlen_q, a.as<const int32_t>(MXQ_ARG_CU_SEQLENS_Q), "CU_SEQLENS_Q");
  p.kv = make_side(d, d.heads_kv, d.seqlen_kv, a.as<const int32_t>(MXQ_ARG_CU_SEQLENS_KV), "CU_SEQLENS_KV");
  p.swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  p.scale = d.softmax_scale;
  p.group = d.heads_q / d.heads_kv;
  p.lut = fp8_table(d.qkv_dtype);
  return p;
}

Fp8Tensor operand(const ExecArgs& a, mxqArgSlot_t data, mxqArgSlot_t scales, Along along, const char* name) {
  Fp8Tensor t{a.as<const uint8_t>(data), a.as<const uint8_t>(scales), along};
  MXQ_REQUIRE(t.data && t.scales, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "attention: {} data and scales are required",
              name);
  return t;
}

template <typename T>
T* required(const ExecArgs& a, mxqArgSlot_t slot, const char* name) {
  T* p = a.as<T>(slot);
  MXQ_REQUIRE(p, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "attention: {} is required", name);
  return p;
}

}  // namespace

void attention_forward(const AttentionDesc& d, const ExecArgs& a) {
  const Problem p = make_problem(d, a);
  const Fp8Tensor q_t = operand(a, MXQ_ARG_Q_DATA, MXQ_ARG_Q_SCALES, Along::D, "Q");
  const Fp8Tensor k_t = operand(a, MXQ_ARG_K_DATA, MXQ_ARG_K_SCALES, Along::D, "K");
  const Fp8Tensor v_t = operand(a, MXQ_ARG_V_DATA, MXQ_ARG_V_SCALES, Along::S, "V (along S)");
  auto* o_out = required<uint16_t>(a, MXQ_ARG_O, "O");
  auto* lse_out = required<float>(a, MXQ_ARG_LSE, "LSE");
  const int64_t dim = d.head_dim;

  parallel_for(d.batch * d.heads_q, 1, [&](int64_t w0, int64_t w1) {
    std::vector<double> srow, prow;
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t b = w / d.heads_q, h = w % d.heads_q, hk = h / p.group;
      const int64_t lq = p.q.len[b], lk = p.kv.len[b];
      const auto qm = dequantize(p.q, q_t, p.lut, p.swz, b, h);
      const auto km = dequantize(p.kv, k_t, p.lut, p.swz, b, hk);
      const auto vm = dequantize(p.kv, v_t, p.lut, p.swz, b, hk);
      std::vector<double> o(static_cast<size_t>(lq * dim), 0.0);
      srow.assign(static_cast<size_t>(lk), -kInf);
      prow.assign(static_cast<size_t>(lk), 0.0);
      for (int64_t i = 0; i < lq; ++i) {
        // S = scale * Q K^T over the visible keys; m = the row max (a NaN anywhere makes it NaN).
        double m = -kInf;
        bool any = false;
        for (int64_t j = 0; j < lk; ++j) {
          srow[j] = -kInf;
          if (!visible(d.mask, i, j, lq, lk)) continue;
          srow[j] = p.scale * dot(&qm[i * dim], &km[j * dim], dim);
          m = std::isnan(m) || std::isnan(srow[j]) ? kNaN : std::max(m, srow[j]);
          any = true;
        }
        float* lse = &lse_out[(b * d.heads_q + h) * d.seqlen_q + i];
        if (!any) {  // fully masked row: O = 0, LSE = -inf
          *lse = -std::numeric_limits<float>::infinity();
          continue;
        }
        // l sums the unquantized p; the numerator uses Pq.
        double l = 0.0;
        for (int64_t j = 0; j < lk; ++j) {
          prow[j] = visible(d.mask, i, j, lq, lk) ? std::exp(srow[j] - m) : 0.0;
          l += prow[j];
        }
        double* oi = &o[i * dim];
        for (int64_t j = 0; j < lk; ++j) {
          if (!visible(d.mask, i, j, lq, lk)) continue;
          const double pq = quantize_p(prow[j], d.p_scale);
          for (int64_t x = 0; x < dim; ++x) oi[x] += pq * vm[j * dim + x];
        }
        for (int64_t x = 0; x < dim; ++x) oi[x] /= l;
        *lse = static_cast<float>(m + std::log(l));
      }
      store_bf16(p.q, o_out, b, h, o);
    }
  });
}

void attention_backward(const AttentionDesc& d, const ExecArgs& a) {
  const Problem p = make_problem(d, a);
  const Fp8Tensor q_row = operand(a, MXQ_ARG_Q_DATA, MXQ_ARG_Q_SCALES, Along::D, "Q");
  const Fp8Tensor k_row = operand(a, MXQ_ARG_K_DATA, MXQ_ARG_K_SCALES, Along::D, "K");
  const Fp8Tensor v_row = operand(a, MXQ_ARG_V_DATA, MXQ_ARG_V_SCALES, Along::D, "V (along D)");
  const Fp8Tensor do_row = operand(a, MXQ_ARG_DO_DATA, MXQ_ARG_DO_SCALES, Along::D, "dO");
  const Fp8Tensor q_col = operand(a, MXQ_ARG_Q_T_DATA, MXQ_ARG_Q_T_SCALES, Along::S, "Q (along S)");
  const Fp8Tensor k_col = operand(a, MXQ_ARG_K_T_DATA, MXQ_ARG_K_T_SCALES, Along::S, "K (along S)");
  const Fp8Tensor do_col = operand(a, MXQ_ARG_DO_T_DATA, MXQ_ARG_DO_T_SCALES, Along::S, "dO (along S)");
  const auto* o_in = required<const uint16_t>(a, MXQ_ARG_O, "O");
  const auto* do_in = required<const uint16_t>(a, MXQ_ARG_DO, "dO (bf16)");
  const auto* lse_in = required<const float>(a, MXQ_ARG_LSE, "LSE");
  auto* dq_out = required<uint16_t>(a, MXQ_ARG_DQ, "dQ");
  auto* dk_out = required<uint16_t>(a, MXQ_ARG_DK, "dK");
  auto* dv_out = required<uint16_t>(a, MXQ_ARG_DV, "dV");
  const int64_t dim = d.head_dim, blk = layout::kBlock;

  // dK, dV of each (b, query head), summed per KV group afterwards.
  std::vector<std::vector<double>> dk_part(static_cast<size_t>(d.batch * d.heads_q));
  std::vector<std::vector<double>> dv_part(dk_part.size());

  parallel_for(d.batch * d.heads_q, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t b = w / d.heads_q, h = w % d.heads_q, hk = h / p.group;
      const int64_t lq = p.q.len[b], lk = p.kv.len[b];
      const auto qm = dequantize(p.q, q_row, p.lut, p.swz, b, h);
      const auto km = dequantize(p.kv, k_row, p.lut, p.swz, b, hk);
      const auto vm = dequantize(p.kv, v_row, p.lut, p.swz, b, hk);
      const auto dom = dequantize(p.q, do_row, p.lut, p.swz, b, h);
      const auto qc = dequantize(p.q, q_col, p.lut, p.swz, b, h);
      const auto kc = dequantize(p.kv, k_col, p.lut, p.swz, b, hk);
      const auto doc = dequantize(p.q, do_col, p.lut, p.swz, b, h);
      const auto o16 = load_bf16(p.q, o_in, b, h);
      const auto do16 = load_bf16(p.q, do_in, b, h);

      // P (fp64 from the fp32 LSE), Pq, and dS = P * (dP - delta) * scale; masked entries stay 0.
      std::vector<double> pq(static_cast<size_t>(lq * lk), 0.0), ds(pq.size(), 0.0);
      for (int64_t i = 0; i < lq; ++i) {
        const double delta = dot(&do16[i * dim], &o16[i * dim], dim);  // from the bf16 copies
        const double lse = lse_in[(b * d.heads_q + h) * d.seqlen_q + i];
        for (int64_t j = 0; j < lk; ++j) {
          if (!visible(d.mask, i, j, lq, lk)) continue;
          const double pij = std::exp(p.scale * dot(&qm[i * dim], &km[j * dim], dim) - lse);
          const double dp = dot(&dom[i * dim], &vm[j * dim], dim);
          pq[i * lk + j] = quantize_p(pij, d.p_scale);
          ds[i * lk + j] = pij * (dp - delta) * p.scale;
        }
      }
      // dS quantized along s_kv (rows of dS) feeds dQ; along s_q (columns) feeds dK.
      std::vector<double> ds_kv = ds, ds_q = ds;
      for (int64_t i = 0; i < lq; ++i)
        for (int64_t j0 = 0; j0 < lk; j0 += blk) mx_roundtrip(&ds_kv[i * lk + j0], std::min(blk, lk - j0), 1);
      for (int64_t j = 0; j < lk; ++j)
        for (int64_t i0 = 0; i0 < lq; i0 += blk) mx_roundtrip(&ds_q[i0 * lk + j], std::min(blk, lq - i0), lk);

      std::vector<double> dq(static_cast<size_t>(lq * dim), 0.0);
      std::vector<double>& dk = dk_part[w];
      std::vector<double>& dv = dv_part[w];
      dk.assign(static_cast<size_t>(lk * dim), 0.0);
      dv.assign(static_cast<size_t>(lk * dim), 0.0);
      for (int64_t i = 0; i < lq; ++i) {
        for (int64_t j = 0; j < lk; ++j) {
          const double sk = ds_kv[i * lk + j], sq = ds_q[i * lk + j], pij = pq[i * lk + j];
          for (int64_t x = 0; x < dim; ++x) {
            dq[i * dim + x] += sk * kc[j * dim + x];   // dQ = dq(dS along s_kv) . dq(K_col)
            dk[j * dim + x] += sq * qc[i * dim + x];   // dK = dq(dS along s_q)^T . dq(Q_col)
            dv[j * dim + x] += pij * doc[i * dim + x]; // dV = Pq^T . dq(dO_col)
          }
        }
      }
      store_bf16(p.q, dq_out, b, h, dq);
    }
  });

  // dK, dV: sum the query heads of each KV group in fp64, then round once.
  parallel_for(d.batch * d.heads_kv, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t b = w / d.heads_kv, hk = w % d.heads_kv;
      const size_t n = static_cast<size_t>(p.kv.len[b] * dim);
      std::vector<double> dk(n, 0.0), dv(n, 0.0);
      for (int64_t g = 0; g < p.group; ++g) {
        const size_t src = static_cast<size_t>(b * d.heads_q + hk * p.group + g);
        for (size_t e = 0; e < n; ++e) {
          dk[e] += dk_part[src][e];
          dv[e] += dv_part[src][e];
        }
      }
      store_bf16(p.kv, dk_out, b, hk, dk);
      store_bf16(p.kv, dv_out, b, hk, dv);
    }
  });
}

}  // namespace cpu
}  // namespace mxq
