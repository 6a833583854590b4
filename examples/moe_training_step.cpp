// The GEMMs of one Mixture-of-Experts training step in MXFP8, from C++ (RAII wrapper mxq.hpp), on the
// CPU reference backend:
//
//   X [T, K] tokens grouped by expert, quantized ONCE in both directions (one read of X):
//       rowwise  (1x32 along K)  -> fprop operand
//       columnwise (32x1 along the tokens, blocks restarting at each expert) -> wgrad operand
//   fprop   Y[tokens of g]  = X[tokens of g] * W[g]^T            M-grouped GEMM, bf16 out
//   wgrad   dW[g] = dY[tokens of g]^T * X[tokens of g]           K-grouped GEMM over the tokens, fp32 out
//
// Expert sizes are random with one empty expert (its dW is exactly zero) and K is not a multiple of
// 32. Every output element is checked against a float64 product of the dequantized operands within
// fp32 accumulation error (+ bf16 rounding for Y). Exit status 0 when all are within their bound.
#include <cmath>
#include <cstdio>
#include <vector>

#include "example_common.h"
#include "mxq.hpp"

namespace {

constexpr int64_t kExperts = 4, kN = 80, kK = 176;

std::vector<uint16_t> random_bf16(size_t n, float scale) {
  std::vector<uint16_t> v(n);
  for (auto &e : v) e = example_to_bf16(scale * example_normal());
  return v;
}

}  // namespace

int main() try {
  example_seed();
  std::vector<int32_t> offsets;
  int64_t tokens = 0;
  for (int64_t g = 0; g < kExperts; ++g) offsets.push_back(static_cast<int32_t>(tokens += g == 2 ? 0 : example_range(1, 120)));
  auto x = random_bf16(static_cast<size_t>(tokens * kK), 1.0f);
  auto w = random_bf16(static_cast<size_t>(kExperts * kN * kK), 0.05f);
  auto dy = random_bf16(static_cast<size_t>(tokens * kN), 1.0f);

  mxqx::Handle h(MXQ_BACKEND_CPU, 0);
  const mxqx::Shape xs{1, tokens, kK, MXQ_QUANTIZE_BOTH, true, &offsets}, ws{kExperts, kN, kK};
  const mxqx::Shape dys{1, tokens, kN, MXQ_QUANTIZE_COLUMNWISE, true, &offsets};
  auto xq = mxqx::quantize_host(h, x.data(), xs), wq = mxqx::quantize_host(h, w.data(), ws);
  auto dyq = mxqx::quantize_host(h, dy.data(), dys);

  // fprop: M-grouped, A = X rowwise [T, K], B = W [G, N, K].
  std::vector<uint16_t> y(static_cast<size_t>(tokens * kN), 0xFFFF);
  mxqx::GroupedGemmPlan fprop(h);
  fprop.set(MXQ_GEMM_ATTR_GROUPING, MXQ_GEMM_GROUPING_M).set(MXQ_GEMM_ATTR_M, tokens).set(MXQ_GEMM_ATTR_N, kN);
  fprop.set(MXQ_GEMM_ATTR_K, kK).set(MXQ_GEMM_ATTR_NUM_GROUPS, kExperts).finalize();
  fprop.run({mxqx::arg(MXQ_ARG_A_DATA, xq.row.data.data()), mxqx::arg(MXQ_ARG_A_SCALES, xq.row.scales.data()),
             mxqx::arg(MXQ_ARG_B_DATA, wq.row.data.data()), mxqx::arg(MXQ_ARG_B_SCALES, wq.row.scales.data()),
             mxqx::arg(MXQ_ARG_GROUP_OFFSETS, offsets.data()), mxqx::arg(MXQ_ARG_D, y.data())});

  // wgrad: K-grouped over the tokens, A = dY columnwise [N, T], B = X columnwise [K, T] -> dW [G, N, K].
  std::vector<float> dw(static_cast<size_t>(kExperts * kN * kK), NAN);
  mxqx::GroupedGemmPlan wgrad(h);
  wgrad.set(MXQ_GEMM_ATTR_GROUPING, MXQ_GEMM_GROUPING_K).set(MXQ_GEMM_ATTR_M, kN).set(MXQ_GEMM_ATTR_N, kK);
  wgrad.set(MXQ_GEMM_ATTR_K, tokens).set(MXQ_GEMM_ATTR_NUM_GROUPS, kExperts);
  wgrad.set(MXQ_GEMM_ATTR_D_DTYPE, MXQ_DTYPE_FP32).finalize();
  wgrad.run({mxqx::arg(MXQ_ARG_A_DATA, dyq.col.data.data()), mxqx::arg(MXQ_ARG_A_SCALES, dyq.col.scales.data()),
             mxqx::arg(MXQ_ARG_B_DATA, xq.col.data.data()), mxqx::arg(MXQ_ARG_B_SCALES, xq.col.scales.data()),
             mxqx::arg(MXQ_ARG_GROUP_OFFSETS, offsets.data()), mxqx::arg(MXQ_ARG_D, dw.data())});

  // Checks against what each GEMM multiplied, dequantized.
  auto xr = mxqx::dequantize_host(h, xq.row, xs, false), wr = mxqx::dequantize_host(h, wq.row, ws, false);
  auto xc = mxqx::dequantize_host(h, xq.col, xs, true), dyc = mxqx::dequantize_host(h, dyq.col, dys, true);
  int64_t bad_y = 0, bad_dw = 0;
  for (int64_t g = 0, lo = 0; g < kExperts; lo = offsets[g++]) {
    for (int64_t t = lo; t < offsets[g]; ++t)
      for (int64_t n = 0; n < kN; ++n) {
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < kK; ++k) {
          double p = static_cast<double>(xr[t * kK + k]) * wr[(g * kN + n) * kK + k];
          ref += p, mag += std::fabs(p);
        }
        double acc = kK * std::ldexp(mag, -23), bound = acc + std::ldexp(std::fabs(ref) + acc, -8) + 1e-30;
        if (!(std::fabs(example_from_bf16(y[t * kN + n]) - ref) <= bound)) ++bad_y;
      }
    for (int64_t n = 0; n < kN; ++n)
      for (int64_t k = 0; k < kK; ++k) {
        double ref = 0, mag = 0;
        for (int64_t t = lo; t < offsets[g]; ++t) {
          double p = static_cast<double>(dyc[t * kN + n]) * xc[t * kK + k];
          ref += p, mag += std::fabs(p);
        }
        double got = dw[(g * kN + n) * kK + k];
        if (!(std::fabs(got - ref) <= (offsets[g] - lo) * std::ldexp(mag, -23) + 1e-30)) ++bad_dw;
      }
  }
  std::printf("moe training step: %lld tokens over %lld experts (%d/%d/%d/%d), N=%lld, K=%lld: fprop %lld of %lld, "
              "wgrad %lld of %lld outputs outside the bound\n",
              static_cast<long long>(tokens), static_cast<long long>(kExperts), offsets[0], offsets[1] - offsets[0],
              offsets[2] - offsets[1], offsets[3] - offsets[2], static_cast<long long>(kN),
              static_cast<long long>(kK), static_cast<long long>(bad_y), static_cast<long long>(tokens * kN),
              static_cast<long long>(bad_dw), static_cast<long long>(kExperts * kN * kK));
  return bad_y == 0 && bad_dw == 0 ? 0 : 1;
} catch (const mxqx::Error &e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
