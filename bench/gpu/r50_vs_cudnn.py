#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Our resnet-50 conv kernels (the best measured cost of each conv task in a tuning log, TVM's
# auto-scheduler JSON) beside cuDNN's for the same layer (bench/gpu/torch_peer.py's JSON, measured
# on the same card in the same call). A task is matched to a layer by its workload key's shapes:
# input [1,H,W,Cin], weight [k,k,Cin,Cout] (winograd: [alpha,alpha,Cin,Cout], a 3x3 stride-1 conv),
# output [1,Ho,Wo,Cout], stride H/Ho. Several tasks can share a layer (with or without bias, ReLU,
# the residual add): each is a row. Prints the rows and the geometric mean of ours/cuDNN.
#   python3 bench/gpu/r50_vs_cudnn.py LOG torch_peer.json
import json
import math
import sys


def layer_of(key):
    args = key[1:]
    if len(args) < 3 or len(args[0]) != 4 or len(args[1]) != 4:
        return None
    (_, h, _, cin), (k0, _, wcin, cout), out = args[0], args[1], args[-1]
    if wcin != cin or len(out) != 4 or out[3] != cout:
        return None
    s = h // out[1]
    winograd = k0 in (4, 6) and s == 1
    k = 3 if winograd else k0
    return f"{cin}x{h}->{cout} k{k} s{s}", winograd


def main():
    log, peer_path = sys.argv[1], sys.argv[2]
    peer = json.load(open(peer_path))
    best, trials = {}, {}
    for line in open(log):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        r = json.loads(line)
        key = json.loads(r["i"][0][0])
        k = json.dumps(key)
        trials[k] = trials.get(k, 0) + 1
        costs, err = r["r"][0], r["r"][1]
        if err == 0:
            best[k] = min(best.get(k, math.inf), sum(costs) / len(costs))
    graph = peer.get("convs_graph", {})
    rows, logs, glogs = [], [], []
    for k, cost in best.items():
        m = layer_of(json.loads(k))
        if not m or m[0] not in peer["convs"]:
            continue
        ours, cudnn = cost * 1e6, peer["convs"][m[0]]
        g = graph.get(m[0], math.nan)
        rows.append((m[0] + (" winograd" if m[1] else ""), len(json.loads(k)) - 3, trials[k], ours, cudnn, g))
        logs.append(math.log(ours / cudnn))
        if g == g:
            glogs.append(math.log(ours / g))
    print(f"device: {peer['device']}, torch {peer.get('torch')}, cuDNN {peer.get('cudnn')}")
    print("cuDNN eager = PyTorch launches (per-op CPU overhead included); cuDNN graph = the same in a CUDA graph")
    print(f"{'layer (Cin x H -> Cout)':34} {'extra args':>10} {'trials':>6} {'ours us':>9} {'eager us':>9} "
          f"{'graph us':>9} {'/eager':>7} {'/graph':>7}")
    for name, extra, n, ours, cudnn, g in sorted(rows):
        print(f"{name:34} {extra:>10} {n:>6} {ours:9.1f} {cudnn:9.1f} {g:9.1f} {ours / cudnn:7.2f} {ours / g:7.2f}")
    if logs:
        print(f"geometric mean of ours/cuDNN over {len(logs)} conv tasks: eager {math.exp(sum(logs) / len(logs)):.3f}"
              + (f", graph {math.exp(sum(glogs) / len(glogs)):.3f}" if glogs else ""))
    print(f"PyTorch resnet-50: eager {peer['resnet50_ms']} ms, CUDA graph {peer.get('resnet50_graph_ms')} ms")


main()
