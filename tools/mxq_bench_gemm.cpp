// mxq_bench_gemm: times the MXFP8 grouped GEMM next to cuBLAS bf16 on the same shape and prints
// TFLOP/s and the ratio. The comparison the issue sets: an MXFP8 GEMM on Hopper is only worth having
// if it is at least as fast as the bf16 GEMM it replaces (grouped: one cuBLAS call per group, the
// usual bf16 MoE baseline). Buffers come from the driver API (dlopen, like libmxq itself); cuBLAS
// is used only when the tool was linked with it (MXQ_BENCH_HAVE_CUBLAS, tools/CMakeLists.txt).
//
//   mxq_bench_gemm                      the shapes: fprop E8 M65536 N2048 K7168, dense 8192^3
//   mxq_bench_gemm M N K G [iters]      one shape; G > 1: M-grouped with M/G rows per group
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/layout.h"
#include "bench_driver.h"
#include "mxq/mxq.h"

#ifdef MXQ_BENCH_HAVE_CUBLAS
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace {

using namespace mxq_bench;

// Fast reproducible filler (the data's values do not matter for timing, only that they are not
// constant, which would flatter the tensor cores' power draw).
void fill(std::vector<uint8_t>& v, uint64_t seed, uint8_t lo_mask, uint8_t fix_from, uint8_t fix_to) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < v.size(); i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    for (size_t j = 0; j < 8 && i + j < v.size(); ++j) {
      uint8_t b = static_cast<uint8_t>(x >> (8 * j));
      if ((b & lo_mask) == fix_from) b = static_cast<uint8_t>((b & ~lo_mask) | fix_to);
      v[i + j] = b;
    }
  }
}

template <typename F>
double time_ms(F&& f, int iters) {
  void *e0, *e1;
  ck(cu.cuEventCreate(&e0, 0), "cuEventCreate");
  ck(cu.cuEventCreate(&e1, 0), "cuEventCreate");
  for (int i = 0; i < 3; ++i) f();
  ck(cu.cuCtxSynchronize(), "warmup");
  ck(cu.cuEventRecord(e0, nullptr), "cuEventRecord");
  for (int i = 0; i < iters; ++i) f();
  ck(cu.cuEventRecord(e1, nullptr), "cuEventRecord");
  ck(cu.cuEventSynchronize(e1), "cuEventSynchronize");
  float ms = 0;
  ck(cu.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
  return ms / iters;
}

void bench(int64_t m, int64_t n, int64_t k, int64_t groups, int iters, mxqHandle_t h) {
  using namespace mxq::layout;
  const bool grouped = groups > 1;
  const int64_t per = m / groups;
  if (per * groups != m) die("M must be a multiple of G");
  const double flops = 2.0 * m * n * k;

  // ---- mxq MXFP8 --------------------------------------------------------------------------------
  const int64_t kc = scale_cols(k), kcpad = swz_cols(kc);
  std::vector<uint8_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(groups * n * k));
  fill(a, 1, 0x7F, 0x7F, 0x7E);  // E4M3: no NaN encodings
  fill(b, 2, 0x7F, 0x7F, 0x7E);
  std::vector<uint8_t> as(static_cast<size_t>(mgroup_scale_rows_bound(m, groups) * kcpad)),
      bs(static_cast<size_t>(groups * scale_bytes(true, n, kc)));
  for (size_t i = 0; i < as.size(); ++i) as[i] = static_cast<uint8_t>(120 + i % 15);
  for (size_t i = 0; i < bs.size(); ++i) bs[i] = static_cast<uint8_t>(120 + i % 13);
  std::vector<uint8_t> offs(static_cast<size_t>(groups) * 4);
  for (int64_t g = 0; g < groups; ++g) {
    const int32_t e = static_cast<int32_t>((g + 1) * per);
    std::memcpy(&offs[g * 4], &e, 4);
  }
  std::vector<uint8_t> d(static_cast<size_t>(m * n * 2), 0);
  DevMem da(a), db(b), das(as), dbs(bs), doff(offs), dd(d);

  mxqGroupedGemmPlan_t plan = nullptr;
  ckq(mxqGroupedGemmPlanCreate(h, &plan), "plan create");
  auto set32 = [&](mxqGroupedGemmAttribute_t at, int32_t v) { ckq(mxqGroupedGemmPlanSetAttribute(plan, at, &v, 4), "set"); };
  auto set64 = [&](mxqGroupedGemmAttribute_t at, int64_t v) { ckq(mxqGroupedGemmPlanSetAttribute(plan, at, &v, 8), "set"); };
  set32(MXQ_GEMM_ATTR_GROUPING, grouped ? MXQ_GEMM_GROUPING_M : MXQ_GEMM_GROUPING_NONE);
  set64(MXQ_GEMM_ATTR_M, m);
  set64(MXQ_GEMM_ATTR_N, n);
  set64(MXQ_GEMM_ATTR_K, k);
  if (grouped) set64(MXQ_GEMM_ATTR_NUM_GROUPS, groups);
  set32(MXQ_GEMM_ATTR_D_DTYPE, MXQ_DTYPE_BF16);
  ckq(mxqGroupedGemmPlanFinalize(plan), "finalize");
  std::vector<mxqExecArg_t> args = {{MXQ_ARG_A_DATA, 0, da.ptr()}, {MXQ_ARG_A_SCALES, 0, das.ptr()},
                                    {MXQ_ARG_B_DATA, 0, db.ptr()}, {MXQ_ARG_B_SCALES, 0, dbs.ptr()},
                                    {MXQ_ARG_D, 0, dd.ptr()}};
  if (grouped) args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, doff.ptr()});
  const double ms = time_ms([&] {
    ckq(mxqGroupedGemmExecute(h, plan, args.data(), static_cast<int>(args.size()), nullptr, 0, nullptr), "execute");
  }, iters);
  mxqGroupedGemmPlanDestroy(plan);
  const double tf = flops / (ms * 1e-3) / 1e12;
  std::printf("%-8s M %6lld N %5lld K %5lld G %3lld  mxq MXFP8 %8.3f ms %7.1f TFLOP/s", grouped ? "grouped" : "dense",
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              static_cast<long long>(groups), ms, tf);

#ifdef MXQ_BENCH_HAVE_CUBLAS
  // ---- cuBLAS bf16, one call per group (row-major D = A B^T as column-major D^T = B A^T) ---------
  {
    std::vector<uint8_t> a16(static_cast<size_t>(m * k * 2)), b16(static_cast<size_t>(groups * n * k * 2));
    fill(a16, 3, 0x7F, 0x7F, 0x3F);
    fill(b16, 4, 0x7F, 0x7F, 0x3F);
    for (size_t i = 1; i < a16.size(); i += 2) a16[i] = static_cast<uint8_t>(0x3C | (a16[i] & 0x80));  // |x| in [2^-7, 2)
    for (size_t i = 1; i < b16.size(); i += 2) b16[i] = static_cast<uint8_t>(0x3C | (b16[i] & 0x80));
    DevMem ha(a16), hb(b16);
    cublasHandle_t cb;
    if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) die("cublasCreate failed");
    const float one = 1.0f, zero = 0.0f;
    const double ms_bf16 = time_ms([&] {
      for (int64_t g = 0; g < groups; ++g) {
        const char* ap = static_cast<const char*>(ha.ptr()) + g * per * k * 2;
        const char* bp = static_cast<const char*>(hb.ptr()) + g * n * k * 2;
        char* dp = static_cast<char*>(dd.ptr()) + g * per * n * 2;
        if (cublasGemmEx(cb, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(per), static_cast<int>(k),
                         &one, bp, CUDA_R_16BF, static_cast<int>(k), ap, CUDA_R_16BF, static_cast<int>(k), &zero, dp,
                         CUDA_R_16BF, static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) !=
            CUBLAS_STATUS_SUCCESS)
          die("cublasGemmEx failed");
      }
    }, iters);
    cublasDestroy(cb);
    const double tf16 = flops / (ms_bf16 * 1e-3) / 1e12;
    std::printf("  cuBLAS bf16 %8.3f ms %7.1f TFLOP/s  ratio %.2fx", ms_bf16, tf16, tf / tf16);
  }
#else
  std::printf("  (cuBLAS not linked: no bf16 baseline)");
#endif
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  mxq_bench::tool_name = "mxq_bench_gemm";
  load_driver();
  mxqHandle_t h = nullptr;
  ckq(mxqCreate(&h), "mxqCreate");
  std::printf("device: %s, mxq %s\n", device_name.c_str(), mxqGetBuildInfo());
  if (argc >= 5) {
    const int iters = argc >= 6 ? std::atoi(argv[5]) : 10;
    bench(std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]), iters, h);
  } else {
    bench(65536, 2048, 7168, 8, 10, h);
    bench(8192, 8192, 8192, 1, 10, h);
  }
  mxqDestroy(h);
  return 0;
}
