#!/usr/bin/env bash
# The README's C example is examples/readme_quickstart.c, which the test suite compiles and runs.
# This keeps the two from drifting: the fenced block after the marker line must equal the file.
# Usage: check_readme.sh README.md examples/readme_quickstart.c
set -euo pipefail
readme=$1 file=$2
marker='<!-- quickstart: examples/readme_quickstart.c'
block=$(mktemp)
trap 'rm -f "$block"' EXIT
awk -v marker="$marker" '
  index($0, marker) == 1 { armed = 1; next }
  armed && !inside && /^```c[[:space:]]*$/ { inside = 1; found = 1; next }
  inside && /^```[[:space:]]*$/ { exit }
  inside { print }
  END { if (!found) exit 3 }
' "$readme" > "$block" || { echo "FAIL: no \`\`\`c block after a line starting with '$marker' in $readme"; exit 1; }
if ! diff -u --label "$readme (code block)" --label "$file" "$block" "$file"; then
  echo "FAIL: the README's quickstart differs from $file (edit both, or paste the file into the README)"
  exit 1
fi
echo "OK: README quickstart block == $file ($(wc -l < "$file") lines)"
