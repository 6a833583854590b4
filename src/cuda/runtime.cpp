// Driver loader, device state and launch (runtime.h). The driver is reached only through
// dlopen + cuGetProcAddress_v2 so libmxq has no NEEDED entry for libcuda or libcudart and loads on
// machines without a GPU; every entry point is requested at the CUDA 12.0 ABI so a newer driver
// keeps handing back the prototypes this file was compiled against.
#include "cuda/runtime.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/logger.h"
#include "cuda/kernel_images.h"

namespace mxq {
namespace cuda {

namespace {

using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

// Names for the results that can occur before cuGetErrorName is usable (stub or broken driver).
const char* known_result_name(CUresult r) {
  switch (static_cast<int>(r)) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_NO_BINARY_FOR_GPU: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    default: return nullptr;
  }
}

const char* query_status_name(CUdriverProcAddressQueryResult s) {
  switch (s) {
    case CU_GET_PROC_ADDRESS_SUCCESS: return "found";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: return "symbol not found";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: return "driver version not sufficient";
    default: return "unknown query status";
  }
}

std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::mutex g_driver_mu;
std::atomic<const DriverApi*> g_driver{nullptr};
DriverApi g_driver_storage;

// Fills `api` from the library at `path`, or throws. The handle is closed on failure.
void load_driver(const std::string& path, DriverApi& api) {
  dlerror();
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    fail(MXQ_STATUS_CUDA_DRIVER_NOT_FOUND,
         "cannot load the CUDA driver library '{}' ({}); is the NVIDIA driver installed? (MXQ_CUDA_DRIVER_PATH "
         "overrides the path)",
         path, why ? why : "unknown dlopen error");
  }
  try {
    auto gpa = reinterpret_cast<GetProcAddressFn>(dlsym(lib, "cuGetProcAddress_v2"));
    MXQ_REQUIRE(gpa, MXQ_STATUS_CUDA_DRIVER_NOT_FOUND,
                "the CUDA driver '{}' has no cuGetProcAddress_v2: it is older than CUDA 12.0, which mxq needs", path);
    auto resolve = [&](const char* symbol, auto& fn) {
      void* p = nullptr;
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      const CUresult r = gpa(symbol, &p, kDriverApiVersion, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
      MXQ_REQUIRE(r != CUDA_ERROR_STUB_LIBRARY, MXQ_STATUS_CUDA_DRIVER_NOT_FOUND,
                  "'{}' is the CUDA toolkit's stub libcuda (CUDA_ERROR_STUB_LIBRARY), not a driver: no NVIDIA driver "
                  "is installed",
                  path);
      MXQ_REQUIRE(r == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && p, MXQ_STATUS_CUDA_DRIVER_NOT_FOUND,
                  "the CUDA driver '{}' does not provide {} at API version {} ({}, {})", path, symbol,
                  kDriverApiVersion, result_name(r), query_status_name(status));
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    // Error names first, so every later message can use them.
    resolve("cuGetErrorName", api.cuGetErrorName);
    resolve("cuGetErrorString", api.cuGetErrorString);
    resolve("cuDriverGetVersion", api.cuDriverGetVersion);
    resolve("cuInit", api.cuInit);
    resolve("cuDeviceGetCount", api.cuDeviceGetCount);
    resolve("cuDeviceGet", api.cuDeviceGet);
    resolve("cuDeviceGetAttribute", api.cuDeviceGetAttribute);
    resolve("cuDeviceGetName", api.cuDeviceGetName);
    resolve("cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain);
    resolve("cuDevicePrimaryCtxRelease", api.cuDevicePrimaryCtxRelease);
    resolve("cuCtxGetCurrent", api.cuCtxGetCurrent);
    resolve("cuCtxSetCurrent", api.cuCtxSetCurrent);
    resolve("cuCtxGetDevice", api.cuCtxGetDevice);
    resolve("cuLibraryLoadData", api.cuLibraryLoadData);
    resolve("cuLibraryUnload", api.cuLibraryUnload);
    resolve("cuLibraryGetKernel", api.cuLibraryGetKernel);
    resolve("cuKernelGetFunction", api.cuKernelGetFunction);
    resolve("cuFuncSetAttribute", api.cuFuncSetAttribute);
    resolve("cuFuncGetAttribute", api.cuFuncGetAttribute);
    resolve("cuLaunchKernelEx", api.cuLaunchKernelEx);
    resolve("cuTensorMapEncodeTiled", api.cuTensorMapEncodeTiled);
    resolve("cuMemsetD8Async", api.cuMemsetD8Async);
    resolve("cuMemcpyAsync", api.cuMemcpyAsync);
    resolve("cuPointerGetAttribute", api.cuPointerGetAttribute);
    // Optional entry points, requested at the version that introduced them (a request at 12.0
    // would not find them): absent on older drivers, which fall back to probing each image.
    auto resolve_optional = [&](const char* symbol, int version, auto& fn) {
      void* p = nullptr;
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      if (gpa(symbol, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) == CUDA_SUCCESS &&
          status == CU_GET_PROC_ADDRESS_SUCCESS && p)
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      else
        fn = nullptr;
    };
    resolve_optional("cuLibraryGetKernelCount", 12040, api.cuLibraryGetKernelCount);
    resolve_optional("cuLibraryEnumerateKernels", 12040, api.cuLibraryEnumerateKernels);
    resolve_optional("cuKernelGetName", 12030, api.cuKernelGetName);

    int version = 0;
    CUresult r = api.cuDriverGetVersion(&version);
    MXQ_REQUIRE(r == CUDA_SUCCESS, MXQ_STATUS_CUDA_DRIVER_NOT_FOUND, "cuDriverGetVersion failed on '{}': {}", path,
                result_name(r));
    MXQ_REQUIRE(version >= kDriverApiVersion, MXQ_STATUS_CUDA_DRIVER_NOT_FOUND,
                "the CUDA driver '{}' supports CUDA {}; mxq needs CUDA 12.0 or newer", path, version_string(version));
    api.driver_version = version;

    r = api.cuInit(0);
    MXQ_REQUIRE(r != CUDA_ERROR_STUB_LIBRARY, MXQ_STATUS_CUDA_DRIVER_NOT_FOUND,
                "cuInit: '{}' is a stub library, not a driver", path);
    if (r != CUDA_SUCCESS) {
      const char* str = nullptr;
      if (api.cuGetErrorString(r, &str) != CUDA_SUCCESS) str = nullptr;
      fail(MXQ_STATUS_CUDA_NO_DEVICE, "cuInit failed: {} ({}); driver '{}' (CUDA {}) finds no usable GPU", result_name(r),
           str ? str : "no description", path, version_string(version));
    }
    api.path = path;
  } catch (...) {
    dlclose(lib);
    throw;
  }
}

}  // namespace

std::string result_name(CUresult r) {
  const DriverApi* api = g_driver.load(std::memory_order_acquire);
  const char* name = nullptr;
  if (api && api->cuGetErrorName && api->cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
  if (const char* known = known_result_name(r)) return known;
  return fmt::format("CUresult {}", static_cast<int>(r));
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const DriverApi* api = g_driver.load(std::memory_order_acquire);
  const char* str = nullptr;
  if (!api || api->cuGetErrorString(r, &str) != CUDA_SUCCESS || !str) str = "no description";
  fail(MXQ_STATUS_CUDA_ERROR, "{}: {} ({})", what, result_name(r), str);
}

namespace {
// cuTensorMapEncodeTiled for `rank` (2 or 3) row-major dimensions, element strides 1, the driver's
// error as a CUDA_ERROR status naming `what`.
void encode_tiled(uint8_t (&out)[128], CUtensorMapDataType dtype, cuuint32_t rank, const void* base,
                  const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box, CUtensorMapSwizzle swizzle,
                  CUtensorMapL2promotion promotion, const char* what) {
  static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes");
  CUtensorMap map;
  const cuuint32_t elem[3] = {1, 1, 1};
  check(driver().cuTensorMapEncodeTiled(&map, dtype, rank, const_cast<void*>(base), dims, strides, box, elem,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        fmt::format("cuTensorMapEncodeTiled ({})", what).c_str());
  std::memcpy(out, &map, sizeof map);
}
}  // namespace

void encode_tma_2d(uint8_t (&out)[128], CUtensorMapDataType dtype, int64_t elem_bytes, const void* base, int64_t cols,
                   int64_t rows, uint32_t box_cols, uint32_t box_rows, CUtensorMapSwizzle swizzle, const char* what,
                   CUtensorMapL2promotion promotion) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols * elem_bytes)};
  const cuuint32_t box[2] = {box_cols, box_rows};
  encode_tiled(out, dtype, 2, base, dims, strides, box, swizzle, promotion, what);
}

void encode_tma_3d(uint8_t (&out)[128], CUtensorMapDataType dtype, int64_t elem_bytes, const void* base, int64_t cols,
                   int64_t rows, int64_t depth, uint32_t box_cols, uint32_t box_rows, CUtensorMapSwizzle swizzle,
                   const char* what, uint32_t box_depth, CUtensorMapL2promotion promotion) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(depth)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(cols * elem_bytes),
                                 static_cast<cuuint64_t>(rows * cols * elem_bytes)};
  const cuuint32_t box[3] = {box_cols, box_rows, box_depth};
  encode_tiled(out, dtype, 3, base, dims, strides, box, swizzle, promotion, what);
}

const DriverApi& driver() {
  if (const DriverApi* api = g_driver.load(std::memory_order_acquire)) return *api;
  std::lock_guard<std::mutex> lock(g_driver_mu);
  if (const DriverApi* api = g_driver.load(std::memory_order_relaxed)) return *api;
  const char* env = std::getenv("MXQ_CUDA_DRIVER_PATH");
  const std::string path = env && *env ? env : "libcuda.so.1";
  DriverApi api{};
  load_driver(path, api);
  g_driver_storage = api;
  g_driver.store(&g_driver_storage, std::memory_order_release);
  MXQ_LOG_DBG("CUDA driver loaded from '{}' (CUDA {})", path, version_string(api.driver_version));
  return g_driver_storage;
}

// ---- ScopedContext -----------------------------------------------------------------------------
ScopedContext::ScopedContext(CUcontext ctx) {
  const DriverApi& d = driver();
  check(d.cuCtxGetCurrent(&prev_), "cuCtxGetCurrent");
  if (prev_ != ctx) {
    check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    restore_ = true;
  }
}

ScopedContext::~ScopedContext() {
  if (restore_) driver().cuCtxSetCurrent(prev_);  // nothing sensible to do on failure in a destructor
}

// ---- Device ------------------------------------------------------------------------------------
struct Device::State {
  std::mutex mu;
  std::vector<CUlibrary> libs;          // per embedded image; nullptr until loaded
  std::vector<std::string> load_errors; // per embedded image; non-empty once loading failed
  std::unordered_map<std::string, CUfunction> kernels;
  // Kernel name -> image index, from enumerating every image (when the driver can); built once.
  bool indexed = false;
  std::unordered_map<std::string, size_t> index;
};

Device::Device(int ordinal) {
  const DriverApi& d = driver();
  int count = 0;
  CUresult r = d.cuDeviceGetCount(&count);
  MXQ_REQUIRE(r == CUDA_SUCCESS, MXQ_STATUS_CUDA_NO_DEVICE, "cuDeviceGetCount failed: {}", result_name(r));
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  MXQ_REQUIRE(count > 0, MXQ_STATUS_CUDA_NO_DEVICE, "the CUDA driver reports no device (CUDA_VISIBLE_DEVICES={})",
              visible ? visible : "<unset>");

  int ord = ordinal;
  if (ord == -1) {
    ord = 0;
    CUcontext cur = nullptr;
    CUdevice cur_dev = 0;
    if (d.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur && d.cuCtxGetDevice(&cur_dev) == CUDA_SUCCESS) {
      for (int i = 0; i < count; ++i) {
        CUdevice di = 0;
        if (d.cuDeviceGet(&di, i) == CUDA_SUCCESS && di == cur_dev) {
          ord = i;
          break;
        }
      }
    }
  }
  MXQ_REQUIRE(ord >= 0 && ord < count, MXQ_STATUS_CUDA_NO_DEVICE,
              "device ordinal {} is out of range: {} device(s) visible (CUDA_VISIBLE_DEVICES={})", ordinal, count,
              visible ? visible : "<unset>");
  check(d.cuDeviceGet(&dev_, ord), "cuDeviceGet");

  auto attr = [&](CUdevice_attribute a, const char* what) {
    int v = 0;
    check(d.cuDeviceGetAttribute(&v, a, dev_), what);
    return v;
  };
  const int major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cuDeviceGetAttribute(cc major)");
  const int minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cuDeviceGetAttribute(cc minor)");
  info_.ordinal = ord;
  info_.cc = major * 10 + minor;
  info_.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "cuDeviceGetAttribute(SM count)");
  info_.smem_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "cuDeviceGetAttribute(smem optin)");
  info_.driver_version = d.driver_version;
  char name[256] = {};
  check(d.cuDeviceGetName(name, sizeof(name) - 1, dev_), "cuDeviceGetName");
  info_.name = name;

  check(d.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  state_ = new State();
  state_->libs.assign(kNumEmbeddedImages, nullptr);
  state_->load_errors.assign(kNumEmbeddedImages, std::string());
  MXQ_LOG_DBG("CUDA device {}: {} (sm_{}, {} SMs, {} KiB shared memory per block)", ord, info_.name, info_.cc,
              info_.sm_count, info_.smem_optin / 1024);
}

Device::~Device() {
  const DriverApi& d = driver();  // loaded: the constructor succeeded
  if (state_) {
    for (CUlibrary lib : state_->libs)
      if (lib) d.cuLibraryUnload(lib);
    delete state_;
  }
  if (ctx_) d.cuDevicePrimaryCtxRelease(dev_);
}

// Caller holds state_->mu.
bool Device::load_image(size_t i) {
  const DriverApi& d = driver();
  State& st = *state_;
  if (st.libs[i]) return true;
  if (!st.load_errors[i].empty()) return false;
  const EmbeddedImage& img = kEmbeddedImages[i];
  CUlibrary lib = nullptr;
  const CUresult r = d.cuLibraryLoadData(&lib, img.data, nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (r != CUDA_SUCCESS) {
    st.load_errors[i] = result_name(r);
    return false;
  }
  st.libs[i] = lib;
  MXQ_LOG_DBG("loaded kernel image '{}' ({} bytes) for device {}", img.name, img.size, info_.ordinal);
  return true;
}

CUfunction Device::kernel(const char* name) {
  const DriverApi& d = driver();
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->kernels.find(name);
  if (it != state_->kernels.end()) return it->second;

  // With enumeration, every image is loaded once and indexed by kernel name, so a lookup goes
  // straight to its image (and no driver call fails along the way, which sanitizers would report).
  // Module loading is lazy, so loading an image does not load its kernels' code.
  const bool can_enumerate = d.cuLibraryGetKernelCount && d.cuLibraryEnumerateKernels && d.cuKernelGetName;
  if (can_enumerate && !state_->indexed) {
    for (size_t i = 0; i < kNumEmbeddedImages; ++i) {
      if (!load_image(i)) continue;
      unsigned count = 0;
      check(d.cuLibraryGetKernelCount(&count, state_->libs[i]), "cuLibraryGetKernelCount");
      std::vector<CUkernel> ks(count);
      if (count) check(d.cuLibraryEnumerateKernels(ks.data(), count, state_->libs[i]), "cuLibraryEnumerateKernels");
      for (CUkernel k : ks) {
        const char* kname = nullptr;
        if (d.cuKernelGetName(&kname, k) == CUDA_SUCCESS && kname) state_->index.emplace(kname, i);
      }
    }
    state_->indexed = true;
  }

  std::vector<size_t> candidates;
  if (can_enumerate) {
    auto at = state_->index.find(name);
    if (at != state_->index.end()) candidates.push_back(at->second);
  } else {
    for (size_t i = 0; i < kNumEmbeddedImages; ++i) candidates.push_back(i);
  }
  for (size_t i : candidates) {
    const EmbeddedImage& img = kEmbeddedImages[i];
    if (!load_image(i)) continue;
    CUkernel k = nullptr;
    CUresult r = d.cuLibraryGetKernel(&k, state_->libs[i], name);
    if (r == CUDA_ERROR_NOT_FOUND) continue;
    MXQ_REQUIRE(r == CUDA_SUCCESS, MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED, "cuLibraryGetKernel({}) in image '{}': {}", name,
                img.name, result_name(r));
    CUfunction f = nullptr;
    {
      ScopedContext guard(ctx_);
      r = d.cuKernelGetFunction(&f, k);
    }
    MXQ_REQUIRE(r == CUDA_SUCCESS, MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED,
                "kernel {} (image '{}') cannot be loaded on {} (sm_{}): {}{}", name, img.name, info_.name, info_.cc,
                result_name(r),
                r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_PTX || r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                    ? " (the image has no SASS for this GPU and its PTX cannot be JIT-compiled by this driver)"
                    : "");
    state_->kernels.emplace(name, f);
    return f;
  }
  std::string errors;
  for (size_t i = 0; i < kNumEmbeddedImages; ++i)
    if (!state_->load_errors[i].empty())
      errors += fmt::format("; image '{}' failed to load: {}", kEmbeddedImages[i].name, state_->load_errors[i]);
  fail(MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED, "kernel {} is not in any of the {} embedded kernel images{}", name,
       kNumEmbeddedImages, errors);
}

void Device::launch(CUfunction f, Dim3 grid, Dim3 block, size_t smem_bytes, mxqStream_t stream, void** params,
                    const char* what, bool programmatic) const {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;  // empty problem: nothing to enqueue
  const DriverApi& d = driver();
  ScopedContext guard(ctx_);
  if (smem_bytes > 48 * 1024) {
    const CUresult r =
        d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(smem_bytes));
    if (r != CUDA_SUCCESS) check(r, fmt::format("cuFuncSetAttribute({}, {} bytes of shared memory)", what, smem_bytes).c_str());
  }
  CUlaunchConfig cfg{};
  cfg.gridDimX = grid.x;
  cfg.gridDimY = grid.y;
  cfg.gridDimZ = grid.z;
  cfg.blockDimX = block.x;
  cfg.blockDimY = block.y;
  cfg.blockDimZ = block.z;
  cfg.sharedMemBytes = static_cast<unsigned>(smem_bytes);
  cfg.hStream = reinterpret_cast<CUstream>(stream);
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = programmatic ? &attr : nullptr;
  cfg.numAttrs = programmatic ? 1 : 0;
  const CUresult r = d.cuLaunchKernelEx(&cfg, f, params, nullptr);
  if (r != CUDA_SUCCESS) {
    check(r, fmt::format("cuLaunchKernelEx({}, grid {}x{}x{}, block {}x{}x{}, {} bytes shared)", what, grid.x, grid.y,
                         grid.z, block.x, block.y, block.z, smem_bytes)
                 .c_str());
  }
}

}  // namespace cuda
}  // namespace mxq
