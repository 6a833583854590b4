// The CUDA side of the dispatcher: the driver API loaded at run time (no link-time dependency on
// libcuda or libcudart), the embedded kernel images loaded lazily per device, and a launch helper.
// Kernel launchers (src/cuda/op_*.cpp) use only this header; device code lives in kernels/.
//
// Nothing here runs when the library is loaded: libcuda.so.1 is opened the first time a CUDA
// handle is created, so libmxq loads (and its CPU backend works) on machines without a GPU.
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

// Function pointers resolved with cuGetProcAddress from a dlopen'ed libcuda.so.1, each at the ABI
// version of CUDA 12.0 (kDriverApiVersion) whose prototypes the CUDA 12/13 headers declare.
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
  CUresult (*cuFuncGetAttribute)(int*, CUfunction_attribute, CUfunction);
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuPointerGetAttribute)(void*, CUpointer_attribute, CUdeviceptr);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  // Optional (drivers >= 12.4): list a library's kernels, so lookups never probe the wrong image.
  CUresult (*cuLibraryGetKernelCount)(unsigned int*, CUlibrary);
  CUresult (*cuLibraryEnumerateKernels)(CUkernel*, unsigned int, CUlibrary);
  CUresult (*cuKernelGetName)(const char**, CUkernel);

  int driver_version = 0;  // cuDriverGetVersion, e.g. 13000
  std::string path;        // what was dlopen'ed
};

// Oldest driver API mxq asks for (and the oldest driver it accepts): CUDA 12.0.
constexpr int kDriverApiVersion = 12000;

// Loads libcuda.so.1 (or $MXQ_CUDA_DRIVER_PATH) once per process, resolves every entry point and
// calls cuInit(0); thread-safe. A failure is not cached, so a later call retries. Throws
//   CUDA_DRIVER_NOT_FOUND  the library is missing, is the toolkit's stub, lacks an entry point, or
//                          is older than CUDA 12.0;
//   CUDA_NO_DEVICE         cuInit fails (no device, driver/kernel-module mismatch, ...).
const DriverApi& driver();

// Name of a CUresult ("CUDA_ERROR_INVALID_VALUE"), also when the driver cannot say.
std::string result_name(CUresult r);
// Throws Error(MXQ_STATUS_CUDA_ERROR, "<what>: CUDA_ERROR_x (<string>)") when r != CUDA_SUCCESS.
void check(CUresult r, const char* what);

// The 2D TMA descriptor (cuTensorMapEncodeTiled) of a row-major [rows, cols] tensor of `dtype`
// (elem_bytes each, rows cols * elem_bytes apart) at base: boxes of box_cols x box_rows elements with
// the given swizzle, reads past the tensor filling zeros, the given L2 promotion (256 bytes unless
// named: the decode GEMM's B takes 128 at T = 32). Written into the 128
// bytes kernels take as a __grid_constant__ parameter; throws CUDA_ERROR naming `what`.
void encode_tma_2d(uint8_t (&out)[128], CUtensorMapDataType dtype, int64_t elem_bytes, const void* base, int64_t cols,
                   int64_t rows, uint32_t box_cols, uint32_t box_rows, CUtensorMapSwizzle swizzle, const char* what,
                   CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
// The 3D form: `depth` row-major [rows, cols] matrices one after another (rows * cols elements
// apart), boxes of box_cols x box_rows x box_depth; a box's elements past any extent are neither read
// (zero fill) nor written (TMA stores). (A row-major matrix viewed as [rows][cols / c][c] is this with
// cols = c, rows = cols / c, depth = rows: the decode GEMM's pair form.)
void encode_tma_3d(uint8_t (&out)[128], CUtensorMapDataType dtype, int64_t elem_bytes, const void* base, int64_t cols,
                   int64_t rows, int64_t depth, uint32_t box_cols, uint32_t box_rows, CUtensorMapSwizzle swizzle,
                   const char* what, uint32_t box_depth = 1,
                   CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE);

// Facts about a device that kernel selection reads; a plain struct so the registry can be
// exercised without a GPU.
struct DeviceInfo {
  int ordinal = 0;
  int cc = 0;                // major*10 + minor: 90 for sm_90
  int sm_count = 0;
  int smem_optin = 0;        // max dynamic shared memory per block with opt-in, bytes
  int driver_version = 0;
  std::string name;
};

// Makes a context current for the lifetime of the guard and restores the previous one, so mxq never
// changes which context the caller's thread has current.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  CUcontext prev_ = nullptr;
  bool restore_ = false;
};

// Per-device state owned by a CUDA handle: the primary context, properties, and the embedded
// kernel images loaded on first use.
class Device {
 public:
  explicit Device(int ordinal);  // -1: current device of the calling thread (0 if none)
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  int ordinal() const { return info_.ordinal; }
  int cc() const { return info_.cc; }
  int sm_count() const { return info_.sm_count; }
  int max_smem_per_block_optin() const { return info_.smem_optin; }
  const std::string& name() const { return info_.name; }
  CUcontext context() const { return ctx_; }

  // Looks up a kernel by its extern "C" name in the embedded images (each loaded on first need,
  // results cached; thread-safe). Throws Error(CUDA_KERNEL_LOAD_FAILED) when no image has it or an
  // image has no code this device can run.
  CUfunction kernel(const char* name);
  // Launch with cuLaunchKernelEx in the handle's context. params: pointers to each kernel argument.
  // `what` names the launch in error messages. Sets the dynamic shared memory attribute when
  // smem_bytes exceeds the 48 KiB default. programmatic: a programmatic dependent launch (the
  // kernel may start while the previous kernel in the stream runs, once that one's blocks have all
  // executed griddepcontrol.launch_dependents or exited; it must griddepcontrol.wait before reading
  // what that kernel writes).
  void launch(CUfunction f, Dim3 grid, Dim3 block, size_t smem_bytes, mxqStream_t stream, void** params,
              const char* what, bool programmatic = false) const;

 private:
  struct State;
  bool load_image(size_t i);  // embedded image i, once; false (reason recorded) if it cannot load
  DeviceInfo info_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  State* state_ = nullptr;  // loaded images and the kernel cache, guarded by a mutex
};

}  // namespace cuda
}  // namespace mxq
