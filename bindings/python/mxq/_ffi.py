"""ctypes declarations of include/mxq/mxq.h: enums, the execution-argument struct, the log callback
type and every function's prototype. Nothing here loads the library (mxq._lib does), so CI can import
this module alone and compare it with the header (bindings/check_ffi_sync.py).

Enums are IntEnum/IntFlag classes named after the C type without its "mxq" prefix and "_t" suffix,
members named after the constant without the common prefix (MXQ_STATUS_BAD_PARAM_SHAPE is
Status.BAD_PARAM_SHAPE). Values the library returns that are not members (a status added later)
are kept as plain ints, never an error.
"""

import ctypes
import enum

HEADER_VERSION = (0, 1, 0)  # MXQ_VERSION_MAJOR/MINOR/PATCH of the header this module mirrors


class Status(enum.IntEnum):
    """Status codes; never renumbered, only added. C: mxqStatus_t.

    The library may return codes this module does not know yet: they stay plain ints
    (MXQError.status), and status_category() classifies any code."""
    SUCCESS = 0
    BAD_PARAM = 1000  # generic invalid argument
    BAD_PARAM_NULL_POINTER = 1001  # a required pointer is NULL
    BAD_PARAM_UNKNOWN_ATTRIBUTE = 1002  # attribute id not known to this plan type
    BAD_PARAM_ATTRIBUTE_SIZE = 1003  # sizeInBytes does not match the attribute's C type
    BAD_PARAM_INVALID_VALUE = 1004  # an attribute or enum value is out of its range
    BAD_PARAM_SHAPE = 1005  # zero/negative/overflowing/inconsistent dimensions
    BAD_PARAM_MISALIGNED = 1006  # a pointer lacks the alignment the plan requires
    BAD_PARAM_WORKSPACE = 1007  # workspace smaller than GetWorkspaceSize, or NULL
    BAD_PARAM_GROUP_OFFSETS = 1008  # group offsets decrease, are negative or overrun
    BAD_PARAM_ARGUMENT = 1009  # missing, duplicate or unknown execution argument
    BAD_PARAM_NOT_FINALIZED = 1010  # execute / workspace query before Finalize
    BAD_PARAM_ALREADY_FINALIZED = 1011  # SetAttribute or Finalize on a finalized plan
    BAD_PARAM_HANDLE_MISMATCH = 1012  # plan executed with a handle other than its own
    NOT_SUPPORTED = 2000  # generic: valid request, not implemented
    NOT_SUPPORTED_DTYPE = 2001  # data type (combination) not supported
    NOT_SUPPORTED_ARCH = 2002  # no kernel for this GPU architecture
    NOT_SUPPORTED_COMBINATION = 2003  # attributes valid alone, not together
    NOT_SUPPORTED_BACKEND = 2004  # backend not available in this build
    INTERNAL_ERROR = 3000  # a bug in mxq; please report
    ALLOC_FAILED = 3001  # host memory allocation failed
    CUDA_DRIVER_NOT_FOUND = 4000  # libcuda.so.1 could not be loaded / is too old
    CUDA_NO_DEVICE = 4001  # no CUDA device, or the ordinal is out of range
    CUDA_ERROR = 4002  # a CUDA driver call failed (message has details)
    CUDA_KERNEL_LOAD_FAILED = 4003  # the embedded kernel image did not load


class DType(enum.IntEnum):
    """Data types. C: mxqDataType_t."""
    FP32 = 0
    FP16 = 1
    BF16 = 2
    E4M3 = 3  # FP8 E4M3 (OCP "fn": max 448, no Inf, NaN = S.1111.111)
    E5M2 = 4  # FP8 E5M2 (max 57344, IEEE-like Inf/NaN)
    UE8M0 = 5  # unsigned 8-bit exponent scale, value 2^(E-127), 0xFF = NaN
    INT32 = 6
    INT64 = 7


class Backend(enum.IntEnum):
    """Backends. C: mxqBackend_t."""
    CUDA = 0  # NVIDIA GPU through the CUDA driver API (loaded at handle creation)
    CPU = 1  # CPU reference backend: every operation, host memory, synchronous


class ScaleMode(enum.IntEnum):
    """How the UE8M0 scale of a 32-block follows from its amax (docs/NUMERICS.md). C: mxqScaleMode_t."""
    RCEIL = 0  # default: scale rounded up so nothing saturates (TE, cuBLAS, cuDNN)
    FLOOR = 1  # OCP MX v1.0: 2^(floor(log2 amax) - emax); elements may saturate
    CEIL = 2  # 2^(ceil(log2 amax) - emax)
    EVEN = 3  # amax rounded to the element mantissa first, then FLOOR


class NonfinitePolicy(enum.IntEnum):
    """What non-finite inputs do (docs/NUMERICS.md). C: mxqNonfinitePolicy_t."""
    TE_COMPATIBLE = 0  # default: NaN ignored by the block max and stored as NaN
    PROPAGATE = 1  # OCP: any NaN/Inf in a block gives scale 0xFF (NaN)


class ScaleLayout(enum.IntEnum):
    """Scale tensor layouts (docs/LAYOUTS.md). C: mxqScaleLayout_t."""
    SWIZZLED_128x4 = 0  # default: what block-scaled tensor cores read (cuBLASLt
    LINEAR = 1  # row-major [rows, ceil(K/32)]


class Direction(enum.IntFlag):
    """Quantization orientation (bit mask). C: mxqQuantizeDirection_t."""
    ROWWISE = 1  # 1x32 blocks along the contiguous axis K; data keeps [R, K]
    COLUMNWISE = 2  # 32x1 blocks along R; data [K, R] when transposed (default)
    BOTH = 3  # both outputs from one read of the input


class Grouping(enum.IntEnum):
    """Grouping of the rows of a quantized tensor (MoE). C: mxqGrouping_t."""
    NONE = 0
    ROWS = 1


class Fusion(enum.IntEnum):
    """Fused prologue of the quantizer. C: mxqFusion_t."""
    NONE = 0
    SWIGLU = 1


class Arg(enum.IntEnum):
    """Execution argument slots. A plan documents which slots it reads and writes. C: mxqArgSlot_t."""
    X = 1  # high-precision tensor: quantize input, dequantize output
    ROWWISE_DATA = 2  # FP8 data, rowwise
    ROWWISE_SCALES = 3  # UE8M0 scales of the rowwise data
    COLWISE_DATA = 4  # FP8 data, columnwise
    COLWISE_SCALES = 5  # UE8M0 scales of the columnwise data
    GROUP_OFFSETS = 6  # int32 or int64 group end offsets [G]
    AMAX = 7  # optional fp32 [1]: global max |x| of the quantized tensor
    ACTIVATION = 8  # optional output of a fused prologue (SwiGLU), input dtype
    A_DATA = 20
    A_SCALES = 21
    B_DATA = 22
    B_SCALES = 23
    D = 24
    Q_DATA = 40  # Q FP8, quantized along D
    Q_SCALES = 41
    K_DATA = 42  # K FP8, quantized along D
    K_SCALES = 43
    V_DATA = 44  # forward: V FP8 quantized along S_kv; backward: along D
    V_SCALES = 45
    O = 46  # O bf16 (forward output, backward input)
    LSE = 47  # LSE fp32 [B, Hq, Sq] (forward output, backward input)
    DO_DATA = 48  # backward: dO FP8 quantized along D
    DO_SCALES = 49
    DO = 50  # backward: dO bf16
    Q_T_DATA = 51  # backward: Q FP8 quantized along S (columnwise)
    Q_T_SCALES = 52
    K_T_DATA = 53  # backward: K FP8 quantized along S (columnwise)
    K_T_SCALES = 54
    DO_T_DATA = 55  # backward: dO FP8 quantized along S (columnwise)
    DO_T_SCALES = 56
    DQ = 57  # backward outputs, bf16, same layout as Q / K / V
    DK = 58
    DV = 59
    CU_SEQLENS_Q = 60  # varlen: int32 [B + 1] cumulative sequence starts
    CU_SEQLENS_KV = 61


class LogLevel(enum.IntEnum):
    """Log levels (MXQ_LOG_LEVEL / MXQ_LOG_FILE apply until a setter is called). C: mxqLogLevel_t."""
    OFF = 0
    ERROR = 1
    WARN = 2
    INFO = 3  # plan finalization: which kernel was chosen and why
    DEBUG = 4
    TRACE = 5  # every API call with its arguments


class QuantizeAttr(enum.IntEnum):
    """Quantize plan attributes (C type and default of each: the header). C: mxqQuantizeAttribute_t."""
    INPUT_DTYPE = 0  # int32_t mxqDataType_t: BF16 (default), FP16, FP32
    OUTPUT_DTYPE = 1  # int32_t mxqDataType_t: E4M3 (default), E5M2
    SCALE_MODE = 2  # int32_t mxqScaleMode_t, default RCEIL
    NONFINITE_POLICY = 3  # int32_t mxqNonfinitePolicy_t, default TE_COMPATIBLE
    DIRECTION = 4  # int32_t mxqQuantizeDirection_t, default ROWWISE
    COLWISE_TRANSPOSED = 5  # int32_t bool, default 1: columnwise data [cols, rows]
    SCALE_LAYOUT = 6  # int32_t mxqScaleLayout_t, default SWIZZLED_128x4
    BLOCK_2D = 7  # int32_t bool, default 0: one scale per 32x32 tile,
    ROWS = 8  # int64_t, required, > 0
    COLS = 9  # int64_t, required, > 0 (after fusion: SwiGLU input
    BATCH = 10  # int64_t, default 1: [batch, rows, cols] tensors,
    INPUT_LD = 11  # int64_t input row stride in elements, default
    INPUT_BATCH_STRIDE = 12  # int64_t elements between batches, default rows*ld
    GROUPING = 13  # int32_t mxqGrouping_t, default NONE (needs batch 1)
    NUM_GROUPS = 14  # int64_t, required with GROUPING_ROWS, >= 1
    GROUP_OFFSETS_DTYPE = 15  # int32_t mxqDataType_t: INT32 (default), INT64
    FUSION = 16  # int32_t mxqFusion_t, default NONE


class DequantizeAttr(enum.IntEnum):
    """Dequantize plan attributes. C: mxqDequantizeAttribute_t."""
    INPUT_DTYPE = 0  # int32_t: E4M3 (default), E5M2
    OUTPUT_DTYPE = 1  # int32_t: BF16 (default), FP16, FP32
    DIRECTION = 2  # int32_t: ROWWISE (default) or COLUMNWISE
    COLWISE_TRANSPOSED = 3  # int32_t bool, default 1
    SCALE_LAYOUT = 4  # int32_t mxqScaleLayout_t, default SWIZZLED_128x4
    ROWS = 5  # int64_t, required
    COLS = 6  # int64_t, required
    BATCH = 7  # int64_t, default 1
    OUTPUT_LD = 8  # int64_t, default cols
    GROUPING = 9  # int32_t mxqGrouping_t, default NONE
    NUM_GROUPS = 10  # int64_t
    GROUP_OFFSETS_DTYPE = 11  # int32_t: INT32 (default), INT64


class GemmGrouping(enum.IntEnum):
    """Grouped GEMM grouping: dense / M-grouped (fprop, dgrad) / K-grouped (wgrad). C: mxqGemmGrouping_t."""
    NONE = 0
    M = 1
    K = 2


class GemmAttr(enum.IntEnum):
    """Grouped GEMM plan attributes. C: mxqGroupedGemmAttribute_t."""
    GROUPING = 0  # int32_t mxqGemmGrouping_t, default NONE
    M = 1  # int64_t, required (total rows when M_GROUPED)
    N = 2  # int64_t, required
    K = 3  # int64_t, required (total tokens when K_GROUPED)
    NUM_GROUPS = 4  # int64_t, required when grouped, >= 1
    BATCH = 5  # int64_t, default 1 (GROUPING_NONE only)
    A_DTYPE = 6  # int32_t: E4M3 (default), E5M2
    B_DTYPE = 7  # int32_t: E4M3 (default), E5M2 (not both E5M2)
    D_DTYPE = 8  # int32_t: BF16 (default), FP32
    SCALE_LAYOUT = 9  # int32_t mxqScaleLayout_t, both operands, default SWIZZLED
    ALPHA = 10  # float, default 1.0
    ACCUMULATE = 11  # int32_t bool, default 0: D = alpha*AB^T; 1: D += alpha*AB^T
    GROUP_OFFSETS_DTYPE = 12  # int32_t: INT32 (default), INT64
    B_BLOCK_2D = 13  # int32_t bool hint, default 0: B was quantized in 32x32
    WORKSPACE_LIMIT = 14  # int64_t bytes >= 0, default INT64_MAX (no limit): the most


class AttentionLayout(enum.IntEnum):
    """Attention tensor layout. C: mxqAttentionLayout_t."""
    BHSD = 0
    BSHD = 1


class AttentionMask(enum.IntEnum):
    """Attention mask. C: mxqAttentionMask_t."""
    NONE = 0
    CAUSAL_TOP_LEFT = 1  # key j visible to query i iff j <= i
    CAUSAL_BOTTOM_RIGHT = 2  # iff j <= i + Skv - Sq


class AttentionDirection(enum.IntEnum):
    """Attention forward or backward. C: mxqAttentionDirection_t."""
    FORWARD = 0
    BACKWARD = 1


class AttentionAttr(enum.IntEnum):
    """Attention plan attributes. C: mxqAttentionAttribute_t."""
    DIRECTION = 0  # int32_t mxqAttentionDirection_t, default FORWARD
    BATCH = 1  # int64_t B, required
    HEADS_Q = 2  # int64_t Hq, required
    HEADS_KV = 3  # int64_t Hkv, default Hq; must divide Hq
    SEQLEN_Q = 4  # int64_t Sq, required
    SEQLEN_KV = 5  # int64_t Skv, required
    HEAD_DIM = 6  # int64_t D, required
    LAYOUT = 7  # int32_t mxqAttentionLayout_t, default BHSD
    MASK = 8  # int32_t mxqAttentionMask_t, default NONE
    SOFTMAX_SCALE = 9  # float, default 1/sqrt(D) (Get after Finalize: resolved)
    P_SCALE = 10  # float, default 256: P is quantized as fp8(P*s)/s
    SCALE_LAYOUT = 11  # int32_t mxqScaleLayout_t, default SWIZZLED_128x4
    VARLEN = 12  # int32_t bool, default 0
    DETERMINISTIC = 13  # int32_t bool, default 0 (backward)
    QKV_DTYPE = 14  # int32_t: E4M3 (default)


ENUMS = {
    "mxqStatus_t": Status,
    "mxqDataType_t": DType,
    "mxqBackend_t": Backend,
    "mxqScaleMode_t": ScaleMode,
    "mxqNonfinitePolicy_t": NonfinitePolicy,
    "mxqScaleLayout_t": ScaleLayout,
    "mxqQuantizeDirection_t": Direction,
    "mxqGrouping_t": Grouping,
    "mxqFusion_t": Fusion,
    "mxqArgSlot_t": Arg,
    "mxqLogLevel_t": LogLevel,
    "mxqQuantizeAttribute_t": QuantizeAttr,
    "mxqDequantizeAttribute_t": DequantizeAttr,
    "mxqGemmGrouping_t": GemmGrouping,
    "mxqGroupedGemmAttribute_t": GemmAttr,
    "mxqAttentionLayout_t": AttentionLayout,
    "mxqAttentionMask_t": AttentionMask,
    "mxqAttentionDirection_t": AttentionDirection,
    "mxqAttentionAttribute_t": AttentionAttr,
}


def status_category(code):
    """'success', 'bad_param', 'not_supported', 'internal', 'cuda' or 'unknown' for any int code."""
    code = int(code)
    if code == 0:
        return "success"
    return {1: "bad_param", 2: "not_supported", 3: "internal", 4: "cuda"}.get(code // 1000, "unknown")


def _attr_types(attrs, int64=(), float32=()):
    """The C type of each attribute of a plan: int32_t unless listed (the header documents each one)."""
    return {a: ctypes.c_int64 if a.name in int64 else ctypes.c_float if a.name in float32 else ctypes.c_int32
            for a in attrs.__members__.values()}


ATTR_CTYPES = {
    QuantizeAttr: _attr_types(QuantizeAttr, int64=("ROWS", "COLS", "BATCH", "INPUT_LD", "INPUT_BATCH_STRIDE",
                                                    "NUM_GROUPS")),
    DequantizeAttr: _attr_types(DequantizeAttr, int64=("ROWS", "COLS", "BATCH", "OUTPUT_LD", "NUM_GROUPS")),
    GemmAttr: _attr_types(GemmAttr, int64=("M", "N", "K", "NUM_GROUPS", "BATCH", "WORKSPACE_LIMIT"), float32=("ALPHA",)),
    AttentionAttr: _attr_types(AttentionAttr, int64=("BATCH", "HEADS_Q", "HEADS_KV", "SEQLEN_Q", "SEQLEN_KV",
                                                      "HEAD_DIM"),
                               float32=("SOFTMAX_SCALE", "P_SCALE")),
}


class ExecArg(ctypes.Structure):
    """mxqExecArg_t: one (slot, pointer) execution argument."""
    _fields_ = [("slot", ctypes.c_int32), ("reserved", ctypes.c_int32), ("ptr", ctypes.c_void_p)]


# mxqLogCallback_t(level, message, userData)
LogCallback = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)

_int, _size, _ptr, _str = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_char_p
_P = ctypes.POINTER
_plan_fns = {}
for _op in ("Quantize", "Dequantize", "GroupedGemm", "Attention"):
    _plan_fns.update({
        f"mxq{_op}PlanCreate": (_int, [_ptr, _P(_ptr)]),
        f"mxq{_op}PlanSetAttribute": (_int, [_ptr, _int, _ptr, _size]),
        f"mxq{_op}PlanGetAttribute": (_int, [_ptr, _int, _ptr, _size, _P(_size)]),
        f"mxq{_op}PlanFinalize": (_int, [_ptr]),
        f"mxq{_op}PlanGetWorkspaceSize": (_int, [_ptr, _P(_size)]),
        f"mxq{_op}Execute": (_int, [_ptr, _ptr, _P(ExecArg), _int, _ptr, _size, _ptr]),
        f"mxq{_op}PlanDestroy": (_int, [_ptr]),
    })

# name -> (restype, argtypes). Enums travel as c_int, opaque handles and streams as c_void_p.
PROTOTYPES = {
    "mxqGetVersion": (ctypes.c_uint32, []),
    "mxqGetBuildInfo": (_str, []),
    "mxqGetStatusName": (_str, [_int]),
    "mxqGetStatusString": (_str, [_int]),
    "mxqGetLastErrorMessage": (_str, []),
    "mxqLoggerSetLevel": (_int, [_int]),
    "mxqLoggerGetLevel": (_int, [_P(_int)]),
    "mxqLoggerSetFile": (_int, [_str]),
    "mxqLoggerSetCallback": (_int, [LogCallback, _ptr]),
    "mxqCreate": (_int, [_P(_ptr)]),
    "mxqCreateWithBackend": (_int, [_P(_ptr), _int, _int]),
    "mxqDestroy": (_int, [_ptr]),
    "mxqGetBackend": (_int, [_ptr, _P(_int)]),
    "mxqGetDevice": (_int, [_ptr, _P(_int), _P(_int)]),
    **_plan_fns,
    "mxqQuantizePlanGetOutputSize": (_int, [_ptr, _int, _P(_size)]),
    "mxqSwizzleScales": (_int, [_ptr, _int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                _ptr, _ptr, _ptr]),
    "mxqSwizzledScaleBytes": (_size, [ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]),
}
