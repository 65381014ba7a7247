#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes NCHW ONNX models of mobilenet v1 (1.0, 224), resnet-18 (v1, torchvision layout) and resnet-50
(v1 as in gluon's model zoo, seed 002's `resnet50_v1`: the bottleneck's stride on its first 1x1) with
deterministic weights, for the network benchmark (bench/networks/bench_networks.py).

Both are what a user exports from a training framework: Conv (no bias) + BatchNormalization +
Relu, a global average pool, a Gemm classifier and a Softmax. Weights are He-uniform from
numpy's RandomState(seed); batch-norm statistics are random but fixed (so folding them matters).
Run with Debian's interpreter (python3-onnx, python3-numpy):

    /usr/bin/python3 bench/networks/make_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}_{self.n}"

    def const(self, prefix, array):
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv(self, x, cin, cout, k, stride, pad, groups=1):
        fan_in = cin // groups * k * k
        w = self.rng.uniform(-1, 1, (cout, cin // groups, k, k)) * np.sqrt(6.0 / fan_in)
        y = self.name("conv")
        self.nodes.append(helper.make_node("Conv", [x, self.const("w", w)], [y], kernel_shape=[k, k],
                                           strides=[stride, stride], pads=[pad] * 4, group=groups))
        return y

    def bn(self, x, c):
        scale = self.rng.uniform(0.5, 1.5, c)
        bias = self.rng.uniform(-0.1, 0.1, c)
        mean = self.rng.uniform(-0.1, 0.1, c)
        var = self.rng.uniform(0.5, 1.5, c)
        y = self.name("bn")
        self.nodes.append(helper.make_node("BatchNormalization", [x, self.const("gamma", scale), self.const("beta", bias),
                                                                  self.const("mean", mean), self.const("var", var)],
                                           [y], epsilon=1e-5))
        return y

    def relu(self, x):
        y = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [x], [y]))
        return y

    def op(self, kind, inputs, **attrs):
        y = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [y], **attrs))
        return y

    def classifier(self, x, cin, classes=1000):
        p = self.op("GlobalAveragePool", [x])
        f = self.op("Flatten", [p], axis=1)
        w = self.rng.uniform(-1, 1, (classes, cin)) * np.sqrt(6.0 / cin)
        b = self.rng.uniform(-0.1, 0.1, classes)
        g = self.op("Gemm", [f, self.const("fc_w", w), self.const("fc_b", b)], transB=1)
        return self.op("Softmax", [g], axis=1)

    def model(self, name, out, out_shape):
        graph = helper.make_graph(self.nodes, name,
                                  [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 224, 224])],
                                  [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], self.inits)
        m = helper.make_model(graph, producer_name="tunebench-bench", opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def mobilenet_v1():
    b = Builder(1)
    x = b.relu(b.bn(b.conv("data", 3, 32, 3, 2, 1), 32))
    cfg = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
    c = 32
    for cout, s in cfg:
        x = b.relu(b.bn(b.conv(x, c, c, 3, s, 1, groups=c), c))      # depthwise
        x = b.relu(b.bn(b.conv(x, c, cout, 1, 1, 0), cout))          # pointwise
        c = cout
    return b.model("mobilenet_v1", b.classifier(x, c), [1, 1000])


def resnet18():
    b = Builder(2)
    x = b.relu(b.bn(b.conv("data", 3, 64, 7, 2, 3), 64))
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for cout, s in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for block in range(2):
            stride = s if block == 0 else 1
            y = b.relu(b.bn(b.conv(x, c, cout, 3, stride, 1), cout))
            y = b.bn(b.conv(y, cout, cout, 3, 1, 1), cout)
            short = x if (stride == 1 and c == cout) else b.bn(b.conv(x, c, cout, 1, stride, 0), cout)
            x = b.relu(b.op("Add", [y, short]))
            c = cout
    return b.model("resnet18_v1", b.classifier(x, c), [1, 1000])


def resnet50():
    """gluon BottleneckV1: 1x1 (stride) -> 3x3 -> 1x1 (x4 channels), projection shortcut on each stage's first block."""
    b = Builder(3)
    x = b.relu(b.bn(b.conv("data", 3, 64, 7, 2, 3), 64))
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for mid, blocks, s in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        cout = mid * 4
        for block in range(blocks):
            stride = s if block == 0 else 1
            y = b.relu(b.bn(b.conv(x, c, mid, 1, stride, 0), mid))
            y = b.relu(b.bn(b.conv(y, mid, mid, 3, 1, 1), mid))
            y = b.bn(b.conv(y, mid, cout, 1, 1, 0), cout)
            short = x if block > 0 else b.bn(b.conv(x, c, cout, 1, stride, 0), cout)
            x = b.relu(b.op("Add", [y, short]))
            c = cout
    return b.model("resnet50_v1", b.classifier(x, c), [1, 1000])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    for name, m in [("mobilenet_v1.onnx", mobilenet_v1()), ("resnet18_v1.onnx", resnet18()),
                    ("resnet50_v1.onnx", resnet50())]:
        path = os.path.join(out, name)
        onnx.save(m, path)
        print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
