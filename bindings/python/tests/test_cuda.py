"""Python binding on the CUDA backend with torch tensors, every result compared with the CPU backend
on the same inputs: quantize and dequantize bit for bit, GEMM and attention within the documented
tolerances. Exercises both device protocols (DLPack for bfloat16, __cuda_array_interface__ for
float32) and torch's current stream. Skipped, with the reason, where torch, a GPU or the library's
CUDA backend is missing (always the case in CI)."""

import unittest

import numpy as np

from _support import SEED, first_mismatch, formats, mxq, rng, wide_floats

torch = None
SKIP = None
try:
    import torch
    if not torch.cuda.is_available():
        SKIP = "torch sees no CUDA device"
except ImportError:
    SKIP = "torch is not installed"


def setUpModule():
    global SKIP
    if SKIP is None:
        try:
            mxq.Handle.cuda().close()
        except (mxq.MXQError, OSError) as e:
            SKIP = f"no CUDA handle: {e}"
    if SKIP:
        raise unittest.SkipTest(SKIP)
    mxq.set_log_level(mxq.LogLevel.OFF)


def host(t):
    """A torch tensor as numpy (bfloat16 as uint16 bits)."""
    t = t.detach().cpu()
    return t.view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.numpy()


class CudaVsCpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gpu, cls.cpu = mxq.Handle.cuda(), mxq.Handle.cpu()

    @classmethod
    def tearDownClass(cls):
        cls.gpu.close()
        cls.cpu.close()

    def assert_same_mx(self, g, c):
        for name in ("rowwise_data", "rowwise_scales", "colwise_data", "colwise_scales"):
            gv, cv = getattr(g, name), getattr(c, name)
            self.assertEqual(gv is None, cv is None, name)
            if gv is not None:
                gh = host(gv)
                self.assertTrue((gh == cv).all(), f"{name}: {first_mismatch(gh, cv)}")

    def test_quantize_bf16_dlpack_bit_exact(self):
        r = rng(101)
        rows, cols = int(r.integers(1, 700)), int(r.integers(1, 700))
        bits = formats.float32_to_bf16(wide_floats(r, (rows, cols)))
        x = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16).cuda()
        for layout in ("swizzled_128x4", "linear"):
            with self.subTest(layout, shape=(rows, cols)):
                g = mxq.quantize(self.gpu, x, direction="both", scale_layout=layout)
                torch.cuda.synchronize()
                c = mxq.quantize(self.cpu, bits, direction="both", scale_layout=layout, input_dtype="bf16")
                self.assert_same_mx(g, c)
                for direction in ("rowwise", "columnwise"):
                    gy = mxq.dequantize(self.gpu, g, direction=direction, dtype="bf16")
                    cy = mxq.dequantize(self.cpu, c, direction=direction, dtype="bf16")
                    torch.cuda.synchronize()
                    self.assertTrue((host(gy) == cy).all(), first_mismatch(host(gy), cy))

    def test_quantize_fp32_cuda_array_interface_grouped(self):
        r = rng(102)
        rows, cols, groups = int(r.integers(100, 900)), int(r.integers(1, 300)), 6
        offsets = np.append(np.sort(r.integers(0, rows + 1, groups - 1)), rows).astype(np.int32)
        x = wide_floats(r, (rows, cols))
        xg, og = torch.from_numpy(x).cuda(), torch.from_numpy(offsets).cuda()
        self.assertTrue(hasattr(xg, "__cuda_array_interface__"))
        g = mxq.quantize(self.gpu, xg, direction="both", group_offsets=og)
        torch.cuda.synchronize()
        c = mxq.quantize(self.cpu, x, direction="both", group_offsets=offsets)
        self.assert_same_mx(g, c)

    def test_gemm_against_cpu(self):
        r = rng(103)
        groups, n, k = 4, 256, 512
        sizes = r.integers(0, 300, size=groups)
        sizes[1] = 0
        offsets = np.cumsum(sizes).astype(np.int32)
        m = int(offsets[-1])
        a, w = wide_floats(r, (m, k), -3, 3), wide_floats(r, (groups, n, k), -3, 3)
        a_c, w_c = mxq.quantize(self.cpu, a, group_offsets=offsets), mxq.quantize(self.cpu, w)
        a_g = mxq.quantize(self.gpu, torch.from_numpy(a).cuda(), group_offsets=torch.from_numpy(offsets).cuda())
        w_g = mxq.quantize(self.gpu, torch.from_numpy(w).cuda())
        try:
            d_g = mxq.grouped_gemm(self.gpu, a_g, w_g)
        except mxq.MXQError as e:
            if e.category == "not_supported":
                self.skipTest(f"GPU grouped GEMM: {e}")
            raise
        torch.cuda.synchronize()
        d_c = mxq.grouped_gemm(self.cpu, a_c, w_c)
        ad, wd = mxq.dequantize(self.cpu, a_c), mxq.dequantize(self.cpu, w_c)
        lo, gh = 0, host(d_g)
        for g, hi in enumerate(offsets):
            if hi > lo:
                # Hopper's FP8 tensor core sums each 32-block with a truncated accumulator: up to 2^-10
                # of the block's |products| (the bound tests/gpu/test_gpu_gemm.cpp documents), plus fp32.
                mag = np.abs(ad[lo:hi]).astype(np.float64) @ np.abs(wd[g]).T
                bad = ~(np.abs(gh[lo:hi] - d_c[lo:hi]) <= 2.0**-10 * mag + 2.0**-20 * np.abs(d_c[lo:hi]) + 1e-30)
                self.assertFalse(bad.any(), f"group {g}: {bad.sum()} of {bad.size} off (seed {SEED})")
            lo = hi

    def test_attention_against_cpu(self):
        r = rng(104)
        b, hq, hkv, sq, skv, d = 2, 4, 2, 200, 333, 128
        q, k, v = (r.standard_normal(s).astype(np.float32) for s in ((b, hq, sq, d), (b, hkv, skv, d), (b, hkv, skv, d)))
        try:
            o_g, lse_g = mxq.attention(self.gpu, *(torch.from_numpy(t).cuda() for t in (q, k, v)),
                                       mask="causal_bottom_right")
        except mxq.MXQError as e:
            if e.category == "not_supported":
                self.skipTest(f"GPU attention: {e}")
            raise
        torch.cuda.synchronize()
        o_c, lse_c = mxq.attention(self.cpu, q, k, v, mask="causal_bottom_right")
        og, oc = formats.bf16_to_float32(host(o_g)), formats.bf16_to_float32(o_c)
        bad = ~(np.abs(og - oc) <= 2.0**-6 * np.abs(v).max() + 2.0**-7 * np.abs(oc))
        self.assertFalse(bad.any(), f"O: {bad.sum()} of {bad.size} off (seed {SEED})")
        bad = ~(np.abs(host(lse_g) - lse_c) <= 1e-3 * np.maximum(1, np.abs(lse_c)))
        self.assertFalse(bad.any(), f"LSE: {bad.sum()} of {bad.size} off (seed {SEED})")

    def test_side_stream(self):
        r = rng(105)
        x = wide_floats(r, (256, 256))
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            xg = torch.from_numpy(x).cuda(non_blocking=True)
            g = mxq.quantize(self.gpu, xg)  # enqueued on s, torch's current stream here
        s.synchronize()
        self.assert_same_mx(g, mxq.quantize(self.cpu, x))

    def test_host_memory_on_gpu_handle_is_refused(self):
        with self.assertRaises(mxq.MXQError) as cm:
            mxq.quantize(self.gpu, np.ones((32, 32), np.float32))
        self.assertIn("cpu memory given to a cuda handle", cm.exception.message)
        with self.assertRaises(mxq.MXQError):
            mxq.quantize(self.cpu, torch.ones((32, 32), device="cuda"))


if __name__ == "__main__":
    unittest.main()
