// SPDX-License-Identifier: Apache-2.0
// Seed 001's flow (TVM tutorial tune_relay_mobile_gpu, issue 18) through the CLI on emulated Mali
// boards: an in-process RPC tracker, `scripts/mali-board -n 2` (two PoCL device servers with the
// Mali-T860's limits, one key), then as a user runs it:
//   1. `tunebench-cli autotvm tasks --network resnet-18 --ops nn.conv2d --target <mali>`: the conv
//      tasks TVM's mali strategy gives (extract_from_program ops=(nn.conv2d,));
//   2. `tunebench-cli autotvm tune --network resnet-18 --ops nn.conv2d --target "opencl
//      -device=mali -host=llvm -mtriple=aarch64-linux-gnu" --tuner xgb --early-stopping ...
//      --runner rpc --tracker ... --key ...` on two of those tasks (a conv2d_nchw_spatial_pack.mali
//      and a conv2d_nchw_winograd.mali, the smallest of each by FLOPs), RPCRunner number 10,
//      timeout 5 as the tutorial: v0.2 records with TVM's printed Mali target, valid costs;
//   3. `tunebench-cli compile --network resnet-18 --layout NCHW --target ... --log LOG --bench` on the boards:
//      relay.build under apply_history_best (the two tuned workloads take their best records, the
//      other convs and the dense their fallback configs), the network run on a board and its output
//      checked against the host interpreter.
// Trials are small (PoCL runs OpenCL C on the shared CPU). Without an OpenCL device the test is
// skipped.
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "engine/record/autotvm_record.h"
#include "engine/record/record_io.h"
#include "engine/rpc/tracker.h"
#include "tests/engine/test_cli_util.h"

using namespace tb;
using test::CliResult;
using test::runCli;

namespace {

const char* const kTarget = "opencl -device=mali -host=llvm -mtriple=aarch64-linux-gnu";
const char* const kPrinted = "opencl -keys=mali,opencl,gpu -device=mali";

}  // namespace

class TestAutotvmMaliBoard : public QObject {
    Q_OBJECT
    std::unique_ptr<rpc::Tracker> m_tracker;
    QProcess m_boards;
    std::string m_key;
    QTemporaryDir m_dir;
    QString m_missing;
    std::map<std::string, int> m_taskNumber;  // chosen template -> task number in `autotvm tasks`
    std::map<std::string, std::string> m_taskArgs;

    QStringList fleet() const {
        return {QStringLiteral("--runner"), QStringLiteral("rpc"), QStringLiteral("--tracker"),
                QStringLiteral("127.0.0.1:%1").arg(m_tracker->port()), QStringLiteral("--key"),
                QString::fromStdString(m_key)};
    }
    QString logPath() const { return m_dir.filePath(QStringLiteral("rk3399.resnet-18.log")); }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QProcess clinfo;
        clinfo.start(QStringLiteral("clinfo"), {QStringLiteral("-l")});
        if (!clinfo.waitForFinished(20000) || !clinfo.readAll().contains("Device")) {
            m_missing = QStringLiteral("no OpenCL device (install pocl-opencl-icd and clinfo)");
            return;
        }
        rpc::TrackerOptions to;
        to.host = "127.0.0.1";
        to.port = 0;
        m_tracker = std::make_unique<rpc::Tracker>(to);
        m_tracker->start();
        m_key = "rk3399-atvm" + std::to_string(getpid());
        m_boards.setProcessChannelMode(QProcess::MergedChannels);
        m_boards.start(QStringLiteral("bash"),
                       {QStringLiteral(TB_SOURCE_DIR "/scripts/mali-board"), QStringLiteral("-n"), QStringLiteral("2"),
                        QStringLiteral("--tracker"), QStringLiteral("127.0.0.1:%1").arg(m_tracker->port()),
                        QStringLiteral("--key"), QString::fromStdString(m_key), QStringLiteral("--build-dir"),
                        QStringLiteral(TB_BUILD_DIR), QStringLiteral("--log-dir"), m_dir.path(),
                        QStringLiteral("--port"), QStringLiteral("0")});  // any free port: no clash with other tests
        QVERIFY2(m_boards.waitForStarted(10000), qPrintable(m_boards.errorString()));
        bool up = false;
        for (int i = 0; i < 300 && !up; ++i) {
            up = test::freeServers(m_tracker->port(), m_key) >= 2;
            if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        QVERIFY2(up, qPrintable(QStringLiteral("the two Mali boards did not register:\n") +
                                QString::fromUtf8(m_boards.readAll())));
    }

    void cleanupTestCase() {
        if (m_boards.state() != QProcess::NotRunning) {
            m_boards.terminate();  // scripts/mali-board stops its boards on SIGTERM
            if (!m_boards.waitForFinished(15000)) {
                m_boards.kill();
                m_boards.waitForFinished(5000);
            }
        }
        if (m_tracker) m_tracker->stop();
    }

    // extract_from_program(ops=(nn.conv2d,)) for mali: 16 conv tasks (12 spatial_pack, 4 winograd).
    void testTasks() {
        if (!m_missing.isEmpty()) QSKIP(qPrintable(m_missing));
        const CliResult r = runCli({QStringLiteral("autotvm"), QStringLiteral("tasks"), QStringLiteral("--network"),
                                    QStringLiteral("resnet-18"), QStringLiteral("--ops"), QStringLiteral("nn.conv2d"),
                                    QStringLiteral("--target"), QLatin1String(kTarget)},
                                   120000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains(QStringLiteral("16 AutoTVM tasks of resnet-18")), qPrintable(r.out));
        QVERIFY(!r.out.contains(QStringLiteral("dense.mali")));
        // "  N  template  FLOPs  space  args": the smallest task of each template by FLOPs.
        const QRegularExpression row(QStringLiteral("^\\s*(\\d+)\\s+(conv2d_nchw_\\S+\\.mali)\\s+(\\d+)\\s+(\\d+)\\s+(.*)$"),
                                     QRegularExpression::MultilineOption);
        std::map<std::string, double> flops;
        int rows = 0;
        for (auto it = row.globalMatch(r.out); it.hasNext();) {
            const auto m = it.next();
            ++rows;
            const std::string name = m.captured(2).toStdString();
            const double f = m.captured(3).toDouble();
            if (!flops.count(name) || f < flops[name]) {
                flops[name] = f;
                m_taskNumber[name] = m.captured(1).toInt();
                m_taskArgs[name] = m.captured(5).trimmed().toStdString();
            }
        }
        QCOMPARE(rows, 16);
        QCOMPARE(int(m_taskNumber.size()), 2);
        for (const auto& [name, n] : m_taskNumber)
            qInfo("tuning task %d: %s %s (%.1f MFLOP)", n, name.c_str(), m_taskArgs[name].c_str(), flops[name] / 1e6);
    }

    void testTuneOnBoards() {
        if (!m_missing.isEmpty()) QSKIP(qPrintable(m_missing));
        QVERIFY2(m_taskNumber.size() == 2, "testTasks picks the tasks");
        const QString tasks = QStringLiteral("%1,%2")
                                  .arg(m_taskNumber["conv2d_nchw_spatial_pack.mali"])
                                  .arg(m_taskNumber["conv2d_nchw_winograd.mali"]);
        const QStringList tune = {QStringLiteral("autotvm"), QStringLiteral("tune"), QStringLiteral("--network"),
                                  QStringLiteral("resnet-18"), QStringLiteral("--ops"), QStringLiteral("nn.conv2d"),
                                  QStringLiteral("--tasks"), tasks, QStringLiteral("--target"), QLatin1String(kTarget),
                                  QStringLiteral("--tuner"), QStringLiteral("xgb"), QStringLiteral("--n-trial"),
                                  QStringLiteral("10"), QStringLiteral("--early-stopping"), QStringLiteral("6"),
                                  QStringLiteral("--n-parallel"), QStringLiteral("2"), QStringLiteral("--number"),
                                  QStringLiteral("10"), QStringLiteral("--timeout"), QStringLiteral("5"),
                                  QStringLiteral("--log"), logPath()};
        QElapsedTimer clock;
        clock.start();
        const CliResult r = runCli(tune + fleet(), 420000);
        qInfo("autotvm tune of 2 resnet-18 mali tasks on the boards: %.1f s", clock.elapsed() / 1e3);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains(QStringLiteral("[Task  2/ 2]")) && r.out.contains(QStringLiteral("Done.")),
                 qPrintable(r.out));

        const auto log = record::readAutoTvmRecords(logPath().toStdString());
        QVERIFY(log.badLines.empty());
        std::map<std::string, int> records, ok;
        for (const auto& rec : log.records) {
            QVERIFY2(rec.target.rfind(kPrinted, 0) == 0, rec.target.c_str());
            QVERIFY(rec.version && rec.version->dump() == "0.2");
            QCOMPARE(rec.args.dump(), m_taskArgs[rec.taskName]);
            ++records[rec.taskName];
            // 0 ok, 1 instantiation (a config TVM rejects), 7 run timeout (a slow config under
            // --timeout 5); no compile, runtime or wrong-answer error.
            QVERIFY2(rec.errorNo == 0 || rec.errorNo == 1 || rec.errorNo == 7,
                     qPrintable(QStringLiteral("error_no %1 in %2").arg(rec.errorNo).arg(QString::fromStdString(rec.taskName))));
            if (rec.errorNo == 0) {
                ++ok[rec.taskName];
                QVERIFY(rec.meanCost() > 0 && rec.meanCost() < 5);
            } else {
                QCOMPARE(rec.costs, std::vector<double>{1e9});
            }
        }
        for (const auto& [name, n] : records) qInfo("%s: %d records, %d with error_no 0", name.c_str(), n, ok[name]);
        for (const char* name : {"conv2d_nchw_spatial_pack.mali", "conv2d_nchw_winograd.mali"}) {
            // n_trial 10, early stopping 6 with batches of 2: between 6 and 10 records.
            QVERIFY2(records[name] >= 6 && records[name] <= 10, name);
            QVERIFY2(ok[name] >= 1, name);
        }
    }

    void testCompileWithRecordsRunsOnBoard() {
        if (!m_missing.isEmpty()) QSKIP(qPrintable(m_missing));
        QVERIFY2(QFile::exists(logPath()), "testTuneOnBoards writes the log");
        const QStringList compile = {QStringLiteral("compile"), QStringLiteral("--network"), QStringLiteral("resnet-18"),
                                     QStringLiteral("--layout"), QStringLiteral("NCHW"), QStringLiteral("--target"), QLatin1String(kTarget), QStringLiteral("--log"),
                                     logPath(), QStringLiteral("--bench"), QStringLiteral("--repeat"),
                                     QStringLiteral("1"), QStringLiteral("--number"), QStringLiteral("1")};
        QElapsedTimer clock;
        clock.start();
        const CliResult r = runCli(compile + fleet(), 420000);
        qInfo("compile --log --bench of resnet-18 on a board: %.1f s", clock.elapsed() / 1e3);
        qInfo("%s", qPrintable(r.out.left(5000)));
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        // The two tuned workloads use their best records (the winograd record beats the spatial_pack
        // fallback of its conv); the other convs and the dense take fallback configs.
        for (const char* s : {"autotvm: conv2d_nchw_spatial_pack.mali #", "autotvm: conv2d_nchw_winograd.mali #",
                              "autotvm: conv2d_nchw_spatial_pack.mali fallback", "autotvm: dense.mali fallback"})
            QVERIFY2(r.out.contains(QLatin1String(s)), qPrintable(QLatin1String(s) + QStringLiteral("\n") + r.out.left(6000)));
        QVERIFY2(r.out.contains(QStringLiteral(" tuned ")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("against the host interpreter on the device: ok")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("Execution time summary:")), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestAutotvmMaliBoard)
#include "tst_autotvm_mali_board.moc"
