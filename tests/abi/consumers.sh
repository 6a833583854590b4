#!/usr/bin/env bash
# Builds and runs outside programs against mxq the three ways users get it, each from scratch in
# its own folder under WORK, so every ctest run checks the packaging as it is now:
#   install      cmake --install into a staging prefix, then MOVE it: the consumers below only see
#                the moved prefix, so absolute paths baked into mxq.pc or the CMake files fail.
#   pkgconfig    cc $(pkg-config --cflags --libs mxq) with PKG_CONFIG_PATH into the prefix.
#   find_package a CMake project: find_package(mxq) + target_link_libraries(... mxq::mxq).
#   vendored     a CMake project that add_subdirectory()s the mxq source tree (a full library build,
#                configured with MXQ_ENABLE_CUDA_KERNELS=OFF to keep it fast); tests, tools and
#                install rules must stay off there.
# Usage: consumers.sh ENV_FILE MODE. ENV_FILE (written by tests/abi/CMakeLists.txt) exports:
#   MXQ_ABI_WORK, MXQ_BUILD_DIR, MXQ_SOURCE_DIR, MXQ_LIBDIR, MXQ_VERSION_STRING, MXQ_MAJOR,
#   MXQ_CC, MXQ_CXX, MXQ_GENERATOR, MXQ_CONSUMER_SOURCES (';'-separated), MXQ_EXTRA_CMAKE_ARGS
#   (';'-separated, forwarded to the vendored configure).
set -euo pipefail
mode=${2:?usage: consumers.sh ENV_FILE install|pkgconfig|find_package|vendored}
trap 'echo "FAIL: $0 ($mode) line $LINENO: $BASH_COMMAND"' ERR
# shellcheck source=/dev/null
source "$1"
work=$MXQ_ABI_WORK
prefix=$work/prefix
IFS=';' read -r -a sources <<< "$MXQ_CONSUMER_SOURCES"
jobs=$(nproc 2>/dev/null || echo 2)

# Runs every consumer program in a folder; the library path comes from the caller (RPATH or env).
run_programs() {
  local dir=$1
  shift
  local src name
  for src in "${sources[@]}"; do
    name=$(basename "$src" .c)
    if [[ $name == consumer ]]; then
      echo "---- $name $*"
      "$dir/$name" "$@"
    else
      echo "---- $name"
      "$dir/$name"
    fi
  done
}

case $mode in
install)
  rm -rf "$work/staging" "$prefix"
  mkdir -p "$work"
  cmake --install "$MXQ_BUILD_DIR" --prefix "$work/staging"
  mv "$work/staging" "$prefix"
  lib=$prefix/$MXQ_LIBDIR
  missing=0
  for f in "$lib/libmxq.so" "$lib/libmxq.so.$MXQ_MAJOR" "$lib/libmxq.so.$MXQ_VERSION_STRING" \
           "$prefix/include/mxq/mxq.h" "$prefix/include/mxq/mxq_version.h" "$lib/pkgconfig/mxq.pc" \
           "$lib/cmake/mxq/mxqConfig.cmake" "$lib/cmake/mxq/mxqConfigVersion.cmake" "$lib/cmake/mxq/mxqTargets.cmake"; do
    [[ -e $f ]] || { echo "FAIL: not installed: ${f#$prefix/}"; missing=1; }
  done
  [[ -L $lib/libmxq.so && -L $lib/libmxq.so.$MXQ_MAJOR ]] || { echo "FAIL: libmxq.so and .so.$MXQ_MAJOR must be symlinks"; missing=1; }
  # Only mxq's own files: no static archive (mxq_core), no spdlog/fmt/Catch2 headers.
  stray=$(cd "$prefix" && find . \( -name '*.a' -o -path './include/*' ! -path './include/mxq' ! -path './include/mxq/*' \) -print)
  [[ -z $stray ]] || { echo "FAIL: unexpected files installed:"; echo "$stray"; missing=1; }
  # libmxq has no public link dependencies: the exported target must not name mxq_core (linked
  # into the .so by path), spdlog, fmt, Threads or CUDA.
  if grep -nE '^[^#]*(mxq_core|spdlog|fmt::|Threads::|CUDA::|cuda)' "$lib"/cmake/mxq/*.cmake "$lib/pkgconfig/mxq.pc"; then
    echo "FAIL: the installed package files name a private dependency (lines above)"
    missing=1
  fi
  if grep -rIl -- "$work/staging" "$prefix" > "$work/abs_paths" 2>/dev/null; then
    echo "FAIL: installed files hard-code the install prefix (not relocatable):"
    cat "$work/abs_paths"
    missing=1
  fi
  echo "installed tree:"
  (cd "$prefix" && find . \( -type f -o -type l \) | sort | sed 's/^/  /')
  exit $missing
  ;;

pkgconfig)
  export PKG_CONFIG_PATH=$prefix/$MXQ_LIBDIR/pkgconfig
  version=$(pkg-config --modversion mxq)
  [[ $version == "$MXQ_VERSION_STRING" ]] || { echo "FAIL: pkg-config says version $version, expected $MXQ_VERSION_STRING"; exit 1; }
  libdir=$(pkg-config --variable=libdir mxq)
  [[ $(cd "$libdir" && pwd -P) == $(cd "$prefix/$MXQ_LIBDIR" && pwd -P) ]] ||
    { echo "FAIL: pkg-config libdir $libdir is not the moved prefix's"; exit 1; }
  flags=$(pkg-config --cflags --libs mxq)
  echo "pkg-config --cflags --libs mxq: $flags"
  out=$work/pkgconfig
  rm -rf "$out" && mkdir -p "$out"
  for src in "${sources[@]}"; do
    # shellcheck disable=SC2086  # flags are words by design
    "$MXQ_CC" -std=c99 -Wall -Wextra -pedantic -Werror "$src" $flags -lm -o "$out/$(basename "$src" .c)"
  done
  LD_LIBRARY_PATH=$libdir run_programs "$out"
  ;;

find_package)
  out=$work/find_package
  rm -rf "$out"
  cmake -S "$MXQ_SOURCE_DIR/tests/abi/consumer_cmake" -B "$out" -G "$MXQ_GENERATOR" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$MXQ_CC" -DCMAKE_PREFIX_PATH="$prefix" \
    -DMXQ_EXPECTED_VERSION="$MXQ_VERSION_STRING" -DMXQ_CONSUMER_SOURCES="$MXQ_CONSUMER_SOURCES"
  cmake --build "$out" -j "$jobs"
  run_programs "$out"   # CMake's build RPATH points at the moved prefix
  ;;

vendored)
  out=$work/vendored
  rm -rf "$out"
  extra=()
  if [[ -n ${MXQ_EXTRA_CMAKE_ARGS:-} ]]; then IFS=';' read -r -a extra <<< "$MXQ_EXTRA_CMAKE_ARGS"; fi
  cmake -S "$MXQ_SOURCE_DIR/tests/abi/consumer_vendored" -B "$out" -G "$MXQ_GENERATOR" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$MXQ_CC" -DCMAKE_CXX_COMPILER="$MXQ_CXX" \
    -DMXQ_SOURCE_DIR="$MXQ_SOURCE_DIR" -DMXQ_CONSUMER_SOURCES="$MXQ_CONSUMER_SOURCES" \
    -DMXQ_ENABLE_CUDA_KERNELS=OFF "${extra[@]}"
  time cmake --build "$out" -j "$jobs"
  if find "$out" -name 'mxq_*tests' -type f | grep -q .; then
    echo "FAIL: the vendored build built a test executable"
    exit 1
  fi
  # No install rules from mxq: installing the host project must not install mxq files.
  cmake --install "$out" --prefix "$out/install-probe" > /dev/null
  if [[ -d $out/install-probe ]] && find "$out/install-probe" -type f | grep -q .; then
    echo "FAIL: the vendored mxq installed files:"
    find "$out/install-probe" -type f
    exit 1
  fi
  run_programs "$out" --expect-no-cuda
  ;;

*)
  echo "unknown mode $mode" >&2
  exit 2
  ;;
esac
echo "OK: $mode"
