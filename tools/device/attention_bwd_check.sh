#!/usr/bin/env bash
# One device call's worth of verification for the attention backward (issue 5): build the library,
# the GPU tests and the backward benchmark; run the [attention][bwd] and [backend] GPU tests, the
# benchmark, then compute-sanitizer memcheck on a small subset. Logs go to $OUT (or ./attn_bwd_out).
# Usage: tools/device/attention_bwd_check.sh [test-spec] [sanitizer-spec]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$PWD/attn_bwd_out}
mkdir -p "$out"
build=${MXQ_BUILD_DIR:-/tmp/bab}
deps=${MXQ_DEPS:-$PWD/.deps}
spec=${1:-[bwd],[backend]}
sspec=${2:-[bwd]}
source tools/device/stage.sh  # (the working directory is the repository root here)
nvidia-smi -L
stage configure 120 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$deps" -DMXQ_SPDLOG_ROOT="$deps" -DMXQ_FMT_ROOT="$deps"
stage build 360 ninja -C "$build" mxq mxq_gpu_tests mxq_bench_attention_bwd
cp "$build/kernels/ptxas/sm90_attention_bwd.log" "$out/ptxas_attention_bwd.log" 2> /dev/null
stage tests 240 "$build/tests/mxq_gpu_tests" "$spec" -r compact
grep -E "attention bwd|vs oracle|FAILED|passed|failed" "$out/tests.log" | tail -n 60
stage bench 120 "$build/tools/mxq_bench_attention_bwd"
cat "$out/bench.log"
stage sanitizer 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
  "$build/tests/mxq_gpu_tests" "$sspec"
tail -n 5 "$out/sanitizer.log"
if [ -n "${RACECHECK_SPEC:-}" ]; then
  stage racecheck 150 compute-sanitizer --tool racecheck --racecheck-report analysis --error-exitcode 9 \
    "$build/tests/mxq_gpu_tests" "$RACECHECK_SPEC"
  tail -n 8 "$out/racecheck.log"
fi
if [ -n "${NCU_SHAPE:-}" ]; then
  ncu_bin=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -n 1)
  if [ -n "$ncu_bin" ]; then
    # shellcheck disable=SC2086
    stage ncu 150 "$ncu_bin" --launch-count 3 -k regex:"dkv|_dq_|prep" --section SpeedOfLight --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis "$build/tools/mxq_bench_attention_bwd" $NCU_SHAPE 1
    grep -E "mxq_attn|Duration|Throughput|Stall|Issued|Eligible|No Eligible|L2 Hit|Busy" "$out/ncu.log" | head -n 80
  else
    echo "ncu not found"
  fi
fi
printf '%s\n' "${summary[@]}"
