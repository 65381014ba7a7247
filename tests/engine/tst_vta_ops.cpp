// SPDX-License-Identifier: Apache-2.0
// VTA's packed operators: conv2d_packed, group_conv2d_packed (grouped and depthwise-like layers),
// dense_packed, add.vta and multiply.vta lowered from their
// AutoTVM configs to instruction streams, run on the simulator and compared bit for bit with the
// plain-loop int8 references; the config spaces (TVM's knobs and index decoding), the configs that
// must be rejected (SRAM, micro-op dependences, 2-D DMA, thread tails), the simulator's counters
// against the loop structure, and the virtual threads' overlap in the cycle model.
#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/vta/packed_ops.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_schedule.h"
#include "test_util.h"

using namespace tb::vta;
using tb::test::userError;

namespace {

Conv2dWorkload conv(int n, int h, int w, int ci, int co, int k, int pad, int stride) {
    Conv2dWorkload wl;
    wl.batch = n, wl.height = h, wl.width = w, wl.inFilter = ci, wl.outFilter = co;
    wl.hkernel = wl.wkernel = k, wl.hpad = wl.wpad = pad, wl.hstride = wl.wstride = stride;
    return wl;
}

Conv2dSchedule convSched(int h, int w, int ci, int co, int ocN, int hN) {
    Conv2dSchedule s;
    s.tileH = h, s.tileW = w, s.tileCi = ci, s.tileCo = co, s.ocNthread = ocN, s.hNthread = hN;
    return s;
}

// The workloads of the tests: resnet-18 layer kinds (TVM's test_benchmark_topi_conv2d.py C2..C11)
// at small spatial sizes and channel counts.
Conv2dWorkload convNamed(const QString& name) {
    if (name == QLatin1String("3x3s1")) return conv(1, 14, 14, 32, 32, 3, 1, 1);    // C8 kind
    if (name == QLatin1String("1x1s2")) return conv(1, 14, 14, 32, 64, 1, 0, 2);    // C10 kind
    if (name == QLatin1String("3x3s2")) return conv(1, 14, 14, 32, 64, 3, 1, 2);    // C9 kind
    if (name == QLatin1String("3x3s1c64")) return conv(1, 7, 7, 64, 32, 3, 1, 1);   // C11 kind
    if (name == QLatin1String("1x1s1")) return conv(1, 8, 8, 64, 32, 1, 0, 1);      // 1x1, whole rows
    if (name == QLatin1String("3x3batch2")) return conv(2, 6, 6, 16, 32, 3, 1, 1);  // two images
    // group_conv2d_packed's (the groups are a column of the tests): depthwise-like with groups =
    // channel blocks, resnext-like with two blocks per group.
    if (name == QLatin1String("dw3x3")) return conv(1, 14, 14, 64, 64, 3, 1, 1);
    if (name == QLatin1String("dw3x3s2")) return conv(1, 14, 14, 32, 32, 3, 1, 2);
    if (name == QLatin1String("dw1x1")) return conv(1, 8, 8, 64, 64, 1, 0, 1);
    if (name == QLatin1String("dw3x3nopad")) return conv(1, 10, 10, 64, 64, 3, 0, 1);
    if (name == QLatin1String("dw3x3small")) return conv(1, 8, 8, 64, 64, 3, 1, 1);
    if (name == QLatin1String("rx1x1")) return conv(1, 8, 8, 128, 128, 1, 0, 1);
    return {};
}

GroupConv2dWorkload grouped(const Conv2dWorkload& wl, int groups) {
    GroupConv2dWorkload g;
    static_cast<Conv2dWorkload&>(g) = wl;
    g.groups = groups;
    return g;
}

// conv2d_packed (groups 1) or group_conv2d_packed through the public entry points.
Conv2dOperands operands(const VtaConfig& cfg, const Conv2dWorkload& wl, int groups, bool bias, uint32_t seed) {
    return groups == 1 ? randomConv2dOperands(cfg, wl, bias, seed) : randomGroupConv2dOperands(cfg, grouped(wl, groups), bias, seed);
}
std::vector<int8_t> reference(const VtaConfig& cfg, const Conv2dWorkload& wl, int groups,
                              const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& ops) {
    return groups == 1 ? conv2dPackedReference(cfg, wl, epilogue, ops)
                       : groupConv2dPackedReference(cfg, grouped(wl, groups), epilogue, ops);
}
PackedOpResult run(Simulator& sim, const Conv2dWorkload& wl, int groups, const Conv2dSchedule& s,
                   const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& ops) {
    return groups == 1 ? runConv2dPacked(sim, wl, s, epilogue, ops)
                       : runGroupConv2dPacked(sim, grouped(wl, groups), s, epilogue, ops);
}
SramUse check(const VtaConfig& cfg, const Conv2dWorkload& wl, int groups, const Conv2dSchedule& s,
              const std::vector<EpilogueOp>& epilogue) {
    return groups == 1 ? checkConv2dSchedule(cfg, wl, s, epilogue) : checkGroupConv2dSchedule(cfg, grouped(wl, groups), s, epilogue);
}

// The loop structure's counters of a conv2d config, computed here from the tiles (not by the
// library): input bytes of every clipped window, weight bytes of every reduction step, GEMM
// iterations, ALU iterations, output and bias bytes. Grouped: C/groups/BI/tile_ci reduction steps;
// the window holds tile_ci + (tile_co - 1) * C/groups/BI channel blocks when a group has one
// output block (TVM's bound box of the input channel index), tile_ci otherwise.
SimStats expectedConvStats(const VtaConfig& cfg, const Conv2dWorkload& wl, const Conv2dSchedule& s, int epilogueOps,
                           bool bias, int groups = 1) {
    const int64_t NB = wl.batch / cfg.batch(), CI = wl.inFilter / cfg.blockIn(), CO = wl.outFilter / cfg.blockOut();
    const int64_t CIg = CI / groups, chans = s.tileCi + (CO / groups == 1 ? (s.tileCo - 1) * CIg : 0);
    const int64_t OH = wl.outHeight(), OW = wl.outWidth();
    const int64_t rows = int64_t(s.tileH - 1) * wl.hstride + wl.hkernel, cols = int64_t(s.tileW - 1) * wl.wstride + wl.wkernel;
    SimStats st;
    int64_t tiles = 0;
    for (int64_t bo = 0; bo < NB; ++bo)
        for (int64_t oh0 = 0; oh0 < OH; oh0 += s.tileH)
            for (int64_t co0 = 0; co0 < CO; co0 += s.tileCo)
                for (int64_t ow0 = 0; ow0 < OW; ow0 += s.tileW) {
                    ++tiles;
                    const int64_t y0 = oh0 * wl.hstride - wl.hpad, x0 = ow0 * wl.wstride - wl.wpad;
                    const int64_t validRows = std::min<int64_t>(wl.height, y0 + rows) - std::max<int64_t>(0, y0);
                    const int64_t validCols = std::min<int64_t>(wl.width, x0 + cols) - std::max<int64_t>(0, x0);
                    for (int64_t ko = 0; ko < CIg / s.tileCi; ++ko) {
                        st.inp_load_nbytes += uint64_t(chans * validRows * validCols * cfg.inpElemBytes());
                        st.wgt_load_nbytes +=
                            uint64_t(int64_t(s.tileCo) * s.tileCi * wl.hkernel * wl.wkernel * cfg.wgtElemBytes());
                    }
                }
    const int64_t outElems = NB * CO * OH * OW;
    st.gemm_counter = uint64_t(outElems * CIg * wl.hkernel * wl.wkernel);
    st.alu_counter = uint64_t(epilogueOps * outElems);
    st.out_store_nbytes = uint64_t(outElems * cfg.outElemBytes());
    st.acc_load_nbytes = bias ? uint64_t(tiles * s.tileCo * cfg.accElemBytes()) : 0;
    return st;
}

SimStats withoutUops(SimStats s) {
    s.uop_load_nbytes = 0;
    return s;
}

}  // namespace

class TestVtaOps : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // --- config spaces ---------------------------------------------------------------------
    void testConv2dSpaceDecodesTvmRecord() {
        // A conv2d_packed.vta record of TVM 0.8 (resnet-18's last 3x3 layer, 512 channels at 7x7):
        // index 241 = tile_h [-1, 7], tile_w [-1, 1], tile_ci [-1, 1], tile_co [-1, 16], oc_nthread 2.
        const VtaConfig cfg;
        const auto space = conv2dConfigSpace(conv(1, 7, 7, 512, 512, 3, 1, 1), cfg);
        QCOMPARE(space.numKnobs(), size_t(7));
        const char* names[] = {"tile_b", "tile_h", "tile_w", "tile_ci", "tile_co", "oc_nthread", "h_nthread"};
        for (size_t i = 0; i < 7; ++i) QCOMPARE(space.knobName(i), std::string(names[i]));
        QCOMPARE(space.dims(), (std::vector<int64_t>{1, 2, 2, 6, 6, 2, 2}));
        QCOMPARE(space.size(), int64_t(576));
        const Conv2dSchedule s = Conv2dSchedule::fromConfig(space.get(241));
        QCOMPARE(s, convSched(7, 1, 1, 16, 2, 1));
        QCOMPARE(QString::fromStdString(space.get(241).entityJson().dump()),
                 QStringLiteral(R"([["tile_b","sp",[-1,1]],["tile_h","sp",[-1,7]],["tile_w","sp",[-1,1]],)"
                                R"(["tile_ci","sp",[-1,1]],["tile_co","sp",[-1,16]],["oc_nthread","ot",2],["h_nthread","ot",1]])"));
        // The knob values are tiles; the index round-trips through the entity.
        for (int64_t i = 0; i < space.size(); ++i) QCOMPARE(space.indexOf(space.get(i)), std::optional<int64_t>(i));
    }

    void testDenseAndAluSpaces() {
        const VtaConfig cfg;
        DenseWorkload d{16, 512, 1024};
        const auto ds = denseConfigSpace(d, cfg);
        QCOMPARE(ds.numKnobs(), size_t(4));
        QCOMPARE(ds.knobName(0), std::string("tile_b"));
        QCOMPARE(ds.knobName(3), std::string("oc_nthread"));
        // tile_b over 16 batch blocks (5 divisors), tile_ci over 32 (6), tile_co over 64 (7), 2 threads.
        QCOMPARE(ds.dims(), (std::vector<int64_t>{5, 6, 7, 2}));
        const DenseSchedule last = DenseSchedule::fromConfig(ds.get(ds.size() - 1));
        QCOMPARE(last, (DenseSchedule{16, 32, 64, 2}));

        AluWorkload a;
        a.channels = 256, a.height = 14, a.width = 14;
        const auto as = aluConfigSpace(a, cfg);
        QCOMPARE(as.knobName(0), std::string("tile_co"));
        QCOMPARE(as.knobName(1), std::string("tile_h"));
        QCOMPARE(as.knobName(2), std::string("tile_w"));
        QCOMPARE(as.dims(), (std::vector<int64_t>{5, 4, 4}));
        // First knob least significant: index 1 is tile_co 2, index 5 is tile_h 2.
        QCOMPARE(AluSchedule::fromConfig(as.get(1)), (AluSchedule{2, 1, 1}));
        QCOMPARE(AluSchedule::fromConfig(as.get(5)), (AluSchedule{1, 2, 1}));
        QVERIFY(userError([&] { denseConfigSpace(DenseWorkload{1, 100, 64}, cfg); }).contains(QLatin1String("in_feat 100")));
    }

    // --- conv2d against the reference ---------------------------------------------------------
    void testConv2dMatchesReference_data() {
        QTest::addColumn<QString>("workload");
        QTest::addColumn<int>("h");
        QTest::addColumn<int>("w");
        QTest::addColumn<int>("ci");
        QTest::addColumn<int>("co");
        QTest::addColumn<int>("ocN");
        QTest::addColumn<int>("hN");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<int>("groups");
        QTest::addRow("3x3s1 rows7 full-width") << "3x3s1" << 7 << 14 << 1 << 1 << 1 << 1 << true << 1;
        QTest::addRow("3x3s1 oc threads") << "3x3s1" << 7 << 14 << 1 << 1 << 2 << 1 << true << 1;
        QTest::addRow("3x3s1 h threads co2") << "3x3s1" << 7 << 14 << 1 << 2 << 1 << 2 << false << 1;
        QTest::addRow("3x3s1 one column") << "3x3s1" << 14 << 1 << 1 << 2 << 1 << 1 << true << 1;
        QTest::addRow("1x1s2 co2 oc threads") << "1x1s2" << 7 << 7 << 1 << 2 << 2 << 1 << false << 1;
        QTest::addRow("1x1s2 one row co4") << "1x1s2" << 1 << 7 << 1 << 4 << 1 << 1 << true << 1;
        QTest::addRow("3x3s2 oc threads") << "3x3s2" << 7 << 7 << 1 << 2 << 2 << 1 << true << 1;
        QTest::addRow("3x3s2 one column") << "3x3s2" << 7 << 1 << 1 << 4 << 1 << 1 << false << 1;
        QTest::addRow("3x3s1c64 oc threads") << "3x3s1c64" << 7 << 7 << 1 << 1 << 2 << 1 << true << 1;
        QTest::addRow("1x1s1 ci2 whole rows") << "1x1s1" << 4 << 8 << 2 << 2 << 1 << 1 << true << 1;
        QTest::addRow("1x1s1 four threads") << "1x1s1" << 4 << 8 << 4 << 1 << 2 << 2 << false << 1;
        QTest::addRow("3x3batch2 oc threads") << "3x3batch2" << 6 << 6 << 1 << 1 << 2 << 1 << true << 1;
        // group_conv2d_packed.vta (each group reduces over its own channel blocks).
        QTest::addRow("dw3x3 rows7") << "dw3x3" << 7 << 14 << 1 << 1 << 1 << 1 << true << 4;
        QTest::addRow("dw3x3 oc threads") << "dw3x3" << 7 << 14 << 1 << 1 << 2 << 1 << true << 4;
        QTest::addRow("dw3x3 h threads") << "dw3x3" << 7 << 14 << 1 << 1 << 1 << 2 << false << 4;
        QTest::addRow("dw3x3s2 oc threads") << "dw3x3s2" << 7 << 7 << 1 << 1 << 2 << 1 << true << 2;
        QTest::addRow("dw1x1 co4 window of 4 blocks") << "dw1x1" << 4 << 8 << 1 << 4 << 1 << 1 << true << 4;
        QTest::addRow("dw1x1 four threads") << "dw1x1" << 4 << 8 << 1 << 1 << 2 << 2 << false << 4;
        QTest::addRow("dw3x3nopad co2") << "dw3x3nopad" << 8 << 8 << 1 << 2 << 1 << 1 << true << 4;
        QTest::addRow("rx3x3 co2 in one group") << "dw3x3" << 7 << 14 << 1 << 2 << 1 << 1 << true << 2;
        QTest::addRow("rx3x3 oc threads") << "dw3x3" << 7 << 14 << 1 << 1 << 2 << 1 << false << 2;
        QTest::addRow("rx1x1 ci2 co2") << "rx1x1" << 4 << 8 << 2 << 2 << 1 << 1 << true << 4;
        QTest::addRow("rx1x1 four threads") << "rx1x1" << 4 << 8 << 2 << 1 << 2 << 2 << true << 4;
    }
    void testConv2dMatchesReference() {
        QFETCH(QString, workload);
        QFETCH(int, h);
        QFETCH(int, w);
        QFETCH(int, ci);
        QFETCH(int, co);
        QFETCH(int, ocN);
        QFETCH(int, hN);
        QFETCH(bool, bias);
        QFETCH(int, groups);
        const VtaConfig cfg;
        const Conv2dWorkload wl = convNamed(workload);
        const Conv2dSchedule s = convSched(h, w, ci, co, ocN, hN);
        const auto epilogue = conv2dEpilogue(bias);
        const Conv2dOperands ops = operands(cfg, wl, groups, bias, 7);
        const auto ref = reference(cfg, wl, groups, epilogue, ops);
        // The reference is not degenerate: the clip leaves both zeros and positive values.
        QVERIFY(std::count(ref.begin(), ref.end(), 0) > 0);
        QVERIFY(std::count_if(ref.begin(), ref.end(), [](int8_t v) { return v > 0; }) > 0);
        Simulator sim(cfg);
        const PackedOpResult r = run(sim, wl, groups, s, epilogue, ops);
        QVERIFY(r.output == ref);
        QCOMPARE(withoutUops(r.report.stats), expectedConvStats(cfg, wl, s, int(epilogue.size()), bias, groups));
        QVERIFY(r.report.stats.uop_load_nbytes > 0);
        QCOMPARE(r.report.macs, uint64_t(grouped(wl, groups).macs()));
        QCOMPARE(check(cfg, wl, groups, s, epilogue).threads, ocN * hN);
        if (groups == 1) {
            // One group is conv2d_packed: group_conv2d_packed gives the same reference and output.
            const GroupConv2dWorkload one = grouped(wl, 1);
            QVERIFY(groupConv2dPackedReference(cfg, one, epilogue, ops) == ref);
            Simulator sim1(cfg);
            QVERIFY(runGroupConv2dPacked(sim1, one, s, epilogue, ops).output == ref);
        }
    }

    // Every config of two small spaces either instantiates and then equals the reference bit for
    // bit, or is rejected with a tb::UserError naming the template; both happen.
    void testConv2dWholeSpace_data() {
        QTest::addColumn<QString>("workload");
        QTest::addColumn<int>("groups");
        QTest::addRow("1x1s1") << "1x1s1" << 1;
        QTest::addRow("3x3s1c64") << "3x3s1c64" << 1;
        QTest::addRow("dw3x3small groups4") << "dw3x3small" << 4;
    }
    void testConv2dWholeSpace() {
        QFETCH(QString, workload);
        QFETCH(int, groups);
        const VtaConfig cfg;
        const Conv2dWorkload wl = convNamed(workload);
        const auto epilogue = conv2dEpilogue(true);
        const Conv2dOperands ops = operands(cfg, wl, groups, true, 11);
        const auto ref = reference(cfg, wl, groups, epilogue, ops);
        const auto space = groups == 1 ? conv2dConfigSpace(wl, cfg) : groupConv2dConfigSpace(grouped(wl, groups), cfg);
        const QString prefix = groups == 1 ? QStringLiteral("VTA conv2d_packed.vta config [")
                                           : QStringLiteral("VTA group_conv2d_packed.vta config [");
        int ran = 0, rejected = 0, threaded = 0;
        for (int64_t i = 0; i < space.size(); ++i) {
            const Conv2dSchedule s = Conv2dSchedule::fromConfig(space.get(i));
            Simulator sim(cfg);
            try {
                const PackedOpResult r = run(sim, wl, groups, s, epilogue, ops);
                QVERIFY2(r.output == ref, s.str().c_str());
                QCOMPARE(r.report.stats.gemm_counter, uint64_t(grouped(wl, groups).macs() / cfg.peakMacsPerCycle()));
                ++ran;
                threaded += s.ocNthread * s.hNthread > 1;
            } catch (const tb::UserError& e) {
                QVERIFY2(QString::fromUtf8(e.what()).startsWith(prefix), e.what());
                ++rejected;
            }
        }
        qInfo("%s: %lld configs, %d ran bit-exact (%d with virtual threads), %d rejected", qPrintable(workload),
              static_cast<long long>(space.size()), ran, threaded, rejected);
        QVERIFY(ran > 0);
        QVERIFY(threaded > 0);
        QVERIFY(rejected > 0);
    }

    // --- dense and ALU ops ----------------------------------------------------------------------
    void testDenseMatchesReference_data() {
        QTest::addColumn<int>("b");
        QTest::addColumn<int>("ci");
        QTest::addColumn<int>("co");
        QTest::addColumn<int>("ocN");
        QTest::addRow("whole") << 1 << 16 << 8 << 1;
        QTest::addRow("b2 ci4 co2 threads") << 2 << 4 << 2 << 2;
        QTest::addRow("b4 ci1 co1") << 4 << 1 << 1 << 1;
        QTest::addRow("b1 ci2 co4 threads") << 1 << 2 << 4 << 2;
    }
    void testDenseMatchesReference() {
        QFETCH(int, b);
        QFETCH(int, ci);
        QFETCH(int, co);
        QFETCH(int, ocN);
        const VtaConfig cfg;
        const DenseWorkload wl{4, 256, 128};
        const DenseSchedule s{b, ci, co, ocN};
        const auto epilogue = clipEpilogue(8);
        const DenseOperands ops = randomDenseOperands(cfg, wl, 5);
        const auto ref = densePackedReference(cfg, wl, epilogue, ops);
        QVERIFY(std::count_if(ref.begin(), ref.end(), [](int8_t v) { return v > 0; }) > 0);
        Simulator sim(cfg);
        const PackedOpResult r = runDensePacked(sim, wl, s, epilogue, ops);
        QVERIFY(r.output == ref);
        // Loop structure: per batch row and reduction step one 1 x tile_ci input load and one
        // tile_co x tile_ci weight load, per output tile group of every row.
        const int64_t rows = 4, CI = 16, CO = 8;
        QCOMPARE(r.report.stats.gemm_counter, uint64_t(rows * CI * CO));
        QCOMPARE(r.report.stats.inp_load_nbytes, uint64_t((CO / co) * rows * CI * cfg.inpElemBytes()));
        QCOMPARE(r.report.stats.wgt_load_nbytes, uint64_t(rows * CO * CI * cfg.wgtElemBytes()));
        QCOMPARE(r.report.stats.alu_counter, uint64_t(3 * rows * CO));
        QCOMPARE(r.report.stats.out_store_nbytes, uint64_t(rows * CO * cfg.outElemBytes()));
    }

    void testAluOpsMatchReference_data() {
        QTest::addColumn<bool>("multiply");
        QTest::addColumn<bool>("lhs8");
        QTest::addColumn<bool>("rhs8");
        QTest::addColumn<int>("shift");
        QTest::addColumn<int>("co");
        QTest::addColumn<int>("h");
        QTest::addColumn<int>("w");
        QTest::addRow("add int32 whole") << false << false << false << 0 << 4 << 8 << 8;
        QTest::addRow("add int32 shift rows") << false << false << false << 2 << 1 << 2 << 8;
        QTest::addRow("add int8+int32 single row") << false << true << false << 0 << 2 << 1 << 8;
        QTest::addRow("multiply int8 columns") << true << true << true << 0 << 1 << 8 << 2;
        QTest::addRow("multiply int32 shift") << true << false << false << 9 << 4 << 4 << 8;
    }
    void testAluOpsMatchReference() {
        QFETCH(bool, multiply);
        QFETCH(bool, lhs8);
        QFETCH(bool, rhs8);
        QFETCH(int, shift);
        QFETCH(int, co);
        QFETCH(int, h);
        QFETCH(int, w);
        const VtaConfig cfg;
        AluWorkload wl;
        wl.op = multiply ? AluOpKind::Multiply : AluOpKind::Add;
        wl.channels = 64, wl.height = 8, wl.width = 8, wl.lhsInt8 = lhs8, wl.rhsInt8 = rhs8;
        const auto epilogue = clipEpilogue(shift);
        const AluOperands ops = randomAluOperands(cfg, wl, 3);
        const auto ref = aluPackedReference(cfg, wl, epilogue, ops);
        QVERIFY(std::count(ref.begin(), ref.end(), 0) > 0);
        QVERIFY(std::count_if(ref.begin(), ref.end(), [](int8_t v) { return v > 0 && v < 127; }) > 0);
        Simulator sim(cfg);
        const PackedOpResult r = runAluPacked(sim, wl, AluSchedule{co, h, w}, epilogue, ops);
        QVERIFY(r.output == ref);
        const uint64_t n = 4 * 8 * 8;  // accumulator vectors
        QCOMPARE(r.report.stats.alu_counter, n * (1 + epilogue.size()));
        QCOMPARE(r.report.stats.acc_load_nbytes, 2 * n * uint64_t(cfg.accElemBytes()));  // counted at acc width, as TVM
        QCOMPARE(r.report.stats.gemm_counter, uint64_t(0));
    }

    // --- configs that must be rejected ------------------------------------------------------
    void testRejectedConfigs_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("message");
        QTest::addRow("inp overflow") << 0 << "the inp tiles need 3364 elements";
        QTest::addRow("acc overflow") << 1 << "the acc tiles need 3136 elements";
        QTest::addRow("wgt overflow") << 2 << "the wgt tiles need 2304 elements";
        QTest::addRow("accumulator written twice in a row") << 3 << "writes accumulator";
        QTest::addRow("padded window over two channel blocks") << 4 << "tile_ci=2 channel blocks is not one 2-D DMA";
        QTest::addRow("output tile not 2-D") << 5 << "output tile of 2 channel blocks x 7 rows x 7 columns is not one 2-D DMA";
        QTest::addRow("oc thread tail") << 6 << "oc_nthread 2 does not divide the 1 output-channel tiles";
        QTest::addRow("alu tile overflow") << 7 << "the acc tiles need 8192 elements";
        QTest::addRow("dense weights overflow") << 8 << "the wgt tiles need 2048 elements";
        QTest::addRow("tile does not divide") << 9 << "tile_h 3 does not divide the axis of 14";
        // group_conv2d_packed.vta and its workloads.
        QTest::addRow("grouped tile spans groups") << 10 << "tile_co=4 blocks spans groups of 2 output blocks";
        QTest::addRow("padded depthwise window of two blocks") << 11 << "a padded input window of 2 channel blocks";
        QTest::addRow("grouped tile_ci over a group") << 12 << "tile_ci 2 does not divide the axis of 1";
        QTest::addRow("depthwise window box overflows inp") << 13 << "the inp tiles need 6272 elements";
        QTest::addRow("depthwise accumulator written twice") << 14 << "writes accumulator";
        QTest::addRow("groups do not divide") << 15 << "groups 3 does not divide";
        QTest::addRow("group not whole blocks") << 16 << "in_filter / groups 8 is not a multiple of BLOCK_IN 16";
        QTest::addRow("groups not positive") << 17 << "groups must be positive";
        QTest::addRow("grouped padding too large") << 18 << "VTA group_conv2d_packed 1x64x8x8 -> 64 groups 4, 3x3 pad 3 stride 1: padding (3, 3) must be smaller";
    }
    void testRejectedConfigs() {
        QFETCH(int, which);
        QFETCH(QString, message);
        const VtaConfig cfg;
        const auto epi = conv2dEpilogue(false);
        const QString msg = userError([&] {
            switch (which) {
            case 0: checkConv2dSchedule(cfg, conv(1, 56, 56, 64, 64, 3, 1, 1), convSched(56, 56, 1, 1, 1, 1), epi); break;
            case 1: checkConv2dSchedule(cfg, conv(1, 14, 14, 16, 256, 1, 0, 1), convSched(14, 14, 1, 16, 1, 1), epi); break;
            case 2: checkConv2dSchedule(cfg, conv(1, 9, 9, 256, 256, 3, 0, 1), convSched(7, 7, 16, 16, 1, 1), epi); break;
            case 3: checkConv2dSchedule(cfg, convNamed(QStringLiteral("3x3s1")), convSched(1, 14, 1, 1, 1, 1), epi); break;
            case 4: checkConv2dSchedule(cfg, convNamed(QStringLiteral("3x3s1")), convSched(7, 14, 2, 1, 1, 1), epi); break;
            case 5: checkConv2dSchedule(cfg, convNamed(QStringLiteral("3x3s1")), convSched(7, 7, 1, 2, 1, 1), epi); break;
            case 6: checkConv2dSchedule(cfg, convNamed(QStringLiteral("3x3s1")), convSched(7, 14, 1, 2, 2, 1), epi); break;
            case 7: {
                AluWorkload a;
                a.channels = 64, a.height = 32, a.width = 32;
                checkAluSchedule(cfg, a, AluSchedule{4, 32, 32}, clipEpilogue(0));
                break;
            }
            case 8: checkDenseSchedule(cfg, DenseWorkload{1, 1024, 512}, DenseSchedule{1, 64, 16, 2}, clipEpilogue(8)); break;
            case 9: checkConv2dSchedule(cfg, convNamed(QStringLiteral("3x3s1")), convSched(3, 14, 1, 1, 1, 1), epi); break;
            case 10: check(cfg, convNamed(QStringLiteral("rx1x1")), 4, convSched(4, 8, 1, 4, 1, 1), epi); break;
            case 11: check(cfg, convNamed(QStringLiteral("dw3x3")), 4, convSched(7, 14, 1, 2, 1, 1), epi); break;
            case 12: check(cfg, convNamed(QStringLiteral("dw3x3")), 4, convSched(7, 14, 2, 1, 1, 1), epi); break;
            case 13: check(cfg, conv(1, 56, 56, 1024, 1024, 1, 0, 1), 64, convSched(56, 56, 1, 2, 1, 1), epi); break;
            case 14: check(cfg, convNamed(QStringLiteral("dw3x3")), 4, convSched(1, 14, 1, 1, 1, 1), epi); break;
            case 15: grouped(convNamed(QStringLiteral("dw3x3small")), 3).validate(cfg); break;
            case 16: grouped(convNamed(QStringLiteral("dw3x3small")), 8).validate(cfg); break;
            case 17: grouped(convNamed(QStringLiteral("dw3x3small")), 0).validate(cfg); break;
            case 18: grouped(conv(1, 8, 8, 64, 64, 3, 3, 1), 4).validate(cfg); break;
            }
        });
        QVERIFY2(msg.contains(message), qPrintable(msg));
        QVERIFY2(msg.startsWith(QLatin1String("VTA ")), qPrintable(msg));
        // The running path rejects the config the same way, before anything runs.
        if (which == 3) {
            Simulator sim(cfg);
            const Conv2dWorkload wl = convNamed(QStringLiteral("3x3s1"));
            const QString run = userError([&] {
                runConv2dPacked(sim, wl, convSched(1, 14, 1, 1, 1, 1), epi, randomConv2dOperands(cfg, wl, false, 1));
            });
            QVERIFY2(run.contains(message), qPrintable(run));
            QCOMPARE(sim.stats(), SimStats{});
        }
        if (which == 10) {
            Simulator sim(cfg);
            const Conv2dWorkload wl = convNamed(QStringLiteral("rx1x1"));
            const QString run = userError([&] {
                runGroupConv2dPacked(sim, grouped(wl, 4), convSched(4, 8, 1, 4, 1, 1), epi, operands(cfg, wl, 4, false, 1));
            });
            QVERIFY2(run.contains(message), qPrintable(run));
            QCOMPARE(sim.stats(), SimStats{});
            // A conv2d's kernel is the wrong size for the grouped operator.
            const QString wrong = userError([&] {
                runGroupConv2dPacked(sim, grouped(wl, 4), convSched(4, 8, 1, 1, 1, 1), epi, operands(cfg, wl, 1, false, 1));
            });
            QVERIFY2(wrong.contains(QLatin1String("group_conv2d_packed: kernel has 16384 values, the packed layout needs 4096")),
                     qPrintable(wrong));
        }
    }

    void testMalformedOperands() {
        const VtaConfig cfg;
        const Conv2dWorkload wl = convNamed(QStringLiteral("3x3s1"));
        Conv2dOperands ops = randomConv2dOperands(cfg, wl, true, 1);
        ops.kernel.pop_back();
        Simulator sim(cfg);
        const QString msg =
            userError([&] { runConv2dPacked(sim, wl, convSched(7, 14, 1, 1, 1, 1), conv2dEpilogue(true), ops); });
        QVERIFY2(msg.contains(QLatin1String("kernel has 9215 values, the packed layout needs 9216")), qPrintable(msg));
        AluWorkload a;
        a.channels = 16, a.height = 2, a.width = 2, a.lhsInt8 = true;
        AluOperands ao = randomAluOperands(cfg, a, 1);
        ao.lhs[3] = 300;
        QVERIFY(userError([&] { aluPackedReference(cfg, a, clipEpilogue(0), ao); }).contains(QLatin1String("int8 lhs value 300")));
        QVERIFY(userError([&] { runDensePacked(sim, DenseWorkload{1, 16, 16}, DenseSchedule{},
                                                                       conv2dEpilogue(true), randomDenseOperands(cfg, DenseWorkload{1, 16, 16}, 1)); })
                    .contains(QLatin1String("bias add is only supported in conv2d_packed")));
    }

    // --- virtual threads in the cycle model -----------------------------------------------------
    // Load-bound cases (the load module is busier than compute): with two virtual threads the loads
    // of one SRAM copy run while the GEMMs of the other compute, so the run takes fewer cycles; the
    // work (busy cycles per module, counters) is the same.
    void testVirtualThreadsOverlapLoads() {
        const VtaConfig cfg = VtaConfig::forTarget("pynq");
        {
            const Conv2dWorkload wl = conv(1, 14, 14, 64, 64, 3, 1, 1);
            const auto epi = conv2dEpilogue(false);
            const auto ops = randomConv2dOperands(cfg, wl, false, 2);
            Simulator s1(cfg), s2(cfg);
            const auto one = runConv2dPacked(s1, wl, convSched(7, 1, 1, 1, 1, 1), epi, ops);
            const auto two = runConv2dPacked(s2, wl, convSched(7, 1, 1, 1, 2, 1), epi, ops);
            QVERIFY(one.output == two.output);
            QVERIFY(one.report.busyCycles[0] > one.report.busyCycles[1]);  // load-bound
            QCOMPARE(withoutUops(one.report.stats), withoutUops(two.report.stats));
            qInfo("conv2d 3x3 14x14x64: %llu cycles with 1 thread, %llu with 2 (load busy %llu, compute busy %llu)",
                  static_cast<unsigned long long>(one.report.cycles), static_cast<unsigned long long>(two.report.cycles),
                  static_cast<unsigned long long>(one.report.busyCycles[0]),
                  static_cast<unsigned long long>(one.report.busyCycles[1]));
            QVERIFY(two.report.cycles < one.report.cycles);
        }
        {
            const DenseWorkload wl{1, 1024, 256};
            const auto ops = randomDenseOperands(cfg, wl, 2);
            Simulator s1(cfg), s2(cfg);
            const auto one = runDensePacked(s1, wl, DenseSchedule{1, 8, 4, 1}, clipEpilogue(8), ops);
            const auto two = runDensePacked(s2, wl, DenseSchedule{1, 8, 4, 2}, clipEpilogue(8), ops);
            QVERIFY(one.output == two.output);
            QVERIFY(one.report.busyCycles[0] > one.report.busyCycles[1]);
            QCOMPARE(withoutUops(one.report.stats), withoutUops(two.report.stats));
            QVERIFY(two.report.cycles < one.report.cycles);
        }
    }
};

QTEST_APPLESS_MAIN(TestVtaOps)
#include "tst_vta_ops.moc"
