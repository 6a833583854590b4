//! Safe Rust API of libmxq: MXFP8 quantization, grouped GEMM and attention.
//!
//! The shape follows the C API (`include/mxq/mxq.h`, the reference for every attribute and slot):
//! a [`Handle`] binds a backend; a plan is built from typed attributes and finalized
//! ([`QuantizePlan::builder`] ... `.build()?`); a finalized plan executes on (slot, buffer) arguments
//! ([`Args`]). Ownership maps onto the C rules: handles and plans are destroyed on drop, a plan
//! borrows its handle (so it cannot outlive it), and a handle is `Send` but not `Sync` (one thread at
//! a time, as the header requires).
//!
//! Buffers: on a CPU handle, arguments are slices and [`Plan::execute`] is safe: it checks, before
//! calling the library, that every slice is at least as large as the plan reads or writes, that
//! written slots were passed as `&mut`, and that host memory goes to a CPU handle. The sizes of FP8
//! operands come from the library itself (`mxqQuantizePlanGetOutputSize` of a quantize plan of the
//! same shape), never from formulas re-derived here. On a CUDA handle, arguments are raw device
//! pointers and [`Plan::execute_device`] is `unsafe`: nothing on the host can check device memory.
//!
//! Errors are [`Error`]s carrying the numeric [`Status`] (unknown codes included) and the library's
//! message for the failing call.
//!
//! ```no_run
//! use mxq::{ArgSlot, Args, DataType, Handle, QuantizePlan, ScaleLayout};
//! let h = Handle::cpu()?;
//! let x: Vec<f32> = (0..64 * 96).map(|i| (i as f32).sin()).collect();
//! let plan = QuantizePlan::builder(&h)
//!     .input_dtype(DataType::Fp32).rows(64).cols(96).scale_layout(ScaleLayout::Linear)
//!     .build()?;
//! let mut q = vec![0u8; plan.output_size(ArgSlot::RowwiseData)?];
//! let mut s = vec![0u8; plan.output_size(ArgSlot::RowwiseScales)?];
//! plan.execute(&Args::new().input(ArgSlot::X, &x)
//!     .output(ArgSlot::RowwiseData, &mut q).output(ArgSlot::RowwiseScales, &mut s))?;
//! # Ok::<(), mxq::Error>(())
//! ```
//!
//! A plan cannot outlive its handle (the C library would refuse to destroy the handle):
//!
//! ```compile_fail
//! let plan = {
//!     let h = mxq::Handle::cpu().unwrap();
//!     mxq::QuantizePlan::builder(&h).rows(32).cols(32).build().unwrap()
//! };
//! ```
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::fmt;
use std::ptr::NonNull;

pub use mxq_sys as sys;

mod plan;
pub use plan::{
    Args, Attention, AttentionPlan, AttributeValue, Dequantize, DequantizePlan, Element, GroupedGemm, GroupedGemmPlan,
    Op, Plan, PlanBuilder, Quantize, QuantizePlan,
};

// ---- status and errors ---------------------------------------------------------------------------

/// A status code. Any `i32` is a valid `Status`: codes added to the library after these bindings were
/// written are kept as they are and classified by [`Status::category`].
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Status(pub i32);

macro_rules! statuses {
    ($($name:ident = $c:ident),* $(,)?) => {
        impl Status { $(pub const $name: Status = Status(sys::$c);)* }
    };
}

statuses! {
    SUCCESS = MXQ_STATUS_SUCCESS,
    BAD_PARAM = MXQ_STATUS_BAD_PARAM,
    BAD_PARAM_NULL_POINTER = MXQ_STATUS_BAD_PARAM_NULL_POINTER,
    BAD_PARAM_UNKNOWN_ATTRIBUTE = MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE,
    BAD_PARAM_ATTRIBUTE_SIZE = MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE,
    BAD_PARAM_INVALID_VALUE = MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
    BAD_PARAM_SHAPE = MXQ_STATUS_BAD_PARAM_SHAPE,
    BAD_PARAM_MISALIGNED = MXQ_STATUS_BAD_PARAM_MISALIGNED,
    BAD_PARAM_WORKSPACE = MXQ_STATUS_BAD_PARAM_WORKSPACE,
    BAD_PARAM_GROUP_OFFSETS = MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS,
    BAD_PARAM_ARGUMENT = MXQ_STATUS_BAD_PARAM_ARGUMENT,
    BAD_PARAM_NOT_FINALIZED = MXQ_STATUS_BAD_PARAM_NOT_FINALIZED,
    BAD_PARAM_ALREADY_FINALIZED = MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED,
    BAD_PARAM_HANDLE_MISMATCH = MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH,
    NOT_SUPPORTED = MXQ_STATUS_NOT_SUPPORTED,
    NOT_SUPPORTED_DTYPE = MXQ_STATUS_NOT_SUPPORTED_DTYPE,
    NOT_SUPPORTED_ARCH = MXQ_STATUS_NOT_SUPPORTED_ARCH,
    NOT_SUPPORTED_COMBINATION = MXQ_STATUS_NOT_SUPPORTED_COMBINATION,
    NOT_SUPPORTED_BACKEND = MXQ_STATUS_NOT_SUPPORTED_BACKEND,
    INTERNAL_ERROR = MXQ_STATUS_INTERNAL_ERROR,
    ALLOC_FAILED = MXQ_STATUS_ALLOC_FAILED,
    CUDA_DRIVER_NOT_FOUND = MXQ_STATUS_CUDA_DRIVER_NOT_FOUND,
    CUDA_NO_DEVICE = MXQ_STATUS_CUDA_NO_DEVICE,
    CUDA_ERROR = MXQ_STATUS_CUDA_ERROR,
    CUDA_KERNEL_LOAD_FAILED = MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED,
}

/// The status categories of the header (code / 1000).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    Success,
    BadParam,
    NotSupported,
    Internal,
    Cuda,
    Unknown,
}

fn static_str(p: *const c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the library documents these strings as static, NUL-terminated and owned by it.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

impl Status {
    pub fn code(self) -> i32 {
        self.0
    }
    pub fn is_success(self) -> bool {
        self.0 == sys::MXQ_STATUS_SUCCESS
    }
    /// The library's symbolic name ("MXQ_STATUS_BAD_PARAM_SHAPE"; "MXQ_STATUS_UNKNOWN" if unknown).
    pub fn name(self) -> &'static str {
        // SAFETY: any code is accepted; the result is a static string.
        static_str(unsafe { sys::mxqGetStatusName(self.0) })
    }
    /// The library's one-sentence description.
    pub fn description(self) -> &'static str {
        // SAFETY: as above.
        static_str(unsafe { sys::mxqGetStatusString(self.0) })
    }
    pub fn category(self) -> Category {
        match self.0 {
            0 => Category::Success,
            1000..=1999 => Category::BadParam,
            2000..=2999 => Category::NotSupported,
            3000..=3999 => Category::Internal,
            4000..=4999 => Category::Cuda,
            _ => Category::Unknown,
        }
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Status({} {})", self.0, self.name())
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed call: the status and the detailed message of that failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    /// The error of the call that just failed on this thread (its thread-local message).
    fn last(status: Status) -> Error {
        // SAFETY: no arguments; returns a thread-local string valid until the next failing call,
        // copied out immediately.
        let message = static_str(unsafe { sys::mxqGetLastErrorMessage() }).to_owned();
        Error { status, message }
    }
    /// A check made by these bindings before calling the library, reported the same way.
    pub(crate) fn binding(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }
    pub fn status(&self) -> Status {
        self.status
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    pub fn category(&self) -> Category {
        self.status.category()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.status.name(), self.status.0, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn check(code: sys::mxqStatus_t) -> Result<()> {
    if code == sys::MXQ_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::last(Status(code)))
    }
}

// ---- enums ----------------------------------------------------------------------------------------

macro_rules! c_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $c:ident),* $(,)? }) => {
        $(#[$m])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum $name { $($(#[$vm])* $variant = sys::$c),* }

        impl $name {
            /// The C value.
            pub fn raw(self) -> i32 {
                self as i32
            }
            /// The variant for a C value, None for values these bindings do not know.
            pub fn from_raw(v: i32) -> Option<Self> {
                match v {
                    $(x if x == sys::$c => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

c_enum!(
    /// `mxqBackend_t`.
    Backend { Cuda = MXQ_BACKEND_CUDA, Cpu = MXQ_BACKEND_CPU }
);
c_enum!(
    /// `mxqDataType_t`.
    DataType {
        Fp32 = MXQ_DTYPE_FP32, Fp16 = MXQ_DTYPE_FP16, Bf16 = MXQ_DTYPE_BF16, E4m3 = MXQ_DTYPE_E4M3,
        E5m2 = MXQ_DTYPE_E5M2, Ue8m0 = MXQ_DTYPE_UE8M0, Int32 = MXQ_DTYPE_INT32, Int64 = MXQ_DTYPE_INT64,
    }
);
c_enum!(
    /// `mxqScaleMode_t`.
    ScaleMode { Rceil = MXQ_SCALE_MODE_RCEIL, Floor = MXQ_SCALE_MODE_FLOOR, Ceil = MXQ_SCALE_MODE_CEIL, Even = MXQ_SCALE_MODE_EVEN }
);
c_enum!(
    /// `mxqNonfinitePolicy_t`.
    NonfinitePolicy { TeCompatible = MXQ_NONFINITE_TE_COMPATIBLE, Propagate = MXQ_NONFINITE_PROPAGATE }
);
c_enum!(
    /// `mxqScaleLayout_t`.
    ScaleLayout { Swizzled128x4 = MXQ_SCALE_LAYOUT_SWIZZLED_128x4, Linear = MXQ_SCALE_LAYOUT_LINEAR }
);
c_enum!(
    /// `mxqQuantizeDirection_t`.
    Direction { Rowwise = MXQ_QUANTIZE_ROWWISE, Columnwise = MXQ_QUANTIZE_COLUMNWISE, Both = MXQ_QUANTIZE_BOTH }
);
c_enum!(
    /// `mxqGrouping_t`.
    Grouping { None = MXQ_GROUPING_NONE, Rows = MXQ_GROUPING_ROWS }
);
c_enum!(
    /// `mxqFusion_t`.
    Fusion { None = MXQ_FUSION_NONE, Swiglu = MXQ_FUSION_SWIGLU }
);
c_enum!(
    /// `mxqGemmGrouping_t`.
    GemmGrouping { None = MXQ_GEMM_GROUPING_NONE, M = MXQ_GEMM_GROUPING_M, K = MXQ_GEMM_GROUPING_K }
);
c_enum!(
    /// `mxqAttentionLayout_t`.
    AttentionLayout { Bhsd = MXQ_ATTN_LAYOUT_BHSD, Bshd = MXQ_ATTN_LAYOUT_BSHD }
);
c_enum!(
    /// `mxqAttentionMask_t`.
    AttentionMask {
        None = MXQ_ATTN_MASK_NONE, CausalTopLeft = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT,
        CausalBottomRight = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT,
    }
);
c_enum!(
    /// `mxqAttentionDirection_t`.
    AttentionDirection { Forward = MXQ_ATTN_FORWARD, Backward = MXQ_ATTN_BACKWARD }
);
c_enum!(
    /// `mxqLogLevel_t`.
    LogLevel {
        Off = MXQ_LOG_OFF, Error = MXQ_LOG_ERROR, Warn = MXQ_LOG_WARN, Info = MXQ_LOG_INFO,
        Debug = MXQ_LOG_DEBUG, Trace = MXQ_LOG_TRACE,
    }
);
c_enum!(
    /// `mxqArgSlot_t`: execution argument slots (which ones a plan reads and writes: the header).
    ArgSlot {
        X = MXQ_ARG_X, RowwiseData = MXQ_ARG_ROWWISE_DATA, RowwiseScales = MXQ_ARG_ROWWISE_SCALES,
        ColwiseData = MXQ_ARG_COLWISE_DATA, ColwiseScales = MXQ_ARG_COLWISE_SCALES,
        GroupOffsets = MXQ_ARG_GROUP_OFFSETS, Amax = MXQ_ARG_AMAX, Activation = MXQ_ARG_ACTIVATION,
        AData = MXQ_ARG_A_DATA, AScales = MXQ_ARG_A_SCALES, BData = MXQ_ARG_B_DATA, BScales = MXQ_ARG_B_SCALES,
        D = MXQ_ARG_D,
        QData = MXQ_ARG_Q_DATA, QScales = MXQ_ARG_Q_SCALES, KData = MXQ_ARG_K_DATA, KScales = MXQ_ARG_K_SCALES,
        VData = MXQ_ARG_V_DATA, VScales = MXQ_ARG_V_SCALES, O = MXQ_ARG_O, Lse = MXQ_ARG_LSE,
        DoData = MXQ_ARG_DO_DATA, DoScales = MXQ_ARG_DO_SCALES, Do = MXQ_ARG_DO,
        QTData = MXQ_ARG_Q_T_DATA, QTScales = MXQ_ARG_Q_T_SCALES, KTData = MXQ_ARG_K_T_DATA,
        KTScales = MXQ_ARG_K_T_SCALES, DoTData = MXQ_ARG_DO_T_DATA, DoTScales = MXQ_ARG_DO_T_SCALES,
        Dq = MXQ_ARG_DQ, Dk = MXQ_ARG_DK, Dv = MXQ_ARG_DV,
        CuSeqlensQ = MXQ_ARG_CU_SEQLENS_Q, CuSeqlensKv = MXQ_ARG_CU_SEQLENS_KV,
    }
);

impl DataType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DataType::Fp32 | DataType::Int32 => 4,
            DataType::Fp16 | DataType::Bf16 => 2,
            DataType::E4m3 | DataType::E5m2 | DataType::Ue8m0 => 1,
            DataType::Int64 => 8,
        }
    }
}

// ---- library-wide ---------------------------------------------------------------------------------

/// The runtime library version (major, minor, patch).
pub fn version() -> (u32, u32, u32) {
    // SAFETY: no arguments, never fails.
    let v = unsafe { sys::mxqGetVersion() };
    (v / 10000, v / 100 % 100, v % 100)
}

/// Version, git revision, CUDA toolkit, embedded architectures, compiler.
pub fn build_info() -> &'static str {
    // SAFETY: static string owned by the library.
    static_str(unsafe { sys::mxqGetBuildInfo() })
}

/// Bytes of a SWIZZLED_128x4 scale tensor [batch, rows, scale_cols] (None for invalid dimensions).
pub fn swizzled_scale_bytes(batch: i64, rows: i64, scale_cols: i64) -> Option<usize> {
    // SAFETY: plain integers in, 0 on overflow or invalid dimensions.
    let n = unsafe { sys::mxqSwizzledScaleBytes(batch, rows, scale_cols) };
    (n != 0).then_some(n)
}

/// The library's logger (levels, file, callback). Every function here is thread-safe.
pub mod log {
    use super::*;

    pub fn set_level(level: LogLevel) -> Result<()> {
        // SAFETY: plain value.
        check(unsafe { sys::mxqLoggerSetLevel(level.raw()) })
    }

    pub fn level() -> Result<LogLevel> {
        let mut v: sys::mxqLogLevel_t = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::mxqLoggerGetLevel(&mut v) })?;
        LogLevel::from_raw(v).ok_or_else(|| Error::binding(Status::INTERNAL_ERROR, format!("log level {v}")))
    }

    /// Append the log to `path`; None returns it to stderr.
    pub fn set_file(path: Option<&std::path::Path>) -> Result<()> {
        let c =
            match path {
                Some(p) => Some(CString::new(p.to_string_lossy().as_bytes()).map_err(|_| {
                    Error::binding(Status::BAD_PARAM_INVALID_VALUE, "log file path contains a NUL byte")
                })?),
                None => None,
            };
        // SAFETY: NUL-terminated string or NULL, copied by the library before returning.
        check(unsafe { sys::mxqLoggerSetFile(c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) })
    }

    type Callback = Box<dyn Fn(LogLevel, &str) + Send + Sync + 'static>;

    unsafe extern "C" fn trampoline(level: sys::mxqLogLevel_t, message: *const c_char, user: *mut c_void) {
        // SAFETY: `user` is the leaked Box<Callback> installed below; message is NUL-terminated.
        let cb = unsafe { &*(user as *const Callback) };
        let msg = if message.is_null() { "" } else { unsafe { CStr::from_ptr(message) }.to_str().unwrap_or("") };
        let level = LogLevel::from_raw(level).unwrap_or(LogLevel::Error);
        // A panic must not unwind into C.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cb(level, msg)));
    }

    /// Send log messages to `callback` instead of the file / stderr (None removes it). It runs on the
    /// thread that logs and must not call mxq. Each installed callback is kept alive for the rest of
    /// the process: the library may still be inside an older one while a new one is set.
    pub fn set_callback<F>(callback: Option<F>) -> Result<()>
    where
        F: Fn(LogLevel, &str) + Send + Sync + 'static,
    {
        match callback {
            // SAFETY: NULL removes the callback.
            None => check(unsafe { sys::mxqLoggerSetCallback(None, std::ptr::null_mut()) }),
            Some(f) => {
                let user = Box::into_raw(Box::new(Box::new(f) as Callback)) as *mut c_void;
                // SAFETY: trampoline matches mxqLogCallback_t; user stays valid forever (leaked).
                check(unsafe { sys::mxqLoggerSetCallback(Some(trampoline), user) })
            }
        }
    }
}

// ---- handle -----------------------------------------------------------------------------------------

/// A backend bound to a device (`mxqHandle_t`), destroyed on drop. `Send` but not `Sync`: the header
/// allows one thread at a time per handle; create one handle per thread.
pub struct Handle {
    raw: NonNull<sys::mxqContext>,
    backend: Backend,
    device: i32,
    compute_capability: i32,
}

// SAFETY: the library allows a handle to move between threads; !Sync keeps it to one at a time.
unsafe impl Send for Handle {}

impl Handle {
    /// A handle on `backend`; `device` is the CUDA ordinal (-1: the current device) or 0 / -1 for CPU.
    pub fn new(backend: Backend, device: i32) -> Result<Handle> {
        let mut raw: sys::mxqHandle_t = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::mxqCreateWithBackend(&mut raw, backend.raw(), device) })?;
        let raw = NonNull::new(raw).ok_or_else(|| Error::binding(Status::INTERNAL_ERROR, "NULL handle"))?;
        let (mut ordinal, mut cc) = (0, 0);
        // SAFETY: a live handle and valid out-pointers.
        let got = check(unsafe { sys::mxqGetDevice(raw.as_ptr(), &mut ordinal, &mut cc) });
        let handle = Handle { raw, backend, device: ordinal, compute_capability: cc };
        got.map(|_| handle)
    }

    /// The CPU reference backend: every operation, on host slices, synchronously.
    pub fn cpu() -> Result<Handle> {
        Handle::new(Backend::Cpu, 0)
    }

    /// A CUDA handle on `device` (None: the calling thread's current device).
    pub fn cuda(device: Option<i32>) -> Result<Handle> {
        Handle::new(Backend::Cuda, device.unwrap_or(-1))
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// CUDA device ordinal (-1 on the CPU backend).
    pub fn device(&self) -> i32 {
        self.device
    }

    /// Compute capability as major*10+minor (90 for Hopper; 0 on the CPU backend).
    pub fn compute_capability(&self) -> i32 {
        self.compute_capability
    }

    pub fn as_raw(&self) -> sys::mxqHandle_t {
        self.raw.as_ptr()
    }

    pub(crate) fn require_cpu(&self, what: &str) -> Result<()> {
        if self.backend == Backend::Cpu {
            Ok(())
        } else {
            Err(Error::binding(
                Status::BAD_PARAM_ARGUMENT,
                format!("{what}: host slices need a CPU handle; on a CUDA handle use the unsafe device-pointer calls"),
            ))
        }
    }

    /// Convert host UE8M0 scales [batch, rows, scale_cols] between LINEAR (row stride `linear_ld`)
    /// and SWIZZLED_128x4 (CPU handle; sizes checked).
    #[allow(clippy::too_many_arguments)]
    pub fn swizzle_scales(
        &self,
        to_swizzled: bool,
        batch: i64,
        rows: i64,
        scale_cols: i64,
        linear_ld: i64,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<()> {
        self.require_cpu("swizzle_scales")?;
        let swz = swizzled_scale_bytes(batch, rows, scale_cols)
            .ok_or_else(|| Error::binding(Status::BAD_PARAM_SHAPE, "invalid scale tensor dimensions"))?;
        let lin = usize::try_from(batch.saturating_mul(rows).saturating_mul(linear_ld))
            .map_err(|_| Error::binding(Status::BAD_PARAM_SHAPE, "invalid scale tensor dimensions"))?;
        let (need_src, need_dst) = if to_swizzled { (lin, swz) } else { (swz, lin) };
        if src.len() < need_src || dst.len() < need_dst {
            return Err(Error::binding(
                Status::BAD_PARAM_SHAPE,
                format!(
                    "swizzle_scales: src {} / dst {} bytes given, {need_src} / {need_dst} needed",
                    src.len(),
                    dst.len()
                ),
            ));
        }
        // SAFETY: CPU handle, both buffers checked large enough, distinct borrows cannot overlap.
        unsafe {
            self.swizzle_scales_device(
                to_swizzled,
                batch,
                rows,
                scale_cols,
                linear_ld,
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                std::ptr::null_mut(),
            )
        }
    }

    /// `mxqSwizzleScales` on raw device pointers, enqueued on `stream`.
    ///
    /// # Safety
    /// `src` and `dst` must be device memory of this handle's device (host memory on a CPU handle)
    /// large enough for the conversion, must not overlap, and must stay valid until it completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn swizzle_scales_device(
        &self,
        to_swizzled: bool,
        batch: i64,
        rows: i64,
        scale_cols: i64,
        linear_ld: i64,
        src: *const c_void,
        dst: *mut c_void,
        stream: sys::mxqStream_t,
    ) -> Result<()> {
        // SAFETY: forwarded to the caller.
        check(unsafe {
            sys::mxqSwizzleScales(
                self.as_raw(),
                to_swizzled as i32,
                batch,
                rows,
                scale_cols,
                linear_ld,
                src,
                dst,
                stream,
            )
        })
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // Plans borrow the handle, so none is alive here and destruction cannot be refused.
        // SAFETY: a live handle, destroyed once.
        unsafe { sys::mxqDestroy(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").field("backend", &self.backend).field("device", &self.device).finish()
    }
}

// ---- bfloat16 ---------------------------------------------------------------------------------------

/// A bfloat16 value as its bit pattern (the layout the library reads and writes).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Bf16 {
    /// Round to nearest even; NaN stays NaN.
    pub fn from_f32(x: f32) -> Bf16 {
        let b = x.to_bits();
        if x.is_nan() {
            return Bf16(((b >> 16) | 0x40) as u16);
        }
        Bf16((b.wrapping_add(0x7FFF + ((b >> 16) & 1)) >> 16) as u16)
    }
    /// Exact widening.
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}
