// SPDX-License-Identifier: Apache-2.0
// The graph reference interpreter on hand-built graphs: a conv block against a naive loop nest,
// buffer lifetimes (values consumed several times, outputs that are also consumed), the ops of
// ops/extra.cpp against hand-computed values, and input errors.
#include <QtTest>

#include <cmath>
#include <functional>
#include <random>

#include "engine/graph/interpreter.h"
#include "engine/graph/op_registry.h"
#include "engine/support/error.h"
#include "tests/engine/test_util.h"

using namespace tb;
using namespace tb::graph;
using test::randomData;
using test::userError;

namespace {

std::shared_ptr<ConstantData> constant(std::vector<int64_t> shape, std::vector<float> v) {
    auto c = std::make_shared<ConstantData>();
    c->type = {std::move(shape), te::DType::Float32};
    c->f = std::move(v);
    return c;
}

/// A one-op graph: inputs are fed (shape, data) pairs or constants; returns the single output.
struct OneOp {
    std::string op;
    Attrs attrs;
    std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> inputs;
    std::vector<bool> isConstant;  // per input; default fed
    std::vector<int64_t> expectedShape;
    std::vector<float> expected;
};

std::vector<OneOp> extraOpCases() {
    std::vector<OneOp> c;
    auto attrs = [](std::initializer_list<std::pair<const char*, AttrValue>> kv) {
        Attrs a;
        for (const auto& [k, v] : kv) a.set(k, v);
        return a;
    };
    using I = std::vector<int64_t>;
    using D = std::vector<double>;
    using S = std::string;
    c.push_back({"strided_slice", attrs({{"begin", I{8}}, {"end", I{1}}, {"strides", I{-3}}, {"axes", I{0}}}),
                 {{{10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}}, {}, {3}, {8, 5, 2}});
    c.push_back({"strided_slice", attrs({{"begin", I{1}}, {"end", I{3}}, {"strides", I{1}}, {"axes", I{1}}}),
                 {{{2, 3}, {1, 2, 3, 4, 5, 6}}}, {}, {2, 2}, {2, 3, 5, 6}});
    c.push_back({"take", attrs({{"axis", int64_t(0)}}), {{{3, 2}, {1, 2, 3, 4, 5, 6}}, {{2}, {2, 0}}}, {false, true},
                 {2, 2}, {5, 6, 1, 2}});
    c.push_back({"nn.mirror_pad", attrs({{"pad_width", I{2, 1}}, {"mode", S("REFLECT")}}), {{{3}, {1, 2, 3}}}, {},
                 {6}, {3, 2, 1, 2, 3, 2}});
    c.push_back({"nn.mirror_pad", attrs({{"pad_width", I{2, 1}}, {"mode", S("SYMMETRIC")}}), {{{3}, {1, 2, 3}}}, {},
                 {6}, {2, 1, 1, 2, 3, 3}});
    c.push_back({"image.resize2d",
                 attrs({{"size", I{4, 4}}, {"method", S("nearest_neighbor")},
                        {"coordinate_transformation_mode", S("asymmetric")}, {"rounding_method", S("floor")}}),
                 {{{1, 1, 2, 2}, {1, 2, 3, 4}}}, {}, {1, 1, 4, 4},
                 {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}});
    // ONNX test_resize_upsample_scales_linear (half_pixel).
    c.push_back({"image.resize2d",
                 attrs({{"size", I{4, 4}}, {"method", S("linear")}, {"coordinate_transformation_mode", S("half_pixel")}}),
                 {{{1, 1, 2, 2}, {1, 2, 3, 4}}}, {}, {1, 1, 4, 4},
                 {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}});
    // ONNX semantics with an explicit scale that differs from out/in: 0.6 on 4 -> 2 (asymmetric):
    // x = 1 reads floor(1 / 0.6) = 1 (the size ratio 2 would read column 2, value 3).
    c.push_back({"image.resize2d",
                 attrs({{"size", I{1, 2}}, {"method", S("nearest_neighbor")}, {"scale", D{0.6, 0.6}},
                        {"coordinate_transformation_mode", S("asymmetric")}, {"rounding_method", S("floor")}}),
                 {{{1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}}}, {}, {1, 1, 1, 2}, {1, 2}});
    c.push_back({"mean", attrs({{"axis", I{1}}, {"keepdims", int64_t(1)}}), {{{2, 3}, {1, 2, 3, 4, 5, 6}}}, {}, {2, 1},
                 {2, 5}});
    c.push_back({"sum", attrs({{"axis", I{0}}, {"keepdims", int64_t(0)}}), {{{2, 3}, {1, 2, 3, 4, 5, 6}}}, {}, {3},
                 {5, 7, 9}});
    c.push_back({"max", attrs({}), {{{2, 2}, {1, 7, -3, 2}}}, {}, {}, {7}});
    const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
    c.push_back({"nn.log_softmax", attrs({{"axis", int64_t(-1)}}), {{{1, 3}, {1, 2, 3}}}, {}, {1, 3},
                 {float(1 - lse), float(2 - lse), float(3 - lse)}});
    c.push_back({"hard_swish", attrs({}), {{{5}, {-4, -1, 0, 1, 4}}}, {}, {5}, {0, -1.f / 3, 0, 2.f / 3, 4}});
    c.push_back({"hard_sigmoid", attrs({{"alpha", 0.2}, {"beta", 0.5}}), {{{3}, {-5, 0, 1}}}, {}, {3}, {0, 0.5, 0.7f}});
    c.push_back({"power", attrs({}), {{{3}, {1, 2, 3}}, {{}, {2}}}, {false, true}, {3}, {1, 4, 9}});
    c.push_back({"broadcast_to", attrs({{"shape", I{2, 3}}}), {{{3}, {1, 2, 3}}}, {}, {2, 3}, {1, 2, 3, 1, 2, 3}});
    c.push_back({"nn.leaky_relu", attrs({{"alpha", 0.1}}), {{{2}, {-2, 3}}}, {}, {2}, {-0.2f, 3}});
    c.push_back({"erf", attrs({}), {{{2}, {0, 1}}}, {}, {2}, {0, float(std::erf(1.0))}});
    c.push_back({"maximum", attrs({}), {{{3}, {1, 5, 3}}, {{3}, {4, 2, 3}}}, {}, {3}, {4, 5, 3}});
    return c;
}

}  // namespace

class TestGraphInterpreter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testConvBlockAgainstNaiveLoops() {
        // conv2d 3->4 channels, 3x3, stride 2, pad 1, + bias + relu, on a 1x3x7x7 input.
        const int64_t C = 3, H = 7, O = 4, K = 3, S = 2, P = 1, OH = (H + 2 * P - K) / S + 1;
        auto x = randomData(size_t(C * H * H), 1), w = randomData(size_t(O * C * K * K), 2),
             b = randomData(size_t(O), 3);
        Graph g;
        NodeId in = g.addInput("x", {{1, C, H, H}, te::DType::Float32});
        NodeId wt = g.addConstant("w", constant({O, C, K, K}, w));
        NodeId bs = g.addConstant("b", constant({O, 1, 1}, b));
        Attrs a;
        a.set("strides", std::vector<int64_t>{S, S});
        a.set("padding", std::vector<int64_t>{P, P, P, P});
        a.set("kernel_size", std::vector<int64_t>{K, K});
        a.set("channels", O);
        NodeId conv = g.addOp("nn.conv2d", {in, wt}, a, "conv");
        NodeId add = g.addOp("add", {conv, bs}, {}, "bias");
        g.addOutput(g.addOp("nn.relu", {add}, {}, "relu"));

        std::vector<NodeRunInfo> profile;
        GraphRunOptions opts;
        opts.profile = &profile;
        auto out = runGraph(g, {te::Buffer{{1, C, H, H}, x}}, opts);
        QCOMPARE(out.size(), size_t(1));
        QCOMPARE(out[0].shape, (std::vector<int64_t>{1, O, OH, OH}));
        double maxErr = 0;
        for (int64_t o = 0; o < O; ++o)
            for (int64_t oy = 0; oy < OH; ++oy)
                for (int64_t ox = 0; ox < OH; ++ox) {
                    double acc = b[size_t(o)];
                    for (int64_t c = 0; c < C; ++c)
                        for (int64_t ky = 0; ky < K; ++ky)
                            for (int64_t kx = 0; kx < K; ++kx) {
                                int64_t iy = oy * S + ky - P, ix = ox * S + kx - P;
                                if (iy < 0 || ix < 0 || iy >= H || ix >= H) continue;
                                acc += double(x[size_t((c * H + iy) * H + ix)]) *
                                       double(w[size_t(((o * C + c) * K + ky) * K + kx)]);
                            }
                    const double want = std::max(acc, 0.0);
                    maxErr = std::max(maxErr, std::fabs(want - out[0].data[size_t((o * OH + oy) * OH + ox)]));
                }
        QVERIFY2(maxErr < 1e-6, qPrintable(QString::number(maxErr)));
        QCOMPARE(profile.size(), size_t(3));
        QCOMPARE(profile[0].op, std::string("nn.conv2d"));
        QCOMPARE(profile[2].name, std::string("relu"));
    }

    void testSharedValuesAndOutputs() {
        // a = relu(x); b = a * a; c = a + b; outputs: c, a (a is consumed twice AND an output), and
        // the input x itself, and a constant.
        Graph g;
        NodeId x = g.addInput("x", {{4}, te::DType::Float32});
        NodeId a = g.addOp("nn.relu", {x}, {}, "a");
        NodeId b = g.addOp("multiply", {a, a}, {}, "b");
        NodeId c = g.addOp("add", {a, b}, {}, "c");
        NodeId k = g.addConstant("k", constant({2}, {7, 8}));
        g.setOutputs({c, a, x, k});
        std::vector<NodeId> seen;
        GraphRunOptions opts;
        opts.onNode = [&](NodeId id, const te::Buffer&) { seen.push_back(id); };
        auto out = runGraph(g, std::map<std::string, te::Buffer>{{"x", te::Buffer{{4}, {-1, 0, 2, 3}}}}, opts);
        QCOMPARE(out.size(), size_t(4));
        QCOMPARE(out[0].data, (std::vector<float>{0, 0, 6, 12}));
        QCOMPARE(out[1].data, (std::vector<float>{0, 0, 2, 3}));
        QCOMPARE(out[2].data, (std::vector<float>{-1, 0, 2, 3}));
        QCOMPARE(out[3].data, (std::vector<float>{7, 8}));
        QCOMPARE(seen, (std::vector<NodeId>{a, b, c}));
    }

    void testExtraOps_data() {
        QTest::addColumn<int>("index");
        auto cases = extraOpCases();
        for (size_t i = 0; i < cases.size(); ++i) QTest::addRow("%zu %s", i, cases[i].op.c_str()) << int(i);
    }
    void testExtraOps() {
        QFETCH(int, index);
        const OneOp c = extraOpCases()[size_t(index)];
        QVERIFY2(findOp(c.op), c.op.c_str());
        Graph g;
        std::vector<NodeId> ins;
        std::vector<te::Buffer> feed;
        for (size_t k = 0; k < c.inputs.size(); ++k) {
            const auto& [shape, data] = c.inputs[k];
            if (k < c.isConstant.size() && c.isConstant[k]) {
                ins.push_back(g.addConstant("c" + std::to_string(k), constant(shape, data)));
            } else {
                ins.push_back(g.addInput("i" + std::to_string(k), {shape, te::DType::Float32}));
                feed.push_back(te::Buffer{shape, data});
            }
        }
        g.addOutput(g.addOp(c.op, ins, c.attrs, "op"));
        QCOMPARE(g.node(g.outputs()[0]).type.shape, c.expectedShape);
        auto out = runGraph(g, feed);
        QCOMPARE(out[0].shape, c.expectedShape);
        QCOMPARE(out[0].data.size(), c.expected.size());
        for (size_t i = 0; i < c.expected.size(); ++i)
            QVERIFY2(std::fabs(out[0].data[i] - c.expected[i]) < 1e-6,
                     qPrintable(QStringLiteral("element %1: got %2, expected %3")
                                    .arg(i).arg(out[0].data[i]).arg(c.expected[i])));
    }

    void testInputErrors() {
        Graph g;
        NodeId x = g.addInput("x", {{2, 2}, te::DType::Float32});
        g.addOutput(g.addOp("nn.relu", {x}, {}, "r"));
        QVERIFY(userError([&] { runGraph(g, std::vector<te::Buffer>{}); })
                    .contains(QStringLiteral("the graph has 1 inputs, 0 were given")));
        QVERIFY(userError([&] { runGraph(g, {te::Buffer{{4}, {1, 2, 3, 4}}}); })
                    .contains(QStringLiteral("input 'x' must have shape [2, 2], got [4]")));
        QVERIFY(userError([&] { runGraph(g, {te::Buffer{{2, 2}, {1, 2, 3}}}); })
                    .contains(QStringLiteral("input 'x' holds 3 values for shape [2, 2]")));
        QVERIFY(userError([&] { runGraph(g, std::map<std::string, te::Buffer>{}); })
                    .contains(QStringLiteral("no value given for graph input 'x'")));
        const QString extra = userError([&] {
            runGraph(g, std::map<std::string, te::Buffer>{{"x", te::Buffer{{2, 2}, {1, 2, 3, 4}}},
                                                          {"y", te::Buffer{{1}, {0}}}});
        });
        QVERIFY2(extra.contains(QStringLiteral("'y' is not an input of the graph")), qPrintable(extra));
    }
};

QTEST_APPLESS_MAIN(TestGraphInterpreter)
#include "tst_graph_interpreter.moc"
