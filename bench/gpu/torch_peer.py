#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The peer numbers of GPU-MACHINE.md, measured again on the card at hand (the device tool may lend an
# H100 or an H200), so that ours and cuDNN's come from the same GPU in the same call: PyTorch eager
# + cuDNN, FP32 with TF32 off, batch 1. Prints one JSON object:
#   {"device": name, "resnet50_ms": median, "resnet50_graph_ms": median,
#    "convs": {"CinxH->Cout kK sS": us, ...}, "convs_graph": {...}}
# Timing: CUDA events around 200 launches, median of 5 rounds (as GPU-MACHINE.md). Eager launches
# at batch 1 are bound by PyTorch's per-op CPU overhead (~30 us), so "convs_graph" and
# "resnet50_graph_ms" replay the same work captured in a CUDA graph: the GPU time of cuDNN's
# kernels themselves, the fair peer for a compiled kernel. Layout: NCHW
# (PyTorch's default; cuDNN picks its own kernels); our kernels are NHWC as TVM's cuda tasks are.
#   /opt/torch/.venv/bin/python bench/gpu/torch_peer.py > torch_peer.json
import json
import statistics

import torch
import torchvision

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = torch.device("cuda")

# resnet-50 v1's distinct conv layers: (Cin, H, Cout, k, stride)
CONVS = [(3, 224, 64, 7, 2), (64, 56, 64, 1, 1), (64, 56, 64, 3, 1), (64, 56, 256, 1, 1), (256, 56, 64, 1, 1),
         (256, 56, 128, 1, 2), (128, 28, 128, 3, 1), (128, 28, 512, 1, 1), (512, 28, 128, 1, 1),
         (512, 28, 256, 1, 2), (256, 14, 256, 3, 1), (256, 14, 1024, 1, 1), (1024, 14, 256, 1, 1),
         (1024, 14, 512, 1, 2), (512, 7, 512, 3, 1), (512, 7, 2048, 1, 1), (2048, 7, 512, 1, 1)]


def graphed(fn, per_graph=20):
    """fn captured per_graph times in a CUDA graph; returns a function replaying one of them."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(per_graph):
            fn()
    return g, per_graph


def timed_graph(fn, replays=10, rounds=5):
    g, per = graphed(fn)
    return timed(g.replay, launches=replays, rounds=rounds) / per


def timed(fn, launches=200, rounds=5):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(launches):
            fn()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) / launches)  # ms per launch
    return statistics.median(out)


@torch.no_grad()
def main():
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(), "convs": {}, "convs_graph": {}}
    for cin, h, cout, k, s in CONVS:
        x = torch.randn(1, cin, h, h, device=dev)
        conv = torch.nn.Conv2d(cin, cout, k, s, padding=k // 2, bias=True).to(dev).eval()
        ms = timed(lambda: torch.relu_(conv(x)))
        res["convs"][f"{cin}x{h}->{cout} k{k} s{s}"] = round(ms * 1000, 2)
        res["convs_graph"][f"{cin}x{h}->{cout} k{k} s{s}"] = round(timed_graph(lambda: torch.relu_(conv(x))) * 1000, 2)
    model = torchvision.models.resnet50().to(dev).eval()
    x = torch.randn(1, 3, 224, 224, device=dev)
    res["resnet50_ms"] = round(timed(lambda: model(x)), 4)
    res["resnet50_graph_ms"] = round(timed_graph(lambda: model(x)), 4)
    print(json.dumps(res))


main()
