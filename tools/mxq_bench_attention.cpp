// Benchmark of the GPU MXFP8 attention forward (and backward, when the handle's device has a
// backward kernel) on the shapes, next to torch's bf16 SDPA (cuDNN and flash backends)
// when a torch peer script is given: its output is echoed and then read back for a table of
// ratios (mxq TFLOP/s over the peer's, same run).
//
//   mxq_bench_attention [--torch tools/bench_attention_torch.py] [--fwd-only] [iters]
//
// MXQ_BENCH_SHAPES="B,H,S,D,causal;..." (causal 0 or 1) replaces the shapes (the torch peer
// reads the same variable).
//
// FLOPs: forward 4*B*H*Sq*Skv*D, halved for a causal mask; backward 2.5x the forward. Times are
// means over `iters` launches after two warm-ups (CUDA events on the legacy stream). Inputs are
// random valid MXFP8 tensors as a quantizer writes them (FP8 magnitudes 2..448, UE8M0 scales
// 2^-8..2^-3; MXQ_BENCH_QDATA=0: magnitudes ~2^-4..2^4, scales 2^-4..2^1), so the softmax is
// neither flat nor one-hot.
#include <cmath>
#include <cstdlib>
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
  double fwd_tf = NAN, bwd_tf = NAN;  // mxq's figures, NaN where it did not run
};

uint64_t rng_state = 0x9E3779B97F4A7C15ull;
uint64_t next() {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
// FP8 bytes as a quantizer writes them (magnitudes 2..448 in every block) with scales 2^-8..2^-3;
// MXQ_BENCH_QDATA=0: the earlier inputs (magnitudes 2^-4..2^4, scales 2^-4..2^1), which the FP8
// attention forward's error bound sends to its exact kernel (docs/PERFORMANCE.md, nineteenth session).
bool qdata() {
  static const bool q = [] {
    const char* e = std::getenv("MXQ_BENCH_QDATA");
    return !(e && e[0] == '0');
  }();
  return q;
}
std::vector<uint8_t> fp8_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& x : v) {
    const uint64_t r = next();
    x = qdata() ? static_cast<uint8_t>(((r & 1) << 7) | (0x40 + (r >> 8) % 0x3F))
                : static_cast<uint8_t>(((r & 1) << 7) | (((3 + (r >> 8) % 8)) << 3) | ((r >> 16) & 7));
  }
  if (qdata())  // each 32-block along a row holds a magnitude >= 256, as a quantizer's amax
    for (size_t b0 = 0; b0 + 32 <= n; b0 += 32) {
      uint8_t& x = v[b0 + next() % 32];
      x = static_cast<uint8_t>((x & 0x80) | (0x70 + next() % 15));
    }
  return v;
}
std::vector<uint8_t> scale_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>((qdata() ? 119 : 123) + next() % 6);
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

void bench(mxqHandle_t h, Shape& s, int iters) {
  namespace L = mxq::layout;
  const int64_t rows = s.B * s.H * s.S;
  const size_t data = static_cast<size_t>(rows * s.D);
  const size_t d_scales = static_cast<size_t>(L::scale_bytes(true, rows, L::scale_cols(s.D)));
  const size_t s_scales = static_cast<size_t>(s.B * s.H * L::scale_bytes(true, s.D, L::scale_cols(s.S)));
  std::vector<uint8_t> vh = fp8_bytes(data);
  if (qdata()) {  // V's blocks run along S (BHSD: rows (b, h, s)): each (32 keys, d) holds its amax too
    for (int64_t r0 = 0; r0 < rows; r0 += 32)
      for (int64_t d = 0; d < s.D; ++d) {
        uint8_t& x = vh[static_cast<size_t>((r0 + static_cast<int64_t>(next() % 32)) * s.D + d)];
        x = static_cast<uint8_t>((x & 0x80) | (0x70 + next() % 15));
      }
  }
  DevMem q(fp8_bytes(data)), k(fp8_bytes(data)), v(vh);
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
  s.fwd_tf = flop / (tf * 1e-3) / 1e12;
  std::printf(" fwd %8.3f ms %7.1f TFLOP/s", tf, s.fwd_tf);
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
    s.bwd_tf = 2.5 * flop / (tb * 1e-3) / 1e12;
    std::printf("   bwd %8.3f ms %7.1f TFLOP/s\n", tb, s.bwd_tf);
  }
  ckq(mxqAttentionPlanDestroy(pb), "destroy");
  std::fflush(stdout);
}

// One line of the torch peer: "  <backend> B<b> H<h> S<s> D<d> <full|causal> fwd <ms> ms <tf> TFLOP/s
// bwd <ms> ms <tf> TFLOP/s" (the backward part may be missing).
struct PeerLine {
  std::string backend;
  Shape s;
};
bool parse_peer(const char* line, PeerLine& out) {
  char backend[16] = {0}, mode[16] = {0};
  long long b = 0, hh = 0, sq = 0, d = 0;
  double fms = 0, ftf = 0, bms = 0, btf = 0;
  const int n = std::sscanf(line, " %15s B%lld H%lld S%lld D%lld %15s fwd %lf ms %lf TFLOP/s bwd %lf ms %lf", backend, &b,
                            &hh, &sq, &d, mode, &fms, &ftf, &bms, &btf);
  if (n < 8) return false;
  out.backend = backend;
  out.s = Shape{b, hh, sq, d, std::strcmp(mode, "causal") == 0};
  out.s.fwd_tf = ftf;
  out.s.bwd_tf = n >= 10 ? btf : NAN;
  return true;
}

// Runs the peer, echoes its output, and prints mxq's TFLOP/s over each backend's, shape by shape.
void run_peer(const std::string& cmd, const std::vector<Shape>& ours) {
  std::printf("\n$ %s\n", cmd.c_str());
  std::fflush(stdout);
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) {
    std::printf("(could not start the torch peer)\n");
    return;
  }
  std::vector<PeerLine> peers;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    std::fputs(line, stdout);
    PeerLine pl;
    if (parse_peer(line, pl)) peers.push_back(pl);
  }
  const int rc = pclose(f);
  if (rc != 0) std::printf("(torch peer exited with status %d)\n", rc);
  if (peers.empty()) return;
  std::printf("\nratios, mxq TFLOP/s / peer TFLOP/s (same run; > 1: mxq faster):\n");
  auto ratio = [](double a, double b) { return std::isfinite(a) && std::isfinite(b) && b > 0 ? a / b : NAN; };
  for (const auto& s : ours) {
    std::printf("  B%-2lld H%-3lld S%-6lld D%-4lld %-7s", static_cast<long long>(s.B), static_cast<long long>(s.H),
                static_cast<long long>(s.S), static_cast<long long>(s.D), s.causal ? "causal" : "full");
    for (const auto& pl : peers) {
      const Shape& t = pl.s;
      if (t.B != s.B || t.H != s.H || t.S != s.S || t.D != s.D || t.causal != s.causal) continue;
      std::printf("  %s fwd %5.2fx", pl.backend.c_str(), ratio(s.fwd_tf, t.fwd_tf));
      if (!fwd_only) std::printf(" bwd %5.2fx", ratio(s.bwd_tf, t.bwd_tf));
    }
    std::printf("\n");
  }
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
  std::vector<Shape> shapes = {
      {2, 32, 4096, 128, false}, {2, 32, 4096, 128, true}, {1, 16, 16384, 128, true}, {2, 32, 4096, 64, false},
      // The larger head dims (forward only on sm_90a: the backward declines them).
      {2, 16, 4096, 256, false}, {2, 16, 4096, 256, true}, {2, 16, 4096, 192, false}};
  if (const char* e = std::getenv("MXQ_BENCH_SHAPES")) {
    shapes.clear();
    for (const char* t = e; *t;) {
      long long b = 0, hh = 0, sq = 0, d = 0;
      int c = 0;
      if (std::sscanf(t, "%lld,%lld,%lld,%lld,%d", &b, &hh, &sq, &d, &c) == 5 && b > 0 && hh > 0 && sq > 0 && d > 0)
        shapes.push_back({b, hh, sq, d, c != 0});
      const char* semi = std::strchr(t, ';');
      if (!semi) break;
      t = semi + 1;
    }
  }
  for (auto& s : shapes) bench(h, s, iters);
  mxqDestroy(h);
  if (!torch_script.empty()) run_peer("python3 " + torch_script + " --iters " + std::to_string(iters), shapes);
  return 0;
}
