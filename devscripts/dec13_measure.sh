#!/bin/bash
# dec13's device call: the decode kernel's pair form (MXQ_DECODE_VAR=p2: a ring slot of two K stages, B as
# one 3D TMA box of 128 rows x 256 bytes) and the load-only forms (lo: the plain 128-byte pattern; p2lo:
# the 256-byte one) against main's kernel (base), in ONE call of at most LIMIT s. Binaries prebuilt on the
# local machine (pre.tar.gz: libmxq.so*, tools/mxq_bench_gemm, tests/mxq_gpu_tests of /tmp/bdec13, the
# attention kernels left out). Run from the staging copy's root: bash devscripts/dec13_measure.sh
set -u
S=$PWD; B=/tmp/bdec13; O=${OUT:-/tmp/out}; mkdir -p $O
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
LIMIT=${LIMIT:-280}
echo "commit $(cat COMMIT 2>/dev/null) start $(date -u +%H:%M:%S)" | tee $O/summary.txt
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader >> $O/summary.txt 2>&1
mkdir -p $B && tar -xzf pre.tar.gz -C $B
BG=$B/tools/mxq_bench_gemm; TB=$B/tests/mxq_gpu_tests
[ -x $BG ] || { echo "no bench binary"; exit 1; }
# name env...: one even-groups run (E64 x 16, E128 x 8)
ev() { local n=$1; shift; env "$@" timeout 25 $BG --mxq-only --only decode 2>&1 | grep -E "^decode" | awk -v r=$R -v n=$n '{print "EVEN R" r, n, $2, $7}' >> $O/bench.txt; }
un() { local n=$1; shift; env "$@" timeout 25 $BG --mxq-only 1024 2048 7168 64 20 2>&1 | grep -E " mxq " | awk -v r=$R -v n=$n '{print "UNEV R" r, n, $2, $7}' >> $O/bench.txt; }
R=0; timeout 25 $BG --mxq-only --only decode > $O/bench_raw_base.txt 2>&1
MXQ_LOG_LEVEL=3 MXQ_DECODE_VAR=p2 timeout 25 $BG --mxq-only --only decode > $O/bench_raw_p2.txt 2>&1
echo "warm-up done at $(el)s" | tee -a $O/summary.txt
for R in 1 2; do
  [ $(el) -lt $(( LIMIT - 60 )) ] || { echo "round $R skipped (time)" | tee -a $O/summary.txt; continue; }
  ev base MXQ_DECODE_VAR=; ev lo MXQ_DECODE_VAR=lo; ev p2lo MXQ_DECODE_VAR=p2lo; ev p2 MXQ_DECODE_VAR=p2
  ev p2x1 MXQ_DECODE_VAR=p2 MXQ_GEMM_SM90_DECODE_CTAS=1; ev p2lox1 MXQ_DECODE_VAR=p2lo MXQ_GEMM_SM90_DECODE_CTAS=1
  ev p2p128 MXQ_DECODE_VAR=p2 MXQ_DECODE_PROMO=128
  un base MXQ_DECODE_VAR=; un p2 MXQ_DECODE_VAR=p2; un p2x1 MXQ_DECODE_VAR=p2 MXQ_GEMM_SM90_DECODE_CTAS=1
  if [ $R = 1 ]; then
    timeout 40 python3 tools/bench_gemm_torch.py --kinds decode --iters 20 2>&1 | grep -E "^decode|_grouped_mm" | sed "s/^/TORCH R$R /" >> $O/bench.txt
  fi
  echo "round $R done at $(el)s" | tee -a $O/summary.txt
done
left=$(( LIMIT - $(el) ))
if [ $left -gt 15 ]; then
  to=60; [ $to -gt $left ] && to=$left
  MXQ_DECODE_VAR=p2 timeout $to $TB "[decode]" > $O/t_decode_p2.txt 2>&1
  echo "tests [decode] p2 rc=$? at $(el)s: $(tail -3 $O/t_decode_p2.txt | grep -E 'passed|failed' | tr '\n' ' ')" | tee -a $O/summary.txt
fi
left=$(( LIMIT - $(el) ))
if [ $left -gt 20 ]; then
  to=90; [ $to -gt $left ] && to=$left
  MXQ_DECODE_VAR=p2 timeout $to compute-sanitizer --tool memcheck --error-exitcode 9 $TB "[decode]" > $O/memcheck_p2.txt 2>&1
  echo "memcheck [decode] p2 rc=$? at $(el)s: $(grep -E 'ERROR SUMMARY|passed|failed' $O/memcheck_p2.txt | tail -2 | tr '\n' ' ')" | tee -a $O/summary.txt
fi
left=$(( LIMIT - $(el) ))
if [ $left -gt 20 ]; then
  MXQ_GEMM_SM90_DECODE=1 MXQ_DECODE_VAR=p2 timeout $left $TB "[gemm]" > $O/t_gemm_forced_p2.txt 2>&1
  echo "tests [gemm] forced p2 rc=$? at $(el)s: $(tail -3 $O/t_gemm_forced_p2.txt | grep -E 'passed|failed' | tr '\n' ' ')" | tee -a $O/summary.txt
fi
grep -E "FAILED|failed|with expansion" $O/t_decode_p2.txt 2>/dev/null | head -8
echo "---- bench (ms)"; cat $O/bench.txt
echo "kernels p2: $(grep -oE "mxq_gemm_sm90_decode_[a-z0-9_]+" $O/bench_raw_p2.txt | sort | uniq -c | tr '\n' ' ')"
grep -E "of copy" $O/bench_raw_base.txt | head -2
cat $O/summary.txt
