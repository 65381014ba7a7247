// SPDX-License-Identifier: Apache-2.0
// engine/autotvm/feature.h and the XGB tuner's use of it: the itervar rows of a config follow its
// loop nest (values checked by hand against TVM's TouchExtractor rules), loops of length 1 keep
// their rows so the feature length of a task is fixed, every value is finite; the XGB(itervar)
// model trained on measured configs of a resnet-18 conv ranks held-out measured configs better than
// every one of 1000 random rankings of them; transfer learning (load_history) trains a base model
// on another task's records whose ranking of this task's configs beats chance and which picks the
// first plan; the tuner names of TVM's tutorial make the right tuners.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/autotvm/feature.h"
#include "engine/autotvm/task.h"
#include "engine/autotvm/tuner.h"
#include "engine/codegen/target.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "autotvm_test_util.h"
#include "test_util.h"

using namespace tb;
using namespace tb::autotvm;
using ojson = nlohmann::ordered_json;
using test::denseArgs;
using test::quickRunner;

namespace {

// conv2d_NCHWc.x86 args of a resnet-18 NCHW conv (batch 1, square, dilation 1).
ojson convArgs(int c, int hw, int k, int kernel, int stride, int pad) {
    return ojson::parse("[[\"TENSOR\", [1, " + std::to_string(c) + ", " + std::to_string(hw) + ", " +
                        std::to_string(hw) + "], \"float32\"], [\"TENSOR\", [" + std::to_string(k) + ", " +
                        std::to_string(c) + ", " + std::to_string(kernel) + ", " + std::to_string(kernel) +
                        "], \"float32\"], [" + std::to_string(stride) + ", " + std::to_string(stride) + "], [" +
                        std::to_string(pad) + ", " + std::to_string(pad) + ", " + std::to_string(pad) + ", " +
                        std::to_string(pad) + "], [1, 1], \"NCHW\", \"NCHW\", \"float32\"]");
}

// `n` distinct valid random indices of a space.
std::vector<std::int64_t> randomIndices(const ConfigSpace& space, int n, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> d(0, space.rangeLength() - 1);
    std::set<std::int64_t> seen;
    std::vector<std::int64_t> out;
    while (int(out.size()) < std::min<std::int64_t>(n, space.size())) {
        const std::int64_t i = d(rng);
        if (space.isIndexValid(i) && seen.insert(i).second) out.push_back(i);
    }
    return out;
}

// Fraction of the pairs with different truths that the scores order as the truths (ties of the
// scores count half).
double pairwiseAccuracy(const std::vector<float>& scores, const std::vector<double>& truth) {
    double right = 0;
    int pairs = 0;
    for (size_t i = 0; i < truth.size(); ++i)
        for (size_t j = i + 1; j < truth.size(); ++j) {
            if (truth[i] == truth[j]) continue;
            ++pairs;
            if (scores[i] == scores[j]) right += 0.5;
            else if ((scores[i] > scores[j]) == (truth[i] > truth[j])) right += 1;
        }
    return pairs ? right / pairs : 0.5;
}

// The best accuracy of 1000 random rankings of the same configs (seeded shuffles of the scores):
// a model that beats it ranks better than chance at p < 0.001.
double chanceThreshold(std::vector<float> scores, const std::vector<double>& truth) {
    std::mt19937_64 rng(12345);
    double best = 0;
    for (int i = 0; i < 1000; ++i) {
        std::shuffle(scores.begin(), scores.end(), rng);
        best = std::max(best, pairwiseAccuracy(scores, truth));
    }
    return best;
}

// A synthetic speed of a dense_nopack config that depends on the program, not on knob positions:
// best with inner x and k tiles of 8 (so it carries over between shapes).
double syntheticDenseSpeed(const ConfigEntity& c) {
    auto g = [](std::int64_t v) { return 1.0 / (1.0 + std::abs(std::log2(double(v)) - 3.0)); };
    return 1e9 * g(c.split("tile_x").size.back()) * g(c.split("tile_k").size.back()) *
           (1.0 + 0.1 * double(c.split("tile_y").size.back()));
}

record::AutoTvmRecord syntheticRecord(const Task& task, const ConfigEntity& c) {
    measure::MeasureResult r;
    r.costs = {task.flop / syntheticDenseSpeed(c)};
    return makeRecord(task, c, r);
}

}  // namespace

class TestAutotvmFeature : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // dense_pack 8x16x32, config 1234 (tst_autotvm_tune prints its nest):
    //   parallel x.0@y.0@ (8) { for y.1@x.1@ (8) { compute.global at here:
    //       [init: y_c.0.init (1), unroll y_c.1.init (2), vec x_c.init (1)]
    //       for k.0 (8) { y_c.0 (1) { unroll k.1 (4) { unroll y_c.1 (2) { vec x_c (1) { CC += d * w }}}}}
    //     unroll y.2 (2) { vec x.2 (1) { C = CC }}}}
    // data is [8, 32] (row 32 elements), compute.global is the [2, 1] tile of CC.
    void testItervarRowsFollowTheLoopNest() {
        const Task task = Task::create("dense_pack.x86", denseArgs(8, 16, 32), "llvm");
        const std::vector<ItervarFeature> rows = itervarFeatures(task.instantiate(task.space.get(1234)));
        QStringList names;
        for (const auto& r : rows) names << QString::fromStdString(r.var);
        QCOMPARE(names.join(QLatin1Char(' ')),
                 QStringLiteral("x.0@y.0@ y.1@x.1@ y_c.0.init y_c.1.init x_c.init k.0 y_c.0 k.1 y_c.1 x_c y.2 x.2"));
        auto row = [&](const char* name) -> const ItervarFeature& {
            return *std::find_if(rows.begin(), rows.end(), [&](const ItervarFeature& r) { return r.var == name; });
        };
        // attributes: lengths (1 for the loops lowering drops), nesting, products, annotations
        QCOMPARE(row("x_c").length, std::int64_t(1));
        QCOMPARE(row("x_c").nestLevel, 7);
        QCOMPARE(row("x_c").ann, LoopAnnotation::Vectorized);
        QCOMPARE(row("x.0@y.0@").ann, LoopAnnotation::Parallel);
        QCOMPARE(row("k.1").ann, LoopAnnotation::Unrolled);
        QCOMPARE(row("k.1").topdownProduct, std::int64_t(8 * 8 * 8 * 1 * 4));
        QCOMPARE(row("x.0@y.0@").bottomupProduct, std::int64_t(8 * 8 * 8 * 4 * 2));  // the whole update nest
        // arithmetic belongs to the innermost loop of the update only
        QCOMPARE(row("x_c").addCt, 1);
        QCOMPARE(row("x_c").mulCt, 1);
        QCOMPARE(row("y_c.1").addCt, 0);
        // accesses: store first, then the loads in order (compute.global_0 = init store,
        // _1 = update store, _2 = its load, _3 = C's read of it)
        QCOMPARE(row("y_c.0.init").touch.size(), size_t(1));
        QVERIFY(row("y_c.0.init").touch.count("compute.global_0"));
        QCOMPARE(row("k.1").touch.size(), size_t(4));
        QCOMPARE(row("k.1").touch.at("data_0").stride, std::int64_t(1));            // data[y, k]
        QCOMPARE(row("y_c.1").touch.at("data_0").stride, std::int64_t(32));         // a row of data
        QCOMPARE(row("y_c.1").touch.at("packed_weight_0").stride, std::int64_t(0)); // w does not move with y
        QCOMPARE(row("y_c.1").touch.at("packed_weight_0").reuse, std::int64_t(2));
        QCOMPARE(row("k.1").touch.at("packed_weight_0").count, std::int64_t(4));
        QCOMPARE(row("k.1").touch.at("packed_weight_0").reuse, std::int64_t(2));
        QCOMPARE(row("k.0").touch.at("compute.global_1").reuse, std::int64_t(8 * 4));  // the tile stays put
        QCOMPARE(row("k.0").touch.at("compute.global_1").count, std::int64_t(2));
        // a loop of length 1 touches with stride 0 (its variable is 0) and changes no product
        for (const char* trivial : {"y_c.0", "x_c", "x.2", "y_c.0.init", "x_c.init"})
            for (const auto& [buf, p] : row(trivial).touch) QCOMPARE(p.stride, std::int64_t(0));
        QCOMPARE(row("y_c.0").touch.at("data_0").count, row("k.1").touch.at("data_0").count);
        // thread count/reuse on the parallel loop: per outer iteration of the serial loop below it
        // (compute is written 128 times in all, 16 per y.1@x.1@ sweep)
        QCOMPARE(row("x.0@y.0@").touch.at("compute_0").count, std::int64_t(128));
        QCOMPARE(row("x.0@y.0@").touch.at("compute_0").threadCount, std::int64_t(8));
        QCOMPARE(row("y.1@x.1@").touch.at("compute_0").threadCount, std::int64_t(0));
        // flattening: 18 floats per row plus 6 per access
        size_t expected = 0;
        for (const auto& r : rows) expected += 4 + 11 + 3 + 6 * r.touch.size();
        const std::vector<float> flat = itervarFeatureFlatten(task.instantiate(task.space.get(1234)), true);
        QCOMPARE(flat.size(), expected);
        QCOMPARE(flat[0], float(std::log2(8 + 1)));  // log2(length + 1)
        QCOMPARE(flat[1], 1.f);                      // nest level, not logged
        QCOMPARE(flat[4 + int(LoopAnnotation::Parallel)], 1.f);
    }

    // On real tasks every config has features of one length per type, all finite; the length of
    // the curve features is 8 x 20 per innermost buffer.
    void testFixedLengthAndFinite_data() {
        QTest::addColumn<QString>("templateName");
        QTest::addColumn<QString>("args");
        QTest::newRow("resnet-18 conv 3x3 64x56x56") << "conv2d_NCHWc.x86" << QString::fromStdString(convArgs(64, 56, 64, 3, 1, 1).dump());
        QTest::newRow("resnet-18 conv 1x1 s2 64->128") << "conv2d_NCHWc.x86" << QString::fromStdString(convArgs(64, 56, 128, 1, 2, 0).dump());
        QTest::newRow("resnet-18 conv 3x3 512x7x7") << "conv2d_NCHWc.x86" << QString::fromStdString(convArgs(512, 7, 512, 3, 1, 1).dump());
        QTest::newRow("resnet-18 dense_nopack") << "dense_nopack.x86" << QString::fromStdString(denseArgs(1, 1000, 512).dump());
    }
    void testFixedLengthAndFinite() {
        QFETCH(QString, templateName);
        QFETCH(QString, args);
        const Task task = Task::create(templateName.toStdString(), ojson::parse(args.toStdString()), "llvm");
        std::vector<std::int64_t> indices = randomIndices(task.space, 60, 5);
        indices.push_back(0);
        indices.push_back(task.space.rangeLength() - 1);
        for (FeatureType type : {FeatureType::Knob, FeatureType::Itervar, FeatureType::Curve}) {
            std::set<size_t> lengths;
            for (std::int64_t i : indices) {
                const std::vector<float> f = configFeatures(task, task.space.get(i), type);
                lengths.insert(f.size());
                for (float v : f) QVERIFY2(std::isfinite(v), qPrintable(QStringLiteral("config %1").arg(i)));
            }
            QVERIFY2(lengths.size() == 1, featureTypeName(type));
            QVERIFY(*lengths.begin() > 0);
            size_t others = 0;  // the other-option values that follow
            for (const auto& [name, e] : task.space.get(0).knobs) others += std::holds_alternative<OtherOptionEntity>(e);
            if (type == FeatureType::Curve) QCOMPARE((*lengths.begin() - others) % 160, size_t(0));
        }
    }

    // The model XGBTuner uses, trained on 64 measured random configs of a resnet-18 conv, ranks 32
    // other measured configs of it better than any of 1000 random rankings of them.
    void testItervarModelRanksHeldOutConfigs() {
        const Task task = Task::create("conv2d_NCHWc.x86", convArgs(128, 28, 128, 3, 1, 1), "llvm -keys=cpu");
        measure::LocalBuilder builder(codegen::Target::host());
        measure::LocalRunner runner(quickRunner());
        const std::vector<std::int64_t> indices = randomIndices(task.space, 96, 11);
        std::vector<ConfigEntity> configs;
        for (auto i : indices) configs.push_back(task.space.get(i));
        const auto results = measureConfigs(task, configs, {&builder, &runner});
        RandomTuner speed(task);  // for Tuner::flops
        std::vector<std::int64_t> trainX(indices.begin(), indices.begin() + 64), testX(indices.begin() + 64, indices.end());
        std::vector<double> trainY, testY;
        for (size_t i = 0; i < results.size(); ++i) (i < 64 ? trainY : testY).push_back(speed.flops(results[i]));
        QVERIFY(*std::max_element(trainY.begin(), trainY.end()) > 0);
        for (FeatureType type : {FeatureType::Itervar, FeatureType::Knob}) {
            XGBCostModel model(task, type, "reg", 1);
            model.fit(trainX, trainY, 64);
            const std::vector<float> pred = model.predict(testX);
            const double acc = pairwiseAccuracy(pred, testY), chance = chanceThreshold(pred, testY);
            qInfo("%s: held-out pairwise accuracy %.3f, best of 1000 random rankings %.3f", featureTypeName(type), acc,
                  chance);
            if (type == FeatureType::Itervar) QVERIFY2(acc > chance, qPrintable(QStringLiteral("%1 <= %2").arg(acc).arg(chance)));
        }
    }

    // load_history: a base model fitted on all configs of dense A (synthetic speeds) ranks configs
    // of dense B, whose shape differs, better than chance, and gives the tuner its first plan.
    void testTransferLearning() {
        const Task a = Task::create("dense_nopack.x86", denseArgs(16, 32, 64), "llvm");
        const Task b = Task::create("dense_nopack.x86", denseArgs(32, 64, 128), "llvm");
        std::vector<record::AutoTvmRecord> history;
        for (std::int64_t i = 0; i < a.space.rangeLength(); ++i) history.push_back(syntheticRecord(a, a.space.get(i)));
        // records of another template are not used; too few records leave the tuner as it was
        const Task other = Task::create("dense_pack.x86", denseArgs(8, 16, 32), "llvm");
        std::vector<record::AutoTvmRecord> otherHistory;
        for (std::int64_t i = 0; i < 300; ++i) otherHistory.push_back(makeRecord(other, other.space.get(i), {}));
        XGBTuner unused(b, 64, "itervar", "reg", 1);
        QVERIFY(!unused.loadHistory(otherHistory, 100));
        QVERIFY(!unused.loadHistory(history, int(history.size()) + 1));
        QVERIFY(!unused.costModel().hasBaseModel());
        QVERIFY(test::userError([&] { RandomTuner(b).loadHistory(history); }).contains(QLatin1String("xgb")));

        XGBTuner tuner(b, 64, "itervar", "reg", 1);
        QVERIFY(tuner.loadHistory(history, 100));
        QVERIFY(tuner.costModel().hasBaseModel());
        // the base model's ranking of B's configs (the tuned model has not been fitted: its scores
        // are the base model's margins)
        std::vector<std::int64_t> xs;
        std::vector<double> truth;
        for (std::int64_t i = 0; i < b.space.rangeLength(); ++i) {
            xs.push_back(i);
            truth.push_back(syntheticDenseSpeed(b.space.get(i)));
        }
        std::unique_ptr<XGBCostModel> base = tuner.costModel().spawnBaseModel();
        QVERIFY(base->fitLog(history, 64, 100));
        const std::vector<float> scores = base->predict(xs);
        const double acc = pairwiseAccuracy(scores, truth), chance = chanceThreshold(scores, truth);
        qInfo("base model on task B: pairwise accuracy %.3f, best of 1000 random rankings %.3f", acc, chance);
        QVERIFY2(acc > chance, qPrintable(QStringLiteral("%1 <= %2").arg(acc).arg(chance)));
        // the first plan is the base model's maximums: its first 32 proposals beat the mean config
        double planMean = 0, spaceMean = 0;
        for (const auto& c : tuner.nextBatch(32)) planMean += syntheticDenseSpeed(c) / 32;
        for (double t : truth) spaceMean += t / double(truth.size());
        QVERIFY2(planMean > spaceMean, qPrintable(QStringLiteral("plan %1, space %2").arg(planMean).arg(spaceMean)));
    }

    void testTunerNames() {
        const Task task = Task::create("dense_nopack.x86", denseArgs(8, 16, 32), "llvm");
        for (const std::string& name : tunerNames()) {
            auto t = makeTuner(name, task, 1);
            auto* x = dynamic_cast<XGBTuner*>(t.get());
            QCOMPARE(x != nullptr, name.rfind("xgb", 0) == 0);
            if (!x) continue;
            const FeatureType expected = name.find("knob") != std::string::npos    ? FeatureType::Knob
                                         : name.find("curve") != std::string::npos ? FeatureType::Curve
                                                                                   : FeatureType::Itervar;
            QCOMPARE(x->costModel().featureType(), expected);
        }
        QVERIFY(test::userError([&] { makeTuner("xgb_fancy", task); }).contains(QLatin1String("xgb_rank_binary_curve")));
        QVERIFY(test::userError([&] { XGBTuner(task, 64, "itervar", "lambdarank"); }).contains(QLatin1String("rank-binary")));
    }
};

QTEST_APPLESS_MAIN(TestAutotvmFeature)
#include "tst_autotvm_feature.moc"
