"""The Python API: Handle, the four plan types, and one-call helpers (quantize, dequantize,
grouped_gemm, attention) that allocate their outputs.

Plans mirror the C lifecycle (create -> attributes -> finalize -> execute) with attributes given as
keyword arguments named after the C attribute (MXQ_QUANTIZE_ATTR_ROWS is rows=...). Execute takes a
{slot: array} dict. Before calling the library, execute checks what the library cannot check itself:
that host memory goes to a CPU handle and GPU memory to a CUDA handle, that outputs are writable, and
that every array is at least as large as the plan reads or writes. The sizes of the FP8 operands are
asked of the library (a Quantize plan of the same shape, through mxqQuantizePlanGetOutputSize), never
re-derived here: the header defines every operand as "the layout the quantizer writes".
"""

import ctypes
import math

from . import _ffi
from ._ffi import (Arg, AttentionAttr, AttentionDirection, AttentionLayout, AttentionMask, Backend, DType,
                   DequantizeAttr, Direction, Fusion, GemmAttr, GemmGrouping, Grouping, LogLevel, QuantizeAttr,
                   ScaleLayout, ScaleMode, NonfinitePolicy, Status)
from ._lib import MXQError, call, fail, lib
from ._tensor import Allocator, Buffer, as_buffer, default_stream, stream_handle

_ELEMENT_BYTES = {DType.FP32: 4, DType.FP16: 2, DType.BF16: 2, DType.E4M3: 1, DType.E5M2: 1, DType.UE8M0: 1,
                  DType.INT32: 4, DType.INT64: 8}
_DTYPE_OF_NAME = {"float32": DType.FP32, "float16": DType.FP16, "bfloat16": DType.BF16, "int32": DType.INT32,
                  "int64": DType.INT64}
_NAME_OF_DTYPE = {DType.FP32: "float32", DType.FP16: "float16", DType.BF16: "bfloat16", DType.E4M3: "uint8",
                  DType.E5M2: "uint8", DType.UE8M0: "uint8", DType.INT32: "int32", DType.INT64: "int64"}
_FP8_SLOTS = (Arg.ROWWISE_DATA, Arg.ROWWISE_SCALES, Arg.COLWISE_DATA, Arg.COLWISE_SCALES)


# ---- library-wide ------------------------------------------------------------------------------------------

def version():
    """The runtime library version as (major, minor, patch)."""
    v = lib().mxqGetVersion()
    return (v // 10000, v // 100 % 100, v % 100)


def build_info():
    return lib().mxqGetBuildInfo().decode()


def set_log_level(level):
    """Set the library's log level (a LogLevel, its name or 0..5)."""
    call("mxqLoggerSetLevel", int(_enum(LogLevel, level)))


def log_level():
    v = ctypes.c_int()
    call("mxqLoggerGetLevel", ctypes.byref(v))
    return LogLevel(v.value)


def set_log_file(path):
    """Append the log to `path`; None returns it to stderr."""
    call("mxqLoggerSetFile", None if path is None else str(path).encode())


_log_callbacks = []  # every installed ctypes thunk stays alive: the library may still be calling an old one


def set_log_callback(fn):
    """Send log messages to fn(level: LogLevel, message: str) instead of the file; None removes it.
    The callback runs on the thread that logs and must not call mxq."""
    if fn is None:
        call("mxqLoggerSetCallback", _ffi.LogCallback(), None)
        return

    def thunk(level, message, _user):
        try:
            fn(LogLevel(level) if level in LogLevel._value2member_map_ else level, message.decode(errors="replace"))
        except Exception:  # an exception must not unwind into C
            pass

    cb = _ffi.LogCallback(thunk)
    _log_callbacks.append(cb)
    call("mxqLoggerSetCallback", cb, None)


def swizzled_scale_bytes(batch, rows, scale_cols):
    """Bytes of a SWIZZLED_128x4 scale tensor [batch, rows, scale_cols] (0 for invalid dimensions)."""
    return lib().mxqSwizzledScaleBytes(batch, rows, scale_cols)


def _enum(cls, value):
    if isinstance(value, str):
        try:
            return {n.lower(): m for n, m in cls.__members__.items()}[value.lower()]
        except KeyError:
            raise ValueError(f"{value!r} is not a {cls.__name__} ({', '.join(cls.__members__)})") from None
    return cls(value)


# ---- handle ----------------------------------------------------------------------------------------------

class Handle:
    """A backend bound to a device: Handle("cpu"), Handle("cuda", device=0), or Handle.cpu() / .cuda().

    Use one handle per thread. Close it (or use `with`) after the plans created from it."""

    def __init__(self, backend=Backend.CUDA, device=-1):
        backend = _enum(Backend, backend)
        h = ctypes.c_void_p()
        call("mxqCreateWithBackend", ctypes.byref(h), int(backend), int(device))
        self._as_parameter_ = h
        self.backend = backend
        ordinal, cc = ctypes.c_int(), ctypes.c_int()
        call("mxqGetDevice", h, ctypes.byref(ordinal), ctypes.byref(cc))
        self.device, self.compute_capability = ordinal.value, cc.value

    @classmethod
    def cpu(cls):
        return cls(Backend.CPU, 0)

    @classmethod
    def cuda(cls, device=-1):
        return cls(Backend.CUDA, device)

    @property
    def memory(self):
        """'cpu' or 'cuda': where the arrays given to this handle's plans must live."""
        return "cpu" if self.backend == Backend.CPU else "cuda"

    @property
    def closed(self):
        return self._as_parameter_ is None

    def _raw(self):
        if self._as_parameter_ is None:
            fail(Status.BAD_PARAM_NULL_POINTER, "the handle is closed")
        return self._as_parameter_

    def close(self):
        """Destroy the handle (plans created from it must be closed first)."""
        if self._as_parameter_ is not None:
            call("mxqDestroy", self._as_parameter_)
            self._as_parameter_ = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        state = "closed" if self.closed else f"device {self.device}"
        return f"mxq.Handle({self.backend.name.lower()}, {state})"

    def swizzle_scales(self, src, dst, batch, rows, scale_cols, linear_ld=None, to_swizzled=True, stream=None):
        """Convert UE8M0 scales between LINEAR and SWIZZLED_128x4 (mxqSwizzleScales)."""
        s = stream_handle(stream)
        sb, db = as_buffer(src, s or 0), as_buffer(dst, s or 0)
        linear_ld = scale_cols if linear_ld is None else linear_ld
        swz = swizzled_scale_bytes(batch, rows, scale_cols)
        lin = batch * rows * linear_ld
        _check_buffers(self, {"src": (sb, swz if not to_swizzled else lin, False),
                              "dst": (db, swz if to_swizzled else lin, True)})
        if s is None:
            s = default_stream([sb, db])
        call("mxqSwizzleScales", self._raw(), int(bool(to_swizzled)), batch, rows, scale_cols, linear_ld,
             sb.ptr, db.ptr, s)


def _check_buffers(handle, named):
    """named: {label: (Buffer, bytes needed or None, is_output)}. Raises MXQError on a mismatch."""
    for label, (b, need, is_output) in named.items():
        if b.device is not None and b.device != handle.memory:
            fail(Status.BAD_PARAM_ARGUMENT, f"{label}: {b.device} memory given to a {handle.memory} handle")
        if (b.device == "cuda" and b.device_id is not None and handle.device >= 0
                and b.device_id != handle.device):
            fail(Status.BAD_PARAM_ARGUMENT, f"{label}: on cuda:{b.device_id}, the handle is on cuda:{handle.device}")
        if is_output and b.readonly:
            fail(Status.BAD_PARAM_ARGUMENT, f"{label}: the array is read-only but the plan writes it")
        if need is not None and b.nbytes is not None and b.nbytes < need:
            fail(Status.BAD_PARAM_SHAPE, f"{label}: {b.nbytes} bytes given, the plan needs {need}")


# ---- plans ---------------------------------------------------------------------------------------------------

class _Plan:
    _op = None        # "Quantize", "Dequantize", "GroupedGemm", "Attention"
    _attrs = None     # the attribute enum
    _enum_valued = {}  # attribute name -> enum class of its value (for get())

    def __init__(self, handle, finalize=True, **attrs):
        self.handle = handle  # also keeps the handle alive while the plan is
        p = ctypes.c_void_p()
        call(f"mxq{self._op}PlanCreate", handle._raw(), ctypes.byref(p))
        self._as_parameter_ = p
        self._finalized = False
        self._sizes = None
        try:
            for name, value in attrs.items():
                self.set(name, value)
            if finalize:
                self.finalize()
        except BaseException:
            self.close()
            raise

    def _attr(self, attr):
        return _enum(self._attrs, attr)

    def _raw(self):
        if self._as_parameter_ is None:
            fail(Status.BAD_PARAM_NULL_POINTER, "the plan is closed")
        return self._as_parameter_

    def set(self, attr, value):
        """Set one attribute (name, enum member or int id); value converted to the attribute's C type."""
        a = self._attr(attr)
        ctype = _ffi.ATTR_CTYPES[self._attrs][a]
        if isinstance(value, str) and a.name in self._enum_valued:
            value = _enum(self._enum_valued[a.name], value)
        buf = ctype(int(value) if ctype is not ctypes.c_float else float(value))
        call(f"mxq{self._op}PlanSetAttribute", self._raw(), int(a), ctypes.byref(buf), ctypes.sizeof(buf))
        return self

    def get(self, attr):
        """An attribute's value (after finalize: the effective value, defaults resolved)."""
        a = self._attr(attr)
        buf = _ffi.ATTR_CTYPES[self._attrs][a]()
        written = ctypes.c_size_t()
        call(f"mxq{self._op}PlanGetAttribute", self._raw(), int(a), ctypes.byref(buf), ctypes.sizeof(buf),
             ctypes.byref(written))
        cls = self._enum_valued.get(a.name)
        if cls is not None and buf.value in cls._value2member_map_:
            return cls(buf.value)
        return buf.value

    def finalize(self):
        call(f"mxq{self._op}PlanFinalize", self._raw())
        self._finalized = True
        return self

    @property
    def workspace_size(self):
        n = ctypes.c_size_t()
        call(f"mxq{self._op}PlanGetWorkspaceSize", self._raw(), ctypes.byref(n))
        return n.value

    # Sizes: {slot: bytes}, computed once per plan (see the module doc).
    def _compute_sizes(self):
        raise NotImplementedError

    def _output_slots(self):
        raise NotImplementedError

    def required_bytes(self, slot):
        """Bytes the plan reads or writes through `slot`, or None when that is not known on the host."""
        if not self._finalized:
            return None
        if self._sizes is None:
            self._sizes = self._compute_sizes()
        return self._sizes.get(slot)

    def execute(self, args, workspace=None, stream=None):
        """Run the plan. args: {slot: array or int pointer}; slot an Arg, its name ("x") or its id.
        workspace: allocated here when the plan needs one and none is given. stream: an int
        cudaStream_t, a torch/cupy stream, or None for the current stream of the tensors' framework."""
        s = stream_handle(stream)
        bufs = {}
        for slot, obj in args.items():
            slot = _enum(Arg, slot) if isinstance(slot, str) else (
                Arg(slot) if int(slot) in Arg._value2member_map_ else int(slot))
            if slot in bufs:
                fail(Status.BAD_PARAM_ARGUMENT, f"slot {slot} given twice")
            bufs[slot] = as_buffer(obj, s or 0)
        outputs = self._output_slots()
        _check_buffers(self.handle, {getattr(k, "name", str(k)): (b, self.required_bytes(k), k in outputs)
                                     for k, b in bufs.items()})
        if s is None:
            s = default_stream(bufs.values())
        need = self.workspace_size
        keep = None
        if workspace is not None:
            wb = as_buffer(workspace, s or 0)
            _check_buffers(self.handle, {"workspace": (wb, need, True)})
            wptr, wbytes = wb.ptr, (wb.nbytes if wb.nbytes is not None else need)
        elif need:
            keep, wptr = Allocator.for_buffers(self.handle.memory, bufs.values()).workspace(need)
            wbytes = need
        else:
            wptr, wbytes = None, 0
        arr = (_ffi.ExecArg * len(bufs))(*[_ffi.ExecArg(int(k), 0, b.ptr) for k, b in bufs.items()])
        call(f"mxq{self._op}Execute", self.handle._raw(), self._raw(), arr, len(bufs), wptr, wbytes, s)
        del keep  # the workspace outlives the call; on a GPU the caller's stream order covers reuse

    def close(self):
        if self._as_parameter_ is not None:
            call(f"mxq{self._op}PlanDestroy", self._as_parameter_)
            self._as_parameter_ = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _fp8_sizes(handle, **attrs):
    """{slot: bytes} of the FP8 data and scales a Quantize plan with these attributes writes, or {} when
    no such plan can be finalized on this handle (the library then validates on its own)."""
    try:
        with QuantizePlan(handle, **attrs) as q:
            return {slot: q.output_size(slot) for slot in _FP8_SLOTS}
    except MXQError:
        return {}


class QuantizePlan(_Plan):
    """mxqQuantizePlan: attributes as keywords (input_dtype=, output_dtype=, rows=, cols=, ...)."""
    _op, _attrs = "Quantize", QuantizeAttr
    _enum_valued = {"INPUT_DTYPE": DType, "OUTPUT_DTYPE": DType, "SCALE_MODE": ScaleMode,
                    "NONFINITE_POLICY": NonfinitePolicy, "DIRECTION": Direction, "SCALE_LAYOUT": ScaleLayout,
                    "GROUPING": Grouping, "GROUP_OFFSETS_DTYPE": DType, "FUSION": Fusion}

    def output_size(self, slot):
        """Bytes to allocate for an output slot (0 for a slot this plan does not write)."""
        n = ctypes.c_size_t()
        call("mxqQuantizePlanGetOutputSize", self._raw(), int(_enum(Arg, slot)), ctypes.byref(n))
        return n.value

    def _output_slots(self):
        return set(_FP8_SLOTS) | {Arg.AMAX, Arg.ACTIVATION}

    def _compute_sizes(self):
        g = self.get
        sizes = {slot: self.output_size(slot) for slot in self._output_slots()}
        sizes = {k: v for k, v in sizes.items() if v}
        rows, cols, batch = g("rows"), g("cols"), g("batch")
        in_cols = 2 * cols if g("fusion") == Fusion.SWIGLU else cols
        ld = g("input_ld") or in_cols
        batch_stride = g("input_batch_stride") or rows * ld
        sizes[Arg.X] = _ELEMENT_BYTES[DType(g("input_dtype"))] * ((batch - 1) * batch_stride + (rows - 1) * ld + in_cols)
        if g("grouping") == Grouping.ROWS:
            sizes[Arg.GROUP_OFFSETS] = g("num_groups") * _ELEMENT_BYTES[DType(g("group_offsets_dtype"))]
        return sizes


class DequantizePlan(_Plan):
    """mxqDequantizePlan: reads one orientation of a Quantize output back into X."""
    _op, _attrs = "Dequantize", DequantizeAttr
    _enum_valued = {"INPUT_DTYPE": DType, "OUTPUT_DTYPE": DType, "DIRECTION": Direction,
                    "SCALE_LAYOUT": ScaleLayout, "GROUPING": Grouping, "GROUP_OFFSETS_DTYPE": DType}

    def _output_slots(self):
        return {Arg.X}

    def _compute_sizes(self):
        g = self.get
        rows, cols, batch = g("rows"), g("cols"), g("batch")
        grouped = g("grouping") == Grouping.ROWS
        q = dict(rows=rows, cols=cols, batch=batch, output_dtype=g("input_dtype"), direction=g("direction"),
                 colwise_transposed=g("colwise_transposed"), scale_layout=g("scale_layout"))
        if grouped:
            q.update(grouping=Grouping.ROWS, num_groups=g("num_groups"), group_offsets_dtype=g("group_offsets_dtype"))
        sizes = {k: v for k, v in _fp8_sizes(self.handle, **q).items() if v}
        ld = g("output_ld") or cols
        sizes[Arg.X] = _ELEMENT_BYTES[DType(g("output_dtype"))] * ((batch * rows - 1) * ld + cols)
        if grouped:
            sizes[Arg.GROUP_OFFSETS] = g("num_groups") * _ELEMENT_BYTES[DType(g("group_offsets_dtype"))]
        return sizes


class GroupedGemmPlan(_Plan):
    """mxqGroupedGemmPlan: D = alpha * A * B^T (+ D), dense, M-grouped or K-grouped."""
    _op, _attrs = "GroupedGemm", GemmAttr
    _enum_valued = {"GROUPING": GemmGrouping, "A_DTYPE": DType, "B_DTYPE": DType, "D_DTYPE": DType,
                    "SCALE_LAYOUT": ScaleLayout, "GROUP_OFFSETS_DTYPE": DType}

    def _output_slots(self):
        return {Arg.D}

    def _compute_sizes(self):
        g = self.get
        m, n, k, grouping, layout = g("m"), g("n"), g("k"), g("grouping"), g("scale_layout")
        groups, batch = g("num_groups"), g("batch")
        god = g("group_offsets_dtype")

        def operand(rows_or_tokens, cols, dtype, prefix):
            if grouping == GemmGrouping.K:
                q = _fp8_sizes(self.handle, rows=rows_or_tokens, cols=cols, output_dtype=dtype, scale_layout=layout,
                               direction=Direction.COLUMNWISE, grouping=Grouping.ROWS, num_groups=groups,
                               group_offsets_dtype=god)
                src = (Arg.COLWISE_DATA, Arg.COLWISE_SCALES)
            elif grouping == GemmGrouping.M and prefix == "A":
                q = _fp8_sizes(self.handle, rows=rows_or_tokens, cols=cols, output_dtype=dtype, scale_layout=layout,
                               grouping=Grouping.ROWS, num_groups=groups, group_offsets_dtype=god)
                src = (Arg.ROWWISE_DATA, Arg.ROWWISE_SCALES)
            else:
                q = _fp8_sizes(self.handle, rows=rows_or_tokens, cols=cols, output_dtype=dtype, scale_layout=layout,
                               batch=groups if grouping == GemmGrouping.M else batch)
                src = (Arg.ROWWISE_DATA, Arg.ROWWISE_SCALES)
            data, scales = (Arg.A_DATA, Arg.A_SCALES) if prefix == "A" else (Arg.B_DATA, Arg.B_SCALES)
            return {dst: q[s] for dst, s in zip((data, scales), src) if q.get(s)}

        sizes = {}
        if grouping == GemmGrouping.K:  # A [M, tokens], B [N, tokens]: the quantizer's columnwise output
            sizes.update(operand(k, m, g("a_dtype"), "A"))
            sizes.update(operand(k, n, g("b_dtype"), "B"))
            d_elems = groups * m * n
        else:
            sizes.update(operand(m, k, g("a_dtype"), "A"))
            sizes.update(operand(n, k, g("b_dtype"), "B"))
            d_elems = m * n * (batch if grouping == GemmGrouping.NONE else 1)
        sizes[Arg.D] = d_elems * _ELEMENT_BYTES[DType(g("d_dtype"))]
        if grouping != GemmGrouping.NONE:
            sizes[Arg.GROUP_OFFSETS] = groups * _ELEMENT_BYTES[DType(god)]
        return sizes


class AttentionPlan(_Plan):
    """mxqAttentionPlan: MXFP8 SDPA forward or backward (direction=...)."""
    _op, _attrs = "Attention", AttentionAttr
    _enum_valued = {"DIRECTION": AttentionDirection, "LAYOUT": AttentionLayout, "MASK": AttentionMask,
                    "SCALE_LAYOUT": ScaleLayout, "QKV_DTYPE": DType}

    def _output_slots(self):
        if self._finalized and self.get("direction") == AttentionDirection.BACKWARD:
            return {Arg.DQ, Arg.DK, Arg.DV}
        return {Arg.O, Arg.LSE}

    def _compute_sizes(self):
        g = self.get
        b, hq, hkv, sq, skv, d = g("batch"), g("heads_q"), g("heads_kv"), g("seqlen_q"), g("seqlen_kv"), g("head_dim")
        if g("varlen"):
            # Packed sequences: the token counts live in cu_seqlens, so sizes are left to the library.
            return {Arg.CU_SEQLENS_Q: (b + 1) * 4, Arg.CU_SEQLENS_KV: (b + 1) * 4}
        layout, dtype = g("scale_layout"), g("qkv_dtype")

        def along_d(heads, seq, data, scales):
            q = _fp8_sizes(self.handle, rows=b * heads * seq, cols=d, output_dtype=dtype, scale_layout=layout)
            return {data: q.get(Arg.ROWWISE_DATA), scales: q.get(Arg.ROWWISE_SCALES)}

        def along_s(heads, seq, data, scales):
            q = _fp8_sizes(self.handle, batch=b * heads, rows=seq, cols=d, output_dtype=dtype, scale_layout=layout,
                           direction=Direction.COLUMNWISE, colwise_transposed=0)
            return {data: q.get(Arg.COLWISE_DATA), scales: q.get(Arg.COLWISE_SCALES)}

        q_bf16, kv_bf16 = b * hq * sq * d * 2, b * hkv * skv * d * 2
        sizes = {Arg.LSE: b * hq * sq * 4, Arg.O: q_bf16}
        sizes.update(along_d(hq, sq, Arg.Q_DATA, Arg.Q_SCALES))
        sizes.update(along_d(hkv, skv, Arg.K_DATA, Arg.K_SCALES))
        if g("direction") == AttentionDirection.FORWARD:
            sizes.update(along_s(hkv, skv, Arg.V_DATA, Arg.V_SCALES))
        else:
            sizes.update(along_d(hkv, skv, Arg.V_DATA, Arg.V_SCALES))
            sizes.update(along_d(hq, sq, Arg.DO_DATA, Arg.DO_SCALES))
            sizes.update(along_s(hq, sq, Arg.Q_T_DATA, Arg.Q_T_SCALES))
            sizes.update(along_s(hkv, skv, Arg.K_T_DATA, Arg.K_T_SCALES))
            sizes.update(along_s(hq, sq, Arg.DO_T_DATA, Arg.DO_T_SCALES))
            sizes.update({Arg.DO: q_bf16, Arg.DQ: q_bf16, Arg.DK: kv_bf16, Arg.DV: kv_bf16})
        return {k: v for k, v in sizes.items() if v}


# ---- one-call helpers ----------------------------------------------------------------------------------------

class MXTensor:
    """An MXFP8 tensor as Quantize wrote it, plus what Dequantize / GEMM / attention need to read it.

    batch, rows, cols: the logical shape [batch, rows, cols] of the quantized tensor (cols after SwiGLU).
    rowwise_data [batch, rows, cols] and colwise_data ([batch, cols, rows] when colwise_transposed):
    FP8 bytes (uint8 arrays); *_scales: UE8M0 bytes in `scale_layout`, padding included (1-D).
    group_offsets: the row-group end offsets it was quantized with (None when not grouped)."""

    def __init__(self, *, batch, rows, cols, ndim, dtype, scale_layout, colwise_transposed, rowwise_data=None,
                 rowwise_scales=None, colwise_data=None, colwise_scales=None, group_offsets=None, num_groups=0,
                 group_offsets_dtype=DType.INT32, amax=None, activation=None):
        self.batch, self.rows, self.cols, self.ndim = batch, rows, cols, ndim
        self.dtype, self.scale_layout, self.colwise_transposed = dtype, scale_layout, colwise_transposed
        self.rowwise_data, self.rowwise_scales = rowwise_data, rowwise_scales
        self.colwise_data, self.colwise_scales = colwise_data, colwise_scales
        self.group_offsets, self.num_groups, self.group_offsets_dtype = group_offsets, num_groups, group_offsets_dtype
        self.amax, self.activation = amax, activation

    @property
    def has_rowwise(self):
        return self.rowwise_data is not None

    @property
    def has_colwise(self):
        return self.colwise_data is not None

    def _grouping_attrs(self):
        if self.group_offsets is None:
            return {}
        return dict(grouping=Grouping.ROWS, num_groups=self.num_groups, group_offsets_dtype=self.group_offsets_dtype)

    def __repr__(self):
        parts = [p for p, have in (("rowwise", self.has_rowwise), ("colwise", self.has_colwise)) if have]
        return (f"mxq.MXTensor([{self.batch}, {self.rows}, {self.cols}] {self.dtype.name}, {'+'.join(parts)}, "
                f"{self.scale_layout.name}{', %d groups' % self.num_groups if self.group_offsets is not None else ''})")


def _input_dtype(buf, given):
    if given is not None:
        return _enum(DType, given)
    if buf.dtype in _DTYPE_OF_NAME and _DTYPE_OF_NAME[buf.dtype] in (DType.FP32, DType.FP16, DType.BF16):
        return _DTYPE_OF_NAME[buf.dtype]
    raise TypeError(f"cannot tell the input dtype of a {buf.dtype} array: pass input_dtype=mxq.DType.BF16 "
                    "(numpy has no bfloat16; bf16 travels as uint16 bit patterns)")


def _shape3(buf, what):
    if buf.shape is None or len(buf.shape) not in (2, 3):
        fail(Status.BAD_PARAM_SHAPE, f"{what} must be a 2-D [rows, cols] or 3-D [batch, rows, cols] array")
    return (1,) + tuple(buf.shape) if len(buf.shape) == 2 else tuple(buf.shape)


def _group_attrs(handle, group_offsets, s):
    if group_offsets is None:
        return None, {}
    gb = as_buffer(group_offsets, s or 0)
    if gb.dtype not in ("int32", "int64") or gb.shape is None or len(gb.shape) != 1:
        raise TypeError("group_offsets must be a 1-D int32 or int64 array of group end offsets")
    return gb, dict(grouping=Grouping.ROWS, num_groups=gb.shape[0], group_offsets_dtype=_DTYPE_OF_NAME[gb.dtype])


def _shaped(alloc, nbytes, shape, dtype="uint8"):
    """An output of `nbytes`: shaped when the byte count is exactly the shape's, else flat."""
    itemsize = 2 if dtype in ("bfloat16", "float16", "uint16") else 4 if dtype in ("float32", "int32") else 1
    if math.prod(shape) * itemsize == nbytes:
        return alloc.empty(shape, dtype)
    return alloc.empty((nbytes // itemsize,), dtype)


def quantize(handle, x, *, direction=Direction.ROWWISE, dtype=DType.E4M3, scale_layout=ScaleLayout.SWIZZLED_128x4,
             scale_mode=ScaleMode.RCEIL, nonfinite_policy=NonfinitePolicy.TE_COMPATIBLE, colwise_transposed=True,
             block_2d=False, group_offsets=None, swiglu=False, amax=False, activation=False, input_dtype=None,
             stream=None):
    """Quantize a [rows, cols] or [batch, rows, cols] array to MXFP8; returns an MXTensor whose arrays
    are of the input's kind (numpy on a CPU handle; torch / cupy on a CUDA handle).

    group_offsets: 1-D int32/int64 end offsets of row groups (MoE). swiglu: x is [.., 2*cols] (gate | up)
    and silu(gate) * up is quantized. amax / activation: also return the global amax / the SwiGLU output."""
    s = stream_handle(stream)
    xb = as_buffer(x, s or 0)
    _check_buffers(handle, {"x": (xb, None, False)})  # before allocating outputs like it
    batch, rows, in_cols = _shape3(xb, "x")
    if swiglu and in_cols % 2:
        fail(Status.BAD_PARAM_SHAPE, f"swiglu needs an even number of input columns, got {in_cols}")
    cols = in_cols // 2 if swiglu else in_cols
    gb, gattrs = _group_attrs(handle, group_offsets, s)
    direction, dtype, scale_layout = _enum(Direction, direction), _enum(DType, dtype), _enum(ScaleLayout, scale_layout)
    in_dtype = _input_dtype(xb, input_dtype)
    plan = QuantizePlan(handle, input_dtype=in_dtype, output_dtype=dtype, scale_mode=_enum(ScaleMode, scale_mode),
                        nonfinite_policy=_enum(NonfinitePolicy, nonfinite_policy), direction=direction,
                        colwise_transposed=bool(colwise_transposed), scale_layout=scale_layout,
                        block_2d=bool(block_2d), rows=rows, cols=cols, batch=batch,
                        fusion=Fusion.SWIGLU if swiglu else Fusion.NONE, **gattrs)
    with plan:
        alloc = Allocator.for_buffers(handle.memory, [xb])
        out = {}
        lead = (batch,) if len(xb.shape) == 3 else ()
        if direction & Direction.ROWWISE:
            out[Arg.ROWWISE_DATA] = _shaped(alloc, plan.output_size(Arg.ROWWISE_DATA), lead + (rows, cols))
            out[Arg.ROWWISE_SCALES] = alloc.empty((plan.output_size(Arg.ROWWISE_SCALES),), "uint8")
        if direction & Direction.COLUMNWISE:
            cshape = lead + ((cols, rows) if colwise_transposed else (rows, cols))
            out[Arg.COLWISE_DATA] = _shaped(alloc, plan.output_size(Arg.COLWISE_DATA), cshape)
            out[Arg.COLWISE_SCALES] = alloc.empty((plan.output_size(Arg.COLWISE_SCALES),), "uint8")
        if amax:
            out[Arg.AMAX] = alloc.empty((1,), "float32")
        if activation:
            if not swiglu:
                raise ValueError("activation=True needs swiglu=True (it is the fused prologue's output)")
            out[Arg.ACTIVATION] = _shaped(alloc, plan.output_size(Arg.ACTIVATION), lead + (rows, cols),
                                          _NAME_OF_DTYPE[in_dtype])
        args = {Arg.X: xb, **out}
        if gb is not None:
            args[Arg.GROUP_OFFSETS] = gb
        plan.execute(args, stream=s)
    return MXTensor(batch=batch, rows=rows, cols=cols, ndim=len(xb.shape), dtype=dtype, scale_layout=scale_layout,
                    colwise_transposed=bool(colwise_transposed), rowwise_data=out.get(Arg.ROWWISE_DATA),
                    rowwise_scales=out.get(Arg.ROWWISE_SCALES), colwise_data=out.get(Arg.COLWISE_DATA),
                    colwise_scales=out.get(Arg.COLWISE_SCALES), group_offsets=group_offsets,
                    num_groups=gattrs.get("num_groups", 0),
                    group_offsets_dtype=gattrs.get("group_offsets_dtype", DType.INT32),
                    amax=out.get(Arg.AMAX), activation=out.get(Arg.ACTIVATION))


def dequantize(handle, mx, *, direction=None, dtype=DType.FP32, out=None, stream=None):
    """Dequantize one orientation of an MXTensor (rowwise when it has one) to dtype (FP32 by default;
    BF16 comes back as uint16 bit patterns on numpy). Returns an array shaped like the original input."""
    s = stream_handle(stream)
    if direction is None:
        direction = Direction.ROWWISE if mx.has_rowwise else Direction.COLUMNWISE
    direction = _enum(Direction, direction)
    if direction == Direction.BOTH:
        raise ValueError("dequantize reads one orientation: ROWWISE or COLUMNWISE")
    data, scales = ((mx.rowwise_data, mx.rowwise_scales) if direction == Direction.ROWWISE
                    else (mx.colwise_data, mx.colwise_scales))
    if data is None:
        raise ValueError(f"the MXTensor has no {direction.name.lower()} data")
    dtype = _enum(DType, dtype)
    with DequantizePlan(handle, input_dtype=mx.dtype, output_dtype=dtype, direction=direction,
                        colwise_transposed=mx.colwise_transposed, scale_layout=mx.scale_layout, rows=mx.rows,
                        cols=mx.cols, batch=mx.batch, **mx._grouping_attrs()) as plan:
        db = as_buffer(data, s or 0)
        _check_buffers(handle, {"data": (db, None, False)})
        if out is None:
            shape = ((mx.batch,) if mx.ndim == 3 else ()) + (mx.rows, mx.cols)
            out = Allocator.for_buffers(handle.memory, [db]).empty(shape, _NAME_OF_DTYPE[dtype])
        args = {Arg.X: out}
        key = "ROWWISE" if direction == Direction.ROWWISE else "COLWISE"
        args[Arg[f"{key}_DATA"]], args[Arg[f"{key}_SCALES"]] = db, scales
        if mx.group_offsets is not None:
            args[Arg.GROUP_OFFSETS] = mx.group_offsets
        plan.execute(args, stream=s)
    return out


def grouped_gemm(handle, a, b, *, grouping=None, out=None, dtype=DType.FP32, alpha=1.0, accumulate=False,
                 b_block_2d=False, stream=None):
    """D = alpha * A * B^T (+ D with accumulate) on MXTensors from quantize().

    grouping NONE (dense, batched): a [batch, M, K], b [batch, N, K] rowwise -> D [batch, M, N].
    M (fprop / dgrad): a [M, K] rowwise with group_offsets (G groups), b [G, N, K] rowwise -> D [M, N].
    K (wgrad): a, b quantized COLUMNWISE from [T, M] and [T, N] with the same group_offsets over the T
        tokens -> D [G, M, N].
    grouping=None infers it: K when `a` is grouped and only columnwise, M when `a` is grouped, else NONE."""
    s = stream_handle(stream)
    if grouping is None:
        if a.group_offsets is None:
            grouping = GemmGrouping.NONE
        else:
            grouping = GemmGrouping.M if a.has_rowwise else GemmGrouping.K
    grouping = _enum(GemmGrouping, grouping)
    if a.scale_layout != b.scale_layout:
        raise ValueError("a and b must use the same scale layout")
    attrs = dict(grouping=grouping, a_dtype=a.dtype, b_dtype=b.dtype, d_dtype=_enum(DType, dtype),
                 scale_layout=a.scale_layout, alpha=alpha, accumulate=bool(accumulate), b_block_2d=bool(b_block_2d))
    if grouping == GemmGrouping.K:
        if a.group_offsets is None or not (a.has_colwise and b.has_colwise):
            raise ValueError("K-grouped GEMM needs a and b quantized COLUMNWISE with group_offsets")
        if a.rows != b.rows:
            raise ValueError(f"a and b must have the same token count, got {a.rows} and {b.rows}")
        m, n, k, groups = a.cols, b.cols, a.rows, a.num_groups
        operands = (a.colwise_data, a.colwise_scales, b.colwise_data, b.colwise_scales)
        d_shape = (groups, m, n)
        attrs.update(num_groups=groups, group_offsets_dtype=a.group_offsets_dtype)
    else:
        if not (a.has_rowwise and b.has_rowwise):
            raise ValueError("dense and M-grouped GEMMs read rowwise data of a and b")
        if a.cols != b.cols:
            raise ValueError(f"a and b must share K, got {a.cols} and {b.cols}")
        m, n, k = a.rows, b.rows, a.cols
        operands = (a.rowwise_data, a.rowwise_scales, b.rowwise_data, b.rowwise_scales)
        if grouping == GemmGrouping.M:
            if a.group_offsets is None or b.batch != a.num_groups:
                raise ValueError("M-grouped GEMM needs a with group_offsets and b of batch == number of groups")
            attrs.update(num_groups=a.num_groups, group_offsets_dtype=a.group_offsets_dtype)
            d_shape = (m, n)
        else:
            if a.batch != b.batch:
                raise ValueError(f"a and b must have the same batch, got {a.batch} and {b.batch}")
            attrs.update(batch=a.batch)
            d_shape = ((a.batch,) if a.ndim == 3 else ()) + (m, n)
    with GroupedGemmPlan(handle, m=m, n=n, k=k, **attrs) as plan:
        bufs = [as_buffer(o, s or 0) for o in operands]
        _check_buffers(handle, {name: (b_, None, False) for name, b_ in zip(("a", "a_scales", "b", "b_scales"), bufs)})
        if out is None:
            if accumulate:
                raise ValueError("accumulate=True needs out= (the D to accumulate into)")
            out = Allocator.for_buffers(handle.memory, bufs).empty(d_shape, _NAME_OF_DTYPE[attrs["d_dtype"]])
        args = dict(zip((Arg.A_DATA, Arg.A_SCALES, Arg.B_DATA, Arg.B_SCALES), bufs))
        args[Arg.D] = out
        if grouping != GemmGrouping.NONE:
            args[Arg.GROUP_OFFSETS] = a.group_offsets
        plan.execute(args, stream=s)
    return out


def attention(handle, q, k, v, *, mask=AttentionMask.NONE, softmax_scale=None, p_scale=None,
              scale_layout=ScaleLayout.SWIZZLED_128x4, input_dtype=None, stream=None):
    """MXFP8 attention forward from high-precision BHSD tensors q [B, Hq, Sq, D], k and v [B, Hkv, Skv, D]:
    quantizes Q and K along D and V along S_kv as the recipe prescribes, runs the plan, and returns
    (O [B, Hq, Sq, D] bf16, LSE [B, Hq, Sq] fp32). On numpy, bf16 O is returned as uint16 bit patterns.
    Other layouts, varlen and the backward pass: use AttentionPlan directly."""
    s = stream_handle(stream)
    qb, kb, vb = (as_buffer(t, s or 0) for t in (q, k, v))
    _check_buffers(handle, {"q": (qb, None, False), "k": (kb, None, False), "v": (vb, None, False)})
    for name, t in (("q", qb), ("k", kb), ("v", vb)):
        if t.shape is None or len(t.shape) != 4:
            fail(Status.BAD_PARAM_SHAPE, f"{name} must be a 4-D [B, H, S, D] array")
    bsz, hq, sq, d = qb.shape
    if kb.shape != vb.shape or kb.shape[0] != bsz or kb.shape[3] != d:
        fail(Status.BAD_PARAM_SHAPE, f"k {kb.shape} and v {vb.shape} must be [B, Hkv, Skv, D] with q's B and D")
    hkv, skv = kb.shape[1], kb.shape[2]
    common = dict(dtype=DType.E4M3, scale_layout=scale_layout, input_dtype=input_dtype, stream=s)
    q8 = _quantize_rows(handle, qb, bsz * hq * sq, d, **common)
    k8 = _quantize_rows(handle, kb, bsz * hkv * skv, d, **common)
    v8 = quantize(handle, _reshaped(vb, (bsz * hkv, skv, d)), direction=Direction.COLUMNWISE,
                  colwise_transposed=False, **common)
    attrs = dict(batch=bsz, heads_q=hq, heads_kv=hkv, seqlen_q=sq, seqlen_kv=skv, head_dim=d,
                 layout=AttentionLayout.BHSD, mask=_enum(AttentionMask, mask), scale_layout=_enum(ScaleLayout, scale_layout))
    if softmax_scale is not None:
        attrs["softmax_scale"] = softmax_scale
    if p_scale is not None:
        attrs["p_scale"] = p_scale
    with AttentionPlan(handle, **attrs) as plan:
        alloc = Allocator.for_buffers(handle.memory, [qb])
        o = alloc.empty((bsz, hq, sq, d), "bfloat16")
        lse = alloc.empty((bsz, hq, sq), "float32")
        plan.execute({Arg.Q_DATA: q8.rowwise_data, Arg.Q_SCALES: q8.rowwise_scales, Arg.K_DATA: k8.rowwise_data,
                      Arg.K_SCALES: k8.rowwise_scales, Arg.V_DATA: v8.colwise_data, Arg.V_SCALES: v8.colwise_scales,
                      Arg.O: o, Arg.LSE: lse}, stream=s)
    return o, lse


def _reshaped(buf, shape):
    """The same memory seen as another C-contiguous shape (quantize reads the shape from the buffer)."""
    if math.prod(shape) != math.prod(buf.shape):
        fail(Status.BAD_PARAM_SHAPE, f"cannot view {buf.shape} as {shape}")
    return Buffer(buf.ptr, buf.nbytes, buf.device, buf.device_id, buf.dtype, tuple(shape), buf.readonly,
                  buf.keepalive, buf.framework)


def _quantize_rows(handle, buf, rows, cols, **kw):
    return quantize(handle, _reshaped(buf, (rows, cols)), **kw)
