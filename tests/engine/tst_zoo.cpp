// SPDX-License-Identifier: Apache-2.0
// The network zoo, the Relay passes and FuseOps on small hand-built graphs: architecture facts of
// relay.testing, numerics preserved by every rewrite (checked with the graph interpreter), and
// the fusion groups TVM forms.
#include <QTest>

#include <cmath>
#include <map>
#include <random>

#include "engine/graph/fuse_ops.h"
#include "engine/graph/interpreter.h"
#include "engine/graph/onnx_import.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/passes/layout.h"
#include "engine/graph/passes/passes.h"
#include "engine/graph/zoo.h"
#include "engine/support/error.h"
#include "tests/engine/test_util.h"

using namespace tb;
using namespace tb::graph;
using tb::test::randomData;

namespace {

using Shape = std::vector<int64_t>;

NodeId constant(Graph& g, const std::string& name, Shape s, uint32_t seed, float lo = -1, float hi = 1) {
    auto d = std::make_shared<ConstantData>();
    d->type = TensorType{s, te::DType::Float32};
    d->f = randomData(size_t(d->type.numElements()), seed, lo, hi);
    return g.addConstant(name, d);
}

Attrs convAttrs(Shape kernel, Shape strides, Shape pad, const std::string& dl, const std::string& kl,
                int64_t groups = 1) {
    Attrs a;
    a.set("kernel_size", kernel);
    a.set("strides", strides);
    a.set("padding", pad);
    a.set("dilation", Shape{1, 1});
    a.set("groups", groups);
    a.set("data_layout", dl);
    a.set("kernel_layout", kl);
    return a;
}

/// BN with random positive gamma/var and random beta/mean (the interesting case for folding).
NodeId batchNorm(Graph& g, NodeId x, int axis, uint32_t seed) {
    int64_t c = g.node(x).type.shape[size_t(axis)];
    NodeId gamma = constant(g, "gamma", {c}, seed, 0.5f, 1.5f);
    NodeId beta = constant(g, "beta", {c}, seed + 1, -0.5f, 0.5f);
    NodeId mean = constant(g, "mean", {c}, seed + 2, -0.5f, 0.5f);
    NodeId var = constant(g, "var", {c}, seed + 3, 0.5f, 2.0f);
    Attrs a;
    a.set("axis", int64_t(axis));
    a.set("epsilon", 1e-5);
    return g.addOp("nn.batch_norm", {x, gamma, beta, mean, var}, a);
}

int countOp(const Graph& g, const std::string& op) {
    int n = 0;
    for (const auto& node : g.nodes()) n += node.kind == NodeKind::Op && node.op == op ? 1 : 0;
    return n;
}

const Node* firstOp(const Graph& g, const std::string& op) {
    for (const auto& node : g.nodes())
        if (node.kind == NodeKind::Op && node.op == op) return &node;
    return nullptr;
}

std::vector<float> run(const Graph& g, const std::vector<float>& input) {
    te::Buffer in{g.node(g.inputs()[0]).type.shape, input};
    auto out = runGraph(g, std::vector<te::Buffer>{in});
    return out.at(0).data;
}

double maxRelDiff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0, scale = 1e-6;
    for (float v : a) scale = std::max(scale, double(std::abs(v)));
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])) / scale);
    return a.size() == b.size() ? m : 1e30;
}

/// A pre-activation residual block in the style of resnet v2, NHWC or NCHW:
/// in -> BN -> relu -> conv3x3 -> BN -> relu -> conv3x3 (+ in) -> BN -> relu -> conv1x1.
Graph residualBlock(const std::string& layout, int64_t c, int64_t hw, int64_t co3x3) {
    Graph g;
    bool nhwc = layout == "NHWC";
    int axis = nhwc ? 3 : 1;
    std::string kl = nhwc ? "HWIO" : "OIHW";
    NodeId x = g.addInput("data", TensorType{nhwc ? Shape{1, hw, hw, c} : Shape{1, c, hw, hw}});
    auto w = [&](int64_t ci, int64_t co, int64_t k, uint32_t seed) {
        return constant(g, "w", nhwc ? Shape{k, k, ci, co} : Shape{co, ci, k, k}, seed, -0.3f, 0.3f);
    };
    NodeId a1 = g.addOp("nn.relu", {batchNorm(g, x, axis, 10)});
    NodeId c1 = g.addOp("nn.conv2d", {a1, w(c, co3x3, 3, 20)}, convAttrs({3, 3}, {1, 1}, {1, 1, 1, 1}, layout, kl));
    NodeId a2 = g.addOp("nn.relu", {batchNorm(g, c1, axis, 30)});
    NodeId c2 = g.addOp("nn.conv2d", {a2, w(co3x3, c, 3, 40)}, convAttrs({3, 3}, {1, 1}, {1, 1, 1, 1}, layout, kl));
    NodeId sum = g.addOp("add", {c2, x});
    NodeId a3 = g.addOp("nn.relu", {batchNorm(g, sum, axis, 50)});
    NodeId c3 = g.addOp("nn.conv2d", {a3, w(c, 8, 1, 60)}, convAttrs({1, 1}, {1, 1}, {0, 0, 0, 0}, layout, kl));
    g.addOutput(c3);
    return g;
}

}  // namespace

class TestZoo : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void testNetworkNames();
    void testNetworks_data();
    void testNetworks();
    void testMobilenetBatchNormQuirk();
    void testTutorialQuirks();
    void testDeterministicWeights();
    void testLayout();
    void testSimplifyInferenceNumerics();
    void testFoldScaleAxis_data();
    void testFoldScaleAxis();
    void testAxisHScaleIsNotFolded();
    void testWinogradRewrite();
    void testNCHWcRewrite();
    void testConvertLayout();
    void testPassesOnOnnxModel();
    void testFusionEpilogue();
    void testFusionResidualAndSharedValues();
    void testFusionConcatenateAndSoftmax();
    void testTypeErrors();
};

void TestZoo::testNetworkNames() {
    auto names = networkNames();
    QCOMPARE(int(names.size()), 20);
    for (const char* n : {"resnet-18", "resnet-50", "resnet3d-18", "mobilenet", "squeezenet_v1.1", "inception_v3",
                          "vgg-16", "mlp", "dcgan"})
        QVERIFY(std::find(names.begin(), names.end(), n) != names.end());
    try {
        makeNetwork("alexnet");
        QFAIL("no error for an unknown network");
    } catch (const UserError& e) {
        QString msg = QString::fromUtf8(e.what());
        QVERIFY(msg.contains(QStringLiteral("alexnet")));
        QVERIFY(msg.contains(QStringLiteral("resnet-18")));
        QVERIFY(msg.contains(QStringLiteral("dcgan")));
    }
    QVERIFY_THROWS_EXCEPTION(UserError, makeNetwork("resnet-19"));
    QVERIFY_THROWS_EXCEPTION(UserError, makeNetwork("mobilenet", 0));
    QVERIFY_THROWS_EXCEPTION(UserError, makeNetwork("mobilenet", 1, "NCDHW"));
}

void TestZoo::testNetworks_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("layout");
    QTest::addColumn<int>("batch");
    QTest::addColumn<Shape>("input");
    QTest::addColumn<Shape>("output");
    QTest::addColumn<int>("convs");
    QTest::addColumn<int>("dense");
    QTest::addColumn<int>("batchNorms");
    // convs: resnet basic = stem + 2 per unit + 4 projections; bottleneck = stem + 3 per unit + 4.
    QTest::addRow("resnet-18") << QStringLiteral("resnet-18") << QStringLiteral("NHWC") << 1 << Shape{1, 224, 224, 3}
                               << Shape{1, 1000} << 1 + 2 * 8 + 4 << 1 << 2 + 2 * 8 + 1;
    QTest::addRow("resnet-34 b2") << QStringLiteral("resnet-34") << QStringLiteral("NCHW") << 2 << Shape{2, 3, 224, 224}
                                  << Shape{2, 1000} << 1 + 2 * 16 + 4 << 1 << 2 + 2 * 16 + 1;
    QTest::addRow("resnet-50") << QStringLiteral("resnet-50") << QStringLiteral("NHWC") << 1 << Shape{1, 224, 224, 3}
                               << Shape{1, 1000} << 1 + 3 * 16 + 4 << 1 << 2 + 3 * 16 + 1;
    QTest::addRow("resnet-152") << QStringLiteral("resnet-152") << QStringLiteral("NHWC") << 1
                                << Shape{1, 224, 224, 3} << Shape{1, 1000} << 1 + 3 * 50 + 4 << 1 << 2 + 3 * 50 + 1;
    QTest::addRow("mobilenet") << QStringLiteral("mobilenet") << QStringLiteral("NHWC") << 1 << Shape{1, 224, 224, 3}
                               << Shape{1, 1000} << 1 + 2 * 13 << 1 << 1 + 2 * 13;
    QTest::addRow("squeezenet_v1.0") << QStringLiteral("squeezenet_v1.0") << QStringLiteral("NCHW") << 1
                                     << Shape{1, 3, 224, 224} << Shape{1, 1000} << 1 + 3 * 8 + 1 << 0 << 0;
    QTest::addRow("squeezenet_v1.1") << QStringLiteral("squeezenet_v1.1") << QStringLiteral("NCHW") << 1
                                     << Shape{1, 3, 224, 224} << Shape{1, 1000} << 1 + 3 * 8 + 1 << 0 << 0;
    // inception: stem 5, 7A 7 each (x3), 7B 4, 7C 10 each (x4), 7D 6, 7E 9 each (x2).
    QTest::addRow("inception_v3") << QStringLiteral("inception_v3") << QStringLiteral("NHWC") << 1
                                  << Shape{1, 3, 299, 299} << Shape{1, 1000} << 5 + 21 + 4 + 40 + 6 + 18 << 1
                                  << 5 + 21 + 4 + 40 + 6 + 18;
    QTest::addRow("vgg-11") << QStringLiteral("vgg-11") << QStringLiteral("NCHW") << 1 << Shape{1, 3, 224, 224}
                            << Shape{1, 1000} << 8 << 3 << 0;
    QTest::addRow("vgg-19") << QStringLiteral("vgg-19") << QStringLiteral("NCHW") << 1 << Shape{1, 3, 224, 224}
                            << Shape{1, 1000} << 16 << 3 << 0;
    QTest::addRow("mlp") << QStringLiteral("mlp") << QStringLiteral("NHWC") << 4 << Shape{4, 224, 224, 3}
                         << Shape{4, 1000} << 0 << 3 << 0;
    QTest::addRow("dcgan") << QStringLiteral("dcgan") << QStringLiteral("NCHW") << 1 << Shape{1, 100}
                           << Shape{1, 3, 64, 64} << 4 << 1 << 3;
}

void TestZoo::testNetworks() {
    QFETCH(QString, name);
    QFETCH(QString, layout);
    QFETCH(int, batch);
    QFETCH(Shape, input);
    QFETCH(Shape, output);
    QFETCH(int, convs);
    QFETCH(int, dense);
    QFETCH(int, batchNorms);
    Graph g = makeNetwork(name.toStdString(), batch, layout.toStdString());
    QCOMPARE(int(g.inputs().size()), 1);
    QCOMPARE(g.node(g.inputs()[0]).name, std::string("data"));
    QCOMPARE(g.node(g.inputs()[0]).type.shape, input);
    QCOMPARE(int(g.outputs().size()), 1);
    QCOMPARE(g.node(g.outputs()[0]).type.shape, output);
    QCOMPARE(countOp(g, "nn.conv2d") + countOp(g, "nn.conv2d_transpose"), convs);
    QCOMPARE(countOp(g, "nn.dense"), dense);
    QCOMPARE(countOp(g, "nn.batch_norm"), batchNorms);
    // Every weight is a float32 constant with data; BN statistics are relay.testing's.
    for (const auto& n : g.nodes()) {
        if (n.kind != NodeKind::Constant) continue;
        QCOMPARE(int64_t(n.value->f.size()), n.type.numElements());
        auto ends = [&](const char* s) { return n.name.size() >= strlen(s) && n.name.compare(n.name.size() - strlen(s), strlen(s), s) == 0; };
        if (ends("_gamma") || ends("_moving_var"))
            for (float v : n.value->f) QCOMPARE(v, 1.0f);
        if (ends("_beta") || ends("_moving_mean") || ends("_bias"))
            for (float v : n.value->f) QCOMPARE(v, 0.0f);
        if (ends("_weight")) {
            float mx = 0;
            for (float v : n.value->f) mx = std::max(mx, std::abs(v));
            QVERIFY(mx > 0 && mx < 1.0f);
        }
    }
}

// mobilenet's conv_block batch-norm runs on axis 1 whatever the layout (relay.testing bug kept).
void TestZoo::testMobilenetBatchNormQuirk() {
    Graph nhwc = makeNetwork("mobilenet", 1, "NHWC");
    const Node* bn = firstOp(nhwc, "nn.batch_norm");
    QVERIFY(bn);
    QCOMPARE(bn->attrs.getInt("axis"), int64_t(1));
    QCOMPARE(nhwc.node(bn->inputs[1]).type.shape, Shape{112});
    Graph nchw = makeNetwork("mobilenet", 1, "NCHW");
    bn = firstOp(nchw, "nn.batch_norm");
    QCOMPARE(nchw.node(bn->inputs[1]).type.shape, Shape{32});
    // The depthwise weights are HWOI (3, 3, C, 1) in NHWC and OIHW (C, 1, 3, 3) in NCHW.
    int dw = 0;
    for (const auto& n : nhwc.nodes()) {
        if (n.kind == NodeKind::Op && n.op == "nn.conv2d" && n.attrs.getInt("groups") > 1) {
            ++dw;
            QCOMPARE(n.attrs.getString("kernel_layout"), std::string("HWOI"));
            QCOMPARE(nhwc.node(n.inputs[1]).type.shape[3], int64_t(1));
        }
    }
    QCOMPARE(dw, 13);
}

void TestZoo::testTutorialQuirks() {
    // "resnet3d-N" builds the 2-D resnet-N (the tutorial helper calls relay.testing.resnet).
    QCOMPARE(QString::fromStdString(makeNetwork("resnet3d-18", 1, "NHWC").print()),
             QString::fromStdString(makeNetwork("resnet-18", 1, "NHWC").print()));
    // inception_v3 ignores the layout; squeezenet and vgg exist only in NCHW.
    QCOMPARE(makeNetwork("inception_v3", 1, "NHWC").node(0).type.shape, (Shape{1, 3, 299, 299}));
    QVERIFY_THROWS_EXCEPTION(UserError, makeNetwork("squeezenet_v1.1", 1, "NHWC"));
    QVERIFY_THROWS_EXCEPTION(UserError, makeNetwork("vgg-16", 1, "NHWC"));
    // resnet: the projection shortcut reads the pre-activated input (act1), not the unit input.
    Graph g = makeNetwork("resnet-18", 1, "NHWC");
    bool found = false;
    for (const auto& n : g.nodes()) {
        if (n.kind == NodeKind::Op && n.name == "stage2_unit1_sc") {
            QCOMPARE(g.node(n.inputs[0]).op, std::string("nn.relu"));
            QCOMPARE(n.attrs.getInts("strides"), (Shape{2, 2}));
            found = true;
        }
    }
    QVERIFY(found);
}

void TestZoo::testDeterministicWeights() {
    Graph a = makeNetwork("resnet-18", 1, "NHWC"), b = makeNetwork("resnet-18", 1, "NHWC");
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
        if (a.nodes()[i].kind == NodeKind::Constant) QVERIFY(a.nodes()[i].value->f == b.nodes()[i].value->f);
    // The Xavier range as relay.testing.init computes it from the shape as written (HWIO here):
    // fan_in = dim1 * prod(dims 2..), fan_out = dim0 * prod(dims 2..), scale = sqrt(3 / avg).
    const Node* w = nullptr;
    for (const auto& n : a.nodes())
        if (n.name == "conv0_weight") w = &n;
    QVERIFY(w);
    double scale = std::sqrt(3.0 / ((7.0 * 3 * 64 + 7.0 * 3 * 64) / 2.0));
    float mx = 0;
    double mean = 0;
    for (float v : w->value->f) {
        mx = std::max(mx, std::abs(v));
        mean += v;
    }
    mean /= double(w->value->f.size());
    QVERIFY(mx <= scale && mx > 0.95 * scale);
    QVERIFY(std::abs(mean) < 0.02 * scale);
}

void TestZoo::testLayout() {
    Layout l("NCHW8c");
    QCOMPARE(l.indexOf('C'), 1);
    QCOMPARE(l.indexOf('c'), 4);
    QCOMPARE(l.factorOf('c'), int64_t(8));
    QCOMPARE(l.primal(), std::string("NCHW"));
    QCOMPARE(Layout("NCHW").convertShape({1, 64, 56, 56}, l), (Shape{1, 8, 56, 56, 8}));
    QCOMPARE(l.convertShape({1, 8, 56, 56, 8}, Layout("NHWC")), (Shape{1, 56, 56, 64}));
    QCOMPARE(Layout("OIHW").convertShape({64, 3, 7, 7}, Layout("OIHW3i8o")), (Shape{8, 1, 7, 7, 3, 8}));
    QVERIFY_THROWS_EXCEPTION(UserError, Layout("NC8"));
    QVERIFY_THROWS_EXCEPTION(UserError, Layout("NCHW8d"));
    QVERIFY_THROWS_EXCEPTION(UserError, Layout("NCHW").convertShape({1, 60, 4, 4}, l));
}

// SimplifyInference + FoldConstant keep the numerics of batch-norm (random statistics).
void TestZoo::testSimplifyInferenceNumerics() {
    Graph g;
    NodeId x = g.addInput("data", TensorType{{1, 5, 6, 6}});
    NodeId y = batchNorm(g, x, 1, 7);
    g.addOutput(g.addOp("nn.relu", {y}));
    auto in = randomData(180, 3, -2, 2);
    auto ref = run(g, in);
    Graph s = foldConstant(simplifyInference(g));
    QCOMPARE(countOp(s, "nn.batch_norm"), 0);
    QCOMPARE(countOp(s, "multiply"), 1);
    QCOMPARE(countOp(s, "add"), 1);
    // ExpandBiasToMatchAxis: axis 1 of a 4-D tensor -> [C, 1, 1].
    const Node* mul = firstOp(s, "multiply");
    QCOMPARE(s.node(mul->inputs[1]).type.shape, (Shape{5, 1, 1}));
    QVERIFY(maxRelDiff(ref, run(s, in)) < 1e-5);
}

void TestZoo::testFoldScaleAxis_data() {
    QTest::addColumn<QString>("layout");
    QTest::addRow("NHWC") << QStringLiteral("NHWC");
    QTest::addRow("NCHW") << QStringLiteral("NCHW");
}

// Backward (conv -> BN) and forward (BN -> relu -> conv) folding: every multiply disappears except
// the one after a residual sum with two consumers, which feeds a conv and folds forward too.
void TestZoo::testFoldScaleAxis() {
    QFETCH(QString, layout);
    Graph g = residualBlock(layout.toStdString(), 16, 6, 24);
    auto in = randomData(size_t(g.node(g.inputs()[0]).type.numElements()), 5, -1, 1);
    auto ref = run(g, in);
    Graph s = foldConstant(canonicalizeOps(foldScaleAxis(foldConstant(simplifyInference(g)))));
    QCOMPARE(countOp(s, "multiply"), 0);
    // The first BN's shift stays as add(data, c) (forward fold through add and relu).
    const Node* first = firstOp(s, "add");
    QVERIFY(first);
    QCOMPARE(s.node(first->inputs[0]).kind, NodeKind::Input);
    QVERIFY(maxRelDiff(ref, run(s, in)) < 1e-4);
    // The whole x86 pipeline (winograd is not applicable: CO = 24) keeps the numerics as well.
    Graph o = optimizeForTasks(g);
    QVERIFY(maxRelDiff(ref, run(o, in)) < 1e-4);
}

// A BN on a non-channel axis (mobilenet's stem in NHWC) can be folded neither way.
void TestZoo::testAxisHScaleIsNotFolded() {
    Graph g;
    NodeId x = g.addInput("data", TensorType{{1, 10, 10, 3}});
    NodeId w = constant(g, "w", {3, 3, 3, 8}, 1);
    NodeId c = g.addOp("nn.conv2d", {x, w}, convAttrs({3, 3}, {1, 1}, {1, 1, 1, 1}, "NHWC", "HWIO"));
    NodeId a = g.addOp("nn.relu", {batchNorm(g, c, 1, 9)});
    NodeId dw = constant(g, "dw", {3, 3, 8, 1}, 2);
    g.addOutput(g.addOp("nn.conv2d", {a, dw}, convAttrs({3, 3}, {1, 1}, {1, 1, 1, 1}, "NHWC", "HWOI", 8)));
    auto in = randomData(300, 4, -1, 1);
    auto ref = run(g, in);
    Graph o = optimizeForTasks(g);
    QCOMPARE(countOp(o, "multiply"), 1);
    const Node* mul = firstOp(o, "multiply");
    QCOMPARE(o.node(mul->inputs[1]).type.shape, (Shape{1, 10, 1, 1}));  // [10, 1, 1] expanded by AlterOpLayout
    QVERIFY(maxRelDiff(ref, run(o, in)) < 1e-4);
}

// x86 AlterOpLayout: NHWC 3x3 stride-1 convs with 64 < CO < 512 become winograd with a
// pre-transformed [6, 6, CO, CI] weight; the result matches the direct convolution.
void TestZoo::testWinogradRewrite() {
    Graph g;
    NodeId x = g.addInput("data", TensorType{{1, 9, 9, 16}});
    NodeId w = constant(g, "w", {3, 3, 16, 72}, 11, -0.2f, 0.2f);
    NodeId c = g.addOp("nn.conv2d", {x, w}, convAttrs({3, 3}, {1, 1}, {1, 1, 1, 1}, "NHWC", "HWIO"));
    NodeId w2 = constant(g, "w2", {3, 3, 72, 64}, 12, -0.2f, 0.2f);  // CO = 64: stays direct
    g.addOutput(g.addOp("nn.conv2d", {c, w2}, convAttrs({3, 3}, {1, 1}, {1, 1, 1, 1}, "NHWC", "HWIO")));
    auto in = randomData(9 * 9 * 16, 6, -1, 1);
    auto ref = run(g, in);
    Graph o = optimizeForTasks(g);
    QCOMPARE(countOp(o, "nn.contrib_conv2d_winograd_without_weight_transform"), 1);
    QCOMPARE(countOp(o, "nn.conv2d"), 1);
    const Node* wc = firstOp(o, "nn.contrib_conv2d_winograd_without_weight_transform");
    QCOMPARE(o.node(wc->inputs[1]).kind, NodeKind::Constant);
    QCOMPARE(o.node(wc->inputs[1]).type.shape, (Shape{6, 6, 72, 16}));
    QVERIFY(maxRelDiff(ref, run(o, in)) < 1e-4);
}

// NCHW convs become NCHWc with the fallback blocks; layout transforms surround them; numerics hold.
void TestZoo::testNCHWcRewrite() {
    Graph g = residualBlock("NCHW", 16, 6, 24);
    auto in = randomData(16 * 36, 8, -1, 1);
    auto ref = run(g, in);
    Graph o = optimizeForTasks(g);
    QCOMPARE(countOp(o, "nn.conv2d"), 0);
    QCOMPARE(countOp(o, "nn.contrib_conv2d_NCHWc"), 3);
    const Node* c = firstOp(o, "nn.contrib_conv2d_NCHWc");
    QCOMPARE(c->attrs.getString("data_layout"), std::string("NCHW8c"));
    QCOMPARE(c->attrs.getString("kernel_layout"), std::string("OIHW8i8o"));
    QCOMPARE(o.node(c->inputs[1]).type.shape, (Shape{3, 2, 3, 3, 8, 8}));
    QVERIFY(countOp(o, "layout_transform") >= 2);
    QVERIFY(maxRelDiff(ref, run(o, in)) < 1e-4);
    // Broadcast constants next to blocked tensors are blocked too: [1, C/8, 1, 1, 8].
    for (const auto& n : o.nodes()) {
        if (n.kind == NodeKind::Op && n.op == "add" && o.node(n.inputs[1]).kind == NodeKind::Constant &&
            n.type.shape.size() == 5)
            QCOMPARE(o.node(n.inputs[1]).type.shape, (Shape{1, n.type.shape[1], 1, 1, 8}));
    }
}

void TestZoo::testConvertLayout() {
    Graph g = residualBlock("NCHW", 8, 5, 12);
    auto in = randomData(8 * 25, 9, -1, 1);
    auto ref = run(g, in);
    Graph c = convertLayout(g, "NHWC");
    for (const auto& n : c.nodes())
        if (n.kind == NodeKind::Op && n.op == "nn.conv2d") QCOMPARE(n.attrs.getString("data_layout"), std::string("NHWC"));
    // Activations cross layouts three times: the first conv's input (its BN stays NCHW on the raw
    // input, whose layout Relay does not know), the residual read of the input, and the result;
    // everything between stays NHWC. Plus one transform per weight, folded later.
    QCOMPARE(countOp(c, "layout_transform"), 3 + 3);
    QVERIFY(maxRelDiff(ref, run(c, in)) < 1e-5);
    Graph o = optimizeForTasks(c);
    QCOMPARE(countOp(o, "layout_transform"), 3);
    QVERIFY(maxRelDiff(ref, run(o, in)) < 1e-4);
    QVERIFY_THROWS_EXCEPTION(UserError, convertLayout(g, "HWCN"));
}


// A real NCHW model (PaddleOCR's direction classifier, ONNX): ConvertLayout to NHWC and the whole
// x86 pipeline keep its output (softmax probabilities) for a random image; its tasks are NHWC.
void TestZoo::testPassesOnOnnxModel() {
    OnnxImportOptions opt;
    opt.inputShapes["x"] = {1, 3, 48, 192};
    Graph g = importOnnx("../shared/data/models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx", opt);
    auto in = randomData(3 * 48 * 192, 12, 0, 1);
    auto ref = run(g, in);
    QCOMPARE(int(ref.size()), 2);
    Graph nhwc = convertLayout(g, "NHWC");
    QVERIFY(maxRelDiff(ref, run(nhwc, in)) < 1e-4);
    Graph opt1 = optimizeForTasks(nhwc);
    QVERIFY(maxRelDiff(ref, run(opt1, in)) < 1e-4);
    Graph opt2 = optimizeForTasks(g);  // NCHW -> NCHWc
    QVERIFY(maxRelDiff(ref, run(opt2, in)) < 1e-4);
    auto tasks = extractTasksFromOptimized(opt1);
    QVERIFY(!tasks.empty());
    for (const auto& t : tasks) QVERIFY(t.dag.print(true).find("conv2d_nchw") == std::string::npos);
}

// conv -> add(const) -> relu is one group; params in first-use order: data, weight, bias.
void TestZoo::testFusionEpilogue() {
    Graph g;
    NodeId x = g.addInput("data", TensorType{{1, 8, 8, 4}});
    NodeId w = constant(g, "w", {1, 1, 4, 6}, 1);
    NodeId b = constant(g, "b", {1, 1, 1, 6}, 2);
    NodeId c = g.addOp("nn.conv2d", {x, w}, convAttrs({1, 1}, {1, 1}, {0, 0, 0, 0}, "NHWC", "HWIO"));
    NodeId a = g.addOp("add", {c, b});
    NodeId r = g.addOp("nn.relu", {a});
    NodeId f = g.addOp("nn.batch_flatten", {r});
    Attrs sa;
    sa.set("axis", int64_t(-1));
    g.addOutput(g.addOp("nn.softmax", {f}, sa));
    auto groups = fuseOps(g);
    QCOMPARE(int(groups.size()), 3);
    QCOMPARE(groups[0].name, std::string("fused_nn_conv2d_add_nn_relu"));
    QCOMPARE(groups[0].params, (std::vector<NodeId>{x, w, b}));
    QCOMPARE(groups[0].root, r);
    QCOMPARE(groups[1].name, std::string("fused_nn_batch_flatten"));
    QCOMPARE(groups[2].name, std::string("fused_nn_softmax"));  // softmax never absorbs its producer
}

// The residual sum with two consumers ends the conv's group; a broadcast constant never fuses
// backwards into a non-producer; the second branch of a residual add stays a bare conv.
void TestZoo::testFusionResidualAndSharedValues() {
    Graph g;
    NodeId x = g.addInput("data", TensorType{{1, 6, 6, 4}});
    auto conv = [&](NodeId in, uint32_t seed) {
        NodeId w = constant(g, "w", {1, 1, 4, 4}, seed);
        return g.addOp("nn.conv2d", {in, w}, convAttrs({1, 1}, {1, 1}, {0, 0, 0, 0}, "NHWC", "HWIO"));
    };
    NodeId main = conv(x, 1);
    NodeId sc = conv(x, 2);
    NodeId sum = g.addOp("add", {main, sc});          // residual add: main branch fuses (arg 0)
    NodeId b = constant(g, "b", {1, 1, 1, 4}, 3);
    NodeId pre = g.addOp("nn.relu", {g.addOp("add", {sum, b})});
    NodeId next = conv(pre, 4);
    g.addOutput(g.addOp("add", {next, sum}));  // sum has two consumers
    auto groups = fuseOps(g);
    std::map<std::string, int> names;
    for (const auto& fg : groups) names[fg.name]++;
    QCOMPARE(names["fused_nn_conv2d_add"], 2);  // main + residual, and next + final residual
    QCOMPARE(names["fused_nn_conv2d"], 1);      // the shortcut
    QCOMPARE(names["fused_add_nn_relu"], 1);    // pre-activation: no reduction, never a task
    for (const auto& fg : groups)
        if (fg.root == sum) QCOMPARE(fg.params[2], sc);
}

void TestZoo::testFusionConcatenateAndSoftmax() {
    Graph g;
    NodeId x = g.addInput("data", TensorType{{1, 4, 5, 5}});
    auto convRelu = [&](NodeId in, int64_t co, uint32_t seed) {
        NodeId w = constant(g, "w", {co, 4, 1, 1}, seed);
        NodeId c = g.addOp("nn.conv2d", {in, w}, convAttrs({1, 1}, {1, 1}, {0, 0, 0, 0}, "NCHW", "OIHW"));
        return g.addOp("nn.relu", {c});
    };
    NodeId l = convRelu(x, 3, 1), r = convRelu(x, 5, 2);
    Attrs ca;
    ca.set("axis", int64_t(1));
    NodeId cat = g.addOp("concatenate", {l, r}, ca);
    g.addOutput(g.addOp("nn.relu", {cat}));
    auto groups = fuseOps(g);
    std::map<std::string, int> names;
    for (const auto& fg : groups) names[fg.name]++;
    QCOMPARE(names["fused_nn_conv2d_nn_relu"], 2);  // a tuple never absorbs a conv group
    QCOMPARE(names["fused_concatenate_nn_relu"], 1);
    QCOMPARE(int(groups.size()), 3);
}

void TestZoo::testTypeErrors() {
    Graph g;
    NodeId x = g.addInput("data", TensorType{{1, 8, 8, 4}});
    NodeId w = constant(g, "w", {3, 3, 5, 6}, 1);
    try {
        g.addOp("nn.conv2d", {x, w}, convAttrs({3, 3}, {1, 1}, {1, 1, 1, 1}, "NHWC", "HWIO"), "bad_conv");
        QFAIL("no error for mismatched channels");
    } catch (const UserError& e) {
        QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("bad_conv")));
        QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("channels")));
    }
    NodeId y = constant(g, "y", {3, 4}, 2);
    QVERIFY_THROWS_EXCEPTION(UserError, g.addOp("add", {x, y}));
    Attrs ra;
    ra.set("newshape", Shape{-1, 7});
    QVERIFY_THROWS_EXCEPTION(UserError, g.addOp("reshape", {x}, ra));
    ra.set("newshape", Shape{0, -1});
    QCOMPARE(g.node(g.addOp("reshape", {x}, ra)).type.shape, (Shape{1, 256}));
}

QTEST_APPLESS_MAIN(TestZoo)
#include "tst_zoo.moc"
