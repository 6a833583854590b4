#!/usr/bin/env bash
# One call's worth of GPU verification on the device machine (see tools/device/prepare_deps.sh):
# build everything, run the GPU test suite, compute-sanitizer memcheck on a representative subset,
# the Python binding's GPU tests, then ./run.sh (the benchmarks, with the torch peer). Logs go to
# $OUT (or ./gpu_check_out) and a short summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$PWD/gpu_check_out}
mkdir -p "$out"
export MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-/tmp/bf}
source tools/device/stage.sh  # (the working directory is the repository root here)
nvidia-smi -L
stage configure 120 cmake -S . -B "$MXQ_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PWD/.deps" -DMXQ_SPDLOG_ROOT="$PWD/.deps" -DMXQ_FMT_ROOT="$PWD/.deps"
stage build 400 ninja -C "$MXQ_BUILD_DIR" mxq mxq_tests mxq_gpu_tests mxq_demo mxq_bench_quantize mxq_bench_gemm \
  mxq_bench_attention mxq_bench_attention_bwd
# One file for all -Xptxas -v reports: $OUT returns at most 8 files.
tar -C "$MXQ_BUILD_DIR/kernels" -czf "$out/ptxas.tgz" ptxas 2> /dev/null
# GPU_CHECK_PART=1: build, the GPU suite and the GEMM kernels' other paths; 3: the quantizer's other
# schedules, attention without turns, the unit tests, the Python bindings and racecheck on the
# attention backward; 2: compute-sanitizer (memcheck) and ./run.sh (the benchmarks); 4: racecheck on
# the attention forward. Parts 2, 3 and 4 reuse the build
# of part 1 on a still-warm machine (else the build stage rebuilds, ~220 s on 16 cores); unset:
# everything (more than one call's 600 s). On a fresh machine parts 1 and 3 together overran a call.
part=${GPU_CHECK_PART:-all}
if [[ $part == 1 || $part == all ]]; then
  stage gpu_tests 300 "$MXQ_BUILD_DIR/tests/mxq_gpu_tests"
  # The cp.async BF16-path GEMM kernel, which takes the plans the default TMA kernel declines.
  stage gemm_fallback 200 env MXQ_GEMM_SM90_TMA=0 "$MXQ_BUILD_DIR/tests/mxq_gpu_tests" "[gemm]"
  # The TMA kernel with B dequantized ahead on every plan (by default only tall groups take it).
  stage gemm_bprep 200 env MXQ_GEMM_SM90_BPREP=1 "$MXQ_BUILD_DIR/tests/mxq_gpu_tests" "[gemm]"
  # The same kernel with A dequantized ahead and the operands swapped on every M-grouped plan (by
  # default only groups of >= 512 rows whose A is the smaller operand take it).
  stage gemm_apre 200 env MXQ_GEMM_SM90_APRE=1 "$MXQ_BUILD_DIR/tests/mxq_gpu_tests" "[gemm]"
fi
if [[ $part == 3 || $part == all ]]; then
  # The quantizer's other rowwise schedules: the register kernel on small tensors and the ring kernel
  # on large ones (MXQ_QUANT_RINGROW), both M-grouped schedules (MXQ_QUANT_MGROUPED), and the ring
  # kernel's counter tile order on every multi-tile plan (MXQ_QUANT_RING_ORDER; by default only from 16
  # tiles per block, which no test case reaches), there with every tile as two 64-row halves
  # (MXQ_QUANT_SPLIT), and the default schedules without halves; the rowwise ring's tickets drawn one
  # tile ahead (MXQ_QUANT_JIT=0) and just in time only from the last few on (0.01 x blocks: the switch
  # from one form to the other inside a launch). These ring schedules run without the streaming
  # kernels (MXQ_QUANT_FLAT=0 MXQ_QUANT_BAND=0), which take ungrouped plans with K % 128 == 0 by
  # default; the last two run the flat and the band kernel on every plan each can take.
  stage quant_sched 300 bash -c "env MXQ_QUANT_FLAT=0 MXQ_QUANT_BAND=0 MXQ_QUANT_RINGROW=1 MXQ_QUANT_MGROUPED=ring MXQ_QUANT_RING_ORDER=counter MXQ_QUANT_SPLIT=1000 '$MXQ_BUILD_DIR/tests/mxq_gpu_tests' '[quantize]' &&
    env MXQ_QUANT_FLAT=0 MXQ_QUANT_BAND=0 MXQ_QUANT_RINGROW=0 MXQ_QUANT_MGROUPED=persistent MXQ_QUANT_RING_ORDER=static '$MXQ_BUILD_DIR/tests/mxq_gpu_tests' '[quantize]' &&
    env MXQ_QUANT_FLAT=0 MXQ_QUANT_BAND=0 MXQ_QUANT_SPLIT=0 '$MXQ_BUILD_DIR/tests/mxq_gpu_tests' '[quantize]' &&
    env MXQ_QUANT_FLAT=0 MXQ_QUANT_BAND=0 MXQ_QUANT_RINGROW=1 MXQ_QUANT_MGROUPED=ring MXQ_QUANT_RING_ORDER=counter MXQ_QUANT_JIT=0 '$MXQ_BUILD_DIR/tests/mxq_gpu_tests' '[quantize]' &&
    env MXQ_QUANT_FLAT=0 MXQ_QUANT_BAND=0 MXQ_QUANT_RINGROW=1 MXQ_QUANT_RING_ORDER=counter MXQ_QUANT_JIT=0.01 '$MXQ_BUILD_DIR/tests/mxq_gpu_tests' '[quantize]' &&
    env MXQ_QUANT_FLAT=1 '$MXQ_BUILD_DIR/tests/mxq_gpu_tests' '[quantize]' &&
    env MXQ_QUANT_BAND=1 '$MXQ_BUILD_DIR/tests/mxq_gpu_tests' '[quantize]'"
  # The attention forward's variant without the warpgroups' turns (MXQ_ATTN_SM90_PINGPONG=0), which
  # shares the main loop's code with the default kernels.
  stage attn_nopp 120 env MXQ_ATTN_SM90_PINGPONG=0 "$MXQ_BUILD_DIR/tests/mxq_gpu_tests" "[attention]~[bwd]"
  # The D = 128 forward's exact kernel alone (MXQ_ATTN_SM90_F8=0), and its FP8 kernel without the
  # fallback on the inputs that stay within the rescale's error bound (=2).
  stage attn_f8 150 bash -c "env MXQ_ATTN_SM90_F8=0 '$MXQ_BUILD_DIR/tests/mxq_gpu_tests' '[attention][fwd]' &&
    env MXQ_ATTN_SM90_F8=2 '$MXQ_BUILD_DIR/tests/mxq_gpu_tests' 'gpu attention fwd: inputs as a quantizer writes them'"
  stage unit_tests 120 "$MXQ_BUILD_DIR/tests/mxq_tests"
  stage python_gpu 90 env PYTHON=python3 bindings/python/test.sh
  # Shared-memory hazards of the attention backward (its reducer thread, producer and math warps share
  # staging tiles and stages through mbarriers and named barriers).
  stage racecheck_bwd 240 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$MXQ_BUILD_DIR/tests/mxq_gpu_tests" "[attention][bwd]"
fi
if [[ $part == 2 || $part == all ]]; then
  stage sanitizer 240 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
    "$MXQ_BUILD_DIR/tests/mxq_gpu_tests" \
    "[dequantize]~[large],[swizzle],[backend]~[graph],[quantize][groups],[quantize][swiglu],[quantize][flat],[quantize][align],[attention],*edge group sizes*,*exact branch*,[decode],*M-grouped and dense*,*B_BLOCK_2D hint*,*operands swapped*"
  # The same on the TMA GEMM kernel with B dequantized ahead on every plan (the `_bpre` / `_bpre_tma`
  # instances and their pre-kernels, which by default only tall groups take).
  stage sanitizer_bprep 180 env MXQ_GEMM_SM90_BPREP=1 compute-sanitizer --tool memcheck --report-api-errors no \
    --error-exitcode 9 "$MXQ_BUILD_DIR/tests/mxq_gpu_tests" "*edge group sizes*,*M-grouped and dense*,*short groups*"
  stage run_sh 300 ./run.sh
fi
if [[ $part == 4 || $part == all ]]; then
  # Shared-memory hazards of the attention forward (its producer, converter and math warps share
  # flags and stages without block barriers). Over 240 s since the D = 192 / 256 cases (the D = 64
  # case B1 Sq33 Skv257 alone takes minutes under racecheck), so a part of its own.
  stage racecheck 480 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$MXQ_BUILD_DIR/tests/mxq_gpu_tests" "[attention]~[bwd]"
fi
# $OUT returns at most 8 files: every log goes back in one archive (the summary lines carry the last
# line of each).
tar -C "$out" -czf "$out/logs.tgz" $(cd "$out" && ls *.log) 2> /dev/null && rm -f "$out"/*.log
printf '%s\n' "${summary[@]}"
