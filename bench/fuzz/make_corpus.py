#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds the seed corpora of the fuzz harnesses at run time (nothing of ../shared goes into git).

usage: make_corpus.py OUT_DIR [SHARED_DIR]   (SHARED_DIR defaults to ../shared of the repository)

OUT_DIR/<harness>/ gets:
  onnx            the ONNX conformance models (/usr/share/libonnx-testdata/data/*/*/model.onnx, the
                  cases tests/engine/tst_onnx_conformance runs) and the PP-OCR models under 1 MiB
  record          one file per line of SHARED/data/logs/ansor/*.json (at most 300 per log)
  autotvm_record  one file per line of SHARED/data/logs/autotvm/*.log (at most 300 per log)
  target          the distinct target strings of those logs, and hand-written ones
  tracker         TVM tracker frames (PUT, REQUEST, PING, UPDATE_INFO, SUMMARY, GET_PENDING, STOP)
  session         measurement-session messages (upload, run request, run reply, close)
plus the committed seeds of bench/fuzz/seeds/<harness>/ and the crash inputs of
tests/fuzz/regressions/<harness>/. Files are named by content hash, so reruns add nothing twice.
"""
import glob
import hashlib
import json
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAX_LINES = 300


def put(out, harness, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(out, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def lines(path):
    with open(path, "rb") as f:
        return [l for l in f.read().split(b"\n") if l.strip() and not l.startswith((b"#", b" "))]


def tracker_frame(obj):
    j = json.dumps(obj).encode()
    return struct.pack("<i", len(j)) + j


def session_msg(op, header, blob=b""):
    h = json.dumps(header).encode() if header is not None else b""
    return struct.pack("<Qii", 8 + len(h) + len(blob), op, len(h)) + h + blob


def main():
    out = sys.argv[1]
    shared = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "..", "shared")
    targets = {"llvm", "llvm -mcpu=znver4", "llvm -mtriple=aarch64-linux-gnu -mattr=+neon",
               "llvm -keys=cpu -mcpu=skylake-avx512 -num-cores=4 -opt-level=2",
               "llvm -device=arm_cpu -model=rk3399 -mtriple=aarch64-linux-gnu -mattr=+neon,-sve",
               "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=generic -mabi=lp64"}

    for m in sorted(glob.glob("/usr/share/libonnx-testdata/data/*/*/model.onnx")):
        with open(m, "rb") as f:
            put(out, "onnx", f.read())
    for m in sorted(glob.glob(os.path.join(shared, "data/models/**/*.onnx"), recursive=True)):
        if os.path.getsize(m) <= (1 << 20):
            with open(m, "rb") as f:
                put(out, "onnx", f.read())

    for log in sorted(glob.glob(os.path.join(shared, "data/logs/ansor/*.json"))):
        for l in lines(log)[:MAX_LINES]:
            put(out, "record", l + b"\n")
            try:
                targets.add(json.loads(l)["i"][0][1])
            except (ValueError, KeyError, IndexError, TypeError):
                pass
    for log in sorted(glob.glob(os.path.join(shared, "data/logs/autotvm/*.log"))):
        for l in lines(log)[:MAX_LINES]:
            put(out, "autotvm_record", l + b"\n")
            try:
                j = json.loads(l)
                targets.add(j["input"][0] if "input" in j else j["i"][0])
            except (ValueError, KeyError, IndexError, TypeError):
                pass
    for t in sorted(targets):
        put(out, "target", t)

    put(out, "tracker", tracker_frame([3, "rasp3b", [9090, "rasp3b:0.5"], None]) + tracker_frame([6]))
    put(out, "tracker", tracker_frame([5, {"key": "server:rasp3b", "addr": [None, 9090]}]) + tracker_frame([7]))
    put(out, "tracker", tracker_frame([4, "rasp3b", "user", 1]) + tracker_frame([1]))
    put(out, "tracker", tracker_frame([5, {"key": "client:x", "addr": ["1.2.3.4", "9091"]}])
        + tracker_frame([3, "k", ["9091", "k:0.25"], "10.0.0.1"]) + tracker_frame([4, "k", "", 0.5])
        + tracker_frame([6]) + tracker_frame([2, "tracker:0.1"]))
    put(out, "tracker", json.dumps({"queue_info": {"rasp3b": {"free": 1, "pending": 0}},
                                    "server_info": [{"key": "server:rasp3b", "addr": ["127.0.0.1", 9090]}]}))

    run = {"module": "kernel.so", "function": "default_function", "number": 2, "repeat": 3,
           "min_repeat_ms": 0, "enable_cpu_cache_flush": False,
           "args": [{"shape": [1, 64], "dtype": "float32"}, {"shape": [64], "dtype": "int8"}], "timeout": 10.0}
    put(out, "session", session_msg(2, {"name": "kernel.so"}, b"\x7fELF") + session_msg(3, run) + session_msg(4, {}))
    put(out, "session", session_msg(0, {"error_no": 0, "error_msg": "", "costs": [1e-3, 2e-3], "elapsed": 0.1}))
    put(out, "session", session_msg(1, {"error": "bad"}) + session_msg(0, None))

    for h in ("onnx", "record", "autotvm_record", "target", "tracker", "session"):
        for d in (os.path.join(HERE, "seeds", h), os.path.join(ROOT, "tests/fuzz/regressions", h)):
            for p in sorted(glob.glob(os.path.join(d, "*"))):
                if os.path.isfile(p):
                    with open(p, "rb") as f:
                        put(out, h, f.read())
    for h in sorted(os.listdir(out)):
        print(f"  corpus {h}: {len(os.listdir(os.path.join(out, h)))} seeds")


if __name__ == "__main__":
    main()
