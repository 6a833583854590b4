#!/usr/bin/env bash
# The symbol gate (libpng's symbols.def idea, with the header as a second witness). The exported
# dynamic symbols of libmxq.so must equal, name for name:
#   1. the checked-in list tests/abi/exported_symbols.txt (an ABI change is a reviewed diff), and
#   2. the functions declared with MXQ_API in include/mxq/mxq.h (parsed through the C preprocessor,
#      so comments and line breaks cannot hide a declaration),
# every one a function whose name starts with "mxq"; the library must not depend on libcuda,
# libcudart, spdlog or fmt at load time, and its SONAME is libmxq.so.<major>.
# Usage: check_symbols.sh LIB LIST HEADER CC MAJOR INCLUDE_DIR...
# Set MXQ_ABI_UPDATE=1 to rewrite LIST from the library (then review the diff).
set -euo pipefail
lib=$1 list=$2 header=$3 cc=$4 major=$5
shift 5
incs=()
for d in "$@"; do incs+=("-I$d"); done

work=$(mktemp -d "${TMPDIR:-/tmp}/mxq-abi.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'echo "FAIL: $0 line $LINENO: command failed: $BASH_COMMAND"' ERR
fail=0
bad() { echo "FAIL: $*"; fail=1; }

[[ -f $lib ]] || { echo "FAIL: library $lib not found"; exit 1; }

# Defined dynamic symbols as "TYPE NAME" (version suffix dropped). Type A is the version node of
# the linker script (MXQ_0), not a symbol anyone links against.
nm -D --defined-only "$lib" | awk '{ n = $NF; sub(/@.*/, "", n); if ($(NF-1) != "A") print $(NF-1), n }' \
  | sort -k2 > "$work/defined"
awk '$1 != "T" && $1 != "W" && $1 != "i" { print }' "$work/defined" > "$work/non_functions"
if [[ -s $work/non_functions ]]; then
  bad "exported symbols that are not functions (data, TLS, ...):"
  sed 's/^/    /' "$work/non_functions"
fi
awk '{ print $2 }' "$work/defined" | sort -u > "$work/exported"
if grep -v '^mxq' "$work/exported" > "$work/foreign"; then
  bad "exported symbols outside the mxq prefix (version script or visibility broken):"
  sed 's/^/    /' "$work/foreign"
fi
[[ -s $work/exported ]] || bad "libmxq exports no symbol at all"

if [[ ${MXQ_ABI_UPDATE:-0} == 1 ]]; then
  {
    echo "# The functions libmxq.so exports, one per line: the ABI's name list. tests/abi/check_symbols.sh"
    echo "# (ctest abi.symbols) fails when the library or include/mxq/mxq.h disagrees with it. After an"
    echo "# intended API change: MXQ_ABI_UPDATE=1 ctest -R abi.symbols, then review this diff."
    cat "$work/exported"
  } > "$list"
  echo "rewrote $list ($(wc -l < "$work/exported") symbols)"
fi

if ! diff -u --label "$list (checked in)" --label "$lib (nm -D)" <(grep -v '^#' "$list" | sed '/^$/d' | sort -u) \
     "$work/exported" > "$work/list.diff"; then
  bad "exported symbols differ from the checked-in list (+ exported but not listed, - listed but missing):"
  cat "$work/list.diff"
  echo "    If the change is intended: MXQ_ABI_UPDATE=1 ctest -R abi.symbols, review and commit the list."
fi

# The header's view: the preprocessor removes comments and joins nothing we rely on; MXQ_API is
# replaced by a marker so exactly the exported declarations can be picked out.
"$cc" -std=c99 -E -P -DMXQ_API=__MXQ_API_MARK__ "${incs[@]}" "$header" > "$work/header.i"
tr '\n' ' ' < "$work/header.i" > "$work/header.flat"
grep -oE '__MXQ_API_MARK__[^;{]*\(' "$work/header.flat" \
  | sed -E 's/[[:space:]]*\($//; s/.*[^A-Za-z0-9_]//' | sort -u > "$work/header_api"
# Every function-call-shaped mxq name: a declaration that forgot MXQ_API shows up here only.
grep -oE '(^|[^A-Za-z0-9_])mxq[A-Za-z0-9_]*[[:space:]]*\(' "$work/header.flat" \
  | sed -E 's/^[^m]//; s/[[:space:]]*\($//' | sort -u > "$work/header_all"
[[ -s $work/header_api ]] || bad "found no MXQ_API declaration in $header (parser broken?)"
if ! diff -u --label "mxq* functions declared" --label "declared with MXQ_API" \
     "$work/header_all" "$work/header_api" > "$work/decl.diff"; then
  bad "functions declared in the header without MXQ_API:"
  cat "$work/decl.diff"
fi
if ! diff -u --label "$header (MXQ_API)" --label "$lib (nm -D)" "$work/header_api" "$work/exported" \
     > "$work/header.diff"; then
  bad "exported symbols differ from the functions declared in the header (+ exported only, - declared only):"
  cat "$work/header.diff"
fi

# Load-time dependencies: CUDA is dlopen'ed at handle creation; spdlog and fmt are compiled in.
readelf -d "$lib" > "$work/dynamic"
{ grep -E '\(NEEDED\)' "$work/dynamic" || true; } | sed -E 's/.*\[(.*)\].*/\1/' > "$work/needed"
if grep -E '^lib(cuda|cudart|nvrtc|cublas|spdlog|fmt)[.-]' "$work/needed" > "$work/bad_needed"; then
  bad "libmxq links at load time against:"
  sed 's/^/    /' "$work/bad_needed"
fi
soname=$({ grep -E '\(SONAME\)' "$work/dynamic" || true; } | sed -E 's/.*\[(.*)\].*/\1/')
[[ $soname == "libmxq.so.$major" ]] || bad "SONAME is '$soname', expected libmxq.so.$major"

if [[ $fail == 0 ]]; then
  echo "OK: $(wc -l < "$work/exported") exported mxq functions = checked-in list = MXQ_API declarations;" \
       "SONAME $soname; NEEDED: $(tr '\n' ' ' < "$work/needed")"
fi
exit $fail
