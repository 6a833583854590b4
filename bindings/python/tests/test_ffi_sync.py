"""The FFI drift check (bindings/check_ffi_sync.py) passes on the tree as it is, and fails on each kind
of drift it claims to catch, shown on mutated copies of the Rust and Python declarations."""

import importlib.util
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("check_ffi_sync", ROOT / "bindings" / "check_ffi_sync.py")
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)


class FfiSyncTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.header = check.mh.parse(check.HEADER)
        cls.version = check.mh.project_version(ROOT / "CMakeLists.txt")

    def test_in_sync(self):
        self.assertEqual(check.check_rust(self.header, self.version), [])
        self.assertEqual(check.check_python(self.header, self.version), [])

    def mutated(self, path, old, new, checker):
        text = path.read_text()
        self.assertIn(old, text)
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d) / path.name
            tmp.write_text(text.replace(old, new, 1))
            attr = "RUST_SYS" if path == check.RUST_SYS else "PY_FFI"
            saved = getattr(check, attr)
            setattr(check, attr, tmp)
            try:
                return checker(self.header, self.version)
            finally:
                setattr(check, attr, saved)

    def test_rust_drift_is_caught(self):
        cases = [
            ("pub const MXQ_STATUS_CUDA_ERROR: mxqStatus_t = 4002;", "pub const MXQ_STATUS_CUDA_ERROR: mxqStatus_t = 4012;"),
            ("pub const MXQ_ARG_D: mxqArgSlot_t = 24;\n", ""),
            ("    pub fn mxqGetVersion() -> u32;\n", ""),
            ("workspaceBytes: usize", "workspaceBytes: u64"),
            ("pub reserved: i32,", "pub reserved: u32,"),
            ("message: *const c_char", "message: *mut c_char"),
            ("pub type mxqStatus_t = c_int;", "pub type mxqStatus_t = u8;"),
            ("mxqContext => mxqHandle_t,", "mxqContext2 => mxqHandle_t,"),
            ("pub const MXQ_VERSION_MINOR: u32 = 1;", "pub const MXQ_VERSION_MINOR: u32 = 2;"),
        ]
        for old, new in cases:
            with self.subTest(old=old.strip()):
                self.assertTrue(self.mutated(check.RUST_SYS, old, new, check.check_rust))

    def test_python_drift_is_caught(self):
        cases = [
            ("    BAD_PARAM_SHAPE = 1005", "    BAD_PARAM_SHAPE = 1006"),
            ("    LINEAR = 1", "    LINEAR = 1\n    TILED = 2"),
            ('"NUM_GROUPS", "BATCH", "WORKSPACE_LIMIT")', '"NUM_GROUPS", "BATCH")'),
            ('float32=("ALPHA",)', "float32=()"),
            ('"mxqSwizzledScaleBytes": (_size,', '"mxqSwizzledScaleBytes": (ctypes.c_int64,'),
            ('    "mxqGetBuildInfo": (_str, []),\n', ""),
            ('("reserved", ctypes.c_int32)', '("reserved", ctypes.c_uint32)'),
            ("HEADER_VERSION = (0, 1, 0)", "HEADER_VERSION = (0, 2, 0)"),
        ]
        for old, new in cases:
            with self.subTest(old=old.strip()):
                self.assertTrue(self.mutated(check.PY_FFI, old, new, check.check_python))


if __name__ == "__main__":
    unittest.main()
