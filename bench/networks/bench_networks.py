#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Network benchmark (not a test): TuneBench's compiled networks against ONNX Runtime on the same
ONNX files, at 1 and 2 threads, untuned (default schedules) and with a tuning log.

For each model and thread count the two sides are measured alternately, several times, in separate
processes (ONNX Runtime through onnxruntime-node, bench_ort.js; ours through
`tunebench-cli compile --onnx FILE --bench`), and the ratio ours/ORT of the median latencies is
printed with the load average seen around each measurement (the machines are shared; ANCHORS.md).

    /usr/bin/python3 bench/networks/bench_networks.py --cli build-rt/bin/tunebench-cli \\
        --ort-modules build-rt/ort/node_modules [--models DIR] [--log resnet18_v1=LOG ...] \\
        [--log resnet18_v1:direct=LOG_TUNED_WITH_NO_WINOGRAD] [--log resnet50_v1@1:wod=LOG] [--no-untuned] [--profile]

A log tuned for one thread count (TB_NUM_THREADS=T tunebench-cli tune ...) is given as MODEL@T=LOG: the
tuned variant at T threads uses it instead of MODEL=LOG. A `:wod` suffix (MODEL:wod=LOG, MODEL@T:wod=LOG)
marks a log tuned with --winograd-or-direct; ours then compiles with that flag too.

Setup, once: `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node` in a folder (its
node_modules goes to --ort-modules); the models are written by make_models.py (run automatically
into --models when missing). PP-OCR det (640x640), rec (48x320) and cls (48x192)
come from ../shared/data/models/ppocr.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PPOCR = os.path.join(ROOT, "..", "shared", "data", "models", "ppocr")


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run_ort(args, model, threads, shape):
    env = dict(os.environ, NODE_PATH=args.ort_modules)
    cmd = ["node", os.path.join(HERE, "bench_ort.js"), model, str(threads), str(args.repeat), str(args.min_repeat_ms),
           ",".join(map(str, shape))]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["median_ms"]


def shape_arg(model, shape):
    name = "data" if os.path.basename(model).startswith(("mobilenet", "resnet")) else "x"
    return name + "=" + ",".join(map(str, shape))


def log_coverage(args, model, shape, log, extra=()):
    """(tasks of the model, records of the log that belong to them, tasks with a record)."""
    out = subprocess.run([args.cli, "tasks", "--onnx", model, "--layout", args.layout, "--shape", shape_arg(model, shape),
                          "--json"] + list(extra), check=True, capture_output=True, text=True).stdout
    keys = {t["workload_key"] for t in json.loads(out)}
    summary = subprocess.run([args.cli, "log", "summary", log, "--json"], check=True, capture_output=True, text=True).stdout
    per_key = {w["key"]: w["records"] for w in json.loads(summary)["workloads"] if w["key"] in keys}
    return len(keys), sum(per_key.values()), len(per_key)


def run_ours(args, model, threads, shape, layout, log, extra=()):
    cmd = [args.cli, "compile", "--onnx", model, "--layout", layout, "--shape", shape_arg(model, shape),
           "--bench", "--repeat", str(args.repeat), "--number", "1", "--min-repeat-ms", str(args.min_repeat_ms),
           "--threads", str(threads)] + list(extra)
    if log:
        cmd += ["--log", log]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"Execution time summary:\n.*\n\s*([\d.]+)\s+([\d.]+)", out)
    if not m:
        raise RuntimeError("no benchmark summary in:\n" + out)
    return float(m.group(2)), out  # median (ms)


def measure_peak(args):
    """The 1-thread FP32 FMA peak in GFLOP/s (bench_kernels --peak-only), or None without it."""
    if not os.path.exists(args.kernels_bin):
        print(f"(no {args.kernels_bin}: the profile is printed without % of peak)")
        return None
    out = subprocess.run([args.kernels_bin, "--peak-only"], check=True, capture_output=True, text=True).stdout
    m = re.search(r"peak GFLOPS threads=1: ([\d.]+)", out)
    return float(m.group(1)) if m else None


def annotate_profile(text, peak):
    """Adds '% of the 1-thread peak' to each kernel row of our --profile table."""
    if not peak:
        return text
    lines = []
    for line in text.splitlines():
        m = re.match(r"(\s+\S+\s+\d+\s+[\d.]+\s+[\d.]+%\s+)([\d.]+)(\s+\S+)$", line)
        if m:
            line = f"{line}  {100 * float(m.group(2)) / peak:5.1f}% of peak"
        elif line.strip().startswith("kernel"):
            line += f"  (1-thread peak {peak:.1f} GFLOP/s)"
        lines.append(line)
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "bin", "tunebench-cli"))
    p.add_argument("--ort-modules", required=True, help="node_modules folder holding onnxruntime-node")
    p.add_argument("--models", default=os.path.join(ROOT, "build", "bench-models"))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=2, help="alternations per configuration")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--min-repeat-ms", type=float, default=300)
    p.add_argument("--layout", default="NHWC", help="our layout for the NCHW models (NHWC converts)")
    p.add_argument("--log", action="append", default=[],
                   help="MODEL=LOG: tuning log for a model (repeatable); MODEL@T=LOG: the log for T threads; "
                        "MODEL[@T]:wod=LOG: a log tuned with --winograd-or-direct; MODEL:direct=LOG adds a variant "
                        "compiled with --no-winograd from a log tuned with --no-winograd")
    p.add_argument("--no-untuned", action="store_true", help="skip the untuned (default-schedule) variant")
    p.add_argument("--only", default="", help="comma list of models to run (mobilenet_v1,resnet18_v1,resnet50_v1,ppocr_det,ppocr_rec,ppocr_cls)")
    p.add_argument("--profile", action="store_true", help="print our per-kernel profile (1 thread) per model")
    p.add_argument("--kernels-bin", default=os.path.join(ROOT, "build", "bin", "bench_kernels"),
                   help="bench_kernels, whose --peak-only gives the FMA peak the profile is put against")
    args = p.parse_args()

    if not all(os.path.exists(os.path.join(args.models, f)) for f in ("mobilenet_v1.onnx", "resnet18_v1.onnx", "resnet50_v1.onnx")):
        subprocess.run([sys.executable, os.path.join(HERE, "make_models.py"), args.models], check=True)
    models = [("mobilenet_v1", os.path.join(args.models, "mobilenet_v1.onnx"), [1, 3, 224, 224]),
              ("resnet18_v1", os.path.join(args.models, "resnet18_v1.onnx"), [1, 3, 224, 224]),
              ("resnet50_v1", os.path.join(args.models, "resnet50_v1.onnx"), [1, 3, 224, 224]),
              ("ppocr_det", os.path.join(PPOCR, "ch_PP-OCRv4_det_infer.onnx"), [1, 3, 640, 640]),
              ("ppocr_rec", os.path.join(PPOCR, "ch_PP-OCRv4_rec_infer.onnx"), [1, 3, 48, 320]),
              ("ppocr_cls", os.path.join(PPOCR, "ch_ppocr_mobile_v2.0_cls_infer.onnx"), [1, 3, 48, 192])]
    if args.only:
        keep = set(args.only.split(","))
        models = [m for m in models if m[0] in keep]
    logs = dict(kv.split("=", 1) for kv in args.log)

    def tuned_log(name, threads):
        """(log, flags) of the tuned variant of `name` at `threads` (None: no log), per --log's forms."""
        for key in (f"{name}@{threads}", name):
            if key + ":wod" in logs:
                return logs[key + ":wod"], ["--winograd-or-direct"]
            if key in logs:
                return logs[key], []
        return None, []

    thread_counts = [int(t) for t in args.threads.split(",")]
    peak1 = measure_peak(args) if args.profile else None
    rows = []
    for name, path, shape in models:

        def variants_at(threads):
            v = [] if args.no_untuned else [("untuned", None, [])]
            log, flags = tuned_log(name, threads)
            if log:
                v.append(("tuned", log, flags))
            if name + ":direct" in logs:
                v.append(("direct", logs[name + ":direct"], ["--no-winograd"]))
            return v

        seen = set()
        for threads in thread_counts:
            for variant, log, flags in variants_at(threads):
                if log and (log, tuple(flags)) not in seen:
                    seen.add((log, tuple(flags)))
                    ntasks, nrec, ncov = log_coverage(args, path, shape, log, flags)
                    print(f"{name} {variant}: log {log}{' ' + ' '.join(flags) if flags else ''}: {nrec} records for its "
                          f"{ntasks} tasks ({nrec / ntasks:.0f} x tasks), {ncov} of {ntasks} tasks have a record", flush=True)
        variants = variants_at(1)  # the profile runs at 1 thread
        for threads in thread_counts:
            for variant, log, flags in variants_at(threads):
                ort, ours, loads = [], [], []
                for _ in range(args.rounds):
                    loads.append(loadavg())
                    ort.append(run_ort(args, path, threads, shape))
                    loads.append(loadavg())
                    ours.append(run_ours(args, path, threads, shape, args.layout, log, flags)[0])
                o, t = statistics.median(ort), statistics.median(ours)
                rows.append((name, threads, variant, t, o, t / o, max(loads)))
                print(f"{name:14s} {threads} thr {variant:8s} ours {t:9.3f} ms  ORT {o:9.3f} ms  "
                      f"ours/ORT {t / o:6.2f}  (ours {ours}, ORT {[round(x, 3) for x in ort]}, load <= {max(loads):.1f})",
                      flush=True)
        if args.profile:
            for variant, log, flags in variants:
                if log or len(variants) == 1:
                    _, out = run_ours(args, path, 1, shape, args.layout, log, flags + ["--profile"])
                    print(f"{name} {variant}:")
                    print(annotate_profile(out[out.find("Per-kernel profile"):], peak1), flush=True)

    print("\nmodel          threads variant   ours (ms)   ORT (ms)  ours/ORT  max load")
    for name, threads, variant, t, o, r, load in rows:
        print(f"{name:14s} {threads:7d} {variant:8s} {t:10.3f} {o:10.3f} {r:9.2f} {load:9.1f}")


if __name__ == "__main__":
    main()
