#!/usr/bin/env python3
"""A/B runs of prebuilt libmxq variants on the device, in one call.

Each variant is a directory holding a libmxq.so.0 (tools/dev/variant_lib.sh builds them); the
benchmark and test binaries are linked with a RUNPATH, so LD_LIBRARY_PATH=<variant dir> makes them
load that variant. The variants run interleaved, round after round, so that clock and placement
drift hit every variant alike (docs/PERFORMANCE.md: differences under ~2% between two libraries are
noise unless an unchanged kernel runs identically in both).

    ab_bench.py --root DIR --libs base,A,B [--rounds 3] [--tests '[attention][bwd]' --test-bin BIN
                [--tests-skip-base]] -- BENCH [ARGS...]

Every "<label> <t> ms <x> TFLOP/s|TF|TB/s" of BENCH's output is a measurement, keyed by its line's
text before the first such figure plus the label (a line without one: its first figure, keyed by the
text before it). The summary gives, per key, each variant's figures over the rounds and the change
of its median against the first variant.
--self-test checks the parser on canned lines (run by the CPU test suite).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

_FIG = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(TFLOP/s|TB/s|TF)\b")
# "<label> <t> ms <x> <unit>": one timed figure of a line that may hold several (mxq_bench_gemm).
_TIMED = re.compile(r"(\S+)\s+[0-9]+(?:\.[0-9]+)?\s*ms\s+([0-9]+(?:\.[0-9]+)?)\s*(TFLOP/s|TB/s|TF)\b")


def parse(lines):
    """[(key, value, unit)] for every figure: each "<label> <t> ms <x> TF|TFLOP/s|TB/s" of a line,
    keyed by the line's text before its first such figure plus the label; else the line's first
    figure, keyed by the text before it."""
    out = []
    for line in lines:
        timed = list(_TIMED.finditer(line))
        if timed:
            prefix = " ".join(line[: timed[0].start()].split())
            for m in timed:
                key = (prefix + " " + m.group(1)).strip()
                out.append((key, float(m.group(2)), m.group(3)))
            continue
        m = _FIG.search(line)
        if m:
            out.append((" ".join(line[: m.start()].split()), float(m.group(1)), m.group(2)))
    return out


def self_test():
    lines = [
        "mxq_bench_attention_bwd on NVIDIA H100 80GB HBM3, 0.1.0",
        "B2 H32 S4096 D128 non-causal default rule              3.734 ms    368.1 TFLOP/s   cuDNN bf16 bwd (ANCHORS, H100) 537: 0.69x",
        "B2 H32 S4096 D128 causal     two-kernel (FUSED_DQ=0)   2.591 ms    265.2 TFLOP/s",
        "fprop  E8 M65536 N2048 K7168        mxq    2.800 ms  687.0 TF | fp8-prom    2.950 ms  652.1 TF | cuBLAS bf16    2.610 ms  737.2 TF | ratio 0.93x",
        "       decode: 0.983 GB moved, mxq 2.70 TB/s = 0.90 of copy (3.00 TB/s); fp8-prom 2.10 TB/s",
        "no figure here",
    ]
    got = parse(lines)
    want = [
        ("B2 H32 S4096 D128 non-causal default rule", 368.1, "TFLOP/s"),
        ("B2 H32 S4096 D128 causal two-kernel (FUSED_DQ=0)", 265.2, "TFLOP/s"),
        ("fprop E8 M65536 N2048 K7168 mxq", 687.0, "TF"),
        ("fprop E8 M65536 N2048 K7168 fp8-prom", 652.1, "TF"),
        ("fprop E8 M65536 N2048 K7168 bf16", 737.2, "TF"),
        ("decode: 0.983 GB moved, mxq", 2.70, "TB/s"),
    ]
    if got != want:
        print("ab_bench self-test FAILED:\n  got  %r\n  want %r" % (got, want))
        return 1
    print("ab_bench self-test passed (%d measurements parsed)" % len(got))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=".", help="directory holding the variant directories")
    ap.add_argument("--libs", help="comma-separated variant directories; the first is the baseline")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tests", help="Catch2 spec run once per variant before the rounds")
    ap.add_argument("--test-bin", default="mxq_gpu_tests")
    ap.add_argument("--tests-skip-base", action="store_true", help="run the tests on the variants only, not the baseline")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not a.libs or not cmd:
        ap.error("--libs and a benchmark command are required")
    libs = a.libs.split(",")
    env_of = {}
    for v in libs:
        d = os.path.abspath(os.path.join(a.root, v))
        if not os.path.isfile(os.path.join(d, "libmxq.so.0")):
            sys.exit("ab_bench: %s has no libmxq.so.0" % d)
        env_of[v] = dict(os.environ, LD_LIBRARY_PATH=d + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    rc = 0
    if a.tests:
        for v in libs[1:] if a.tests_skip_base else libs:
            r = subprocess.run([a.test_bin, a.tests], env=env_of[v], capture_output=True, text=True)
            tail = (r.stdout + r.stderr).strip().splitlines()[-2:]
            print("== tests %s %s: rc=%d  %s" % (v, a.tests, r.returncode, " | ".join(tail)), flush=True)
            rc |= r.returncode != 0
    results = {v: {} for v in libs}  # variant -> key -> [values]
    order = []
    for rnd in range(a.rounds):
        for v in libs:
            r = subprocess.run(cmd, env=env_of[v], capture_output=True, text=True)
            if r.returncode != 0:
                print("== round %d %s: rc=%d\n%s" % (rnd, v, r.returncode, (r.stdout + r.stderr)[-2000:]), flush=True)
                rc = 1
                continue
            for key, val, unit in parse(r.stdout.splitlines()):
                if key not in order:
                    order.append(key)
                results[v].setdefault(key, []).append(val)
            print("== round %d %s done" % (rnd, v), flush=True)
    base = libs[0]
    print("\n%-58s " % "measurement" + " ".join("%-26s" % v for v in libs))
    for key in order:
        cells = []
        b = results[base].get(key)
        for v in libs:
            vals = results[v].get(key)
            if not vals:
                cells.append("%-26s" % "-")
                continue
            s = "/".join("%.1f" % x for x in vals)
            if v != base and b:
                s += " (%+.1f%%)" % (100.0 * (statistics.median(vals) / statistics.median(b) - 1.0))
            cells.append("%-26s" % s)
        print("%-58s " % key[:58] + " ".join(cells))
    return rc


if __name__ == "__main__":
    sys.exit(main())
