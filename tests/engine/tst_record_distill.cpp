// SPDX-License-Identifier: Apache-2.0
// engine/record, selection: ApplyHistoryBest lookup, distill and AutoTVM pick_best, checked
// against independent scans of the real logs (plain nlohmann parsing here, not the record layer).
#include <QtTest>

#include <QFile>
#include <QTemporaryDir>

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/record/history_best.h"
#include "engine/record/record_io.h"
#include "engine/record/target_info.h"

using namespace tb::record;

namespace {

const std::string kResnet = "../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json";
const std::string kArm = "../shared/data/logs/autotvm/tophub_arm_cpu_v0.08.log";
const std::string kMali = "../shared/data/logs/autotvm/tophub_mali_v0.06.log";

std::vector<nlohmann::json> jsonLines(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s (run from the repository root)", path.c_str());
    std::vector<nlohmann::json> out;
    for (const QByteArray& l : f.readAll().split('\n'))
        if (!l.isEmpty() && !l.startsWith('#')) out.push_back(nlohmann::json::parse(l.toStdString()));
    return out;
}

double mean(const nlohmann::json& costs) {
    double s = 0;
    for (const auto& c : costs) s += c.get<double>();
    return s / double(costs.size());
}

// Independent scan: per workload key string, the index of the first record with the lowest
// mean cost among error_no == 0 (TVM keeps the first of equal costs).
std::map<std::string, size_t> scanBestByKey(const std::vector<nlohmann::json>& lines) {
    std::map<std::string, size_t> best;
    for (size_t i = 0; i < lines.size(); ++i) {
        const auto& r = lines[i]["r"];
        if (r[1].get<int>() != 0) continue;
        const std::string key = lines[i]["i"][0][0].get<std::string>();
        auto it = best.find(key);
        if (it == best.end() || mean(lines[it->second]["r"][0]) > mean(r[0])) best[key] = i;
    }
    return best;
}

MeasureRecord withCost(MeasureRecord r, double cost, int errorNo = 0) {
    r.costs = {cost};
    r.errorNo = errorNo;
    return r;
}

}  // namespace

class TestRecordDistill : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testDistillKeepsPerWorkloadMinimum() {
        const auto lines = jsonLines(kResnet);
        const auto expected = scanBestByKey(lines);
        QCOMPARE(expected.size(), size_t(24));
        const auto log = readMeasureRecords(kResnet);
        QCOMPARE(log.records.size(), lines.size());
        const auto keep = distillIndices(log.records);
        std::set<size_t> expectedIdx;
        for (const auto& [key, idx] : expected) expectedIdx.insert(idx);
        QCOMPARE(std::set<size_t>(keep.begin(), keep.end()), expectedIdx);
        QVERIFY(std::is_sorted(keep.begin(), keep.end()));
        // And each kept record really is the minimum of its workload.
        for (size_t i : keep) {
            const auto& r = log.records[i];
            for (const auto& other : log.records)
                if (other.task.workloadKey == r.task.workloadKey && other.errorNo == 0)
                    QVERIFY(other.meanCost() >= r.meanCost());
        }
    }

    void testDistillFileMergesAndIsIdempotent() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string out = dir.filePath(QStringLiteral("best.json")).toStdString();
        DistillReport rep = distillRecordFile(kResnet, out);
        QCOMPARE(rep.inputRecords, 1265);
        QCOMPARE(rep.existingRecords, 0);
        QCOMPARE(rep.written, 24);
        const auto first = readMeasureRecords(out);
        QCOMPARE(first.records.size(), size_t(24));
        QVERIFY(first.badLines.empty());

        // Distilling again into the existing output merges with it and changes nothing.
        rep = distillRecordFile(kResnet, out);
        QCOMPARE(rep.existingRecords, 24);
        QCOMPARE(rep.written, 24);
        const auto second = readMeasureRecords(out);
        QCOMPARE(second.records.size(), size_t(24));
        for (size_t k = 0; k < 24; ++k) QCOMPARE(second.records[k].toLine(), first.records[k].toLine());

        // A new, faster measurement of one workload (another program) in a second log replaces
        // that workload's entry; a failed faster one does not.
        MeasureRecord faster = withCost(first.records[3], first.records[3].meanCost() / 2);
        faster.steps.push_back(nlohmann::json::array({"CI", 99}));
        MeasureRecord failed = withCost(first.records[5], 1e-9, 4);
        failed.steps.push_back(nlohmann::json::array({"CI", 98}));
        const std::string in2 = dir.filePath(QStringLiteral("more.json")).toStdString();
        {
            RecordWriter w(in2);
            w.append(faster);
            w.append(failed);
        }
        rep = distillRecordFile(in2, out);
        QCOMPARE(rep.inputRecords, 2);
        QCOMPARE(rep.existingRecords, 24);
        QCOMPARE(rep.written, 24);
        const auto third = readMeasureRecords(out);
        QCOMPARE(third.records.size(), size_t(24));
        int found = 0;
        for (const auto& r : third.records) {
            if (r.workload() == first.records[3].workload()) {
                QCOMPARE(r.toLine(), faster.toLine());
                ++found;
            }
            QCOMPARE(r.errorNo, 0);
        }
        QCOMPARE(found, 1);
    }

    void testDistillDedupsSameInput() {
        const auto log = readMeasureRecords("../shared/data/logs/ansor/tvm_ci_matmul.json");
        const MeasureRecord a = log.records.front();
        // The same program measured three times: one record survives, the fastest measurement.
        std::vector<MeasureRecord> recs = {withCost(a, 3e-3), withCost(a, 1e-3), withCost(a, 2e-3)};
        QCOMPARE(distillIndices(recs), std::vector<size_t>{1});
    }

    void testQueryNestedAndFlatKeys() {
        const auto log = readMeasureRecords(kResnet);
        const HistoryBest best(log.records);
        const auto expected = scanBestByKey(jsonLines(kResnet));
        for (const auto& [key, idx] : expected) {
            const MeasureRecord* r = best.query("llvm -keys=cpu", key);
            QVERIFY(r);
            QCOMPARE(r->toLine(), log.records[idx].toLine());
            // The flat spelling of the same key finds the same record.
            const WorkloadKey wk = WorkloadKey::parse(key);
            nlohmann::json flat = nlohmann::json::array({wk.name()});
            for (const auto& a : wk.args()) flat.push_back(a);
            QVERIFY(flat.dump() != key);
            QCOMPARE(best.query("llvm -mcpu=znver4", flat.dump()), r);
            // Another target family has nothing.
            QVERIFY(!best.query("cuda", key));
        }
    }

    void testQueryIgnoresErrorsAndUsesModel() {
        const auto log = readMeasureRecords("../shared/data/logs/ansor/tvm_ci_matmul.json");
        const MeasureRecord base = log.records.front();
        MeasureRecord onA = withCost(base, 5e-3);
        onA.task.target = "llvm -keys=cpu -model=a";
        MeasureRecord onB = withCost(base, 2e-3);
        onB.task.target = "llvm -keys=cpu -model=b";
        MeasureRecord broken = withCost(base, 1e-6, 7);
        const HistoryBest best({onA, onB, broken});
        const std::string key = base.task.workloadKey;
        QCOMPARE(best.query("llvm -model=a", key)->task.target, onA.task.target);   // by model first
        QCOMPARE(best.query("llvm -model=b", key)->task.target, onB.task.target);
        QCOMPARE(best.query("llvm", key)->task.target, onB.task.target);            // by key: global best
        QCOMPARE(best.queryCost("llvm", key), 2e-3);
        QCOMPARE(best.winnerIndices(), (std::vector<size_t>{0, 1}));                // never the error
    }

    void testIncludeCompatible() {
        const auto log = readMeasureRecords(kResnet);
        const MeasureRecord& r = log.records.front();
        const WorkloadKey wk = r.workload();
        // The same DAG at batch 4: no exact record, but the batch-1 records divide it.
        nlohmann::json batch4 = nlohmann::json::parse(r.task.workloadKey);
        int scaled = 0;
        for (size_t t = 1; t < batch4.size(); ++t)
            if (batch4[t][0] == 1) {
                batch4[t][0] = 4;
                ++scaled;
            }
        QVERIFY(scaled >= 2);
        const std::string key4 = batch4.dump();
        QVERIFY(!HistoryBest(log.records).query("llvm", key4));
        const HistoryBest compat(log.records, /*includeCompatible=*/true);
        const MeasureRecord* got = compat.query("llvm", key4);
        QVERIFY(got);
        QVERIFY(got->workload() == wk);
        const double exact = compat.queryCost("llvm", r.task.workloadKey);
        // Each scaled io tensor multiplies the factor by 4 (calc_workload_dis_factor).
        QCOMPARE(compat.queryCost("llvm", key4), exact * std::pow(4.0, scaled));
    }

    // AutoTVM pick_best against an independent scan: the union of the per-(model, workload) and
    // per-(target key, workload) first minima.
    void testPickBest_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("expectWorkloads");
        QTest::addRow("arm_cpu") << QString::fromStdString(kArm) << 258;
        QTest::addRow("mali") << QString::fromStdString(kMali) << 528;
    }
    void testPickBest() {
        QFETCH(QString, path);
        QFETCH(int, expectWorkloads);
        const auto lines = jsonLines(path.toStdString());
        std::map<std::pair<std::string, std::string>, size_t> best;
        std::set<std::string> workloads;
        auto consider = [&](const std::string& group, const std::string& wl, size_t i) {
            auto it = best.find({group, wl});
            if (it == best.end() || mean(lines[it->second]["result"][0]) > mean(lines[i]["result"][0]))
                best[{group, wl}] = i;
        };
        for (size_t i = 0; i < lines.size(); ++i) {
            const auto& in = lines[i]["input"];
            nlohmann::json w = nlohmann::json::array({in[1]});
            for (const auto& a : in[2]) w.push_back(a);
            const std::string wl = w.dump();
            workloads.insert(wl);
            const std::string target = in[0].get<std::string>();
            // Every target in these files has a -device= and a -model=.
            const size_t m = target.find("-model=");
            QVERIFY(m != std::string::npos);
            const std::string model = target.substr(m + 7, target.find(' ', m) - m - 7);
            consider("model:" + model, wl, i);
            consider("key", wl, i);  // all records share their keys (arm_cpu,cpu / mali,opencl,gpu)
        }
        QCOMPARE(int(workloads.size()), expectWorkloads);
        std::set<size_t> expected;
        for (const auto& [k, i] : best) expected.insert(i);
        const auto log = readAutoTvmRecords(path.toStdString());
        QVERIFY(log.badLines.empty());
        const auto keep = pickBestIndices(log.records);
        QCOMPARE(std::set<size_t>(keep.begin(), keep.end()), expected);
    }

    void testAutoTvmQuery() {
        const auto log = readAutoTvmRecords(kArm);
        const AutoTvmHistoryBest best(log.records);
        // Take one workload tuned on several boards: the model query picks that board's record,
        // a model-less query the fastest over all boards.
        std::map<std::string, std::vector<size_t>> byWorkload;
        for (size_t i = 0; i < log.records.size(); ++i) byWorkload[log.records[i].workloadKey()].push_back(i);
        int checked = 0;
        for (const auto& [wl, idx] : byWorkload) {
            if (idx.size() < 3) continue;
            size_t fastest = idx[0];
            for (size_t i : idx)
                if (log.records[i].meanCost() < log.records[fastest].meanCost()) fastest = i;
            QCOMPARE(best.query("llvm -device=arm_cpu", wl), &best.records()[fastest]);
            for (size_t i : idx) {
                const std::string model = parseTargetInfo(log.records[i].target).model;
                const AutoTvmRecord* r = best.query("llvm -device=arm_cpu -model=" + model, wl);
                QVERIFY(r);
                QCOMPARE(parseTargetInfo(r->target).model, model);
                QVERIFY(r->meanCost() <= log.records[i].meanCost());
            }
            QVERIFY(!best.query("cuda", wl));
            ++checked;
        }
        QVERIFY(checked > 10);
    }

    void testPickBestFile() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string out = dir.filePath(QStringLiteral("x.log.best.log")).toStdString();
        const DistillReport rep = pickBestFile("../shared/data/logs/autotvm/tophub_llvm_v0.04.log", out);
        QCOMPARE(rep.inputRecords, 35);
        QCOMPARE(rep.written, 35);  // 35 distinct workloads: all are best
        const auto back = readAutoTvmRecords(out);
        QCOMPARE(back.records.size(), size_t(35));
    }
};

QTEST_APPLESS_MAIN(TestRecordDistill)
#include "tst_record_distill.moc"
