"""mxq: MXFP8 quantization, grouped GEMM and attention (libmxq) from Python, through ctypes.

    import mxq
    with mxq.Handle("cpu") as h:                      # or mxq.Handle("cuda") with torch / cupy tensors
        a = mxq.quantize(h, x, group_offsets=offsets)  # x: numpy float32 [M, K]
        b = mxq.quantize(h, w)                         # w: [G, N, K]
        d = mxq.grouped_gemm(h, a, b)                  # [M, N] float32

Arrays: numpy on a CPU handle; on a CUDA handle anything with __cuda_array_interface__ or DLPack
(torch, cupy, jax). Plans (QuantizePlan, DequantizePlan, GroupedGemmPlan, AttentionPlan) expose the
whole C API; the helpers cover the common cases. Failures raise MXQError with the library's status
and message. The library is found through MXQ_LIBRARY, MXQ_LIB_DIR or the loader's search path.
"""

from ._ffi import (Arg, AttentionAttr, AttentionDirection, AttentionLayout, AttentionMask, Backend, DType,
                   DequantizeAttr, Direction, Fusion, GemmAttr, GemmGrouping, Grouping, LogLevel,
                   NonfinitePolicy, QuantizeAttr, ScaleLayout, ScaleMode, Status, status_category)
from ._lib import MXQError
from ._api import (AttentionPlan, DequantizePlan, GroupedGemmPlan, Handle, MXTensor, QuantizePlan, attention,
                   build_info, dequantize, grouped_gemm, log_level, quantize, set_log_callback, set_log_file,
                   set_log_level, swizzled_scale_bytes, version)

__version__ = "0.1.0"

__all__ = [
    "Arg", "AttentionAttr", "AttentionDirection", "AttentionLayout", "AttentionMask", "Backend", "DType",
    "DequantizeAttr", "Direction", "Fusion", "GemmAttr", "GemmGrouping", "Grouping", "LogLevel", "NonfinitePolicy",
    "QuantizeAttr", "ScaleLayout", "ScaleMode", "Status", "status_category", "MXQError", "AttentionPlan",
    "DequantizePlan", "GroupedGemmPlan", "Handle", "MXTensor", "QuantizePlan", "attention", "build_info",
    "dequantize", "grouped_gemm", "log_level", "quantize", "set_log_callback", "set_log_file", "set_log_level",
    "swizzled_scale_bytes", "version",
]
