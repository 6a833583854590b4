#!/usr/bin/env bash
# TEMPORARY (attnf8): device call 2: variants timed interleaved, cuDNN same run, tests and sanitizers.
cd "$(dirname "$0")/../.." || exit 1
S=$OUT/summary.txt
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a $S; }
left() { echo $(( 285 - ($(date +%s) - t0) )); }
mkdir -p bin && python3 -c "import tarfile; tarfile.open('bin8.tar.xz').extractall('bin')" 2>&1 | tail -2
BENCH=$PWD/bin/mxq_bench_attention; TESTS=$PWD/bin/mxq_gpu_tests
export LD_LIBRARY_PATH=$PWD/bin:$LD_LIBRARY_PATH
if ! $TESTS --list-tags > /dev/null 2>&1 || ! [ -x $BENCH ]; then
  el "carried binaries do not run: building"; $TESTS --list-tags 2>&1 | head -3 >> $S
  B=/tmp/battnf8
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/../.deps \
    -DMXQ_SPDLOG_ROOT=$PWD/../.deps -DMXQ_FMT_ROOT=$PWD/../.deps > $OUT/build.log 2>&1
  timeout 170 ninja -C $B mxq_gpu_tests mxq_bench_attention >> $OUT/build.log 2>&1 || { el BUILD FAILED; tail -30 $OUT/build.log; exit 1; }
  BENCH=$(find $B -name mxq_bench_attention -type f | head -1); TESTS=$(find $B -name mxq_gpu_tests -type f | head -1)
fi
el ready
for r in 1 2; do for X in 0 9 1 2; do
  echo "== round $r X=$X" >> $OUT/bench.log
  MXQ_ATTN_FWD_X=$X timeout 30 $BENCH --fwd-only 20 >> $OUT/bench.log 2>&1 || echo "X=$X rc=$?" >> $OUT/bench.log
done; done
el bench done
grep -E "^== |TFLOP|rc=" $OUT/bench.log >> $S
PYTHONUNBUFFERED=1 timeout 60 python3 tools/bench_attention_torch.py --iters 20 > $OUT/torch.log 2>&1
grep -E "cudnn|flash" $OUT/torch.log | cut -c1-80 >> $S
el torch done
timeout 60 $TESTS "[attention]" > $OUT/tests.log 2>&1; echo "tests default [attention] rc=$?" >> $S; tail -2 $OUT/tests.log >> $S
for X in 1 2; do
  MXQ_ATTN_FWD_X=$X timeout 30 $TESTS "[attention]~[bwd]" > /tmp/tests_$X.log 2>&1; echo "tests X=$X rc=$?" >> $S; tail -2 /tmp/tests_$X.log >> $S
done
el tests done
timeout $(( $(left) / 2 )) compute-sanitizer --tool memcheck --error-exitcode 9 $TESTS "[attention]~[bwd]" > /tmp/memcheck.log 2>&1
echo "memcheck rc=$?" >> $S; tail -4 /tmp/memcheck.log >> $S
el memcheck done
timeout $(left) compute-sanitizer --tool racecheck --error-exitcode 9 $TESTS "[attention]~[bwd]" > /tmp/racecheck.log 2>&1
echo "racecheck rc=$?" >> $S; tail -4 /tmp/racecheck.log >> $S
el racecheck done
cat /tmp/memcheck.log /tmp/racecheck.log | tail -c 200000 > $OUT/sanitizers.log
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ $(left) -gt 25 ]; then
  timeout $(( $(left) - 5 )) $NCU --set full --import-source no -k regex:attn_fwd --launch-skip 1 --launch-count 1 \
    -o /tmp/ncu_l $BENCH --fwd-only 2 > /tmp/ncu_l.log 2>&1; echo "ncu rc=$?" >> $S
  $NCU -i /tmp/ncu_l.ncu-rep --page details --csv > $OUT/ncu_details_lean.csv 2>&1
  $NCU -i /tmp/ncu_l.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $OUT/ncu_src_lean.csv.gz
  el ncu done
fi
cat $S
