// MXFP8 attention forward and backward from C++ (RAII wrapper mxq.hpp), on the CPU reference backend:
// grouped-query attention (4 query heads, 2 KV heads), causal, layout BHSD.
//
// Which operand is quantized along which axis is the recipe's (docs/NUMERICS.md):
//   forward   Q, K along D (rowwise over [B*H*S, D]);  V along S (per head, 32x1 blocks, not transposed)
//   backward  Q, K, V, dO along D;  Q, K, dO along S as well;  O and dO also in bf16;  LSE from forward.
//
// Checks, against float64 on the dequantized operands:
//   LSE  to fp32 accuracy;
//   dV   = sum over the group's query heads of Pq^T dO (Pq = e4m3(256 P)/256 exactly as the recipe),
//        element by element, allowing the fp32 P of the library to round two of the largest weights
//        across an E4M3 midpoint, plus bf16 rounding;
//   dQ, dK  in relative Frobenius norm within 2^-4: the library quantizes dS to MXFP8 (at most 2^-4
//        relative per element, about 0.03 over a whole tensor), the reference does not.
// Exit status 0 when every check holds.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "example_common.h"
#include "mxq.hpp"

namespace {

constexpr int64_t kB = 1, kHq = 4, kHkv = 2, kD = 64;

std::vector<uint16_t> random_bf16(size_t n) {
  std::vector<uint16_t> v(n);
  for (auto &e : v) e = example_to_bf16(example_normal());
  return v;
}

double rel_error(const std::vector<uint16_t> &got, const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = example_from_bf16(got[i]) - want[i];
    num += d * d, den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

}  // namespace

int main() try {
  example_seed();
  const int64_t s = example_range(16, 130);  // Sq = Skv = S (partial 32-blocks included)
  const int64_t nq = kB * kHq * s * kD, nkv = kB * kHkv * s * kD;
  auto q = random_bf16(nq), k = random_bf16(nkv), v = random_bf16(nkv), dout = random_bf16(nq);

  mxqx::Handle h(MXQ_BACKEND_CPU, 0);
  // Along D: [B*H*S, D] rowwise. Along S: B*H matrices [S, D], columnwise, data untransposed.
  const mxqx::Shape q_d{1, kB * kHq * s, kD}, kv_d{1, kB * kHkv * s, kD};
  const mxqx::Shape q_s{kB * kHq, s, kD, MXQ_QUANTIZE_COLUMNWISE, false};
  const mxqx::Shape kv_s{kB * kHkv, s, kD, MXQ_QUANTIZE_COLUMNWISE, false};
  auto q8 = mxqx::quantize_host(h, q.data(), q_d).row, k8 = mxqx::quantize_host(h, k.data(), kv_d).row;
  auto v8s = mxqx::quantize_host(h, v.data(), kv_s).col, v8d = mxqx::quantize_host(h, v.data(), kv_d).row;
  auto qt8 = mxqx::quantize_host(h, q.data(), q_s).col, kt8 = mxqx::quantize_host(h, k.data(), kv_s).col;
  auto do8 = mxqx::quantize_host(h, dout.data(), q_d).row, dot8 = mxqx::quantize_host(h, dout.data(), q_s).col;

  auto plan_for = [&](mxqAttentionDirection_t dir) {
    mxqx::AttentionPlan p(h);
    p.set(MXQ_ATTN_ATTR_DIRECTION, dir).set(MXQ_ATTN_ATTR_BATCH, kB).set(MXQ_ATTN_ATTR_HEADS_Q, kHq);
    p.set(MXQ_ATTN_ATTR_HEADS_KV, kHkv).set(MXQ_ATTN_ATTR_SEQLEN_Q, s).set(MXQ_ATTN_ATTR_SEQLEN_KV, s);
    p.set(MXQ_ATTN_ATTR_HEAD_DIM, kD).set(MXQ_ATTN_ATTR_MASK, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT).finalize();
    return p;
  };
  std::vector<uint16_t> o(nq, 0xFFFF), dq(nq, 0xFFFF), dk(nkv, 0xFFFF), dv(nkv, 0xFFFF);
  std::vector<float> lse(static_cast<size_t>(kB * kHq * s), NAN);
  auto fwd = plan_for(MXQ_ATTN_FORWARD);
  fwd.run({mxqx::arg(MXQ_ARG_Q_DATA, q8.data.data()), mxqx::arg(MXQ_ARG_Q_SCALES, q8.scales.data()),
           mxqx::arg(MXQ_ARG_K_DATA, k8.data.data()), mxqx::arg(MXQ_ARG_K_SCALES, k8.scales.data()),
           mxqx::arg(MXQ_ARG_V_DATA, v8s.data.data()), mxqx::arg(MXQ_ARG_V_SCALES, v8s.scales.data()),
           mxqx::arg(MXQ_ARG_O, o.data()), mxqx::arg(MXQ_ARG_LSE, lse.data())});
  auto bwd = plan_for(MXQ_ATTN_BACKWARD);
  bwd.run({mxqx::arg(MXQ_ARG_Q_DATA, q8.data.data()), mxqx::arg(MXQ_ARG_Q_SCALES, q8.scales.data()),
           mxqx::arg(MXQ_ARG_K_DATA, k8.data.data()), mxqx::arg(MXQ_ARG_K_SCALES, k8.scales.data()),
           mxqx::arg(MXQ_ARG_V_DATA, v8d.data.data()), mxqx::arg(MXQ_ARG_V_SCALES, v8d.scales.data()),
           mxqx::arg(MXQ_ARG_Q_T_DATA, qt8.data.data()), mxqx::arg(MXQ_ARG_Q_T_SCALES, qt8.scales.data()),
           mxqx::arg(MXQ_ARG_K_T_DATA, kt8.data.data()), mxqx::arg(MXQ_ARG_K_T_SCALES, kt8.scales.data()),
           mxqx::arg(MXQ_ARG_DO_DATA, do8.data.data()), mxqx::arg(MXQ_ARG_DO_SCALES, do8.scales.data()),
           mxqx::arg(MXQ_ARG_DO_T_DATA, dot8.data.data()), mxqx::arg(MXQ_ARG_DO_T_SCALES, dot8.scales.data()),
           mxqx::arg(MXQ_ARG_DO, dout.data()), mxqx::arg(MXQ_ARG_O, o.data()), mxqx::arg(MXQ_ARG_LSE, lse.data()),
           mxqx::arg(MXQ_ARG_DQ, dq.data()), mxqx::arg(MXQ_ARG_DK, dk.data()), mxqx::arg(MXQ_ARG_DV, dv.data())});

  // Reference, in float64 on exactly the operands each product read.
  auto Q = mxqx::dequantize_host(h, q8, q_d, false), K = mxqx::dequantize_host(h, k8, kv_d, false);
  auto V = mxqx::dequantize_host(h, v8d, kv_d, false), dO = mxqx::dequantize_host(h, do8, q_d, false);
  auto Qs = mxqx::dequantize_host(h, qt8, q_s, true), Ks = mxqx::dequantize_host(h, kt8, kv_s, true);
  auto dOs = mxqx::dequantize_host(h, dot8, q_s, true);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kD));
  std::vector<double> dq_ref(nq, 0), dk_ref(nkv, 0), dv_ref(nkv, 0), dv_slack(nkv, 0);
  std::vector<double> p(s), ds(s);
  int64_t bad_lse = 0;
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t hq = 0; hq < kHq; ++hq) {
      const int64_t qh = (b * kHq + hq) * s, kh = (b * kHkv + hq / (kHq / kHkv)) * s;  // row bases
      for (int64_t i = 0; i < s; ++i) {
        double m = -INFINITY, l = 0, delta = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < kD; ++c) acc += static_cast<double>(Q[(qh + i) * kD + c]) * K[(kh + j) * kD + c];
          p[j] = acc * scale, m = std::max(m, p[j]);
        }
        for (int64_t j = 0; j <= i; ++j) l += std::exp(p[j] - m);
        const double lse_ref = m + std::log(l);
        if (!(std::fabs(lse[qh + i] - lse_ref) <= 1e-4 * std::max(1.0, std::fabs(lse_ref)))) ++bad_lse;
        for (int64_t c = 0; c < kD; ++c)
          delta += static_cast<double>(example_from_bf16(dout[(qh + i) * kD + c])) * example_from_bf16(o[(qh + i) * kD + c]);
        for (int64_t j = 0; j <= i; ++j) {
          double dp = 0;
          for (int64_t c = 0; c < kD; ++c) dp += static_cast<double>(dO[(qh + i) * kD + c]) * V[(kh + j) * kD + c];
          p[j] = std::exp(p[j] - lse_ref);
          ds[j] = p[j] * (dp - delta) * scale;
        }
        for (int64_t j = 0; j <= i; ++j)
          for (int64_t c = 0; c < kD; ++c) {
            const double g = dOs[(qh + i) * kD + c];
            dv_ref[(kh + j) * kD + c] += example_e4m3(256 * p[j]) / 256 * g;
            dv_slack[(kh + j) * kD + c] = std::max(dv_slack[(kh + j) * kD + c], p[j] * std::fabs(g));
            dq_ref[(qh + i) * kD + c] += ds[j] * Ks[(kh + j) * kD + c];
            dk_ref[(kh + j) * kD + c] += ds[j] * Qs[(qh + i) * kD + c];
          }
      }
    }
  int64_t bad_dv = 0;
  for (int64_t e = 0; e < nkv; ++e) {
    // Up to two midpoint flips of the largest weight per query head of the group, bf16 rounding, fp32 noise.
    double bound = std::ldexp(dv_slack[e], -3) * (kHq / kHkv) + std::ldexp(std::fabs(dv_ref[e]), -8) + 1e-6;
    if (!(std::fabs(example_from_bf16(dv[e]) - dv_ref[e]) <= bound)) ++bad_dv;
  }
  const double e_dq = rel_error(dq, dq_ref), e_dk = rel_error(dk, dk_ref);
  const bool ok = bad_lse == 0 && bad_dv == 0 && e_dq <= 0.0625 && e_dk <= 0.0625;
  std::printf("attention fwd+bwd: B=%lld Hq=%lld Hkv=%lld S=%lld D=%lld causal: LSE %lld bad, dV %lld of %lld bad, "
              "dQ rel err %.4f, dK rel err %.4f: %s\n",
              static_cast<long long>(kB), static_cast<long long>(kHq), static_cast<long long>(kHkv),
              static_cast<long long>(s), static_cast<long long>(kD), static_cast<long long>(bad_lse),
              static_cast<long long>(bad_dv), static_cast<long long>(nkv), e_dq, e_dk, ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
} catch (const mxqx::Error &e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
