"""Python binding on the CPU backend: library-wide calls, handle and plan lifecycles, every error path the
binding adds or forwards, and the numerics of each helper against independent numpy references
(bit-exact for quantized bytes, bounded error for GEMM and attention). Inputs are random per run
(seed in every failure message); outputs are poisoned by the library-facing helpers' allocators being
uninitialised, so every check covers every element."""

import ctypes
import math
import threading
import unittest

import numpy as np

from _support import (SEED, dequant_linear, e4m3_rne, first_mismatch, formats, mxq, rceil_e4m3_rowwise, rng,
                      wide_floats)


def setUpModule():
    mxq.set_log_level(mxq.LogLevel.OFF)  # expected failures below would otherwise log at ERROR


class LibraryTest(unittest.TestCase):
    def test_version_matches_package(self):
        self.assertEqual(mxq.version(), tuple(int(p) for p in mxq.__version__.split(".")))
        self.assertIn("mxq", mxq.build_info())

    def test_status_names_match_enum(self):
        lib = mxq._lib
        for st in mxq.Status:
            self.assertEqual(lib.status_name(st), f"MXQ_STATUS_{st.name}")
            self.assertTrue(lib.status_string(st))
        self.assertEqual(lib.status_name(1999), "MXQ_STATUS_UNKNOWN")

    def test_unknown_status_stays_an_int(self):
        e = mxq.MXQError(1999, "MXQ_STATUS_UNKNOWN", "from a newer library")
        self.assertEqual(e.status, 1999)
        self.assertNotIsInstance(e.status, mxq.Status)
        self.assertEqual(e.category, "bad_param")
        self.assertEqual(mxq.status_category(4003), "cuda")
        self.assertEqual(mxq.status_category(0), "success")
        self.assertEqual(mxq.status_category(17), "unknown")

    def test_log_level_and_callback(self):
        seen = []
        mxq.set_log_level("info")
        self.assertEqual(mxq.log_level(), mxq.LogLevel.INFO)
        mxq.set_log_callback(lambda level, msg: seen.append((level, msg)))
        try:
            with mxq.Handle.cpu() as h, mxq.QuantizePlan(h, rows=64, cols=64):
                pass
            with self.assertRaises(mxq.MXQError):
                mxq.QuantizePlan(mxq.Handle.cpu(), rows=0)
        finally:
            mxq.set_log_callback(None)
            mxq.set_log_level(mxq.LogLevel.OFF)
        self.assertTrue(any(level == mxq.LogLevel.INFO for level, _ in seen), seen)
        self.assertTrue(any(level == mxq.LogLevel.ERROR and "ROWS" in msg for level, msg in seen), seen)
        with self.assertRaises(ValueError):
            mxq.set_log_level("loud")

    def test_swizzled_scale_bytes(self):
        self.assertEqual(mxq.swizzled_scale_bytes(2, 129, 5), 2 * 256 * 8)
        self.assertEqual(mxq.swizzled_scale_bytes(1, 0, 5), 0)


class HandleTest(unittest.TestCase):
    def test_cpu_handle(self):
        with mxq.Handle("cpu") as h:
            self.assertEqual(h.backend, mxq.Backend.CPU)
            self.assertEqual((h.device, h.compute_capability), (-1, 0))
            self.assertEqual(h.memory, "cpu")
        self.assertTrue(h.closed)
        h.close()  # closing twice is fine
        with self.assertRaises(mxq.MXQError) as cm:
            mxq.QuantizePlan(h, rows=4, cols=4)
        self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_NULL_POINTER)

    def test_bad_backend_arguments(self):
        with self.assertRaises(mxq.MXQError) as cm:
            mxq.Handle(mxq.Backend.CPU, 3)
        self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_INVALID_VALUE)
        self.assertTrue(cm.exception.message)
        with self.assertRaises(ValueError):
            mxq.Handle("tpu")

    def test_destroy_with_live_plan_is_refused_and_handle_survives(self):
        h = mxq.Handle.cpu()
        p = mxq.QuantizePlan(h, rows=32, cols=32)
        with self.assertRaises(mxq.MXQError) as cm:
            h.close()
        self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM)
        self.assertFalse(h.closed)
        p.close()
        h.close()


class PlanTest(unittest.TestCase):
    def setUp(self):
        self.h = mxq.Handle.cpu()

    def tearDown(self):
        self.h.close()

    def test_attributes_and_lifecycle(self):
        p = mxq.QuantizePlan(self.h, finalize=False)
        p.set("rows", 100).set(mxq.QuantizeAttr.COLS, 70).set("scale_layout", "linear")
        with self.assertRaises(mxq.MXQError) as cm:
            p.workspace_size
        self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_NOT_FINALIZED)
        p.finalize()
        self.assertEqual(p.get("batch"), 1)
        self.assertIs(p.get("scale_layout"), mxq.ScaleLayout.LINEAR)
        self.assertIs(p.get("input_dtype"), mxq.DType.BF16)
        self.assertEqual(p.output_size(mxq.Arg.ROWWISE_DATA), 7000)
        self.assertEqual(p.output_size("rowwise_scales"), 300)
        self.assertEqual(p.output_size(mxq.Arg.COLWISE_DATA), 0)
        with self.assertRaises(mxq.MXQError) as cm:
            p.set("rows", 5)
        self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_ALREADY_FINALIZED)
        p.close()
        p.close()

    def test_attribute_errors(self):
        with self.assertRaises(ValueError):
            mxq.QuantizePlan(self.h, rowz=3)
        with self.assertRaises(mxq.MXQError) as cm:
            mxq.QuantizePlan(self.h, input_dtype=99, rows=4, cols=4)
        self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_INVALID_VALUE)
        with self.assertRaises(mxq.MXQError) as cm:
            mxq.QuantizePlan(self.h, input_dtype=mxq.DType.E4M3, rows=4, cols=4)
        self.assertIn(cm.exception.category, ("bad_param", "not_supported"))
        with self.assertRaises(mxq.MXQError) as cm:
            mxq.GroupedGemmPlan(self.h, m=8, n=8)  # K missing
        self.assertTrue(cm.exception.message)

    def test_float_attribute_round_trip(self):
        with mxq.AttentionPlan(self.h, batch=1, heads_q=2, seqlen_q=64, seqlen_kv=64, head_dim=64, p_scale=128.0) as p:
            self.assertEqual(p.get("p_scale"), 128.0)
            self.assertAlmostEqual(p.get("softmax_scale"), 1 / 8, places=6)  # default resolved at finalize
            self.assertEqual(p.get("heads_kv"), 2)

    def test_execute_errors(self):
        x = np.ones((64, 64), np.float32)
        with mxq.QuantizePlan(self.h, input_dtype="fp32", rows=64, cols=64, scale_layout="linear") as p:
            q, s = np.empty((64, 64), np.uint8), np.empty(128, np.uint8)
            with self.assertRaises(mxq.MXQError) as cm:  # missing slot: the library says so
                p.execute({"x": x, "rowwise_data": q})
            self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_ARGUMENT)
            with self.assertRaises(mxq.MXQError) as cm:  # too small an output: the binding says so
                p.execute({"x": x, "rowwise_data": q, "rowwise_scales": np.empty(127, np.uint8)})
            self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_SHAPE)
            self.assertIn("ROWWISE_SCALES", str(cm.exception))
            with self.assertRaises(mxq.MXQError) as cm:  # too small an input
                p.execute({"x": x[:63], "rowwise_data": q, "rowwise_scales": s})
            self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_SHAPE)
            ro = np.empty((64, 64), np.uint8)
            ro.flags.writeable = False
            with self.assertRaises(mxq.MXQError) as cm:
                p.execute({"x": x, "rowwise_data": ro, "rowwise_scales": s})
            self.assertIn("read-only", cm.exception.message)
            with self.assertRaises(ValueError):  # strided views are refused, not misread
                p.execute({"x": np.ones((64, 128), np.float32)[:, ::2], "rowwise_data": q, "rowwise_scales": s})
            with self.assertRaises(TypeError):
                p.execute({"x": [1.0] * 4096, "rowwise_data": q, "rowwise_scales": s})

            class FakeGpuArray:
                __cuda_array_interface__ = {"shape": (64, 64), "typestr": "<f4", "data": (0x7000_0000, False),
                                            "version": 3, "strides": None}
            with self.assertRaises(mxq.MXQError) as cm:
                p.execute({"x": FakeGpuArray(), "rowwise_data": q, "rowwise_scales": s})
            self.assertIn("cuda memory given to a cpu handle", cm.exception.message)
            q[:] = 0xAB
            with self.assertRaises(mxq.MXQError) as cm:  # a foreign slot
                p.execute({"x": x, "rowwise_data": q, "rowwise_scales": s, "d": np.empty(4, np.float32)})
            self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_ARGUMENT)
            self.assertTrue((q == 0xAB).all(), "a failed execute wrote its output")

    def test_handle_mismatch(self):
        other = mxq.Handle.cpu()
        try:
            with mxq.QuantizePlan(other, input_dtype="fp32", rows=32, cols=32, scale_layout="linear") as p:
                p.handle = self.h  # execute through another handle
                with self.assertRaises(mxq.MXQError) as cm:
                    p.execute({"x": np.ones((32, 32), np.float32), "rowwise_data": np.empty((32, 32), np.uint8),
                               "rowwise_scales": np.empty(32, np.uint8)})
                self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_HANDLE_MISMATCH)
                p.handle = other
        finally:
            other.close()

    def test_raw_pointer_arguments(self):
        x = wide_floats(rng(1), (40, 96))
        q, s = np.full((40, 96), 0xEE, np.uint8), np.full(120, 0xEE, np.uint8)
        with mxq.QuantizePlan(self.h, input_dtype="fp32", rows=40, cols=96, scale_layout="linear") as p:
            p.execute({mxq.Arg.X: x.ctypes.data, 2: q.ctypes.data, "rowwise_scales": s})
        d, sc = rceil_e4m3_rowwise(x)
        self.assertTrue((q == d).all(), first_mismatch(q, d))
        self.assertTrue((s.reshape(40, 3) == sc).all(), first_mismatch(s.reshape(40, 3), sc))


class QuantizeTest(unittest.TestCase):
    def setUp(self):
        self.h = mxq.Handle.cpu()

    def tearDown(self):
        self.h.close()

    def check_exact(self, x32, mx, rows, cols, batch=1):
        """Every byte of a LINEAR-layout result equals the numpy reference."""
        for b in range(batch):
            xb = x32[b] if x32.ndim == 3 else x32
            if mx.has_rowwise:
                d, s = rceil_e4m3_rowwise(xb)
                got = mx.rowwise_data.reshape(batch, rows, cols)[b]
                self.assertTrue((got == d).all(), first_mismatch(got, d))
                gs = mx.rowwise_scales.reshape(batch, rows, -1)[b]
                self.assertTrue((gs == s).all(), first_mismatch(gs, s))
            if mx.has_colwise:
                d, s = rceil_e4m3_rowwise(np.ascontiguousarray(xb.T))
                got = mx.colwise_data.reshape(batch, cols, rows)[b]
                self.assertTrue((got == d).all(), first_mismatch(got, d))
                gs = mx.colwise_scales.reshape(batch, cols, -1)[b]
                self.assertTrue((gs == s).all(), first_mismatch(gs, s))

    def test_fp32_fp16_bf16_inputs_bit_exact(self):
        r = rng(2)
        rows, cols = int(r.integers(1, 150)), int(r.integers(1, 150))
        x = wide_floats(r, (rows, cols), -6, 6)
        x[0, 0] = np.nan
        for name, arr, x32, kw in (
                ("fp32", x, x, {}),
                ("fp16", x.astype(np.float16), x.astype(np.float16).astype(np.float32), {}),
                ("bf16", formats.float32_to_bf16(x), formats.bf16_to_float32(formats.float32_to_bf16(x)),
                 {"input_dtype": "bf16"})):
            with self.subTest(name, shape=(rows, cols)):
                mx = mxq.quantize(self.h, arr, direction="both", scale_layout="linear", **kw)
                self.check_exact(x32, mx, rows, cols)
                self.assertEqual(mx.rowwise_data[0, 0], 0x7F)  # NaN stays NaN

    def test_gpu_array_on_cpu_handle_is_refused(self):
        class FakeGpuArray:
            __cuda_array_interface__ = {"shape": (64, 64), "typestr": "<f4", "data": (0x7000_0000, False),
                                        "version": 3, "strides": None}
        with self.assertRaises(mxq.MXQError) as cm:
            mxq.quantize(self.h, FakeGpuArray())
        self.assertIn("cuda memory given to a cpu handle", cm.exception.message)

    def test_uint16_without_dtype_is_refused(self):
        with self.assertRaises(TypeError):
            mxq.quantize(self.h, np.zeros((4, 4), np.uint16))

    def test_batched_and_swizzled(self):
        r = rng(3)
        batch, rows, cols = 3, int(r.integers(1, 200)), int(r.integers(1, 200))
        x = wide_floats(r, (batch, rows, cols))
        lin = mxq.quantize(self.h, x, direction="both", scale_layout="linear")
        self.check_exact(x, lin, rows, cols, batch)
        swz = mxq.quantize(self.h, x, direction="both")  # default SWIZZLED_128x4
        self.assertTrue((swz.rowwise_data == lin.rowwise_data).all())
        self.assertTrue((swz.colwise_data == lin.colwise_data).all())
        for got, src, r_, c_ in ((swz.rowwise_scales, lin.rowwise_scales, rows, -(-cols // 32)),
                                 (swz.colwise_scales, lin.colwise_scales, cols, -(-rows // 32))):
            want = np.full(mxq.swizzled_scale_bytes(batch, r_, c_), 0xCD, np.uint8)
            self.h.swizzle_scales(src, want, batch, r_, c_)
            self.assertTrue((got == want).all(), first_mismatch(got, want))
            back = np.full(batch * r_ * c_, 0xCD, np.uint8)
            self.h.swizzle_scales(got, back, batch, r_, c_, to_swizzled=False)
            self.assertTrue((back == src).all(), first_mismatch(back, src))
        want_row = np.stack([dequant_linear(*rceil_e4m3_rowwise(x[b])) for b in range(batch)])
        want_col = np.stack([dequant_linear(*rceil_e4m3_rowwise(np.ascontiguousarray(x[b].T))).T
                             for b in range(batch)])
        for direction, want in (("rowwise", want_row), ("columnwise", want_col)):
            y = mxq.dequantize(self.h, swz, direction=direction)
            self.assertEqual(y.shape, x.shape)
            self.assertTrue((y == want).all(), first_mismatch(y, want))

    def test_grouped_rows_round_trip(self):
        r = rng(4)
        rows, cols, groups = int(r.integers(40, 300)), int(r.integers(1, 100)), 5
        cuts = np.sort(r.integers(0, rows + 1, size=groups - 1))
        offsets = np.append(cuts, rows).astype(np.int64)
        offsets[1] = offsets[0]  # an empty group
        x = wide_floats(r, (rows, cols))
        for layout in ("linear", "swizzled_128x4"):
            with self.subTest(layout, offsets=offsets.tolist()):
                mx = mxq.quantize(self.h, x, direction="both", scale_layout=layout, group_offsets=offsets)
                self.assertEqual((mx.num_groups, mx.group_offsets_dtype), (groups, mxq.DType.INT64))
                want_row = dequant_linear(*rceil_e4m3_rowwise(x))
                y = mxq.dequantize(self.h, mx)
                self.assertTrue((y == want_row).all(), first_mismatch(y, want_row))
                # Columnwise blocks restart at every group start: dequantize each group's slice alone.
                want_col = np.empty_like(x)
                lo = 0
                for hi in offsets:
                    if hi > lo:
                        want_col[lo:hi] = dequant_linear(*rceil_e4m3_rowwise(np.ascontiguousarray(x[lo:hi].T))).T
                    lo = hi
                y = mxq.dequantize(self.h, mx, direction="columnwise")
                self.assertTrue((y == want_col).all(), first_mismatch(y, want_col))

    def test_bad_group_offsets(self):
        x = np.ones((64, 32), np.float32)
        with self.assertRaises(mxq.MXQError) as cm:
            mxq.quantize(self.h, x, group_offsets=np.array([40, 20, 64], np.int32))
        self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_GROUP_OFFSETS)
        with self.assertRaises(TypeError):
            mxq.quantize(self.h, x, group_offsets=np.array([10.0, 64.0]))

    def test_swiglu_amax_activation(self):
        r = rng(5)
        rows, cols = int(r.integers(1, 80)), int(r.integers(1, 80))
        x = wide_floats(r, (rows, 2 * cols), -3, 3)
        mx = mxq.quantize(self.h, x, swiglu=True, amax=True, activation=True, scale_layout="linear")
        gate, up = x[:, :cols].astype(np.float64), x[:, cols:].astype(np.float64)
        act = mx.activation
        want = gate / (1 + np.exp(-gate)) * up
        self.assertTrue(np.all(np.abs(act - want) <= 1e-5 * np.abs(want) + 1e-30), f"seed {SEED}")
        self.check_exact(act, mx, rows, cols)  # the quantized result is the activation's quantization
        self.assertEqual(mx.amax[0], np.max(np.abs(act)))
        with self.assertRaises(mxq.MXQError):
            mxq.quantize(self.h, np.ones((4, 5), np.float32), swiglu=True)


class GemmTest(unittest.TestCase):
    def setUp(self):
        self.h = mxq.Handle.cpu()

    def tearDown(self):
        self.h.close()

    def assert_gemm_close(self, d, a, b, accumulate_into=None):
        """|D - A B^T| within fp32 accumulation's worst case (K * 2^-23 * |A||B|^T) per element."""
        ref = a.astype(np.float64) @ np.swapaxes(b.astype(np.float64), -1, -2)
        bound = a.shape[-1] * 2.0**-23 * (np.abs(a).astype(np.float64) @ np.swapaxes(np.abs(b), -1, -2))
        if accumulate_into is not None:
            ref = ref + accumulate_into
            bound = bound + 2.0**-23 * np.abs(ref)
        bad = ~(np.abs(d - ref) <= bound + 1e-30)
        self.assertFalse(bad.any(), f"{bad.sum()} of {bad.size} elements off; first {np.argwhere(bad)[:1]} "
                                    f"(seed {SEED})")

    def test_dense_batched(self):
        r = rng(6)
        batch, m, n, k = 2, int(r.integers(1, 70)), int(r.integers(1, 70)), int(r.integers(1, 200))
        a, b = wide_floats(r, (batch, m, k), -4, 4), wide_floats(r, (batch, n, k), -4, 4)
        a8, b8 = mxq.quantize(self.h, a), mxq.quantize(self.h, b)
        d = mxq.grouped_gemm(self.h, a8, b8)
        self.assertEqual(d.shape, (batch, m, n))
        self.assert_gemm_close(d, mxq.dequantize(self.h, a8), mxq.dequantize(self.h, b8))
        # alpha and accumulate into a poisoned-free, known D
        d0 = wide_floats(r, (batch, m, n), -2, 2)
        d1 = d0.copy()
        mxq.grouped_gemm(self.h, a8, b8, out=d1, alpha=0.5, accumulate=True)
        self.assert_gemm_close(d1, 0.5 * mxq.dequantize(self.h, a8), mxq.dequantize(self.h, b8), d0)

    def test_m_grouped(self):
        r = rng(7)
        groups, n, k = 4, int(r.integers(1, 64)), int(r.integers(1, 160))
        sizes = r.integers(0, 50, size=groups)
        sizes[2] = 0
        offsets = np.cumsum(sizes).astype(np.int32)
        m = int(offsets[-1]) or 1
        offsets[-1] = m
        a, w = wide_floats(r, (m, k), -4, 4), wide_floats(r, (groups, n, k), -4, 4)
        a8 = mxq.quantize(self.h, a, group_offsets=offsets)
        w8 = mxq.quantize(self.h, w)
        d = mxq.grouped_gemm(self.h, a8, w8)
        self.assertEqual(d.shape, (m, n))
        ad, wd = mxq.dequantize(self.h, a8), mxq.dequantize(self.h, w8)
        lo = 0
        for g, hi in enumerate(offsets):
            if hi > lo:
                self.assert_gemm_close(d[lo:hi], ad[lo:hi], wd[g])
            lo = hi

    def test_k_grouped_wgrad(self):
        r = rng(8)
        groups, m, n, tokens = 3, int(r.integers(1, 50)), int(r.integers(1, 50)), int(r.integers(2, 200))
        offsets = np.array([tokens // 3, tokens // 3, tokens], np.int32)  # group 1 is empty
        dy, x = wide_floats(r, (tokens, m), -4, 4), wide_floats(r, (tokens, n), -4, 4)
        dy8 = mxq.quantize(self.h, dy, direction="columnwise", group_offsets=offsets)
        x8 = mxq.quantize(self.h, x, direction="columnwise", group_offsets=offsets)
        dw = mxq.grouped_gemm(self.h, dy8, x8)
        self.assertEqual(dw.shape, (groups, m, n))
        dyd = mxq.dequantize(self.h, dy8, direction="columnwise")
        xd = mxq.dequantize(self.h, x8, direction="columnwise")
        lo = 0
        for g, hi in enumerate(offsets):
            self.assert_gemm_close(dw[g], dyd[lo:hi].T, xd[lo:hi].T)
            lo = hi

    def test_gemm_argument_errors(self):
        a8 = mxq.quantize(self.h, np.ones((8, 64), np.float32))
        b8 = mxq.quantize(self.h, np.ones((8, 32), np.float32))
        with self.assertRaises(ValueError):
            mxq.grouped_gemm(self.h, a8, b8)
        with mxq.GroupedGemmPlan(self.h, m=8, n=8, k=64) as p:
            with self.assertRaises(mxq.MXQError) as cm:
                p.execute({"a_data": a8.rowwise_data, "a_scales": a8.rowwise_scales, "b_data": b8.rowwise_data,
                           "b_scales": b8.rowwise_scales, "d": np.empty((8, 8), np.uint16)})
            self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_SHAPE)  # B holds 8x32, not 8x64


class AttentionTest(unittest.TestCase):
    def setUp(self):
        self.h = mxq.Handle.cpu()

    def tearDown(self):
        self.h.close()

    @staticmethod
    def reference(q, k, v, scale, mask):
        """The recipe in float64 from the dequantized operands (docs/NUMERICS.md, attention forward)."""
        b, hq, sq, d = q.shape
        hkv, skv = k.shape[1], k.shape[2]
        kk = np.repeat(k, hq // hkv, axis=1).astype(np.float64)
        vv = np.repeat(v, hq // hkv, axis=1).astype(np.float64)
        s = scale * np.einsum("bhid,bhjd->bhij", q.astype(np.float64), kk)
        i, j = np.arange(sq)[:, None], np.arange(skv)[None, :]
        if mask == "causal_top_left":
            s = np.where(j <= i, s, -np.inf)
        elif mask == "causal_bottom_right":
            s = np.where(j <= i + skv - sq, s, -np.inf)
        m = s.max(axis=-1, keepdims=True)
        p = np.exp(s - m)
        l = p.sum(axis=-1, keepdims=True)
        pq = formats.e4m3_to_float32(e4m3_rne((p * 256).astype(np.float32))).astype(np.float64) / 256
        return np.einsum("bhij,bhjd->bhid", pq, vv) / l, (m + np.log(l))[..., 0]

    def test_forward_matches_recipe(self):
        r = rng(9)
        for mask, (hq, hkv) in (("none", (2, 2)), ("causal_top_left", (4, 2)), ("causal_bottom_right", (4, 1))):
            with self.subTest(mask, hq=hq, hkv=hkv):
                b, sq, skv, d = 2, int(r.integers(1, 70)), int(r.integers(1, 70)), 64
                if mask == "causal_bottom_right":
                    sq = min(sq, skv)  # every query row sees at least one key
                q = r.standard_normal((b, hq, sq, d)).astype(np.float32)
                k = r.standard_normal((b, hkv, skv, d)).astype(np.float32)
                v = r.standard_normal((b, hkv, skv, d)).astype(np.float32)
                o, lse = mxq.attention(self.h, q, k, v, mask=mask)
                self.assertEqual((o.shape, o.dtype, lse.shape), ((b, hq, sq, d), np.uint16, (b, hq, sq)))
                # Operands as the binding quantized them (checked bit-exact elsewhere), decoded on the host.
                dq = lambda t: dequant_linear(*rceil_e4m3_rowwise(t.reshape(-1, d))).reshape(t.shape)
                vt = np.stack([dequant_linear(*rceil_e4m3_rowwise(np.ascontiguousarray(v[i, h].T))).T
                               for i in range(b) for h in range(hkv)]).reshape(v.shape)
                o_ref, lse_ref = self.reference(dq(q), dq(k), vt, 1 / math.sqrt(d), mask)
                o32 = formats.bf16_to_float32(o)
                tol = 2.0**-8 * np.abs(o_ref) + 2.0**-7 * np.abs(vt).max()
                bad = ~(np.abs(o32 - o_ref) <= tol)
                self.assertFalse(bad.any(), f"O: {bad.sum()} of {bad.size} off (seed {SEED})")
                bad = ~(np.abs(lse - lse_ref) <= 1e-4 * np.maximum(1, np.abs(lse_ref)))
                self.assertFalse(bad.any(), f"LSE: {bad.sum()} of {bad.size} off (seed {SEED})")

    def test_attention_shape_errors(self):
        q = np.ones((1, 2, 8, 64), np.float32)
        with self.assertRaises(mxq.MXQError) as cm:
            mxq.attention(self.h, q, np.ones((1, 2, 8, 32), np.float32), np.ones((1, 2, 8, 32), np.float32))
        self.assertEqual(cm.exception.status, mxq.Status.BAD_PARAM_SHAPE)
        with self.assertRaises(mxq.MXQError):  # Hq not a multiple of Hkv
            mxq.attention(self.h, np.ones((1, 3, 8, 64), np.float32), q, q)


class ThreadsTest(unittest.TestCase):
    def test_error_messages_are_per_thread(self):
        errors = {}

        def worker(i):
            try:
                with mxq.Handle.cpu() as h:
                    mxq.QuantizePlan(h, rows=4, cols=-i - 1)
            except mxq.MXQError as e:
                errors[i] = e.message

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(sorted(errors), [0, 1, 2, 3])
        for i, msg in errors.items():
            self.assertIn(str(-i - 1), msg)


if __name__ == "__main__":
    unittest.main()
