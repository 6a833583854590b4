#!/usr/bin/env bash
# TEMPORARY (attnf8): device call 1: build, variant correctness, interleaved timing, ncu.
cd "$(dirname "$0")/../.." || exit 1
B=/tmp/battnf8
S=$OUT/summary.txt
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a $S; }
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/../.deps \
  -DMXQ_SPDLOG_ROOT=$PWD/../.deps -DMXQ_FMT_ROOT=$PWD/../.deps > $OUT/build.log 2>&1
timeout 170 ninja -C $B mxq mxq_gpu_tests mxq_bench_attention >> $OUT/build.log 2>&1 || { el BUILD FAILED; tail -40 $OUT/build.log; exit 1; }
el built
BENCH=$(find $B -name mxq_bench_attention -type f | head -1); TESTS=$(find $B -name mxq_gpu_tests -type f | head -1)
for r in 1 2; do for X in 0 1 2; do
  echo "== round $r X=$X" >> $OUT/bench.log
  MXQ_ATTN_FWD_X=$X timeout 30 $BENCH --fwd-only 20 >> $OUT/bench.log 2>&1 || echo "X=$X rc=$?" >> $OUT/bench.log
done; done
el bench done
grep -E "^== |TFLOP|rc=" $OUT/bench.log | grep -v bwd | head -60 >> $S
for X in 1 2; do
  MXQ_ATTN_FWD_X=$X timeout 45 $TESTS "[attention]~[bwd]" > $OUT/tests_$X.log 2>&1; echo "tests X=$X rc=$?" >> $S
  tail -3 $OUT/tests_$X.log >> $S
done
el tests done
PYTHONUNBUFFERED=1 timeout 60 python3 tools/bench_attention_torch.py --iters 20 > $OUT/torch.log 2>&1
grep cudnn $OUT/torch.log >> $S
el torch done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for X in 0 2; do
  MXQ_ATTN_FWD_X=$X timeout 60 $NCU --set full --import-source no -k regex:attn_fwd --launch-skip 1 --launch-count 1 \
    -o /tmp/ncu_$X $BENCH --fwd-only 2 > /tmp/ncu_$X.log 2>&1; echo "ncu X=$X rc=$?" >> $S
  $NCU -i /tmp/ncu_$X.ncu-rep --page details --csv > $OUT/ncu_details_$X.csv 2>&1
  $NCU -i /tmp/ncu_$X.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $OUT/ncu_src_$X.csv.gz
  el ncu $X done
done
tail -5 /tmp/ncu_0.log >> $S
cat $S
