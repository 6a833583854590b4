#!/usr/bin/env python3
"""The torch.compile peer of mxq_bench_quantize: MXFP8 quantization (bf16 -> E4M3, RCEIL scales in
the SWIZZLED_128x4 layout, 32-element blocks) written in a few lines of torch and compiled by
Inductor, timed the same way as mxq (median over cold-L2 launches, bytes = input + FP8 data +
scales) and next to a torch device-to-device copy of the same bytes.

mxq_bench_quantize --torch tools/bench_quantize_torch.py runs it right after mxq on the same shapes;
standalone: python3 tools/bench_quantize_torch.py --shapes 16384x16384 8192x4096 [--iters 20].
Columns need K and M to be multiples of 32 (the torch quantizer reshapes into whole blocks).
"""
import argparse
import statistics

import torch


def e8m0_rceil(amax):
    """UE8M0 exponent, DESIGN 1.1 RCEIL: one fp32 multiply by fl32(1/448), then round up to 2^k."""
    s = amax * (1.0 / 448.0)
    b = s.view(torch.int32)
    e = (b >> 23) & 0xFF
    m = b & 0x7FFFFF
    up = (m != 0) & (e != 0xFE) & ~((e == 0) & (m <= 0x400000))
    return e + up.to(torch.int32)


def quantize_blocks(x):
    """x [..., 32] fp32 -> (E4M3 codes, UE8M0 exponents)."""
    e = e8m0_rceil(x.abs().amax(-1, keepdim=True))
    inv = ((254 - e) << 23).view(torch.float32)
    q = (x * inv).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q, e.squeeze(-1).to(torch.uint8)


def swizzle(s):
    """[R, C] scales -> SWIZZLED_128x4: off = ((r>>7)*(Cp>>2) + (c>>2))*512 + (r&31)*16 + ((r>>5)&3)*4 + (c&3)."""
    r, c = s.shape
    rp, cp = (r + 127) // 128 * 128, (c + 3) // 4 * 4
    s = torch.nn.functional.pad(s, (0, cp - c, 0, rp - r))
    return s.view(rp // 128, 4, 32, cp // 4, 4).permute(0, 3, 2, 1, 4).contiguous()


def rowwise(x):
    m, k = x.shape
    q, e = quantize_blocks(x.float().view(m, k // 32, 32))
    return q.view(m, k), swizzle(e)


def colwise(x):
    """Transposed columnwise: data [K, M], blocks of 32 rows of x."""
    return rowwise(x.t())


def both(x):
    return rowwise(x), colwise(x)


def time_ms(fn, iters, flush):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", nargs="+", default=["16384x16384", "131072x7168", "8192x4096", "2048x4096"])
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}: torch.compile MXFP8 (bf16 -> e4m3, RCEIL, swizzled)")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    variants = {"rowwise swizzled": (rowwise, 1), "colwise transposed swz": (colwise, 1), "both (transposed) swz": (both, 2)}
    compiled = {name: torch.compile(fn) for name, (fn, _) in variants.items()}
    for shape in args.shapes:
        m, k = (int(v) for v in shape.split("x"))
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        print(f"\n{m} x {k} bf16 -> e4m3 (RCEIL)")
        print(f"  {'variant':<26} {'bytes(MB)':>10} {'time(us)':>9} {'TB/s':>9} {'copy TB/s':>9} {'ratio':>7}")
        for name, (_, outputs) in variants.items():
            moved = 2 * m * k + outputs * (m * k + m * k // 32)
            t = time_ms(lambda: compiled[name](x), args.iters, flush)
            half = moved // 2
            src = torch.empty(half, dtype=torch.uint8, device=dev)
            dst = torch.empty_like(src)
            tc = time_ms(lambda: dst.copy_(src), args.iters, flush)
            del src, dst
            print(f"  {name:<26} {moved / 1e6:10.1f} {t * 1e3:9.1f} {moved / (t * 1e-3) / 1e12:9.3f} "
                  f"{2 * half / (tc * 1e-3) / 1e12:9.3f} {tc / t:7.3f}", flush=True)
        del x
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
