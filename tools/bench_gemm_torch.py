#!/usr/bin/env python3
"""The torch peers of mxq_bench_gemm: torch._grouped_mm (bf16) and torch._scaled_grouped_mm (FP8 E4M3
with rowwise fp32 scales, the closest thing torch runs on Hopper; it is not MXFP8) on the issue #4
shapes, timed like mxq (CUDA events, mean over iterations after warm-up), TFLOP/s = 2MNK / time.

mxq_bench_gemm --torch tools/bench_gemm_torch.py runs it after mxq; standalone:
python3 tools/bench_gemm_torch.py [--iters 5] [--kinds fprop,decode,wgrad]. Each API is checked at run time: a torch without it,
or one that refuses a shape, prints the reason and goes on. Group sizes are uneven multiples of 16
(torch's grouped kernels want 16-aligned offsets); mxq's run uses unaligned uneven sizes.
"""
import argparse

import torch

FPROP = [(8, 65536, 2048, 7168), (32, 65536, 1536, 4096), (128, 32768, 768, 2048)]
DECODE = [(64, 64 * 16, 2048, 7168), (128, 128 * 8, 768, 2048)]


def sizes(total, groups, even):
    """Uneven group sizes (0.5x..1.5x the mean), multiples of 16, summing to total."""
    mean = total // groups
    s = [mean] * groups
    if not even:
        x = 0x2545F4914F6CDD1D
        for g in range(0, groups - 1, 2):
            x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
            x ^= x >> 7
            x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
            d = (x % (mean // 2 + 1)) // 16 * 16
            s[g] += d
            s[g + 1] -= d
    s[-1] += total - sum(s)
    return s


def offsets(s, dev):
    return torch.tensor(s, dtype=torch.int32, device=dev).cumsum(0).to(torch.int32)


def time_ms(fn, iters):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / iters


def report(label, flops, fn, iters, extra=""):
    try:
        t = time_ms(fn, iters)
        print(f"  {label:<34} {t:9.3f} ms {flops / (t * 1e-3) / 1e12:8.1f} TFLOP/s{extra(t) if extra else ''}", flush=True)
    except Exception as e:  # a torch that lacks the kernel for this arch / shape
        print(f"  {label:<34} skipped: {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--kinds", default="fprop,decode,wgrad", help="comma-separated subset of fprop,decode,wgrad")
    ap.add_argument("--fprop-shape", action="append", default=[], metavar="G,M,N,K",
                    help="an fprop shape to time instead of the issue's (repeatable)")
    args = ap.parse_args()
    fprop = [tuple(int(x) for x in s.split(",")) for s in args.fprop_shape] or FPROP
    dev = torch.device("cuda")
    have_bf16 = hasattr(torch, "_grouped_mm")
    have_fp8 = hasattr(torch, "_scaled_grouped_mm")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}: "
          f"_grouped_mm {'yes' if have_bf16 else 'absent'}, _scaled_grouped_mm {'yes' if have_fp8 else 'absent'}")
    if not (have_bf16 or have_fp8):
        return
    f8 = torch.float8_e4m3fn
    kinds = set(args.kinds.split(","))
    for kind, shapes in (("fprop", fprop), ("decode", DECODE)):
        if kind not in kinds:
            continue
        for g, m, n, k in shapes:
            print(f"{kind} E{g} M{m} N{n} K{k}")
            offs = offsets(sizes(m, g, kind == "decode"), dev)
            flops = 2.0 * m * n * k
            a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            b = torch.randn(g, n, k, device=dev, dtype=torch.bfloat16)
            moved = 2 * (m * k + g * n * k + m * n)
            bw = (lambda t: f"  {moved / (t * 1e-3) / 1e12:.2f} TB/s") if kind == "decode" else None
            if have_bf16:
                report("torch._grouped_mm bf16", flops, lambda: torch._grouped_mm(a, b.transpose(-2, -1), offs=offs),
                       args.iters, bw)
            if have_fp8:
                a8, b8 = a.to(f8), b.to(f8)
                sa = torch.ones(m, device=dev, dtype=torch.float32)
                sb = torch.ones(g, n, device=dev, dtype=torch.float32)
                moved8 = m * k + g * n * k + 2 * m * n
                bw8 = (lambda t: f"  {moved8 / (t * 1e-3) / 1e12:.2f} TB/s") if kind == "decode" else None
                report("torch._scaled_grouped_mm fp8 rowwise", flops,
                       lambda: torch._scaled_grouped_mm(a8, b8.transpose(-2, -1), sa, sb, offs=offs,
                                                        out_dtype=torch.bfloat16), args.iters, bw8)
                del a8, b8
            del a, b
            torch.cuda.empty_cache()
    # wgrad: D[g] [N_out, K_in] = dY[:, tokens of g] X[:, tokens of g]^T (mxq: M = N_out, N = K_in).
    for g, t, n_out, k_in in (FPROP if "wgrad" in kinds else []):
        print(f"wgrad E{g} M{n_out} N{k_in} K{t} (tokens), fp32 output")
        offs = offsets(sizes(t, g, False), dev)
        flops = 2.0 * t * n_out * k_in
        a = torch.randn(n_out, t, device=dev, dtype=torch.bfloat16)
        b = torch.randn(k_in, t, device=dev, dtype=torch.bfloat16)
        if have_bf16:
            report("torch._grouped_mm bf16 (fp32 out)", flops,
                   lambda: torch._grouped_mm(a, b.t(), offs=offs, out_dtype=torch.float32), args.iters)
            # torch 2.11 refuses fp32 output here; bf16 output is the closest comparison then.
            report("torch._grouped_mm bf16 (bf16 out)", flops, lambda: torch._grouped_mm(a, b.t(), offs=offs),
                   args.iters)
        if have_fp8:
            a8, b8 = a.to(f8), b.to(f8)
            sa = torch.ones(g * n_out, device=dev, dtype=torch.float32)
            sb = torch.ones(g * k_in, device=dev, dtype=torch.float32)
            report("torch._scaled_grouped_mm fp8 rowwise", flops,
                   lambda: torch._scaled_grouped_mm(a8, b8.t(), sa, sb, offs=offs, out_dtype=torch.bfloat16),
                   args.iters)
            del a8, b8
        del a, b
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
