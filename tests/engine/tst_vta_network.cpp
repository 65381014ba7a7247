// SPDX-License-Identifier: Apache-2.0
// Seed 004's compiler side on VTA: quantize -> graph_pack -> task extraction (add.vta,
// multiply.vta, conv2d_packed.vta with the seed's filter and merge) -> the network run with the
// packed convolutions on the VTA simulator, bit-equal to the host integer reference.
#include <QtTest>

#include <cstdio>
#include <random>

#include "engine/graph/int_interpreter.h"
#include "engine/graph/passes/quantize.h"
#include "engine/graph/zoo.h"
#include "engine/vta/graph_pack.h"
#include "engine/vta/packed_ops.h"
#include "engine/vta/vta_network.h"
#include "engine/vta/vta_schedule.h"
#include "test_util.h"

using namespace tb;
using namespace tb::graph;

namespace {

HostTensor randomImage(std::vector<int64_t> shape, uint32_t seed) {
    HostTensor t;
    t.shape = std::move(shape);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int64_t k = 0; k < t.numElements(); ++k) t.f.push_back(u(rng));
    return t;
}

double maxDiff(const HostTensor& a, const HostTensor& b) {
    double m = 0;
    for (int64_t k = 0; k < a.numElements(); ++k) m = std::max(m, std::fabs(a.value(k) - b.value(k)));
    return m;
}

void printTasks(const char* net, const vta::TaskExtraction& t) {
    std::printf("%s: extracted %d, after filter %d, after merge %zu\n", net, t.extracted, t.filtered, t.tasks.size());
    for (const auto& k : t.tasks)
        std::printf("  %-18s x%-2d %s%s\n", k.name.c_str(), k.count, k.argsString().c_str(),
                    k.rhsScalar ? " (scalar rhs merged)" : k.rhsBroadcast ? " (per-channel rhs)" : "");
}

int countTasks(const vta::TaskExtraction& t, const std::string& name) {
    int n = 0;
    for (const auto& k : t.tasks) n += k.name == name;
    return n;
}

}  // namespace

class TestVtaNetwork : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testResnetTasks_data();
    void testResnetTasks();
    void testResnet18RunEqualsReference();
    void testAluChainConfigChangesTimeNotOutput();
};

void TestVtaNetwork::testResnetTasks_data() {
    QTest::addColumn<QString>("net");
    QTest::addRow("resnet-18") << QStringLiteral("resnet-18");
    QTest::addRow("resnet-50") << QStringLiteral("resnet-50");
}

void TestVtaNetwork::testResnetTasks() {
    QFETCH(QString, net);
    const auto cfg = vta::VtaConfig::forTarget("sim");
    Graph q = quantize(makeNetwork(net.toStdString(), 1, "NCHW"));
    Graph p = vta::graphPack(q, cfg.batch(), cfg.blockOut(), cfg.wgtWidth());
    auto alu = vta::extractVtaTasks(p, cfg, {"add", "multiply"});
    printTasks(net.toUtf8().constData(), alu);
    auto conv = vta::extractVtaTasks(p, cfg, {"conv2d"});
    printTasks(net.toUtf8().constData(), conv);
    // Derived from the architecture (relay.testing resnet v2, NCHW, 224x224, BLOCK 16): every
    // stage's first unit has dim_match False, so a 1x1 projection shortcut. resnet-18: 4 stages x
    // 2 units x 2 convs + 4 shortcuts = 20 packed convs (conv0, float by skip_conv_layers [0],
    // is before max_pool and outside the packed region). Distinct shapes: per stage the 3x3
    // in->out (stride), the 3x3 out->out and the 1x1 shortcut = 12, and stage 1's first 3x3 is
    // 64->64 stride 1 like its second: 11. resnet-50: 16 bottleneck units x 3 convs + 4
    // shortcuts = 52 packed convs in 19 shapes (printed above).
    const bool r18 = net == QLatin1String("resnet-18");
    QCOMPARE(conv.extracted, r18 ? 20 : 52);
    QCOMPARE(int(conv.tasks.size()), r18 ? 11 : 19);
    QCOMPARE(countTasks(conv, "conv2d_packed.vta"), r18 ? 11 : 19);
    // ALU: every add/multiply; the float ones before the first quantized conv (bn_data shift,
    // conv0 bias, the first unit's bn1 scale and shift) and after global_avg_pool (dense bias)
    // are dropped by the filter; after the scalar-rhs merge, per stage one (lhs, per-channel
    // constant) task and one (lhs, lhs) task, plus the final bn1 multiply: 4 x 2 + 1 = 9 for
    // resnet-18; resnet-50 has two activation shapes per stage (width and 4x width): 17.
    // resnet-18 in detail, per stage s (its output shape; a unit's bn1 works on its input shape,
    // so the first unit of stage s+1 counts for stage s):
    // - per-channel adds: the 2 conv1 biases (bn2 folded) + 2 bn1 shifts (unit 2 of s, unit 1 of
    //   s+1; in stage 1 unit 1's bn1 is float, and in stage 4 the second is the final bn1's shift)
    //   = 4;
    // - scalar adds (rounding before each requantize right_shift): 5 conv epilogues (conv1, conv2
    //   of both units, the 1x1 shortcut) + 2 bn1 chains = 7; full-tensor adds: 2 residual adds;
    // so 4 + 7 + 2 = 13 occurrences per stage, x 4 = 52, + the final bn1 multiply = 53 packed
    // (plus 7 float32: bn_data, conv0 bias, unit 1's bn1 scale and shift, the dense's input
    // scale and bias = 60 extracted). TVM's extract_from_program returns each (name, args) once:
    // per stage 3 tasks (per-channel, scalar, tensor) + the multiply = 13 ("Extracted 13 alu
    // tasks"); the seed's merge folds the scalar task into the tensor one: 2 x 4 + 1 = 9.
    if (r18) {
        QCOMPARE(int(alu.unmerged.size()), 13);
        for (const auto& k : alu.tasks)
            if (k.name == "add.vta") QCOMPARE(k.count, k.rhsBroadcast ? 4 : 9);
    }
    QCOMPARE(alu.extracted, r18 ? 60 : 140);
    QCOMPARE(alu.filtered, r18 ? 53 : 133);
    QCOMPARE(int(alu.tasks.size()), r18 ? 9 : 17);
    QCOMPARE(countTasks(alu, "multiply.vta"), 1);
}

void TestVtaNetwork::testResnet18RunEqualsReference() {
    const auto cfg = vta::VtaConfig::forTarget("sim");
    Graph q = quantize(makeNetwork("resnet-18", 1, "NCHW"));
    Graph p = vta::graphPack(q, cfg.batch(), cfg.blockOut(), cfg.wgtWidth());
    HostTensor img = randomImage({1, 3, 224, 224}, 7);
    QElapsedTimer t;
    t.start();
    auto ref = runIntGraph(q, {img});
    std::printf("reference %.1f s\n", t.elapsed() / 1e3);
    t.restart();
    auto run = vta::runNetworkOnVta(p, cfg, {img});
    std::printf("vta run %.1f s: %d convs on VTA, %d on host, simulated %.3f ms, host %.2f s\n", t.elapsed() / 1e3,
                run.vtaConvs, run.hostConvs, run.vtaSeconds * 1e3, run.hostSeconds);
    for (auto& r : run.hostReasons) std::printf("  host: %s %s: %s\n", r.op.c_str(), r.node.c_str(), r.reason.c_str());
    for (auto& k : run.tasks)
        std::printf("  %s %s x%d %.3f ms [%s]\n", k.name.c_str(), vta::workloadStr(k.wl).c_str(), k.occurrences,
                    k.seconds * 1e3, k.schedule.c_str());
    for (auto& [op, n] : run.vtaOps) std::printf("  vta %s x%d\n", op.c_str(), n);
    for (auto& [op, n] : run.hostOps) std::printf("  host %s x%d\n", op.c_str(), n);
    std::printf("  stats %s\n", run.stats.toJson().c_str());
    // The placement vta_network.h derives for resnet-18: all 20 packed convs with their epilogues;
    // 6 ALU kernels (4 identity-unit bn1 chains with a per-channel rhs, the last residual add,
    // the final bn1 multiply); 40 of the 53 packed int32 add/multiply nodes on VTA (28 in conv
    // epilogues, 12 in ALU kernels), 13 on the host (their chains end in a clip with 2 consumers)
    // plus the 7 float32 ones.
    QCOMPARE(run.vtaConvs, 20);
    QCOMPARE(run.hostConvs, 0);
    QCOMPARE(run.aluKernels, 6);
    QCOMPARE(run.vtaOps["add"] + run.vtaOps["multiply"], 40);
    QCOMPARE(run.vtaOps["multiply"], 1);
    int twoConsumers = 0, float32 = 0;
    for (const auto& h : run.hostReasons) {
        twoConsumers += h.reason.find("has 2 consumers") != std::string::npos;
        float32 += h.reason.rfind("float32", 0) == 0;
    }
    QCOMPARE(twoConsumers, 13);
    QCOMPARE(float32, 7);
    QCOMPARE(run.hostOps["add"] + run.hostOps["multiply"], 20);
    int aluTasks = 0;
    for (const auto& k : run.tasks) aluTasks += k.name != "conv2d_packed.vta" ? k.occurrences : 0;
    QCOMPARE(aluTasks, 6);
    QCOMPARE(run.outputs.size(), ref.size());
    std::printf("max diff %g\n", maxDiff(run.outputs[0], ref[0]));
    QVERIFY(run.outputs[0] == ref[0]);
}

// add.vta with a per-channel rhs and a fused chain (per-channel add, relu, rounding add, shifts,
// clip): equal to the plain-loop reference for the fallback and a larger tile; the config changes
// the simulated time, never the output.
void TestVtaNetwork::testAluChainConfigChangesTimeNotOutput() {
    const auto cfg = vta::VtaConfig::forTarget("sim");
    vta::AluWorkload wl;
    wl.channels = 64, wl.height = 8, wl.width = 8, wl.rhsBroadcast = true;
    vta::AluOperands ops = vta::randomAluOperands(cfg, wl, 5);
    QCOMPARE(ops.rhs.size(), size_t(64));
    ops.channel.push_back(std::vector<int32_t>(64));
    for (size_t k = 0; k < 64; ++k) ops.channel[0][k] = int32_t(k * 37 % 201) - 100;
    using K = vta::EpilogueKind;
    const std::vector<vta::EpilogueOp> chain{{K::AddChannel, 0}, {K::MaxImm, 0}, {K::AddImm, 4}, {K::ShlImm, 2},
                                             {K::ShrImm, 3}, {K::MinImm, 127}, {K::MaxImm, -127}};
    const auto ref = vta::aluPackedReference(cfg, wl, chain, ops);
    const auto space = vta::aluConfigSpace(wl, cfg);
    std::vector<double> times;
    for (int64_t index : {int64_t(0), space.size() - 1}) {
        const auto sched = vta::AluSchedule::fromConfig(space.get(index));
        vta::Simulator sim(cfg);
        const auto res = vta::runAluPacked(sim, wl, sched, chain, ops);
        QVERIFY(res.output == ref);
        times.push_back(res.report.timeSeconds());
        std::printf("add.vta per-channel %s: %.3f us\n", sched.str().c_str(), times.back() * 1e6);
    }
    QVERIFY(times[1] < times[0]);
    // Without the per-channel constant the epilogue cannot run (named error).
    ops.channel.clear();
    const QString err = tb::test::userError([&] { vta::aluPackedReference(cfg, wl, chain, ops); });
    QVERIFY2(err.contains(QStringLiteral("per-channel constants")), qPrintable(err));
}

QTEST_APPLESS_MAIN(TestVtaNetwork)
#include "tst_vta_network.moc"
