//! Plans: one generic builder / plan pair over the four operation families, typed attribute setters
//! per family, and execution arguments.
//!
//! The C lifecycle is create -> set attributes -> finalize -> execute -> destroy, and a finalized plan
//! is immutable. Here the unfinalized state is a [`PlanBuilder`] (setters chain and remember the first
//! failure, so one `?` at `build()` reports it with its message) and the finalized one a [`Plan`]; so
//! "set after finalize" cannot be written. Each family supplies its C entry points and a table of the
//! bytes each slot reads or writes, which is what makes [`Plan::execute`] on slices safe.

use std::cell::OnceCell;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::mem::size_of;
use std::ptr::NonNull;

use crate::{
    check, sys, ArgSlot, AttentionDirection, AttentionLayout, AttentionMask, Bf16, DataType, Direction, Error, Fusion,
    GemmGrouping, Grouping, Handle, NonfinitePolicy, Result, ScaleLayout, ScaleMode, Status,
};

mod sealed {
    pub trait Sealed {}
}

/// The C entry points of one plan family.
#[doc(hidden)]
pub struct Fns<R: 'static> {
    name: &'static str,
    create: unsafe extern "C" fn(sys::mxqHandle_t, *mut *mut R) -> sys::mxqStatus_t,
    set: unsafe extern "C" fn(*mut R, c_int, *const c_void, usize) -> sys::mxqStatus_t,
    get: unsafe extern "C" fn(*mut R, c_int, *mut c_void, usize, *mut usize) -> sys::mxqStatus_t,
    finalize: unsafe extern "C" fn(*mut R) -> sys::mxqStatus_t,
    workspace: unsafe extern "C" fn(*mut R, *mut usize) -> sys::mxqStatus_t,
    execute: unsafe extern "C" fn(
        sys::mxqHandle_t,
        *mut R,
        *const sys::mxqExecArg_t,
        c_int,
        *mut c_void,
        usize,
        sys::mxqStream_t,
    ) -> sys::mxqStatus_t,
    destroy: unsafe extern "C" fn(*mut R) -> sys::mxqStatus_t,
}

/// One operation family: [`Quantize`], [`Dequantize`], [`GroupedGemm`], [`Attention`].
pub trait Op: sealed::Sealed + Sized + 'static {
    #[doc(hidden)]
    type Raw: 'static;
    #[doc(hidden)]
    const FNS: Fns<Self::Raw>;
    /// (slot, bytes) for every slot the plan uses; None where the size is not known on the host.
    #[doc(hidden)]
    fn sizes(plan: &Plan<'_, Self>) -> Result<Vec<(ArgSlot, Option<usize>)>>;
    /// Whether the plan writes through `slot`.
    #[doc(hidden)]
    fn writes(plan: &Plan<'_, Self>, slot: ArgSlot) -> Result<bool>;
}

macro_rules! op {
    ($(#[$m:meta])* $ty:ident, $alias:ident) => {
        $(#[$m])*
        pub enum $ty {}
        impl sealed::Sealed for $ty {}
        /// A finalized plan of this family.
        pub type $alias<'h> = Plan<'h, $ty>;
    };
}

op!(
    /// `mxqQuantizePlan`: X -> MXFP8 data and scales.
    Quantize, QuantizePlan
);
op!(
    /// `mxqDequantizePlan`: MXFP8 data and scales -> X.
    Dequantize, DequantizePlan
);
op!(
    /// `mxqGroupedGemmPlan`: D = alpha * A * B^T (+ D), dense, M-grouped or K-grouped.
    GroupedGemm, GroupedGemmPlan
);
op!(
    /// `mxqAttentionPlan`: MXFP8 attention, forward or backward.
    Attention, AttentionPlan
);

macro_rules! fns {
    ($raw:ident, $name:literal, $create:ident, $set:ident, $get:ident, $fin:ident, $ws:ident, $exec:ident, $destroy:ident) => {
        Fns::<sys::$raw> {
            name: $name,
            create: sys::$create,
            set: sys::$set,
            get: sys::$get,
            finalize: sys::$fin,
            workspace: sys::$ws,
            execute: sys::$exec,
            destroy: sys::$destroy,
        }
    };
}

// ---- attribute values -------------------------------------------------------------------------------

/// The C types attributes have: `int32_t`, `int64_t` and `float`.
pub trait AttributeValue: sealed::Sealed + Copy + Default + 'static {}
impl sealed::Sealed for i32 {}
impl sealed::Sealed for i64 {}
impl sealed::Sealed for f32 {}
impl AttributeValue for i32 {}
impl AttributeValue for i64 {}
impl AttributeValue for f32 {}

/// A Rust value of an attribute and its C representation.
#[doc(hidden)]
pub trait IntoAttribute: Sized {
    type Raw: AttributeValue;
    fn into_attribute(self) -> Self::Raw;
    fn from_attribute(raw: Self::Raw) -> Option<Self>;
}

macro_rules! enum_attribute {
    ($($t:ty),*) => {$(
        impl IntoAttribute for $t {
            type Raw = i32;
            fn into_attribute(self) -> i32 { self.raw() }
            fn from_attribute(raw: i32) -> Option<Self> { <$t>::from_raw(raw) }
        }
    )*};
}
enum_attribute!(
    DataType,
    ScaleMode,
    NonfinitePolicy,
    ScaleLayout,
    Direction,
    Grouping,
    Fusion,
    GemmGrouping,
    AttentionLayout,
    AttentionMask,
    AttentionDirection
);

impl IntoAttribute for bool {
    type Raw = i32;
    fn into_attribute(self) -> i32 {
        self as i32
    }
    fn from_attribute(raw: i32) -> Option<bool> {
        Some(raw != 0)
    }
}
impl IntoAttribute for i64 {
    type Raw = i64;
    fn into_attribute(self) -> i64 {
        self
    }
    fn from_attribute(raw: i64) -> Option<i64> {
        Some(raw)
    }
}
impl IntoAttribute for f32 {
    type Raw = f32;
    fn into_attribute(self) -> f32 {
        self
    }
    fn from_attribute(raw: f32) -> Option<f32> {
        Some(raw)
    }
}

// ---- builder and plan -------------------------------------------------------------------------------

/// An unfinalized plan. Setters chain; the first failure is kept (with the library's message) and
/// returned by [`PlanBuilder::build`], which finalizes. Dropping a builder destroys the C plan.
pub struct PlanBuilder<'h, O: Op> {
    raw: Option<NonNull<O::Raw>>,
    handle: &'h Handle,
    error: Option<Error>,
}

impl<'h, O: Op> PlanBuilder<'h, O> {
    fn new(handle: &'h Handle) -> Self {
        let mut raw = std::ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        let status = check(unsafe { (O::FNS.create)(handle.as_raw(), &mut raw) });
        PlanBuilder { raw: NonNull::new(raw), handle, error: status.err() }
    }

    /// Set an attribute by its C id (`sys::MXQ_*_ATTR_*`) and C type; the typed setters call this.
    pub fn set_attribute<T: AttributeValue>(mut self, attr: i32, value: T) -> Self {
        if let (None, Some(p)) = (&self.error, self.raw) {
            // SAFETY: a live plan; buf points to a T of size_of::<T>() bytes, copied by the library.
            let r =
                check(unsafe { (O::FNS.set)(p.as_ptr(), attr, &value as *const T as *const c_void, size_of::<T>()) });
            self.error = r.err();
        }
        self
    }

    /// Validate the attributes and select the kernel (`mxq<Op>PlanFinalize`).
    pub fn build(mut self) -> Result<Plan<'h, O>> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let p = self.raw.take().ok_or_else(|| Error::binding(Status::INTERNAL_ERROR, "plan creation failed"))?;
        let plan = Plan { raw: p, handle: self.handle, sizes: OnceCell::new() };
        // SAFETY: a live, unfinalized plan. On failure `plan` is dropped, destroying it.
        check(unsafe { (O::FNS.finalize)(p.as_ptr()) })?;
        Ok(plan)
    }
}

impl<O: Op> Drop for PlanBuilder<'_, O> {
    fn drop(&mut self) {
        if let Some(p) = self.raw.take() {
            // SAFETY: a live plan, destroyed once.
            unsafe { (O::FNS.destroy)(p.as_ptr()) };
        }
    }
}

/// A finalized plan, bound to (and borrowing) the handle it was built on. Destroyed on drop.
pub struct Plan<'h, O: Op> {
    raw: NonNull<O::Raw>,
    handle: &'h Handle,
    sizes: OnceCell<Vec<(ArgSlot, Option<usize>)>>,
}

impl<'h, O: Op> Plan<'h, O> {
    /// Start describing a plan on `handle`.
    pub fn builder(handle: &'h Handle) -> PlanBuilder<'h, O> {
        PlanBuilder::new(handle)
    }

    pub fn handle(&self) -> &'h Handle {
        self.handle
    }

    pub fn as_raw(&self) -> *mut O::Raw {
        self.raw.as_ptr()
    }

    /// The effective value of an attribute (defaults resolved by finalize) by C id and type.
    pub fn attribute<T: AttributeValue>(&self, attr: i32) -> Result<T> {
        let mut v = T::default();
        let mut written = 0usize;
        // SAFETY: a live plan; buf is a T of size_of::<T>() bytes.
        check(unsafe {
            (O::FNS.get)(self.as_raw(), attr, &mut v as *mut T as *mut c_void, size_of::<T>(), &mut written)
        })?;
        Ok(v)
    }

    fn typed<T: IntoAttribute>(&self, attr: i32) -> Result<T> {
        let raw = self.attribute::<T::Raw>(attr)?;
        T::from_attribute(raw).ok_or_else(|| {
            Error::binding(Status::INTERNAL_ERROR, format!("attribute {attr}: value unknown to these bindings"))
        })
    }

    /// Bytes of device workspace an execution needs.
    pub fn workspace_size(&self) -> Result<usize> {
        let mut n = 0usize;
        // SAFETY: a live plan and a valid out-pointer.
        check(unsafe { (O::FNS.workspace)(self.as_raw(), &mut n) })?;
        Ok(n)
    }

    /// Bytes the plan reads or writes through `slot`: Some(Some(n)); Some(None) when the plan uses the
    /// slot but its size is not known on the host (varlen attention); None for slots it does not use.
    pub fn required_bytes(&self, slot: ArgSlot) -> Result<Option<Option<usize>>> {
        if self.sizes.get().is_none() {
            let table = O::sizes(self)?;
            let _ = self.sizes.set(table);
        }
        Ok(self.sizes.get().and_then(|t| t.iter().find(|(s, _)| *s == slot)).map(|(_, n)| *n))
    }

    fn check_host_args(&self, args: &Args<'_>) -> Result<()> {
        self.handle.require_cpu(O::FNS.name)?;
        for e in &args.entries {
            let Some((bytes, writable)) = e.host else {
                return Err(Error::binding(
                    Status::BAD_PARAM_ARGUMENT,
                    format!("{:?}: a device pointer; use the unsafe execute_device", e.slot),
                ));
            };
            if O::writes(self, e.slot)? && !writable {
                return Err(Error::binding(
                    Status::BAD_PARAM_ARGUMENT,
                    format!("{:?} is written by this plan: pass it with Args::output", e.slot),
                ));
            }
            match self.required_bytes(e.slot)? {
                Some(Some(need)) if bytes < need => {
                    return Err(Error::binding(
                        Status::BAD_PARAM_SHAPE,
                        format!("{:?}: {bytes} bytes given, the plan needs {need}", e.slot),
                    ))
                }
                Some(None) => {
                    return Err(Error::binding(
                        Status::NOT_SUPPORTED,
                        format!(
                            "{:?}: its size cannot be checked on the host for this plan; use execute_device",
                            e.slot
                        ),
                    ))
                }
                // Sized right, or a slot this plan does not use: the library refuses it before any work.
                _ => {}
            }
        }
        Ok(())
    }

    /// Execute on host slices (CPU handle), allocating the workspace if the plan needs one.
    pub fn execute(&self, args: &Args<'_>) -> Result<()> {
        let need = self.workspace_size()?;
        if need == 0 {
            return self.execute_with_workspace(args, &mut []);
        }
        let mut buf = vec![0u8; need + 255];
        let off = buf.as_ptr().align_offset(256);
        self.execute_with_workspace(args, &mut buf[off..off + need])
    }

    /// Execute on host slices (CPU handle) with a caller-provided, 256-byte aligned workspace.
    pub fn execute_with_workspace(&self, args: &Args<'_>, workspace: &mut [u8]) -> Result<()> {
        self.check_host_args(args)?;
        let ws = if workspace.is_empty() { std::ptr::null_mut() } else { workspace.as_mut_ptr().cast() };
        // SAFETY: every pointer comes from a live borrow held by `args` / `workspace`, checked large
        // enough for what the plan reads or writes, outputs borrowed mutably; the CPU backend runs
        // synchronously, so nothing is touched after this call returns.
        unsafe { self.execute_device(args, ws, workspace.len(), std::ptr::null_mut()) }
    }

    /// `mxq<Op>Execute` as is: asynchronous on `stream` on a CUDA handle.
    ///
    /// # Safety
    /// Every pointer in `args` and `workspace` must be memory of the handle's device (host memory on a
    /// CPU handle), large enough for what the plan reads or writes (the header documents each slot),
    /// and must stay valid and unaliased by other writers until the work enqueued on `stream` is done.
    pub unsafe fn execute_device(
        &self,
        args: &Args<'_>,
        workspace: *mut c_void,
        workspace_bytes: usize,
        stream: sys::mxqStream_t,
    ) -> Result<()> {
        let raw: Vec<sys::mxqExecArg_t> = args.raw();
        // SAFETY: forwarded to the caller; `raw` outlives the call.
        check(unsafe {
            (O::FNS.execute)(
                self.handle.as_raw(),
                self.as_raw(),
                raw.as_ptr(),
                raw.len() as c_int,
                workspace,
                workspace_bytes,
                stream,
            )
        })
    }
}

impl<O: Op> Drop for Plan<'_, O> {
    fn drop(&mut self) {
        // SAFETY: a live plan, destroyed once.
        unsafe { (O::FNS.destroy)(self.raw.as_ptr()) };
    }
}

// ---- execution arguments ----------------------------------------------------------------------------

/// Plain data the library may read or write as raw bytes (integers, floats, [`Bf16`]).
///
/// # Safety
/// Implemented only for types with no padding and no invalid bit patterns.
pub unsafe trait Element: sealed::Sealed + Copy + 'static {}
macro_rules! elements {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        // SAFETY: primitive numbers and a transparent u16: every bit pattern is valid, no padding.
        unsafe impl Element for $t {}
    )*};
}
elements!(u8, i8, u16, i16, u32, u64, f64, Bf16);
// SAFETY: as above (Sealed for these comes with AttributeValue).
unsafe impl Element for i32 {}
unsafe impl Element for i64 {}
unsafe impl Element for f32 {}

struct Entry {
    slot: ArgSlot,
    ptr: *mut c_void,
    host: Option<(usize, bool)>, // (bytes, writable) for slices; None for device pointers
}

/// Execution arguments: (slot, buffer) pairs. Host slices borrow their data for `'a`.
pub struct Args<'a> {
    entries: Vec<Entry>,
    _borrows: PhantomData<&'a mut [u8]>,
}

impl Default for Args<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Args<'a> {
    pub fn new() -> Self {
        Args { entries: Vec::new(), _borrows: PhantomData }
    }

    /// A host slice the plan reads.
    pub fn input<T: Element>(mut self, slot: ArgSlot, data: &'a [T]) -> Self {
        self.entries.push(Entry {
            slot,
            ptr: data.as_ptr() as *mut c_void,
            host: Some((std::mem::size_of_val(data), false)),
        });
        self
    }

    /// A host slice the plan writes (or reads and writes: an accumulated D).
    pub fn output<T: Element>(mut self, slot: ArgSlot, data: &'a mut [T]) -> Self {
        self.entries.push(Entry {
            slot,
            ptr: data.as_mut_ptr().cast(),
            host: Some((std::mem::size_of_val(data), true)),
        });
        self
    }

    /// A device pointer (for [`Plan::execute_device`]; the safe calls refuse it).
    pub fn device(mut self, slot: ArgSlot, ptr: *mut c_void) -> Self {
        self.entries.push(Entry { slot, ptr, host: None });
        self
    }

    /// The C argument array.
    pub fn raw(&self) -> Vec<sys::mxqExecArg_t> {
        self.entries.iter().map(|e| sys::mxqExecArg_t { slot: e.slot.raw(), reserved: 0, ptr: e.ptr }).collect()
    }
}

// ---- typed attributes -------------------------------------------------------------------------------

macro_rules! attributes {
    ($op:ident { $($name:ident : $t:ty => $c:ident),* $(,)? }) => {
        impl<'h> PlanBuilder<'h, $op> {
            $(
                #[doc = concat!("`", stringify!($c), "` (C type, default and range: the header).")]
                pub fn $name(self, value: $t) -> Self {
                    self.set_attribute(sys::$c, IntoAttribute::into_attribute(value))
                }
            )*
        }
        impl<'h> Plan<'h, $op> {
            $(
                #[doc = concat!("The effective `", stringify!($c), "`.")]
                pub fn $name(&self) -> Result<$t> {
                    self.typed::<$t>(sys::$c)
                }
            )*
        }
    };
}

attributes!(Quantize {
    input_dtype: DataType => MXQ_QUANTIZE_ATTR_INPUT_DTYPE,
    output_dtype: DataType => MXQ_QUANTIZE_ATTR_OUTPUT_DTYPE,
    scale_mode: ScaleMode => MXQ_QUANTIZE_ATTR_SCALE_MODE,
    nonfinite_policy: NonfinitePolicy => MXQ_QUANTIZE_ATTR_NONFINITE_POLICY,
    direction: Direction => MXQ_QUANTIZE_ATTR_DIRECTION,
    colwise_transposed: bool => MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED,
    scale_layout: ScaleLayout => MXQ_QUANTIZE_ATTR_SCALE_LAYOUT,
    block_2d: bool => MXQ_QUANTIZE_ATTR_BLOCK_2D,
    rows: i64 => MXQ_QUANTIZE_ATTR_ROWS,
    cols: i64 => MXQ_QUANTIZE_ATTR_COLS,
    batch: i64 => MXQ_QUANTIZE_ATTR_BATCH,
    input_ld: i64 => MXQ_QUANTIZE_ATTR_INPUT_LD,
    input_batch_stride: i64 => MXQ_QUANTIZE_ATTR_INPUT_BATCH_STRIDE,
    grouping: Grouping => MXQ_QUANTIZE_ATTR_GROUPING,
    num_groups: i64 => MXQ_QUANTIZE_ATTR_NUM_GROUPS,
    group_offsets_dtype: DataType => MXQ_QUANTIZE_ATTR_GROUP_OFFSETS_DTYPE,
    fusion: Fusion => MXQ_QUANTIZE_ATTR_FUSION,
});

attributes!(Dequantize {
    input_dtype: DataType => MXQ_DEQUANTIZE_ATTR_INPUT_DTYPE,
    output_dtype: DataType => MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE,
    direction: Direction => MXQ_DEQUANTIZE_ATTR_DIRECTION,
    colwise_transposed: bool => MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED,
    scale_layout: ScaleLayout => MXQ_DEQUANTIZE_ATTR_SCALE_LAYOUT,
    rows: i64 => MXQ_DEQUANTIZE_ATTR_ROWS,
    cols: i64 => MXQ_DEQUANTIZE_ATTR_COLS,
    batch: i64 => MXQ_DEQUANTIZE_ATTR_BATCH,
    output_ld: i64 => MXQ_DEQUANTIZE_ATTR_OUTPUT_LD,
    grouping: Grouping => MXQ_DEQUANTIZE_ATTR_GROUPING,
    num_groups: i64 => MXQ_DEQUANTIZE_ATTR_NUM_GROUPS,
    group_offsets_dtype: DataType => MXQ_DEQUANTIZE_ATTR_GROUP_OFFSETS_DTYPE,
});

attributes!(GroupedGemm {
    grouping: GemmGrouping => MXQ_GEMM_ATTR_GROUPING,
    m: i64 => MXQ_GEMM_ATTR_M,
    n: i64 => MXQ_GEMM_ATTR_N,
    k: i64 => MXQ_GEMM_ATTR_K,
    num_groups: i64 => MXQ_GEMM_ATTR_NUM_GROUPS,
    batch: i64 => MXQ_GEMM_ATTR_BATCH,
    a_dtype: DataType => MXQ_GEMM_ATTR_A_DTYPE,
    b_dtype: DataType => MXQ_GEMM_ATTR_B_DTYPE,
    d_dtype: DataType => MXQ_GEMM_ATTR_D_DTYPE,
    scale_layout: ScaleLayout => MXQ_GEMM_ATTR_SCALE_LAYOUT,
    alpha: f32 => MXQ_GEMM_ATTR_ALPHA,
    accumulate: bool => MXQ_GEMM_ATTR_ACCUMULATE,
    group_offsets_dtype: DataType => MXQ_GEMM_ATTR_GROUP_OFFSETS_DTYPE,
    b_block_2d: bool => MXQ_GEMM_ATTR_B_BLOCK_2D,
    workspace_limit: i64 => MXQ_GEMM_ATTR_WORKSPACE_LIMIT,
});

attributes!(Attention {
    direction: AttentionDirection => MXQ_ATTN_ATTR_DIRECTION,
    batch: i64 => MXQ_ATTN_ATTR_BATCH,
    heads_q: i64 => MXQ_ATTN_ATTR_HEADS_Q,
    heads_kv: i64 => MXQ_ATTN_ATTR_HEADS_KV,
    seqlen_q: i64 => MXQ_ATTN_ATTR_SEQLEN_Q,
    seqlen_kv: i64 => MXQ_ATTN_ATTR_SEQLEN_KV,
    head_dim: i64 => MXQ_ATTN_ATTR_HEAD_DIM,
    layout: AttentionLayout => MXQ_ATTN_ATTR_LAYOUT,
    mask: AttentionMask => MXQ_ATTN_ATTR_MASK,
    softmax_scale: f32 => MXQ_ATTN_ATTR_SOFTMAX_SCALE,
    p_scale: f32 => MXQ_ATTN_ATTR_P_SCALE,
    scale_layout: ScaleLayout => MXQ_ATTN_ATTR_SCALE_LAYOUT,
    varlen: bool => MXQ_ATTN_ATTR_VARLEN,
    deterministic: bool => MXQ_ATTN_ATTR_DETERMINISTIC,
    qkv_dtype: DataType => MXQ_ATTN_ATTR_QKV_DTYPE,
});

// ---- per-family sizes ---------------------------------------------------------------------------------

fn usize_of(n: i64, what: &str) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::binding(Status::BAD_PARAM_SHAPE, format!("{what}: {n} does not fit")))
}

/// Bytes of [rowwise data, rowwise scales, colwise data, colwise scales] that a quantize plan configured
/// by `f` writes, asked of the library; None where no such plan finalizes (sizes then unknown).
fn fp8_sizes<'h>(
    handle: &'h Handle,
    f: impl FnOnce(PlanBuilder<'h, Quantize>) -> PlanBuilder<'h, Quantize>,
) -> [Option<usize>; 4] {
    let Ok(q) = f(QuantizePlan::builder(handle)).build() else { return [None; 4] };
    [ArgSlot::RowwiseData, ArgSlot::RowwiseScales, ArgSlot::ColwiseData, ArgSlot::ColwiseScales]
        .map(|s| q.output_size(s).ok())
}

impl Plan<'_, Quantize> {
    /// Bytes to allocate for an output slot (0 for a slot this plan does not write).
    pub fn output_size(&self, slot: ArgSlot) -> Result<usize> {
        let mut n = 0usize;
        // SAFETY: a live, finalized plan and a valid out-pointer.
        check(unsafe { sys::mxqQuantizePlanGetOutputSize(self.as_raw(), slot.raw(), &mut n) })?;
        Ok(n)
    }
}

const QUANTIZE_OUTPUTS: [ArgSlot; 6] = [
    ArgSlot::RowwiseData,
    ArgSlot::RowwiseScales,
    ArgSlot::ColwiseData,
    ArgSlot::ColwiseScales,
    ArgSlot::Amax,
    ArgSlot::Activation,
];

impl Op for Quantize {
    type Raw = sys::mxqQuantizePlan;
    const FNS: Fns<Self::Raw> = fns!(
        mxqQuantizePlan,
        "mxqQuantizeExecute",
        mxqQuantizePlanCreate,
        mxqQuantizePlanSetAttribute,
        mxqQuantizePlanGetAttribute,
        mxqQuantizePlanFinalize,
        mxqQuantizePlanGetWorkspaceSize,
        mxqQuantizeExecute,
        mxqQuantizePlanDestroy
    );

    fn sizes(p: &Plan<'_, Self>) -> Result<Vec<(ArgSlot, Option<usize>)>> {
        let mut t = Vec::new();
        for s in QUANTIZE_OUTPUTS {
            let n = p.output_size(s)?;
            if n > 0 {
                t.push((s, Some(n)));
            }
        }
        let (rows, cols, batch) = (p.rows()?, p.cols()?, p.batch()?);
        let in_cols = if p.fusion()? == Fusion::Swiglu { 2 * cols } else { cols };
        let ld = match p.input_ld()? {
            0 => in_cols,
            v => v,
        };
        let bstride = match p.input_batch_stride()? {
            0 => rows * ld,
            v => v,
        };
        let elems = (batch - 1) * bstride + (rows - 1) * ld + in_cols;
        t.push((ArgSlot::X, Some(p.input_dtype()?.size() * usize_of(elems, "X")?)));
        if p.grouping()? == Grouping::Rows {
            t.push((
                ArgSlot::GroupOffsets,
                Some(usize_of(p.num_groups()?, "groups")? * p.group_offsets_dtype()?.size()),
            ));
        }
        Ok(t)
    }

    fn writes(_: &Plan<'_, Self>, slot: ArgSlot) -> Result<bool> {
        Ok(QUANTIZE_OUTPUTS.contains(&slot))
    }
}

impl Op for Dequantize {
    type Raw = sys::mxqDequantizePlan;
    const FNS: Fns<Self::Raw> = fns!(
        mxqDequantizePlan,
        "mxqDequantizeExecute",
        mxqDequantizePlanCreate,
        mxqDequantizePlanSetAttribute,
        mxqDequantizePlanGetAttribute,
        mxqDequantizePlanFinalize,
        mxqDequantizePlanGetWorkspaceSize,
        mxqDequantizeExecute,
        mxqDequantizePlanDestroy
    );

    fn sizes(p: &Plan<'_, Self>) -> Result<Vec<(ArgSlot, Option<usize>)>> {
        let (rows, cols, batch) = (p.rows()?, p.cols()?, p.batch()?);
        let grouped = p.grouping()? == Grouping::Rows;
        let (groups, god) = (p.num_groups()?, p.group_offsets_dtype()?);
        let (dir, transposed, layout, dtype) =
            (p.direction()?, p.colwise_transposed()?, p.scale_layout()?, p.input_dtype()?);
        let q = fp8_sizes(p.handle(), |b| {
            let b = b
                .rows(rows)
                .cols(cols)
                .batch(batch)
                .output_dtype(dtype)
                .direction(dir)
                .colwise_transposed(transposed)
                .scale_layout(layout);
            if grouped {
                b.grouping(Grouping::Rows).num_groups(groups).group_offsets_dtype(god)
            } else {
                b
            }
        });
        let mut t = if dir == Direction::Rowwise {
            vec![(ArgSlot::RowwiseData, q[0]), (ArgSlot::RowwiseScales, q[1])]
        } else {
            vec![(ArgSlot::ColwiseData, q[2]), (ArgSlot::ColwiseScales, q[3])]
        };
        let ld = match p.output_ld()? {
            0 => cols,
            v => v,
        };
        t.push((ArgSlot::X, Some(p.output_dtype()?.size() * usize_of((batch * rows - 1) * ld + cols, "X")?)));
        if grouped {
            t.push((ArgSlot::GroupOffsets, Some(usize_of(groups, "groups")? * god.size())));
        }
        Ok(t)
    }

    fn writes(_: &Plan<'_, Self>, slot: ArgSlot) -> Result<bool> {
        Ok(slot == ArgSlot::X)
    }
}

impl Op for GroupedGemm {
    type Raw = sys::mxqGroupedGemmPlan;
    const FNS: Fns<Self::Raw> = fns!(
        mxqGroupedGemmPlan,
        "mxqGroupedGemmExecute",
        mxqGroupedGemmPlanCreate,
        mxqGroupedGemmPlanSetAttribute,
        mxqGroupedGemmPlanGetAttribute,
        mxqGroupedGemmPlanFinalize,
        mxqGroupedGemmPlanGetWorkspaceSize,
        mxqGroupedGemmExecute,
        mxqGroupedGemmPlanDestroy
    );

    fn sizes(p: &Plan<'_, Self>) -> Result<Vec<(ArgSlot, Option<usize>)>> {
        let (m, n, k, grouping) = (p.m()?, p.n()?, p.k()?, p.grouping()?);
        let (groups, batch, layout, god) = (p.num_groups()?, p.batch()?, p.scale_layout()?, p.group_offsets_dtype()?);
        let h = p.handle();
        // Each operand is documented as "the layout the quantizer writes": ask a quantize plan.
        let operand = |rows: i64, cols: i64, dtype: DataType, is_a: bool| -> [Option<usize>; 2] {
            let q = fp8_sizes(h, |b| {
                let b = b.rows(rows).cols(cols).output_dtype(dtype).scale_layout(layout);
                match grouping {
                    GemmGrouping::K => b
                        .direction(Direction::Columnwise)
                        .grouping(Grouping::Rows)
                        .num_groups(groups)
                        .group_offsets_dtype(god),
                    GemmGrouping::M if is_a => b.grouping(Grouping::Rows).num_groups(groups).group_offsets_dtype(god),
                    GemmGrouping::M => b.batch(groups),
                    GemmGrouping::None => b.batch(batch),
                }
            });
            if grouping == GemmGrouping::K {
                [q[2], q[3]]
            } else {
                [q[0], q[1]]
            }
        };
        let (a, b, d_elems) = if grouping == GemmGrouping::K {
            (operand(k, m, p.a_dtype()?, true), operand(k, n, p.b_dtype()?, false), groups * m * n)
        } else {
            let d = m * n * if grouping == GemmGrouping::None { batch } else { 1 };
            (operand(m, k, p.a_dtype()?, true), operand(n, k, p.b_dtype()?, false), d)
        };
        let mut t = vec![
            (ArgSlot::AData, a[0]),
            (ArgSlot::AScales, a[1]),
            (ArgSlot::BData, b[0]),
            (ArgSlot::BScales, b[1]),
            (ArgSlot::D, Some(usize_of(d_elems, "D")? * p.d_dtype()?.size())),
        ];
        if grouping != GemmGrouping::None {
            t.push((ArgSlot::GroupOffsets, Some(usize_of(groups, "groups")? * god.size())));
        }
        Ok(t)
    }

    fn writes(_: &Plan<'_, Self>, slot: ArgSlot) -> Result<bool> {
        Ok(slot == ArgSlot::D)
    }
}

impl Op for Attention {
    type Raw = sys::mxqAttentionPlan;
    const FNS: Fns<Self::Raw> = fns!(
        mxqAttentionPlan,
        "mxqAttentionExecute",
        mxqAttentionPlanCreate,
        mxqAttentionPlanSetAttribute,
        mxqAttentionPlanGetAttribute,
        mxqAttentionPlanFinalize,
        mxqAttentionPlanGetWorkspaceSize,
        mxqAttentionExecute,
        mxqAttentionPlanDestroy
    );

    fn sizes(p: &Plan<'_, Self>) -> Result<Vec<(ArgSlot, Option<usize>)>> {
        let (b, hq, hkv) = (p.batch()?, p.heads_q()?, p.heads_kv()?);
        let (sq, skv, d) = (p.seqlen_q()?, p.seqlen_kv()?, p.head_dim()?);
        let backward = p.direction()? == AttentionDirection::Backward;
        let mut slots = vec![
            ArgSlot::QData,
            ArgSlot::QScales,
            ArgSlot::KData,
            ArgSlot::KScales,
            ArgSlot::VData,
            ArgSlot::VScales,
            ArgSlot::O,
            ArgSlot::Lse,
        ];
        if backward {
            slots.extend([
                ArgSlot::DoData,
                ArgSlot::DoScales,
                ArgSlot::Do,
                ArgSlot::QTData,
                ArgSlot::QTScales,
                ArgSlot::KTData,
                ArgSlot::KTScales,
                ArgSlot::DoTData,
                ArgSlot::DoTScales,
                ArgSlot::Dq,
                ArgSlot::Dk,
                ArgSlot::Dv,
            ]);
        }
        if p.varlen()? {
            // Packed sequences: token counts live in cu_seqlens, so only those two are sized here.
            let cu = Some(usize_of(b + 1, "batch")? * 4);
            let mut t: Vec<_> = slots.into_iter().map(|s| (s, None)).collect();
            t.extend([(ArgSlot::CuSeqlensQ, cu), (ArgSlot::CuSeqlensKv, cu)]);
            return Ok(t);
        }
        let (layout, dtype, h) = (p.scale_layout()?, p.qkv_dtype()?, p.handle());
        let along_d = |heads: i64, seq: i64| {
            let q = fp8_sizes(h, |q| q.rows(b * heads * seq).cols(d).output_dtype(dtype).scale_layout(layout));
            [q[0], q[1]]
        };
        let along_s = |heads: i64, seq: i64| {
            let q = fp8_sizes(h, |q| {
                q.batch(b * heads)
                    .rows(seq)
                    .cols(d)
                    .output_dtype(dtype)
                    .scale_layout(layout)
                    .direction(Direction::Columnwise)
                    .colwise_transposed(false)
            });
            [q[2], q[3]]
        };
        let q_bf16 = Some(usize_of(b * hq * sq * d, "Q")? * 2);
        let kv_bf16 = Some(usize_of(b * hkv * skv * d, "K")? * 2);
        let (qd, kd) = (along_d(hq, sq), along_d(hkv, skv));
        let v = if backward { along_d(hkv, skv) } else { along_s(hkv, skv) };
        let mut t = vec![
            (ArgSlot::QData, qd[0]),
            (ArgSlot::QScales, qd[1]),
            (ArgSlot::KData, kd[0]),
            (ArgSlot::KScales, kd[1]),
            (ArgSlot::VData, v[0]),
            (ArgSlot::VScales, v[1]),
            (ArgSlot::O, q_bf16),
            (ArgSlot::Lse, Some(usize_of(b * hq * sq, "LSE")? * 4)),
        ];
        if backward {
            let (qt, kt) = (along_s(hq, sq), along_s(hkv, skv));
            t.extend([
                (ArgSlot::DoData, qd[0]),
                (ArgSlot::DoScales, qd[1]),
                (ArgSlot::Do, q_bf16),
                (ArgSlot::QTData, qt[0]),
                (ArgSlot::QTScales, qt[1]),
                (ArgSlot::KTData, kt[0]),
                (ArgSlot::KTScales, kt[1]),
                (ArgSlot::DoTData, qt[0]),
                (ArgSlot::DoTScales, qt[1]),
                (ArgSlot::Dq, q_bf16),
                (ArgSlot::Dk, kv_bf16),
                (ArgSlot::Dv, kv_bf16),
            ]);
        }
        Ok(t)
    }

    fn writes(p: &Plan<'_, Self>, slot: ArgSlot) -> Result<bool> {
        Ok(if p.direction()? == AttentionDirection::Backward {
            matches!(slot, ArgSlot::Dq | ArgSlot::Dk | ArgSlot::Dv)
        } else {
            matches!(slot, ArgSlot::O | ArgSlot::Lse)
        })
    }
}
