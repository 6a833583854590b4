// mxq_demo: a tour of the C API on one backend, and a sanity check of its results. It quantizes a
// random bf16 matrix rowwise and columnwise with swizzled scales and dequantizes it back, runs a
// small M-grouped GEMM (MoE fprop) and a small attention forward, and compares everything with
// float64 computations done here from the original bf16 inputs. It exits non-zero when an error is
// beyond what MXFP8 explains, so ./run.sh doubles as a smoke test.
//
// It uses only the public header (plus core/layout.h to print swizzled scales: the layout formulas
// live there and nowhere else). Memory comes from the host on the CPU backend and from the CUDA
// driver, opened with dlopen, on the CUDA backend: the demo links no CUDA library, like libmxq.
//
//   mxq_demo [--backend cpu|cuda] [--seed N]        (MXQ_LOG_LEVEL=3 also prints chosen kernels)
#include <dlfcn.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <mxq/mxq.h>

#include "core/layout.h"

namespace {

int g_unexpected = 0;  // results outside their expected bound

void check(mxqStatus_t st, const char* what) {
  if (st == MXQ_STATUS_SUCCESS) return;
  std::fprintf(stderr, "error: %s: %s: %s\n", what, mxqGetStatusName(st), mxqGetLastErrorMessage());
  std::exit(1);
}

void expect(bool ok, const char* what, double value, double bound) {
  if (ok) return;
  std::printf("  UNEXPECTED: %s = %.3g exceeds %.3g\n", what, value, bound);
  ++g_unexpected;
}

float bf16_to_f32(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t f32_to_bf16(float f) {  // round to nearest even; inputs here are finite
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

// ---- memory: host buffers on the CPU backend, device buffers through the driver API on CUDA -----

class Memory {
 public:
  virtual ~Memory() = default;
  virtual void* alloc(size_t bytes) = 0;  // owned by this object, 256-byte aligned
  virtual void upload(void* dst, const void* src, size_t bytes) = 0;
  virtual void download(void* dst, const void* src, size_t bytes) = 0;
  virtual void fill(void* dst, uint8_t byte, size_t bytes) = 0;
  virtual void sync() {}

  template <typename T>
  void* upload_vector(const std::vector<T>& v) {
    void* p = alloc(v.size() * sizeof(T));
    upload(p, v.data(), v.size() * sizeof(T));
    return p;
  }
  template <typename T>
  std::vector<T> download_vector(const void* p, size_t count) {
    sync();
    std::vector<T> v(count);
    download(v.data(), p, count * sizeof(T));
    return v;
  }
};

class HostMemory final : public Memory {
 public:
  ~HostMemory() override {
    for (void* p : blocks_) std::free(p);
  }
  void* alloc(size_t bytes) override {
    void* p = std::aligned_alloc(256, std::max<size_t>(256, (bytes + 255) / 256 * 256));
    if (!p) std::fprintf(stderr, "error: out of host memory\n"), std::exit(1);
    blocks_.push_back(p);
    return p;
  }
  void upload(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void fill(void* dst, uint8_t byte, size_t bytes) override { std::memset(dst, byte, bytes); }

 private:
  std::vector<void*> blocks_;
};

// The few driver entry points the demo needs, resolved from libcuda.so.1 at run time.
class CudaMemory final : public Memory {
 public:
  explicit CudaMemory(int ordinal) {
    lib_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) std::fprintf(stderr, "error: cannot load libcuda.so.1: %s\n", dlerror()), std::exit(1);
    resolve(init_, "cuInit");
    resolve(device_get_, "cuDeviceGet");
    resolve(retain_, "cuDevicePrimaryCtxRetain");
    resolve(release_, "cuDevicePrimaryCtxRelease_v2");
    resolve(set_current_, "cuCtxSetCurrent");
    resolve(synchronize_, "cuCtxSynchronize");
    resolve(mem_alloc_, "cuMemAlloc_v2");
    resolve(mem_free_, "cuMemFree_v2");
    resolve(htod_, "cuMemcpyHtoD_v2");
    resolve(dtoh_, "cuMemcpyDtoH_v2");
    resolve(memset_, "cuMemsetD8_v2");
    resolve(error_string_, "cuGetErrorString");
    call(init_(0), "cuInit");
    call(device_get_(&device_, ordinal), "cuDeviceGet");
    // The primary context is the one mxq's CUDA handle uses; our copies and allocations use it too.
    call(retain_(&ctx_, device_), "cuDevicePrimaryCtxRetain");
    call(set_current_(ctx_), "cuCtxSetCurrent");
  }
  ~CudaMemory() override {
    for (uint64_t p : blocks_) mem_free_(p);
    release_(device_);
  }
  void* alloc(size_t bytes) override {
    uint64_t p = 0;
    call(mem_alloc_(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc");
    blocks_.push_back(p);
    return reinterpret_cast<void*>(p);
  }
  void upload(void* dst, const void* src, size_t bytes) override {
    call(htod_(reinterpret_cast<uint64_t>(dst), src, bytes), "cuMemcpyHtoD");
  }
  void download(void* dst, const void* src, size_t bytes) override {
    call(dtoh_(dst, reinterpret_cast<uint64_t>(src), bytes), "cuMemcpyDtoH");
  }
  void fill(void* dst, uint8_t byte, size_t bytes) override {
    call(memset_(reinterpret_cast<uint64_t>(dst), byte, bytes), "cuMemsetD8");
  }
  void sync() override { call(synchronize_(), "cuCtxSynchronize (a kernel failed?)"); }

 private:
  using Result = int;  // CUresult
  template <typename Fn>
  void resolve(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(dlsym(lib_, name));
    if (!fn) std::fprintf(stderr, "error: libcuda.so.1 has no %s (driver too old?)\n", name), std::exit(1);
  }
  void call(Result r, const char* what) {
    if (r == 0) return;
    const char* s = "unknown error";
    if (error_string_) error_string_(r, &s);
    std::fprintf(stderr, "error: %s failed: %d (%s)\n", what, r, s);
    std::exit(1);
  }

  void* lib_ = nullptr;
  int device_ = 0;
  void* ctx_ = nullptr;
  std::vector<uint64_t> blocks_;
  Result (*init_)(unsigned) = nullptr;
  Result (*device_get_)(int*, int) = nullptr;
  Result (*retain_)(void**, int) = nullptr;
  Result (*release_)(int) = nullptr;
  Result (*set_current_)(void*) = nullptr;
  Result (*synchronize_)() = nullptr;
  Result (*mem_alloc_)(uint64_t*, size_t) = nullptr;
  Result (*mem_free_)(uint64_t) = nullptr;
  Result (*htod_)(uint64_t, const void*, size_t) = nullptr;
  Result (*dtoh_)(void*, uint64_t, size_t) = nullptr;
  Result (*memset_)(uint64_t, unsigned char, size_t) = nullptr;
  Result (*error_string_)(Result, const char**) = nullptr;
};

// ---- plan helpers --------------------------------------------------------------------------------

template <typename Plan, typename Attr, typename T>
void set(mxqStatus_t (*fn)(Plan, Attr, const void*, size_t), Plan plan, Attr attr, T value) {
  check(fn(plan, attr, &value, sizeof value), "SetAttribute");
}

struct Ctx {
  mxqHandle_t handle = nullptr;
  Memory* mem = nullptr;

  void* workspace(size_t bytes) { return bytes ? mem->alloc(bytes) : nullptr; }
};

// One quantized orientation: FP8 data and its UE8M0 scales, on the backend's memory.
struct Quantized {
  void* data = nullptr;
  void* scales = nullptr;
  size_t data_bytes = 0, scale_bytes = 0;
};

struct QuantizeSpec {
  int64_t rows = 0, cols = 0, batch = 1;
  int32_t direction = MXQ_QUANTIZE_ROWWISE;
  int32_t colwise_transposed = 1;
  int64_t groups = 0;               // > 0: GROUPING_ROWS with int32 end offsets
  void* offsets = nullptr;
};

// Quantizes bf16 x (backend memory); outputs are poisoned first so unwritten bytes would show.
void quantize(Ctx& c, const QuantizeSpec& s, void* x, Quantized* row, Quantized* col) {
  mxqQuantizePlan_t plan;
  check(mxqQuantizePlanCreate(c.handle, &plan), "mxqQuantizePlanCreate");
  set(mxqQuantizePlanSetAttribute, plan, MXQ_QUANTIZE_ATTR_ROWS, s.rows);
  set(mxqQuantizePlanSetAttribute, plan, MXQ_QUANTIZE_ATTR_COLS, s.cols);
  set(mxqQuantizePlanSetAttribute, plan, MXQ_QUANTIZE_ATTR_BATCH, s.batch);
  set(mxqQuantizePlanSetAttribute, plan, MXQ_QUANTIZE_ATTR_DIRECTION, s.direction);
  set(mxqQuantizePlanSetAttribute, plan, MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED, s.colwise_transposed);
  if (s.groups > 0) {
    set(mxqQuantizePlanSetAttribute, plan, MXQ_QUANTIZE_ATTR_GROUPING, int32_t(MXQ_GROUPING_ROWS));
    set(mxqQuantizePlanSetAttribute, plan, MXQ_QUANTIZE_ATTR_NUM_GROUPS, s.groups);
  }
  check(mxqQuantizePlanFinalize(plan), "mxqQuantizePlanFinalize");
  std::vector<mxqExecArg_t> args{{MXQ_ARG_X, 0, x}};
  if (s.groups > 0) args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, s.offsets});
  auto output = [&](Quantized* q, mxqArgSlot_t data_slot, mxqArgSlot_t scale_slot) {
    check(mxqQuantizePlanGetOutputSize(plan, data_slot, &q->data_bytes), "GetOutputSize");
    check(mxqQuantizePlanGetOutputSize(plan, scale_slot, &q->scale_bytes), "GetOutputSize");
    q->data = c.mem->alloc(q->data_bytes);
    q->scales = c.mem->alloc(q->scale_bytes);
    c.mem->fill(q->data, 0xA5, q->data_bytes);
    c.mem->fill(q->scales, 0xA5, q->scale_bytes);
    args.push_back({data_slot, 0, q->data});
    args.push_back({scale_slot, 0, q->scales});
  };
  if (s.direction & MXQ_QUANTIZE_ROWWISE) output(row, MXQ_ARG_ROWWISE_DATA, MXQ_ARG_ROWWISE_SCALES);
  if (s.direction & MXQ_QUANTIZE_COLUMNWISE) output(col, MXQ_ARG_COLWISE_DATA, MXQ_ARG_COLWISE_SCALES);
  size_t ws = 0;
  check(mxqQuantizePlanGetWorkspaceSize(plan, &ws), "mxqQuantizePlanGetWorkspaceSize");
  check(mxqQuantizeExecute(c.handle, plan, args.data(), int(args.size()), c.workspace(ws), ws, nullptr),
        "mxqQuantizeExecute");
  check(mxqQuantizePlanDestroy(plan), "mxqQuantizePlanDestroy");
}

// Dequantizes one orientation back to fp32 [batch, rows, cols] on the host.
std::vector<float> dequantize(Ctx& c, const QuantizeSpec& s, int32_t direction, const Quantized& q) {
  mxqDequantizePlan_t plan;
  check(mxqDequantizePlanCreate(c.handle, &plan), "mxqDequantizePlanCreate");
  set(mxqDequantizePlanSetAttribute, plan, MXQ_DEQUANTIZE_ATTR_ROWS, s.rows);
  set(mxqDequantizePlanSetAttribute, plan, MXQ_DEQUANTIZE_ATTR_COLS, s.cols);
  set(mxqDequantizePlanSetAttribute, plan, MXQ_DEQUANTIZE_ATTR_BATCH, s.batch);
  set(mxqDequantizePlanSetAttribute, plan, MXQ_DEQUANTIZE_ATTR_DIRECTION, direction);
  set(mxqDequantizePlanSetAttribute, plan, MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED, s.colwise_transposed);
  set(mxqDequantizePlanSetAttribute, plan, MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, int32_t(MXQ_DTYPE_FP32));
  if (s.groups > 0) {
    set(mxqDequantizePlanSetAttribute, plan, MXQ_DEQUANTIZE_ATTR_GROUPING, int32_t(MXQ_GROUPING_ROWS));
    set(mxqDequantizePlanSetAttribute, plan, MXQ_DEQUANTIZE_ATTR_NUM_GROUPS, s.groups);
  }
  check(mxqDequantizePlanFinalize(plan), "mxqDequantizePlanFinalize");
  const size_t n = size_t(s.batch * s.rows * s.cols);
  void* out = c.mem->alloc(n * sizeof(float));
  c.mem->fill(out, 0xFF, n * sizeof(float));  // NaN
  const bool row = direction == MXQ_QUANTIZE_ROWWISE;
  std::vector<mxqExecArg_t> args{{row ? MXQ_ARG_ROWWISE_DATA : MXQ_ARG_COLWISE_DATA, 0, q.data},
                                 {row ? MXQ_ARG_ROWWISE_SCALES : MXQ_ARG_COLWISE_SCALES, 0, q.scales},
                                 {MXQ_ARG_X, 0, out}};
  if (s.groups > 0) args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, s.offsets});
  size_t ws = 0;
  check(mxqDequantizePlanGetWorkspaceSize(plan, &ws), "mxqDequantizePlanGetWorkspaceSize");
  check(mxqDequantizeExecute(c.handle, plan, args.data(), int(args.size()), c.workspace(ws), ws, nullptr),
        "mxqDequantizeExecute");
  check(mxqDequantizePlanDestroy(plan), "mxqDequantizePlanDestroy");
  return c.mem->download_vector<float>(out, n);
}

// Random bf16 values ~ N(0, sigma); with outliers, every 7th run of 32 values is scaled by 2^-12..2^12
// so that neighbouring scales differ widely (quantization demo only: such logits would swamp
// attention).
std::vector<uint16_t> random_bf16(std::mt19937_64& rng, size_t n, double sigma, bool outliers = false) {
  std::normal_distribution<double> normal(0.0, sigma);
  std::uniform_int_distribution<int> wide(-12, 12);
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; i += 32) {
    const double block_scale = outliers && (i / 32) % 7 == 3 ? std::ldexp(1.0, wide(rng)) : 1.0;
    for (size_t j = i; j < std::min(n, i + 32); ++j) {
      float f = float(normal(rng) * block_scale);
      if (f == 0.0f) f = 1.0f;  // never zero: a zero block would hide a missing write
      v[j] = f32_to_bf16(f);
    }
  }
  return v;
}

std::vector<double> to_double(const std::vector<uint16_t>& bf16) {
  std::vector<double> d(bf16.size());
  for (size_t i = 0; i < bf16.size(); ++i) d[i] = bf16_to_f32(bf16[i]);
  return d;
}

// Frobenius-norm relative error; a NaN anywhere makes it NaN (so it fails every bound).
template <typename A, typename B>
double rel_error(const A& got, const B& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = double(got[i]) - double(want[i]);
    num += d * d;
    den += double(want[i]) * double(want[i]);
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// ---- 1. quantize / dequantize --------------------------------------------------------------------

void demo_quantize(Ctx& c, std::mt19937_64& rng) {
  QuantizeSpec s;
  s.rows = 256;
  s.cols = 1000;  // not a multiple of 32: the last block of each row is partial
  s.direction = MXQ_QUANTIZE_BOTH;
  std::printf("\n[1] quantize bf16 [%" PRId64 ", %" PRId64 "] -> MXFP8 E4M3, rowwise + columnwise (transposed), "
              "SWIZZLED_128x4 scales, RCEIL\n", s.rows, s.cols);
  const auto x = random_bf16(rng, size_t(s.rows * s.cols), 1.0, true);
  const auto xd = to_double(x);
  void* dx = c.mem->upload_vector(x);
  Quantized row, col;
  quantize(c, s, dx, &row, &col);
  std::printf("  outputs: rowwise data %zu B + scales %zu B; columnwise data %zu B + scales %zu B\n", row.data_bytes,
              row.scale_bytes, col.data_bytes, col.scale_bytes);

  // First scales, read through the layout formula (core/layout.h) rather than re-derived here.
  using namespace mxq::layout;
  const auto rs = c.mem->download_vector<uint8_t>(row.scales, row.scale_bytes);
  const auto cs = c.mem->download_vector<uint8_t>(col.scales, col.scale_bytes);
  const int64_t rcpad = swz_cols(scale_cols(s.cols)), ccpad = swz_cols(scale_cols(s.rows));
  std::printf("  rowwise scales, row 0, blocks 0..7 (exponent E-127):   ");
  for (int64_t b = 0; b < 8; ++b) std::printf(" %4d", int(rs[size_t(swizzled_offset(0, b, rcpad))]) - 127);
  std::printf("\n  columnwise scales, rows 0..31, columns 0..7:           ");
  for (int64_t n = 0; n < 8; ++n) std::printf(" %4d", int(cs[size_t(swizzled_offset(n, 0, ccpad))]) - 127);
  std::printf("\n");

  for (int32_t dir : {int32_t(MXQ_QUANTIZE_ROWWISE), int32_t(MXQ_QUANTIZE_COLUMNWISE)}) {
    const bool rowwise = dir == MXQ_QUANTIZE_ROWWISE;
    const auto y = dequantize(c, s, dir, rowwise ? row : col);
    // Block maxima of this orientation: 32 consecutive columns (rowwise) or rows (columnwise).
    std::vector<double> amax(xd.size(), 0.0);
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t k = 0; k < s.cols; ++k) {
          const size_t i = size_t(r * s.cols + k);
          const size_t head = rowwise ? size_t(r * s.cols + k / 32 * 32) : size_t(r / 32 * 32 * s.cols + k);
          if (pass == 0) amax[head] = std::max(amax[head], std::fabs(xd[i]));
          else amax[i] = amax[head];
        }
    double max_rel = 0, sum_sq_err = 0, sum_sq = 0;
    size_t nonfinite = 0, flushed = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      if (!std::isfinite(y[i])) ++nonfinite;
      const double e = std::fabs(double(y[i]) - xd[i]);
      sum_sq_err += e * e;
      sum_sq += xd[i] * xd[i];
      // An RCEIL scale maps the block max to (224, 448], so an element >= amax/32 lands at >= 7,
      // deep in E4M3's normal range, where rounding costs at most 2^-4 relative. Smaller elements
      // may fall into E4M3's subnormals or to zero next to a large neighbour.
      if (std::fabs(xd[i]) >= amax[i] / 32) max_rel = std::max(max_rel, e / std::fabs(xd[i]));
      else flushed += y[i] == 0.0f;
    }
    const double rel = std::sqrt(sum_sq_err / sum_sq);
    std::printf("  dequantized %-10s: relative RMS error %.4f (SQNR %.1f dB); max relative error of elements >= "
                "block max/32: %.4f (bound 0.0625); %zu tiny elements became 0%s\n",
                rowwise ? "rowwise" : "columnwise", rel, -20 * std::log10(rel), max_rel, flushed,
                nonfinite ? "; NON-FINITE VALUES" : "");
    expect(nonfinite == 0 && rel < 0.05, "relative RMS error", rel, 0.05);
    expect(max_rel <= 0.0625, "max relative error of normal elements", max_rel, 0.0625);
  }
}

// ---- 2. grouped GEMM (MoE fprop, M-grouped) ------------------------------------------------------

void demo_gemm(Ctx& c, std::mt19937_64& rng) {
  const int64_t G = 4, N = 96, K = 256;
  std::uniform_int_distribution<int64_t> size_dist(0, 96);
  std::vector<int32_t> ends(G);
  int64_t M = 0;
  for (int64_t g = 0; g < G; ++g) {
    M += g == 1 ? 0 : size_dist(rng);  // group 1 is empty: any size is valid, 0 included
    ends[size_t(g)] = int32_t(M);
  }
  if (M == 0) M = ends.back() = 1;
  std::printf("\n[2] grouped GEMM, M-grouped (MoE fprop): D[M=%" PRId64 ", N=%" PRId64 "] = A[M, K=%" PRId64
              "] * B[g]^T, %" PRId64 " groups, end offsets", M, N, K, G);
  for (int32_t e : ends) std::printf(" %d", e);
  std::printf("\n");

  const auto a = random_bf16(rng, size_t(M * K), 1.0), b = random_bf16(rng, size_t(G * N * K), 0.05);
  void* offsets = c.mem->upload_vector(ends);
  QuantizeSpec sa;
  sa.rows = M;
  sa.cols = K;
  sa.groups = G;
  sa.offsets = offsets;
  QuantizeSpec sb;
  sb.rows = N;
  sb.cols = K;
  sb.batch = G;
  Quantized qa, qb, unused;
  quantize(c, sa, c.mem->upload_vector(a), &qa, &unused);
  quantize(c, sb, c.mem->upload_vector(b), &qb, &unused);

  mxqGroupedGemmPlan_t plan;
  check(mxqGroupedGemmPlanCreate(c.handle, &plan), "mxqGroupedGemmPlanCreate");
  set(mxqGroupedGemmPlanSetAttribute, plan, MXQ_GEMM_ATTR_GROUPING, int32_t(MXQ_GEMM_GROUPING_M));
  set(mxqGroupedGemmPlanSetAttribute, plan, MXQ_GEMM_ATTR_M, M);
  set(mxqGroupedGemmPlanSetAttribute, plan, MXQ_GEMM_ATTR_N, N);
  set(mxqGroupedGemmPlanSetAttribute, plan, MXQ_GEMM_ATTR_K, K);
  set(mxqGroupedGemmPlanSetAttribute, plan, MXQ_GEMM_ATTR_NUM_GROUPS, G);
  set(mxqGroupedGemmPlanSetAttribute, plan, MXQ_GEMM_ATTR_D_DTYPE, int32_t(MXQ_DTYPE_BF16));
  const mxqStatus_t fin = mxqGroupedGemmPlanFinalize(plan);
  if (fin / 1000 == 2) {  // NOT_SUPPORTED_*: this backend has no GEMM for it (yet)
    std::printf("  skipped on this backend: %s: %s\n", mxqGetStatusName(fin), mxqGetLastErrorMessage());
    check(mxqGroupedGemmPlanDestroy(plan), "mxqGroupedGemmPlanDestroy");
    return;
  }
  check(fin, "mxqGroupedGemmPlanFinalize");
  void* d = c.mem->alloc(size_t(M * N) * 2);
  c.mem->fill(d, 0xFF, size_t(M * N) * 2);  // bf16 NaN: a row the GEMM skips stays NaN
  const mxqExecArg_t args[] = {{MXQ_ARG_A_DATA, 0, qa.data}, {MXQ_ARG_A_SCALES, 0, qa.scales},
                               {MXQ_ARG_B_DATA, 0, qb.data}, {MXQ_ARG_B_SCALES, 0, qb.scales},
                               {MXQ_ARG_D, 0, d},            {MXQ_ARG_GROUP_OFFSETS, 0, offsets}};
  size_t ws = 0;
  check(mxqGroupedGemmPlanGetWorkspaceSize(plan, &ws), "mxqGroupedGemmPlanGetWorkspaceSize");
  check(mxqGroupedGemmExecute(c.handle, plan, args, 6, c.workspace(ws), ws, nullptr), "mxqGroupedGemmExecute");
  check(mxqGroupedGemmPlanDestroy(plan), "mxqGroupedGemmPlanDestroy");
  const auto dd = c.mem->download_vector<uint16_t>(d, size_t(M * N));
  std::vector<float> got(dd.size());
  for (size_t i = 0; i < dd.size(); ++i) got[i] = bf16_to_f32(dd[i]);

  // float64 references: from the bf16 inputs (what the user meant), and from the dequantized
  // operands (what the GEMM was given: isolates its arithmetic from quantization).
  const auto ad = to_double(a), bd = to_double(b);
  const auto aq = dequantize(c, sa, MXQ_QUANTIZE_ROWWISE, qa), bq = dequantize(c, sb, MXQ_QUANTIZE_ROWWISE, qb);
  std::vector<double> ref(size_t(M * N)), ref_q(size_t(M * N));
  int64_t begin = 0;
  for (int64_t g = 0; g < G; ++g) {
    for (int64_t m = begin; m < ends[size_t(g)]; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0, sq = 0;
        for (int64_t k = 0; k < K; ++k) {
          s += ad[size_t(m * K + k)] * bd[size_t((g * N + n) * K + k)];
          sq += double(aq[size_t(m * K + k)]) * double(bq[size_t((g * N + n) * K + k)]);
        }
        ref[size_t(m * N + n)] = s;
        ref_q[size_t(m * N + n)] = sq;
      }
    begin = ends[size_t(g)];
  }
  const double e_in = rel_error(got, ref), e_q = rel_error(got, ref_q);
  std::printf("  relative error vs float64 of the bf16 inputs:        %.4f  (MXFP8 quantization of A and B)\n", e_in);
  std::printf("  relative error vs float64 of the dequantized inputs: %.5f (bf16 output rounding only)\n", e_q);
  expect(e_in < 0.08, "GEMM error vs inputs", e_in, 0.08);
  expect(e_q < 0.005, "GEMM error vs dequantized operands", e_q, 0.005);
}

// ---- 3. attention forward ------------------------------------------------------------------------

void demo_attention(Ctx& c, std::mt19937_64& rng) {
  const int64_t B = 1, Hq = 4, Hkv = 2, Sq = 96, Skv = 160, D = 64;
  std::printf("\n[3] attention forward (cuDNN MXFP8 recipe): B=%" PRId64 " Hq=%" PRId64 " Hkv=%" PRId64
              " (GQA) Sq=%" PRId64 " Skv=%" PRId64 " D=%" PRId64 ", BHSD, causal bottom-right mask\n",
              B, Hq, Hkv, Sq, Skv, D);
  const auto q = random_bf16(rng, size_t(B * Hq * Sq * D), 1.0), k = random_bf16(rng, size_t(B * Hkv * Skv * D), 1.0),
             v = random_bf16(rng, size_t(B * Hkv * Skv * D), 1.0);
  // Q and K along D: rowwise scales of the data seen as [rows, D]. V along S_kv: per (b, h) the
  // columnwise scales of the [Skv, D] matrix, data not transposed.
  QuantizeSpec sq, sk, sv;
  sq.rows = B * Hq * Sq;
  sq.cols = D;
  sk.rows = B * Hkv * Skv;
  sk.cols = D;
  sv.rows = Skv;
  sv.cols = D;
  sv.batch = B * Hkv;
  sv.direction = MXQ_QUANTIZE_COLUMNWISE;
  sv.colwise_transposed = 0;
  Quantized qq, qk, qv, unused;
  quantize(c, sq, c.mem->upload_vector(q), &qq, &unused);
  quantize(c, sk, c.mem->upload_vector(k), &qk, &unused);
  quantize(c, sv, c.mem->upload_vector(v), &unused, &qv);

  mxqAttentionPlan_t plan;
  check(mxqAttentionPlanCreate(c.handle, &plan), "mxqAttentionPlanCreate");
  set(mxqAttentionPlanSetAttribute, plan, MXQ_ATTN_ATTR_BATCH, B);
  set(mxqAttentionPlanSetAttribute, plan, MXQ_ATTN_ATTR_HEADS_Q, Hq);
  set(mxqAttentionPlanSetAttribute, plan, MXQ_ATTN_ATTR_HEADS_KV, Hkv);
  set(mxqAttentionPlanSetAttribute, plan, MXQ_ATTN_ATTR_SEQLEN_Q, Sq);
  set(mxqAttentionPlanSetAttribute, plan, MXQ_ATTN_ATTR_SEQLEN_KV, Skv);
  set(mxqAttentionPlanSetAttribute, plan, MXQ_ATTN_ATTR_HEAD_DIM, D);
  set(mxqAttentionPlanSetAttribute, plan, MXQ_ATTN_ATTR_MASK, int32_t(MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT));
  const mxqStatus_t fin = mxqAttentionPlanFinalize(plan);
  if (fin / 1000 == 2) {
    std::printf("  skipped on this backend: %s: %s\n", mxqGetStatusName(fin), mxqGetLastErrorMessage());
    check(mxqAttentionPlanDestroy(plan), "mxqAttentionPlanDestroy");
    return;
  }
  check(fin, "mxqAttentionPlanFinalize");
  float softmax_scale = 0;
  check(mxqAttentionPlanGetAttribute(plan, MXQ_ATTN_ATTR_SOFTMAX_SCALE, &softmax_scale, sizeof softmax_scale, nullptr),
        "mxqAttentionPlanGetAttribute");
  const size_t o_count = size_t(B * Hq * Sq * D), lse_count = size_t(B * Hq * Sq);
  void* o = c.mem->alloc(o_count * 2);
  void* lse = c.mem->alloc(lse_count * 4);
  c.mem->fill(o, 0xFF, o_count * 2);
  c.mem->fill(lse, 0xFF, lse_count * 4);
  const mxqExecArg_t args[] = {{MXQ_ARG_Q_DATA, 0, qq.data}, {MXQ_ARG_Q_SCALES, 0, qq.scales},
                               {MXQ_ARG_K_DATA, 0, qk.data}, {MXQ_ARG_K_SCALES, 0, qk.scales},
                               {MXQ_ARG_V_DATA, 0, qv.data}, {MXQ_ARG_V_SCALES, 0, qv.scales},
                               {MXQ_ARG_O, 0, o},            {MXQ_ARG_LSE, 0, lse}};
  size_t ws = 0;
  check(mxqAttentionPlanGetWorkspaceSize(plan, &ws), "mxqAttentionPlanGetWorkspaceSize");
  check(mxqAttentionExecute(c.handle, plan, args, 8, c.workspace(ws), ws, nullptr), "mxqAttentionExecute");
  check(mxqAttentionPlanDestroy(plan), "mxqAttentionPlanDestroy");
  const auto ob = c.mem->download_vector<uint16_t>(o, o_count);
  const auto lse_got = c.mem->download_vector<float>(lse, lse_count);

  // float64 softmax(scale * Q K^T) V from the bf16 inputs, same mask.
  const auto qd = to_double(q), kd = to_double(k), vd = to_double(v);
  std::vector<double> o_ref(o_count), lse_ref(lse_count);
  std::vector<double> p(static_cast<size_t>(Skv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hkv);
      const double* qh = &qd[size_t(((b * Hq + h) * Sq) * D)];
      const double* kh = &kd[size_t(((b * Hkv + hk) * Skv) * D)];
      const double* vh = &vd[size_t(((b * Hkv + hk) * Skv) * D)];
      for (int64_t i = 0; i < Sq; ++i) {
        const int64_t last = std::min(Skv - 1, i + Skv - Sq);  // bottom-right causal: j <= i + Skv - Sq
        double m = -INFINITY;
        for (int64_t j = 0; j <= last; ++j) {
          double s = 0;
          for (int64_t d = 0; d < D; ++d) s += qh[i * D + d] * kh[j * D + d];
          p[size_t(j)] = s * softmax_scale;
          m = std::max(m, p[size_t(j)]);
        }
        double l = 0;
        for (int64_t j = 0; j <= last; ++j) l += (p[size_t(j)] = std::exp(p[size_t(j)] - m));
        double* orow = &o_ref[size_t(((b * Hq + h) * Sq + i) * D)];
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t j = 0; j <= last; ++j) acc += p[size_t(j)] * vh[j * D + d];
          orow[d] = acc / l;
        }
        lse_ref[size_t((b * Hq + h) * Sq + i)] = m + std::log(l);
      }
    }
  std::vector<float> o_got(o_count);
  for (size_t i = 0; i < o_count; ++i) o_got[i] = bf16_to_f32(ob[i]);
  const double e_o = rel_error(o_got, o_ref);
  double e_lse = 0;
  for (size_t i = 0; i < lse_count; ++i) e_lse = std::max(e_lse, std::fabs(double(lse_got[i]) - lse_ref[i]));
  if (std::any_of(lse_got.begin(), lse_got.end(), [](float f) { return !std::isfinite(f); })) e_lse = NAN;
  std::printf("  softmax scale %.6f; O relative error vs float64 of the bf16 inputs: %.4f; LSE max abs error: %.4f\n",
              double(softmax_scale), e_o, e_lse);
  expect(e_o < 0.1, "attention O error", e_o, 0.1);
  expect(e_lse < 0.1, "attention LSE error", e_lse, 0.1);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep our lines in order with the library's log on stderr
  std::string backend = "cpu";
  uint64_t seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--backend" && i + 1 < argc) backend = argv[++i];
    else if (a.rfind("--backend=", 0) == 0) backend = a.substr(10);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 0);
    else {
      std::fprintf(stderr, "usage: %s [--backend cpu|cuda] [--seed N]\n"
                           "  MXQ_LOG_LEVEL=3 prints which kernel each plan chose and why.\n", argv[0]);
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (backend != "cpu" && backend != "cuda") {
    std::fprintf(stderr, "error: --backend must be cpu or cuda, not '%s'\n", backend.c_str());
    return 2;
  }
  std::printf("mxq %s (library %u, header %d)\n%s\nbackend: %s, seed: %" PRIu64 "\n", MXQ_VERSION_STRING,
              unsigned(mxqGetVersion()), MXQ_VERSION, mxqGetBuildInfo(), backend.c_str(), seed);
  if (mxqGetVersion() != MXQ_VERSION) {
    std::fprintf(stderr, "error: header and library versions differ\n");
    return 1;
  }

  std::unique_ptr<Memory> mem;
  Ctx c;
  if (backend == "cuda") {
    // mxq first: it reports a missing driver, device or kernel build with a precise status.
    check(mxqCreateWithBackend(&c.handle, MXQ_BACKEND_CUDA, 0), "mxqCreateWithBackend(CUDA)");
    mem = std::make_unique<CudaMemory>(0);
    int ordinal = -1, cc = 0;
    check(mxqGetDevice(c.handle, &ordinal, &cc), "mxqGetDevice");
    std::printf("device %d, compute capability %d.%d\n", ordinal, cc / 10, cc % 10);
  } else {
    mem = std::make_unique<HostMemory>();
    check(mxqCreateWithBackend(&c.handle, MXQ_BACKEND_CPU, 0), "mxqCreateWithBackend(CPU)");
  }
  c.mem = mem.get();

  std::mt19937_64 rng(seed);
  demo_quantize(c, rng);
  demo_gemm(c, rng);
  demo_attention(c, rng);

  check(mxqDestroy(c.handle), "mxqDestroy");
  mem.reset();
  if (g_unexpected) {
    std::printf("\n%d result(s) outside their expected bounds (seed %" PRIu64 ")\n", g_unexpected, seed);
    return 1;
  }
  std::printf("\nall results within their expected bounds\n");
  return 0;
}
