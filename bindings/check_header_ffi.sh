#!/usr/bin/env bash
# Checks that include/mxq/mxq.h is easy prey for FFI generators (bindgen, cffi, ctypesgen, Clang.jl,
# hand-written ctypes): preprocessed with MXQ_API defined empty, as their docs tell users to do, the
# declarations must be plain C99 with nothing a generator without a full preprocessor trips on.
#   1. the mxq headers define no function-like macro;
#   2. outside preprocessor lines, the only mxq macro the header uses is MXQ_API (so reading the
#      header without a preprocessor sees the same declarations as compiling it);
#   3. the preprocessed declarations hold no compiler extension (attributes, declspec, asm, pragmas);
#   4. every function prototype is marked MXQ_API (the count of both matches);
#   5. the preprocessed declarations compile as strict C99 on their own.
# The system headers are replaced by empty stubs while looking, so only mxq's own text is checked.
#
# Usage: check_header_ffi.sh [header] [dir holding the generated mxq_version.h]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
header="${1:-$root/include/mxq/mxq.h}"
gen_inc="${2:-${MXQ_BUILD_DIR:-$root/build}/include}"
cc="${CC:-cc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

[ -f "$gen_inc/mxq/mxq_version.h" ] || { echo "header ffi: no mxq/mxq_version.h under $gen_inc (pass the build's include dir)"; exit 1; }
mkdir -p "$tmp/stub"
: > "$tmp/stub/stddef.h"
: > "$tmp/stub/stdint.h"
inc=(-nostdinc -I"$tmp/stub" -I"$(dirname "$header")/.." -I"$gen_inc")
fail=0
problem() { echo "header ffi: $*"; fail=1; }

# 1. Macros the mxq headers define (the compiler's own built-ins subtracted).
"$cc" -dM -E -x c /dev/null "${inc[@]}" | sort > "$tmp/builtin"
"$cc" -dM -E -x c "$header" "${inc[@]}" | sort > "$tmp/all"
comm -13 "$tmp/builtin" "$tmp/all" > "$tmp/mxq_macros"
if grep -E '^#define [A-Za-z_][A-Za-z0-9_]*\(' "$tmp/mxq_macros" > "$tmp/funclike"; then
  problem "function-like macros: $(sed 's/#define //' "$tmp/funclike" | tr '\n' ' ')"
fi
sed -E 's/^#define ([A-Za-z_][A-Za-z0-9_]*).*/\1/' "$tmp/mxq_macros" | sort -u > "$tmp/macro_names"

# 2. Macro names used in declarations (comments removed, preprocessor lines dropped, unexpanded).
for h in "$header" "$gen_inc/mxq/mxq_version.h"; do
  "$cc" -fpreprocessed -E -P -x c "$h" 2>/dev/null | grep -v '^[[:space:]]*#' || true
done | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sort -u > "$tmp/decl_tokens"
used="$(comm -12 "$tmp/macro_names" "$tmp/decl_tokens" | grep -vx 'MXQ_API' | tr '\n' ' ' || true)"
[ -z "$used" ] || problem "macros used in declarations (generators without a preprocessor misread them): $used"

# 3. The header as a generator sees it: MXQ_API empty.
"$cc" -E -P -x c -DMXQ_API= "${inc[@]}" "$header" > "$tmp/pre.h"
if grep -nE '__attribute__|__declspec|__extension__|__asm|_Pragma|__restrict|#pragma|\[\[' "$tmp/pre.h" > "$tmp/ext"; then
  problem "compiler extensions in declarations:"; cat "$tmp/ext"
fi

# 4. Prototypes vs MXQ_API marks.
protos=$(tr '\n' ' ' < "$tmp/pre.h" | tr ';' '\n' | grep -vE '^[[:space:]]*typedef' |
         grep -cE '^[[:space:]]*[A-Za-z_][A-Za-z0-9_ *]*[ *]mxq[A-Za-z0-9_]*[[:space:]]*\(' || true)
marks=$("$cc" -fpreprocessed -E -P -x c "$header" 2>/dev/null | grep -v '^[[:space:]]*#' | grep -oE '\bMXQ_API\b' | wc -l)
[ "$protos" -gt 0 ] || problem "no prototypes found after preprocessing"
[ "$protos" -eq "$marks" ] || problem "$protos prototypes but $marks MXQ_API marks: every exported function needs MXQ_API"

# 5. Strict C99, with the real system headers back.
{ printf '#include <stddef.h>\n#include <stdint.h>\n'; cat "$tmp/pre.h"; } > "$tmp/check.c"
"$cc" -std=c99 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -x c "$tmp/check.c" ||
  problem "the preprocessed declarations are not strict C99"

if [ "$fail" -ne 0 ]; then
  echo "header ffi: FAILED ($header)"
  exit 1
fi
echo "header ffi: OK: $protos prototypes, all MXQ_API; $(wc -l < "$tmp/macro_names") mxq macros, none function-like, only MXQ_API in declarations"
