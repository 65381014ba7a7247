// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file test_graph_util.h
/// \brief Graph-building helpers shared by the tests that compile hand-made networks (header only;
/// needs tb::graph and measure::fillRandom from tb::measure): one NHWC conv2d + bias + relu layer
/// with seeded random weights, the layer resnet's and mobilenet's fused groups are made of.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/measure/timer.h"

namespace tb::test {

/// A float32 constant of `shape` filled by measure::fillRandom(seed).
inline std::shared_ptr<graph::ConstantData> randomConstant(std::vector<int64_t> shape, uint64_t seed) {
    auto c = std::make_shared<graph::ConstantData>();
    c->type = {std::move(shape)};
    c->f.resize(size_t(c->type.numElements()));
    measure::fillRandom(c->f.data(), c->f.size(), seed);
    return c;
}

/// relu(bias_add(conv2d(x, w), b)) on the NHWC tensor x with `cin` channels: 3x3 HWIO kernel, stride 1,
/// pad 1, `cout` output channels; w and b random (seeds seed and seed + 1), named w<name>, b<name>.
inline graph::NodeId addConvBiasRelu(graph::Graph& g, graph::NodeId x, int64_t cin, int64_t cout, uint64_t seed,
                                     const std::string& name = {}) {
    graph::Attrs a;
    a.set("channels", cout);
    a.set("kernel_size", std::vector<int64_t>{3, 3});
    a.set("strides", std::vector<int64_t>{1, 1});
    a.set("padding", std::vector<int64_t>{1, 1, 1, 1});
    a.set("dilation", std::vector<int64_t>{1, 1});
    a.set("groups", int64_t(1));
    a.set("data_layout", std::string("NHWC"));
    a.set("kernel_layout", std::string("HWIO"));
    const graph::NodeId c = g.addOp("nn.conv2d", {x, g.addConstant("w" + name, randomConstant({3, 3, cin, cout}, seed))}, a);
    graph::Attrs ba;
    ba.set("axis", int64_t(3));
    return g.addOp("nn.relu", {g.addOp("nn.bias_add", {c, g.addConstant("b" + name, randomConstant({cout}, seed + 1))}, ba)});
}

}  // namespace tb::test
