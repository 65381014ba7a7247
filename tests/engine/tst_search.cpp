// SPDX-License-Identifier: Apache-2.0
// Sketch generation, random annotation, mutations and evolutionary search on TVM's tutorial
// matmul_add and a conv2d_nhwc + bias + relu task, checked against the structure of TVM's records.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/search/cost_model.h"
#include "engine/search/default_schedule.h"
#include "engine/search/sketch_policy.h"
#include "tests/engine/test_util.h"

using namespace tb;
using namespace tb::te;

namespace {
search::SearchTask task(std::shared_ptr<const ComputeDAG> dag, int cores = 8) {
    search::SearchTask t;
    t.dag = std::move(dag);
    t.workloadKey = t.dag->workloadKey();
    t.hardware.numCores = cores;
    return t;
}

QStringList prefixes(const State& s) {
    QStringList out;
    for (const auto& st : s.transformSteps()) out << QString::fromLatin1(st.prefix());
    return out;
}

class FakeMeasurer : public search::Measurer {
public:
    // Cost falls with the product of the innermost split lengths of the first stage that has
    // splits: a deterministic stand-in for a real machine.
    std::vector<search::MeasureOutcome> measure(const search::SearchTask&, const std::vector<State>& states) override {
        std::vector<search::MeasureOutcome> out;
        for (const auto& s : states) {
            double inner = 1;
            for (const auto& st : s.transformSteps())
                if (auto* sp = st.as<SplitStep>(); sp && !sp->lengths.empty()) inner *= double(sp->lengths.back());
            search::MeasureOutcome o;
            o.costs = {1e-3 / (1.0 + std::log2(inner + 1))};
            out.push_back(o);
            ++measured;
        }
        batches.push_back(int(states.size()));
        return out;
    }
    int measured = 0;
    std::vector<int> batches;  // states per measure() call
};
}  // namespace

class TestSearch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testMatmulSketches() {
        auto t = task(test::matmulAdd(1024, 1024, 1024), 18);
        auto sk = search::generateSketches(t);
        // TVM prints "Generate Sketches #s: 3" for matmul_add: tiling fused at level 1 and 2, and plain.
        QCOMPARE(sk.size(), size_t(3));
        // The fused sketch at level 2 has TVM's record structure (compare ci_logs/matmul.json):
        // SP SP SP RE FSP FSP RE CA.
        QStringList expected{QStringLiteral("SP"), QStringLiteral("SP"), QStringLiteral("SP"), QStringLiteral("RE"),
                             QStringLiteral("FSP"), QStringLiteral("FSP"), QStringLiteral("RE"), QStringLiteral("CA")};
        bool found = false;
        for (const auto& s : sk) {
            if (prefixes(s) != expected) continue;
            auto* re = s.transformSteps()[3].as<ReorderStep>();
            QCOMPARE(re->afterIds, (std::vector<int>{0, 4, 1, 5, 8, 2, 6, 9, 3, 7}));
            auto* ca = s.transformSteps()[7].as<ComputeAtStep>();
            if (ca->targetIterId == 3) found = true;  // level 2 * 2 spatial loops - 1
            QVERIFY(!s.concrete());
        }
        QVERIFY(found);
    }

    void testConvSketchesAndAnnotation() {
        auto t = task(test::conv2dNhwcRelu(14, 32, 32, /*bias=*/true));
        auto sk = search::generateSketches(t);
        QCOMPARE(sk.size(), size_t(3));
        for (const auto& s : sk) {
            // T_add is inlined first (AlwaysInline; T_relu is the output and stays), then the conv
            // is tiled SSRSRS (and fused into T_relu in two of the three sketches).
            QStringList p = prefixes(s);
            QCOMPARE(p.first(), QStringLiteral("CI"));
            QCOMPARE(s.transformSteps()[0].stageId(), 5);
            QCOMPARE(p.count(QStringLiteral("SP")), 7);
        }
        search::SketchPolicyParams params;
        params.numThreads = 2;
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(1), params, 42);
        std::mt19937_64 rng(7);
        int valid = 0;
        for (int i = 0; i < 60; ++i) {
            State s = policy.randomAnnotate(sk[size_t(i) % sk.size()], rng);
            if (!s.defined()) continue;
            ++valid;
            QVERIFY(s.concrete());
            // The state's record replays to the same loop nest (what a log line must guarantee).
            State r = replaySteps(*t.dag, s.transformSteps());
            QCOMPARE(QString::fromStdString(inferBound(r).toStr()), QString::fromStdString(inferBound(s).toStr()));
            // Exactly one auto-unroll pragma on the conv stage and at most one parallel per root stage.
            int pr = 0;
            for (const auto& st : s.transformSteps()) pr += st.is<PragmaStep>();
            QCOMPARE(pr, 1);
            // Records encode and decode.
            auto j = stepsToJson(s.transformSteps());
            QCOMPARE(stepsFromJson(j).size(), s.transformSteps().size());
        }
        QVERIFY2(valid >= 50, qPrintable(QString::number(valid)));
    }

    void testMutationsKeepValidity() {
        auto t = task(test::matmulAdd(256, 256, 256), 4);
        search::SketchPolicyParams params;
        params.numThreads = 2;
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(1), params, 3);
        std::mt19937_64 rng(11);
        const auto& sk = policy.sketches();
        State s = policy.randomAnnotate(sk[0], rng);
        QVERIFY(s.defined());
        int ok = 0;
        for (int i = 0; i < 200; ++i) {
            State m = policy.mutate(s, rng);
            if (!m.defined()) continue;
            ++ok;
            State b = inferBound(m);
            // Tile sizes still multiply to at most the extent and the innermost stays <= 64.
            for (const auto& st : m.transformSteps()) {
                auto* sp = st.as<SplitStep>();
                if (!sp) continue;
                int64_t prod = 1;
                for (auto l : sp->lengths) prod *= l;
                QVERIFY(prod <= sp->extent);
                QVERIFY(sp->extent % prod == 0);
                QVERIFY(sp->lengths.back() <= 64);
            }
            s = m;
        }
        QVERIFY2(ok > 100, qPrintable(QString::number(ok)));
    }

    void testSearchRoundsAreDeterministicAndDistinct() {
        auto t = task(test::matmulAdd(128, 128, 128), 2);
        search::SketchPolicyParams params;
        params.evolutionaryPopulation = 256;
        params.numThreads = 2;
        std::vector<std::string> first;
        for (int run = 0; run < 2; ++run) {
            search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(5), params, 99);
            FakeMeasurer m;
            std::set<std::string> seen;
            std::vector<std::string> order;
            for (int round = 0; round < 3; ++round) {
                auto res = policy.continueSearchOneRound(16, m);
                QCOMPARE(int(res.size()), 16);
                for (const auto& [p, o] : res) {
                    std::string str = p.state.toStr();
                    QVERIFY2(seen.insert(str).second, "a state was measured twice");
                    order.push_back(str);
                }
            }
            QCOMPARE(m.measured, 48);
            QCOMPARE(policy.numMeasured(), size_t(48));
            if (run == 0)
                first = order;
            else
                QVERIFY2(first == order, "same seed, same measurements -> same search");
        }
    }

    void testSeedsAreMeasuredInABatchOfTheirOwn() {
        // A seed (the default schedule) is measured ahead of the round's other picks, in a batch of
        // its own, so its record reaches the log first; the round still measures 16 states.
        auto t = task(test::matmulAdd(128, 128, 128), 2);
        search::SketchPolicyParams params;
        params.evolutionaryPopulation = 64;
        params.numThreads = 2;
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(5), params, 7);
        const State seed = search::defaultSchedule(*t.dag);
        policy.addSeedStates({seed});
        FakeMeasurer m;
        auto res = policy.continueSearchOneRound(16, m);
        QCOMPARE(int(res.size()), 16);
        QCOMPARE(m.batches, (std::vector<int>{1, 15}));
        QCOMPARE(res[0].first.state.toStr(), inferBound(seed).toStr());
        // Later rounds have no seed: one batch each.
        policy.continueSearchOneRound(16, m);
        QCOMPARE(m.batches, (std::vector<int>{1, 15, 16}));
    }
};

QTEST_APPLESS_MAIN(TestSearch)
#include "tst_search.moc"
