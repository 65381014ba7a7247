#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Time to quality (issue 20): how many seconds of tuning until the result is good, the number users feel.

Kernel: resnet-18's conv2d 3x3 56x56x64 + bias + ReLU (task 2 of `tunebench-cli tasks --network resnet-18`),
tuned alone in pure Ansor mode (`tune --tasks 2 --no-default-seed`) at each thread count. The seconds are
wall-clock from the start of `tune` (task extraction, every compile and measurement included) to the
measure record whose best-so-far logged latency first reaches 90%, 95% and 98% of the FP32 FMA peak at that
thread count (`bench_kernels --peak-only`, measured in the same run), and oneDNN's speed on the same conv
(`bench_kernels --quick`, same run; where a shared core keeps every real kernel below the peak loop, as on the
Xeon VM of 2026-11-30 where oneDNN's brgconv reached 81%, that is the reachable mark). At the end the best state is timed
again beside the peak loop (`bench_kernels --log`), since the best of many noisy timings is biased low.
Goals of the issue: 95% of peak in <= 20 s and 98% in <= 60 s (TVM's AutoTVM template: 98% in 27 s on 1
thread; TVM's Ansor: 95% after ~9 minutes).

Networks (--networks mobilenet_v1,resnet18_v1): the ONNX model of bench_networks.py is tuned (gradient task
scheduler) for --network-trials trials; then the log's records up to each checkpoint (--checkpoints seconds
since the start of `tune`) are compiled and benchmarked (`compile --log PREFIX --bench`), alternating with
ONNX Runtime (bench_ort.js) at the same thread count, and the first checkpoint where ours <= ORT is printed.
Goal: mobilenet at ORT's latency in <= 3 minutes.

    /usr/bin/python3 bench/search/time_to_quality.py [--cli build/bin/tunebench-cli] [--threads 1,2]
        [--conv-trials 256] [--networks mobilenet_v1] [--network-trials 1500] [--ort-modules DIR]
        [--out tq-out] [--tune-args "--strategy round-robin"]

Every number comes with the load average seen during its run: the machine is shared (ANCHORS.md).

Measured 2026-11-29 14:25 UTC, quiet 2-core VM (load <= 1.8), --threads 2,1 --conv-trials 256 (early abandon on,
xgb): 2 threads: peak 234.0 GFLOP/s, 256 trials in 61.9 s, best 97.3%, 90% and 95% at 34 s (trials 66 and 93),
98% not reached; 1 thread: peak 116.9, 74.0 s, best 96.1%, 90% at 42 s (trial 75), 95% at 73 s (trial 199), 98%
not reached. Record timestamps are whole seconds.

Measured 2026-11-29 21:56-22:08 UTC (stop 30: in-batch abandon/screen reference, --screen 1.2 by default, seeds
measured first), quiet (load <= 2.2, the runs' own threads): conv pure Ansor, 256 trials: 2 threads 5.91 trials/s,
90% at 23.7 s (trial 90), 95% at 32.7 s (trial 170), best 97.0%; 1 thread 4.28/s, 90% at 31.1 s, 95% at 45.1 s,
best 95.7%. --seeded (128 trials): the default schedule's record first, 98% of the 1-thread peak at 0.5 s.
mobilenet_v1 (--networks, --network-trials 1800 --checkpoints 60,120,180): 2 threads 7.99 trials/s, ours/ORT 1.05
at 60 s, 0.99 at 120 s (ORT's latency reached after 120 s), 0.99 at 180 s; 1 thread 7.02 trials/s, 1.04 / 1.05 /
1.00 (11.800 vs 11.745 ms: not reached within 180 s).

Measured 2026-11-30 00:00-00:30 UTC (stop 31: block features + analytic warm-up; A = --cost-model xgb-tvm, TVM's
model, in the same session), load <= 1.9, conv pure Ansor 256 trials, seconds to 90/95/98% of peak:
  first binary (estimate without cache refills, no prior): 2 thr 11.6/11.6/11.6 (best 99.5%), 1 thr 13.9/13.9/13.9
    (99.3%); A: 2 thr 49.5/63.5/- (95.3%), 1 thr 30.7/44.7/- (95.6%)
  final binary: 2 thr 10.9/24.9/- (96.9%), 1 thr 13.8/13.8/43.8 (98.5%); A: 2 thr 52.0/52.0/- (95.2%), 1 thr
    32.5/-/- (92.2%)
  + accumulator run (final, 00:47-00:53): 2 thr 14.1/14.1/52.1 (98.3%), 1 thr 17.5/17.5/- (97.7%); A: 2 thr
    33.1/33.1/- (97.8%), 1 thr 33.5/-/- (91.6%)
  mobilenet_v1 2 thr, 1800 trials: both models within 0.94-1.33 of ORT at the checkpoints, but ORT itself read 6.4-9.7
    ms (5.65 ms in stop 30) and a re-benchmark of the same logs swung 6.0-11.5 ms: the host was contended (bench_kernels'
    2-thread peak read 117 GFLOP/s once, 227-230 otherwise), so no network conclusion from this session.

Measured 2026-11-30 03:00-03:15 UTC (stop 32: jemalloc, bounded feature cache, in-place linear forms), peak 230-234
GFLOP/s at 2 threads, load <= 1.9: conv pure Ansor 256 trials, 2 thr: session-start binary 5.34 trials/s, 12.7/12.7/24.7
s (99.2%); final 5.96 trials/s, 12.2/12.2/- s (97.5%). mobilenet_v1 2 thr, default mode: 8.41 trials/s (1536 in 183 s);
ours 7.21 / 6.66 / 6.41 ms at 60 / 120 / 180 s against ORT 6.35 / 9.63 / 7.41 ms (ORT moved 50%: contended host).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "networks"))
import bench_networks  # noqa: E402  (run_ort, run_ours, shape_arg, loadavg)

CONV_TASK = 2
CONV_KEY_HASH = "d37380659057397544e056461ea3bad3"


def peak_gflops(kernels_bin, threads):
    out = subprocess.run([kernels_bin, "--peak-only"], check=True, capture_output=True, text=True).stdout
    m = re.search(rf"peak GFLOPS threads={threads}: ([\d.]+)", out)
    if not m:
        raise RuntimeError(f"bench_kernels --peak-only printed no peak for {threads} threads:\n{out}")
    return float(m.group(1))


_ONEDNN = {}


def onednn_conv_gflops(kernels_bin, threads):
    """oneDNN's GFLOP/s on the conv at `threads` (bench_kernels --quick, run once per invocation), None
    when bench_kernels was built without oneDNN. The reference a tuned kernel can reach on a machine
    whose FMA peak loop overstates what real kernels get (a shared core: see the README)."""
    if not _ONEDNN:
        out = subprocess.run([kernels_bin, "--quick"], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.match(r"conv2d 3x3 56x56x64->64 pad 1\s+(\d+)\s+.*?([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+$", line)
            if m:
                _ONEDNN[int(m.group(1))] = float(m.group(4))
        _ONEDNN.setdefault(0, None)
    return _ONEDNN.get(threads)


def read_records(path):
    """(workload key, mean cost s or None, timestamp s) per line of a TVM v0.6 log."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            j = json.loads(line)
            costs, err, _, stamp = j["r"][:4]
            out.append((j["i"][0][0], sum(costs) / len(costs) if err == 0 and costs else None, float(stamp)))
    return out


def tune(args, threads, tune_args, log):
    if os.path.exists(log):
        os.remove(log)
    env = dict(os.environ, TB_NUM_THREADS=str(threads))
    start = time.time()
    loads = [bench_networks.loadavg()]
    subprocess.run([args.cli, "tune", "--log", log, "--tsv", ""] + tune_args, check=True, env=env,
                   stdout=subprocess.DEVNULL)
    loads.append(bench_networks.loadavg())
    return start, time.time() - start, max(loads)


def conv_row(args, threads):
    flop = next(t["flop"] for t in json.loads(subprocess.run(
        [args.cli, "tasks", "--network", "resnet-18", "--json"], check=True, capture_output=True, text=True).stdout)
        if CONV_KEY_HASH in t["workload_key"])
    peak = peak_gflops(args.kernels_bin, threads)
    log = os.path.join(args.out, f"conv_t{threads}.json")
    mode = [] if args.seeded else ["--no-default-seed"]
    start, wall, load = tune(args, threads, ["--network", "resnet-18", "--tasks", str(CONV_TASK)] + mode +
                             ["--trials", str(args.conv_trials)] + args.tune_args, log)
    dnnl = onednn_conv_gflops(args.kernels_bin, threads)
    reached = {0.90: None, 0.95: None, 0.98: None}
    reached_dnnl = None
    best = None
    trials = 0
    for key, cost, stamp in read_records(log):
        trials += 1
        if cost is None or CONV_KEY_HASH not in key:
            continue
        best = cost if best is None else min(best, cost)
        for q in reached:
            if reached[q] is None and flop / best / 1e9 >= q * peak:
                reached[q] = (stamp - start, trials)
        if dnnl and reached_dnnl is None and flop / best / 1e9 >= dnnl:
            reached_dnnl = (stamp - start, trials)
    best_gf = flop / best / 1e9 if best else 0.0
    cells = [f"{reached[q][0]:6.1f} s @{reached[q][1]:4d}" if reached[q] else "   not reached" for q in reached]
    print(f"conv{' (seeded)' if args.seeded else ''} {threads} thr: peak {peak:6.1f} GFLOP/s, {trials} trials in {wall:5.1f} s ({trials / wall:4.2f}/s), "
          f"best logged {best_gf:6.1f} GFLOP/s ({100 * best_gf / peak:5.1f}%), 90/95/98%: {' | '.join(cells)}, "
          + (f"oneDNN {dnnl:.1f} GFLOP/s ({100 * dnnl / peak:.1f}%): "
             + (f"{reached_dnnl[0]:.1f} s @{reached_dnnl[1]}" if reached_dnnl else "not reached") + ", " if dnnl else "")
          + f"load <= {load:.1f}", flush=True)
    return threads, peak, trials, wall, best_gf, reached, load


def network_rows(args, threads):
    models = {"mobilenet_v1": [1, 3, 224, 224], "resnet18_v1": [1, 3, 224, 224]}
    nb = argparse.Namespace(cli=args.cli, ort_modules=args.ort_modules, repeat=5, min_repeat_ms=300)
    rows = []
    for name in args.networks:
        path = os.path.join(args.models, name + ".onnx")
        shape = models[name]
        log = os.path.join(args.out, f"{name}_t{threads}.json")
        flags = ["--onnx", path, "--layout", "NHWC", "--shape", bench_networks.shape_arg(path, shape)]
        start, wall, load = tune(args, threads, flags + ["--trials", str(args.network_trials)] + args.tune_args, log)
        lines = [line for line in open(log) if line.strip() and not line.startswith("#")]
        stamps = [float(json.loads(line)["r"][3]) for line in lines]
        print(f"{name} {threads} thr: {len(lines)} trials in {wall:.0f} s ({len(lines) / wall:.2f}/s), load <= {load:.1f}",
              flush=True)
        hit = None
        for cp in args.checkpoints:
            if cp > wall + 1:
                break
            prefix = os.path.join(args.out, f"{name}_t{threads}_{cp}s.json")
            n = sum(1 for s in stamps if s - start <= cp)
            with open(prefix, "w") as f:
                f.writelines(lines[:n])
            lo = bench_networks.loadavg()
            ort = bench_networks.run_ort(nb, path, threads, shape)
            ours = bench_networks.run_ours(nb, path, threads, shape, "NHWC", prefix)[0]
            lo = max(lo, bench_networks.loadavg())
            print(f"  after {cp:5d} s ({n:5d} trials): ours {ours:8.3f} ms  ORT {ort:8.3f} ms  ours/ORT {ours / ort:5.2f}"
                  f"  load <= {lo:.1f}", flush=True)
            rows.append((name, threads, cp, n, ours, ort))
            if hit is None and ours <= ort:
                hit = cp
        print(f"{name} {threads} thr: ORT's latency reached after " + (f"{hit} s" if hit else "no checkpoint"), flush=True)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "bin", "tunebench-cli"))
    p.add_argument("--kernels-bin", default=os.path.join(ROOT, "build", "bin", "bench_kernels"))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--conv-trials", type=int, default=256, help="0 skips the conv")
    p.add_argument("--networks", default="", help="comma list: mobilenet_v1,resnet18_v1 (needs --ort-modules)")
    p.add_argument("--network-trials", type=int, default=1500)
    p.add_argument("--checkpoints", default="60,120,180,300,450,600")
    p.add_argument("--ort-modules", default="", help="node_modules folder holding onnxruntime-node")
    p.add_argument("--models", default=os.path.join(ROOT, "build", "bench-models"))
    p.add_argument("--out", default="tq-out")
    p.add_argument("--seeded", action="store_true",
                   help="tune the conv in tune's default mode (its default schedule measured first) instead of pure Ansor")
    p.add_argument("--tune-args", default="", help="extra arguments for every tune, e.g. '--per-round 32'")
    args = p.parse_args()
    args.networks = [n for n in args.networks.split(",") if n]
    args.checkpoints = [int(c) for c in args.checkpoints.split(",")]
    args.tune_args = args.tune_args.split()
    os.makedirs(args.out, exist_ok=True)
    if args.networks:
        if not args.ort_modules:
            p.error("--networks needs --ort-modules")
        if not all(os.path.exists(os.path.join(args.models, n + ".onnx")) for n in args.networks):
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "networks", "make_models.py"), args.models],
                           check=True)
    for threads in [int(t) for t in args.threads.split(",")]:
        if args.conv_trials > 0:
            conv_row(args, threads)
        if args.networks:
            network_rows(args, threads)


if __name__ == "__main__":
    main()
