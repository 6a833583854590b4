/*
 * mxq — MXFP8 quantization, grouped GEMM and attention for NVIDIA GPUs.
 *
 * This header is the specification of the library's C ABI. It compiles as C99 and as C++,
 * and needs no CUDA header: mxqStream_t is ABI-identical to cudaStream_t and CUstream.
 *
 * Model (cuBLASLt / cuDNN backend style):
 *   handle  = a backend (CUDA device or CPU reference) bound at mxqCreate*;
 *   plan    = one operation described by typed attributes, validated and bound to a kernel by
 *             Finalize, immutable afterwards;
 *   execute = a finalized plan run on (slot, pointer) arguments, a caller-provided workspace and
 *             a stream. Execute never allocates memory and never synchronizes the host, so it can be
 *             captured into a CUDA graph.
 *
 * Pointers: "device" pointers are CUDA device (or managed) memory on a CUDA handle, host memory on a
 * CPU handle. "host" pointers are always host memory. All execution-argument pointers are device
 * pointers in that sense.
 *
 * Status: every function returns mxqStatus_t (0 = success) except the few documented otherwise.
 * On failure nothing is written to output parameters, a detailed message is stored for the calling
 * thread (mxqGetLastErrorMessage), and no C++ exception or abort ever crosses the ABI.
 *
 * Threading: a finalized plan is immutable and may be executed concurrently from several threads
 * on any streams, each execution with its own workspace; Execute and PlanCreate only read the handle,
 * so they may run on one handle from several threads at once. mxqDestroy must not race with any other
 * use of its handle, and SetAttribute/Finalize/Destroy calls on one plan must not race with each
 * other or with its executions. The logger setters and the version/status/error query functions
 * are thread-safe (docs/THREADING.md).
 *
 * Numerics and layouts: docs/NUMERICS.md and docs/LAYOUTS.md (the exact bit-level contract).
 */
#ifndef MXQ_MXQ_H_
#define MXQ_MXQ_H_

#include <stddef.h>
#include <stdint.h>

#include "mxq/mxq_version.h"

/* ---------------------------------------------------------------------------------------------- */
/* Export macro                                                                                     */
/* ---------------------------------------------------------------------------------------------- */
#ifndef MXQ_API
#if defined(_WIN32)
#define MXQ_API __declspec(dllimport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define MXQ_API __attribute__((visibility("default")))
#else
#define MXQ_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Basic types                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

/** CUDA stream; ABI-identical to cudaStream_t / CUstream. NULL is the legacy default stream.
 *  Ignored by the CPU backend (execution is synchronous there). */
struct CUstream_st;
typedef struct CUstream_st *mxqStream_t;

/** Opaque handles. */
typedef struct mxqContext *mxqHandle_t;
typedef struct mxqQuantizePlan *mxqQuantizePlan_t;
typedef struct mxqDequantizePlan *mxqDequantizePlan_t;
typedef struct mxqGroupedGemmPlan *mxqGroupedGemmPlan_t;
typedef struct mxqAttentionPlan *mxqAttentionPlan_t;

/**
 * Status codes. Values are part of the ABI and are never renumbered; new codes are only added.
 * Categories: 1xxx bad parameter (the caller's mistake), 2xxx not supported (valid but not
 * implemented for this combination / device), 3xxx internal, 4xxx CUDA driver / execution.
 * Callers should treat an unknown code by its category (code / 1000).
 */
typedef enum {
  MXQ_STATUS_SUCCESS = 0,

  MXQ_STATUS_BAD_PARAM = 1000,                  /**< generic invalid argument */
  MXQ_STATUS_BAD_PARAM_NULL_POINTER = 1001,     /**< a required pointer is NULL */
  MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE = 1002,/**< attribute id not known to this plan type */
  MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE = 1003,   /**< sizeInBytes does not match the attribute's C type */
  MXQ_STATUS_BAD_PARAM_INVALID_VALUE = 1004,    /**< an attribute or enum value is out of its range */
  MXQ_STATUS_BAD_PARAM_SHAPE = 1005,            /**< zero/negative/overflowing/inconsistent dimensions */
  MXQ_STATUS_BAD_PARAM_MISALIGNED = 1006,       /**< a pointer lacks the alignment the plan requires */
  MXQ_STATUS_BAD_PARAM_WORKSPACE = 1007,        /**< workspace smaller than GetWorkspaceSize, or NULL */
  MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS = 1008,    /**< group offsets decrease, are negative or overrun */
  MXQ_STATUS_BAD_PARAM_ARGUMENT = 1009,         /**< missing, duplicate or unknown execution argument */
  MXQ_STATUS_BAD_PARAM_NOT_FINALIZED = 1010,    /**< execute / workspace query before Finalize */
  MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED = 1011,/**< SetAttribute or Finalize on a finalized plan */
  MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH = 1012,  /**< plan executed with a handle other than its own */

  MXQ_STATUS_NOT_SUPPORTED = 2000,              /**< generic: valid request, not implemented */
  MXQ_STATUS_NOT_SUPPORTED_DTYPE = 2001,        /**< data type (combination) not supported */
  MXQ_STATUS_NOT_SUPPORTED_ARCH = 2002,         /**< no kernel for this GPU architecture */
  MXQ_STATUS_NOT_SUPPORTED_COMBINATION = 2003,  /**< attributes valid alone, not together */
  MXQ_STATUS_NOT_SUPPORTED_BACKEND = 2004,      /**< backend not available in this build */

  MXQ_STATUS_INTERNAL_ERROR = 3000,             /**< a bug in mxq; please report */
  MXQ_STATUS_ALLOC_FAILED = 3001,               /**< host memory allocation failed */

  MXQ_STATUS_CUDA_DRIVER_NOT_FOUND = 4000,      /**< libcuda.so.1 could not be loaded / is too old */
  MXQ_STATUS_CUDA_NO_DEVICE = 4001,             /**< no CUDA device, or the ordinal is out of range */
  MXQ_STATUS_CUDA_ERROR = 4002,                 /**< a CUDA driver call failed (message has details) */
  MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED = 4003     /**< the embedded kernel image did not load */
} mxqStatus_t;

/** Data types. */
typedef enum {
  MXQ_DTYPE_FP32 = 0,
  MXQ_DTYPE_FP16 = 1,
  MXQ_DTYPE_BF16 = 2,
  MXQ_DTYPE_E4M3 = 3,   /**< FP8 E4M3 (OCP "fn": max 448, no Inf, NaN = S.1111.111) */
  MXQ_DTYPE_E5M2 = 4,   /**< FP8 E5M2 (max 57344, IEEE-like Inf/NaN) */
  MXQ_DTYPE_UE8M0 = 5,  /**< unsigned 8-bit exponent scale, value 2^(E-127), 0xFF = NaN */
  MXQ_DTYPE_INT32 = 6,
  MXQ_DTYPE_INT64 = 7
} mxqDataType_t;

/** Backends. */
typedef enum {
  MXQ_BACKEND_CUDA = 0, /**< NVIDIA GPU through the CUDA driver API (loaded at handle creation) */
  MXQ_BACKEND_CPU = 1   /**< CPU reference backend: every operation, host memory, synchronous */
} mxqBackend_t;

/** How the UE8M0 scale of a 32-block is derived from its absolute maximum (docs/NUMERICS.md). */
typedef enum {
  MXQ_SCALE_MODE_RCEIL = 0, /**< default: scale rounded up so nothing saturates (TE, cuBLAS, cuDNN) */
  MXQ_SCALE_MODE_FLOOR = 1, /**< OCP MX v1.0: 2^(floor(log2 amax) - emax); elements may saturate */
  MXQ_SCALE_MODE_CEIL = 2,  /**< 2^(ceil(log2 amax) - emax) */
  MXQ_SCALE_MODE_EVEN = 3   /**< amax rounded to the element mantissa first, then FLOOR */
} mxqScaleMode_t;

/** What non-finite inputs do (docs/NUMERICS.md). A NaN never becomes a finite number silently. */
typedef enum {
  MXQ_NONFINITE_TE_COMPATIBLE = 0, /**< default: NaN ignored by the block max and stored as NaN
                                        (0x7F E4M3 / 0x7F E5M2); Inf gives scale 0xFE and ±MAXN */
  MXQ_NONFINITE_PROPAGATE = 1      /**< OCP: any NaN/Inf in a block gives scale 0xFF (NaN) */
} mxqNonfinitePolicy_t;

/** Scale tensor layouts (docs/LAYOUTS.md). */
typedef enum {
  MXQ_SCALE_LAYOUT_SWIZZLED_128x4 = 0, /**< default: what block-scaled tensor cores read (cuBLASLt
                                            VEC32_UE8M0); rows padded to 128, scale columns to 4,
                                            padding bytes written as 0 */
  MXQ_SCALE_LAYOUT_LINEAR = 1          /**< row-major [rows, ceil(K/32)] */
} mxqScaleLayout_t;

/** Quantization orientation (bit mask). */
typedef enum {
  MXQ_QUANTIZE_ROWWISE = 1,    /**< 1x32 blocks along the contiguous axis K; data keeps [R, K] */
  MXQ_QUANTIZE_COLUMNWISE = 2, /**< 32x1 blocks along R; data [K, R] when transposed (default) */
  MXQ_QUANTIZE_BOTH = 3        /**< both outputs from one read of the input */
} mxqQuantizeDirection_t;

/** Grouping of the rows of a quantized tensor (MoE). */
typedef enum {
  MXQ_GROUPING_NONE = 0,
  /** Rows [o_{g-1}, o_g) belong to group g (o_{-1} = 0, end offsets in device memory).
   *  Rowwise output: per-group scale rows padded to 128 in the swizzled layout (fprop / dgrad
   *  operand). Columnwise output: 32-blocks along R restart at each group start (wgrad operand,
   *  "K-grouped"). */
  MXQ_GROUPING_ROWS = 1
} mxqGrouping_t;

/** Fused prologue of the quantizer. */
typedef enum {
  MXQ_FUSION_NONE = 0,
  /** Input [R, 2K] = (gate | up) per row; quantizes silu(gate) * up, a [R, K] tensor. The fp32
   *  product is rounded to the input dtype before quantization (so the result equals quantizing
   *  the optional MXQ_ARG_ACTIVATION output). */
  MXQ_FUSION_SWIGLU = 1
} mxqFusion_t;

/* ---------------------------------------------------------------------------------------------- */
/* Execution arguments                                                                              */
/* ---------------------------------------------------------------------------------------------- */

/** Execution argument slots. A plan documents which slots it reads and writes. */
typedef enum {
  /* quantize / dequantize */
  MXQ_ARG_X = 1,                /**< high-precision tensor: quantize input, dequantize output */
  MXQ_ARG_ROWWISE_DATA = 2,     /**< FP8 data, rowwise */
  MXQ_ARG_ROWWISE_SCALES = 3,   /**< UE8M0 scales of the rowwise data */
  MXQ_ARG_COLWISE_DATA = 4,     /**< FP8 data, columnwise */
  MXQ_ARG_COLWISE_SCALES = 5,   /**< UE8M0 scales of the columnwise data */
  MXQ_ARG_GROUP_OFFSETS = 6,    /**< int32 or int64 group end offsets [G] */
  MXQ_ARG_AMAX = 7,             /**< optional fp32 [1]: global max |x| of the quantized tensor
                                     (NaN-ignoring); overwritten, not max-accumulated */
  MXQ_ARG_ACTIVATION = 8,       /**< optional output of a fused prologue (SwiGLU), input dtype */

  /* grouped GEMM: D = alpha * A * B^T (+ D) */
  MXQ_ARG_A_DATA = 20,
  MXQ_ARG_A_SCALES = 21,
  MXQ_ARG_B_DATA = 22,
  MXQ_ARG_B_SCALES = 23,
  MXQ_ARG_D = 24,

  /* attention */
  MXQ_ARG_Q_DATA = 40,          /**< Q FP8, quantized along D */
  MXQ_ARG_Q_SCALES = 41,
  MXQ_ARG_K_DATA = 42,          /**< K FP8, quantized along D */
  MXQ_ARG_K_SCALES = 43,
  MXQ_ARG_V_DATA = 44,          /**< forward: V FP8 quantized along S_kv; backward: along D */
  MXQ_ARG_V_SCALES = 45,
  MXQ_ARG_O = 46,               /**< O bf16 (forward output, backward input) */
  MXQ_ARG_LSE = 47,             /**< LSE fp32 [B, Hq, Sq] (forward output, backward input) */
  MXQ_ARG_DO_DATA = 48,         /**< backward: dO FP8 quantized along D */
  MXQ_ARG_DO_SCALES = 49,
  MXQ_ARG_DO = 50,              /**< backward: dO bf16 */
  MXQ_ARG_Q_T_DATA = 51,        /**< backward: Q FP8 quantized along S (columnwise) */
  MXQ_ARG_Q_T_SCALES = 52,
  MXQ_ARG_K_T_DATA = 53,        /**< backward: K FP8 quantized along S (columnwise) */
  MXQ_ARG_K_T_SCALES = 54,
  MXQ_ARG_DO_T_DATA = 55,       /**< backward: dO FP8 quantized along S (columnwise) */
  MXQ_ARG_DO_T_SCALES = 56,
  MXQ_ARG_DQ = 57,              /**< backward outputs, bf16, same layout as Q / K / V */
  MXQ_ARG_DK = 58,
  MXQ_ARG_DV = 59,
  MXQ_ARG_CU_SEQLENS_Q = 60,    /**< varlen: int32 [B + 1] cumulative sequence starts */
  MXQ_ARG_CU_SEQLENS_KV = 61
} mxqArgSlot_t;

/** One execution argument. `ptr` is a device pointer (host memory on a CPU handle). */
typedef struct {
  int32_t slot;     /**< an mxqArgSlot_t value */
  int32_t reserved; /**< must be 0 */
  void *ptr;
} mxqExecArg_t;

/* ---------------------------------------------------------------------------------------------- */
/* Version, build info, status, errors                                                              */
/* ---------------------------------------------------------------------------------------------- */

/** Runtime twin of MXQ_VERSION (MAJOR*10000 + MINOR*100 + PATCH). Thread-safe; never fails. */
MXQ_API uint32_t mxqGetVersion(void);

/** Build description: version, git revision, CUDA toolkit version, embedded SM list, compiler.
 *  Returns a static NUL-terminated string owned by the library. Thread-safe; never fails. */
MXQ_API const char *mxqGetBuildInfo(void);

/** Symbolic name of a status ("MXQ_STATUS_BAD_PARAM_SHAPE"); "MXQ_STATUS_UNKNOWN" for unknown codes.
 *  Static string. Thread-safe. */
MXQ_API const char *mxqGetStatusName(mxqStatus_t status);

/** One-sentence description of a status. Static string. Thread-safe. */
MXQ_API const char *mxqGetStatusString(mxqStatus_t status);

/** Detailed message of the last failing mxq call on the calling thread ("" if none). The string is
 *  thread-local, owned by the library, valid until the next failing mxq call on this thread. */
MXQ_API const char *mxqGetLastErrorMessage(void);

/* ---------------------------------------------------------------------------------------------- */
/* Logging                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/** Log levels. Environment: MXQ_LOG_LEVEL (0..5; default 0, silent) and MXQ_LOG_FILE (path; default
 *  stderr) are read when the library first logs; the setters below override them. A failing call
 *  logs its detailed message at ERROR. */
typedef enum {
  MXQ_LOG_OFF = 0,
  MXQ_LOG_ERROR = 1,
  MXQ_LOG_WARN = 2,
  MXQ_LOG_INFO = 3,   /**< plan finalization: which kernel was chosen and why */
  MXQ_LOG_DEBUG = 4,
  MXQ_LOG_TRACE = 5   /**< every API call with its arguments */
} mxqLogLevel_t;

/** Log callback: receives every message at or above the current level, NUL-terminated, without a
 *  trailing newline. May be called from any thread that calls mxq; must not call mxq. */
typedef void (*mxqLogCallback_t)(mxqLogLevel_t level, const char *message, void *userData);

/** Set the log level. \retval MXQ_STATUS_BAD_PARAM_INVALID_VALUE level out of range. Thread-safe. */
MXQ_API mxqStatus_t mxqLoggerSetLevel(mxqLogLevel_t level);

/** Current log level (host out-pointer). \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER level is NULL. */
MXQ_API mxqStatus_t mxqLoggerGetLevel(mxqLogLevel_t *level);

/** Send the log to a file (appended), replacing any previous file; NULL returns to stderr.
 *  \retval MXQ_STATUS_BAD_PARAM_INVALID_VALUE the file cannot be opened. Thread-safe. */
MXQ_API mxqStatus_t mxqLoggerSetFile(const char *path);

/** Install (or with NULL remove) a callback. While a callback is installed, messages go to it
 *  instead of the file / stderr. userData is passed back unchanged. Thread-safe. */
MXQ_API mxqStatus_t mxqLoggerSetCallback(mxqLogCallback_t callback, void *userData);

/* ---------------------------------------------------------------------------------------------- */
/* Handle                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

/** Create a CUDA handle on the current device of the calling thread (device 0 if none is current).
 *  Equivalent to mxqCreateWithBackend(handle, MXQ_BACKEND_CUDA, -1).
 *  \param handle host out-pointer, set on success only.
 *  \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER handle is NULL
 *  \retval MXQ_STATUS_CUDA_DRIVER_NOT_FOUND libcuda.so.1 missing or older than CUDA 12.0
 *  \retval MXQ_STATUS_CUDA_NO_DEVICE no device
 *  \retval MXQ_STATUS_CUDA_ERROR a driver call failed */
MXQ_API mxqStatus_t mxqCreate(mxqHandle_t *handle);

/** Create a handle on a backend. For MXQ_BACKEND_CUDA, deviceOrdinal selects the device (-1: the
 *  calling thread's current device); the handle uses that device's primary context. For
 *  MXQ_BACKEND_CPU, deviceOrdinal must be 0 or -1.
 *  \retval MXQ_STATUS_BAD_PARAM_INVALID_VALUE unknown backend or bad ordinal (CPU)
 *  \retval (as mxqCreate) */
MXQ_API mxqStatus_t mxqCreateWithBackend(mxqHandle_t *handle, mxqBackend_t backend, int deviceOrdinal);

/** Destroy a handle. NULL is accepted and succeeds. Plans created from the handle must be destroyed
 *  first; destroying a handle with live plans returns MXQ_STATUS_BAD_PARAM and keeps the handle. */
MXQ_API mxqStatus_t mxqDestroy(mxqHandle_t handle);

/** Backend of a handle. \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER handle or backend NULL */
MXQ_API mxqStatus_t mxqGetBackend(mxqHandle_t handle, mxqBackend_t *backend);

/** Device ordinal and compute capability (major*10+minor, e.g. 90) of a CUDA handle; a CPU handle
 *  reports ordinal -1 and capability 0. Host out-pointers; either may be NULL. */
MXQ_API mxqStatus_t mxqGetDevice(mxqHandle_t handle, int *deviceOrdinal, int *computeCapability);

/* ---------------------------------------------------------------------------------------------- */
/* Plans: common conventions                                                                        */
/* ---------------------------------------------------------------------------------------------- */
/*
 * For Op in {Quantize, Dequantize, GroupedGemm, Attention}:
 *
 *   mxq<Op>PlanCreate(handle, &plan)
 *       \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER handle or plan NULL
 *   mxq<Op>PlanSetAttribute(plan, attr, buf, sizeInBytes)
 *       buf is a host pointer to a value of the attribute's C type; sizeInBytes must equal its size.
 *       \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER plan or buf NULL
 *       \retval MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE attr not an attribute of this plan type
 *       \retval MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE sizeInBytes wrong
 *       \retval MXQ_STATUS_BAD_PARAM_INVALID_VALUE value outside the attribute's domain
 *       \retval MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED plan is finalized (immutable)
 *   mxq<Op>PlanGetAttribute(plan, attr, buf, sizeInBytes, sizeWritten)
 *       With buf NULL and sizeWritten non-NULL: writes the required size only. Otherwise copies the
 *       value (the effective value after Finalize, e.g. the resolved default softmax scale).
 *       \retval as SetAttribute, except ALREADY_FINALIZED
 *   mxq<Op>PlanFinalize(plan)
 *       Validates the attribute set, selects the kernel (logged at INFO with the reason) and sizes
 *       the workspace. Afterwards the plan is immutable and thread-safe to execute.
 *       \retval MXQ_STATUS_BAD_PARAM_SHAPE / _INVALID_VALUE inconsistent attributes
 *       \retval MXQ_STATUS_NOT_SUPPORTED_* no implementation for this combination on this backend
 *       \retval MXQ_STATUS_NOT_SUPPORTED_ARCH no kernel for the handle's GPU
 *       \retval MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED finalized twice
 *   mxq<Op>PlanGetWorkspaceSize(plan, &bytes)
 *       \retval MXQ_STATUS_BAD_PARAM_NOT_FINALIZED
 *   mxq<Op>Execute(handle, plan, args, numArgs, workspace, workspaceBytes, stream)
 *       args: host array of numArgs (slot, device pointer) pairs; every slot the plan requires must
 *       be present exactly once, optional slots may be absent, slots the plan does not use are an
 *       error. workspace: device memory of at least GetWorkspaceSize bytes, 256-byte aligned (may be
 *       NULL when the size is 0). Validation errors are returned before any work is enqueued, and
 *       nothing is written on failure. Asynchronous on a CUDA handle; synchronous on a CPU handle.
 *       \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER handle, plan, args (numArgs > 0) or a slot's ptr NULL
 *       \retval MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH plan created from another handle
 *       \retval MXQ_STATUS_BAD_PARAM_NOT_FINALIZED
 *       \retval MXQ_STATUS_BAD_PARAM_ARGUMENT missing / duplicate / foreign slot, reserved != 0
 *       \retval MXQ_STATUS_BAD_PARAM_MISALIGNED a pointer below the plan's alignment requirement
 *       \retval MXQ_STATUS_BAD_PARAM_WORKSPACE workspace too small or misaligned
 *       \retval MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS (CPU backend only: offsets are checked on the
 *               host; the CUDA backend cannot read them without synchronizing and clamps them to
 *               [0, rows] as a non-decreasing sequence instead)
 *       \retval MXQ_STATUS_CUDA_ERROR launch failure
 *   mxq<Op>PlanDestroy(plan)   NULL accepted.
 *
 * Alignment: data pointers must be aligned to their element size. The CUDA kernels run fastest with
 * 16-byte aligned pointers and row strides; other alignments take a slower path (quantize,
 * dequantize) or are reported as MXQ_STATUS_BAD_PARAM_MISALIGNED by Execute (GEMM, attention need
 * 16 bytes). Dimensions are int64_t; element counts and byte sizes must fit in int64_t.
 */

/* ---------------------------------------------------------------------------------------------- */
/* Quantize                                                                                         */
/* ---------------------------------------------------------------------------------------------- */
/*
 * Quantizes X [batch, rows, cols] (row stride ld elements) to MXFP8.
 * Slots: MXQ_ARG_X (in); MXQ_ARG_ROWWISE_DATA + _SCALES (out, when ROWWISE);
 *        MXQ_ARG_COLWISE_DATA + _SCALES (out, when COLUMNWISE); MXQ_ARG_GROUP_OFFSETS (in, when
 *        GROUPING_ROWS); MXQ_ARG_AMAX (out, optional); MXQ_ARG_ACTIVATION (out, optional, SWIGLU).
 * Output shapes (docs/LAYOUTS.md; mxqQuantizePlanGetOutputSize gives every byte count):
 *   rowwise data [batch, rows, cols]; columnwise data [batch, cols, rows] when transposed, else
 *   [batch, rows, cols]; scales per the scale layout, swizzled padding written as 0.
 */
typedef enum {
  MXQ_QUANTIZE_ATTR_INPUT_DTYPE = 0,       /**< int32_t mxqDataType_t: BF16 (default), FP16, FP32 */
  MXQ_QUANTIZE_ATTR_OUTPUT_DTYPE = 1,      /**< int32_t mxqDataType_t: E4M3 (default), E5M2 */
  MXQ_QUANTIZE_ATTR_SCALE_MODE = 2,        /**< int32_t mxqScaleMode_t, default RCEIL */
  MXQ_QUANTIZE_ATTR_NONFINITE_POLICY = 3,  /**< int32_t mxqNonfinitePolicy_t, default TE_COMPATIBLE */
  MXQ_QUANTIZE_ATTR_DIRECTION = 4,         /**< int32_t mxqQuantizeDirection_t, default ROWWISE */
  MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED = 5,/**< int32_t bool, default 1: columnwise data [cols, rows] */
  MXQ_QUANTIZE_ATTR_SCALE_LAYOUT = 6,      /**< int32_t mxqScaleLayout_t, default SWIZZLED_128x4 */
  MXQ_QUANTIZE_ATTR_BLOCK_2D = 7,          /**< int32_t bool, default 0: one scale per 32x32 tile,
                                                written as legal 1x32 / 32x1 scales that repeat */
  MXQ_QUANTIZE_ATTR_ROWS = 8,              /**< int64_t, required, > 0 */
  MXQ_QUANTIZE_ATTR_COLS = 9,              /**< int64_t, required, > 0 (after fusion: SwiGLU input
                                                has 2*cols columns) */
  MXQ_QUANTIZE_ATTR_BATCH = 10,            /**< int64_t, default 1: [batch, rows, cols] tensors,
                                                each padded on its own in the swizzled layout */
  MXQ_QUANTIZE_ATTR_INPUT_LD = 11,         /**< int64_t input row stride in elements, default
                                                cols (2*cols with SWIGLU); >= that */
  MXQ_QUANTIZE_ATTR_INPUT_BATCH_STRIDE = 12,/**< int64_t elements between batches, default rows*ld */
  MXQ_QUANTIZE_ATTR_GROUPING = 13,         /**< int32_t mxqGrouping_t, default NONE (needs batch 1) */
  MXQ_QUANTIZE_ATTR_NUM_GROUPS = 14,       /**< int64_t, required with GROUPING_ROWS, >= 1 */
  MXQ_QUANTIZE_ATTR_GROUP_OFFSETS_DTYPE = 15,/**< int32_t mxqDataType_t: INT32 (default), INT64 */
  MXQ_QUANTIZE_ATTR_FUSION = 16            /**< int32_t mxqFusion_t, default NONE */
} mxqQuantizeAttribute_t;

/** Create a quantize plan bound to `handle`. \param plan host out-pointer, set on success; the caller
 *  owns the plan until mxqQuantizePlanDestroy. Thread-safe on a shared handle. Statuses: NULL_POINTER. */
MXQ_API mxqStatus_t mxqQuantizePlanCreate(mxqHandle_t handle, mxqQuantizePlan_t *plan);
/** Set one attribute (`buf`: host pointer to a value of the attribute's C type, `sizeInBytes` its
 *  size). Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE, INVALID_VALUE,
 *  NOT_SUPPORTED_DTYPE, ALREADY_FINALIZED ("Plans: common conventions"). Not thread-safe per plan. */
MXQ_API mxqStatus_t mxqQuantizePlanSetAttribute(mxqQuantizePlan_t plan, mxqQuantizeAttribute_t attr,
                                                const void *buf, size_t sizeInBytes);
/** Read one attribute into host `buf` (NULL with non-NULL `sizeWritten`: size query only); after
 *  Finalize the resolved value. Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE. */
MXQ_API mxqStatus_t mxqQuantizePlanGetAttribute(mxqQuantizePlan_t plan, mxqQuantizeAttribute_t attr,
                                                void *buf, size_t sizeInBytes, size_t *sizeWritten);
/** Validate, select the kernel (logged at INFO with the reason) and size the workspace; the plan is
 *  immutable afterwards. Statuses: SHAPE, INVALID_VALUE, NOT_SUPPORTED_*, ALREADY_FINALIZED. A
 *  failed Finalize leaves the plan unchanged and editable. */
MXQ_API mxqStatus_t mxqQuantizePlanFinalize(mxqQuantizePlan_t plan);
/** Workspace bytes Execute needs (host out-pointer). Statuses: NULL_POINTER, NOT_FINALIZED. */
MXQ_API mxqStatus_t mxqQuantizePlanGetWorkspaceSize(mxqQuantizePlan_t plan, size_t *bytes);
/** Bytes the caller must allocate for an output slot of a finalized plan (data, scales including
 *  swizzle padding and per-group padding upper bounds, amax, activation); 0 for a slot the plan
 *  does not write. \retval MXQ_STATUS_BAD_PARAM_NOT_FINALIZED, _NULL_POINTER */
MXQ_API mxqStatus_t mxqQuantizePlanGetOutputSize(mxqQuantizePlan_t plan, mxqArgSlot_t slot, size_t *bytes);
/** Run the finalized plan on (slot, device pointer) `args` with a device `workspace` (256-byte aligned,
 *  >= GetWorkspaceSize; NULL when that is 0) on `stream`; asynchronous on a CUDA handle, synchronous
 *  on a CPU handle; never allocates or synchronizes. Thread-safe: one plan may run concurrently on
 *  several streams with separate workspaces. Statuses: NULL_POINTER, HANDLE_MISMATCH,
 *  NOT_FINALIZED, ARGUMENT, MISALIGNED, WORKSPACE, GROUP_OFFSETS (CPU), CUDA_ERROR; nothing is
 *  written on a validation failure. */
MXQ_API mxqStatus_t mxqQuantizeExecute(mxqHandle_t handle, mxqQuantizePlan_t plan, const mxqExecArg_t *args,
                                       int numArgs, void *workspace, size_t workspaceBytes,
                                       mxqStream_t stream);
/** Destroy a plan (NULL accepted). Must not race with the plan's executions. */
MXQ_API mxqStatus_t mxqQuantizePlanDestroy(mxqQuantizePlan_t plan);

/* ---------------------------------------------------------------------------------------------- */
/* Dequantize                                                                                       */
/* ---------------------------------------------------------------------------------------------- */
/*
 * The inverse of Quantize: reads one orientation's data + scales (as Quantize wrote them for the
 * same ROWS/COLS/BATCH/GROUPING attributes) and writes X [batch, rows, cols] (row stride
 * OUTPUT_LD) in the output dtype: x = fp8(q) * 2^(E-127) in fp32, then RNE to the output type.
 * Slots: MXQ_ARG_ROWWISE_DATA/_SCALES or MXQ_ARG_COLWISE_DATA/_SCALES (in, per DIRECTION);
 *        MXQ_ARG_GROUP_OFFSETS (in, GROUPING_ROWS); MXQ_ARG_X (out).
 */
typedef enum {
  MXQ_DEQUANTIZE_ATTR_INPUT_DTYPE = 0,     /**< int32_t: E4M3 (default), E5M2 */
  MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE = 1,    /**< int32_t: BF16 (default), FP16, FP32 */
  MXQ_DEQUANTIZE_ATTR_DIRECTION = 2,       /**< int32_t: ROWWISE (default) or COLUMNWISE */
  MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED = 3,/**< int32_t bool, default 1 */
  MXQ_DEQUANTIZE_ATTR_SCALE_LAYOUT = 4,    /**< int32_t mxqScaleLayout_t, default SWIZZLED_128x4 */
  MXQ_DEQUANTIZE_ATTR_ROWS = 5,            /**< int64_t, required */
  MXQ_DEQUANTIZE_ATTR_COLS = 6,            /**< int64_t, required */
  MXQ_DEQUANTIZE_ATTR_BATCH = 7,           /**< int64_t, default 1 */
  MXQ_DEQUANTIZE_ATTR_OUTPUT_LD = 8,       /**< int64_t, default cols */
  MXQ_DEQUANTIZE_ATTR_GROUPING = 9,        /**< int32_t mxqGrouping_t, default NONE */
  MXQ_DEQUANTIZE_ATTR_NUM_GROUPS = 10,     /**< int64_t */
  MXQ_DEQUANTIZE_ATTR_GROUP_OFFSETS_DTYPE = 11 /**< int32_t: INT32 (default), INT64 */
} mxqDequantizeAttribute_t;

/** Create a dequantize plan bound to `handle`. \param plan host out-pointer, set on success; the caller
 *  owns the plan until mxqDequantizePlanDestroy. Thread-safe on a shared handle. Statuses: NULL_POINTER. */
MXQ_API mxqStatus_t mxqDequantizePlanCreate(mxqHandle_t handle, mxqDequantizePlan_t *plan);
/** Set one attribute (`buf`: host pointer to a value of the attribute's C type, `sizeInBytes` its
 *  size). Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE, INVALID_VALUE,
 *  NOT_SUPPORTED_DTYPE, ALREADY_FINALIZED ("Plans: common conventions"). Not thread-safe per plan. */
MXQ_API mxqStatus_t mxqDequantizePlanSetAttribute(mxqDequantizePlan_t plan, mxqDequantizeAttribute_t attr,
                                                  const void *buf, size_t sizeInBytes);
/** Read one attribute into host `buf` (NULL with non-NULL `sizeWritten`: size query only); after
 *  Finalize the resolved value. Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE. */
MXQ_API mxqStatus_t mxqDequantizePlanGetAttribute(mxqDequantizePlan_t plan, mxqDequantizeAttribute_t attr,
                                                  void *buf, size_t sizeInBytes, size_t *sizeWritten);
/** Validate, select the kernel (logged at INFO with the reason) and size the workspace; the plan is
 *  immutable afterwards. Statuses: SHAPE, INVALID_VALUE, NOT_SUPPORTED_*, ALREADY_FINALIZED. A
 *  failed Finalize leaves the plan unchanged and editable. */
MXQ_API mxqStatus_t mxqDequantizePlanFinalize(mxqDequantizePlan_t plan);
/** Workspace bytes Execute needs (host out-pointer). Statuses: NULL_POINTER, NOT_FINALIZED. */
MXQ_API mxqStatus_t mxqDequantizePlanGetWorkspaceSize(mxqDequantizePlan_t plan, size_t *bytes);
/** Run the finalized plan on (slot, device pointer) `args` with a device `workspace` (256-byte aligned,
 *  >= GetWorkspaceSize; NULL when that is 0) on `stream`; asynchronous on a CUDA handle, synchronous
 *  on a CPU handle; never allocates or synchronizes. Thread-safe: one plan may run concurrently on
 *  several streams with separate workspaces. Statuses: NULL_POINTER, HANDLE_MISMATCH,
 *  NOT_FINALIZED, ARGUMENT, MISALIGNED, WORKSPACE, GROUP_OFFSETS (CPU), CUDA_ERROR; nothing is
 *  written on a validation failure. */
MXQ_API mxqStatus_t mxqDequantizeExecute(mxqHandle_t handle, mxqDequantizePlan_t plan, const mxqExecArg_t *args,
                                         int numArgs, void *workspace, size_t workspaceBytes,
                                         mxqStream_t stream);
/** Destroy a plan (NULL accepted). Must not race with the plan's executions. */
MXQ_API mxqStatus_t mxqDequantizePlanDestroy(mxqDequantizePlan_t plan);

/* ---------------------------------------------------------------------------------------------- */
/* Grouped GEMM                                                                                     */
/* ---------------------------------------------------------------------------------------------- */
/*
 * D = alpha * A * B^T (+ D when ACCUMULATE), FP32 accumulation, operands MXFP8 with 1x32 UE8M0
 * scales along the contraction axis, scales in the layout the quantizer writes.
 *   GROUPING NONE (dense, batched): A [batch, M, K], B [batch, N, K], D [batch, M, N].
 *   M_GROUPED (fprop / dgrad): A [M, K] rows of group g in [o_{g-1}, o_g); B [G, N, K];
 *       D [M, N]; D[rows of g] = alpha * A[rows of g] * B[g]^T. A's scales use the row-grouped
 *       layout (per-group padding to 128 rows when swizzled).
 *   K_GROUPED (wgrad): A [M, K], B [N, K] with the contraction axis K (tokens) split into groups
 *       [o_{g-1}, o_g); 32-blocks restart at each group (the quantizer's columnwise output with
 *       GROUPING_ROWS); D [G, M, N]; D[g] = alpha * A[:, tokens of g] * B[:, tokens of g]^T.
 *       An empty group writes alpha * 0 (or leaves D[g] unchanged when accumulating).
 * Slots: MXQ_ARG_A_DATA, _A_SCALES, _B_DATA, _B_SCALES (in), MXQ_ARG_D (in/out),
 *        MXQ_ARG_GROUP_OFFSETS (in, grouped).
 */
typedef enum {
  MXQ_GEMM_GROUPING_NONE = 0,
  MXQ_GEMM_GROUPING_M = 1,
  MXQ_GEMM_GROUPING_K = 2
} mxqGemmGrouping_t;

typedef enum {
  MXQ_GEMM_ATTR_GROUPING = 0,          /**< int32_t mxqGemmGrouping_t, default NONE */
  MXQ_GEMM_ATTR_M = 1,                 /**< int64_t, required (total rows when M_GROUPED) */
  MXQ_GEMM_ATTR_N = 2,                 /**< int64_t, required */
  MXQ_GEMM_ATTR_K = 3,                 /**< int64_t, required (total tokens when K_GROUPED) */
  MXQ_GEMM_ATTR_NUM_GROUPS = 4,        /**< int64_t, required when grouped, >= 1 */
  MXQ_GEMM_ATTR_BATCH = 5,             /**< int64_t, default 1 (GROUPING_NONE only) */
  MXQ_GEMM_ATTR_A_DTYPE = 6,           /**< int32_t: E4M3 (default), E5M2 */
  MXQ_GEMM_ATTR_B_DTYPE = 7,           /**< int32_t: E4M3 (default), E5M2 (not both E5M2) */
  MXQ_GEMM_ATTR_D_DTYPE = 8,           /**< int32_t: BF16 (default), FP32 */
  MXQ_GEMM_ATTR_SCALE_LAYOUT = 9,      /**< int32_t mxqScaleLayout_t, both operands, default SWIZZLED */
  MXQ_GEMM_ATTR_ALPHA = 10,            /**< float, default 1.0 */
  MXQ_GEMM_ATTR_ACCUMULATE = 11,       /**< int32_t bool, default 0: D = alpha*AB^T; 1: D += alpha*AB^T */
  MXQ_GEMM_ATTR_GROUP_OFFSETS_DTYPE = 12, /**< int32_t: INT32 (default), INT64 */
  MXQ_GEMM_ATTR_B_BLOCK_2D = 13,       /**< int32_t bool, default 0: B was quantized in 32x32
                                            blocks (MXQ_QUANTIZE_ATTR_BLOCK_2D): in B's 1x32 scale
                                            tensor every 32-row block of N (rows 32i..32i+31 of
                                            each group) repeats one scale per K block. On sm_90
                                            M-grouped and dense plans then run FP8 wgmma with one
                                            FFMA per element and 32-block, reading B's scale from
                                            row 32i only; K-grouped plans run the FP8-wgmma kernel
                                            with per-element scales. A caller's contract: with
                                            scales that differ inside a 32-row block the result
                                            is wrong (no memory outside the tensors is read) */
  MXQ_GEMM_ATTR_WORKSPACE_LIMIT = 14   /**< int64_t bytes >= 0, default INT64_MAX (no limit): the most
                                            workspace Finalize may plan for. On sm_90 the fastest
                                            path for tall groups dequantizes B once into the
                                            workspace (about G x N x K x 2 bytes); under a smaller
                                            limit B is converted inside the GEMM instead (slower,
                                            no workspace) */
} mxqGroupedGemmAttribute_t;

/** Create a grouped-GEMM plan bound to `handle`. \param plan host out-pointer, set on success; the caller
 *  owns the plan until mxqGroupedGemmPlanDestroy. Thread-safe on a shared handle. Statuses: NULL_POINTER. */
MXQ_API mxqStatus_t mxqGroupedGemmPlanCreate(mxqHandle_t handle, mxqGroupedGemmPlan_t *plan);
/** Set one attribute (`buf`: host pointer to a value of the attribute's C type, `sizeInBytes` its
 *  size). Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE, INVALID_VALUE,
 *  NOT_SUPPORTED_DTYPE, ALREADY_FINALIZED ("Plans: common conventions"). Not thread-safe per plan. */
MXQ_API mxqStatus_t mxqGroupedGemmPlanSetAttribute(mxqGroupedGemmPlan_t plan, mxqGroupedGemmAttribute_t attr,
                                                   const void *buf, size_t sizeInBytes);
/** Read one attribute into host `buf` (NULL with non-NULL `sizeWritten`: size query only); after
 *  Finalize the resolved value. Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE. */
MXQ_API mxqStatus_t mxqGroupedGemmPlanGetAttribute(mxqGroupedGemmPlan_t plan, mxqGroupedGemmAttribute_t attr,
                                                   void *buf, size_t sizeInBytes, size_t *sizeWritten);
/** Validate, select the kernel (logged at INFO with the reason) and size the workspace; the plan is
 *  immutable afterwards. Statuses: SHAPE, INVALID_VALUE, NOT_SUPPORTED_*, ALREADY_FINALIZED. A
 *  failed Finalize leaves the plan unchanged and editable. */
MXQ_API mxqStatus_t mxqGroupedGemmPlanFinalize(mxqGroupedGemmPlan_t plan);
/** Workspace bytes Execute needs (host out-pointer). Statuses: NULL_POINTER, NOT_FINALIZED. */
MXQ_API mxqStatus_t mxqGroupedGemmPlanGetWorkspaceSize(mxqGroupedGemmPlan_t plan, size_t *bytes);
/** Run the finalized plan on (slot, device pointer) `args` with a device `workspace` (256-byte aligned,
 *  >= GetWorkspaceSize; NULL when that is 0) on `stream`; asynchronous on a CUDA handle, synchronous
 *  on a CPU handle; never allocates or synchronizes. Thread-safe: one plan may run concurrently on
 *  several streams with separate workspaces. Statuses: NULL_POINTER, HANDLE_MISMATCH,
 *  NOT_FINALIZED, ARGUMENT, MISALIGNED, WORKSPACE, GROUP_OFFSETS (CPU), CUDA_ERROR; nothing is
 *  written on a validation failure. */
MXQ_API mxqStatus_t mxqGroupedGemmExecute(mxqHandle_t handle, mxqGroupedGemmPlan_t plan, const mxqExecArg_t *args,
                                          int numArgs, void *workspace, size_t workspaceBytes,
                                          mxqStream_t stream);
/** Destroy a plan (NULL accepted). Must not race with the plan's executions. */
MXQ_API mxqStatus_t mxqGroupedGemmPlanDestroy(mxqGroupedGemmPlan_t plan);

/* ---------------------------------------------------------------------------------------------- */
/* Attention                                                                                        */
/* ---------------------------------------------------------------------------------------------- */
/*
 * MXFP8 scaled-dot-product attention, cuDNN's recipe (docs/NUMERICS.md). Q [B, Hq, Sq, D],
 * K and V [B, Hkv, Skv, D] (BHSD) or [B, S, H, D] (BSHD); Hq a multiple of Hkv (GQA / MQA).
 * Scale tensors: a tensor quantized along D has the rowwise scales of its data seen as 2D
 * [rows, D] in memory order. A tensor quantized along S has, for each (b, h), the columnwise scales
 * of the [S, D] matrix: batched [B*H] columnwise scales (r := d, c := s/32), data not transposed.
 * Forward slots: Q_DATA/_SCALES, K_DATA/_SCALES, V_DATA/_SCALES (V along S) in; O (bf16), LSE out.
 * Backward slots: Q, K (along D), Q_T, K_T (along S), V (along D), DO_DATA (along D), DO_T (along S),
 *   DO and O (bf16), LSE in; DQ, DK, DV (bf16) out.
 * Varlen: with VARLEN set, B sequences are packed along S (BSHD with B = 1 in memory; Sq/Skv are the
 * maxima) and MXQ_ARG_CU_SEQLENS_Q / _KV (int32 [B + 1]) give the starts. Scales along S then
 * restart at each sequence start, each (b, h) owning ceil(S_max/32) scale columns; LSE is
 * [B, Hq, Sq_max] and entries past a sequence are not touched (docs/NUMERICS.md, "Attention").
 * Alignment (CUDA backend, forward): FP8 data 16 bytes; K and V scales in SWIZZLED_128x4 4 bytes
 * (whole words are read), other scales 1; O, LSE and the cu_seqlens 4 bytes; else Execute returns
 * MISALIGNED.
 */
typedef enum {
  MXQ_ATTN_LAYOUT_BHSD = 0,
  MXQ_ATTN_LAYOUT_BSHD = 1
} mxqAttentionLayout_t;

typedef enum {
  MXQ_ATTN_MASK_NONE = 0,
  MXQ_ATTN_MASK_CAUSAL_TOP_LEFT = 1,     /**< key j visible to query i iff j <= i */
  MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT = 2  /**< iff j <= i + Skv - Sq */
} mxqAttentionMask_t;

typedef enum {
  MXQ_ATTN_FORWARD = 0,
  MXQ_ATTN_BACKWARD = 1
} mxqAttentionDirection_t;

typedef enum {
  MXQ_ATTN_ATTR_DIRECTION = 0,        /**< int32_t mxqAttentionDirection_t, default FORWARD */
  MXQ_ATTN_ATTR_BATCH = 1,            /**< int64_t B, required */
  MXQ_ATTN_ATTR_HEADS_Q = 2,          /**< int64_t Hq, required */
  MXQ_ATTN_ATTR_HEADS_KV = 3,         /**< int64_t Hkv, default Hq; must divide Hq */
  MXQ_ATTN_ATTR_SEQLEN_Q = 4,         /**< int64_t Sq, required */
  MXQ_ATTN_ATTR_SEQLEN_KV = 5,        /**< int64_t Skv, required */
  MXQ_ATTN_ATTR_HEAD_DIM = 6,         /**< int64_t D, required */
  MXQ_ATTN_ATTR_LAYOUT = 7,           /**< int32_t mxqAttentionLayout_t, default BHSD */
  MXQ_ATTN_ATTR_MASK = 8,             /**< int32_t mxqAttentionMask_t, default NONE */
  MXQ_ATTN_ATTR_SOFTMAX_SCALE = 9,    /**< float, default 1/sqrt(D) (Get after Finalize: resolved) */
  MXQ_ATTN_ATTR_P_SCALE = 10,         /**< float, default 256: P is quantized as fp8(P*s)/s */
  MXQ_ATTN_ATTR_SCALE_LAYOUT = 11,    /**< int32_t mxqScaleLayout_t, default SWIZZLED_128x4 */
  MXQ_ATTN_ATTR_VARLEN = 12,          /**< int32_t bool, default 0 */
  MXQ_ATTN_ATTR_DETERMINISTIC = 13,   /**< int32_t bool, default 0 (backward) */
  MXQ_ATTN_ATTR_QKV_DTYPE = 14        /**< int32_t: E4M3 (default) */
} mxqAttentionAttribute_t;

/** Create an attention plan bound to `handle`. \param plan host out-pointer, set on success; the caller
 *  owns the plan until mxqAttentionPlanDestroy. Thread-safe on a shared handle. Statuses: NULL_POINTER. */
MXQ_API mxqStatus_t mxqAttentionPlanCreate(mxqHandle_t handle, mxqAttentionPlan_t *plan);
/** Set one attribute (`buf`: host pointer to a value of the attribute's C type, `sizeInBytes` its
 *  size). Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE, INVALID_VALUE,
 *  NOT_SUPPORTED_DTYPE, ALREADY_FINALIZED ("Plans: common conventions"). Not thread-safe per plan. */
MXQ_API mxqStatus_t mxqAttentionPlanSetAttribute(mxqAttentionPlan_t plan, mxqAttentionAttribute_t attr,
                                                 const void *buf, size_t sizeInBytes);
/** Read one attribute into host `buf` (NULL with non-NULL `sizeWritten`: size query only); after
 *  Finalize the resolved value. Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE. */
MXQ_API mxqStatus_t mxqAttentionPlanGetAttribute(mxqAttentionPlan_t plan, mxqAttentionAttribute_t attr,
                                                 void *buf, size_t sizeInBytes, size_t *sizeWritten);
/** Validate, select the kernel (logged at INFO with the reason) and size the workspace; the plan is
 *  immutable afterwards. Statuses: SHAPE, INVALID_VALUE, NOT_SUPPORTED_*, ALREADY_FINALIZED. A
 *  failed Finalize leaves the plan unchanged and editable. */
MXQ_API mxqStatus_t mxqAttentionPlanFinalize(mxqAttentionPlan_t plan);
/** Workspace bytes Execute needs (host out-pointer). Statuses: NULL_POINTER, NOT_FINALIZED. */
MXQ_API mxqStatus_t mxqAttentionPlanGetWorkspaceSize(mxqAttentionPlan_t plan, size_t *bytes);
/** Run the finalized plan on (slot, device pointer) `args` with a device `workspace` (256-byte aligned,
 *  >= GetWorkspaceSize; NULL when that is 0) on `stream`; asynchronous on a CUDA handle, synchronous
 *  on a CPU handle; never allocates or synchronizes. Thread-safe: one plan may run concurrently on
 *  several streams with separate workspaces. Statuses: NULL_POINTER, HANDLE_MISMATCH,
 *  NOT_FINALIZED, ARGUMENT, MISALIGNED, WORKSPACE, GROUP_OFFSETS (CPU), CUDA_ERROR; nothing is
 *  written on a validation failure. */
MXQ_API mxqStatus_t mxqAttentionExecute(mxqHandle_t handle, mxqAttentionPlan_t plan, const mxqExecArg_t *args,
                                        int numArgs, void *workspace, size_t workspaceBytes,
                                        mxqStream_t stream);
/** Destroy a plan (NULL accepted). Must not race with the plan's executions. */
MXQ_API mxqStatus_t mxqAttentionPlanDestroy(mxqAttentionPlan_t plan);

/* ---------------------------------------------------------------------------------------------- */
/* Standalone scale swizzle                                                                         */
/* ---------------------------------------------------------------------------------------------- */

/** Convert UE8M0 scales of a [batch, rows, scaleCols] tensor between LINEAR (row stride linearLd
 *  bytes, >= scaleCols) and SWIZZLED_128x4 (each batch padded on its own; padding written 0).
 *  toSwizzled != 0: src LINEAR -> dst SWIZZLED; 0: src SWIZZLED -> dst LINEAR. Device pointers,
 *  enqueued on stream (synchronous on a CPU handle). src and dst must not overlap.
 *  \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER, _SHAPE (a dimension <= 0, linearLd < scaleCols) */
MXQ_API mxqStatus_t mxqSwizzleScales(mxqHandle_t handle, int toSwizzled, int64_t batch, int64_t rows,
                                     int64_t scaleCols, int64_t linearLd, const void *src, void *dst,
                                     mxqStream_t stream);

/** Bytes of a SWIZZLED_128x4 scale tensor [batch, rows, scaleCols]:
 *  batch * round_up(rows,128) * round_up(scaleCols,4). Returns 0 on overflow or a dimension <= 0. */
MXQ_API size_t mxqSwizzledScaleBytes(int64_t batch, int64_t rows, int64_t scaleCols);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MXQ_MXQ_H_ */
