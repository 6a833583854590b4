//! Raw FFI declarations of libmxq: `include/mxq/mxq.h` in Rust, name for name, type for type.
//!
//! The header's documentation is the reference for every item. C enums are declared as `c_int`
//! type aliases with integer constants, not Rust enums: a value the library returns that this
//! crate does not know yet (a status code added later, say) is then just an integer, never
//! undefined behaviour. `bindings/check_ffi_sync.py` parses the header and fails CI when a
//! constant, type, struct field or function signature here differs from it.
//!
//! Everything is `unsafe` and unchecked; the `mxq` crate is the safe API.
#![no_std]
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

use core::ffi::{c_char, c_int, c_void};
use core::marker::{PhantomData, PhantomPinned};

/// `MXQ_VERSION_*` of the headers these declarations match (compare with `mxqGetVersion()`).
pub const MXQ_VERSION_MAJOR: u32 = 0;
pub const MXQ_VERSION_MINOR: u32 = 1;
pub const MXQ_VERSION_PATCH: u32 = 0;
pub const MXQ_VERSION: u32 = MXQ_VERSION_MAJOR * 10000 + MXQ_VERSION_MINOR * 100 + MXQ_VERSION_PATCH;

// ---- opaque handles ------------------------------------------------------------------------------

macro_rules! opaque {
    ($($tag:ident => $ptr:ident),* $(,)?) => {$(
        /// Opaque library object; only ever used behind a pointer.
        #[repr(C)]
        pub struct $tag {
            _data: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
        pub type $ptr = *mut $tag;
    )*};
}

opaque! {
    CUstream_st => mxqStream_t,
    mxqContext => mxqHandle_t,
    mxqQuantizePlan => mxqQuantizePlan_t,
    mxqDequantizePlan => mxqDequantizePlan_t,
    mxqGroupedGemmPlan => mxqGroupedGemmPlan_t,
    mxqAttentionPlan => mxqAttentionPlan_t,
}

// ---- enums ---------------------------------------------------------------------------------------

/// Status codes: never renumbered, only added; treat an unknown code by its category (code / 1000).
pub type mxqStatus_t = c_int;
pub const MXQ_STATUS_SUCCESS: mxqStatus_t = 0;
pub const MXQ_STATUS_BAD_PARAM: mxqStatus_t = 1000;
pub const MXQ_STATUS_BAD_PARAM_NULL_POINTER: mxqStatus_t = 1001;
pub const MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE: mxqStatus_t = 1002;
pub const MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE: mxqStatus_t = 1003;
pub const MXQ_STATUS_BAD_PARAM_INVALID_VALUE: mxqStatus_t = 1004;
pub const MXQ_STATUS_BAD_PARAM_SHAPE: mxqStatus_t = 1005;
pub const MXQ_STATUS_BAD_PARAM_MISALIGNED: mxqStatus_t = 1006;
pub const MXQ_STATUS_BAD_PARAM_WORKSPACE: mxqStatus_t = 1007;
pub const MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS: mxqStatus_t = 1008;
pub const MXQ_STATUS_BAD_PARAM_ARGUMENT: mxqStatus_t = 1009;
pub const MXQ_STATUS_BAD_PARAM_NOT_FINALIZED: mxqStatus_t = 1010;
pub const MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED: mxqStatus_t = 1011;
pub const MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH: mxqStatus_t = 1012;
pub const MXQ_STATUS_NOT_SUPPORTED: mxqStatus_t = 2000;
pub const MXQ_STATUS_NOT_SUPPORTED_DTYPE: mxqStatus_t = 2001;
pub const MXQ_STATUS_NOT_SUPPORTED_ARCH: mxqStatus_t = 2002;
pub const MXQ_STATUS_NOT_SUPPORTED_COMBINATION: mxqStatus_t = 2003;
pub const MXQ_STATUS_NOT_SUPPORTED_BACKEND: mxqStatus_t = 2004;
pub const MXQ_STATUS_INTERNAL_ERROR: mxqStatus_t = 3000;
pub const MXQ_STATUS_ALLOC_FAILED: mxqStatus_t = 3001;
pub const MXQ_STATUS_CUDA_DRIVER_NOT_FOUND: mxqStatus_t = 4000;
pub const MXQ_STATUS_CUDA_NO_DEVICE: mxqStatus_t = 4001;
pub const MXQ_STATUS_CUDA_ERROR: mxqStatus_t = 4002;
pub const MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED: mxqStatus_t = 4003;

/// Data types.
pub type mxqDataType_t = c_int;
pub const MXQ_DTYPE_FP32: mxqDataType_t = 0;
pub const MXQ_DTYPE_FP16: mxqDataType_t = 1;
pub const MXQ_DTYPE_BF16: mxqDataType_t = 2;
pub const MXQ_DTYPE_E4M3: mxqDataType_t = 3;
pub const MXQ_DTYPE_E5M2: mxqDataType_t = 4;
pub const MXQ_DTYPE_UE8M0: mxqDataType_t = 5;
pub const MXQ_DTYPE_INT32: mxqDataType_t = 6;
pub const MXQ_DTYPE_INT64: mxqDataType_t = 7;

/// Backends.
pub type mxqBackend_t = c_int;
pub const MXQ_BACKEND_CUDA: mxqBackend_t = 0;
pub const MXQ_BACKEND_CPU: mxqBackend_t = 1;

/// How the UE8M0 scale of a 32-block is derived from its absolute maximum (docs/NUMERICS.md).
pub type mxqScaleMode_t = c_int;
pub const MXQ_SCALE_MODE_RCEIL: mxqScaleMode_t = 0;
pub const MXQ_SCALE_MODE_FLOOR: mxqScaleMode_t = 1;
pub const MXQ_SCALE_MODE_CEIL: mxqScaleMode_t = 2;
pub const MXQ_SCALE_MODE_EVEN: mxqScaleMode_t = 3;

/// What non-finite inputs do (docs/NUMERICS.md). A NaN never becomes a finite number silently.
pub type mxqNonfinitePolicy_t = c_int;
pub const MXQ_NONFINITE_TE_COMPATIBLE: mxqNonfinitePolicy_t = 0;
pub const MXQ_NONFINITE_PROPAGATE: mxqNonfinitePolicy_t = 1;

/// Scale tensor layouts (docs/LAYOUTS.md).
pub type mxqScaleLayout_t = c_int;
pub const MXQ_SCALE_LAYOUT_SWIZZLED_128x4: mxqScaleLayout_t = 0;
pub const MXQ_SCALE_LAYOUT_LINEAR: mxqScaleLayout_t = 1;

/// Quantization orientation (bit mask).
pub type mxqQuantizeDirection_t = c_int;
pub const MXQ_QUANTIZE_ROWWISE: mxqQuantizeDirection_t = 1;
pub const MXQ_QUANTIZE_COLUMNWISE: mxqQuantizeDirection_t = 2;
pub const MXQ_QUANTIZE_BOTH: mxqQuantizeDirection_t = 3;

/// Grouping of the rows of a quantized tensor (MoE).
pub type mxqGrouping_t = c_int;
pub const MXQ_GROUPING_NONE: mxqGrouping_t = 0;
pub const MXQ_GROUPING_ROWS: mxqGrouping_t = 1;

/// Fused prologue of the quantizer.
pub type mxqFusion_t = c_int;
pub const MXQ_FUSION_NONE: mxqFusion_t = 0;
pub const MXQ_FUSION_SWIGLU: mxqFusion_t = 1;

/// Execution argument slots. A plan documents which slots it reads and writes.
pub type mxqArgSlot_t = c_int;
pub const MXQ_ARG_X: mxqArgSlot_t = 1;
pub const MXQ_ARG_ROWWISE_DATA: mxqArgSlot_t = 2;
pub const MXQ_ARG_ROWWISE_SCALES: mxqArgSlot_t = 3;
pub const MXQ_ARG_COLWISE_DATA: mxqArgSlot_t = 4;
pub const MXQ_ARG_COLWISE_SCALES: mxqArgSlot_t = 5;
pub const MXQ_ARG_GROUP_OFFSETS: mxqArgSlot_t = 6;
pub const MXQ_ARG_AMAX: mxqArgSlot_t = 7;
pub const MXQ_ARG_ACTIVATION: mxqArgSlot_t = 8;
pub const MXQ_ARG_A_DATA: mxqArgSlot_t = 20;
pub const MXQ_ARG_A_SCALES: mxqArgSlot_t = 21;
pub const MXQ_ARG_B_DATA: mxqArgSlot_t = 22;
pub const MXQ_ARG_B_SCALES: mxqArgSlot_t = 23;
pub const MXQ_ARG_D: mxqArgSlot_t = 24;
pub const MXQ_ARG_Q_DATA: mxqArgSlot_t = 40;
pub const MXQ_ARG_Q_SCALES: mxqArgSlot_t = 41;
pub const MXQ_ARG_K_DATA: mxqArgSlot_t = 42;
pub const MXQ_ARG_K_SCALES: mxqArgSlot_t = 43;
pub const MXQ_ARG_V_DATA: mxqArgSlot_t = 44;
pub const MXQ_ARG_V_SCALES: mxqArgSlot_t = 45;
pub const MXQ_ARG_O: mxqArgSlot_t = 46;
pub const MXQ_ARG_LSE: mxqArgSlot_t = 47;
pub const MXQ_ARG_DO_DATA: mxqArgSlot_t = 48;
pub const MXQ_ARG_DO_SCALES: mxqArgSlot_t = 49;
pub const MXQ_ARG_DO: mxqArgSlot_t = 50;
pub const MXQ_ARG_Q_T_DATA: mxqArgSlot_t = 51;
pub const MXQ_ARG_Q_T_SCALES: mxqArgSlot_t = 52;
pub const MXQ_ARG_K_T_DATA: mxqArgSlot_t = 53;
pub const MXQ_ARG_K_T_SCALES: mxqArgSlot_t = 54;
pub const MXQ_ARG_DO_T_DATA: mxqArgSlot_t = 55;
pub const MXQ_ARG_DO_T_SCALES: mxqArgSlot_t = 56;
pub const MXQ_ARG_DQ: mxqArgSlot_t = 57;
pub const MXQ_ARG_DK: mxqArgSlot_t = 58;
pub const MXQ_ARG_DV: mxqArgSlot_t = 59;
pub const MXQ_ARG_CU_SEQLENS_Q: mxqArgSlot_t = 60;
pub const MXQ_ARG_CU_SEQLENS_KV: mxqArgSlot_t = 61;

/// Log levels (the environment's MXQ_LOG_LEVEL / MXQ_LOG_FILE apply until a setter is called).
pub type mxqLogLevel_t = c_int;
pub const MXQ_LOG_OFF: mxqLogLevel_t = 0;
pub const MXQ_LOG_ERROR: mxqLogLevel_t = 1;
pub const MXQ_LOG_WARN: mxqLogLevel_t = 2;
pub const MXQ_LOG_INFO: mxqLogLevel_t = 3;
pub const MXQ_LOG_DEBUG: mxqLogLevel_t = 4;
pub const MXQ_LOG_TRACE: mxqLogLevel_t = 5;

/// Quantize plan attributes (the header gives each one's C type and default).
pub type mxqQuantizeAttribute_t = c_int;
pub const MXQ_QUANTIZE_ATTR_INPUT_DTYPE: mxqQuantizeAttribute_t = 0;
pub const MXQ_QUANTIZE_ATTR_OUTPUT_DTYPE: mxqQuantizeAttribute_t = 1;
pub const MXQ_QUANTIZE_ATTR_SCALE_MODE: mxqQuantizeAttribute_t = 2;
pub const MXQ_QUANTIZE_ATTR_NONFINITE_POLICY: mxqQuantizeAttribute_t = 3;
pub const MXQ_QUANTIZE_ATTR_DIRECTION: mxqQuantizeAttribute_t = 4;
pub const MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED: mxqQuantizeAttribute_t = 5;
pub const MXQ_QUANTIZE_ATTR_SCALE_LAYOUT: mxqQuantizeAttribute_t = 6;
pub const MXQ_QUANTIZE_ATTR_BLOCK_2D: mxqQuantizeAttribute_t = 7;
pub const MXQ_QUANTIZE_ATTR_ROWS: mxqQuantizeAttribute_t = 8;
pub const MXQ_QUANTIZE_ATTR_COLS: mxqQuantizeAttribute_t = 9;
pub const MXQ_QUANTIZE_ATTR_BATCH: mxqQuantizeAttribute_t = 10;
pub const MXQ_QUANTIZE_ATTR_INPUT_LD: mxqQuantizeAttribute_t = 11;
pub const MXQ_QUANTIZE_ATTR_INPUT_BATCH_STRIDE: mxqQuantizeAttribute_t = 12;
pub const MXQ_QUANTIZE_ATTR_GROUPING: mxqQuantizeAttribute_t = 13;
pub const MXQ_QUANTIZE_ATTR_NUM_GROUPS: mxqQuantizeAttribute_t = 14;
pub const MXQ_QUANTIZE_ATTR_GROUP_OFFSETS_DTYPE: mxqQuantizeAttribute_t = 15;
pub const MXQ_QUANTIZE_ATTR_FUSION: mxqQuantizeAttribute_t = 16;

/// Dequantize plan attributes (the header gives each one's C type and default).
pub type mxqDequantizeAttribute_t = c_int;
pub const MXQ_DEQUANTIZE_ATTR_INPUT_DTYPE: mxqDequantizeAttribute_t = 0;
pub const MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE: mxqDequantizeAttribute_t = 1;
pub const MXQ_DEQUANTIZE_ATTR_DIRECTION: mxqDequantizeAttribute_t = 2;
pub const MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED: mxqDequantizeAttribute_t = 3;
pub const MXQ_DEQUANTIZE_ATTR_SCALE_LAYOUT: mxqDequantizeAttribute_t = 4;
pub const MXQ_DEQUANTIZE_ATTR_ROWS: mxqDequantizeAttribute_t = 5;
pub const MXQ_DEQUANTIZE_ATTR_COLS: mxqDequantizeAttribute_t = 6;
pub const MXQ_DEQUANTIZE_ATTR_BATCH: mxqDequantizeAttribute_t = 7;
pub const MXQ_DEQUANTIZE_ATTR_OUTPUT_LD: mxqDequantizeAttribute_t = 8;
pub const MXQ_DEQUANTIZE_ATTR_GROUPING: mxqDequantizeAttribute_t = 9;
pub const MXQ_DEQUANTIZE_ATTR_NUM_GROUPS: mxqDequantizeAttribute_t = 10;
pub const MXQ_DEQUANTIZE_ATTR_GROUP_OFFSETS_DTYPE: mxqDequantizeAttribute_t = 11;

/// Grouped GEMM grouping (none / M-grouped fprop, dgrad / K-grouped wgrad).
pub type mxqGemmGrouping_t = c_int;
pub const MXQ_GEMM_GROUPING_NONE: mxqGemmGrouping_t = 0;
pub const MXQ_GEMM_GROUPING_M: mxqGemmGrouping_t = 1;
pub const MXQ_GEMM_GROUPING_K: mxqGemmGrouping_t = 2;

/// Grouped GEMM plan attributes (the header gives each one's C type and default).
pub type mxqGroupedGemmAttribute_t = c_int;
pub const MXQ_GEMM_ATTR_GROUPING: mxqGroupedGemmAttribute_t = 0;
pub const MXQ_GEMM_ATTR_M: mxqGroupedGemmAttribute_t = 1;
pub const MXQ_GEMM_ATTR_N: mxqGroupedGemmAttribute_t = 2;
pub const MXQ_GEMM_ATTR_K: mxqGroupedGemmAttribute_t = 3;
pub const MXQ_GEMM_ATTR_NUM_GROUPS: mxqGroupedGemmAttribute_t = 4;
pub const MXQ_GEMM_ATTR_BATCH: mxqGroupedGemmAttribute_t = 5;
pub const MXQ_GEMM_ATTR_A_DTYPE: mxqGroupedGemmAttribute_t = 6;
pub const MXQ_GEMM_ATTR_B_DTYPE: mxqGroupedGemmAttribute_t = 7;
pub const MXQ_GEMM_ATTR_D_DTYPE: mxqGroupedGemmAttribute_t = 8;
pub const MXQ_GEMM_ATTR_SCALE_LAYOUT: mxqGroupedGemmAttribute_t = 9;
pub const MXQ_GEMM_ATTR_ALPHA: mxqGroupedGemmAttribute_t = 10;
pub const MXQ_GEMM_ATTR_ACCUMULATE: mxqGroupedGemmAttribute_t = 11;
pub const MXQ_GEMM_ATTR_GROUP_OFFSETS_DTYPE: mxqGroupedGemmAttribute_t = 12;
pub const MXQ_GEMM_ATTR_B_BLOCK_2D: mxqGroupedGemmAttribute_t = 13;
pub const MXQ_GEMM_ATTR_WORKSPACE_LIMIT: mxqGroupedGemmAttribute_t = 14;

/// Attention tensor layout.
pub type mxqAttentionLayout_t = c_int;
pub const MXQ_ATTN_LAYOUT_BHSD: mxqAttentionLayout_t = 0;
pub const MXQ_ATTN_LAYOUT_BSHD: mxqAttentionLayout_t = 1;

/// Attention mask.
pub type mxqAttentionMask_t = c_int;
pub const MXQ_ATTN_MASK_NONE: mxqAttentionMask_t = 0;
pub const MXQ_ATTN_MASK_CAUSAL_TOP_LEFT: mxqAttentionMask_t = 1;
pub const MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT: mxqAttentionMask_t = 2;

/// Attention forward or backward.
pub type mxqAttentionDirection_t = c_int;
pub const MXQ_ATTN_FORWARD: mxqAttentionDirection_t = 0;
pub const MXQ_ATTN_BACKWARD: mxqAttentionDirection_t = 1;

/// Attention plan attributes (the header gives each one's C type and default).
pub type mxqAttentionAttribute_t = c_int;
pub const MXQ_ATTN_ATTR_DIRECTION: mxqAttentionAttribute_t = 0;
pub const MXQ_ATTN_ATTR_BATCH: mxqAttentionAttribute_t = 1;
pub const MXQ_ATTN_ATTR_HEADS_Q: mxqAttentionAttribute_t = 2;
pub const MXQ_ATTN_ATTR_HEADS_KV: mxqAttentionAttribute_t = 3;
pub const MXQ_ATTN_ATTR_SEQLEN_Q: mxqAttentionAttribute_t = 4;
pub const MXQ_ATTN_ATTR_SEQLEN_KV: mxqAttentionAttribute_t = 5;
pub const MXQ_ATTN_ATTR_HEAD_DIM: mxqAttentionAttribute_t = 6;
pub const MXQ_ATTN_ATTR_LAYOUT: mxqAttentionAttribute_t = 7;
pub const MXQ_ATTN_ATTR_MASK: mxqAttentionAttribute_t = 8;
pub const MXQ_ATTN_ATTR_SOFTMAX_SCALE: mxqAttentionAttribute_t = 9;
pub const MXQ_ATTN_ATTR_P_SCALE: mxqAttentionAttribute_t = 10;
pub const MXQ_ATTN_ATTR_SCALE_LAYOUT: mxqAttentionAttribute_t = 11;
pub const MXQ_ATTN_ATTR_VARLEN: mxqAttentionAttribute_t = 12;
pub const MXQ_ATTN_ATTR_DETERMINISTIC: mxqAttentionAttribute_t = 13;
pub const MXQ_ATTN_ATTR_QKV_DTYPE: mxqAttentionAttribute_t = 14;

// ---- structs and callbacks -----------------------------------------------------------------------

/// One execution argument. `ptr` is a device pointer (host memory on a CPU handle).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct mxqExecArg_t {
    pub slot: i32,
    pub reserved: i32,
    pub ptr: *mut c_void,
}

/// Log callback (see `mxqLoggerSetCallback`); must not unwind and must not call mxq.
pub type mxqLogCallback_t =
    Option<unsafe extern "C" fn(level: mxqLogLevel_t, message: *const c_char, userData: *mut c_void)>;

// ---- functions -----------------------------------------------------------------------------------

extern "C" {
    pub fn mxqGetVersion() -> u32;
    pub fn mxqGetBuildInfo() -> *const c_char;
    pub fn mxqGetStatusName(status: mxqStatus_t) -> *const c_char;
    pub fn mxqGetStatusString(status: mxqStatus_t) -> *const c_char;
    pub fn mxqGetLastErrorMessage() -> *const c_char;
    pub fn mxqLoggerSetLevel(level: mxqLogLevel_t) -> mxqStatus_t;
    pub fn mxqLoggerGetLevel(level: *mut mxqLogLevel_t) -> mxqStatus_t;
    pub fn mxqLoggerSetFile(path: *const c_char) -> mxqStatus_t;
    pub fn mxqLoggerSetCallback(callback: mxqLogCallback_t, userData: *mut c_void) -> mxqStatus_t;
    pub fn mxqCreate(handle: *mut mxqHandle_t) -> mxqStatus_t;
    pub fn mxqCreateWithBackend(handle: *mut mxqHandle_t, backend: mxqBackend_t, deviceOrdinal: c_int) -> mxqStatus_t;
    pub fn mxqDestroy(handle: mxqHandle_t) -> mxqStatus_t;
    pub fn mxqGetBackend(handle: mxqHandle_t, backend: *mut mxqBackend_t) -> mxqStatus_t;
    pub fn mxqGetDevice(handle: mxqHandle_t, deviceOrdinal: *mut c_int, computeCapability: *mut c_int) -> mxqStatus_t;
    pub fn mxqQuantizePlanCreate(handle: mxqHandle_t, plan: *mut mxqQuantizePlan_t) -> mxqStatus_t;
    pub fn mxqQuantizePlanSetAttribute(
        plan: mxqQuantizePlan_t,
        attr: mxqQuantizeAttribute_t,
        buf: *const c_void,
        sizeInBytes: usize,
    ) -> mxqStatus_t;
    pub fn mxqQuantizePlanGetAttribute(
        plan: mxqQuantizePlan_t,
        attr: mxqQuantizeAttribute_t,
        buf: *mut c_void,
        sizeInBytes: usize,
        sizeWritten: *mut usize,
    ) -> mxqStatus_t;
    pub fn mxqQuantizePlanFinalize(plan: mxqQuantizePlan_t) -> mxqStatus_t;
    pub fn mxqQuantizePlanGetWorkspaceSize(plan: mxqQuantizePlan_t, bytes: *mut usize) -> mxqStatus_t;
    pub fn mxqQuantizePlanGetOutputSize(plan: mxqQuantizePlan_t, slot: mxqArgSlot_t, bytes: *mut usize) -> mxqStatus_t;
    pub fn mxqQuantizeExecute(
        handle: mxqHandle_t,
        plan: mxqQuantizePlan_t,
        args: *const mxqExecArg_t,
        numArgs: c_int,
        workspace: *mut c_void,
        workspaceBytes: usize,
        stream: mxqStream_t,
    ) -> mxqStatus_t;
    pub fn mxqQuantizePlanDestroy(plan: mxqQuantizePlan_t) -> mxqStatus_t;
    pub fn mxqDequantizePlanCreate(handle: mxqHandle_t, plan: *mut mxqDequantizePlan_t) -> mxqStatus_t;
    pub fn mxqDequantizePlanSetAttribute(
        plan: mxqDequantizePlan_t,
        attr: mxqDequantizeAttribute_t,
        buf: *const c_void,
        sizeInBytes: usize,
    ) -> mxqStatus_t;
    pub fn mxqDequantizePlanGetAttribute(
        plan: mxqDequantizePlan_t,
        attr: mxqDequantizeAttribute_t,
        buf: *mut c_void,
        sizeInBytes: usize,
        sizeWritten: *mut usize,
    ) -> mxqStatus_t;
    pub fn mxqDequantizePlanFinalize(plan: mxqDequantizePlan_t) -> mxqStatus_t;
    pub fn mxqDequantizePlanGetWorkspaceSize(plan: mxqDequantizePlan_t, bytes: *mut usize) -> mxqStatus_t;
    pub fn mxqDequantizeExecute(
        handle: mxqHandle_t,
        plan: mxqDequantizePlan_t,
        args: *const mxqExecArg_t,
        numArgs: c_int,
        workspace: *mut c_void,
        workspaceBytes: usize,
        stream: mxqStream_t,
    ) -> mxqStatus_t;
    pub fn mxqDequantizePlanDestroy(plan: mxqDequantizePlan_t) -> mxqStatus_t;
    pub fn mxqGroupedGemmPlanCreate(handle: mxqHandle_t, plan: *mut mxqGroupedGemmPlan_t) -> mxqStatus_t;
    pub fn mxqGroupedGemmPlanSetAttribute(
        plan: mxqGroupedGemmPlan_t,
        attr: mxqGroupedGemmAttribute_t,
        buf: *const c_void,
        sizeInBytes: usize,
    ) -> mxqStatus_t;
    pub fn mxqGroupedGemmPlanGetAttribute(
        plan: mxqGroupedGemmPlan_t,
        attr: mxqGroupedGemmAttribute_t,
        buf: *mut c_void,
        sizeInBytes: usize,
        sizeWritten: *mut usize,
    ) -> mxqStatus_t;
    pub fn mxqGroupedGemmPlanFinalize(plan: mxqGroupedGemmPlan_t) -> mxqStatus_t;
    pub fn mxqGroupedGemmPlanGetWorkspaceSize(plan: mxqGroupedGemmPlan_t, bytes: *mut usize) -> mxqStatus_t;
    pub fn mxqGroupedGemmExecute(
        handle: mxqHandle_t,
        plan: mxqGroupedGemmPlan_t,
        args: *const mxqExecArg_t,
        numArgs: c_int,
        workspace: *mut c_void,
        workspaceBytes: usize,
        stream: mxqStream_t,
    ) -> mxqStatus_t;
    pub fn mxqGroupedGemmPlanDestroy(plan: mxqGroupedGemmPlan_t) -> mxqStatus_t;
    pub fn mxqAttentionPlanCreate(handle: mxqHandle_t, plan: *mut mxqAttentionPlan_t) -> mxqStatus_t;
    pub fn mxqAttentionPlanSetAttribute(
        plan: mxqAttentionPlan_t,
        attr: mxqAttentionAttribute_t,
        buf: *const c_void,
        sizeInBytes: usize,
    ) -> mxqStatus_t;
    pub fn mxqAttentionPlanGetAttribute(
        plan: mxqAttentionPlan_t,
        attr: mxqAttentionAttribute_t,
        buf: *mut c_void,
        sizeInBytes: usize,
        sizeWritten: *mut usize,
    ) -> mxqStatus_t;
    pub fn mxqAttentionPlanFinalize(plan: mxqAttentionPlan_t) -> mxqStatus_t;
    pub fn mxqAttentionPlanGetWorkspaceSize(plan: mxqAttentionPlan_t, bytes: *mut usize) -> mxqStatus_t;
    pub fn mxqAttentionExecute(
        handle: mxqHandle_t,
        plan: mxqAttentionPlan_t,
        args: *const mxqExecArg_t,
        numArgs: c_int,
        workspace: *mut c_void,
        workspaceBytes: usize,
        stream: mxqStream_t,
    ) -> mxqStatus_t;
    pub fn mxqAttentionPlanDestroy(plan: mxqAttentionPlan_t) -> mxqStatus_t;
    pub fn mxqSwizzleScales(
        handle: mxqHandle_t,
        toSwizzled: c_int,
        batch: i64,
        rows: i64,
        scaleCols: i64,
        linearLd: i64,
        src: *const c_void,
        dst: *mut c_void,
        stream: mxqStream_t,
    ) -> mxqStatus_t;
    pub fn mxqSwizzledScaleBytes(batch: i64, rows: i64, scaleCols: i64) -> usize;
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{align_of, size_of};

    #[test]
    fn exec_arg_layout_matches_c() {
        // {int32 slot; int32 reserved; void *ptr;} on an LP64 target.
        assert_eq!(size_of::<mxqExecArg_t>(), 8 + size_of::<*mut c_void>());
        assert_eq!(align_of::<mxqExecArg_t>(), align_of::<*mut c_void>());
        let a = mxqExecArg_t { slot: 0, reserved: 0, ptr: core::ptr::null_mut() };
        let base = &a as *const _ as usize;
        assert_eq!(&a.slot as *const _ as usize - base, 0);
        assert_eq!(&a.reserved as *const _ as usize - base, 4);
        assert_eq!(&a.ptr as *const _ as usize - base, 8);
    }

    #[test]
    fn callback_is_nullable_pointer() {
        assert_eq!(size_of::<mxqLogCallback_t>(), size_of::<*mut c_void>());
    }

    #[test]
    fn links_and_reports_matching_version() {
        // SAFETY: no arguments; documented never to fail.
        let v = unsafe { mxqGetVersion() };
        assert_eq!(v / 100, MXQ_VERSION / 100, "libmxq {v} is not the {MXQ_VERSION} these bindings declare");
    }

    #[test]
    fn status_names_round_trip() {
        extern crate std;
        // SAFETY: static NUL-terminated strings owned by the library.
        let name = unsafe { core::ffi::CStr::from_ptr(mxqGetStatusName(MXQ_STATUS_BAD_PARAM_SHAPE)) };
        assert_eq!(name.to_str().unwrap(), "MXQ_STATUS_BAD_PARAM_SHAPE");
        let unknown = unsafe { core::ffi::CStr::from_ptr(mxqGetStatusName(1999)) };
        assert_eq!(unknown.to_str().unwrap(), "MXQ_STATUS_UNKNOWN");
    }

    #[test]
    fn cpu_handle_lifecycle() {
        let mut h: mxqHandle_t = core::ptr::null_mut();
        unsafe {
            assert_eq!(mxqCreateWithBackend(&mut h, MXQ_BACKEND_CPU, 0), MXQ_STATUS_SUCCESS);
            assert!(!h.is_null());
            let mut b: mxqBackend_t = -1;
            assert_eq!(mxqGetBackend(h, &mut b), MXQ_STATUS_SUCCESS);
            assert_eq!(b, MXQ_BACKEND_CPU);
            assert_eq!(mxqDestroy(h), MXQ_STATUS_SUCCESS);
            assert_eq!(mxqDestroy(core::ptr::null_mut()), MXQ_STATUS_SUCCESS);
            assert_eq!(
                mxqCreateWithBackend(core::ptr::null_mut(), MXQ_BACKEND_CPU, 0),
                MXQ_STATUS_BAD_PARAM_NULL_POINTER
            );
        }
    }
}
