#!/usr/bin/env bash
# Julia binding checks. Always: the generated ccall layer (src/LibMXQ.jl) equals what
# tools/gen_julia_bindings.py makes from include/mxq/mxq.h today. Where Julia is installed: the smoke
# test (test/runtests.jl) against libmxq from MXQ_BUILD_DIR (default: <repo>/build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py=/usr/bin/python3; [ -x "$py" ] || py=python3

"$py" "$root/tools/gen_julia_bindings.py" --check

if command -v julia >/dev/null 2>&1; then
  build="${MXQ_BUILD_DIR:-$root/build}"
  lib="$(ls "$build"/libmxq.so* 2>/dev/null | head -n1 || true)"
  [ -n "$lib" ] || { echo "julia: no libmxq.so in $build (set MXQ_BUILD_DIR)" >&2; exit 1; }
  MXQ_LIBRARY="$lib" julia --startup-file=no "$here/test/runtests.jl"
else
  echo "julia: not installed; ran the generator drift check only"
fi
echo "julia bindings: OK"
