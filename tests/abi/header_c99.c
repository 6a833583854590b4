/* The public header as a strict C99 consumer sees it (compiled by ctest with -std=c99 -pedantic
 * -Werror, include path = include/ and the generated include/ only). Besides "it compiles", it pins
 * what the ABI promises and a compiler can check: no CUDA header leaks in, the header is
 * idempotent, status codes keep their numbers, and the argument struct keeps its layout.
 * C99 has no _Static_assert, hence the negative-array-size idiom. */
#include <mxq/mxq.h>
#include <mxq/mxq.h> /* include guard */

#include <stddef.h>

#if defined(CUDA_VERSION) || defined(__CUDA_RUNTIME_H__) || defined(__CUDA_RUNTIME_API_H__) || \
    defined(__DRIVER_TYPES_H__)
#error "mxq.h pulled in a CUDA header"
#endif
#if !defined(MXQ_VERSION) || !defined(MXQ_VERSION_MAJOR) || !defined(MXQ_VERSION_STRING)
#error "mxq.h must provide the version macros of mxq_version.h"
#endif

#define MXQ_PIN(name, cond) typedef char mxq_pin_##name[(cond) ? 1 : -1]

MXQ_PIN(version, MXQ_VERSION == MXQ_VERSION_MAJOR * 10000 + MXQ_VERSION_MINOR * 100 + MXQ_VERSION_PATCH);

/* mxqExecArg_t crosses the ABI by value in arrays: int32 slot, int32 reserved, pointer. */
MXQ_PIN(exec_arg_slot, offsetof(mxqExecArg_t, slot) == 0);
MXQ_PIN(exec_arg_reserved, offsetof(mxqExecArg_t, reserved) == 4);
MXQ_PIN(exec_arg_ptr, offsetof(mxqExecArg_t, ptr) == 8);
MXQ_PIN(exec_arg_size, sizeof(mxqExecArg_t) == 8 + sizeof(void *));
MXQ_PIN(enum_size, sizeof(mxqStatus_t) == sizeof(int));
MXQ_PIN(stream_is_pointer, sizeof(mxqStream_t) == sizeof(void *));

/* Status codes are never renumbered (the header says so; this makes it a build failure). */
MXQ_PIN(s0, MXQ_STATUS_SUCCESS == 0);
MXQ_PIN(s1000, MXQ_STATUS_BAD_PARAM == 1000);
MXQ_PIN(s1001, MXQ_STATUS_BAD_PARAM_NULL_POINTER == 1001);
MXQ_PIN(s1002, MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE == 1002);
MXQ_PIN(s1003, MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE == 1003);
MXQ_PIN(s1004, MXQ_STATUS_BAD_PARAM_INVALID_VALUE == 1004);
MXQ_PIN(s1005, MXQ_STATUS_BAD_PARAM_SHAPE == 1005);
MXQ_PIN(s1006, MXQ_STATUS_BAD_PARAM_MISALIGNED == 1006);
MXQ_PIN(s1007, MXQ_STATUS_BAD_PARAM_WORKSPACE == 1007);
MXQ_PIN(s1008, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS == 1008);
MXQ_PIN(s1009, MXQ_STATUS_BAD_PARAM_ARGUMENT == 1009);
MXQ_PIN(s1010, MXQ_STATUS_BAD_PARAM_NOT_FINALIZED == 1010);
MXQ_PIN(s1011, MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED == 1011);
MXQ_PIN(s1012, MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH == 1012);
MXQ_PIN(s2000, MXQ_STATUS_NOT_SUPPORTED == 2000);
MXQ_PIN(s2001, MXQ_STATUS_NOT_SUPPORTED_DTYPE == 2001);
MXQ_PIN(s2002, MXQ_STATUS_NOT_SUPPORTED_ARCH == 2002);
MXQ_PIN(s2003, MXQ_STATUS_NOT_SUPPORTED_COMBINATION == 2003);
MXQ_PIN(s2004, MXQ_STATUS_NOT_SUPPORTED_BACKEND == 2004);
MXQ_PIN(s3000, MXQ_STATUS_INTERNAL_ERROR == 3000);
MXQ_PIN(s3001, MXQ_STATUS_ALLOC_FAILED == 3001);
MXQ_PIN(s4000, MXQ_STATUS_CUDA_DRIVER_NOT_FOUND == 4000);
MXQ_PIN(s4001, MXQ_STATUS_CUDA_NO_DEVICE == 4001);
MXQ_PIN(s4002, MXQ_STATUS_CUDA_ERROR == 4002);
MXQ_PIN(s4003, MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED == 4003);

/* Every entry point is callable through a C function pointer of the declared type. */
typedef mxqStatus_t (*create_fn)(mxqHandle_t *, mxqBackend_t, int);
typedef mxqStatus_t (*execute_fn)(mxqHandle_t, mxqQuantizePlan_t, const mxqExecArg_t *, int, void *, size_t,
                                  mxqStream_t);
typedef void (*log_fn)(mxqLogLevel_t, const char *, void *);

int mxq_abi_header_c99_probe(void);
int mxq_abi_header_c99_probe(void) {
  create_fn create = mxqCreateWithBackend;
  execute_fn execute = mxqQuantizeExecute;
  mxqLogCallback_t callback = (log_fn)0;
  mxqExecArg_t arg = {MXQ_ARG_X, 0, NULL};
  return (create != 0) + (execute != 0) + (callback == 0) + arg.slot;
}
