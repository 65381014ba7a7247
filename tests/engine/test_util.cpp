// SPDX-License-Identifier: Apache-2.0
#include "tests/engine/test_util.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/topi/broadcast.h"
#include "engine/topi/nn.h"
#include "engine/topi/nn/conv2d.h"

namespace tb::test {

using namespace tb::te;

std::shared_ptr<const ComputeDAG> matmulAdd(int64_t n, int64_t l, int64_t m) {
    auto A = placeholder({n, l}, "A");
    auto B = placeholder({l, m}, "B");
    auto C = placeholder({n, m}, "C");
    auto k = reduceAxis(l, "k");
    auto matmul = compute({n, m}, {"i", "j"}, [&](const std::vector<Var>& v) {
        return sum(A(v[0], k.var) * B(k.var, v[1]), {k});
    }, "matmul", ComputeOptions{{}, {}, {B}});
    auto out = compute({n, m}, {"i", "j"}, [&](const std::vector<Var>& v) {
        return matmul(v[0], v[1]) + C(v[0], v[1]);
    }, "out");
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{A, B, C, out});
}

std::shared_ptr<const ComputeDAG> conv2dNhwcRelu(int64_t h, int64_t ci, int64_t co, bool bias) {
    auto p0 = placeholder({1, h, h, ci}, "p0");
    auto p1 = placeholder({3, 3, ci, co}, "p1");
    auto pad = compute({1, h + 2, h + 2, ci}, axisNames(4, "i"), [&](const std::vector<Var>& v) {
        Expr cond = logicalAnd(logicalAnd(logicalAnd(v[1] >= 1, v[1] < Expr(int(h + 1))), v[2] >= 1), v[2] < Expr(int(h + 1)));
        return ifThenElse(cond, p0(v[0], v[1] - 1, v[2] - 1, v[3]), 0.0f);
    }, "pad_temp");
    auto ry = reduceAxis(3, "ry"), rx = reduceAxis(3, "rx"), rc = reduceAxis(ci, "rc");
    Tensor out = compute({1, h, h, co}, {"nn", "yy", "xx", "ff"}, [&](const std::vector<Var>& v) {
        return sum(pad(v[0], v[1] + ry.var, v[2] + rx.var, rc.var) * p1(ry.var, rx.var, rc.var, v[3]), {ry, rx, rc});
    }, "conv2d_nhwc", ComputeOptions{{}, {}, {p1}});
    if (bias) {
        auto p2 = placeholder({1, 1, 1, co}, "p2");
        const Tensor conv = out;
        out = compute({1, h, h, co}, axisNames(4, "ax"), [&](const std::vector<Var>& v) {
            return conv(v[0], v[1], v[2], v[3]) + p2(v[0], 0, 0, v[3]);
        }, "T_add");
    }
    const Tensor pre = out;
    auto relu = compute({1, h, h, co}, axisNames(4, "ax"), [&](const std::vector<Var>& v) {
        return max(pre(v[0], v[1], v[2], v[3]), 0.0f);
    }, "T_relu");
    return std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({relu}));
}

std::shared_ptr<const ComputeDAG> conv2dLayer(int64_t n, int64_t h, int64_t w, int64_t co, int64_t ci, int64_t kh,
                                              int64_t kw, int64_t stride, int64_t pad) {
    Tensor data = placeholder({n, ci, h, w}, "data");
    Tensor kernel = placeholder({co, ci, kh, kw}, "kernel");
    Tensor bias = placeholder({1, co, 1, 1}, "bias");
    Tensor conv = topi::nn::conv2dNchw(data, kernel, {stride, stride}, {pad, pad});
    Tensor out = topi::relu(topi::add(conv, bias));
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{data, kernel, bias, out});
}

search::SearchTask gpuSearchTask(std::shared_ptr<const ComputeDAG> dag, const std::string& target, HardwareParams hw) {
    search::SearchTask t;
    t.dag = std::move(dag);
    t.workloadKey = t.dag->workloadKey();
    t.target = target;
    t.hardware = hw;
    return t;
}

std::vector<float> randomData(size_t n, unsigned seed, float lo, float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

Buffer randomBuffer(std::vector<int64_t> shape, unsigned seed, float lo, float hi) {
    Buffer b = Buffer::zeros(std::move(shape));
    b.data = randomData(b.data.size(), seed, lo, hi);
    return b;
}

std::vector<Buffer> randomInputs(const ComputeDAG& dag, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<Buffer> in;
    for (const auto& t : dag.inputs()) {
        Buffer b = Buffer::zeros(t.shape());
        for (auto& x : b.data) x = dist(rng);
        in.push_back(std::move(b));
    }
    return in;
}

QString compareOutputs(const std::vector<std::vector<float>>& got, const std::vector<Buffer>& want) {
    if (want.empty()) return QStringLiteral("no outputs to compare");
    if (got.size() != want.size()) return QStringLiteral("output count differs: %1 vs %2").arg(got.size()).arg(want.size());
    for (size_t o = 0; o < got.size(); ++o) {
        if (got[o].size() != want[o].data.size()) return QStringLiteral("output %1 size differs").arg(o);
        for (size_t i = 0; i < got[o].size(); ++i) {
            const float a = got[o][i], b = want[o].data[i];
            if (!(std::abs(a - b) <= 2e-3f * std::max(1.f, std::abs(b))))
                return QStringLiteral("output %1 element %2: got %3, expected %4").arg(o).arg(i).arg(double(a)).arg(double(b));
        }
    }
    return {};
}

}  // namespace tb::test
