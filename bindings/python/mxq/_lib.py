"""Finds and loads libmxq, applies the prototypes of mxq._ffi, and turns failing statuses into MXQError.

The library is loaded on first use, not at import, so `import mxq` works (and the enums can be used)
on a machine without the library. Search order: MXQ_LIBRARY (a file), MXQ_LIB_DIR or MXQ_BUILD_DIR (a
directory holding libmxq.so), then the dynamic loader's own search (ctypes.util.find_library).
"""

import ctypes
import ctypes.util
import os
import threading

from . import _ffi

_lock = threading.Lock()
_lib = None


class MXQError(RuntimeError):
    """A failed mxq call (or a binding-side check that failed before the call).

    status: the numeric code, an _ffi.Status member when known, else a plain int.
    name: the library's symbolic name ("MXQ_STATUS_BAD_PARAM_SHAPE").
    message: the library's detailed message for this failure.
    """

    def __init__(self, status, name, message, function=None):
        try:
            status = _ffi.Status(status)
        except ValueError:
            status = int(status)
        self.status, self.name, self.message, self.function = status, name, message, function
        where = f"{function}: " if function and not message.startswith(function) else ""
        super().__init__(f"{where}{name} ({int(status)}): {message}")

    @property
    def category(self):
        return _ffi.status_category(self.status)


def _candidates():
    if os.environ.get("MXQ_LIBRARY"):
        return [os.environ["MXQ_LIBRARY"]]
    out = []
    for var in ("MXQ_LIB_DIR", "MXQ_BUILD_DIR"):
        d = os.environ.get(var)
        if d:
            out += [os.path.join(d, n) for n in ("libmxq.so", "libmxq.dylib", "mxq.dll")]
    found = ctypes.util.find_library("mxq")
    if found:
        out.append(found)
    out.append("libmxq.so")
    return out


def lib():
    """The loaded library with every prototype applied (loads it on first call)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            errors = []
            for path in _candidates():
                try:
                    handle = ctypes.CDLL(path)
                    break
                except OSError as e:
                    errors.append(f"{path}: {e}")
            else:
                raise OSError("libmxq not found; set MXQ_LIBRARY to the library file or MXQ_LIB_DIR to its "
                              "directory (tried: " + "; ".join(errors) + ")")
            for name, (restype, argtypes) in _ffi.PROTOTYPES.items():
                fn = getattr(handle, name)
                fn.restype, fn.argtypes = restype, argtypes
            _lib = handle
    return _lib


def status_name(status):
    return lib().mxqGetStatusName(int(status)).decode()


def status_string(status):
    return lib().mxqGetStatusString(int(status)).decode()


def last_error_message():
    return lib().mxqGetLastErrorMessage().decode(errors="replace")


def call(name, *args):
    """Call an mxq function that returns mxqStatus_t; raise MXQError unless it succeeded."""
    status = getattr(lib(), name)(*args)
    if status != 0:
        raise MXQError(status, status_name(status), last_error_message(), name)


def fail(status, message):
    """A binding-side validation failure, reported like the library's own."""
    raise MXQError(status, f"MXQ_STATUS_{_ffi.Status(status).name}", message)
