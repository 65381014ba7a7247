#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer harnesses (clang, ASan + UBSan, build-fuzz/ configured with TB_FUZZ=ON) and
# runs each for SECONDS of wall time, then prints per harness: executions, coverage (cov/ft), crashes.
#
#   bench/fuzz/run.sh [-j JOBS] [-H h1,h2,...] [-b BUILD_DIR] [-c] SECONDS
#
#   -j JOBS   parallel fuzzing processes per harness (libFuzzer -fork=JOBS, which also keeps going
#             after a crash, a timeout or an OOM and collects them all); default 1: one process,
#             which stops at the first crash. CPU time per harness = JOBS x SECONDS.
#   -H LIST   harnesses to run, comma separated (default: all, in order):
#             onnx record autotvm_record tracker session target
#   -b DIR    build directory (default build-fuzz)
#   -c        SECONDS is CPU time, not wall time: each harness runs until its fuzzing process has
#             used SECONDS of CPU (user + system, read from /proc every 5 s), then is interrupted
#             (libFuzzer prints its final stats). On a shared machine nice 19 stretches wall time;
#             this is how "30 CPU-minutes per harness" is measured. One process (-j 1) only.
#
# Corpora live in BUILD_DIR/corpus/<h>/ (outside git; seeded by make_corpus.py from ../shared, the
# ONNX conformance models and bench/fuzz/seeds/; each run adds what it finds), crashes in
# BUILD_DIR/crashes/<h>/ (the summary counts this run's), the fuzzer's log in
# BUILD_DIR/logs/<h>.log. Exit status 1 if any harness crashed in this run. Reproduce a crash:
# BUILD_DIR/fuzz/fuzz_<h> CRASH_FILE. A fixed crash input goes to tests/fuzz/regressions/<h>/
# (ctest fuzz_regress_<h> replays it in the normal build).
# Everything runs under `nice -n 19`: the fuzzers are CPU hogs.
set -euo pipefail
cd "$(dirname "$0")/../.."
ALL=(onnx record autotvm_record tracker session target)
JOBS=1
BUILD=build-fuzz
HARNESSES=("${ALL[@]}")
CPU_MODE=0
while getopts "j:H:b:c" opt; do
  case $opt in
    j) JOBS=$OPTARG ;;
    H) IFS=, read -r -a HARNESSES <<< "$OPTARG" ;;
    b) BUILD=$OPTARG ;;
    c) CPU_MODE=1 ;;
    *) sed -n '2,25p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  sed -n '2,25p' "$0"
  exit 2
fi
SECONDS_PER=$1
if [ "$CPU_MODE" -eq 1 ] && [ "$JOBS" -ne 1 ]; then
  echo "run.sh: -c measures one fuzzing process: use it with -j 1" >&2
  exit 2
fi
TICKS=$(getconf CLK_TCK)
# CPU seconds (user + system) of process $1 so far, or empty when it has ended.
cpu_seconds() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  # Fields after the ")" that ends the command name: utime is the 12th, stime the 13th.
  awk -v t="$TICKS" '{print int(($12 + $13) / t)}' <<< "${stat##*) }"
}

dict_of() { case $1 in onnx) echo onnx.dict ;; target) echo target.dict ;; *) echo json.dict ;; esac; }
# Inputs longer than this are not generated (seeds longer are truncated): ONNX models up to 1 MiB
# (the PP-OCR cls model), log text / frames / target strings much shorter.
max_len_of() { case $1 in onnx) echo 1048576 ;; target) echo 512 ;; *) echo 65536 ;; esac; }

if [ ! -f "$BUILD/build.ninja" ]; then
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" -DTB_FUZZ=ON -DTB_BUILD_GUI=OFF -DTB_BUILD_TESTS=OFF \
    -DTB_BUILD_BENCH=OFF
fi
targets=()
for h in "${HARNESSES[@]}"; do targets+=("fuzz_$h"); done
nice -n 19 cmake --build "$BUILD" -j "$(nproc)" --target "${targets[@]}"

python3 bench/fuzz/make_corpus.py "$BUILD/corpus"
mkdir -p "$BUILD/logs"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:detect_stack_use_after_return=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
summary=()
crashed=0
for h in "${HARNESSES[@]}"; do
  corpus="$BUILD/corpus/$h"
  crashes="$BUILD/crashes/$h"
  log="$BUILD/logs/$h.log"
  mkdir -p "$corpus" "$crashes"
  args=("$corpus" -dict="bench/fuzz/dict/$(dict_of "$h")" -max_len="$(max_len_of "$h")"
        -max_total_time="$([ "$CPU_MODE" -eq 1 ] && echo 0 || echo "$SECONDS_PER")" -timeout=30 -rss_limit_mb=4096 -malloc_limit_mb=2048
        -artifact_prefix="$crashes/" -print_final_stats=1)
  if [ "$JOBS" -gt 1 ]; then
    args+=(-fork="$JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  fi
  echo "== fuzz_$h: $SECONDS_PER s x $JOBS job(s), log $log"
  touch "$BUILD/logs/$h.start"  # crash inputs newer than this are this run's
  set +e
  if [ "$CPU_MODE" -eq 1 ]; then
    nice -n 19 "$BUILD/fuzz/fuzz_$h" "${args[@]}" > "$log" 2>&1 &
    pid=$!
    used=0
    while kill -0 "$pid" 2>/dev/null; do
      c=$(cpu_seconds "$pid")
      [ -n "$c" ] && used=$c
      if [ "$used" -ge "$SECONDS_PER" ]; then kill -INT "$pid"; break; fi
      sleep 5
    done
    wait "$pid"
    rc=$?
    # An interrupt we sent is the planned end, not a failure (libFuzzer exits 72 or 130 on SIGINT).
    if [ "$used" -ge "$SECONDS_PER" ] && { [ "$rc" -eq 72 ] || [ "$rc" -eq 130 ] || [ "$rc" -eq 0 ]; }; then rc=0; fi
    echo "cpu seconds: $used" >> "$log"
  else
    nice -n 19 "$BUILD/fuzz/fuzz_$h" "${args[@]}" > "$log" 2>&1
    rc=$?
  fi
  set -e
  # Executions: the final stats (one process) or the last status line's "#N" (fork mode).
  execs=$(grep -ao 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | awk '{print $2}') || true
  [ -n "$execs" ] || execs=$(grep -aoE '^#[0-9]+' "$log" | tail -1 | tr -d '#') || true
  cov=$(grep -aoE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1) || true
  found=$(find "$crashes" -type f -newer "$BUILD/logs/$h.start" \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  n=$(printf '%s' "$found" | grep -c . || true)
  cpu=""
  [ "$CPU_MODE" -eq 1 ] && cpu=", cpu ${used} s"
  line="fuzz_$h: executions ${execs:-?}${cpu}, ${cov:-cov: ? ft: ?}, corpus $(ls "$corpus" | wc -l), crash inputs $n (exit $rc)"
  echo "   $line"
  summary+=("$line")
  if [ "$n" -gt 0 ] || { [ "$rc" -ne 0 ] && [ "$JOBS" -eq 1 ]; }; then
    crashed=1
    printf '%s\n' "$found" | grep . | sed 's/^/   crash: /' || true
    grep -a -m3 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|terminate called|what\(\)' "$log" | sed 's/^/   /' || true
  fi
done
echo "== summary ($SECONDS_PER $([ "$CPU_MODE" -eq 1 ] && echo "CPU " || echo "")s x $JOBS job(s) per harness)"
printf '%s\n' "${summary[@]}"
exit $crashed
