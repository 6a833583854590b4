#!/usr/bin/env python3
"""The torch peer of mxq_bench_attention: bf16 scaled-dot-product attention, forward and backward,
through torch's cuDNN and flash backends on the same shapes (BHSD), timed like mxq (mean over
`iters` launches after two warm-ups, CUDA events). FLOPs 4*B*H*S^2*D (causal: half), backward 2.5x.

mxq_bench_attention --torch tools/bench_attention_torch.py runs it after mxq;
standalone: python3 tools/bench_attention_torch.py [--iters 10]. MXQ_BENCH_SHAPES="B,H,S,D,causal;..."
(causal 0 or 1) replaces the issue's shapes, as it does for mxq_bench_attention.
"""
import argparse
import os

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [(2, 32, 4096, 128, False), (2, 32, 4096, 128, True), (1, 16, 16384, 128, True), (2, 32, 4096, 64, False),
          (2, 16, 4096, 256, False), (2, 16, 4096, 256, True), (2, 16, 4096, 192, False)]
if os.environ.get("MXQ_BENCH_SHAPES"):
    SHAPES = [tuple(int(x) for x in t.split(",")[:4]) + (t.split(",")[4].strip() == "1",)
              for t in os.environ["MXQ_BENCH_SHAPES"].split(";") if t.strip()]


def time_ms(fn, iters):
    fn()
    fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=10)
    args = ap.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}: bf16 SDPA")
    for backend, name in ((SDPBackend.CUDNN_ATTENTION, "cudnn"), (SDPBackend.FLASH_ATTENTION, "flash")):
        for (b, h, s, d, causal) in SHAPES:
            flop = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
            label = f"  {name:5s} B{b:<2d} H{h:<3d} S{s:<6d} D{d:<4d} {'causal' if causal else 'full':7s}"
            try:
                with sdpa_kernel([backend]):
                    tf = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), args.iters)
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    g = torch.randn_like(o)
                    tb = time_ms(lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True), args.iters)
                print(f"{label} fwd {tf:8.3f} ms {flop / tf / 1e9:7.1f} TFLOP/s   bwd {tb:8.3f} ms "
                      f"{2.5 * flop / tb / 1e9:7.1f} TFLOP/s")
            except RuntimeError as e:
                print(f"{label} unavailable: {str(e).splitlines()[0][:100]}")
            del q, k, v
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
