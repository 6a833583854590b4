// Shared utilities of the GPU tests (tests/gpu/*.cpp): device buffers through the driver API
// (loaded with dlopen, like libmxq itself, so the test binary needs no CUDA library at link time
// and no CUDA header at compile time: a build without the toolkit still builds it, and it skips),
// poisoning, random inputs salted with the values kernels get wrong (NaN, Inf, subnormals, the
// largest finite values, NaN scales), RAII handles for both backends, and byte-exact comparison
// that reports where and what differs.
//
// Conventions every GPU test follows (tests/gpu/README in spirit):
//   - fresh random inputs per run from std::random_device; the seed is printed on failure
//     (MXQ_TEST_SEED=<n> reproduces a run);
//   - outputs are poisoned before the run, on both backends, and the whole allocation (stride gaps
//     and guard bytes included) is compared, so a missing or stray write fails;
//   - the CPU backend is the oracle: GPU results are compared byte for byte where the contract is
//     bit-exact.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mxq/mxq.h"

namespace mxq_test {
namespace gpu {

// ---- the few driver-API types and constants the tests use (ABI-identical to cuda.h) ------------
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using cuuint64_t = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUstream = ::CUstream_st*;  // the type mxq.h declares for mxqStream_t
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUevent = struct CUevent_st*;
using CUdriverProcAddressQueryResult = int;
using CUstreamCaptureMode = int;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr cuuint64_t CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr CUstreamCaptureMode CU_STREAM_CAPTURE_MODE_GLOBAL = 0;

// ---- driver access for the tests ---------------------------------------------------------------
struct Driver {
  bool ok = false;
  std::string error;
  CUcontext ctx = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*cuStreamBeginCapture)(CUstream, CUstreamCaptureMode) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;

  Driver() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      error = "libcuda.so.1 not loadable";
      return;
    }
    using Gpa = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto gpa = reinterpret_cast<Gpa>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!gpa) {
      error = "no cuGetProcAddress_v2 (driver older than CUDA 12)";
      return;
    }
    bool all = true;
    auto get = [&](const char* name, auto& fn) {
      void* p = nullptr;
      CUdriverProcAddressQueryResult st{};
      if (gpa(name, &p, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st) != CUDA_SUCCESS || !p) {
        all = false;
        error += std::string(" missing ") + name;
        return;
      }
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    get("cuInit", cuInit);
    get("cuDeviceGet", cuDeviceGet);
    get("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain);
    get("cuCtxSetCurrent", cuCtxSetCurrent);
    get("cuCtxSynchronize", cuCtxSynchronize);
    get("cuMemAlloc", cuMemAlloc);
    get("cuMemFree", cuMemFree);
    get("cuMemcpyHtoD", cuMemcpyHtoD);
    get("cuMemcpyDtoH", cuMemcpyDtoH);
    get("cuMemsetD8", cuMemsetD8);
    get("cuStreamCreate", cuStreamCreate);
    get("cuStreamDestroy", cuStreamDestroy);
    get("cuStreamSynchronize", cuStreamSynchronize);
    get("cuGetErrorName", cuGetErrorName);
    get("cuCtxGetCurrent", cuCtxGetCurrent);
    get("cuStreamBeginCapture", cuStreamBeginCapture);
    get("cuStreamEndCapture", cuStreamEndCapture);
    get("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags);
    get("cuGraphLaunch", cuGraphLaunch);
    get("cuGraphExecDestroy", cuGraphExecDestroy);
    get("cuGraphDestroy", cuGraphDestroy);
    get("cuEventCreate", cuEventCreate);
    get("cuEventRecord", cuEventRecord);
    get("cuEventSynchronize", cuEventSynchronize);
    get("cuEventElapsedTime", cuEventElapsedTime);
    get("cuEventDestroy", cuEventDestroy);
    if (!all) return;
    CUdevice dev = 0;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
      error = "cannot make device 0's primary context current";
      return;
    }
    ok = true;
  }
  std::string name(CUresult r) const {
    const char* n = nullptr;
    if (cuGetErrorName && cuGetErrorName(r, &n) == CUDA_SUCCESS && n) return n;
    return "CUresult " + std::to_string(static_cast<int>(r));
  }
};

inline Driver& driver() {
  static Driver d;
  return d;
}

#define MXQ_CU_CHECK(expr)                                                                   \
  do {                                                                                       \
    const CUresult r_ = (expr);                                                              \
    INFO(#expr << " -> " << ::mxq_test::gpu::driver().name(r_));                             \
    REQUIRE(r_ == CUDA_SUCCESS);                                                             \
  } while (0)

inline void synchronize() { MXQ_CU_CHECK(driver().cuCtxSynchronize()); }

// Device memory of `bytes` usable bytes at byte offset `misalign` from a 256-byte aligned
// allocation, followed by kGuard guard bytes. poison() fills everything, guards included;
// guards_intact() checks nothing wrote past the end.
class DeviceBuffer {
 public:
  static constexpr size_t kGuard = 64;

  DeviceBuffer(size_t bytes, size_t misalign = 0) : bytes_(bytes), misalign_(misalign) {
    MXQ_CU_CHECK(driver().cuMemAlloc(&base_, misalign_ + bytes_ + kGuard));
  }
  explicit DeviceBuffer(const std::vector<uint8_t>& host, size_t misalign = 0) : DeviceBuffer(host.size(), misalign) {
    upload(host);
  }
  ~DeviceBuffer() {
    if (base_) driver().cuMemFree(base_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* ptr() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(base_ + misalign_)); }
  size_t bytes() const { return bytes_; }

  void upload(const std::vector<uint8_t>& host) {
    REQUIRE(host.size() == bytes_);
    if (bytes_) MXQ_CU_CHECK(driver().cuMemcpyHtoD(base_ + misalign_, host.data(), bytes_));
  }
  void poison(uint8_t value) { MXQ_CU_CHECK(driver().cuMemsetD8(base_, value, misalign_ + bytes_ + kGuard)); }
  std::vector<uint8_t> download() const {
    synchronize();
    std::vector<uint8_t> h(bytes_);
    if (bytes_) MXQ_CU_CHECK(driver().cuMemcpyDtoH(h.data(), base_ + misalign_, bytes_));
    return h;
  }
  bool guards_intact(uint8_t value) const {
    synchronize();
    std::vector<uint8_t> g(kGuard), pre(misalign_);
    MXQ_CU_CHECK(driver().cuMemcpyDtoH(g.data(), base_ + misalign_ + bytes_, kGuard));
    if (misalign_) MXQ_CU_CHECK(driver().cuMemcpyDtoH(pre.data(), base_, misalign_));
    auto same = [&](const std::vector<uint8_t>& v) {
      return std::all_of(v.begin(), v.end(), [&](uint8_t b) { return b == value; });
    };
    return same(g) && same(pre);
  }

 private:
  CUdeviceptr base_ = 0;
  size_t bytes_;
  size_t misalign_;
};

// Mean milliseconds per call of fn() on the legacy default stream, after one warm-up call.
template <typename Fn>
double time_ms(int iterations, Fn&& fn) {
  CUevent a = nullptr, b = nullptr;
  MXQ_CU_CHECK(driver().cuEventCreate(&a, 0));
  MXQ_CU_CHECK(driver().cuEventCreate(&b, 0));
  fn();
  MXQ_CU_CHECK(driver().cuEventRecord(a, nullptr));
  for (int i = 0; i < iterations; ++i) fn();
  MXQ_CU_CHECK(driver().cuEventRecord(b, nullptr));
  MXQ_CU_CHECK(driver().cuEventSynchronize(b));
  float ms = 0;
  MXQ_CU_CHECK(driver().cuEventElapsedTime(&ms, a, b));
  driver().cuEventDestroy(a);
  driver().cuEventDestroy(b);
  return ms / iterations;
}

// ---- handles -----------------------------------------------------------------------------------
class Handle {
 public:
  explicit Handle(mxqBackend_t backend) {
    const mxqStatus_t s = mxqCreateWithBackend(&h_, backend, backend == MXQ_BACKEND_CPU ? 0 : -1);
    INFO("mxqCreateWithBackend: " << mxqGetStatusName(s) << ": " << mxqGetLastErrorMessage());
    REQUIRE(s == MXQ_STATUS_SUCCESS);
  }
  ~Handle() { mxqDestroy(h_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  mxqHandle_t get() const { return h_; }
  operator mxqHandle_t() const { return h_; }

 private:
  mxqHandle_t h_ = nullptr;
};

// Expect a status; on mismatch show the status name and the library's message.
#define MXQ_REQUIRE_STATUS(expr, status)                                                           \
  do {                                                                                             \
    const mxqStatus_t s_ = (expr);                                                                 \
    INFO(#expr << " -> " << mxqGetStatusName(s_) << ": " << mxqGetLastErrorMessage());            \
    REQUIRE(s_ == (status));                                                                       \
  } while (0)
#define MXQ_REQUIRE_OK(expr) MXQ_REQUIRE_STATUS(expr, MXQ_STATUS_SUCCESS)

// ---- randomness --------------------------------------------------------------------------------
// A per-test seed: MXQ_TEST_SEED if set, else fresh from std::random_device. Tests INFO() it so it
// is printed with any failure.
inline uint64_t fresh_seed() {
  if (const char* s = std::getenv("MXQ_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float f32_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline size_t dtype_bytes(mxqDataType_t t) {
  switch (t) {
    case MXQ_DTYPE_FP32:
    case MXQ_DTYPE_INT32: return 4;
    case MXQ_DTYPE_FP16:
    case MXQ_DTYPE_BF16: return 2;
    case MXQ_DTYPE_INT64: return 8;
    default: return 1;
  }
}
inline const char* dtype_str(mxqDataType_t t) {
  switch (t) {
    case MXQ_DTYPE_FP32: return "fp32";
    case MXQ_DTYPE_FP16: return "fp16";
    case MXQ_DTYPE_BF16: return "bf16";
    case MXQ_DTYPE_E4M3: return "e4m3";
    case MXQ_DTYPE_E5M2: return "e5m2";
    default: return "?";
  }
}

// A float whose magnitude spans many binades (so blocks get very different scales), salted with
// special values at rate `special`: NaN, ±Inf, fp32 / bf16 subnormals, ±0, FLT_MAX-sized values.
inline float random_value(std::mt19937_64& rng, double special = 0.01) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (u(rng) < special) {
    switch (std::uniform_int_distribution<int>(0, 7)(rng)) {
      case 0: return std::numeric_limits<float>::quiet_NaN();
      case 1: return std::numeric_limits<float>::infinity();
      case 2: return -std::numeric_limits<float>::infinity();
      case 3: return f32_of(0x00000001u + static_cast<uint32_t>(rng() % 0x7FFFFF));  // subnormal
      case 4: return -f32_of(0x00010000u);                                          // bf16 subnormal
      case 5: return 0.0f;
      case 6: return 3.0e38f;
      default: return -448.0f * std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
    }
  }
  const double mant = std::uniform_real_distribution<double>(-2.0, 2.0)(rng);
  const int exp = std::uniform_int_distribution<int>(-30, 30)(rng);
  return static_cast<float>(std::ldexp(mant, exp));
}

// Stores a float as element i of a high-precision dtype buffer (raw bytes): bf16 by RNE from the
// fp32 bit pattern; fp16 through the exponent range fp16 holds (the tests need fp16-typed inputs,
// not an exact cast; values out of fp16 range become ±Inf, subnormals truncate).
inline void put_hp(std::vector<uint8_t>& buf, mxqDataType_t t, size_t i, float f) {
  const uint32_t u = f32_bits(f);
  if (t == MXQ_DTYPE_FP32) {
    std::memcpy(&buf[4 * i], &u, 4);
  } else if (t == MXQ_DTYPE_BF16) {
    const uint16_t h = std::isnan(f) ? uint16_t(0x7FC0) : static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    std::memcpy(&buf[2 * i], &h, 2);
  } else {
    const float a = std::fabs(f);
    uint16_t h;
    if (std::isnan(f)) h = 0x7E00;
    else if (a >= 65520.0f) h = 0x7C00;
    else if (a < std::ldexp(1.0f, -24)) h = 0;
    else {
      int e;
      const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
      if (e - 1 >= -14) h = static_cast<uint16_t>(((e - 1 + 15) << 10) | (static_cast<uint32_t>(m * 2048.0f) & 0x3FF));
      else h = static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal, truncated
    }
    if (std::signbit(f)) h |= 0x8000;
    std::memcpy(&buf[2 * i], &h, 2);
  }
}

// `count` random elements of a high-precision dtype as raw bytes (random_value, then put_hp).
inline std::vector<uint8_t> random_hp(mxqDataType_t t, size_t count, std::mt19937_64& rng, double special = 0.01) {
  std::vector<uint8_t> out(count * dtype_bytes(t));
  for (size_t i = 0; i < count; ++i) put_hp(out, t, i, random_value(rng, special));
  return out;
}

// The clamp the CUDA backend applies to invalid group offsets (mxq.h): a non-decreasing sequence
// in [0, rows]. The CPU reference rejects invalid offsets, so tests give it the clamped ones.
inline std::vector<int64_t> clamp_offsets(const std::vector<int64_t>& o, int64_t rows) {
  std::vector<int64_t> c(o.size());
  int64_t run = 0;
  for (size_t g = 0; g < o.size(); ++g) {
    run = std::max(run, o[g]);
    c[g] = std::min(run, rows);
  }
  return c;
}

// Breaks a valid offset sequence: negative entries, decreases and overruns past `rows`.
inline std::vector<int64_t> corrupt_offsets(std::vector<int64_t> o, int64_t rows, std::mt19937_64& rng) {
  for (auto& v : o) {
    switch (rng() % 4) {
      case 0: v = -static_cast<int64_t>(rng() % 1000) - 1; break;
      case 1: v = rows + 1 + static_cast<int64_t>(rng() % 1000); break;
      case 2: v = v / 2; break;
      default: break;
    }
  }
  return o;
}

// Overwrites a fraction `rate` of `bytes` with uniformly random bytes (every FP8 / UE8M0 code,
// NaN encodings included), and a further fraction with the given special codes.
inline void salt_bytes(std::vector<uint8_t>& bytes, std::mt19937_64& rng, double rate,
                       const std::vector<uint8_t>& specials = {}) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& b : bytes) {
    const double x = u(rng);
    if (x < rate) b = static_cast<uint8_t>(rng());
    else if (x < 2 * rate && !specials.empty()) b = specials[rng() % specials.size()];
  }
}

// Group end offsets for `rows` rows in `groups` groups, with the sizes the tests must cover
// (0, 1, 31, 33, 127, 129 and random ones) and the remainder in the last group or, when
// `leave_tail`, in no group (rows past the last offset).
inline std::vector<int64_t> random_group_ends(int64_t rows, int64_t groups, std::mt19937_64& rng, bool leave_tail) {
  static const int64_t kSizes[] = {0, 1, 31, 33, 127, 129};
  std::vector<int64_t> ends(static_cast<size_t>(groups));
  int64_t at = 0;
  for (int64_t g = 0; g < groups; ++g) {
    int64_t size = (rng() % 3 == 0) ? static_cast<int64_t>(rng() % 200) : kSizes[rng() % 6];
    size = std::min(size, rows - at);
    at += size;
    ends[static_cast<size_t>(g)] = at;
  }
  if (!leave_tail) ends.back() = rows;
  return ends;
}

inline std::vector<uint8_t> offsets_bytes(const std::vector<int64_t>& ends, mxqDataType_t dtype) {
  std::vector<uint8_t> out(ends.size() * dtype_bytes(dtype));
  for (size_t i = 0; i < ends.size(); ++i) {
    if (dtype == MXQ_DTYPE_INT64) {
      std::memcpy(&out[8 * i], &ends[i], 8);
    } else {
      const int32_t v = static_cast<int32_t>(ends[i]);
      std::memcpy(&out[4 * i], &v, 4);
    }
  }
  return out;
}

// ---- comparison --------------------------------------------------------------------------------
// Byte-exact comparison of two equally sized buffers of `elem`-byte elements. On mismatch, reports
// the count and the first few differing elements through `where(element_index)`.
template <typename Where>
bool same_bytes(const std::vector<uint8_t>& expected, const std::vector<uint8_t>& actual, size_t elem, Where where,
                std::string* report) {
  if (expected.size() != actual.size()) {
    *report = "size mismatch: expected " + std::to_string(expected.size()) + " bytes, got " + std::to_string(actual.size());
    return false;
  }
  size_t bad = 0;
  std::ostringstream os;
  for (size_t i = 0; i + elem <= expected.size(); i += elem) {
    if (std::memcmp(&expected[i], &actual[i], elem) == 0) continue;
    if (bad < 8) {
      os << "  element " << i / elem << " (" << where(i / elem) << "): expected 0x";
      for (size_t b = elem; b-- > 0;) os << std::hex << (expected[i + b] >> 4) << (expected[i + b] & 15);
      os << " got 0x";
      for (size_t b = elem; b-- > 0;) os << std::hex << (actual[i + b] >> 4) << (actual[i + b] & 15);
      os << std::dec << "\n";
    }
    ++bad;
  }
  if (bad == 0) return true;
  *report = std::to_string(bad) + " of " + std::to_string(expected.size() / elem) + " elements differ:\n" + os.str();
  return false;
}

// One Execute captured into a CUDA graph on a stream of its own (global capture mode): the
// constructor runs record(stream) between the begin and the end of the capture and keeps what it
// returns in `status`, for the caller to check (capture records and runs nothing); launch()
// instantiates the graph once, runs it and waits for it.
class CapturedGraph {
 public:
  template <typename Record>
  explicit CapturedGraph(Record&& record) {
    MXQ_CU_CHECK(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
    MXQ_CU_CHECK(driver().cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL));
    status = record(reinterpret_cast<mxqStream_t>(stream_));
    MXQ_CU_CHECK(driver().cuStreamEndCapture(stream_, &graph_));
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() {
    if (exec_) driver().cuGraphExecDestroy(exec_);
    if (graph_) driver().cuGraphDestroy(graph_);
    if (stream_) driver().cuStreamDestroy(stream_);
  }
  void launch() {
    if (!exec_) MXQ_CU_CHECK(driver().cuGraphInstantiateWithFlags(&exec_, graph_, 0));
    MXQ_CU_CHECK(driver().cuGraphLaunch(exec_, stream_));
    MXQ_CU_CHECK(driver().cuStreamSynchronize(stream_));
  }
  mxqStatus_t status = MXQ_STATUS_SUCCESS;

 private:
  CUstream stream_ = nullptr;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

// Sets an environment switch for the scope (plans read theirs at Finalize) and restores the old
// value, or unsets it, on exit.
struct ScopedEnv {
  std::string name, old;
  bool had;
  ScopedEnv(const char* n, const char* v) : name(n) {
    const char* o = std::getenv(n);
    had = o != nullptr;
    if (had) old = o;
    setenv(n, v, 1);
  }
  ~ScopedEnv() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};

}  // namespace gpu
}  // namespace mxq_test
