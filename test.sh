#!/usr/bin/env bash
# ./test.sh — installs what is missing, builds mxq (Release, Ninja, build/) and runs the whole test
# suite: every ctest test (unit, internal, ABI/packaging; the GPU tests report "skipped" without a
# GPU) and then each bindings/*/test.sh that exists and is executable. Exits non-zero if anything
# failed, after running everything.
#
# run.sh sources this file for mxq_setup (dependencies + configure), so the two always build the
# same way; sourcing defines functions only.
#
# Environment: MXQ_BUILD_DIR (default build), MXQ_JOBS (default: all cores),
#              MXQ_CMAKE_ARGS (extra configure arguments), MXQ_SKIP_DEPS=1 (no apt).

mxq_log() { printf '==> %s\n' "$*"; }

# .deps/ (tools/device/prepare_deps.sh) stands in for the header-only packages on machines that
# lack them; where the Debian packages are installed they win.
mxq_use_deps_dir() {
  [[ -d .deps/include ]] || return 1
  local pkg
  for pkg in catch2 libspdlog-dev libfmt-dev; do
    dpkg -s "$pkg" > /dev/null 2>&1 || return 0
  done
  return 1
}

# Debian packages the build and the tests need. A tool counts as present when it is on PATH (it
# may come from elsewhere than apt), a library when dpkg knows it or .deps/ provides it (GPU
# machines without Debian packages: tools/device/prepare_deps.sh).
mxq_install_deps() {
  local missing=() pkg
  command -v cmake > /dev/null || missing+=(cmake)
  command -v ninja > /dev/null || missing+=(ninja-build)
  command -v g++ > /dev/null || missing+=(g++)
  command -v pkg-config > /dev/null || missing+=(pkg-config)
  if ! mxq_use_deps_dir; then
    for pkg in catch2 libspdlog-dev libfmt-dev; do
      dpkg -s "$pkg" > /dev/null 2>&1 || missing+=("$pkg")
    done
  fi
  dpkg -s python3-numpy > /dev/null 2>&1 || python3 -c 'import numpy' > /dev/null 2>&1 || missing+=(python3-numpy)
  if ((${#missing[@]} == 0)); then
    mxq_log "dependencies present"
    return 0
  fi
  if [[ ${MXQ_SKIP_DEPS:-0} == 1 ]] || ! command -v apt-get > /dev/null; then
    mxq_log "missing packages: ${missing[*]} (no apt-get or MXQ_SKIP_DEPS=1: not installing; the build may fail)"
    return 0
  fi
  local sudo=()
  if [[ $(id -u) != 0 ]]; then
    if command -v sudo > /dev/null; then sudo=(sudo); else
      echo "error: missing packages ${missing[*]}; not root and no sudo to install them" >&2
      return 1
    fi
  fi
  mxq_log "installing: ${missing[*]}"
  # A failed install (no network, say) is reported but not fatal: the configure step then names
  # precisely what is still missing.
  if ! { "${sudo[@]}" apt-get update && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y \
           --no-install-recommends "${missing[@]}"; }; then
    mxq_log "warning: apt-get could not install ${missing[*]}; trying to build anyway"
  fi
}

# Configure arguments shared by test.sh and run.sh.
mxq_cmake_args() {
  MXQ_CMAKE_CONFIG=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
  # The CUDA toolkit is expected at /usr/local/cuda (or nvcc on PATH); without it the library is
  # built with the CPU reference backend only.
  if command -v nvcc > /dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then
    MXQ_HAVE_NVCC=1
  else
    MXQ_HAVE_NVCC=0
    mxq_log "nvcc not found (CUDA toolkit expected at /usr/local/cuda): building with -DMXQ_ENABLE_CUDA_KERNELS=OFF (CPU backend only)"
    MXQ_CMAKE_CONFIG+=(-DMXQ_ENABLE_CUDA_KERNELS=OFF)
  fi
  if mxq_use_deps_dir; then
    mxq_log "using the header-only dependencies in .deps/"
    MXQ_CMAKE_CONFIG+=(-DCMAKE_PREFIX_PATH="$PWD/.deps" -DMXQ_SPDLOG_ROOT="$PWD/.deps" -DMXQ_FMT_ROOT="$PWD/.deps")
  fi
  if [[ -n ${MXQ_CMAKE_ARGS:-} ]]; then
    local extra
    read -r -a extra <<< "$MXQ_CMAKE_ARGS"
    MXQ_CMAKE_CONFIG+=("${extra[@]}")
  fi
}

# Dependencies + configure. Leaves MXQ_BUILD (build dir) and MXQ_JOBS set.
mxq_setup() {
  cd "$(dirname "${BASH_SOURCE[0]}")" || return 1
  MXQ_BUILD=${MXQ_BUILD_DIR:-build}
  MXQ_JOBS=${MXQ_JOBS:-$(nproc 2> /dev/null || echo 2)}
  mxq_install_deps || return 1
  mxq_cmake_args
  mxq_log "configuring $MXQ_BUILD: cmake ${MXQ_CMAKE_CONFIG[*]}"
  cmake -S . -B "$MXQ_BUILD" "${MXQ_CMAKE_CONFIG[@]}"
}

mxq_test_main() {
  set -euo pipefail
  mxq_setup
  mxq_log "building with $MXQ_JOBS jobs"
  cmake --build "$MXQ_BUILD" -j "$MXQ_JOBS"

  local failed=()
  mxq_log "ctest"
  (cd "$MXQ_BUILD" && ctest --output-on-failure -j "$MXQ_JOBS") || failed+=(ctest)

  # Bindings are tested by their own scripts, against the library just built.
  local script build_abs
  build_abs=$(cd "$MXQ_BUILD" && pwd)
  export MXQ_BUILD_DIR=$build_abs MXQ_LIBRARY_DIR=$build_abs  # libmxq.so is at the build dir's top
  for script in bindings/*/test.sh; do
    [[ -f $script && -x $script ]] || continue
    mxq_log "$script"
    "$script" || failed+=("$script")
  done

  if ((${#failed[@]})); then
    mxq_log "FAILED: ${failed[*]}"
    return 1
  fi
  mxq_log "all tests passed"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  mxq_test_main "$@"
fi
