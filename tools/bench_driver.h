// Shared plumbing of the benchmark tools: the CUDA driver API opened with dlopen (like libmxq, so
// no CUDA library is linked), the primary context of device 0, device buffers, and fatal-error
// helpers. Each tool sets mxq_bench::tool_name first so messages say who failed.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mxq/mxq.h"

namespace mxq_bench {

inline const char* tool_name = "mxq_bench";

struct Cu {
  int (*cuInit)(unsigned);
  int (*cuDeviceGet)(int*, int);
  int (*cuDeviceGetName)(char*, int, int);
  int (*cuDevicePrimaryCtxRetain)(void**, int);
  int (*cuCtxSetCurrent)(void*);
  int (*cuMemAlloc)(unsigned long long*, size_t);
  int (*cuMemFree)(unsigned long long);
  int (*cuMemcpyHtoD)(unsigned long long, const void*, size_t);
  int (*cuMemcpyDtoDAsync)(unsigned long long, unsigned long long, size_t, void*);
  int (*cuMemsetD8Async)(unsigned long long, unsigned char, size_t, void*);
  int (*cuCtxSynchronize)();
  int (*cuEventCreate)(void**, unsigned);
  int (*cuEventRecord)(void*, void*);
  int (*cuEventSynchronize)(void*);
  int (*cuEventElapsedTime)(float*, void*, void*);
  int (*cuModuleLoadData)(void**, const void*);
  int (*cuModuleGetFunction)(void**, void*, const char*);
  int (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                        void**);
  int (*cuFuncSetAttribute)(void*, int, int);
  int (*cuDeviceGetAttribute)(int*, int, int);
};

inline Cu cu;
inline std::string device_name = "unknown";

[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", tool_name, what.c_str());
  std::exit(1);
}
inline void ck(int r, const char* what) {
  if (r != 0) die(std::string(what) + " failed with CUresult " + std::to_string(r));
}
inline void ckq(mxqStatus_t s, const char* what) {
  if (s != MXQ_STATUS_SUCCESS) die(std::string(what) + ": " + mxqGetStatusName(s) + ": " + mxqGetLastErrorMessage());
}

// Opens libcuda.so.1, resolves the entry points above and makes device 0's primary context current.
inline void load_driver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) die("libcuda.so.1 not found");
  auto sym = [&](const char* n) {
    void* p = dlsym(lib, n);
    if (!p) die(std::string("libcuda lacks ") + n);
    return p;
  };
#define MXQ_BENCH_SYM(field, name) cu.field = reinterpret_cast<decltype(cu.field)>(sym(name))
  MXQ_BENCH_SYM(cuInit, "cuInit");
  MXQ_BENCH_SYM(cuDeviceGet, "cuDeviceGet");
  MXQ_BENCH_SYM(cuDeviceGetName, "cuDeviceGetName");
  MXQ_BENCH_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  MXQ_BENCH_SYM(cuCtxSetCurrent, "cuCtxSetCurrent");
  MXQ_BENCH_SYM(cuMemAlloc, "cuMemAlloc_v2");
  MXQ_BENCH_SYM(cuMemFree, "cuMemFree_v2");
  MXQ_BENCH_SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  MXQ_BENCH_SYM(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  MXQ_BENCH_SYM(cuMemsetD8Async, "cuMemsetD8Async");
  MXQ_BENCH_SYM(cuCtxSynchronize, "cuCtxSynchronize");
  MXQ_BENCH_SYM(cuEventCreate, "cuEventCreate");
  MXQ_BENCH_SYM(cuEventRecord, "cuEventRecord");
  MXQ_BENCH_SYM(cuEventSynchronize, "cuEventSynchronize");
  MXQ_BENCH_SYM(cuEventElapsedTime, "cuEventElapsedTime_v2");
  MXQ_BENCH_SYM(cuModuleLoadData, "cuModuleLoadData");
  MXQ_BENCH_SYM(cuModuleGetFunction, "cuModuleGetFunction");
  MXQ_BENCH_SYM(cuLaunchKernel, "cuLaunchKernel");
  MXQ_BENCH_SYM(cuFuncSetAttribute, "cuFuncSetAttribute");
  MXQ_BENCH_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute");
#undef MXQ_BENCH_SYM
  int dev = 0;
  void* ctx = nullptr;
  ck(cu.cuInit(0), "cuInit");
  ck(cu.cuDeviceGet(&dev, 0), "cuDeviceGet");
  char name[256] = {};
  if (cu.cuDeviceGetName(name, sizeof name, dev) == 0) device_name = name;
  ck(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

// A device allocation (at least 256 bytes), optionally filled from host bytes.
struct DevMem {
  unsigned long long p = 0;
  size_t bytes = 0;
  explicit DevMem(size_t n) : bytes(n) { ck(cu.cuMemAlloc(&p, std::max<size_t>(n, 256)), "cuMemAlloc"); }
  explicit DevMem(const std::vector<uint8_t>& host) : DevMem(host.size()) {
    ck(cu.cuMemcpyHtoD(p, host.data(), host.size()), "cuMemcpyHtoD");
  }
  ~DevMem() { cu.cuMemFree(p); }
  DevMem(const DevMem&) = delete;
  DevMem& operator=(const DevMem&) = delete;
  void* ptr() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
};

}  // namespace mxq_bench
