#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Seed 004 end to end through the CLI: a tracker, a VTA simulator registered as an intelfocl board
# (`rpc-server --device vta --key intelfocl`), and `autotvm vta-tune --workloads resnet-18-alu
# --tuner random --n-trial 8 --tracker ... --key intelfocl --log f`. Checks: every task tuned
# through the tracker, the pick_best log holds one best record per task in both forms (rhs tensor
# and the scalar-rhs duplicate ["TENSOR", [], "int32"]), costs are simulated seconds > 0, FILE.tmp
# is gone, and `log check` decodes every record.
# Usage: vta_rpc_tune.sh TUNEBENCH_CLI WORK_DIR
set -euo pipefail
cli=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

"$cli" tracker --host 127.0.0.1 --port 0 --silent >"$work/tracker.txt" 2>&1 &
pids+=($!)
port=
for _ in $(seq 1 100); do
    port=$(sed -n 's/.*bind to 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/tracker.txt")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: the tracker did not start"; cat "$work/tracker.txt"; exit 1; }
"$cli" rpc-server --device vta --key intelfocl --tracker 127.0.0.1:$port --port 0 >"$work/server.txt" 2>&1 &
pids+=($!)

log=$work/vta.alu.log
"$cli" autotvm vta-tune --target intelfocl --workloads resnet-18-alu --tuner random --n-trial 8 --n-parallel 4 \
    --tracker 127.0.0.1:$port --key intelfocl --log "$log" >"$work/tune.txt" 2>&1 || { cat "$work/tune.txt"; exit 1; }
cat "$work/tune.txt"
grep -q "measured on RPC key 'intelfocl' at 127.0.0.1:$port" "$work/tune.txt" || { echo "FAIL: not measured via RPC"; exit 1; }
grep -q "\[Task  8/ 8\]  Current/Best: .*Progress: (8/8)" "$work/tune.txt" || { echo "FAIL: no progress line of task 8"; exit 1; }
grep -Eq "^Tuning finished: 64 trials \([0-9]+ refused by the packed operator or the device, 0 wrong answers\), log $log \(pick_best: 16 of 128 records\)" \
    "$work/tune.txt" || { echo "FAIL: summary line"; exit 1; }
[ ! -e "$log.tmp" ] || { echo "FAIL: $log.tmp left behind"; exit 1; }
grep -q "VTA simulator intelfocl_1x16_i8w8a32_15_15_18_17" "$work/server.txt" || { echo "FAIL: server banner"; cat "$work/server.txt"; exit 1; }
python3 - "$log" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 16, f"FAIL: {len(recs)} records, want 16 (8 tasks x 2 forms)"
forms = {}
for r in recs:
    target, name, args, kwargs = r["input"]
    assert target == "ext_dev -keys=vta,cpu -device=vta -model=intelfocl_1x16_i8w8a32_15_15_18_17", target
    assert name in ("add.vta", "multiply.vta"), name
    assert r["result"][1] == 0 and all(0 < c < 1 for c in r["result"][0]), r["result"]
    assert len(r["result"][0]) == 3, "TVM RPCRunner repeat=3"
    lhs, rhs = args
    assert lhs[0] == "TENSOR" and lhs[2] == "int32" and len(lhs[1]) == 6, lhs
    scalar = rhs == ["TENSOR", [], "int32"]
    assert scalar or rhs == lhs, rhs
    forms.setdefault((name, json.dumps(lhs)), []).append((scalar, r["config"]["index"], r["result"][0]))
assert len(forms) == 8, forms.keys()
for k, v in forms.items():
    assert sorted(s for s, _, _ in v) == [False, True], (k, v)
    assert v[0][1:] == v[1][1:], ("the duplicate must carry the same config and costs", k, v)
print("16 records: 8 tasks, each in the tensor and the scalar-rhs form")
PY
"$cli" log check "$log" >"$work/check.txt" 2>&1 || { cat "$work/check.txt"; exit 1; }
cat "$work/check.txt"
grep -q "records: 16, checked: 16, agree: 16, disagree: 0" "$work/check.txt" || { echo "FAIL: log check"; exit 1; }
echo "PASS"
