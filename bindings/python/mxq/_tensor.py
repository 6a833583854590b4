"""Turns the array objects users pass (numpy arrays, torch / cupy / jax tensors, raw pointers) into
(pointer, byte size, device) triples, and allocates outputs of the same kind.

Protocols, in the order they are tried: a plain int is a raw pointer (no checks possible);
`__cuda_array_interface__` (cupy, numba, torch on the GPU); `__array_interface__` (numpy and anything
buffer-like on the host); DLPack (`__dlpack__`, read with ctypes from the capsule; torch tensors
whose dtype the CUDA interface cannot express, bfloat16 in particular, arrive here). Nothing here
imports numpy or torch at module import: a GPU-only user needs neither numpy nor the other framework.
"""

import ctypes
import math

# DLPack device types and the DLTensor struct (dlpack.h, ABI stable since v0.2).
_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13
_DL_HOST = {_KDL_CPU, _KDL_CUDA_HOST}
_DL_CUDA = {_KDL_CUDA, _KDL_CUDA_MANAGED}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get.restype, _capsule_get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]

_TYPESTR = {"f4": "float32", "f2": "float16", "f8": "float64", "u1": "uint8", "i1": "int8", "u2": "uint16",
            "i2": "int16", "i4": "int32", "i8": "int64", "u4": "uint32", "u8": "uint64"}
_DL_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat"}


class Buffer:
    """What the library needs to know of one argument. device is 'cpu', 'cuda' or None (raw int)."""
    __slots__ = ("ptr", "nbytes", "device", "device_id", "dtype", "shape", "readonly", "keepalive", "framework")

    def __init__(self, ptr, nbytes, device, device_id=None, dtype=None, shape=None, readonly=False,
                 keepalive=None, framework=None):
        self.ptr, self.nbytes, self.device, self.device_id = ptr, nbytes, device, device_id
        self.dtype, self.shape, self.readonly, self.keepalive, self.framework = (
            dtype, shape, readonly, keepalive, framework)


def _framework(obj):
    return type(obj).__module__.split(".")[0]


def _dtype_name(obj, fallback):
    """A framework-neutral dtype name: 'float32', 'bfloat16', 'uint8', ... ('torch.' stripped)."""
    dt = getattr(obj, "dtype", None)
    if dt is not None:
        name = str(dt).replace("torch.", "")
        if name in ("bfloat16", "float16", "float32", "float64", "uint8", "int8", "uint16", "int16", "int32",
                    "int64", "uint32", "uint64") or name.startswith("float8"):
            return name
    return fallback


def _c_contiguous(shape, strides, itemsize):
    if strides is None:
        return True
    expect = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def _from_interface(obj, iface, device):
    shape = tuple(iface["shape"])
    typestr = iface["typestr"]
    itemsize = int(typestr[2:])
    if not _c_contiguous(shape, iface.get("strides"), itemsize):
        raise ValueError("mxq needs C-contiguous arrays (make a contiguous copy first)")
    ptr, readonly = iface["data"]
    device_id = None
    if device == "cuda":
        dev = getattr(obj, "device", None)
        # torch.device has .index, cupy's Device has .id
        device_id = dev if isinstance(dev, int) else getattr(dev, "index", getattr(dev, "id", None))
    return Buffer(ptr or 0, math.prod(shape) * itemsize, device, device_id,
                  _dtype_name(obj, _TYPESTR.get(typestr[1:], f"void{itemsize * 8}")), shape, bool(readonly),
                  obj, _framework(obj))


def _from_dlpack(obj, stream):
    dev_type, dev_id = obj.__dlpack_device__()
    if dev_type in _DL_CUDA:
        # The DLPack stream argument: 1 is the legacy default stream, 0 is not allowed for CUDA.
        capsule = obj.__dlpack__(stream=stream if stream else 1)
    else:
        capsule = obj.__dlpack__()
    t = _DLTensor.from_address(_capsule_get(capsule, b"dltensor"))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    itemsize = t.dtype.bits * t.dtype.lanes // 8
    strides = None if not t.strides else tuple(t.strides[i] * itemsize for i in range(t.ndim))
    if not _c_contiguous(shape, strides, itemsize):
        raise ValueError("mxq needs C-contiguous tensors (call .contiguous() first)")
    if dev_type in _DL_HOST:
        device = "cpu"
    elif dev_type in _DL_CUDA:
        device = "cuda"
    else:
        raise ValueError(f"unsupported DLPack device type {dev_type} (mxq takes host or CUDA memory)")
    dtype = _dtype_name(obj, f"{_DL_CODES.get(t.dtype.code, 'void')}{t.dtype.bits}")
    # The capsule keeps the producer's tensor alive until it is released after the call.
    return Buffer((t.data or 0) + t.byte_offset, math.prod(shape) * itemsize, device, dev_id, dtype, shape,
                  False, (obj, capsule), _framework(obj))


def as_buffer(obj, stream=0):
    """Describe `obj` (see the module doc). Raises TypeError for objects no protocol covers."""
    if isinstance(obj, Buffer):
        return obj
    if isinstance(obj, int) and not isinstance(obj, bool):
        return Buffer(obj, None, None)
    if hasattr(obj, "__cuda_array_interface__"):
        try:
            iface = obj.__cuda_array_interface__
        except (TypeError, RuntimeError, AttributeError):
            iface = None  # e.g. torch bfloat16: no typestr for it; DLPack below can say it
        if iface is not None:
            return _from_interface(obj, iface, "cuda")
    if hasattr(obj, "__array_interface__"):
        return _from_interface(obj, obj.__array_interface__, "cpu")
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _from_dlpack(obj, stream)
    raise TypeError(f"mxq cannot take a {type(obj).__name__}: pass a numpy array, an object with "
                    "__cuda_array_interface__ or __dlpack__, or an int pointer")


def default_stream(buffers):
    """The stream to enqueue on when the caller gave none: the current stream of the framework that
    owns the GPU tensors (torch, cupy), else 0 (the legacy default stream)."""
    for b in buffers:
        if b.device != "cuda":
            continue
        if b.framework == "torch":
            import torch
            return torch.cuda.current_stream(b.device_id).cuda_stream
        if b.framework == "cupy":
            import cupy
            return cupy.cuda.get_current_stream().ptr
    return 0


def stream_handle(stream):
    """An int cudaStream_t from an int, a torch.cuda.Stream (.cuda_stream) or a cupy Stream (.ptr)."""
    if stream is None:
        return None
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)


# ---- allocation ------------------------------------------------------------------------------------------

class Allocator:
    """Allocates outputs and workspaces like an example tensor: numpy on the host, torch or cupy on the GPU."""

    def __init__(self, device, like=None):
        self.device, self.like = device, like

    @classmethod
    def for_buffers(cls, device, buffers):
        like = next((b for b in buffers if b.device == device and b.framework in ("torch", "cupy", "numpy")), None)
        return cls(device, like)

    def empty(self, shape, dtype):
        """An uninitialised C-contiguous array; dtype a name ('uint8', 'float32', 'bfloat16', ...)."""
        shape = tuple(int(s) for s in shape)
        if self.device == "cpu":
            import numpy as np
            if dtype == "bfloat16":
                dtype = "uint16"  # numpy has no bfloat16: bf16 values travel as their bit patterns
            return np.empty(shape, dtype=np.dtype(dtype))
        fw = self.like.framework if self.like is not None else None
        if fw == "torch":
            import torch
            return torch.empty(shape, dtype=getattr(torch, dtype), device=f"cuda:{self.like.device_id or 0}")
        if fw == "cupy":
            import cupy
            if dtype == "bfloat16":
                dtype = "uint16"
            with cupy.cuda.Device(self.like.device_id or 0):
                return cupy.empty(shape, dtype=dtype)
        raise TypeError("mxq cannot allocate GPU outputs without a torch or cupy tensor among the inputs; "
                        "pass out=... (and workspace=...) explicitly")

    def workspace(self, nbytes, align=256):
        """A byte buffer of at least nbytes whose start is `align`-aligned, and its pointer."""
        if nbytes == 0:
            return None, 0
        raw = self.empty((nbytes + align,), "uint8")
        ptr = as_buffer(raw).ptr
        pad = (-ptr) % align
        return raw, ptr + pad
