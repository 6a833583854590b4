#!/bin/bash
# Builds a variant of libmxq for an A/B run on the device (tools/device/ab_bench.py): the kernel
# source FILE gets `#define NAME` lines for the given macros at its top, the library is rebuilt in
# BUILD (an existing configured build directory: only FILE's fatbin recompiles), libmxq.so.0 is
# copied to OUT/, and FILE is restored (also on failure). No macros: the tree as it is.
#
#   tools/dev/variant_lib.sh BUILD OUT FILE [MACRO[=VALUE]...]
#   e.g. tools/dev/variant_lib.sh build-lead /tmp/v/C kernels/sm90/attention_bwd.cu MXQ_BWD_FOLD
#
# Then pack the variant directories with the benchmark / test binaries into an ignored folder of
# the checkout (e.g. .dev-lead/, xz: ~12 MB per library; the device tool carries 64 MiB) and run
#   python3 tools/device/ab_bench.py --root DIR --libs base,C --tests '[attention][bwd]' \
#       --test-bin DIR/mxq_gpu_tests -- DIR/mxq_bench_attention_bwd
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,14p' "$0"; exit 2; }
build=$1 out=$2 file=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -f "$file" ] || { echo "variant_lib: no $file" >&2; exit 2; }
backup=$(mktemp)
cp -p "$file" "$backup"
# Restored with a new mtime, so that the next build of BUILD recompiles FILE as it is.
restore() { cp "$backup" "$file"; rm -f "$backup"; }
trap restore EXIT
if [ $# -gt 0 ]; then
  {
    for m in "$@"; do
      if [[ $m == *=* ]]; then echo "#define ${m%%=*} ${m#*=}"; else echo "#define $m"; fi
    done
    cat "$backup"
  } > "$file"
fi
export PATH=/usr/local/cuda/bin:$PATH
cmake --build "$build" --target mxq -j "$(nproc)" > /dev/null
mkdir -p "$out"
cp "$build/libmxq.so.0" "$out/libmxq.so.0"
# FILE's sm_90a entries that spill (ptxas -v: "Compiling entry function 'X' for 'sm_90a'", then the spill line)
rel=${file#kernels/}
log="$build/kernels/ptxas/$(echo "${rel%.cu}" | tr / _).log"
awk '/Compiling entry function .* for .sm_90a./ { split($0, q, "\x27"); e = q[2] }
     /bytes spill stores/ && e != "" { if ($5 + 0 > 0) printf "variant_lib: %s spills %s bytes\n", e, $5; e = "" }' \
  "$log"
echo "variant_lib: $out/libmxq.so.0 (${*:-no macros})"
