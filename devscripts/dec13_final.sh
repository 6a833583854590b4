#!/bin/bash
# dec13's second device call: the final tree (pair form the default) against main's kernel, same call.
#   pre.tar.gz      the final tree's libmxq.so*, mxq_bench_gemm, mxq_gpu_tests (built locally into /tmp/bdec13)
#   pre_call1.tar.gz call 1's binaries (commit 672b93b: MXQ_DECODE_VAR unset = main's kernel, =p2 the variant)
# Run from the staging copy's root: bash devscripts/dec13_final.sh
set -u
S=$PWD; B=/tmp/bdec13; B1=/tmp/bdec13old; O=${OUT:-/tmp/out}; mkdir -p $O
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
LIMIT=${LIMIT:-280}
echo "commit $(cat COMMIT 2>/dev/null) start $(date -u +%H:%M:%S)" | tee $O/summary.txt
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader >> $O/summary.txt 2>&1
mkdir -p $B $B1 && tar -xzf pre.tar.gz -C $B && tar -xzf pre_call1.tar.gz -C $B1
BG=$B/tools/mxq_bench_gemm; TB=$B/tests/mxq_gpu_tests; BG1=$B1/tools/mxq_bench_gemm
ev() { local n=$1 bin=$2 lib=$3; shift 3; env LD_LIBRARY_PATH=$lib "$@" timeout 25 $bin --mxq-only --only decode 2>&1 | grep -E "^decode" | awk -v r=$R -v n=$n '{print "EVEN R" r, n, $2, $7}' >> $O/bench.txt; }
un() { local n=$1 bin=$2 lib=$3; shift 3; env LD_LIBRARY_PATH=$lib "$@" timeout 25 $bin --mxq-only 1024 2048 7168 64 20 2>&1 | grep -E " mxq " | grep -v " on " | awk -v r=$R -v n=$n '{print "UNEV R" r, n, $2, $7}' >> $O/bench.txt; }
R=0
MXQ_LOG_LEVEL=3 LD_LIBRARY_PATH=$B timeout 25 $BG --mxq-only --only decode > $O/bench_raw_final.txt 2>&1
LD_LIBRARY_PATH=$B1 timeout 25 $BG1 --mxq-only --only decode > /dev/null 2>&1
echo "warm-up done at $(el)s" | tee -a $O/summary.txt
for R in 1 2 3; do
  [ $(el) -lt $(( LIMIT - 90 )) ] || { echo "round $R skipped (time)" | tee -a $O/summary.txt; continue; }
  ev main $BG1 $B1 MXQ_DECODE_VAR=; ev final $BG $B; ev p2call1 $BG1 $B1 MXQ_DECODE_VAR=p2
  un main $BG1 $B1 MXQ_DECODE_VAR=; un final $BG $B
  if [ $R = 1 ]; then
    timeout 40 python3 tools/bench_gemm_torch.py --kinds decode --iters 20 2>&1 | grep -E "^decode|_grouped_mm" | sed "s/^/TORCH R$R /" >> $O/bench.txt
  fi
  echo "round $R done at $(el)s" | tee -a $O/summary.txt
done
export LD_LIBRARY_PATH=$B
left=$(( LIMIT - $(el) )); to=40; [ $to -gt $left ] && to=$left
timeout $to $TB "[decode]" > $O/t_decode.txt 2>&1
echo "tests [decode] rc=$? at $(el)s: $(tail -3 $O/t_decode.txt | grep -E 'passed|failed' | tr '\n' ' ')" | tee -a $O/summary.txt
left=$(( LIMIT - $(el) )); to=60; [ $to -gt $left ] && to=$left
timeout $to compute-sanitizer --tool memcheck --error-exitcode 9 $TB "[decode]" > $O/memcheck.txt 2>&1
echo "memcheck [decode] rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|passed|failed' $O/memcheck.txt | tail -2 | tr '\n' ' ')" | tee -a $O/summary.txt
left=$(( LIMIT - $(el) )); to=60; [ $to -gt $left ] && to=$left
MXQ_GEMM_SM90_DECODE=1 timeout $to $TB "[gemm]" > $O/t_gemm_forced.txt 2>&1
echo "tests [gemm] MXQ_GEMM_SM90_DECODE=1 rc=$? at $(el)s: $(tail -3 $O/t_gemm_forced.txt | grep -E 'passed|failed' | tr '\n' ' ')" | tee -a $O/summary.txt
left=$(( LIMIT - $(el) ))
if [ $left -gt 15 ]; then
  MXQ_GEMM_SM90_DECODE_CTAS=1 timeout $left $TB "[decode]" > $O/t_decode_x1.txt 2>&1
  echo "tests [decode] one CTA per SM (plain form) rc=$? at $(el)s: $(tail -3 $O/t_decode_x1.txt | grep -E 'passed|failed' | tr '\n' ' ')" | tee -a $O/summary.txt
fi
grep -E "FAILED|failed|with expansion" $O/t_decode.txt $O/t_gemm_forced.txt 2>/dev/null | head -8
echo "---- bench (ms)"; cat $O/bench.txt
echo "kernels final: $(grep -oE "mxq_gemm_sm90_decode_[a-z0-9_]+" $O/bench_raw_final.txt | sort | uniq -c | tr '\n' ' ')"
grep -E "of copy" $O/bench_raw_final.txt | head -2
cat $O/summary.txt
