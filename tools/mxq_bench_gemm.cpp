// mxq_bench_gemm: times the MXFP8 grouped GEMM next to cuBLAS bf16 on the same problems and prints
// TFLOP/s and the ratio. The comparison the issue sets: an MXFP8 GEMM on Hopper is only worth having
// if it is at least as fast as the bf16 GEMM it replaces (grouped: one cuBLAS call per group, the
// usual bf16 MoE baseline). Buffers come from the driver API (dlopen, like libmxq itself); cuBLAS
// is used only when the tool was linked with it (MXQ_BENCH_HAVE_CUBLAS, tools/CMakeLists.txt).
//
// Every shape of issue #4 runs in one invocation (a few seconds in all):
//   fprop (M-grouped, uneven group sizes)   E8 M65536 N2048 K7168, E32 M65536 N1536 K4096,
//                                           E128 M32768 N768 K2048
//   wgrad (K-grouped, fp32 output)          the same three problems: D[g] [N_out, K_in] over the
//                                           tokens of group g (mxq M = N_out, N = K_in, K = tokens);
//                                           then again with bf16 output ("bf16 D": torch's
//                                           _grouped_mm writes bf16 there, so compare with these)
//   decode (M-grouped, memory-bound)        E64 x 16 tokens N2048 K7168, E128 x 8 tokens N768 K2048:
//                                           time, bytes moved per second against a device copy
//   dense                                   8192^3
// Columns: "mxq" is the plan's default kernel; "fp8-prom" is the same plan with the
// MXQ_GEMM_ATTR_B_BLOCK_2D hint, which selects FP8 wgmma with CUDA-core promotion: for fprop, decode
// and dense the 32x32-weight kernel (one FFMA per element and 32-block; MXQ_GEMM_SM90_FP8B2D=0 falls
// back to the first FP8-wgmma kernel), for wgrad the first FP8-wgmma kernel. The inputs are identical,
// so both are timed on the same bytes (B's scales are not 32x32-uniform here: timing only, the values
// do not change the work). Ratios are against cuBLAS bf16.
//
//   mxq_bench_gemm [--torch SCRIPT]     all shapes; SCRIPT (tools/bench_gemm_torch.py) then times
//                                       torch._grouped_mm / torch._scaled_grouped_mm on them
//   mxq_bench_gemm M N K G [iters]      one M-grouped shape with uneven groups (G = 1: dense)
//   --mxq-only                          mxq's default plan only (no fp8-prom, no cuBLAS): quick
//                                       side-by-side runs of kernel changes or environment settings
//   --only fprop|wgrad|decode|dense     the shapes of one kind only
//   --groups G                          the shapes with G groups only (e.g. --only wgrad --groups 128)
//   --align N                           uneven group sizes rounded to multiples of N (default: odd
//                                       sizes, so no group after the first starts aligned)
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_driver.h"
#include "core/layout.h"
#include "mxq/mxq.h"

#ifdef MXQ_BENCH_HAVE_CUBLAS
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace {

using namespace mxq_bench;

bool mxq_only = false;  // --mxq-only
std::string only_kind;  // --only KIND
int64_t only_groups = 0;  // --groups G
int64_t group_align = 1;  // --align N: uneven group sizes rounded to multiples of N (1: odd, never aligned)

enum class Kind { Fprop, Wgrad, Decode, Dense };

struct Shape {
  Kind kind;
  int64_t m, n, k, groups;
  int iters;
  bool bf16_d = false;  // wgrad with bf16 output (else fp32)
};

// Group sizes summing to `total`: uneven (0.5x to 1.5x the mean, fixed pseudo-random pattern, not
// multiples of 32 or 128) unless `even`.
std::vector<int64_t> group_sizes(int64_t total, int64_t groups, bool even) {
  std::vector<int64_t> s(static_cast<size_t>(groups), total / groups);
  if (!even && groups > 1) {
    uint64_t x = 0x2545F4914F6CDD1Dull;
    const int64_t mean = total / groups;
    for (int64_t g = 0; g + 1 < groups; g += 2) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      int64_t d = static_cast<int64_t>(x % static_cast<uint64_t>(mean / 2 + 1)) | 1;  // odd: never aligned
      if (group_align > 1) d = d / group_align * group_align;                          // --align N
      s[static_cast<size_t>(g)] += d;
      s[static_cast<size_t>(g + 1)] -= d;
    }
  }
  int64_t sum = 0;
  for (auto v : s) sum += v;
  s.back() += total - sum;
  return s;
}

// Device buffer of `bytes` random bytes: a 16 MiB host pattern (fix-up applied per byte) repeated.
struct Filler {
  std::vector<uint8_t> pat;
  Filler(uint64_t seed, uint8_t lo_mask, uint8_t fix_from, uint8_t fix_to, bool bf16) : pat(size_t(16) << 20) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < pat.size(); i += 8) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      for (size_t j = 0; j < 8; ++j) {
        uint8_t b = static_cast<uint8_t>(x >> (8 * j));
        if ((b & lo_mask) == fix_from) b = static_cast<uint8_t>((b & ~lo_mask) | fix_to);
        pat[i + j] = b;
      }
    }
    // bf16: high bytes 0x3C..0x3F / 0xBC..0xBF, i.e. |x| in [2^-7, 2): finite, no denormals.
    if (bf16)
      for (size_t i = 1; i < pat.size(); i += 2) pat[i] = static_cast<uint8_t>(0x3C | (pat[i] & 0x83));
  }
  void fill(DevMem& d, size_t bytes) const {
    for (size_t off = 0; off < bytes; off += pat.size())
      ck(cu.cuMemcpyHtoD(d.p + off, pat.data(), std::min(pat.size(), bytes - off)), "cuMemcpyHtoD");
  }
};

template <typename F>
double time_ms(F&& f, int iters) {
  void *e0, *e1;
  ck(cu.cuEventCreate(&e0, 0), "cuEventCreate");
  ck(cu.cuEventCreate(&e1, 0), "cuEventCreate");
  for (int i = 0; i < 2; ++i) f();
  ck(cu.cuCtxSynchronize(), "warmup");
  ck(cu.cuEventRecord(e0, nullptr), "cuEventRecord");
  for (int i = 0; i < iters; ++i) f();
  ck(cu.cuEventRecord(e1, nullptr), "cuEventRecord");
  ck(cu.cuEventSynchronize(e1), "cuEventSynchronize");
  float ms = 0;
  ck(cu.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
  return ms / iters;
}

// Device-to-device copy bandwidth (bytes read + written per second), the memory roofline decode
// shapes are compared with.
double copy_tbps() {
  const size_t bytes = size_t(1) << 30;
  DevMem a(bytes), b(bytes);
  const double ms = time_ms([&] { ck(cu.cuMemcpyDtoDAsync(b.p, a.p, bytes, nullptr), "cuMemcpyDtoDAsync"); }, 10);
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e12;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Fprop: return "fprop";
    case Kind::Wgrad: return "wgrad";
    case Kind::Decode: return "decode";
    default: return "dense";
  }
}

void bench(const Shape& s, mxqHandle_t h, double copy_bw) {
  using namespace mxq::layout;
  const bool kgrouped = s.kind == Kind::Wgrad;
  const bool grouped = s.kind != Kind::Dense;
  const int64_t G = grouped ? s.groups : 1;
  const std::vector<int64_t> sizes = group_sizes(kgrouped ? s.k : s.m, G, s.kind == Kind::Decode);
  const double flops = 2.0 * s.m * s.n * s.k;
  const bool out_f32 = kgrouped && !s.bf16_d;  // wgrad: fp32 main-grad output (or bf16 D, like torch)
  const size_t esz = out_f32 ? 4 : 2;

  // ---- mxq MXFP8 --------------------------------------------------------------------------------
  const int64_t a_bytes = s.m * s.k, b_bytes = (kgrouped ? 1 : G) * s.n * s.k;
  const int64_t d_rows = kgrouped ? G * s.m : s.m;
  const int64_t kc = scale_cols(s.k), kcpad = swz_cols(kc);
  int64_t as_bytes, bs_bytes;
  if (kgrouped) {
    const int64_t cols = kgroup_scale_cols_bound(true, s.k, G);
    as_bytes = swz_rows(s.m) * cols;
    bs_bytes = swz_rows(s.n) * cols;
  } else {
    as_bytes = (grouped ? mgroup_scale_rows_bound(s.m, G) : swz_rows(s.m)) * kcpad;
    bs_bytes = G * scale_bytes(true, s.n, kc);
  }
  const Filler f8(1, 0x7F, 0x7F, 0x7E, false);  // E4M3 without NaN encodings
  DevMem da(static_cast<size_t>(a_bytes)), db(static_cast<size_t>(b_bytes)), dd(static_cast<size_t>(d_rows * s.n) * esz);
  f8.fill(da, da.bytes);
  f8.fill(db, db.bytes);
  // Scale exponents 120..134 (2^-7 .. 2^7): inside the exact fast range of every kernel.
  std::vector<uint8_t> as(static_cast<size_t>(as_bytes)), bs(static_cast<size_t>(bs_bytes));
  for (size_t i = 0; i < as.size(); ++i) as[i] = static_cast<uint8_t>(120 + i % 15);
  for (size_t i = 0; i < bs.size(); ++i) bs[i] = static_cast<uint8_t>(120 + i % 13);
  std::vector<uint8_t> offs(static_cast<size_t>(G) * 4);
  int64_t end = 0;
  for (int64_t g = 0; g < G; ++g) {
    end += sizes[static_cast<size_t>(g)];
    const int32_t e = static_cast<int32_t>(end);
    std::memcpy(&offs[static_cast<size_t>(g) * 4], &e, 4);
  }
  DevMem das(as), dbs(bs), doff(offs);

  auto run_mxq = [&](bool hint_2d) {
    mxqGroupedGemmPlan_t plan = nullptr;
    ckq(mxqGroupedGemmPlanCreate(h, &plan), "plan create");
    auto set32 = [&](mxqGroupedGemmAttribute_t at, int32_t v) { ckq(mxqGroupedGemmPlanSetAttribute(plan, at, &v, 4), "set"); };
    auto set64 = [&](mxqGroupedGemmAttribute_t at, int64_t v) { ckq(mxqGroupedGemmPlanSetAttribute(plan, at, &v, 8), "set"); };
    set32(MXQ_GEMM_ATTR_GROUPING, kgrouped ? MXQ_GEMM_GROUPING_K : grouped ? MXQ_GEMM_GROUPING_M : MXQ_GEMM_GROUPING_NONE);
    set64(MXQ_GEMM_ATTR_M, s.m);
    set64(MXQ_GEMM_ATTR_N, s.n);
    set64(MXQ_GEMM_ATTR_K, s.k);
    if (grouped) set64(MXQ_GEMM_ATTR_NUM_GROUPS, G);
    set32(MXQ_GEMM_ATTR_D_DTYPE, out_f32 ? MXQ_DTYPE_FP32 : MXQ_DTYPE_BF16);
    if (hint_2d) set32(MXQ_GEMM_ATTR_B_BLOCK_2D, 1);
    const mxqStatus_t st = mxqGroupedGemmPlanFinalize(plan);
    if (st != MXQ_STATUS_SUCCESS) {
      std::printf(" %-9s %s", hint_2d ? "fp8-prom" : "mxq", mxqGetStatusName(st));
      mxqGroupedGemmPlanDestroy(plan);
      return -1.0;
    }
    std::vector<mxqExecArg_t> args = {{MXQ_ARG_A_DATA, 0, da.ptr()}, {MXQ_ARG_A_SCALES, 0, das.ptr()},
                                      {MXQ_ARG_B_DATA, 0, db.ptr()}, {MXQ_ARG_B_SCALES, 0, dbs.ptr()},
                                      {MXQ_ARG_D, 0, dd.ptr()}};
    if (grouped) args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, doff.ptr()});
    size_t ws = 0;  // e.g. the dequantized B of the TMA kernel's pre-kernel path (counted in the time)
    ckq(mxqGroupedGemmPlanGetWorkspaceSize(plan, &ws), "workspace size");
    DevMem dws(ws ? ws : 1);
    const double ms = time_ms([&] {
      ckq(mxqGroupedGemmExecute(h, plan, args.data(), static_cast<int>(args.size()), ws ? dws.ptr() : nullptr, ws,
                                nullptr),
          "execute");
    }, s.iters);
    mxqGroupedGemmPlanDestroy(plan);
    return ms;
  };
  const double ms = run_mxq(false);
  const double ms_prom = mxq_only ? -1.0 : run_mxq(true);
  auto tf = [&](double t) { return t > 0 ? flops / (t * 1e-3) / 1e12 : 0.0; };

  char shape[96];
  if (grouped)
    std::snprintf(shape, sizeof shape, "E%lld M%lld N%lld K%lld%s", static_cast<long long>(G), static_cast<long long>(s.m),
                  static_cast<long long>(s.n), static_cast<long long>(s.k), s.bf16_d ? " bf16D" : "");
  else
    std::snprintf(shape, sizeof shape, "M%lld N%lld K%lld", static_cast<long long>(s.m), static_cast<long long>(s.n),
                  static_cast<long long>(s.k));
  std::printf("%-6s %-26s mxq %8.3f ms %6.1f TF | fp8-prom %8.3f ms %6.1f TF", kind_name(s.kind), shape, ms, tf(ms),
              ms_prom, tf(ms_prom));
  // Bytes an ideal kernel moves: both operands, their scales and D once.
  const double moved = static_cast<double>(a_bytes + b_bytes + as_bytes + bs_bytes) +
                       static_cast<double>(d_rows * s.n) * static_cast<double>(esz);

#ifdef MXQ_BENCH_HAVE_CUBLAS
  // ---- cuBLAS bf16, one call per group (row-major D = A B^T as column-major D^T = B A^T) ---------
  double ms_bf16 = -1.0;
  if (!mxq_only) {
    const Filler f16(3, 0x7F, 0x7F, 0x3F, true);
    DevMem ha(static_cast<size_t>(a_bytes) * 2), hb(static_cast<size_t>(b_bytes) * 2);
    f16.fill(ha, ha.bytes);
    f16.fill(hb, hb.bytes);
    cublasHandle_t cb;
    if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) die("cublasCreate failed");
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t dt = out_f32 ? CUDA_R_32F : CUDA_R_16BF;
    ms_bf16 = time_ms([&] {
      int64_t start = 0;
      for (int64_t g = 0; g < G; ++g) {
        const int64_t len = sizes[static_cast<size_t>(g)];
        const char *ap, *bp;
        char* dp;
        int m, kk, ld;
        if (kgrouped) {  // D[g] [M, N] = A[:, tokens] B[:, tokens]^T, A [M, T], B [N, T]
          ap = static_cast<const char*>(ha.ptr()) + start * 2;
          bp = static_cast<const char*>(hb.ptr()) + start * 2;
          dp = static_cast<char*>(dd.ptr()) + g * s.m * s.n * static_cast<int64_t>(esz);
          m = static_cast<int>(s.m);
          kk = static_cast<int>(len);
          ld = static_cast<int>(s.k);
        } else {  // rows [start, start + len) of A and D, B[g]
          ap = static_cast<const char*>(ha.ptr()) + start * s.k * 2;
          bp = static_cast<const char*>(hb.ptr()) + g * s.n * s.k * 2;
          dp = static_cast<char*>(dd.ptr()) + start * s.n * static_cast<int64_t>(esz);
          m = static_cast<int>(len);
          kk = static_cast<int>(s.k);
          ld = static_cast<int>(s.k);
        }
        start += len;
        if (m == 0 || kk == 0) continue;
        if (cublasGemmEx(cb, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.n), m, kk, &one, bp, CUDA_R_16BF, ld, ap,
                         CUDA_R_16BF, ld, &zero, dp, dt, static_cast<int>(s.n), CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
          die("cublasGemmEx failed");
      }
    }, s.iters);
    cublasDestroy(cb);
    std::printf(" | cuBLAS bf16 %8.3f ms %6.1f TF | ratio %.2fx (fp8-prom %.2fx)", ms_bf16, tf(ms_bf16), ms_bf16 / ms,
                ms_prom > 0 ? ms_bf16 / ms_prom : 0.0);
  }
#else
  std::printf(" | (cuBLAS not linked: no bf16 baseline)");
#endif
  std::printf("\n");
  if (s.kind == Kind::Decode) {
    const double bw = moved / (ms * 1e-3) / 1e12;
    std::printf("       decode: %.3f GB moved, mxq %.2f TB/s = %.2f of copy (%.2f TB/s); fp8-prom %.2f TB/s", moved / 1e9,
                bw, bw / copy_bw, copy_bw, ms_prom > 0 ? moved / (ms_prom * 1e-3) / 1e12 : 0.0);
#ifdef MXQ_BENCH_HAVE_CUBLAS
    const double moved16 = 2.0 * static_cast<double>(a_bytes + b_bytes) + static_cast<double>(d_rows * s.n) * 2.0;
    if (ms_bf16 > 0) std::printf("; bf16 %.3f GB at %.2f TB/s", moved16 / 1e9, moved16 / (ms_bf16 * 1e-3) / 1e12);
#endif
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  mxq_bench::tool_name = "mxq_bench_gemm";
  std::vector<std::string> pos;
  std::string torch_script;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--torch" && i + 1 < argc) torch_script = argv[++i];
    else if (std::string(argv[i]) == "--mxq-only") mxq_only = true;
    else if (std::string(argv[i]) == "--only" && i + 1 < argc) only_kind = argv[++i];
    else if (std::string(argv[i]) == "--groups" && i + 1 < argc) only_groups = std::atoll(argv[++i]);
    else if (std::string(argv[i]) == "--align" && i + 1 < argc) group_align = std::max<int64_t>(1, std::atoll(argv[++i]));
    else pos.push_back(argv[i]);
  }
  load_driver();
  mxqHandle_t h = nullptr;
  ckq(mxqCreate(&h), "mxqCreate");
  std::printf("mxq_bench_gemm on %s, %s\n", device_name.c_str(), mxqGetBuildInfo());
  std::printf("TF = TFLOP/s (2MNK / time), bf16 output (wgrad: fp32, or bf16 where marked bf16D), uneven groups; "
              "mean of N runs after 2 warm-ups\n");
  const double copy_bw = copy_tbps();
  std::vector<Shape> shapes;
  if (pos.size() >= 4) {
    const int64_t g = std::atoll(pos[3].c_str());
    shapes.push_back({g > 1 ? Kind::Fprop : Kind::Dense, std::atoll(pos[0].c_str()), std::atoll(pos[1].c_str()),
                      std::atoll(pos[2].c_str()), g, pos.size() >= 5 ? std::max(1, std::atoi(pos[4].c_str())) : 10});
  } else {
    shapes = {
        {Kind::Fprop, 65536, 2048, 7168, 8, 5},    {Kind::Fprop, 65536, 1536, 4096, 32, 5},
        {Kind::Fprop, 32768, 768, 2048, 128, 10},  {Kind::Wgrad, 2048, 7168, 65536, 8, 5},
        {Kind::Wgrad, 1536, 4096, 65536, 32, 5},   {Kind::Wgrad, 768, 2048, 32768, 128, 10},
        {Kind::Wgrad, 2048, 7168, 65536, 8, 5, true}, {Kind::Wgrad, 1536, 4096, 65536, 32, 5, true},
        {Kind::Wgrad, 768, 2048, 32768, 128, 10, true},
        {Kind::Decode, 64 * 16, 2048, 7168, 64, 20}, {Kind::Decode, 128 * 8, 768, 2048, 128, 20},
        {Kind::Dense, 8192, 8192, 8192, 1, 10},
    };
  }
  for (const auto& s : shapes)
    if ((only_kind.empty() || only_kind == kind_name(s.kind)) && (only_groups == 0 || only_groups == s.groups))
      bench(s, h, copy_bw);
  mxqDestroy(h);
  if (!torch_script.empty()) {
    std::printf("\n$ python3 %s\n", torch_script.c_str());
    std::fflush(stdout);
    const int rc = std::system(("python3 " + torch_script).c_str());
    if (rc != 0) std::printf("(torch peer exited with status %d)\n", rc);
  }
  return 0;
}
