#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The promise of the measure-record log, end to end through the CLI: a tuning run killed with
# SIGKILL (no chance to clean up) loses no record, and `tune --resume` continues the counts without
# measuring any state twice.
#   1. tune mlp (4 tasks) towards 48 trials; SIGKILL it once the log holds >= 12 records
#   2. every line of the log is a complete record (flushed per record)
#   3. tune --resume to the same budget: it reports the records it found, finishes at >= 48
#      trials, the log keeps the killed run's lines byte for byte as its prefix, and no
#      (workload key, steps) pair occurs twice
# Usage: tune_kill_resume.sh TUNEBENCH_CLI WORK_DIR
set -euo pipefail
cli=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
log=$work/tune.json
common=(tune --network mlp --trials 48 --per-round 8 --log "$log" --tsv "$work/total_latency.tsv" --min-repeat-ms 1)

"$cli" "${common[@]}" >"$work/first.txt" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
    n=$( [ -f "$log" ] && wc -l <"$log" || echo 0)
    [ "$n" -ge 12 ] && break
    kill -0 "$pid" 2>/dev/null || { echo "FAIL: the first run ended before it was killed"; cat "$work/first.txt"; exit 1; }
    sleep 0.2
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
killed=$(wc -l <"$log")
cp "$log" "$work/killed.json"
echo "killed after $killed records"
[ "$killed" -ge 12 ] || { echo "FAIL: only $killed records before the kill"; exit 1; }
[ "$killed" -lt 48 ] || { echo "FAIL: the run finished before it was killed"; exit 1; }

"$cli" "${common[@]}" --resume >"$work/resume.txt" 2>&1 || { cat "$work/resume.txt"; exit 1; }
grep "^Resumed from" "$work/resume.txt"
grep -q "^Resumed from .*: $killed records, $killed of this network, $killed replayed, 0 unreadable lines" "$work/resume.txt" ||
    { echo "FAIL: resume did not find the $killed records"; exit 1; }
final=$(wc -l <"$log")
finished=$(sed -n 's/^Tuning finished: \([0-9]*\) trials.*/\1/p' "$work/resume.txt")
echo "resumed to $final records (tuner counted $finished trials)"
[ "$final" -ge 48 ] || { echo "FAIL: $final < 48 records after resume"; exit 1; }
[ "$finished" = "$final" ] || { echo "FAIL: the tuner counted $finished trials, the log has $final"; exit 1; }
cmp -n "$(stat -c %s "$work/killed.json")" "$work/killed.json" "$log" || { echo "FAIL: the killed run's records changed"; exit 1; }
python3 - "$log" <<'PY'
import json, sys
seen = set()
for n, line in enumerate(open(sys.argv[1]), 1):
    rec = json.loads(line)  # every line parses: nothing torn
    key = (rec["i"][0][0], json.dumps(rec["i"][1][1]))
    if key in seen:
        sys.exit(f"FAIL: line {n} measures a state already in the log")
    seen.add(key)
print(f"{len(seen)} distinct (workload, state) records")
PY
echo "PASS"
