#!/usr/bin/env bash
# Copies the header-only build dependencies (spdlog, fmt, Catch2 v2 with its CMake package) from
# this machine's Debian packages into .deps/, an ignored folder that can travel to a GPU machine
# that has CUDA and CMake but no Debian packages. Then build there with:
#   cmake -S . -B /tmp/build -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.deps -DMXQ_SPDLOG_ROOT=$PWD/.deps -DMXQ_FMT_ROOT=$PWD/.deps
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .deps && mkdir -p .deps/include .deps/lib/cmake
cp -r /usr/include/spdlog /usr/include/fmt /usr/include/catch2 .deps/include/
cp -r /usr/lib/cmake/Catch2 .deps/lib/cmake/
# Catch2Targets.cmake also names the (unused by mxq) Catch2WithMain archive; it must exist.
cp /usr/lib/libCatch2*.a .deps/lib/ 2>/dev/null || true
echo "prepared $(du -sh .deps | cut -f1) in .deps"
