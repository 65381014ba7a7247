// SPDX-License-Identifier: Apache-2.0
// Seed 000's flow in AutoTVM flavour on the emulated fleet (issue 19): an in-process RPC tracker,
// two AArch64 device servers under qemu-aarch64-static registered as boards of one key, then the
// CLI as a user runs it:
//   1. `tunebench-cli autotvm tune --onnx <PP-OCR cls> --target "llvm -device=arm_cpu
//      -mtriple=aarch64-linux-gnu -mattr=+neon" --runner rpc --tracker ... --key ... --tuner xgb`
//      on two of the model's arm_cpu tasks (a conv2d_nchw_spatial_pack and a
//      depthwise_conv2d_nchw), plus `--template conv2d_nchw_winograd.arm_cpu` on a small 3x3 conv:
//      v0.2 records of the arm_cpu templates, measured on the boards, some with error_no 0;
//   2. `tunebench-cli compile --onnx ... --layout NCHW --log LOG --runner rpc --key ... --bench`:
//      the network compiled on the host with those records (arm_cpu strategy + alter_op_layout,
//      autotvm/apply_history_best.h), run on a board and its output checked against the host
//      interpreter.
// Trials are tiny (qemu runs kernels 10-40x slower than native). Without qemu, the board's sysroot
// or the cross-compiled server, the test is skipped (QSKIP, naming what is missing).
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "engine/record/autotvm_record.h"
#include "engine/record/record_io.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"
#include "tests/engine/test_cli_util.h"

using namespace tb;

namespace {

const char* const kArmTarget = "llvm -device=arm_cpu -mtriple=aarch64-linux-gnu -mattr=+neon";
const char* const kQemu = "qemu-aarch64-static";
const char* const kClsModel = "../shared/data/models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx";

using test::CliResult;
using test::runCli;

}  // namespace

class TestAutotvmBoard : public QObject {
    Q_OBJECT
    std::unique_ptr<rpc::Tracker> m_tracker;
    std::vector<std::unique_ptr<QProcess>> m_boards;
    std::string m_key;
    QString m_missing;  // why the test is skipped (empty: it runs)
    QTemporaryDir m_dir;

    int freeBoards() const { return test::freeServers(m_tracker->port(), m_key); }

    QStringList fleet() const {
        return {QStringLiteral("--runner"), QStringLiteral("rpc"), QStringLiteral("--tracker"),
                QStringLiteral("127.0.0.1:%1").arg(m_tracker->port()), QStringLiteral("--key"),
                QString::fromStdString(m_key)};
    }

    QString logPath() const { return m_dir.filePath(QStringLiteral("arm_autotvm.log")); }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
#ifdef TB_DEVICE_SERVER_MISSING
        m_missing = QStringLiteral("the AArch64 device server was not built: " TB_DEVICE_SERVER_MISSING);
        return;
#else
        const QString qemu = QStandardPaths::findExecutable(QLatin1String(kQemu));
        const QString server = QStringLiteral(TB_DEVICE_SERVER_PATH);
        if (qemu.isEmpty())
            m_missing = QStringLiteral("qemu-aarch64-static is missing (apt-get install qemu-user-static)");
        else if (!QFileInfo::exists(QStringLiteral("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1")))
            m_missing = QStringLiteral("/usr/aarch64-linux-gnu is missing (install libc6-dev-arm64-cross)");
        else if (!QFileInfo(server).isExecutable())
            m_missing = QStringLiteral("the AArch64 device server %1 is not built").arg(server);
        if (!m_missing.isEmpty()) return;
        rpc::TrackerOptions to;
        to.host = "127.0.0.1";
        to.port = 0;
        m_tracker = std::make_unique<rpc::Tracker>(to);
        m_tracker->start();
        m_key = "rasp4b-64-atvm" + std::to_string(getpid());
        for (int i = 0; i < 2; ++i) {
            auto board = std::make_unique<QProcess>();
            board->setProcessChannelMode(QProcess::MergedChannels);
            board->start(qemu, {QStringLiteral("-L"), QStringLiteral("/usr/aarch64-linux-gnu"), server,
                                QStringLiteral("--tracker"), QStringLiteral("127.0.0.1:%1").arg(m_tracker->port()),
                                QStringLiteral("--key"), QString::fromStdString(m_key), QStringLiteral("--host"),
                                QStringLiteral("127.0.0.1"), QStringLiteral("--port"), QStringLiteral("0"),
                                QStringLiteral("--threads"), QStringLiteral("1")});
            QVERIFY2(board->waitForStarted(10000), qPrintable(board->errorString()));
            m_boards.push_back(std::move(board));
        }
        bool up = false;
        for (int i = 0; i < 600 && !up; ++i) {
            up = freeBoards() >= 2;
            if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        QVERIFY2(up, qPrintable(QStringLiteral("the two emulated boards did not register:\n") +
                                QString::fromUtf8(m_boards[0]->readAll() + m_boards[1]->readAll())));
#endif
    }

    void cleanupTestCase() {
        for (auto& b : m_boards) {
            if (b->state() == QProcess::NotRunning) continue;
            b->terminate();
            if (!b->waitForFinished(10000)) {
                b->kill();
                b->waitForFinished(5000);
            }
        }
        if (m_tracker) m_tracker->stop();
    }

    void testTuneOnBoards() {
        if (!m_missing.isEmpty()) QSKIP(qPrintable(m_missing));
        // Tasks 1 and 5 of the cls model for arm_cpu: its first conv (spatial_pack) and first
        // depthwise conv (`autotvm tasks --onnx ... --target <arm>` lists them).
        QStringList tune = {QStringLiteral("autotvm"), QStringLiteral("tune"), QStringLiteral("--onnx"),
                            QLatin1String(kClsModel), QStringLiteral("--shape"), QStringLiteral("x=1,3,48,192"),
                            QStringLiteral("--tasks"), QStringLiteral("1,5"), QStringLiteral("--target"),
                            QLatin1String(kArmTarget), QStringLiteral("--tuner"), QStringLiteral("xgb"),
                            QStringLiteral("--n-trial"), QStringLiteral("4"), QStringLiteral("--n-parallel"),
                            QStringLiteral("2"), QStringLiteral("--number"), QStringLiteral("1"),
                            QStringLiteral("--timeout"), QStringLiteral("20"), QStringLiteral("--log"), logPath()};
        QElapsedTimer clock;
        clock.start();
        CliResult r = runCli(tune + fleet(), 240000);
        qInfo("autotvm tune of 2 network tasks on the boards: %.1f s", clock.elapsed() / 1e3);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains(QStringLiteral("[Task  2/ 2]")) && r.out.contains(QStringLiteral("Done.")),
                 qPrintable(r.out));
        // A winograd task (3x3, stride 1) on the boards too.
        const QStringList winograd = {
            QStringLiteral("autotvm"), QStringLiteral("tune"), QStringLiteral("--template"),
            QStringLiteral("conv2d_nchw_winograd.arm_cpu"), QStringLiteral("--args"),
            QStringLiteral(R"([["TENSOR", [1, 8, 8, 8], "float32"], ["TENSOR", [8, 8, 3, 3], "float32"], [1, 1], [1, 1, 1, 1], [1, 1], "float32"])"),
            QStringLiteral("--target"), QLatin1String(kArmTarget), QStringLiteral("--tuner"), QStringLiteral("xgb"),
            QStringLiteral("--n-trial"), QStringLiteral("3"), QStringLiteral("--n-parallel"), QStringLiteral("2"),
            QStringLiteral("--number"), QStringLiteral("1"), QStringLiteral("--timeout"), QStringLiteral("20"),
            QStringLiteral("--log"), logPath()};
        clock.restart();
        r = runCli(winograd + fleet(), 120000);
        qInfo("autotvm tune of a winograd task on the boards: %.1f s", clock.elapsed() / 1e3);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));

        const auto log = record::readAutoTvmRecords(logPath().toStdString());
        QVERIFY(log.badLines.empty());
        std::map<std::string, int> records, ok;
        std::map<int, int> errors;  // error_no -> records
        for (const auto& rec : log.records) {
            ++errors[rec.errorNo];
            QCOMPARE(rec.target, std::string(kArmTarget));
            ++records[rec.taskName];
            if (rec.errorNo == 0) {
                ++ok[rec.taskName];
                QVERIFY(rec.meanCost() > 0 && rec.meanCost() < 20);
            }
        }
        for (const auto& [name, n] : records) qInfo("%s: %d records, %d with error_no 0", name.c_str(), n, ok[name]);
        for (const auto& [no, n] : errors) qInfo("error_no %d: %d records", no, n);
        QCOMPARE(records["conv2d_nchw_spatial_pack.arm_cpu"], 4);
        QCOMPARE(records["depthwise_conv2d_nchw.arm_cpu"], 4);
        QCOMPARE(records["conv2d_nchw_winograd.arm_cpu"], 3);
        for (const char* name : {"conv2d_nchw_spatial_pack.arm_cpu", "depthwise_conv2d_nchw.arm_cpu",
                                 "conv2d_nchw_winograd.arm_cpu"})
            QVERIFY2(ok[name] >= 1, name);
    }

    void testCompileWithRecordsRunsOnBoard() {
        if (!m_missing.isEmpty()) QSKIP(qPrintable(m_missing));
        QVERIFY2(QFileInfo::exists(logPath()), "testTuneOnBoards writes the log");
        const QStringList compile = {QStringLiteral("compile"), QStringLiteral("--onnx"), QLatin1String(kClsModel),
                                     QStringLiteral("--shape"), QStringLiteral("x=1,3,48,192"), QStringLiteral("--layout"),
                                     QStringLiteral("NCHW"), QStringLiteral("--target"), QLatin1String(kArmTarget),
                                     QStringLiteral("--log"), logPath(), QStringLiteral("--bench"),
                                     QStringLiteral("--repeat"), QStringLiteral("1"), QStringLiteral("--number"),
                                     QStringLiteral("1")};
        QElapsedTimer clock;
        clock.start();
        const CliResult r = runCli(compile + fleet(), 240000);
        qInfo("compile --log --bench on a board: %.1f s", clock.elapsed() / 1e3);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        // The two tuned workloads take their best records; the rest of the convs the fallback configs.
        for (const char* name : {"conv2d_nchw_spatial_pack.arm_cpu #", "depthwise_conv2d_nchw.arm_cpu #",
                                 "conv2d_nchw_spatial_pack.arm_cpu fallback", "depthwise_conv2d_nchw.arm_cpu fallback"})
            QVERIFY2(r.out.contains(QLatin1String(name)), qPrintable(QLatin1String(name) + QStringLiteral("\n") + r.out));
        const QRegularExpression check(QStringLiteral("check output 0 \\(1x2\\) against the host interpreter: max abs "
                                                      "error \\S+, max abs error / max abs value \\S+ \\(ok, tolerance "
                                                      "0.0001\\)"));
        QVERIFY2(r.out.contains(check), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("Execution time summary:")), qPrintable(r.out));
        qInfo("%s", qPrintable(r.out.section(QStringLiteral("check output 0"), 1).left(200)));
    }
};

QTEST_APPLESS_MAIN(TestAutotvmBoard)
#include "tst_autotvm_board.moc"
