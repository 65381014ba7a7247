// SPDX-License-Identifier: Apache-2.0
// engine/record, format level: number/string dialects, every real log parses with the counts the
// files hold (computed here independently, by text scanning), write-back is byte- and
// value-exact, bad and torn lines are reported with their numbers, workload keys compare as TVM's.
#include <QtTest>

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/record/json_format.h"
#include "engine/record/log_summary.h"
#include "engine/record/measure_record.h"
#include "engine/record/record_io.h"
#include "engine/record/target_info.h"
#include "engine/record/workload_key.h"
#include "engine/support/error.h"

using namespace tb::record;

namespace {

const char* const kAnsorLogs[] = {"tvmsandbox_resnet-18-NHWC-B1-llvm.json", "tvm_ci_matmul.json", "tvm_ci_conv2d.json",
                                  "tvm_ci_sparse_dense.json"};
const char* const kAutoTvmLogs[] = {"tophub_llvm_v0.04.log", "tophub_arm_cpu_v0.08.log", "tophub_mali_v0.06.log"};

QString dataPath(const char* sub, const char* name) {
    return QStringLiteral("../shared/data/logs/") + QLatin1String(sub) + QLatin1Char('/') + QLatin1String(name);
}

QList<QByteArray> fileLines(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s (run from the repository root)", qPrintable(path));
    QList<QByteArray> lines = f.readAll().split('\n');
    if (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
    return lines;
}

std::string str(const QString& s) { return s.toStdString(); }

// Plain literals: moc cannot tokenize raw strings that contain a backslash-quote.
const char* const kUnusualLine =
    "{\"r\": [[0.5, 0.25], 0, 1.5, 1600000000], \"i\": [[\"[\\\"h\\\", 1]\", \"llvm\", [1, 2, 3, 4, 5, 6, 7, 8], \"llvm -mtriple=x\", 1], [[], [[\"CI\", 1]]]]}";
const char* const kNewRecordLine =
    "{\"i\": [[\"[\\\"matmul_add\\\", 8, 8, 8, \\\"float32\\\"]\", \"llvm -keys=cpu\", [4, 64, 64, 0, 0, 0, 0, 0], \"\", 2, []], [[], [[\"SP\", 2, 0, 8, [2], 1]]]], \"r\": [[1.5e-06, 1e+10], 0, 0.25, 1700000000], \"v\": \"v0.6\"}";
const char* const kBadHardwareParams =
    "{\"i\": [[\"[\\\"h\\\"]\", \"llvm\", [1, 2]], [[], []]], \"r\": [[1.0], 0, 1.0, 1]}";
const char* const kBadArity =
    "{\"i\": [[\"[\\\"h\\\"]\", \"llvm\", [1,2,3,4,5,6,7,8], \"\"], [[], []]], \"r\": [[1.0], 0, 1.0, 1]}";
const char* const kNoResult =
    "{\"i\": [[\"[\\\"h\\\"]\", \"llvm\"], [[], []]]}";


}  // namespace

class TestRecord : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testFormatDoubleTvm_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("text");
        // dmlc::JSONWriter = ostream precision 6; values as they appear in the logs.
        QTest::addRow("cost") << 0.00245743 << QStringLiteral("0.00245743");
        QTest::addRow("all_cost") << 0.675713 << QStringLiteral("0.675713");
        QTest::addRow("failed run") << 1e10 << QStringLiteral("1e+10");
        QTest::addRow("integral all_cost") << 15.0 << QStringLiteral("15");
        QTest::addRow("small") << 4.29498e-05 << QStringLiteral("4.29498e-05");
        // Not TVM-written: more digits instead of rounding.
        QTest::addRow("needs 17 digits") << 0.1 + 0.2 << QStringLiteral("0.30000000000000004");
        QTest::addRow("needs 7 digits") << 1.234567 << QStringLiteral("1.234567");
    }
    void testFormatDoubleTvm() {
        QFETCH(double, value);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatDoubleTvm(value)), text);
    }

    void testFormatDoublePython_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("text");
        // Python 3 repr(float).
        QTest::addRow("tophub cost") << 9.593498664366054e-05 << QStringLiteral("9.593498664366054e-05");
        QTest::addRow("timestamp") << 1539972731.352305 << QStringLiteral("1539972731.352305");
        QTest::addRow("error cost") << 1e9 << QStringLiteral("1000000000.0");
        QTest::addRow("1e16") << 1e16 << QStringLiteral("1e+16");
        QTest::addRow("1e15") << 1e15 << QStringLiteral("1000000000000000.0");
        QTest::addRow("1e-4") << 1e-4 << QStringLiteral("0.0001");
        QTest::addRow("1e-5") << 1e-5 << QStringLiteral("1e-05");
        QTest::addRow("version") << 0.2 << QStringLiteral("0.2");
        QTest::addRow("negative") << -2.5 << QStringLiteral("-2.5");
        QTest::addRow("zero") << 0.0 << QStringLiteral("0.0");
        QTest::addRow("big exponent") << 1.5e300 << QStringLiteral("1.5e+300");
        QTest::addRow("inf") << std::numeric_limits<double>::infinity() << QStringLiteral("Infinity");
    }
    void testFormatDoublePython() {
        QFETCH(double, value);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatDoublePython(value)), text);
    }

    void testStringStyles() {
        std::string tvm, py;
        const std::string s = "a\"b\\c\nd\xc3\xa9\xf0\x9f\x98\x80";  // é, U+1F600
        appendJsonString(tvm, s, JsonStyle::Tvm);
        appendJsonString(py, s, JsonStyle::Python);
        QCOMPARE(tvm, std::string("\"a\\\"b\\\\c\\nd\xc3\xa9\xf0\x9f\x98\x80\""));
        QCOMPARE(py, std::string("\"a\\\"b\\\\c\\nd\\u00e9\\ud83d\\ude00\""));
        // Both read back to the same string.
        QCOMPARE(nlohmann::json::parse(tvm).get<std::string>(), s);
        QCOMPARE(nlohmann::json::parse(py).get<std::string>(), s);
    }

    // Every auto_scheduler log: counts against an independent text scan.
    void testAnsorLogs_data() {
        QTest::addColumn<QString>("path");
        for (const char* name : kAnsorLogs) QTest::addRow("%s", name) << dataPath("ansor", name);
    }
    void testAnsorLogs() {
        QFETCH(QString, path);
        const auto lines = fileLines(path);
        int expectRecords = 0, expectComments = 0;
        std::map<int, int> expectErrors;
        std::set<QString> expectKeys;
        const QRegularExpression errRe(QStringLiteral("\"r\": \\[\\[[^\\]]*\\], (\\d+), "));
        const QRegularExpression keyRe(QStringLiteral("^\\{\"i\": \\[\\[\"((?:[^\"\\\\]|\\\\.)*)\""));
        for (const QByteArray& l : lines) {
            if (l.startsWith('#')) {
                ++expectComments;
                continue;
            }
            QVERIFY(l.startsWith("{\"i\": "));
            ++expectRecords;
            const QString ls = QString::fromUtf8(l);
            const auto em = errRe.match(ls);
            QVERIFY(em.hasMatch());
            ++expectErrors[em.captured(1).toInt()];
            const auto km = keyRe.match(ls);
            QVERIFY(km.hasMatch());
            expectKeys.insert(km.captured(1));
        }
        const auto log = readMeasureRecords(str(path));
        QVERIFY2(log.badLines.empty(), log.badLines.empty() ? "" : log.badLines.front().reason.c_str());
        QCOMPARE(int(log.records.size()), expectRecords);
        QCOMPARE(log.commentLines, expectComments);
        QCOMPARE(log.totalLines, int(lines.size()));
        const LogSummary s = summarize(log);
        QCOMPARE(s.errorCounts, expectErrors);
        QCOMPARE(int(s.workloads.size()), int(expectKeys.size()));
        int validExpected = expectErrors.count(0) ? expectErrors[0] : 0;
        QCOMPARE(s.valid, validExpected);
        // Line numbers point at the record lines.
        for (size_t k = 0; k < log.records.size(); ++k)
            QVERIFY(lines[log.recordLines[k] - 1].startsWith("{\"i\""));
    }

    void testResnetLogFacts() {
        // The numbers SOURCES.md states for this file.
        const auto log = readMeasureRecords(str(dataPath("ansor", "tvmsandbox_resnet-18-NHWC-B1-llvm.json")));
        QCOMPARE(int(log.records.size()), 1265);
        const LogSummary s = summarize(log);
        QCOMPARE(int(s.workloads.size()), 24);
        QCOMPARE(s.errorCounts, (std::map<int, int>{{0, 1264}, {6, 1}}));
        QCOMPARE(s.versions, (std::map<std::string, int>{{"v0.6", 1265}}));
        const MeasureRecord& first = log.records.front();
        QCOMPARE(first.task.arity, 6);
        QCOMPARE(first.task.target, std::string("llvm -keys=cpu -link-params=0"));
        QCOMPARE(first.task.hardwareParams, (tb::HardwareParams{8, 64, 64, 0, 0, 0, 0, 0}));
        QCOMPARE(first.task.layoutRewriteOption, 2);
        QCOMPARE(first.task.targetHost, std::string());
        QVERIFY(first.task.taskInputNames.empty());
        QCOMPARE(first.steps.size(), size_t(19));
        QCOMPARE(first.steps[0], nlohmann::json::parse(R"(["SP", 3, 0, 1, [1, 1, 1], 1])"));
        QCOMPARE(first.steps.back(), nlohmann::json::parse(R"(["AN", 3, 21, 2])"));
        QCOMPARE(first.costs, std::vector<double>{0.00245743});
        QCOMPARE(first.allCost, 0.675713);
        QCOMPARE(first.timestamp, 1630382298.0);
        QVERIFY(first.workload().nested());
        QVERIFY(first.workload().isDagHash());
        QCOMPARE(first.workload().name(), std::string("9b12f4c414bcd00df80666ee94c7a2fe"));
        // The one failed record: line 935, BUILD_TIMEOUT, cost 1e10, all_cost 15.
        int failed = 0;
        for (size_t k = 0; k < log.records.size(); ++k) {
            if (log.records[k].errorNo == 0) continue;
            ++failed;
            QCOMPARE(log.recordLines[k], 935);
            QCOMPARE(measureErrorName(log.records[k].errorNo), std::string("BUILD_TIMEOUT"));
            QCOMPARE(log.records[k].costs, std::vector<double>{1e10});
            QCOMPARE(log.records[k].allCost, 15.0);
            QVERIFY(!log.records[k].valid());
        }
        QCOMPARE(failed, 1);
    }

    void testTaskTupleShapes_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("arity");
        QTest::addColumn<QString>("version");
        QTest::addColumn<QString>("target");
        QTest::addColumn<int>("numCores");
        QTest::addColumn<int>("inputNames");
        QTest::addRow("v0.2 conv2d, 2 elements") << dataPath("ansor", "tvm_ci_conv2d.json") << 2 << QStringLiteral("v0.2")
                                                  << QStringLiteral("cuda -keys=cuda,gpu -max_num_threads=1024 -thread_warp_size=32")
                                                  << 0 << 0;
        QTest::addRow("v0.3 matmul, 3 elements") << dataPath("ansor", "tvm_ci_matmul.json") << 3 << QStringLiteral("v0.3")
                                                  << QStringLiteral("llvm -keys=cpu") << 18 << 0;
        QTest::addRow("v0.6 sparse, 6 elements") << dataPath("ansor", "tvm_ci_sparse_dense.json") << 6 << QStringLiteral("v0.6")
                                                  << QStringLiteral("llvm -keys=cpu") << 6 << 3;
    }
    void testTaskTupleShapes() {
        QFETCH(QString, path);
        QFETCH(int, arity);
        QFETCH(QString, version);
        QFETCH(QString, target);
        QFETCH(int, numCores);
        QFETCH(int, inputNames);
        const auto log = readMeasureRecords(str(path));
        QCOMPARE(int(log.records.size()), 1);
        QCOMPARE(log.recordLines.front(), 2);
        const MeasureRecord& r = log.records.front();
        QCOMPARE(r.task.arity, arity);
        QCOMPARE(QString::fromStdString(r.version), version);
        QCOMPARE(QString::fromStdString(r.task.target), target);
        QCOMPARE(int(r.task.hardwareParams.numCores), numCores);
        QCOMPARE(int(r.task.taskInputNames.size()), inputNames);
        // The written line keeps the tuple length.
        const auto back = nlohmann::json::parse(r.toLine());
        QCOMPARE(int(back["i"][0].size()), arity);
    }

    void testRegisteredFunctionKey() {
        const auto log = readMeasureRecords(str(dataPath("ansor", "tvm_ci_matmul.json")));
        const WorkloadKey wk = log.records.front().workload();
        QCOMPARE(wk.name(), std::string("matmul_add"));
        QVERIFY(!wk.isDagHash());
        QVERIFY(!wk.nested());
        QCOMPARE(wk.args().size(), size_t(4));
        QCOMPARE(wk.args()[3], nlohmann::json("float32"));
    }

    // write(read(line)) == line, byte for byte, for every record line of every log; and the file
    // written through RecordWriter reads back to equal JSON values.
    void testWriteBack_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("autotvm");
        for (const char* name : kAnsorLogs) QTest::addRow("%s", name) << dataPath("ansor", name) << false;
        for (const char* name : kAutoTvmLogs) QTest::addRow("%s", name) << dataPath("autotvm", name) << true;
    }
    void testWriteBack() {
        QFETCH(QString, path);
        QFETCH(bool, autotvm);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string out = str(dir.filePath(QStringLiteral("out.json")));
        std::vector<QByteArray> originals;
        for (const QByteArray& l : fileLines(path))
            if (!l.startsWith('#')) originals.push_back(l);
        {
            RecordWriter w(out);
            if (autotvm) {
                const auto log = readAutoTvmRecords(str(path));
                QCOMPARE(log.records.size(), originals.size());
                for (size_t k = 0; k < originals.size(); ++k) {
                    QCOMPARE(QByteArray::fromStdString(log.records[k].toLine()), originals[k]);
                    w.append(log.records[k]);
                }
            } else {
                const auto log = readMeasureRecords(str(path));
                QCOMPARE(log.records.size(), originals.size());
                for (size_t k = 0; k < originals.size(); ++k) {
                    QCOMPARE(QByteArray::fromStdString(log.records[k].toLine()), originals[k]);
                    w.append(log.records[k]);
                }
            }
        }
        const auto written = fileLines(QString::fromStdString(out));
        QCOMPARE(size_t(written.size()), originals.size());
        for (size_t k = 0; k < originals.size(); ++k)
            QCOMPARE(nlohmann::ordered_json::parse(written[int(k)].toStdString()),
                     nlohmann::ordered_json::parse(originals[k].toStdString()));
    }

    // A line with the key order changed and no "v" still reads, and writes back as an equal value
    // in TVM's key order without inventing a "v".
    void testShapeOfUnusualLine() {
        const std::string line =
            kUnusualLine;
        const MeasureRecord r = MeasureRecord::fromLine(line);
        QVERIFY(!r.hasVersion);
        QCOMPARE(r.task.arity, 5);
        QCOMPARE(r.task.targetHost, std::string("llvm -mtriple=x"));
        QCOMPARE(r.meanCost(), 0.375);
        QCOMPARE(nlohmann::json::parse(r.toLine()), nlohmann::json::parse(line));
        QVERIFY(r.toLine().rfind("{\"i\": ", 0) == 0);
        QVERIFY(r.toLine().find("\"v\"") == std::string::npos);
    }

    void testNewRecordIsV06() {
        MeasureRecord r;
        r.task.workloadKey = R"(["matmul_add", 8, 8, 8, "float32"])";
        r.task.target = "llvm -keys=cpu";
        r.task.hardwareParams = {4, 64, 64, 0, 0, 0, 0, 0};
        r.task.layoutRewriteOption = 2;
        r.steps = nlohmann::json::parse(R"([["SP", 2, 0, 8, [2], 1]])");
        r.costs = {1.5e-6, std::numeric_limits<double>::infinity()};
        r.allCost = 0.25;
        r.timestamp = 1700000000.9;
        QCOMPARE(r.toLine(),
                 std::string(kNewRecordLine));
    }

    // fuzz_record's find: a timestamp no long long holds (1e28, kept as
    // tests/fuzz/regressions/record/timestamp-outside-int64) was cast to long long when the record
    // was written back (UBSan: outside the range of representable values). It is written as 0, as a
    // non-finite one is; ordinary timestamps keep their integer part.
    void testUnrepresentableTimestampWritesZero() {
        MeasureRecord r = MeasureRecord::fromLine(std::string(kNewRecordLine));
        for (double ts : {1.63038e28, -1e19, std::numeric_limits<double>::quiet_NaN()}) {
            r.timestamp = ts;
            QCOMPARE(nlohmann::json::parse(r.toLine())["r"][3].get<long long>(), 0LL);
        }
        r.timestamp = 1700000000.9;
        QCOMPARE(nlohmann::json::parse(r.toLine())["r"][3].get<long long>(), 1700000000LL);
    }

    // Bad lines are data: numbered, with a reason, never fatal for the file.
    void testBadLines() {
        const QList<QByteArray> good = fileLines(dataPath("ansor", "tvm_ci_matmul.json"));
        const std::string rec = good[1].toStdString();
        std::string text;
        text += "# a comment\n";                                      // 1
        text += rec + "\n";                                          // 2 good
        text += "\n";                                                // 3 blank
        text += "garbage here\n";                                    // 4 bad: not JSON
        text += " indented lines are skipped like comments\n";       // 5 comment
        text += "[1, 2, 3]\n";                                       // 6 bad: not an object
        text += R"({"input": ["llvm", "dense", [], {}], "config": {"index": 1, "code_hash": null, "entity": []}, "result": [[1.0], 0, 1.0, 1.0]})" "\n";  // 7 AutoTVM
        text += std::string(kBadHardwareParams) + "\n";  // 8 bad hw params
        text += std::string(kBadArity) + "\n";  // 9 arity 4
        text += std::string(kNoResult) + "\n";     // 10 no r
        text += rec + "\r\n";                                        // 11 good (CRLF)
        text += rec.substr(0, rec.size() / 2);                       // 12 torn
        const auto log = parseMeasureRecords(text);
        QCOMPARE(log.totalLines, 12);
        QCOMPARE(log.records.size(), size_t(2));
        QCOMPARE(log.recordLines, (std::vector<int>{2, 11}));
        QCOMPARE(log.commentLines, 2);
        QCOMPARE(log.blankLines, 1);
        std::vector<int> badNumbers;
        for (const auto& b : log.badLines) badNumbers.push_back(b.line);
        QCOMPARE(badNumbers, (std::vector<int>{4, 6, 7, 8, 9, 10, 12}));
        auto reasonHas = [&](int idx, const char* what) {
            const auto& r = log.badLines[size_t(idx)].reason;
            if (r.find(what) == std::string::npos) qWarning("reason of line %d: %s", log.badLines[size_t(idx)].line, r.c_str());
            return r.find(what) != std::string::npos;
        };
        QVERIFY(reasonHas(0, "not valid JSON"));
        QVERIFY(reasonHas(1, "JSON object"));
        QVERIFY(reasonHas(2, "AutoTVM"));
        QVERIFY(reasonHas(3, "hardware params"));
        QVERIFY(reasonHas(4, "4 elements"));
        QVERIFY(reasonHas(5, "\"r\""));
        QVERIFY(reasonHas(6, "torn last line"));
        QVERIFY(log.badLines.back().torn);
        for (size_t k = 0; k + 1 < log.badLines.size(); ++k) QVERIFY(!log.badLines[k].torn);
        // The summary carries them too.
        const LogSummary s = summarize(log);
        QCOMPARE(s.badLines.size(), size_t(7));
        QCOMPARE(s.records, 2);
    }

    void testFromLineThrowsUserError() {
        QVERIFY_THROWS_EXCEPTION(tb::UserError, MeasureRecord::fromLine("{"));
        QVERIFY_THROWS_EXCEPTION(tb::UserError, MeasureRecord::fromLine(R"({"i": [], "r": [], "x": 1})"));
        QVERIFY_THROWS_EXCEPTION(tb::UserError, readMeasureRecords("/nonexistent/dir/log.json"));
    }

    void testDetectFormat() {
        const auto ansor = readTextFile(str(dataPath("ansor", "tvm_ci_conv2d.json")));
        const auto autotvm = readTextFile(str(dataPath("autotvm", "tophub_llvm_v0.04.log")));
        QCOMPARE(detectLogFormat(ansor), LogFormat::AutoScheduler);
        QCOMPARE(detectLogFormat(autotvm), LogFormat::AutoTvm);
        QCOMPARE(detectLogFormat("# only a comment\n\nnot json\n"), LogFormat::Unknown);
    }

    void testWorkloadKeyEquality_data() {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<bool>("equal");
        // calc_workload_dis_factor == 1; differs from equality only where TVM's does: an
        // undecodable key has args None, which the factor treats as [] but the lookup does not.
        QTest::addColumn<bool>("factorOne");
        const QString h = QStringLiteral("69115f188984ae34ede37c3b8ca40b43");
        QTest::addRow("nested vs flat") << QStringLiteral("[\"%1\", [1, 7, 7, 2048], [1, 1, 1, 2048]]").arg(h)
                                        << QStringLiteral("[\"%1\", 1, 7, 7, 2048, 1, 1, 1, 2048]").arg(h) << true << true;
        QTest::addRow("spacing") << QStringLiteral("[\"%1\",[1,7,7,2048]]").arg(h)
                                 << QStringLiteral("[\"%1\", [1, 7, 7, 2048]]").arg(h) << true << true;
        QTest::addRow("int vs float") << QStringLiteral("[\"f\", 4]") << QStringLiteral("[\"f\", 4.0]") << true << true;
        QTest::addRow("other shape") << QStringLiteral("[\"%1\", [1, 7, 7, 2048]]").arg(h)
                                     << QStringLiteral("[\"%1\", [1, 7, 7, 1024]]").arg(h) << false << false;
        QTest::addRow("other hash") << QStringLiteral("[\"a\", 1]") << QStringLiteral("[\"b\", 1]") << false << false;
        QTest::addRow("fewer args") << QStringLiteral("[\"a\", 1, 2]") << QStringLiteral("[\"a\", 1]") << false << false;
        QTest::addRow("string vs number") << QStringLiteral("[\"a\", \"1\"]") << QStringLiteral("[\"a\", 1]") << false << false;
        QTest::addRow("undecodable same") << QStringLiteral("not json") << QStringLiteral("not json") << true << true;
        QTest::addRow("undecodable vs list") << QStringLiteral("a") << QStringLiteral("[\"a\"]") << false << true;
    }
    void testWorkloadKeyEquality() {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(bool, equal);
        QFETCH(bool, factorOne);
        const auto ka = WorkloadKey::parse(str(a));
        const auto kb = WorkloadKey::parse(str(b));
        QCOMPARE(ka == kb, equal);
        QCOMPARE(ka.canonical() == kb.canonical(), equal);
        QCOMPARE(calcWorkloadDisFactor(ka, kb) == 1.0, factorOne);
    }

    void testDisFactor_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("candidate");
        QTest::addColumn<double>("factor");
        const double inf = std::numeric_limits<double>::infinity();
        QTest::addRow("batch 4 from batch 1") << QStringLiteral("[\"h\", [4, 7, 7, 512]]") << QStringLiteral("[\"h\", [1, 7, 7, 512]]") << 4.0;
        QTest::addRow("flat candidate") << QStringLiteral("[\"h\", [4, 14, 7, 512]]") << QStringLiteral("[\"h\", 1, 7, 7, 512]") << 8.0;
        QTest::addRow("not a multiple") << QStringLiteral("[\"h\", [3, 7]]") << QStringLiteral("[\"h\", [2, 7]]") << inf;
        QTest::addRow("candidate bigger") << QStringLiteral("[\"h\", [1, 7]]") << QStringLiteral("[\"h\", [2, 7]]") << inf;
        QTest::addRow("zero must match") << QStringLiteral("[\"h\", 0, 4]") << QStringLiteral("[\"h\", 0, 2]") << 2.0;
        QTest::addRow("zero vs nonzero") << QStringLiteral("[\"h\", 0]") << QStringLiteral("[\"h\", 2]") << inf;
        QTest::addRow("dtype differs") << QStringLiteral("[\"f\", 8, \"float32\"]") << QStringLiteral("[\"f\", 8, \"float16\"]") << inf;
        QTest::addRow("other name") << QStringLiteral("[\"f\", 8]") << QStringLiteral("[\"g\", 8]") << inf;
    }
    void testDisFactor() {
        QFETCH(QString, target);
        QFETCH(QString, candidate);
        QFETCH(double, factor);
        QCOMPARE(calcWorkloadDisFactor(WorkloadKey::parse(str(target)), WorkloadKey::parse(str(candidate))), factor);
    }

    void testTargetInfo_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QStringList>("keys");
        QTest::addColumn<QString>("model");
        QTest::addRow("resnet log") << QStringLiteral("llvm -keys=cpu -link-params=0") << QStringList{QStringLiteral("cpu")}
                                    << QStringLiteral("unknown");
        QTest::addRow("plain llvm") << QStringLiteral("llvm -mcpu=skylake-avx512") << QStringList{QStringLiteral("cpu")}
                                    << QStringLiteral("unknown");
        QTest::addRow("cuda") << QStringLiteral("cuda -keys=cuda,gpu -max_num_threads=1024")
                              << QStringList{QStringLiteral("cuda"), QStringLiteral("gpu")} << QStringLiteral("unknown");
        QTest::addRow("arm_cpu") << QStringLiteral("llvm -device=arm_cpu -model=rk3399 -mtriple=aarch64-linux-gnu")
                                 << QStringList{QStringLiteral("arm_cpu"), QStringLiteral("cpu")} << QStringLiteral("rk3399");
        QTest::addRow("mali, model first") << QStringLiteral("opencl -model=rk3399 -device=mali")
                                           << QStringList{QStringLiteral("mali"), QStringLiteral("opencl"), QStringLiteral("gpu")}
                                           << QStringLiteral("rk3399");
        QTest::addRow("mali, device first") << QStringLiteral("opencl -device=mali -model=rk3399")
                                            << QStringList{QStringLiteral("mali"), QStringLiteral("opencl"), QStringLiteral("gpu")}
                                            << QStringLiteral("rk3399");
    }
    void testTargetInfo() {
        QFETCH(QString, target);
        QFETCH(QStringList, keys);
        QFETCH(QString, model);
        const TargetInfo info = parseTargetInfo(str(target));
        QStringList got;
        for (const auto& k : info.keys) got << QString::fromStdString(k);
        QCOMPARE(got, keys);
        QCOMPARE(QString::fromStdString(info.model), model);
    }

    void testErrorNames() {
        const char* expect[] = {"NO_ERROR",      "INSTANTIATION_ERROR", "COMPILE_HOST", "COMPILE_DEVICE", "RUNTIME_DEVICE",
                                "WRONG_ANSWER",  "BUILD_TIMEOUT",       "RUN_TIMEOUT",  "UNKNOWN_ERROR"};
        for (int i = 0; i < 9; ++i) QCOMPARE(measureErrorName(i), std::string(expect[i]));
        QCOMPARE(measureErrorName(42), std::string("ERROR_42"));
    }

    void testSummaryGflops() {
        const auto log = readMeasureRecords(str(dataPath("ansor", "tvm_ci_matmul.json")));
        // 1024^3 multiply-adds = 2 * 2^30 flops; spelled with extra spaces: still the same workload.
        const double flop = 2.0 * 1024 * 1024 * 1024;
        const LogSummary s = summarize(log, {{R"(["matmul_add",1024,1024,1024,"float32"])", flop}});
        QCOMPARE(s.workloads.size(), size_t(1));
        QCOMPARE(s.workloads[0].bestCost, 0.0044742);
        QCOMPARE(s.workloads[0].bestLine, 2);
        QCOMPARE(s.workloads[0].gflops, flop / 0.0044742 / 1e9);
        const LogSummary none = summarize(log);
        QCOMPARE(none.workloads[0].gflops, -1.0);
    }
};

QTEST_APPLESS_MAIN(TestRecord)
#include "tst_record.moc"
