// Benchmark of the GPU MXFP8 attention forward (and backward, when the handle's device has a
// backward kernel) on the shapes, next to torch's bf16 SDPA (cuDNN and flash backends)
// when a torch peer script is given.
//
//   mxq_bench_attention [--torch tools/bench_attention_torch.py] [--fwd-only] [iters]
//
// FLOPs: forward 4*B*H*Sq*Skv*D, halved for a causal mask; backward 2.5x the forward. Times are
// means over `iters` launches after two warm-ups (CUDA events on the legacy stream). Inputs are
// random valid MXFP8 tensors (FP8 magnitudes ~2^-4..2^4, UE8M0 scales 2^-4..2^1), so the softmax
// is neither flat nor one-hot.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_driver.h"
#include "core/layout.h"

using namespace mxq_bench;

namespace {

struct Shape {
  int64_t B, H, S, D;
  bool causal;
};

uint64_t rng_state = 0x9E3779B97F4A7C15ull;
uint64_t next() {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
std::vector<uint8_t> fp8_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& x : v) {
    const uint64_t r = next();
    x = static_cast<uint8_t>(((r & 1) << 7) | (((3 + (r >> 8) % 8)) << 3) | ((r >> 16) & 7));
  }
  return v;
}
std::vector<uint8_t> scale_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(123 + next() % 6);
  return v;
}

template <typename Fn>
double time_ms(Fn&& fn, int iters) {
  void *a = nullptr, *b = nullptr;
  ck(cu.cuEventCreate(&a, 0), "cuEventCreate");
  ck(cu.cuEventCreate(&b, 0), "cuEventCreate");
  fn();
  fn();
  ck(cu.cuEventRecord(a, nullptr), "cuEventRecord");
  for (int i = 0; i < iters; ++i) fn();
  ck(cu.cuEventRecord(b, nullptr), "cuEventRecord");
  ck(cu.cuEventSynchronize(b), "cuEventSynchronize");
  float ms = 0;
  ck(cu.cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime");
  return ms / iters;
}

mxqAttentionPlan_t plan(mxqHandle_t h, const Shape& s, mxqAttentionDirection_t dir) {
  mxqAttentionPlan_t p = nullptr;
  ckq(mxqAttentionPlanCreate(h, &p), "mxqAttentionPlanCreate");
  auto set64 = [&](mxqAttentionAttribute_t a, int64_t v) { ckq(mxqAttentionPlanSetAttribute(p, a, &v, 8), "set"); };
  auto set32 = [&](mxqAttentionAttribute_t a, int32_t v) { ckq(mxqAttentionPlanSetAttribute(p, a, &v, 4), "set"); };
  set32(MXQ_ATTN_ATTR_DIRECTION, dir);
  set64(MXQ_ATTN_ATTR_BATCH, s.B);
  set64(MXQ_ATTN_ATTR_HEADS_Q, s.H);
  set64(MXQ_ATTN_ATTR_SEQLEN_Q, s.S);
  set64(MXQ_ATTN_ATTR_SEQLEN_KV, s.S);
  set64(MXQ_ATTN_ATTR_HEAD_DIM, s.D);
  set32(MXQ_ATTN_ATTR_MASK, s.causal ? MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT : MXQ_ATTN_MASK_NONE);
  return p;
}

bool fwd_only = false;

void bench(mxqHandle_t h, const Shape& s, int iters) {
  namespace L = mxq::layout;
  const int64_t rows = s.B * s.H * s.S;
  const size_t data = static_cast<size_t>(rows * s.D);
  const size_t d_scales = static_cast<size_t>(L::scale_bytes(true, rows, L::scale_cols(s.D)));
  const size_t s_scales = static_cast<size_t>(s.B * s.H * L::scale_bytes(true, s.D, L::scale_cols(s.S)));
  DevMem q(fp8_bytes(data)), k(fp8_bytes(data)), v(fp8_bytes(data));
  DevMem qs(scale_bytes(d_scales)), ks(scale_bytes(d_scales)), vs(scale_bytes(s_scales));
  DevMem o(data * 2), lse(static_cast<size_t>(rows * 4));
  const double flop = 4.0 * s.B * s.H * s.S * s.S * s.D * (s.causal ? 0.5 : 1.0);
  std::printf("  B%-2lld H%-3lld S%-6lld D%-4lld %-7s", static_cast<long long>(s.B), static_cast<long long>(s.H),
              static_cast<long long>(s.S), static_cast<long long>(s.D), s.causal ? "causal" : "full");

  mxqAttentionPlan_t pf = plan(h, s, MXQ_ATTN_FORWARD);
  ckq(mxqAttentionPlanFinalize(pf), "forward Finalize");
  size_t fws = 0;
  ckq(mxqAttentionPlanGetWorkspaceSize(pf, &fws), "workspace");
  DevMem fwsm(fws);
  mxqExecArg_t fargs[] = {{MXQ_ARG_Q_DATA, 0, q.ptr()},   {MXQ_ARG_Q_SCALES, 0, qs.ptr()}, {MXQ_ARG_K_DATA, 0, k.ptr()},
                          {MXQ_ARG_K_SCALES, 0, ks.ptr()}, {MXQ_ARG_V_DATA, 0, v.ptr()},    {MXQ_ARG_V_SCALES, 0, vs.ptr()},
                          {MXQ_ARG_O, 0, o.ptr()},         {MXQ_ARG_LSE, 0, lse.ptr()}};
  const double tf = time_ms([&] { ckq(mxqAttentionExecute(h, pf, fargs, 8, fwsm.ptr(), fws, nullptr), "forward"); }, iters);
  std::printf(" fwd %8.3f ms %7.1f TFLOP/s", tf, flop / (tf * 1e-3) / 1e12);
  ckq(mxqAttentionPlanDestroy(pf), "destroy");

  if (fwd_only) {
    std::printf("\n");
    return;
  }
  mxqAttentionPlan_t pb = plan(h, s, MXQ_ATTN_BACKWARD);
  const mxqStatus_t st = mxqAttentionPlanFinalize(pb);
  if (st != MXQ_STATUS_SUCCESS) {
    std::printf("   bwd: %s\n", mxqGetStatusName(st));
  } else {
    size_t ws = 0;
    ckq(mxqAttentionPlanGetWorkspaceSize(pb, &ws), "workspace");
    DevMem wsm(ws), dq(data * 2), dk(data * 2), dv(data * 2), do16(data * 2);
    DevMem dod(fp8_bytes(data)), dos(scale_bytes(d_scales)), qt(fp8_bytes(data)), qts(scale_bytes(s_scales));
    DevMem kt(fp8_bytes(data)), kts(scale_bytes(s_scales)), dot(fp8_bytes(data)), dots(scale_bytes(s_scales));
    ck(cu.cuMemsetD8Async(do16.p, 0x3C, data * 2, nullptr), "memset");  // bf16 ~0.0115
    // O and LSE are the forward's outputs above, so the recomputed P is the true softmax (<= 1): a
    // made-up LSE lets P overflow to Inf with these inputs and times the non-finite paths instead.
    mxqExecArg_t bargs[] = {
        {MXQ_ARG_Q_DATA, 0, q.ptr()},     {MXQ_ARG_Q_SCALES, 0, qs.ptr()},    {MXQ_ARG_K_DATA, 0, k.ptr()},
        {MXQ_ARG_K_SCALES, 0, ks.ptr()},  {MXQ_ARG_V_DATA, 0, v.ptr()},       {MXQ_ARG_V_SCALES, 0, qs.ptr()},
        {MXQ_ARG_O, 0, o.ptr()},          {MXQ_ARG_LSE, 0, lse.ptr()},        {MXQ_ARG_DO_DATA, 0, dod.ptr()},
        {MXQ_ARG_DO_SCALES, 0, dos.ptr()}, {MXQ_ARG_DO, 0, do16.ptr()},       {MXQ_ARG_Q_T_DATA, 0, qt.ptr()},
        {MXQ_ARG_Q_T_SCALES, 0, qts.ptr()}, {MXQ_ARG_K_T_DATA, 0, kt.ptr()},  {MXQ_ARG_K_T_SCALES, 0, kts.ptr()},
        {MXQ_ARG_DO_T_DATA, 0, dot.ptr()}, {MXQ_ARG_DO_T_SCALES, 0, dots.ptr()}, {MXQ_ARG_DQ, 0, dq.ptr()},
        {MXQ_ARG_DK, 0, dk.ptr()},        {MXQ_ARG_DV, 0, dv.ptr()}};
    const double tb = time_ms(
        [&] { ckq(mxqAttentionExecute(h, pb, bargs, 20, wsm.ptr(), ws, nullptr), "backward"); }, iters);
    std::printf("   bwd %8.3f ms %7.1f TFLOP/s\n", tb, 2.5 * flop / (tb * 1e-3) / 1e12);
  }
  ckq(mxqAttentionPlanDestroy(pb), "destroy");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  tool_name = "mxq_bench_attention";
  std::string torch_script;
  int iters = 10;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--torch" && i + 1 < argc) torch_script = argv[++i];
    else if (std::string(argv[i]) == "--fwd-only") fwd_only = true;
    else iters = std::max(1, std::atoi(argv[i]));
  }
  load_driver();
  mxqHandle_t h = nullptr;
  ckq(mxqCreate(&h), "mxqCreate");
  std::printf("mxq_bench_attention on %s, %s\n", device_name.c_str(), mxqGetBuildInfo());
  std::printf("MXFP8 E4M3 in, bf16 O; BHSD, swizzled scales; FLOPs 4*B*H*S^2*D (causal: half), backward 2.5x\n");
  const std::vector<Shape> shapes = {
      {2, 32, 4096, 128, false}, {2, 32, 4096, 128, true}, {1, 16, 16384, 128, true}, {2, 32, 4096, 64, false},
      // The larger head dims (forward only on sm_90a: the backward declines them).
      {2, 16, 4096, 256, false}, {2, 16, 4096, 256, true}, {2, 16, 4096, 192, false}};
  for (const auto& s : shapes) bench(h, s, iters);
  mxqDestroy(h);
  if (!torch_script.empty()) {
    const std::string cmd = "python3 " + torch_script + " --iters " + std::to_string(iters);
    std::printf("\n$ %s\n", cmd.c_str());
    std::fflush(stdout);
    const int rc = std::system(cmd.c_str());
    if (rc != 0) std::printf("(torch peer exited with status %d)\n", rc);
  }
  return 0;
}
