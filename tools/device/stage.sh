# Sourced by the tools/device/*_check.sh scripts: `stage NAME TIMEOUT CMD...` runs CMD under a time
# limit with its output in "$out/NAME.log" and appends a one-line result (exit status, seconds, the
# log's last line) to the `summary` array, which the caller prints at the end. Needs `out` set.
summary=()
stage() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-12s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - t0))" "$(tail -n 1 "$out/$name.log")")")
  return $rc
}
