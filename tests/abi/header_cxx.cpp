// The public header as a C++17 consumer sees it (compiled by ctest with -Wall -Wextra -pedantic
// -Werror, no CUDA include path). Checks what C++ callers rely on: no CUDA header leaking in,
// exact signatures, plain-struct arguments, and a stream type that is a pointer to the CUDA stream
// struct, so cudaStream_t / CUstream pass without a cast (stream_cuda.cpp checks identity with
// CUDA's own typedefs where CUDA exists). C linkage is proven by the C++ programs that link.
#include <mxq/mxq.h>

#include <cstddef>
#include <type_traits>

#if defined(CUDA_VERSION) || defined(__CUDA_RUNTIME_H__) || defined(__DRIVER_TYPES_H__)
#error "mxq.h pulled in a CUDA header"
#endif

static_assert(std::is_same<mxqStream_t, CUstream_st*>::value, "mxqStream_t must be struct CUstream_st*");
static_assert(std::is_standard_layout<mxqExecArg_t>::value && std::is_trivially_copyable<mxqExecArg_t>::value,
              "mxqExecArg_t must stay a plain C struct");
static_assert(sizeof(mxqExecArg_t) == 8 + sizeof(void*) && offsetof(mxqExecArg_t, ptr) == 8,
              "mxqExecArg_t layout");
static_assert(std::is_same<decltype(&mxqGetVersion), uint32_t (*)()>::value, "mxqGetVersion signature");
static_assert(std::is_same<decltype(&mxqQuantizeExecute),
                           mxqStatus_t (*)(mxqHandle_t, mxqQuantizePlan_t, const mxqExecArg_t*, int, void*,
                                           size_t, mxqStream_t)>::value,
              "mxqQuantizeExecute signature");

// A C++ lambda without captures converts to the C callback type.
int mxq_abi_header_cxx_probe(void* user);
int mxq_abi_header_cxx_probe(void* user) {
  mxqLogCallback_t callback = [](mxqLogLevel_t, const char*, void* u) { *static_cast<int*>(u) = MXQ_VERSION; };
  callback(MXQ_LOG_INFO, "", user);
  mxqExecArg_t arg{MXQ_ARG_X, 0, user};
  return arg.slot;
}
