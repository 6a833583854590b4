// The CUDA side of the dispatcher: the driver API loaded at run time (no link-time dependency on
// libcuda or libcudart), the embedded kernel image loaded lazily per device, and a launch helper.
// Kernel launchers (src/cuda/op_*.cpp) use only this header; device code lives in kernels/.
#pragma once

#include <cuda.h>  // types and enums only: every function is called through DriverApi pointers

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/backend.h"

namespace mxq {
namespace cuda {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// Function pointers resolved with cuGetProcAddress from a dlopen'ed libcuda.so.1.
struct DriverApi {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetDevice)(CUdevice*);
  CUresult (*cuLibraryLoadData)(CUlibrary*, const void*, CUjit_option*, void**, unsigned int,
                                CUlibraryOption*, void**, unsigned int);
  CUresult (*cuLibraryUnload)(CUlibrary);
  CUresult (*cuLibraryGetKernel)(CUkernel*, CUlibrary, const char*);
  CUresult (*cuKernelGetFunction)(CUfunction*, CUkernel);
  CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuPointerGetAttribute)(void*, CUpointer_attribute, CUdeviceptr);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
};

// Loads libcuda.so.1 once per process (thread-safe). Throws Error(CUDA_DRIVER_NOT_FOUND) when the
// library or a required entry point is missing. Honours MXQ_CUDA_DRIVER_PATH for tests.
const DriverApi& driver();

// Throws Error(MXQ_STATUS_CUDA_ERROR, "<what>: CUDA_ERROR_x (<string>)") when r != CUDA_SUCCESS.
void check(CUresult r, const char* what);

// Per-device state owned by a CUDA handle: the primary context, properties, and the embedded
// kernel library loaded on first use.
class Device {
 public:
  explicit Device(int ordinal);  // -1: current device of the calling thread (0 if none)
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int ordinal() const { return ordinal_; }
  int cc() const { return cc_major_ * 10 + cc_minor_; }  // 90 for sm_90
  int sm_count() const { return sm_count_; }
  int max_smem_per_block_optin() const { return smem_optin_; }
  const std::string& name() const { return name_; }
  CUcontext context() const { return ctx_; }

  // Makes the handle's context current on the calling thread (cheap if it already is).
  void make_current() const;
  // Looks up a kernel by its extern "C" name in the embedded image (loaded lazily, cached).
  // Throws Error(CUDA_KERNEL_LOAD_FAILED) if the image has no code for this device.
  CUfunction kernel(const char* name);
  // Launch with cuLaunchKernelEx. params: array of pointers to each kernel argument.
  void launch(CUfunction f, Dim3 grid, Dim3 block, size_t smem_bytes, mxqStream_t stream, void** params) const;

 private:
  int ordinal_ = 0;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  int cc_major_ = 0, cc_minor_ = 0, sm_count_ = 0, smem_optin_ = 0;
  std::string name_;
  CUlibrary lib_ = nullptr;
  struct Cache;
  Cache* cache_ = nullptr;  // name -> CUfunction, guarded by a mutex
};

}  // namespace cuda
}  // namespace mxq
