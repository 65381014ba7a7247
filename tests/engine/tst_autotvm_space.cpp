// SPDX-License-Identifier: Apache-2.0
// engine/autotvm: knob spaces and index <-> config decoding against values worked out by hand from
// TVM v0.14's definitions (python/tvm/autotvm/task/space.py, topi/{x86,arm_cpu,mali}), the
// templates' knob lists, `log check` on the three TopHub logs, and reading AutoTVM v0.1 lines.
#include <QtTest>

#include <QTemporaryDir>

#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "engine/autotvm/log_check.h"
#include "engine/autotvm/space.h"
#include "engine/autotvm/template.h"
#include "engine/record/log_summary.h"
#include "engine/record/record_io.h"
#include "engine/support/error.h"

using namespace tb::autotvm;
using ojson = nlohmann::ordered_json;
using I64s = std::vector<std::int64_t>;
using Rows = std::vector<I64s>;
using Names = std::vector<std::string>;

Q_DECLARE_METATYPE(I64s)
Q_DECLARE_METATYPE(Rows)
Q_DECLARE_METATYPE(Names)

namespace {

const std::string kLogs = "../shared/data/logs/autotvm/";

Rows splitSizes(const TransformSpace& s) {
    Rows out;
    for (const auto& e : s.entities()) out.push_back(std::get<SplitEntity>(e).size);
    return out;
}

std::vector<std::vector<std::string>> annotations(const TransformSpace& s) {
    std::vector<std::vector<std::string>> out;
    for (const auto& e : s.entities()) out.push_back(std::get<AnnotateEntity>(e).anns);
    return out;
}

std::vector<std::string> knobNames(const ConfigSpace& s) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < s.numKnobs(); ++i) out.push_back(s.knobName(i));
    return out;
}

ojson tensor(I64s shape) { return ojson::array({"TENSOR", shape, "float32"}); }

// Three lines of TopHub's mali_v0.01.log (tlc-pack/tophub), written by TVM 0.4/0.5: log version
// 0.1, the old task names and a template key per config.
const char* const kV01Lines[] = {
    R"({"i": ["opencl -model=rk3399 -device=mali", "topi_nn_conv2d", [["TENSOR", [1, 3, 224, 224], "float32"], ["TENSOR", [64, 3, 3, 3], "float32"], [2, 2], [1, 1], "NCHW", "float32"], {}, ["conv2d", [1, 3, 224, 224, "float32"], [64, 3, 3, 3, "float32"], [2, 2], [1, 1], "NCHW", "float32"], {"i": 2465835, "c": null, "t": "direct", "e": [["tile_co", "sp", [4, 4, 4]], ["tile_oh", "sp", [112, 1, 1]], ["tile_ow", "sp", [2, 14, 4]], ["reorder_0", "re", [0, 1, 2, 3, 4, 5, 6, 9, 7, 8]], ["ann_reduce", "an", ["none", "unroll"]], ["ann_spatial", "an", ["none", "unroll", "vec"]]]}], "v": 0.1, "r": [[0.003503452], 0, 0.631648063659668, 1534784665.5832863]})",
    R"({"i": ["opencl -model=rk3399 -device=mali", "topi_nn_conv2d", [["TENSOR", [1, 64, 13, 13], "float32"], ["TENSOR", [256, 64, 3, 3], "float32"], [1, 1], [1, 1], "NCHW", "float32"], {}, ["conv2d", [1, 64, 13, 13, "float32"], [256, 64, 3, 3, "float32"], [1, 1], [1, 1], "NCHW", "float32"], {"i": 13112, "c": null, "t": "winograd", "e": [["tile_bna", "ot", 4], ["tile_bnb", "ot", 4], ["tile_t1", "sp", [1, 64]], ["tile_t2", "sp", [64, 4]], ["c_unroll", "sp", [32, 2]], ["yt", "ot", 4]]}], "v": 0.1, "r": [[0.001856853125], 0, 0.8097231388092041, 1534791707.3338065]})",
    R"({"i": ["opencl -model=rk3399 -device=mali", "topi_nn_dense", [["TENSOR", [1, 4096], "float32"], ["TENSOR", [1000, 4096], "float32"], ["TENSOR", [1000], "float32"]], {}, ["dense", [1, 4096, "float32"], [1000, 4096, "float32"], [1000, "float32"]], {"i": 411, "c": null, "t": "direct", "e": [["tile_y", "sp", [1, 1, 1]], ["tile_x", "sp", [8, 125, 1]], ["c_unroll", "sp", [256, 16]]]}], "v": 0.1, "r": [[0.003311912875], 0, 0.4886302947998047, 1534818043.061828]})",
};

}  // namespace

class TestAutotvmSpace : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testFactorLists() {
        QCOMPARE(getFactors(12), (I64s{1, 2, 3, 4, 6, 12}));
        QCOMPARE(getFactors(1), (I64s{1}));
        QCOMPARE(getFactors(49), (I64s{1, 7, 49}));
        QCOMPARE(getPow2s(12), (I64s{1, 2, 4, 8}));
        QCOMPARE(getPow2s(16), (I64s{1, 2, 4, 8, 16}));
    }

    // `list(set(get_factors(n)) | set(get_pow2s(n)))` as CPython 3.11 prints it: small sets come
    // out sorted, larger ones in hash-table order.
    void testVerboseFactorOrder_data() {
        QTest::addColumn<qint64>("n");
        QTest::addColumn<I64s>("order");
        QTest::addRow("7") << qint64(7) << I64s{1, 2, 4, 7};
        QTest::addRow("12") << qint64(12) << I64s{1, 2, 3, 4, 6, 8, 12};
        QTest::addRow("28") << qint64(28) << I64s{1, 2, 4, 7, 8, 14, 16, 28};
        QTest::addRow("56") << qint64(56) << I64s{32, 1, 2, 4, 7, 8, 14, 16, 56, 28};
        QTest::addRow("112") << qint64(112) << I64s{32, 1, 2, 64, 4, 7, 8, 14, 16, 112, 56, 28};
        QTest::addRow("224") << qint64(224) << I64s{64, 1, 2, 128, 4, 7, 8, 14, 16, 28, 32, 224, 112, 56};
        QTest::addRow("150") << qint64(150) << I64s{64, 1, 2, 3, 4, 5, 6, 128, 8, 10, 75, 15, 16, 150, 25, 30, 32, 50};
        QTest::addRow("1000") << qint64(1000)
                              << I64s{64, 1, 2, 128, 4, 5, 256, 512, 8, 200, 10, 16, 20, 25, 32, 100, 40, 1000, 50, 500, 250, 125};
    }
    void testVerboseFactorOrder() {
        QFETCH(qint64, n);
        QFETCH(I64s, order);
        QCOMPARE(verboseFactors(n), order);
    }

    // Entities in TVM's DFS order: the innermost factor (last) varies slowest.
    void testSplitSpace_data() {
        QTest::addColumn<qint64>("length");
        QTest::addColumn<QString>("policy");
        QTest::addColumn<int>("outputs");
        QTest::addColumn<qint64>("maxFactor");
        QTest::addColumn<qint64>("innermostAtMost");  // 0: no filter
        QTest::addColumn<Rows>("entities");
        const qint64 noMax = qint64(1) << 31;
        QTest::addRow("factors 4, 2 outputs") << qint64(4) << "factors" << 2 << noMax << qint64(0)
                                              << Rows{{-1, 1}, {-1, 2}, {-1, 4}};
        QTest::addRow("factors 4, 3 outputs")
            << qint64(4) << "factors" << 3 << noMax << qint64(0)
            << Rows{{-1, 1, 1}, {-1, 2, 1}, {-1, 4, 1}, {-1, 1, 2}, {-1, 2, 2}, {-1, 1, 4}};
        QTest::addRow("factors 12, max_factor 4") << qint64(12) << "factors" << 2 << qint64(4) << qint64(0)
                                                  << Rows{{-1, 1}, {-1, 2}, {-1, 3}, {-1, 4}};
        QTest::addRow("factors 16, filter <= 4") << qint64(16) << "factors" << 2 << noMax << qint64(4)
                                                 << Rows{{-1, 1}, {-1, 2}, {-1, 4}};
        QTest::addRow("factors 1") << qint64(1) << "factors" << 2 << noMax << qint64(0) << Rows{{-1, 1}};
        // power2 may leave a tail: 8 does not divide 10 but is kept.
        QTest::addRow("power2 10") << qint64(10) << "power2" << 2 << noMax << qint64(0)
                                   << Rows{{-1, 1}, {-1, 2}, {-1, 4}, {-1, 8}};
        // products above the length are dropped (2*8, 4*4, ...).
        QTest::addRow("power2 8, 3 outputs")
            << qint64(8) << "power2" << 3 << noMax << qint64(0)
            << Rows{{-1, 1, 1}, {-1, 2, 1}, {-1, 4, 1}, {-1, 8, 1}, {-1, 1, 2}, {-1, 2, 2}, {-1, 4, 2}, {-1, 1, 4},
                    {-1, 2, 4}, {-1, 1, 8}};
        QTest::addRow("verbose 12") << qint64(12) << "verbose" << 2 << noMax << qint64(0)
                                    << Rows{{-1, 1}, {-1, 2}, {-1, 3}, {-1, 4}, {-1, 6}, {-1, 8}, {-1, 12}};
        // conv2d_NCHWc.x86's tile_ow for an output width of 112: set order, then y.size[-1] <= 64.
        QTest::addRow("verbose 112, filter <= 64")
            << qint64(112) << "verbose" << 2 << noMax << qint64(64)
            << Rows{{-1, 32}, {-1, 1}, {-1, 2}, {-1, 64}, {-1, 4}, {-1, 7}, {-1, 8}, {-1, 14}, {-1, 16}, {-1, 56}, {-1, 28}};
    }
    void testSplitSpace() {
        QFETCH(qint64, length);
        QFETCH(QString, policy);
        QFETCH(int, outputs);
        QFETCH(qint64, maxFactor);
        QFETCH(qint64, innermostAtMost);
        QFETCH(Rows, entities);
        SplitOptions o;
        o.policy = policy.toStdString();
        o.numOutputs = outputs;
        o.maxFactor = maxFactor;
        if (innermostAtMost) o.filter = [&](const SplitEntity& e) { return e.size.back() <= innermostAtMost; };
        const SplitSpace s(length, o);
        QCOMPARE(s.kind(), KnobKind::Split);
        QCOMPARE(s.product(), std::int64_t(length));
        QCOMPARE(splitSizes(s), entities);
    }

    void testSplitSpaceCounts() {
        // Ordered factorizations n = a*b*c: prod over primes of C(e+2, 2).
        SplitOptions three;
        three.numOutputs = 3;
        QCOMPARE(SplitSpace(1000, three).size(), std::size_t(100));  // 2^3 5^3: 10 * 10
        QCOMPARE(SplitSpace(960, three).size(), std::size_t(252));   // 2^6 3 5: 28 * 3 * 3
        QCOMPARE(SplitSpace(7, three).size(), std::size_t(3));
        SplitOptions cand;
        cand.policy = "candidate";
        cand.numOutputs = 3;
        cand.candidate = {{1, 4, 4}, {4, 1, 4}};
        QCOMPARE(splitSizes(SplitSpace(16, cand)), (Rows{{1, 4, 4}, {4, 1, 4}}));
        SplitOptions bad;
        bad.numOutputs = 2;
        bad.policy = "fancy";
        QVERIFY_THROWS_EXCEPTION(tb::UserError, SplitSpace(8, bad));
        bad.policy = "factors";
        bad.numOutputs = 0;
        QVERIFY_THROWS_EXCEPTION(tb::UserError, SplitSpace(8, bad));
    }

    void testReorderSpace() {
        auto perms = [](const TransformSpace& s) {
            std::vector<std::vector<int>> out;
            for (const auto& e : s.entities()) out.push_back(std::get<ReorderEntity>(e).perm);
            return out;
        };
        using P = std::vector<std::vector<int>>;
        QCOMPARE(perms(ReorderSpace(3, "identity")), (P{{0, 1, 2}}));
        QCOMPARE(perms(ReorderSpace(3, "all")), (P{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}));
        QCOMPARE(ReorderSpace(5, "all").size(), std::size_t(120));
        ReorderOptions interval;
        interval.interval = {1, 3};
        QCOMPARE(perms(ReorderSpace(4, "interval_all", interval)), (P{{0, 1, 2, 3}, {0, 2, 1, 3}}));
        ReorderOptions cand;
        cand.candidate = {{0, 1, 2, 3}, {0, 3, 1, 2}};
        QCOMPARE(perms(ReorderSpace(4, "candidate", cand)), cand.candidate);
        QVERIFY_THROWS_EXCEPTION(tb::UserError, ReorderSpace(3, "shuffle"));
    }

    void testAnnotateSpace() {
        using A = std::vector<std::vector<std::string>>;
        QCOMPARE(annotations(AnnotateSpace(2, "try_unroll")),
                 (A{{"none", "none"}, {"none", "unroll"}, {"unroll", "none"}, {"unroll", "unroll"}}));
        // 3^3 combinations minus the 7 with two or three "vec".
        const AnnotateSpace uv(3, "try_unroll_vec");
        QCOMPARE(uv.size(), std::size_t(20));
        QCOMPARE(annotations(uv)[2], (std::vector<std::string>{"none", "none", "vec"}));
        QCOMPARE(annotations(uv)[19], (std::vector<std::string>{"vec", "unroll", "unroll"}));
        QCOMPARE(annotations(AnnotateSpace(2, "try_unroll_vec")),
                 (A{{"none", "none"}, {"none", "unroll"}, {"none", "vec"}, {"unroll", "none"}, {"unroll", "unroll"},
                    {"unroll", "vec"}, {"vec", "none"}, {"vec", "unroll"}}));
        QCOMPARE(annotations(AnnotateSpace(2, "unroll")), (A{{"unroll", "unroll"}}));
        QCOMPARE(AnnotateSpace(2, "vec").size(), std::size_t(0));  // two vec axes: never kept
        QCOMPARE(annotations(AnnotateSpace(1, "try_vec")), (A{{"none"}, {"vec"}}));
        QCOMPARE(annotations(AnnotateSpace(5, "bind_gpu")),
                 (A{{"fuse", "blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"}}));
        QCOMPARE(annotations(AnnotateSpace(2, "bind_gpu")), (A{{"blockIdx.x", "threadIdx.x"}}));
        QCOMPARE(annotations(AnnotateSpace(7, "bind_gpu_virtual")),
                 (A{{"fuse", "blockIdx.y", "blockIdx.x", "vthread", "vthread", "threadIdx.y", "threadIdx.x"}}));
        const AnnotateSpace cache(4, "locate_cache", 2);
        std::vector<std::vector<int>> anchors;
        for (const auto& e : cache.entities()) anchors.push_back(std::get<AnnotateEntity>(e).anchors);
        QCOMPARE(anchors, (std::vector<std::vector<int>>{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}));
        QCOMPARE(entityValueJson(cache[1]).dump(), std::string("[0,2]"));
        QVERIFY_THROWS_EXCEPTION(tb::UserError, AnnotateSpace(2, "try_fuse"));
        QVERIFY_THROWS_EXCEPTION(tb::UserError, AnnotateSpace(1, "bind_gpu"));
    }

    // index = k0 + 4*k1 + 8*k2: the first-defined knob is the least significant digit.
    void testConfigSpaceIndexRoundTrip() {
        ConfigSpace cfg;
        SplitOptions two;
        two.numOutputs = 2;
        cfg.defineSplit("tile", 8, two);             // [-1,1] [-1,2] [-1,4] [-1,8]
        cfg.defineAnnotate("ann", 1, "try_unroll");  // [none] [unroll]
        cfg.defineKnob("k", {1, 2, 4});
        QCOMPARE(cfg.dims(), (I64s{4, 2, 3}));
        QCOMPARE(cfg.rangeLength(), std::int64_t(24));
        QCOMPARE(cfg.size(), std::int64_t(24));
        QCOMPARE(knobNames(cfg), (std::vector<std::string>{"tile", "ann", "k"}));

        const ConfigEntity c = cfg.get(13);  // 13 = 1 + 4*1 + 8*1
        QCOMPARE(c.split("tile").size, (I64s{-1, 2}));
        QCOMPARE(c.annotate("ann").anns, (std::vector<std::string>{"unroll"}));
        QCOMPARE(c.knobValue("k"), ojson(2));
        QCOMPARE(c.toJson().dump(),
                 std::string(R"({"index":13,"code_hash":null,"entity":[["tile","sp",[-1,2]],["ann","an",["unroll"]],["k","ot",2]]})"));
        QCOMPARE(cfg.get(22).entityJson().dump(), std::string(R"([["tile","sp",[-1,4]],["ann","an",["unroll"]],["k","ot",4]])"));
        QCOMPARE(cfg.pointToKnob(13), (I64s{1, 1, 1}));
        for (std::int64_t i = 0; i < cfg.rangeLength(); ++i) {
            const ConfigEntity e = cfg.get(i);
            QCOMPARE(cfg.indexOf(e), std::optional<std::int64_t>(i));
            QCOMPARE(cfg.knobToPoint(cfg.pointToKnob(i)), i);
            QCOMPARE(cfg.indexOf(ConfigEntity::fromJson(e.toJson())), std::optional<std::int64_t>(i));
        }
        QVERIFY_THROWS_EXCEPTION(tb::UserError, cfg.get(24));
        QVERIFY_THROWS_EXCEPTION(tb::UserError, cfg.get(-1));
        QVERIFY_THROWS_EXCEPTION(tb::UserError, cfg.defineKnob("k", {1}));  // defined twice

        cfg.multiFilter([](const ConfigEntity& e) { return e.split("tile").size[1] * e.knobValue("k").get<int>() <= 4; });
        // tile 1: k 1,2,4 (3); tile 2: k 1,2 (2); tile 4: k 1 (1); times 2 annotations.
        QCOMPARE(cfg.size(), std::int64_t(12));
        QVERIFY(cfg.isIndexValid(13));
        QVERIFY(!cfg.isIndexValid(22));
        QVERIFY_THROWS_EXCEPTION(tb::UserError, cfg.get(22));
    }

    // An explicit outermost factor equals -1 when it is what -1 stands for.
    void testSplitComparisonRule() {
        ConfigSpace cfg;
        SplitOptions two;
        two.numOutputs = 2;
        cfg.defineSplit("t", 12, two);  // index 3: [-1, 4]
        SplitOptions verbose = two;
        verbose.policy = "verbose";
        cfg.defineSplit("v", 12, verbose);  // [1 2 3 4 6 8 12]: index 5 is [-1, 8], a tail split
        const ConfigEntity c = cfg.get(3 + 6 * 5);
        auto mismatch = [&](const char* entity) { return entityMismatch(ojson::parse(entity), c, cfg).has_value(); };
        QVERIFY(!mismatch(R"([["t", "sp", [-1, 4]], ["v", "sp", [-1, 8]]])"));
        QVERIFY(!mismatch(R"([["t", "sp", [3, 4]], ["v", "sp", [2, 8]]])"));  // 3*4 = 12; ceil(12/8) = 2
        QVERIFY(mismatch(R"([["t", "sp", [4, 4]], ["v", "sp", [-1, 8]]])"));
        QVERIFY(mismatch(R"([["t", "sp", [6, 2]], ["v", "sp", [-1, 8]]])"));
        QVERIFY(mismatch(R"([["t", "sp", [-1, 4]], ["v", "sp", [1, 8]]])"));
        QVERIFY(mismatch(R"([["t", "sp", [-1, 4]], ["w", "sp", [-1, 8]]])"));
        QVERIFY(mismatch(R"([["t", "sp", [-1, 4]]])"));
        QVERIFY(mismatch(R"([["t", "sp", [-1, 4]], ["v", "ot", 8]])"));
    }

    // Each template's knobs (TVM's names and order) and their candidate counts for one task,
    // counted by hand from the TVM source.
    void testTemplateSpaces_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("args");
        QTest::addColumn<Names>("knobs");
        QTest::addColumn<I64s>("dims");
        auto row = [](const char* tag, const char* name, ojson args, Names knobs, I64s dims) {
            QTest::addRow("%s", tag) << QString::fromLatin1(name) << QString::fromStdString(args.dump()) << knobs << dims;
        };
        const Names spatialPack{"tile_co", "tile_oh", "tile_ow", "reorder_0", "ann_reduce", "ann_spatial"};
        // ic 3: 2 factors; oc 64: 7; ow = (224-7+6)//2+1 = 112: 11 verbose splits with inner <= 64.
        row("x86 conv 7x7", "conv2d_NCHWc.x86",
            {tensor({1, 3, 224, 224}), tensor({64, 3, 7, 7}), {2, 2}, {3, 3, 3, 3}, {1, 1}, "NCHW", "NCHW", "float32"},
            {"tile_ic", "tile_oc", "tile_ow", "unroll_kw"}, {2, 7, 11, 2});
        // 1x1: tile_oh [1, 2] instead of unroll_kw; ow 28: verbose {1 2 4 7 8 14 16 28}.
        row("x86 conv 1x1", "conv2d_NCHWc.x86",
            {tensor({1, 64, 56, 56}), tensor({128, 64, 1, 1}), {2, 2}, {0, 0, 0, 0}, {1, 1}, "NCHW", "NCHW", "float32"},
            {"tile_ic", "tile_oc", "tile_ow", "tile_oh"}, {7, 8, 8, 2});
        // ow 112: 10 divisors, 112 itself filtered out.
        row("x86 depthwise", "depthwise_conv2d_NCHWc.x86",
            {tensor({1, 32, 112, 112}), tensor({32, 1, 3, 3}), {1, 1}, {1, 1, 1, 1}, {1, 1}, "NCHW", "NCHW", "float32"},
            {"tile_ic", "tile_oc", "tile_ow", "unroll_kw"}, {6, 6, 9, 2});
        row("x86 dense_nopack", "dense_nopack.x86", {tensor({1, 512}), tensor({1000, 512}), nullptr, "float32"},
            {"tile_y", "tile_x", "tile_k"}, {1, 16, 10});
        // M 8 in 3 parts: C(5,2) = 10; N 1000: 100; K 512: 10; tile_inner of 8 with inner <= 16: 4.
        row("x86 dense_pack", "dense_pack.x86", {tensor({8, 512}), tensor({1000, 512}), nullptr, "float32"},
            {"tile_y", "tile_x", "tile_k", "tile_inner"}, {10, 100, 10, 4});
        row("arm spatial pack", "conv2d_nchw_spatial_pack.arm_cpu",
            {tensor({1, 64, 56, 56}), tensor({64, 64, 3, 3}), {1, 1}, {1, 1, 1, 1}, {1, 1}, "float32"}, spatialPack,
            {7, 8, 8, 2, 4, 20});
        // P = 1 * 2 * 2 tiles of 4x4: {1,2,4}; K 32 and C 128 with inner <= 16: 5 each.
        row("arm winograd", "conv2d_nchw_winograd.arm_cpu",
            {tensor({1, 128, 7, 7}), tensor({32, 128, 3, 3}), {1, 1}, {1, 1, 1, 1}, {1, 1}, "float32"},
            {"tile_p", "tile_k", "tile_c", "ann_reduce", "ann_spatial"}, {3, 5, 5, 2, 8});
        row("arm depthwise", "depthwise_conv2d_nchw.arm_cpu",
            {tensor({1, 960, 7, 7}), tensor({960, 1, 3, 3}), {1, 1}, {1, 1, 1, 1}, {1, 1}, "float32"},
            {"tile_c", "tile_h", "tile_w", "ann"}, {28, 2, 2, 20});
        // co 128 in 3 parts: C(9,2) = 36; oh, ow 7: 3.
        row("mali spatial pack", "conv2d_nchw_spatial_pack.mali",
            {tensor({1, 992, 7, 7}), tensor({128, 992, 1, 1}), {1, 1}, {0, 0, 0, 0}, {1, 1}, "float32"}, spatialPack,
            {36, 3, 3, 2, 4, 20});
        // bna: {1,2,4,8,16} all divide 32; t1: 128 (max 128): 8; t2: 32: 6; c_unroll (max 8): 4.
        row("mali winograd", "conv2d_nchw_winograd.mali",
            {tensor({1, 128, 7, 7}), tensor({32, 128, 3, 3}), {1, 1}, {1, 1, 1, 1}, {1, 1}, "float32"},
            {"tile_bna", "tile_bnb", "tile_t1", "tile_t2", "c_unroll", "yt"}, {5, 5, 8, 6, 4, 6});
        row("mali depthwise", "depthwise_conv2d_nchw.mali",
            {tensor({1, 960, 7, 7}), tensor({960, 1, 3, 3}), {1, 1}, {1, 1, 1, 1}, {1, 1}, "float32"},
            {"tile_c", "tile_y", "tile_x", "ann_spatial"}, {252, 3, 3, 20});
        row("mali dense", "dense.mali", {tensor({1, 1024}), tensor({1000, 1024}), tensor({1000}), nullptr},
            {"tile_y", "tile_x", "c_unroll"}, {1, 100, 7});
    }
    void testTemplateSpaces() {
        QFETCH(QString, name);
        QFETCH(QString, args);
        QFETCH(Names, knobs);
        QFETCH(I64s, dims);
        const Template* t = findTemplate(name.toStdString());
        QVERIFY(t);
        QCOMPARE(QString::fromStdString(t->name()), name);
        const ConfigSpace cfg = t->space(ojson::parse(args.toStdString()));
        QCOMPARE(knobNames(cfg), knobs);
        QCOMPARE(cfg.dims(), dims);
    }

    void testTemplateRegistry() {
        QCOMPARE(allTemplates().size(), std::size_t(11));
        QVERIFY(!findTemplate("conv2d_transpose_nchw.arm_cpu"));
        QVERIFY(!findTemplate("topi_nn_conv2d"));
        // Cases TVM's templates assert against cannot be built.
        const Template* wino = findTemplate("conv2d_nchw_winograd.arm_cpu");
        const ojson stride2 = {tensor({1, 64, 56, 56}), tensor({64, 64, 3, 3}), {2, 2}, {1, 1, 1, 1}, {1, 1}, "float32"};
        QVERIFY_THROWS_EXCEPTION(tb::UserError, wino->space(stride2));
        const ojson multiplier2 = {tensor({1, 32, 56, 56}), tensor({64, 2, 3, 3}), {1, 1}, {1, 1, 1, 1}, {1, 1},
                                   "NCHW", "NCHW", "float32"};
        QVERIFY_THROWS_EXCEPTION(tb::UserError, findTemplate("depthwise_conv2d_NCHWc.x86")->space(multiplier2));
        QVERIFY_THROWS_EXCEPTION(tb::UserError, findTemplate("dense.mali")->space(ojson::array({"x"})));
    }

    // Record indices decoded by hand (mixed radix over the dims of testTemplateSpaces).
    void testDecodeTopHubIndices() {
        // arm winograd, index 1165 = 1 + 3*(3 + 5*(2 + 5*(1 + 2*7))).
        const ConfigEntity w = findTemplate("conv2d_nchw_winograd.arm_cpu")
                                   ->space({tensor({1, 128, 7, 7}), tensor({32, 128, 3, 3}), {1, 1}, {1, 1, 1, 1}, {1, 1}, "float32"})
                                   .get(1165);
        QCOMPARE(w.entityJson().dump(),
                 std::string(R"([["tile_p","sp",[-1,2]],["tile_k","sp",[-1,8]],["tile_c","sp",[-1,4]],)"
                             R"(["ann_reduce","an",["unroll"]],["ann_spatial","an",["vec","unroll"]]])"));
        // mali dense, index 407 = 0 + 1*(7 + 100*4): tile_x entity 7 is [-1, 25, 1].
        const ConfigEntity d =
            findTemplate("dense.mali")->space({tensor({1, 1024}), tensor({1000, 1024}), tensor({1000}), nullptr}).get(407);
        QCOMPARE(d.entityJson().dump(),
                 std::string(R"([["tile_y","sp",[-1,1,1]],["tile_x","sp",[-1,25,1]],["c_unroll","sp",[-1,16]]])"));
        // x86 conv 7x7, index 193 = 1 + 2*(5 + 7*(2 + 11*1)): tile_ow entity 2 of the verbose list
        // is [-1, 2]; TopHub's 2018 record (factors policy then) says [14, 8].
        const ConfigEntity x = findTemplate("conv2d_NCHWc.x86")
                                   ->space({tensor({1, 3, 224, 224}), tensor({64, 3, 7, 7}), {2, 2}, {3, 3, 3, 3}, {1, 1},
                                            "NCHW", "NCHW", "float32"})
                                   .get(193);
        QCOMPARE(x.entityJson().dump(), std::string(R"([["tile_ic","sp",[-1,3]],["tile_oc","sp",[-1,32]],)"
                                                     R"(["tile_ow","sp",[-1,2]],["unroll_kw","ot",false]])"));
    }

    // `log check` on TopHub's logs. Mali decodes completely; x86 only where tile_ow's change to
    // the verbose policy (2019) left the index's meaning intact; ARM completely except two vtacpu
    // records whose entity does not fit their own workload (checked below).
    void testTopHubLogCheck_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<Names>("templates");
        QTest::addColumn<QList<int>>("counts");  // records, checked, agree per template
        QTest::addColumn<Names>("unknown");
        QTest::addRow("arm_cpu") << "tophub_arm_cpu_v0.08.log"
                                 << Names{"conv2d_nchw_spatial_pack.arm_cpu", "conv2d_nchw_winograd.arm_cpu",
                                                "depthwise_conv2d_nchw.arm_cpu"}
                                 << QList<int>{961, 961, 959, 105, 105, 105, 90, 90, 90}
                                 << Names{"conv2d_transpose_nchw.arm_cpu"};
        QTest::addRow("mali") << "tophub_mali_v0.06.log"
                              << Names{"conv2d_nchw_spatial_pack.mali", "conv2d_nchw_winograd.mali", "dense.mali",
                                             "depthwise_conv2d_nchw.mali"}
                              << QList<int>{406, 406, 406, 63, 63, 63, 14, 14, 14, 45, 45, 45} << Names{};
        QTest::addRow("llvm") << "tophub_llvm_v0.04.log" << Names{"conv2d_NCHWc.x86"} << QList<int>{35, 35, 7} << Names{};
    }
    void testTopHubLogCheck() {
        QFETCH(QString, file);
        QFETCH(Names, templates);
        QFETCH(QList<int>, counts);
        QFETCH(Names, unknown);
        const std::string path = kLogs + file.toStdString();
        const auto log = tb::record::readAutoTvmRecords(path);
        const LogCheckReport r = checkLogFile(path);
        QCOMPARE(r.records, int(log.records.size()));
        Names gotTemplates;
        QList<int> gotCounts;
        int checked = 0, agree = 0, implemented = 0;
        for (const auto& [name, c] : r.templates) {
            gotTemplates.push_back(name);
            gotCounts << c.records << c.checked << c.agree;
            checked += c.checked;
            agree += c.agree;
            implemented += c.records;
        }
        QCOMPARE(gotTemplates, templates);
        QCOMPARE(gotCounts, counts);
        Names gotUnknown;
        int unknownRecords = 0;
        for (const auto& [name, n] : r.unknownTemplates) {
            gotUnknown.push_back(name);
            unknownRecords += n;
        }
        QCOMPARE(gotUnknown, unknown);
        QCOMPARE(implemented + unknownRecords, r.records);
        QCOMPARE(r.checked, checked);
        QCOMPARE(r.agree, agree);
        QCOMPARE(r.disagree, checked - agree);
        QCOMPARE(int(r.disagreements.size()), r.disagree);
        QVERIFY(r.unchecked.empty());
        QVERIFY(r.badLines.empty());

        // Each disagreement of the ARM log is a record whose recorded splits do not even multiply
        // to their axis lengths: tile_co must multiply to the kernel's output channels.
        if (file.startsWith(QLatin1String("tophub_arm"))) {
            QCOMPARE(r.disagreements.size(), std::size_t(2));
            for (const auto& d : r.disagreements) {
                const auto& rec = log.records[std::size_t(
                    std::find(log.recordLines.begin(), log.recordLines.end(), d.line) - log.recordLines.begin())];
                const std::int64_t co = rec.args[1][1][0].get<std::int64_t>();
                const auto size = rec.config["entity"][0][2].get<I64s>();
                QCOMPARE(rec.config["entity"][0][0].get<std::string>(), std::string("tile_co"));
                QVERIFY(std::accumulate(size.begin(), size.end(), std::int64_t(1), std::multiplies<>()) != co);
            }
        }
    }

    // v0.1 lines are read, marked, written back unchanged, summarized under version 0.1 and never checked.
    void testV01Records() {
        std::string text;
        for (const char* l : kV01Lines) text += std::string(l) + "\n";
        const auto log = tb::record::parseAutoTvmRecords(text);
        QCOMPARE(log.records.size(), std::size_t(3));
        QVERIFY(log.badLines.empty());
        const auto& r = log.records[0];
        QVERIFY(r.isV01());
        QCOMPARE(r.taskName, std::string("topi_nn_conv2d"));
        QCOMPARE(r.target, std::string("opencl -model=rk3399 -device=mali"));
        QCOMPARE(r.configIndex(), std::int64_t(2465835));
        QCOMPARE(r.v01->templateKey, std::string("direct"));
        QCOMPARE(r.v01->workload[0].get<std::string>(), std::string("conv2d"));
        QCOMPARE(r.config["entity"][0].dump(), std::string(R"(["tile_co","sp",[4,4,4]])"));
        QCOMPARE(r.costs, std::vector<double>{0.003503452});
        QCOMPARE(r.timestamp, 1534784665.5832863);
        QVERIFY(!r.tvmVersion);
        QCOMPARE(log.records[1].v01->templateKey, std::string("winograd"));
        for (std::size_t i = 0; i < 3; ++i) QCOMPARE(log.records[i].toLine(), std::string(kV01Lines[i]));

        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("mali_v0.01.log")).toStdString();
        std::ofstream(path) << text;
        const auto s = tb::record::summarizeFile(path);
        QCOMPARE(s.format, tb::record::LogFormat::AutoTvm);
        QCOMPARE(s.records, 3);
        QCOMPARE(s.v01Records, 3);
        QCOMPARE(s.versions, (std::map<std::string, int>{{"0.1", 3}}));

        const LogCheckReport c = checkLogFile(path);
        QCOMPARE(c.records, 3);
        QCOMPARE(c.checked, 0);
        QCOMPARE(c.v01Records, 3);
        QCOMPARE(c.unknownTemplates, (std::map<std::string, int>{{"topi_nn_conv2d", 2}, {"topi_nn_dense", 1}}));

        // Other numeric versions and auto_scheduler lines stay refused.
        std::string v3 = kV01Lines[2];
        v3.replace(v3.find("\"v\": 0.1"), 8, "\"v\": 0.3");
        QVERIFY_THROWS_EXCEPTION(tb::UserError, tb::record::AutoTvmRecord::fromLine(v3));
        QVERIFY_THROWS_EXCEPTION(tb::UserError,
                                 tb::record::AutoTvmRecord::fromLine(R"({"i": [["k", "llvm"], [[], []]], "r": [[1.0], 0, 1.0, 1], "v": "v0.6"})"));
    }
};

QTEST_APPLESS_MAIN(TestAutotvmSpace)
#include "tst_autotvm_space.moc"
