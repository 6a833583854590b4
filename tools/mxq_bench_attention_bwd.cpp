// mxq_bench_attention_bwd: times the MXFP8 attention backward on the GPU (one mxqAttentionExecute:
// delta pre-kernel, prep, then either the dK/dV and dQ kernels or the dK/dV kernel with fused dQ and
// its post pass) and prints time and TFLOP/s, counting the conventional 2.5 x 4*B*H*Sq*Skv*D FLOPs
// (halved for causal masks; the two-kernel path actually runs 7 matmuls where that count assumes 5,
// the fused path 5). Each shape is timed on both paths (MXQ_ATTN_BWD_FUSED_DQ=0 and =1, set around
// the plan's Finalize) and on the default rule's choice, from the same inputs. Next to it: the cuDNN bf16 backward figures measured on an
// H100 for ../shared/ANCHORS.md (537 TFLOP/s non-causal, 450 causal at B2 H32 S4096 D128); the
// torch peer measured in the same run is the lead's script (tools/, attention forward benchmark).
// Inputs are random finite E4M3 bytes with scales near 2^-4 and an LSE of 0, so every softmax value
// is finite; the kernels' work does not depend on the values. Buffers come from the driver API
// (dlopen, like libmxq itself); no CUDA library is linked. Medians over back-to-back launches.
//
//   mxq_bench_attention_bwd                                the shapes
//   mxq_bench_attention_bwd B H S D causal(0/1) [iters]    one shape (Sq = Skv = S, Hkv = H)
//   MXQ_BENCH_DEFAULT_ONLY=1 mxq_bench_attention_bwd ...    the default rule's plan only
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_driver.h"
#include "mxq/mxq.h"

namespace {

using namespace mxq_bench;

struct Shape {
  int64_t b, h, s, d;
  bool causal;
  double cudnn_ref;  // TFLOP/s of cuDNN bf16 SDPA backward on an H100 (ANCHORS.md), 0 if none
};

template <typename Fn>
double time_ms(Fn fn, int iters) {
  void *e0 = nullptr, *e1 = nullptr;
  ck(cu.cuEventCreate(&e0, 0), "cuEventCreate");
  ck(cu.cuEventCreate(&e1, 0), "cuEventCreate");
  fn();  // warm-up (module load)
  ck(cu.cuCtxSynchronize(), "warm-up");
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    ck(cu.cuEventRecord(e0, nullptr), "cuEventRecord");
    fn();
    ck(cu.cuEventRecord(e1, nullptr), "cuEventRecord");
    ck(cu.cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    ck(cu.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<uint8_t> random_fp8(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>((rng() & 0x80) | (rng() % 0x40));  // |value| < 2, finite
  return v;
}
std::vector<uint8_t> random_bf16(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> v(2 * n);
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = static_cast<uint16_t>(((rng() & 1) << 15) | ((120 + rng() % 8) << 7) | (rng() & 0x7F));
    v[2 * i] = static_cast<uint8_t>(h & 0xFF);
    v[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
  return v;
}

// A plan for shape s finalized with MXQ_ATTN_BWD_FUSED_DQ = env (nullptr: unset, the default rule).
mxqAttentionPlan_t make_plan(mxqHandle_t h, const Shape& s, const char* env) {
  const char* old = std::getenv("MXQ_ATTN_BWD_FUSED_DQ");
  const std::string saved = old ? old : "";
  if (env) setenv("MXQ_ATTN_BWD_FUSED_DQ", env, 1);
  else unsetenv("MXQ_ATTN_BWD_FUSED_DQ");
  mxqAttentionPlan_t p = nullptr;
  ckq(mxqAttentionPlanCreate(h, &p), "mxqAttentionPlanCreate");
  auto set32 = [&](mxqAttentionAttribute_t a, int32_t v) { ckq(mxqAttentionPlanSetAttribute(p, a, &v, 4), "set"); };
  auto set64 = [&](mxqAttentionAttribute_t a, int64_t v) { ckq(mxqAttentionPlanSetAttribute(p, a, &v, 8), "set"); };
  set32(MXQ_ATTN_ATTR_DIRECTION, MXQ_ATTN_BACKWARD);
  set64(MXQ_ATTN_ATTR_BATCH, s.b);
  set64(MXQ_ATTN_ATTR_HEADS_Q, s.h);
  set64(MXQ_ATTN_ATTR_HEADS_KV, s.h);
  set64(MXQ_ATTN_ATTR_SEQLEN_Q, s.s);
  set64(MXQ_ATTN_ATTR_SEQLEN_KV, s.s);
  set64(MXQ_ATTN_ATTR_HEAD_DIM, s.d);
  set32(MXQ_ATTN_ATTR_LAYOUT, MXQ_ATTN_LAYOUT_BSHD);
  set32(MXQ_ATTN_ATTR_MASK, s.causal ? MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT : MXQ_ATTN_MASK_NONE);
  ckq(mxqAttentionPlanFinalize(p), "mxqAttentionPlanFinalize");
  if (old) setenv("MXQ_ATTN_BWD_FUSED_DQ", saved.c_str(), 1);
  else unsetenv("MXQ_ATTN_BWD_FUSED_DQ");
  return p;
}

void bench(mxqHandle_t h, const Shape& s, int iters) {
  std::mt19937_64 rng(12345);
  const char* const envs[] = {"0", "1", nullptr};
  const char* const labels[] = {"two-kernel (FUSED_DQ=0)", "fused dQ (FUSED_DQ=1)", "default rule"};
  mxqAttentionPlan_t plans[3];
  size_t ws_bytes = 0;
  for (int i = 0; i < 3; ++i) {
    plans[i] = make_plan(h, s, envs[i]);
    size_t w = 0;
    ckq(mxqAttentionPlanGetWorkspaceSize(plans[i], &w), "mxqAttentionPlanGetWorkspaceSize");
    ws_bytes = std::max(ws_bytes, w);
  }

  const size_t elems = static_cast<size_t>(s.b * s.h * s.s * s.d);
  const int64_t scols = (s.s + 31) / 32, dcols = (s.d + 31) / 32;
  // Swizzled scale tensors, sized generously (every byte 2^-4: 123).
  const size_t row_scale_bytes = static_cast<size_t>(((s.b * s.h * s.s + 127) / 128) * 128 * ((dcols + 3) / 4) * 4);
  const size_t col_scale_bytes = static_cast<size_t>(s.b * s.h * ((s.d + 127) / 128) * 128 * ((scols + 3) / 4) * 4);
  const std::vector<uint8_t> row_sc(row_scale_bytes, 123), col_sc(col_scale_bytes, 123);
  DevMem q(random_fp8(elems, rng)), k(random_fp8(elems, rng)), v(random_fp8(elems, rng)), dod(random_fp8(elems, rng));
  DevMem qt(random_fp8(elems, rng)), kt(random_fp8(elems, rng)), dot(random_fp8(elems, rng));
  DevMem qs(row_sc), ks(row_sc), vs(row_sc), dods(row_sc), qts(col_sc), kts(col_sc), dots(col_sc);
  DevMem o(random_bf16(elems, rng)), dout(random_bf16(elems, rng));
  DevMem lse(std::vector<uint8_t>(static_cast<size_t>(s.b * s.h * s.s) * 4, 0));
  DevMem dq(elems * 2), dk(elems * 2), dv(elems * 2), ws(std::max<size_t>(ws_bytes, 256));
  const mxqExecArg_t args[] = {
      {MXQ_ARG_Q_DATA, 0, q.ptr()},       {MXQ_ARG_Q_SCALES, 0, qs.ptr()},     {MXQ_ARG_K_DATA, 0, k.ptr()},
      {MXQ_ARG_K_SCALES, 0, ks.ptr()},    {MXQ_ARG_V_DATA, 0, v.ptr()},        {MXQ_ARG_V_SCALES, 0, vs.ptr()},
      {MXQ_ARG_DO_DATA, 0, dod.ptr()},    {MXQ_ARG_DO_SCALES, 0, dods.ptr()},  {MXQ_ARG_Q_T_DATA, 0, qt.ptr()},
      {MXQ_ARG_Q_T_SCALES, 0, qts.ptr()}, {MXQ_ARG_K_T_DATA, 0, kt.ptr()},     {MXQ_ARG_K_T_SCALES, 0, kts.ptr()},
      {MXQ_ARG_DO_T_DATA, 0, dot.ptr()},  {MXQ_ARG_DO_T_SCALES, 0, dots.ptr()}, {MXQ_ARG_O, 0, o.ptr()},
      {MXQ_ARG_DO, 0, dout.ptr()},        {MXQ_ARG_LSE, 0, lse.ptr()},         {MXQ_ARG_DQ, 0, dq.ptr()},
      {MXQ_ARG_DK, 0, dk.ptr()},          {MXQ_ARG_DV, 0, dv.ptr()}};
  const int nargs = static_cast<int>(sizeof args / sizeof args[0]);
  // MXQ_BENCH_DEFAULT_ONLY=1: only the default rule's plan is timed (A/B runs of one setting).
  const char* only = std::getenv("MXQ_BENCH_DEFAULT_ONLY");
  const int first = only && only[0] == '1' ? 2 : 0;
  for (int i = 0; i < first; ++i) mxqAttentionPlanDestroy(plans[i]);
  for (int i = first; i < 3; ++i) {
    mxqAttentionPlan_t p = plans[i];
    size_t w = 0;
    ckq(mxqAttentionPlanGetWorkspaceSize(p, &w), "mxqAttentionPlanGetWorkspaceSize");
    const double ms = time_ms(
        [&] { ckq(mxqAttentionExecute(h, p, args, nargs, ws.ptr(), w, nullptr), "mxqAttentionExecute"); }, iters);
    ck(cu.cuCtxSynchronize(), "after timing");
    double flops = 2.5 * 4.0 * static_cast<double>(s.b) * s.h * static_cast<double>(s.s) * s.s * s.d;
    if (s.causal) flops /= 2;
    const double tflops = flops / (ms * 1e-3) / 1e12;
    std::printf("B%lld H%lld S%lld D%lld %-10s %-24s %8.3f ms  %7.1f TFLOP/s", static_cast<long long>(s.b),
                static_cast<long long>(s.h), static_cast<long long>(s.s), static_cast<long long>(s.d),
                s.causal ? "causal" : "non-causal", labels[i], ms, tflops);
    if (s.cudnn_ref > 0) std::printf("   cuDNN bf16 bwd (ANCHORS, H100) %.0f: %.2fx", s.cudnn_ref, tflops / s.cudnn_ref);
    std::printf("\n");
    std::fflush(stdout);
    mxqAttentionPlanDestroy(p);
  }
}

}  // namespace

int main(int argc, char** argv) {
  mxq_bench::tool_name = "mxq_bench_attention_bwd";
  load_driver();
  mxqHandle_t h = nullptr;
  ckq(mxqCreate(&h), "mxqCreate");
  std::printf("mxq_bench_attention_bwd on %s, %s\n", device_name.c_str(), mxqGetBuildInfo());
  std::printf("TFLOP/s = 2.5 x 4*B*H*Sq*Skv*D (/2 causal) / median time; layout BSHD, swizzled scales, causal = "
              "bottom-right (Sq = Skv: same as top-left)\n");
  std::vector<Shape> shapes = {{2, 32, 4096, 128, false, 537.0}, {2, 32, 4096, 128, true, 450.0},
                               {1, 16, 16384, 128, true, 0.0}, {2, 32, 4096, 64, false, 0.0}};
  int iters = 10;
  if (argc >= 6) {
    shapes = {{std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]), std::atoi(argv[5]) != 0, 0.0}};
    if (argc >= 7) iters = std::max(1, std::atoi(argv[6]));
  }
  for (const auto& s : shapes) bench(h, s, iters);
  mxqDestroy(h);
  return 0;
}
