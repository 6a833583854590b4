#!/usr/bin/env bash
# Rust binding checks: the FFI drift check of mxq-sys against include/mxq/mxq.h, then
# `cargo test --offline` (sys layout tests, the safe crate's CPU tests, doc tests) and the moe_gemm
# example, all against libmxq from MXQ_BUILD_DIR (default <repo>/build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${MXQ_BUILD_DIR:-$root/build}" 2>/dev/null && pwd || true)"
[ -n "$build" ] && [ -e "$build/libmxq.so" ] || {
  echo "rust: no libmxq.so in ${MXQ_BUILD_DIR:-$root/build} (build it, or set MXQ_BUILD_DIR)" >&2; exit 1; }
py=/usr/bin/python3; [ -x "$py" ] || py=python3

"$py" "$root/bindings/check_ffi_sync.py" --lang rust

export MXQ_LIB_DIR="$build"
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # doc tests get no rpath
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
cargo test --offline --manifest-path "$here/Cargo.toml" --workspace "$@"
cargo run --offline --quiet --manifest-path "$here/Cargo.toml" -p mxq --example moe_gemm
echo "rust bindings: OK"
