#!/usr/bin/env bash
# ./run.sh — installs what is missing, builds mxq, and runs the main job:
#   with a working GPU (nvidia-smi lists one): the GPU benchmark tools that exist in the build
#     (tools/mxq_bench_*), or the demo on the CUDA backend when there are none;
#   otherwise: the demo (tools/mxq_demo.cpp) on the CPU reference backend.
# The demo runs with MXQ_LOG_LEVEL=3, so each plan logs the kernel it chose and why.
#   ./run.sh          as above
#   ./run.sh --cpu    the CPU demo even on a GPU machine
# Same build directory and configuration as ./test.sh (whose mxq_setup this script uses).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=test.sh
source ./test.sh

force_cpu=0
case ${1:-} in
--cpu) force_cpu=1 ;;
"") ;;
*)
  echo "usage: $0 [--cpu]" >&2
  exit 2
  ;;
esac

mxq_setup

gpu=0
if ((!force_cpu)) && command -v nvidia-smi > /dev/null && nvidia-smi -L 2> /dev/null | grep -q '^GPU '; then
  gpu=1
  nvidia-smi -L
  if [[ $MXQ_HAVE_NVCC != 1 ]]; then
    mxq_log "a GPU is present but nvcc is not: the library has no kernels; running the CPU demo"
    gpu=0
  fi
fi

# Benchmarks: one executable per tools/mxq_bench_*.cpp (tools/CMakeLists.txt).
benches=()
for src in tools/mxq_bench_*.cpp; do
  [[ -f $src ]] && benches+=("$(basename "$src" .cpp)")
done

export MXQ_LOG_LEVEL=${MXQ_LOG_LEVEL:-3}
if ((gpu)) && ((${#benches[@]})); then
  mxq_log "building ${benches[*]}"
  cmake --build "$MXQ_BUILD" -j "$MXQ_JOBS" --target "${benches[@]}"
  # The torch.compile peer runs from the same command when the machine's python3 has torch.
  torch_peer=()
  python3 -c 'import torch' > /dev/null 2>&1 && torch_peer=(--torch tools/bench_quantize_torch.py)
  for b in "${benches[@]}"; do
    mxq_log "$b"
    if [[ $b == mxq_bench_quantize ]]; then
      "$MXQ_BUILD/tools/$b" "${torch_peer[@]}"
    else
      "$MXQ_BUILD/tools/$b"
    fi
  done
else
  backend=cpu
  ((gpu)) && backend=cuda
  mxq_log "building mxq_demo"
  cmake --build "$MXQ_BUILD" -j "$MXQ_JOBS" --target mxq_demo
  mxq_log "mxq_demo --backend $backend"
  "$MXQ_BUILD/tools/mxq_demo" --backend "$backend"
fi
