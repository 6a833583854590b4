#!/usr/bin/env bash
# Python binding checks: the FFI drift check for mxq/_ffi.py, then the unittest suite (tests/run.py)
# against libmxq from MXQ_BUILD_DIR (default <repo>/build). Uses Debian's /usr/bin/python3, which has
# numpy; override with PYTHON=... (the GPU machine's python3 has torch, for tests/test_cuda.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-/usr/bin/python3}"
build="${MXQ_BUILD_DIR:-$root/build}"
[ -e "$build/libmxq.so" ] || { echo "python: no libmxq.so in $build (build it, or set MXQ_BUILD_DIR)" >&2; exit 1; }

"$py" "$root/bindings/check_ffi_sync.py" --lang python
MXQ_LIB_DIR="$build" PYTHONDONTWRITEBYTECODE=1 "$py" "$here/tests/run.py" "$@"
