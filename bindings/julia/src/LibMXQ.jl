# LibMXQ.jl: GENERATED from include/mxq/mxq.h by tools/gen_julia_bindings.py. Do not edit;
# regenerate with `python3 tools/gen_julia_bindings.py` (CI fails when this file is stale).
# One declaration per C declaration, same names; `libmxq` is defined by the including module.

# CUDA stream; ABI-identical to cudaStream_t / CUstream. NULL is the legacy default stream.
# Ignored by the CPU backend (execution is synchronous there).
mutable struct CUstream_st end
const mxqStream_t = Ptr{CUstream_st}

# Opaque handles.
mutable struct mxqContext end
const mxqHandle_t = Ptr{mxqContext}

mutable struct mxqQuantizePlan end
const mxqQuantizePlan_t = Ptr{mxqQuantizePlan}

mutable struct mxqDequantizePlan end
const mxqDequantizePlan_t = Ptr{mxqDequantizePlan}

mutable struct mxqGroupedGemmPlan end
const mxqGroupedGemmPlan_t = Ptr{mxqGroupedGemmPlan}

mutable struct mxqAttentionPlan end
const mxqAttentionPlan_t = Ptr{mxqAttentionPlan}

# Status codes. Values are part of the ABI and are never renumbered; new codes are only added.
# Categories: 1xxx bad parameter (the caller's mistake), 2xxx not supported (valid but not
# implemented for this combination / device), 3xxx internal, 4xxx CUDA driver / execution.
# Callers should treat an unknown code by its category (code / 1000).
const mxqStatus_t = Cint
const MXQ_STATUS_SUCCESS = mxqStatus_t(0)
const MXQ_STATUS_BAD_PARAM = mxqStatus_t(1000)  # generic invalid argument
const MXQ_STATUS_BAD_PARAM_NULL_POINTER = mxqStatus_t(1001)  # a required pointer is NULL
const MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE = mxqStatus_t(1002)  # attribute id not known to this plan type
const MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE = mxqStatus_t(1003)  # sizeInBytes does not match the attribute's C type
const MXQ_STATUS_BAD_PARAM_INVALID_VALUE = mxqStatus_t(1004)  # an attribute or enum value is out of its range
const MXQ_STATUS_BAD_PARAM_SHAPE = mxqStatus_t(1005)  # zero/negative/overflowing/inconsistent dimensions
const MXQ_STATUS_BAD_PARAM_MISALIGNED = mxqStatus_t(1006)  # a pointer lacks the alignment the plan requires
const MXQ_STATUS_BAD_PARAM_WORKSPACE = mxqStatus_t(1007)  # workspace smaller than GetWorkspaceSize, or NULL
const MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS = mxqStatus_t(1008)  # group offsets decrease, are negative or overrun
const MXQ_STATUS_BAD_PARAM_ARGUMENT = mxqStatus_t(1009)  # missing, duplicate or unknown execution argument
const MXQ_STATUS_BAD_PARAM_NOT_FINALIZED = mxqStatus_t(1010)  # execute / workspace query before Finalize
const MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED = mxqStatus_t(1011)  # SetAttribute or Finalize on a finalized plan
const MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH = mxqStatus_t(1012)  # plan executed with a handle other than its own
const MXQ_STATUS_NOT_SUPPORTED = mxqStatus_t(2000)  # generic: valid request, not implemented
const MXQ_STATUS_NOT_SUPPORTED_DTYPE = mxqStatus_t(2001)  # data type (combination) not supported
const MXQ_STATUS_NOT_SUPPORTED_ARCH = mxqStatus_t(2002)  # no kernel for this GPU architecture
const MXQ_STATUS_NOT_SUPPORTED_COMBINATION = mxqStatus_t(2003)  # attributes valid alone, not together
const MXQ_STATUS_NOT_SUPPORTED_BACKEND = mxqStatus_t(2004)  # backend not available in this build
const MXQ_STATUS_INTERNAL_ERROR = mxqStatus_t(3000)  # a bug in mxq; please report
const MXQ_STATUS_ALLOC_FAILED = mxqStatus_t(3001)  # host memory allocation failed
const MXQ_STATUS_CUDA_DRIVER_NOT_FOUND = mxqStatus_t(4000)  # libcuda.so.1 could not be loaded / is too old
const MXQ_STATUS_CUDA_NO_DEVICE = mxqStatus_t(4001)  # no CUDA device, or the ordinal is out of range
const MXQ_STATUS_CUDA_ERROR = mxqStatus_t(4002)  # a CUDA driver call failed (message has details)
const MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED = mxqStatus_t(4003)  # the embedded kernel image did not load

# Data types.
const mxqDataType_t = Cint
const MXQ_DTYPE_FP32 = mxqDataType_t(0)
const MXQ_DTYPE_FP16 = mxqDataType_t(1)
const MXQ_DTYPE_BF16 = mxqDataType_t(2)
const MXQ_DTYPE_E4M3 = mxqDataType_t(3)  # FP8 E4M3 (OCP "fn": max 448, no Inf, NaN = S.1111.111)
const MXQ_DTYPE_E5M2 = mxqDataType_t(4)  # FP8 E5M2 (max 57344, IEEE-like Inf/NaN)
const MXQ_DTYPE_UE8M0 = mxqDataType_t(5)  # unsigned 8-bit exponent scale, value 2^(E-127), 0xFF = NaN
const MXQ_DTYPE_INT32 = mxqDataType_t(6)
const MXQ_DTYPE_INT64 = mxqDataType_t(7)

# Backends.
const mxqBackend_t = Cint
const MXQ_BACKEND_CUDA = mxqBackend_t(0)  # NVIDIA GPU through the CUDA driver API (loaded at handle creation)
const MXQ_BACKEND_CPU = mxqBackend_t(1)  # CPU reference backend: every operation, host memory, synchronous

# How the UE8M0 scale of a 32-block is derived from its absolute maximum (docs/NUMERICS.md).
const mxqScaleMode_t = Cint
const MXQ_SCALE_MODE_RCEIL = mxqScaleMode_t(0)  # default: scale rounded up so nothing saturates (TE, cuBLAS, cuDNN)
const MXQ_SCALE_MODE_FLOOR = mxqScaleMode_t(1)  # OCP MX v1.0: 2^(floor(log2 amax) - emax); elements may saturate
const MXQ_SCALE_MODE_CEIL = mxqScaleMode_t(2)  # 2^(ceil(log2 amax) - emax)
const MXQ_SCALE_MODE_EVEN = mxqScaleMode_t(3)  # amax rounded to the element mantissa first, then FLOOR

# What non-finite inputs do (docs/NUMERICS.md). A NaN never becomes a finite number silently.
const mxqNonfinitePolicy_t = Cint
const MXQ_NONFINITE_TE_COMPATIBLE = mxqNonfinitePolicy_t(0)  # default: NaN ignored by the block max and stored as NaN
const MXQ_NONFINITE_PROPAGATE = mxqNonfinitePolicy_t(1)  # OCP: any NaN/Inf in a block gives scale 0xFF (NaN)

# Scale tensor layouts (docs/LAYOUTS.md).
const mxqScaleLayout_t = Cint
const MXQ_SCALE_LAYOUT_SWIZZLED_128x4 = mxqScaleLayout_t(0)  # default: what block-scaled tensor cores read (cuBLASLt
const MXQ_SCALE_LAYOUT_LINEAR = mxqScaleLayout_t(1)  # row-major [rows, ceil(K/32)]

# Quantization orientation (bit mask).
const mxqQuantizeDirection_t = Cint
const MXQ_QUANTIZE_ROWWISE = mxqQuantizeDirection_t(1)  # 1x32 blocks along the contiguous axis K; data keeps [R, K]
const MXQ_QUANTIZE_COLUMNWISE = mxqQuantizeDirection_t(2)  # 32x1 blocks along R; data [K, R] when transposed (default)
const MXQ_QUANTIZE_BOTH = mxqQuantizeDirection_t(3)  # both outputs from one read of the input

# Grouping of the rows of a quantized tensor (MoE).
const mxqGrouping_t = Cint
const MXQ_GROUPING_NONE = mxqGrouping_t(0)
const MXQ_GROUPING_ROWS = mxqGrouping_t(1)

# Fused prologue of the quantizer.
const mxqFusion_t = Cint
const MXQ_FUSION_NONE = mxqFusion_t(0)
const MXQ_FUSION_SWIGLU = mxqFusion_t(1)

# Execution argument slots. A plan documents which slots it reads and writes.
const mxqArgSlot_t = Cint
const MXQ_ARG_X = mxqArgSlot_t(1)  # high-precision tensor: quantize input, dequantize output
const MXQ_ARG_ROWWISE_DATA = mxqArgSlot_t(2)  # FP8 data, rowwise
const MXQ_ARG_ROWWISE_SCALES = mxqArgSlot_t(3)  # UE8M0 scales of the rowwise data
const MXQ_ARG_COLWISE_DATA = mxqArgSlot_t(4)  # FP8 data, columnwise
const MXQ_ARG_COLWISE_SCALES = mxqArgSlot_t(5)  # UE8M0 scales of the columnwise data
const MXQ_ARG_GROUP_OFFSETS = mxqArgSlot_t(6)  # int32 or int64 group end offsets [G]
const MXQ_ARG_AMAX = mxqArgSlot_t(7)  # optional fp32 [1]: global max |x| of the quantized tensor
const MXQ_ARG_ACTIVATION = mxqArgSlot_t(8)  # optional output of a fused prologue (SwiGLU), input dtype
const MXQ_ARG_A_DATA = mxqArgSlot_t(20)
const MXQ_ARG_A_SCALES = mxqArgSlot_t(21)
const MXQ_ARG_B_DATA = mxqArgSlot_t(22)
const MXQ_ARG_B_SCALES = mxqArgSlot_t(23)
const MXQ_ARG_D = mxqArgSlot_t(24)
const MXQ_ARG_Q_DATA = mxqArgSlot_t(40)  # Q FP8, quantized along D
const MXQ_ARG_Q_SCALES = mxqArgSlot_t(41)
const MXQ_ARG_K_DATA = mxqArgSlot_t(42)  # K FP8, quantized along D
const MXQ_ARG_K_SCALES = mxqArgSlot_t(43)
const MXQ_ARG_V_DATA = mxqArgSlot_t(44)  # forward: V FP8 quantized along S_kv; backward: along D
const MXQ_ARG_V_SCALES = mxqArgSlot_t(45)
const MXQ_ARG_O = mxqArgSlot_t(46)  # O bf16 (forward output, backward input)
const MXQ_ARG_LSE = mxqArgSlot_t(47)  # LSE fp32 [B, Hq, Sq] (forward output, backward input)
const MXQ_ARG_DO_DATA = mxqArgSlot_t(48)  # backward: dO FP8 quantized along D
const MXQ_ARG_DO_SCALES = mxqArgSlot_t(49)
const MXQ_ARG_DO = mxqArgSlot_t(50)  # backward: dO bf16
const MXQ_ARG_Q_T_DATA = mxqArgSlot_t(51)  # backward: Q FP8 quantized along S (columnwise)
const MXQ_ARG_Q_T_SCALES = mxqArgSlot_t(52)
const MXQ_ARG_K_T_DATA = mxqArgSlot_t(53)  # backward: K FP8 quantized along S (columnwise)
const MXQ_ARG_K_T_SCALES = mxqArgSlot_t(54)
const MXQ_ARG_DO_T_DATA = mxqArgSlot_t(55)  # backward: dO FP8 quantized along S (columnwise)
const MXQ_ARG_DO_T_SCALES = mxqArgSlot_t(56)
const MXQ_ARG_DQ = mxqArgSlot_t(57)  # backward outputs, bf16, same layout as Q / K / V
const MXQ_ARG_DK = mxqArgSlot_t(58)
const MXQ_ARG_DV = mxqArgSlot_t(59)
const MXQ_ARG_CU_SEQLENS_Q = mxqArgSlot_t(60)  # varlen: int32 [B + 1] cumulative sequence starts
const MXQ_ARG_CU_SEQLENS_KV = mxqArgSlot_t(61)

# One execution argument. `ptr` is a device pointer (host memory on a CPU handle).
struct mxqExecArg_t
    slot::Int32
    reserved::Int32
    ptr::Ptr{Cvoid}
end

# Runtime twin of MXQ_VERSION (MAJOR*10000 + MINOR*100 + PATCH). Thread-safe; never fails.
function mxqGetVersion()
    @ccall libmxq.mxqGetVersion()::UInt32
end

# Build description: version, git revision, CUDA toolkit version, embedded SM list, compiler.
# Returns a static NUL-terminated string owned by the library. Thread-safe; never fails.
function mxqGetBuildInfo()
    @ccall libmxq.mxqGetBuildInfo()::Ptr{Cchar}
end

# Symbolic name of a status ("MXQ_STATUS_BAD_PARAM_SHAPE"); "MXQ_STATUS_UNKNOWN" for unknown codes.
# Static string. Thread-safe.
function mxqGetStatusName(status)
    @ccall libmxq.mxqGetStatusName(status::mxqStatus_t)::Ptr{Cchar}
end

# One-sentence description of a status. Static string. Thread-safe.
function mxqGetStatusString(status)
    @ccall libmxq.mxqGetStatusString(status::mxqStatus_t)::Ptr{Cchar}
end

# Detailed message of the last failing mxq call on the calling thread ("" if none). The string is
# thread-local, owned by the library, valid until the next failing mxq call on this thread.
function mxqGetLastErrorMessage()
    @ccall libmxq.mxqGetLastErrorMessage()::Ptr{Cchar}
end

# Log levels. Environment: MXQ_LOG_LEVEL (0..5; default 0, silent) and MXQ_LOG_FILE (path; default
# stderr) are read when the library first logs; the setters below override them. A failing call
# logs its detailed message at ERROR.
const mxqLogLevel_t = Cint
const MXQ_LOG_OFF = mxqLogLevel_t(0)
const MXQ_LOG_ERROR = mxqLogLevel_t(1)
const MXQ_LOG_WARN = mxqLogLevel_t(2)
const MXQ_LOG_INFO = mxqLogLevel_t(3)  # plan finalization: which kernel was chosen and why
const MXQ_LOG_DEBUG = mxqLogLevel_t(4)
const MXQ_LOG_TRACE = mxqLogLevel_t(5)  # every API call with its arguments

# Log callback: receives every message at or above the current level, NUL-terminated, without a
# trailing newline. May be called from any thread that calls mxq; must not call mxq.
# C signature: (level::mxqLogLevel_t, message::Ptr{Cchar}, userData::Ptr{Cvoid}) -> Cvoid; make one with @cfunction.
const mxqLogCallback_t = Ptr{Cvoid}

# Set the log level. \retval MXQ_STATUS_BAD_PARAM_INVALID_VALUE level out of range. Thread-safe.
function mxqLoggerSetLevel(level)
    @ccall libmxq.mxqLoggerSetLevel(level::mxqLogLevel_t)::mxqStatus_t
end

# Current log level (host out-pointer). \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER level is NULL.
function mxqLoggerGetLevel(level)
    @ccall libmxq.mxqLoggerGetLevel(level::Ptr{mxqLogLevel_t})::mxqStatus_t
end

# Send the log to a file (appended), replacing any previous file; NULL returns to stderr.
# \retval MXQ_STATUS_BAD_PARAM_INVALID_VALUE the file cannot be opened. Thread-safe.
function mxqLoggerSetFile(path)
    @ccall libmxq.mxqLoggerSetFile(path::Ptr{Cchar})::mxqStatus_t
end

# Install (or with NULL remove) a callback. While a callback is installed, messages go to it
# instead of the file / stderr. userData is passed back unchanged. Thread-safe.
function mxqLoggerSetCallback(callback, userData)
    @ccall libmxq.mxqLoggerSetCallback(callback::mxqLogCallback_t, userData::Ptr{Cvoid})::mxqStatus_t
end

# Create a CUDA handle on the current device of the calling thread (device 0 if none is current).
# Equivalent to mxqCreateWithBackend(handle, MXQ_BACKEND_CUDA, -1).
# \param handle host out-pointer, set on success only.
# \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER handle is NULL
# \retval MXQ_STATUS_CUDA_DRIVER_NOT_FOUND libcuda.so.1 missing or older than CUDA 12.0
# \retval MXQ_STATUS_CUDA_NO_DEVICE no device
# \retval MXQ_STATUS_CUDA_ERROR a driver call failed
function mxqCreate(handle)
    @ccall libmxq.mxqCreate(handle::Ptr{mxqHandle_t})::mxqStatus_t
end

# Create a handle on a backend. For MXQ_BACKEND_CUDA, deviceOrdinal selects the device (-1: the
# calling thread's current device); the handle uses that device's primary context. For
# MXQ_BACKEND_CPU, deviceOrdinal must be 0 or -1.
# \retval MXQ_STATUS_BAD_PARAM_INVALID_VALUE unknown backend or bad ordinal (CPU)
# \retval (as mxqCreate)
function mxqCreateWithBackend(handle, backend, deviceOrdinal)
    @ccall libmxq.mxqCreateWithBackend(handle::Ptr{mxqHandle_t}, backend::mxqBackend_t, deviceOrdinal::Cint)::mxqStatus_t
end

# Destroy a handle. NULL is accepted and succeeds. Plans created from the handle must be destroyed
# first; destroying a handle with live plans returns MXQ_STATUS_BAD_PARAM and keeps the handle.
function mxqDestroy(handle)
    @ccall libmxq.mxqDestroy(handle::mxqHandle_t)::mxqStatus_t
end

# Backend of a handle. \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER handle or backend NULL
function mxqGetBackend(handle, backend)
    @ccall libmxq.mxqGetBackend(handle::mxqHandle_t, backend::Ptr{mxqBackend_t})::mxqStatus_t
end

# Device ordinal and compute capability (major*10+minor, e.g. 90) of a CUDA handle; a CPU handle
# reports ordinal -1 and capability 0. Host out-pointers; either may be NULL.
function mxqGetDevice(handle, deviceOrdinal, computeCapability)
    @ccall libmxq.mxqGetDevice(handle::mxqHandle_t, deviceOrdinal::Ptr{Cint}, computeCapability::Ptr{Cint})::mxqStatus_t
end

const mxqQuantizeAttribute_t = Cint
const MXQ_QUANTIZE_ATTR_INPUT_DTYPE = mxqQuantizeAttribute_t(0)  # int32_t mxqDataType_t: BF16 (default), FP16, FP32
const MXQ_QUANTIZE_ATTR_OUTPUT_DTYPE = mxqQuantizeAttribute_t(1)  # int32_t mxqDataType_t: E4M3 (default), E5M2
const MXQ_QUANTIZE_ATTR_SCALE_MODE = mxqQuantizeAttribute_t(2)  # int32_t mxqScaleMode_t, default RCEIL
const MXQ_QUANTIZE_ATTR_NONFINITE_POLICY = mxqQuantizeAttribute_t(3)  # int32_t mxqNonfinitePolicy_t, default TE_COMPATIBLE
const MXQ_QUANTIZE_ATTR_DIRECTION = mxqQuantizeAttribute_t(4)  # int32_t mxqQuantizeDirection_t, default ROWWISE
const MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED = mxqQuantizeAttribute_t(5)  # int32_t bool, default 1: columnwise data [cols, rows]
const MXQ_QUANTIZE_ATTR_SCALE_LAYOUT = mxqQuantizeAttribute_t(6)  # int32_t mxqScaleLayout_t, default SWIZZLED_128x4
const MXQ_QUANTIZE_ATTR_BLOCK_2D = mxqQuantizeAttribute_t(7)  # int32_t bool, default 0: one scale per 32x32 tile,
const MXQ_QUANTIZE_ATTR_ROWS = mxqQuantizeAttribute_t(8)  # int64_t, required, > 0
const MXQ_QUANTIZE_ATTR_COLS = mxqQuantizeAttribute_t(9)  # int64_t, required, > 0 (after fusion: SwiGLU input
const MXQ_QUANTIZE_ATTR_BATCH = mxqQuantizeAttribute_t(10)  # int64_t, default 1: [batch, rows, cols] tensors,
const MXQ_QUANTIZE_ATTR_INPUT_LD = mxqQuantizeAttribute_t(11)  # int64_t input row stride in elements, default
const MXQ_QUANTIZE_ATTR_INPUT_BATCH_STRIDE = mxqQuantizeAttribute_t(12)  # int64_t elements between batches, default rows*ld
const MXQ_QUANTIZE_ATTR_GROUPING = mxqQuantizeAttribute_t(13)  # int32_t mxqGrouping_t, default NONE (needs batch 1)
const MXQ_QUANTIZE_ATTR_NUM_GROUPS = mxqQuantizeAttribute_t(14)  # int64_t, required with GROUPING_ROWS, >= 1
const MXQ_QUANTIZE_ATTR_GROUP_OFFSETS_DTYPE = mxqQuantizeAttribute_t(15)  # int32_t mxqDataType_t: INT32 (default), INT64
const MXQ_QUANTIZE_ATTR_FUSION = mxqQuantizeAttribute_t(16)  # int32_t mxqFusion_t, default NONE

# Create a quantize plan bound to `handle`. \param plan host out-pointer, set on success; the caller
# owns the plan until mxqQuantizePlanDestroy. Thread-safe on a shared handle. Statuses: NULL_POINTER.
function mxqQuantizePlanCreate(handle, plan)
    @ccall libmxq.mxqQuantizePlanCreate(handle::mxqHandle_t, plan::Ptr{mxqQuantizePlan_t})::mxqStatus_t
end

# Set one attribute (`buf`: host pointer to a value of the attribute's C type, `sizeInBytes` its
# size). Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE, INVALID_VALUE,
# NOT_SUPPORTED_DTYPE, ALREADY_FINALIZED ("Plans: common conventions"). Not thread-safe per plan.
function mxqQuantizePlanSetAttribute(plan, attr, buf, sizeInBytes)
    @ccall libmxq.mxqQuantizePlanSetAttribute(plan::mxqQuantizePlan_t, attr::mxqQuantizeAttribute_t, buf::Ptr{Cvoid}, sizeInBytes::Csize_t)::mxqStatus_t
end

# Read one attribute into host `buf` (NULL with non-NULL `sizeWritten`: size query only); after
# Finalize the resolved value. Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE.
function mxqQuantizePlanGetAttribute(plan, attr, buf, sizeInBytes, sizeWritten)
    @ccall libmxq.mxqQuantizePlanGetAttribute(plan::mxqQuantizePlan_t, attr::mxqQuantizeAttribute_t, buf::Ptr{Cvoid}, sizeInBytes::Csize_t, sizeWritten::Ptr{Csize_t})::mxqStatus_t
end

# Validate, select the kernel (logged at INFO with the reason) and size the workspace; the plan is
# immutable afterwards. Statuses: SHAPE, INVALID_VALUE, NOT_SUPPORTED_*, ALREADY_FINALIZED. A
# failed Finalize leaves the plan unchanged and editable.
function mxqQuantizePlanFinalize(plan)
    @ccall libmxq.mxqQuantizePlanFinalize(plan::mxqQuantizePlan_t)::mxqStatus_t
end

# Workspace bytes Execute needs (host out-pointer). Statuses: NULL_POINTER, NOT_FINALIZED.
function mxqQuantizePlanGetWorkspaceSize(plan, bytes)
    @ccall libmxq.mxqQuantizePlanGetWorkspaceSize(plan::mxqQuantizePlan_t, bytes::Ptr{Csize_t})::mxqStatus_t
end

# Bytes the caller must allocate for an output slot of a finalized plan (data, scales including
# swizzle padding and per-group padding upper bounds, amax, activation); 0 for a slot the plan
# does not write. \retval MXQ_STATUS_BAD_PARAM_NOT_FINALIZED, _NULL_POINTER
function mxqQuantizePlanGetOutputSize(plan, slot, bytes)
    @ccall libmxq.mxqQuantizePlanGetOutputSize(plan::mxqQuantizePlan_t, slot::mxqArgSlot_t, bytes::Ptr{Csize_t})::mxqStatus_t
end

# Run the finalized plan on (slot, device pointer) `args` with a device `workspace` (256-byte aligned,
# >= GetWorkspaceSize; NULL when that is 0) on `stream`; asynchronous on a CUDA handle, synchronous
# on a CPU handle; never allocates or synchronizes. Thread-safe: one plan may run concurrently on
# several streams with separate workspaces. Statuses: NULL_POINTER, HANDLE_MISMATCH,
# NOT_FINALIZED, ARGUMENT, MISALIGNED, WORKSPACE, GROUP_OFFSETS (CPU), CUDA_ERROR; nothing is
# written on a validation failure.
function mxqQuantizeExecute(handle, plan, args, numArgs, workspace, workspaceBytes, stream)
    @ccall libmxq.mxqQuantizeExecute(handle::mxqHandle_t, plan::mxqQuantizePlan_t, args::Ptr{mxqExecArg_t}, numArgs::Cint, workspace::Ptr{Cvoid}, workspaceBytes::Csize_t, stream::mxqStream_t)::mxqStatus_t
end

# Destroy a plan (NULL accepted). Must not race with the plan's executions.
function mxqQuantizePlanDestroy(plan)
    @ccall libmxq.mxqQuantizePlanDestroy(plan::mxqQuantizePlan_t)::mxqStatus_t
end

const mxqDequantizeAttribute_t = Cint
const MXQ_DEQUANTIZE_ATTR_INPUT_DTYPE = mxqDequantizeAttribute_t(0)  # int32_t: E4M3 (default), E5M2
const MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE = mxqDequantizeAttribute_t(1)  # int32_t: BF16 (default), FP16, FP32
const MXQ_DEQUANTIZE_ATTR_DIRECTION = mxqDequantizeAttribute_t(2)  # int32_t: ROWWISE (default) or COLUMNWISE
const MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED = mxqDequantizeAttribute_t(3)  # int32_t bool, default 1
const MXQ_DEQUANTIZE_ATTR_SCALE_LAYOUT = mxqDequantizeAttribute_t(4)  # int32_t mxqScaleLayout_t, default SWIZZLED_128x4
const MXQ_DEQUANTIZE_ATTR_ROWS = mxqDequantizeAttribute_t(5)  # int64_t, required
const MXQ_DEQUANTIZE_ATTR_COLS = mxqDequantizeAttribute_t(6)  # int64_t, required
const MXQ_DEQUANTIZE_ATTR_BATCH = mxqDequantizeAttribute_t(7)  # int64_t, default 1
const MXQ_DEQUANTIZE_ATTR_OUTPUT_LD = mxqDequantizeAttribute_t(8)  # int64_t, default cols
const MXQ_DEQUANTIZE_ATTR_GROUPING = mxqDequantizeAttribute_t(9)  # int32_t mxqGrouping_t, default NONE
const MXQ_DEQUANTIZE_ATTR_NUM_GROUPS = mxqDequantizeAttribute_t(10)  # int64_t
const MXQ_DEQUANTIZE_ATTR_GROUP_OFFSETS_DTYPE = mxqDequantizeAttribute_t(11)  # int32_t: INT32 (default), INT64

# Create a dequantize plan bound to `handle`. \param plan host out-pointer, set on success; the caller
# owns the plan until mxqDequantizePlanDestroy. Thread-safe on a shared handle. Statuses: NULL_POINTER.
function mxqDequantizePlanCreate(handle, plan)
    @ccall libmxq.mxqDequantizePlanCreate(handle::mxqHandle_t, plan::Ptr{mxqDequantizePlan_t})::mxqStatus_t
end

# Set one attribute (`buf`: host pointer to a value of the attribute's C type, `sizeInBytes` its
# size). Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE, INVALID_VALUE,
# NOT_SUPPORTED_DTYPE, ALREADY_FINALIZED ("Plans: common conventions"). Not thread-safe per plan.
function mxqDequantizePlanSetAttribute(plan, attr, buf, sizeInBytes)
    @ccall libmxq.mxqDequantizePlanSetAttribute(plan::mxqDequantizePlan_t, attr::mxqDequantizeAttribute_t, buf::Ptr{Cvoid}, sizeInBytes::Csize_t)::mxqStatus_t
end

# Read one attribute into host `buf` (NULL with non-NULL `sizeWritten`: size query only); after
# Finalize the resolved value. Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE.
function mxqDequantizePlanGetAttribute(plan, attr, buf, sizeInBytes, sizeWritten)
    @ccall libmxq.mxqDequantizePlanGetAttribute(plan::mxqDequantizePlan_t, attr::mxqDequantizeAttribute_t, buf::Ptr{Cvoid}, sizeInBytes::Csize_t, sizeWritten::Ptr{Csize_t})::mxqStatus_t
end

# Validate, select the kernel (logged at INFO with the reason) and size the workspace; the plan is
# immutable afterwards. Statuses: SHAPE, INVALID_VALUE, NOT_SUPPORTED_*, ALREADY_FINALIZED. A
# failed Finalize leaves the plan unchanged and editable.
function mxqDequantizePlanFinalize(plan)
    @ccall libmxq.mxqDequantizePlanFinalize(plan::mxqDequantizePlan_t)::mxqStatus_t
end

# Workspace bytes Execute needs (host out-pointer). Statuses: NULL_POINTER, NOT_FINALIZED.
function mxqDequantizePlanGetWorkspaceSize(plan, bytes)
    @ccall libmxq.mxqDequantizePlanGetWorkspaceSize(plan::mxqDequantizePlan_t, bytes::Ptr{Csize_t})::mxqStatus_t
end

# Run the finalized plan on (slot, device pointer) `args` with a device `workspace` (256-byte aligned,
# >= GetWorkspaceSize; NULL when that is 0) on `stream`; asynchronous on a CUDA handle, synchronous
# on a CPU handle; never allocates or synchronizes. Thread-safe: one plan may run concurrently on
# several streams with separate workspaces. Statuses: NULL_POINTER, HANDLE_MISMATCH,
# NOT_FINALIZED, ARGUMENT, MISALIGNED, WORKSPACE, GROUP_OFFSETS (CPU), CUDA_ERROR; nothing is
# written on a validation failure.
function mxqDequantizeExecute(handle, plan, args, numArgs, workspace, workspaceBytes, stream)
    @ccall libmxq.mxqDequantizeExecute(handle::mxqHandle_t, plan::mxqDequantizePlan_t, args::Ptr{mxqExecArg_t}, numArgs::Cint, workspace::Ptr{Cvoid}, workspaceBytes::Csize_t, stream::mxqStream_t)::mxqStatus_t
end

# Destroy a plan (NULL accepted). Must not race with the plan's executions.
function mxqDequantizePlanDestroy(plan)
    @ccall libmxq.mxqDequantizePlanDestroy(plan::mxqDequantizePlan_t)::mxqStatus_t
end

const mxqGemmGrouping_t = Cint
const MXQ_GEMM_GROUPING_NONE = mxqGemmGrouping_t(0)
const MXQ_GEMM_GROUPING_M = mxqGemmGrouping_t(1)
const MXQ_GEMM_GROUPING_K = mxqGemmGrouping_t(2)

const mxqGroupedGemmAttribute_t = Cint
const MXQ_GEMM_ATTR_GROUPING = mxqGroupedGemmAttribute_t(0)  # int32_t mxqGemmGrouping_t, default NONE
const MXQ_GEMM_ATTR_M = mxqGroupedGemmAttribute_t(1)  # int64_t, required (total rows when M_GROUPED)
const MXQ_GEMM_ATTR_N = mxqGroupedGemmAttribute_t(2)  # int64_t, required
const MXQ_GEMM_ATTR_K = mxqGroupedGemmAttribute_t(3)  # int64_t, required (total tokens when K_GROUPED)
const MXQ_GEMM_ATTR_NUM_GROUPS = mxqGroupedGemmAttribute_t(4)  # int64_t, required when grouped, >= 1
const MXQ_GEMM_ATTR_BATCH = mxqGroupedGemmAttribute_t(5)  # int64_t, default 1 (GROUPING_NONE only)
const MXQ_GEMM_ATTR_A_DTYPE = mxqGroupedGemmAttribute_t(6)  # int32_t: E4M3 (default), E5M2
const MXQ_GEMM_ATTR_B_DTYPE = mxqGroupedGemmAttribute_t(7)  # int32_t: E4M3 (default), E5M2 (not both E5M2)
const MXQ_GEMM_ATTR_D_DTYPE = mxqGroupedGemmAttribute_t(8)  # int32_t: BF16 (default), FP32
const MXQ_GEMM_ATTR_SCALE_LAYOUT = mxqGroupedGemmAttribute_t(9)  # int32_t mxqScaleLayout_t, both operands, default SWIZZLED
const MXQ_GEMM_ATTR_ALPHA = mxqGroupedGemmAttribute_t(10)  # float, default 1.0
const MXQ_GEMM_ATTR_ACCUMULATE = mxqGroupedGemmAttribute_t(11)  # int32_t bool, default 0: D = alpha*AB^T; 1: D += alpha*AB^T
const MXQ_GEMM_ATTR_GROUP_OFFSETS_DTYPE = mxqGroupedGemmAttribute_t(12)  # int32_t: INT32 (default), INT64
const MXQ_GEMM_ATTR_B_BLOCK_2D = mxqGroupedGemmAttribute_t(13)  # int32_t bool, default 0: B was quantized in 32x32
const MXQ_GEMM_ATTR_WORKSPACE_LIMIT = mxqGroupedGemmAttribute_t(14)  # int64_t bytes >= 0, default INT64_MAX (no limit): the most

# Create a grouped-GEMM plan bound to `handle`. \param plan host out-pointer, set on success; the caller
# owns the plan until mxqGroupedGemmPlanDestroy. Thread-safe on a shared handle. Statuses: NULL_POINTER.
function mxqGroupedGemmPlanCreate(handle, plan)
    @ccall libmxq.mxqGroupedGemmPlanCreate(handle::mxqHandle_t, plan::Ptr{mxqGroupedGemmPlan_t})::mxqStatus_t
end

# Set one attribute (`buf`: host pointer to a value of the attribute's C type, `sizeInBytes` its
# size). Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE, INVALID_VALUE,
# NOT_SUPPORTED_DTYPE, ALREADY_FINALIZED ("Plans: common conventions"). Not thread-safe per plan.
function mxqGroupedGemmPlanSetAttribute(plan, attr, buf, sizeInBytes)
    @ccall libmxq.mxqGroupedGemmPlanSetAttribute(plan::mxqGroupedGemmPlan_t, attr::mxqGroupedGemmAttribute_t, buf::Ptr{Cvoid}, sizeInBytes::Csize_t)::mxqStatus_t
end

# Read one attribute into host `buf` (NULL with non-NULL `sizeWritten`: size query only); after
# Finalize the resolved value. Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE.
function mxqGroupedGemmPlanGetAttribute(plan, attr, buf, sizeInBytes, sizeWritten)
    @ccall libmxq.mxqGroupedGemmPlanGetAttribute(plan::mxqGroupedGemmPlan_t, attr::mxqGroupedGemmAttribute_t, buf::Ptr{Cvoid}, sizeInBytes::Csize_t, sizeWritten::Ptr{Csize_t})::mxqStatus_t
end

# Validate, select the kernel (logged at INFO with the reason) and size the workspace; the plan is
# immutable afterwards. Statuses: SHAPE, INVALID_VALUE, NOT_SUPPORTED_*, ALREADY_FINALIZED. A
# failed Finalize leaves the plan unchanged and editable.
function mxqGroupedGemmPlanFinalize(plan)
    @ccall libmxq.mxqGroupedGemmPlanFinalize(plan::mxqGroupedGemmPlan_t)::mxqStatus_t
end

# Workspace bytes Execute needs (host out-pointer). Statuses: NULL_POINTER, NOT_FINALIZED.
function mxqGroupedGemmPlanGetWorkspaceSize(plan, bytes)
    @ccall libmxq.mxqGroupedGemmPlanGetWorkspaceSize(plan::mxqGroupedGemmPlan_t, bytes::Ptr{Csize_t})::mxqStatus_t
end

# Run the finalized plan on (slot, device pointer) `args` with a device `workspace` (256-byte aligned,
# >= GetWorkspaceSize; NULL when that is 0) on `stream`; asynchronous on a CUDA handle, synchronous
# on a CPU handle; never allocates or synchronizes. Thread-safe: one plan may run concurrently on
# several streams with separate workspaces. Statuses: NULL_POINTER, HANDLE_MISMATCH,
# NOT_FINALIZED, ARGUMENT, MISALIGNED, WORKSPACE, GROUP_OFFSETS (CPU), CUDA_ERROR; nothing is
# written on a validation failure.
function mxqGroupedGemmExecute(handle, plan, args, numArgs, workspace, workspaceBytes, stream)
    @ccall libmxq.mxqGroupedGemmExecute(handle::mxqHandle_t, plan::mxqGroupedGemmPlan_t, args::Ptr{mxqExecArg_t}, numArgs::Cint, workspace::Ptr{Cvoid}, workspaceBytes::Csize_t, stream::mxqStream_t)::mxqStatus_t
end

# Destroy a plan (NULL accepted). Must not race with the plan's executions.
function mxqGroupedGemmPlanDestroy(plan)
    @ccall libmxq.mxqGroupedGemmPlanDestroy(plan::mxqGroupedGemmPlan_t)::mxqStatus_t
end

const mxqAttentionLayout_t = Cint
const MXQ_ATTN_LAYOUT_BHSD = mxqAttentionLayout_t(0)
const MXQ_ATTN_LAYOUT_BSHD = mxqAttentionLayout_t(1)

const mxqAttentionMask_t = Cint
const MXQ_ATTN_MASK_NONE = mxqAttentionMask_t(0)
const MXQ_ATTN_MASK_CAUSAL_TOP_LEFT = mxqAttentionMask_t(1)  # key j visible to query i iff j <= i
const MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT = mxqAttentionMask_t(2)  # iff j <= i + Skv - Sq

const mxqAttentionDirection_t = Cint
const MXQ_ATTN_FORWARD = mxqAttentionDirection_t(0)
const MXQ_ATTN_BACKWARD = mxqAttentionDirection_t(1)

const mxqAttentionAttribute_t = Cint
const MXQ_ATTN_ATTR_DIRECTION = mxqAttentionAttribute_t(0)  # int32_t mxqAttentionDirection_t, default FORWARD
const MXQ_ATTN_ATTR_BATCH = mxqAttentionAttribute_t(1)  # int64_t B, required
const MXQ_ATTN_ATTR_HEADS_Q = mxqAttentionAttribute_t(2)  # int64_t Hq, required
const MXQ_ATTN_ATTR_HEADS_KV = mxqAttentionAttribute_t(3)  # int64_t Hkv, default Hq; must divide Hq
const MXQ_ATTN_ATTR_SEQLEN_Q = mxqAttentionAttribute_t(4)  # int64_t Sq, required
const MXQ_ATTN_ATTR_SEQLEN_KV = mxqAttentionAttribute_t(5)  # int64_t Skv, required
const MXQ_ATTN_ATTR_HEAD_DIM = mxqAttentionAttribute_t(6)  # int64_t D, required
const MXQ_ATTN_ATTR_LAYOUT = mxqAttentionAttribute_t(7)  # int32_t mxqAttentionLayout_t, default BHSD
const MXQ_ATTN_ATTR_MASK = mxqAttentionAttribute_t(8)  # int32_t mxqAttentionMask_t, default NONE
const MXQ_ATTN_ATTR_SOFTMAX_SCALE = mxqAttentionAttribute_t(9)  # float, default 1/sqrt(D) (Get after Finalize: resolved)
const MXQ_ATTN_ATTR_P_SCALE = mxqAttentionAttribute_t(10)  # float, default 256: P is quantized as fp8(P*s)/s
const MXQ_ATTN_ATTR_SCALE_LAYOUT = mxqAttentionAttribute_t(11)  # int32_t mxqScaleLayout_t, default SWIZZLED_128x4
const MXQ_ATTN_ATTR_VARLEN = mxqAttentionAttribute_t(12)  # int32_t bool, default 0
const MXQ_ATTN_ATTR_DETERMINISTIC = mxqAttentionAttribute_t(13)  # int32_t bool, default 0 (backward)
const MXQ_ATTN_ATTR_QKV_DTYPE = mxqAttentionAttribute_t(14)  # int32_t: E4M3 (default)

# Create an attention plan bound to `handle`. \param plan host out-pointer, set on success; the caller
# owns the plan until mxqAttentionPlanDestroy. Thread-safe on a shared handle. Statuses: NULL_POINTER.
function mxqAttentionPlanCreate(handle, plan)
    @ccall libmxq.mxqAttentionPlanCreate(handle::mxqHandle_t, plan::Ptr{mxqAttentionPlan_t})::mxqStatus_t
end

# Set one attribute (`buf`: host pointer to a value of the attribute's C type, `sizeInBytes` its
# size). Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE, INVALID_VALUE,
# NOT_SUPPORTED_DTYPE, ALREADY_FINALIZED ("Plans: common conventions"). Not thread-safe per plan.
function mxqAttentionPlanSetAttribute(plan, attr, buf, sizeInBytes)
    @ccall libmxq.mxqAttentionPlanSetAttribute(plan::mxqAttentionPlan_t, attr::mxqAttentionAttribute_t, buf::Ptr{Cvoid}, sizeInBytes::Csize_t)::mxqStatus_t
end

# Read one attribute into host `buf` (NULL with non-NULL `sizeWritten`: size query only); after
# Finalize the resolved value. Statuses: NULL_POINTER, UNKNOWN_ATTRIBUTE, ATTRIBUTE_SIZE.
function mxqAttentionPlanGetAttribute(plan, attr, buf, sizeInBytes, sizeWritten)
    @ccall libmxq.mxqAttentionPlanGetAttribute(plan::mxqAttentionPlan_t, attr::mxqAttentionAttribute_t, buf::Ptr{Cvoid}, sizeInBytes::Csize_t, sizeWritten::Ptr{Csize_t})::mxqStatus_t
end

# Validate, select the kernel (logged at INFO with the reason) and size the workspace; the plan is
# immutable afterwards. Statuses: SHAPE, INVALID_VALUE, NOT_SUPPORTED_*, ALREADY_FINALIZED. A
# failed Finalize leaves the plan unchanged and editable.
function mxqAttentionPlanFinalize(plan)
    @ccall libmxq.mxqAttentionPlanFinalize(plan::mxqAttentionPlan_t)::mxqStatus_t
end

# Workspace bytes Execute needs (host out-pointer). Statuses: NULL_POINTER, NOT_FINALIZED.
function mxqAttentionPlanGetWorkspaceSize(plan, bytes)
    @ccall libmxq.mxqAttentionPlanGetWorkspaceSize(plan::mxqAttentionPlan_t, bytes::Ptr{Csize_t})::mxqStatus_t
end

# Run the finalized plan on (slot, device pointer) `args` with a device `workspace` (256-byte aligned,
# >= GetWorkspaceSize; NULL when that is 0) on `stream`; asynchronous on a CUDA handle, synchronous
# on a CPU handle; never allocates or synchronizes. Thread-safe: one plan may run concurrently on
# several streams with separate workspaces. Statuses: NULL_POINTER, HANDLE_MISMATCH,
# NOT_FINALIZED, ARGUMENT, MISALIGNED, WORKSPACE, GROUP_OFFSETS (CPU), CUDA_ERROR; nothing is
# written on a validation failure.
function mxqAttentionExecute(handle, plan, args, numArgs, workspace, workspaceBytes, stream)
    @ccall libmxq.mxqAttentionExecute(handle::mxqHandle_t, plan::mxqAttentionPlan_t, args::Ptr{mxqExecArg_t}, numArgs::Cint, workspace::Ptr{Cvoid}, workspaceBytes::Csize_t, stream::mxqStream_t)::mxqStatus_t
end

# Destroy a plan (NULL accepted). Must not race with the plan's executions.
function mxqAttentionPlanDestroy(plan)
    @ccall libmxq.mxqAttentionPlanDestroy(plan::mxqAttentionPlan_t)::mxqStatus_t
end

# Convert UE8M0 scales of a [batch, rows, scaleCols] tensor between LINEAR (row stride linearLd
# bytes, >= scaleCols) and SWIZZLED_128x4 (each batch padded on its own; padding written 0).
# toSwizzled != 0: src LINEAR -> dst SWIZZLED; 0: src SWIZZLED -> dst LINEAR. Device pointers,
# enqueued on stream (synchronous on a CPU handle). src and dst must not overlap.
# \retval MXQ_STATUS_BAD_PARAM_NULL_POINTER, _SHAPE (a dimension <= 0, linearLd < scaleCols)
function mxqSwizzleScales(handle, toSwizzled, batch, rows, scaleCols, linearLd, src, dst, stream)
    @ccall libmxq.mxqSwizzleScales(handle::mxqHandle_t, toSwizzled::Cint, batch::Int64, rows::Int64, scaleCols::Int64, linearLd::Int64, src::Ptr{Cvoid}, dst::Ptr{Cvoid}, stream::mxqStream_t)::mxqStatus_t
end

# Bytes of a SWIZZLED_128x4 scale tensor [batch, rows, scaleCols]:
# batch * round_up(rows,128) * round_up(scaleCols,4). Returns 0 on overflow or a dimension <= 0.
function mxqSwizzledScaleBytes(batch, rows, scaleCols)
    @ccall libmxq.mxqSwizzledScaleBytes(batch::Int64, rows::Int64, scaleCols::Int64)::Csize_t
end

# Everything above is public, under its C name.
export mxqStream_t, mxqHandle_t, mxqQuantizePlan_t, mxqDequantizePlan_t, mxqGroupedGemmPlan_t,
    mxqAttentionPlan_t, mxqStatus_t, mxqDataType_t, mxqBackend_t, mxqScaleMode_t,
    mxqNonfinitePolicy_t, mxqScaleLayout_t, mxqQuantizeDirection_t, mxqGrouping_t, mxqFusion_t,
    mxqArgSlot_t, mxqExecArg_t, mxqGetVersion, mxqGetBuildInfo, mxqGetStatusName, mxqGetStatusString,
    mxqGetLastErrorMessage, mxqLogLevel_t, mxqLogCallback_t, mxqLoggerSetLevel, mxqLoggerGetLevel,
    mxqLoggerSetFile, mxqLoggerSetCallback, mxqCreate, mxqCreateWithBackend, mxqDestroy,
    mxqGetBackend, mxqGetDevice, mxqQuantizeAttribute_t, mxqQuantizePlanCreate,
    mxqQuantizePlanSetAttribute, mxqQuantizePlanGetAttribute, mxqQuantizePlanFinalize,
    mxqQuantizePlanGetWorkspaceSize, mxqQuantizePlanGetOutputSize, mxqQuantizeExecute,
    mxqQuantizePlanDestroy, mxqDequantizeAttribute_t, mxqDequantizePlanCreate,
    mxqDequantizePlanSetAttribute, mxqDequantizePlanGetAttribute, mxqDequantizePlanFinalize,
    mxqDequantizePlanGetWorkspaceSize, mxqDequantizeExecute, mxqDequantizePlanDestroy,
    mxqGemmGrouping_t, mxqGroupedGemmAttribute_t, mxqGroupedGemmPlanCreate,
    mxqGroupedGemmPlanSetAttribute, mxqGroupedGemmPlanGetAttribute, mxqGroupedGemmPlanFinalize,
    mxqGroupedGemmPlanGetWorkspaceSize, mxqGroupedGemmExecute, mxqGroupedGemmPlanDestroy,
    mxqAttentionLayout_t, mxqAttentionMask_t, mxqAttentionDirection_t, mxqAttentionAttribute_t,
    mxqAttentionPlanCreate, mxqAttentionPlanSetAttribute, mxqAttentionPlanGetAttribute,
    mxqAttentionPlanFinalize, mxqAttentionPlanGetWorkspaceSize, mxqAttentionExecute,
    mxqAttentionPlanDestroy, mxqSwizzleScales, mxqSwizzledScaleBytes, MXQ_STATUS_SUCCESS,
    MXQ_STATUS_BAD_PARAM, MXQ_STATUS_BAD_PARAM_NULL_POINTER, MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE,
    MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
    MXQ_STATUS_BAD_PARAM_SHAPE, MXQ_STATUS_BAD_PARAM_MISALIGNED, MXQ_STATUS_BAD_PARAM_WORKSPACE,
    MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS, MXQ_STATUS_BAD_PARAM_ARGUMENT,
    MXQ_STATUS_BAD_PARAM_NOT_FINALIZED, MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED,
    MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH, MXQ_STATUS_NOT_SUPPORTED, MXQ_STATUS_NOT_SUPPORTED_DTYPE,
    MXQ_STATUS_NOT_SUPPORTED_ARCH, MXQ_STATUS_NOT_SUPPORTED_COMBINATION,
    MXQ_STATUS_NOT_SUPPORTED_BACKEND, MXQ_STATUS_INTERNAL_ERROR, MXQ_STATUS_ALLOC_FAILED,
    MXQ_STATUS_CUDA_DRIVER_NOT_FOUND, MXQ_STATUS_CUDA_NO_DEVICE, MXQ_STATUS_CUDA_ERROR,
    MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED, MXQ_DTYPE_FP32, MXQ_DTYPE_FP16, MXQ_DTYPE_BF16,
    MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2, MXQ_DTYPE_UE8M0, MXQ_DTYPE_INT32, MXQ_DTYPE_INT64,
    MXQ_BACKEND_CUDA, MXQ_BACKEND_CPU, MXQ_SCALE_MODE_RCEIL, MXQ_SCALE_MODE_FLOOR,
    MXQ_SCALE_MODE_CEIL, MXQ_SCALE_MODE_EVEN, MXQ_NONFINITE_TE_COMPATIBLE, MXQ_NONFINITE_PROPAGATE,
    MXQ_SCALE_LAYOUT_SWIZZLED_128x4, MXQ_SCALE_LAYOUT_LINEAR, MXQ_QUANTIZE_ROWWISE,
    MXQ_QUANTIZE_COLUMNWISE, MXQ_QUANTIZE_BOTH, MXQ_GROUPING_NONE, MXQ_GROUPING_ROWS,
    MXQ_FUSION_NONE, MXQ_FUSION_SWIGLU, MXQ_ARG_X, MXQ_ARG_ROWWISE_DATA, MXQ_ARG_ROWWISE_SCALES,
    MXQ_ARG_COLWISE_DATA, MXQ_ARG_COLWISE_SCALES, MXQ_ARG_GROUP_OFFSETS, MXQ_ARG_AMAX,
    MXQ_ARG_ACTIVATION, MXQ_ARG_A_DATA, MXQ_ARG_A_SCALES, MXQ_ARG_B_DATA, MXQ_ARG_B_SCALES,
    MXQ_ARG_D, MXQ_ARG_Q_DATA, MXQ_ARG_Q_SCALES, MXQ_ARG_K_DATA, MXQ_ARG_K_SCALES, MXQ_ARG_V_DATA,
    MXQ_ARG_V_SCALES, MXQ_ARG_O, MXQ_ARG_LSE, MXQ_ARG_DO_DATA, MXQ_ARG_DO_SCALES, MXQ_ARG_DO,
    MXQ_ARG_Q_T_DATA, MXQ_ARG_Q_T_SCALES, MXQ_ARG_K_T_DATA, MXQ_ARG_K_T_SCALES, MXQ_ARG_DO_T_DATA,
    MXQ_ARG_DO_T_SCALES, MXQ_ARG_DQ, MXQ_ARG_DK, MXQ_ARG_DV, MXQ_ARG_CU_SEQLENS_Q,
    MXQ_ARG_CU_SEQLENS_KV, MXQ_LOG_OFF, MXQ_LOG_ERROR, MXQ_LOG_WARN, MXQ_LOG_INFO, MXQ_LOG_DEBUG,
    MXQ_LOG_TRACE, MXQ_QUANTIZE_ATTR_INPUT_DTYPE, MXQ_QUANTIZE_ATTR_OUTPUT_DTYPE,
    MXQ_QUANTIZE_ATTR_SCALE_MODE, MXQ_QUANTIZE_ATTR_NONFINITE_POLICY, MXQ_QUANTIZE_ATTR_DIRECTION,
    MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, MXQ_QUANTIZE_ATTR_BLOCK_2D,
    MXQ_QUANTIZE_ATTR_ROWS, MXQ_QUANTIZE_ATTR_COLS, MXQ_QUANTIZE_ATTR_BATCH,
    MXQ_QUANTIZE_ATTR_INPUT_LD, MXQ_QUANTIZE_ATTR_INPUT_BATCH_STRIDE, MXQ_QUANTIZE_ATTR_GROUPING,
    MXQ_QUANTIZE_ATTR_NUM_GROUPS, MXQ_QUANTIZE_ATTR_GROUP_OFFSETS_DTYPE, MXQ_QUANTIZE_ATTR_FUSION,
    MXQ_DEQUANTIZE_ATTR_INPUT_DTYPE, MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, MXQ_DEQUANTIZE_ATTR_DIRECTION,
    MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED, MXQ_DEQUANTIZE_ATTR_SCALE_LAYOUT,
    MXQ_DEQUANTIZE_ATTR_ROWS, MXQ_DEQUANTIZE_ATTR_COLS, MXQ_DEQUANTIZE_ATTR_BATCH,
    MXQ_DEQUANTIZE_ATTR_OUTPUT_LD, MXQ_DEQUANTIZE_ATTR_GROUPING, MXQ_DEQUANTIZE_ATTR_NUM_GROUPS,
    MXQ_DEQUANTIZE_ATTR_GROUP_OFFSETS_DTYPE, MXQ_GEMM_GROUPING_NONE, MXQ_GEMM_GROUPING_M,
    MXQ_GEMM_GROUPING_K, MXQ_GEMM_ATTR_GROUPING, MXQ_GEMM_ATTR_M, MXQ_GEMM_ATTR_N, MXQ_GEMM_ATTR_K,
    MXQ_GEMM_ATTR_NUM_GROUPS, MXQ_GEMM_ATTR_BATCH, MXQ_GEMM_ATTR_A_DTYPE, MXQ_GEMM_ATTR_B_DTYPE,
    MXQ_GEMM_ATTR_D_DTYPE, MXQ_GEMM_ATTR_SCALE_LAYOUT, MXQ_GEMM_ATTR_ALPHA, MXQ_GEMM_ATTR_ACCUMULATE,
    MXQ_GEMM_ATTR_GROUP_OFFSETS_DTYPE, MXQ_GEMM_ATTR_B_BLOCK_2D, MXQ_GEMM_ATTR_WORKSPACE_LIMIT,
    MXQ_ATTN_LAYOUT_BHSD, MXQ_ATTN_LAYOUT_BSHD, MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT,
    MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT, MXQ_ATTN_FORWARD, MXQ_ATTN_BACKWARD, MXQ_ATTN_ATTR_DIRECTION,
    MXQ_ATTN_ATTR_BATCH, MXQ_ATTN_ATTR_HEADS_Q, MXQ_ATTN_ATTR_HEADS_KV, MXQ_ATTN_ATTR_SEQLEN_Q,
    MXQ_ATTN_ATTR_SEQLEN_KV, MXQ_ATTN_ATTR_HEAD_DIM, MXQ_ATTN_ATTR_LAYOUT, MXQ_ATTN_ATTR_MASK,
    MXQ_ATTN_ATTR_SOFTMAX_SCALE, MXQ_ATTN_ATTR_P_SCALE, MXQ_ATTN_ATTR_SCALE_LAYOUT,
    MXQ_ATTN_ATTR_VARLEN, MXQ_ATTN_ATTR_DETERMINISTIC, MXQ_ATTN_ATTR_QKV_DTYPE, CUstream_st,
    mxqAttentionPlan, mxqContext, mxqDequantizePlan, mxqGroupedGemmPlan, mxqQuantizePlan
