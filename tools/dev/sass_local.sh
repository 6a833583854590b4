#!/bin/bash
# SASS of one kernel source without a GPU machine: nvcc (CUDA 13) compiles FILE for sm_90a to a cubin,
# and the nvdisasm of Debian's nvidia-cuda-toolkit (11.8, package section non-free) disassembles it
# once the ELF header is rewritten in the pre-CUDA-13 form it reads (OS/ABI 0x33, ABI version 7,
# e_flags "sm_90"; the instruction encoding of sm_90a is sm_90's, and 11.8 already names HGMMA,
# SYNCS, UTMALDG). Dev tool only: nothing in the build or the tests needs it.
#
#   tools/dev/sass_local.sh --fetch                    # once, as root: ~/.cache/mxq-nvdisasm/
#   tools/dev/sass_local.sh FILE.cu OUT.sass [NVCC FLAGS...]
#
# OUT.sass has line info (nvcc -lineinfo, nvdisasm -g); OUT.ptxas has ptxas -v. For a summary of a
# kernel's loops (instruction mix per loop body), see tools/dev/sass_loops.py.
set -euo pipefail
cache=${MXQ_NVDISASM_DIR:-$HOME/.cache/mxq-nvdisasm}
if [ "${1:-}" = "--fetch" ]; then
  src=/etc/apt/sources.list.d/mxq-nonfree-tmp.sources
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$src"
  trap 'rm -f "$src"; apt-get update > /dev/null 2>&1 || true' EXIT
  apt-get update > /dev/null
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download nvidia-cuda-toolkit > /dev/null 2>&1)
  mkdir -p "$cache"
  dpkg -x "$tmp"/nvidia-cuda-toolkit_*.deb "$cache"
  rm -rf "$tmp"
  echo "sass_local: $("$cache/usr/bin/nvdisasm" --version | tail -1)"
  exit 0
fi
[ $# -ge 2 ] || { sed -n '2,12p' "$0"; exit 2; }
nvdisasm=${NVDISASM:-$cache/usr/bin/nvdisasm}
[ -x "$nvdisasm" ] || { echo "sass_local: no nvdisasm at $nvdisasm (run: $0 --fetch)" >&2; exit 2; }
file=$1 out=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
build_inc=$(ls -d "$root"/build*/include 2>/dev/null | head -1)
[ -n "$build_inc" ] || { echo "sass_local: needs a configured build directory (its include/ has mxq_version.h)" >&2; exit 2; }
export PATH=/usr/local/cuda/bin:$PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc -std=c++17 -arch=sm_90a -O3 --expt-relaxed-constexpr -lineinfo -Xptxas -v "$@" -I "$root/kernels" -I "$root/src" \
  -I "$root/include" -I "$build_inc" -cubin -o "$tmp/k.cubin" "$file" 2> "${out%.sass}.ptxas"
python3 - "$tmp/k.cubin" "$tmp/k90.cubin" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[7], d[8] = 0x33, 7                          # OS/ABI CUDA, ABI version 7
struct.pack_into('<I', d, 0x30, 0x5a055a)     # EF_CUDA_SM90 | VIRTUAL_SM(90) | TEXMODE_UNIFIED | 64BIT
open(sys.argv[2], 'wb').write(d)
PY
"$nvdisasm" -c -g "$tmp/k90.cubin" > "$out"
echo "sass_local: $out ($(grep -c '^//----.*\.text\.' "$out") kernels), ptxas -v in ${out%.sass}.ptxas"
