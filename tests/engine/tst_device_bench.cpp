// SPDX-License-Identifier: Apache-2.0
// Evaluating a whole network on a device of the fleet (issue 21, the end of TVM's ARM tutorial,
// seeds/000): the network is compiled and exported, uploaded to a device the tracker hands out,
// run there by the device's graph executor (`tunebench.graph_executor.benchmark`, SessionOp::kCall)
// and timed as TVM's module.benchmark; the outputs must equal the host reference interpreter's.
//
// Host part (always runs): an in-process tracker and RpcServers on 127.0.0.1, one whose executor
// serves the call with runtime::runNetworkRequest (the function the AArch64 server runs) on a
// host-compiled export, one that only times kernels (the default MeasureExecutor::call); runOnDevice
// against both; `tunebench-cli compile --runner rpc` with a key no device has.
// Board part: the AArch64 device server (tools/arm) under qemu-aarch64-static registered with the
// tracker; a network cross-compiled for `llvm -mtriple=aarch64-linux-gnu -mattr=+neon` runs there
// and matches the interpreter; the CLI prints the check and TVM's Execution time summary; a corrupt
// library comes back COMPILE_DEVICE; a board killed mid-run is "lost device". Without qemu, the
// board's sysroot or the cross-compiled server, these are skipped (QSKIP, naming what is missing).
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "engine/graph/interpreter.h"
#include "engine/measure/timer.h"
#include "engine/rpc/rpc_server.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"
#include "engine/runtime/build_module.h"
#include "engine/runtime/network_executor.h"
#include "engine/runtime/remote_network.h"
#include "tests/engine/test_cli_util.h"
#include "tests/engine/test_graph_util.h"
#include "tests/engine/test_network_executor.h"
#include "tests/engine/test_rpc_util.h"

using namespace tb;

namespace {

const char* const kArmTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon";
const char* const kQemu = "qemu-aarch64-static";
const std::string kClsModel = "../shared/data/models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx";

// Two NHWC conv2d (3x3, pad 1) + bias + relu layers on a 1x16x16x8 input, no softmax (whose nearly
// uniform output would hide errors): 1x16x16x16 values of ordinary magnitude to compare.
graph::Graph smallNetwork(graph::NodeId* firstLayer = nullptr) {
    graph::Graph g;
    graph::NodeId x = g.addInput("data", {{1, 16, 16, 8}});
    x = test::addConvBiasRelu(g, x, 8, 16, 3, "0");
    if (firstLayer) *firstLayer = x;
    g.addOutput(test::addConvBiasRelu(g, x, 16, 16, 9, "1"));
    return g;
}

// `g` compiled for `target` (empty: this machine) and exported into `dir`; for another target the
// kernels are cross-compiled and not loaded here.
runtime::CompiledModule exportNetwork(const graph::Graph& g, const QTemporaryDir& dir, const char* target = "") {
    runtime::BuildOptions bo;
    bo.target = target;
    bo.load = bo.target.empty();
    runtime::CompiledModule mod = runtime::build(g, bo);
    mod.exportLibrary(dir.path().toStdString());
    return mod;
}

// The network's inputs as the host's compile --bench fills them (seed 1 + i), with their names.
std::vector<rpc::NamedTensor> seededInputs(const runtime::ExecGraph& eg) {
    std::vector<rpc::NamedTensor> in;
    for (size_t i = 0; i < eg.inputs.size(); ++i) {
        const runtime::ExecNode& n = eg.nodes[size_t(eg.inputs[i])];
        rpc::NamedTensor t{n.name, n.shape, std::vector<float>(size_t(n.numElements()))};
        measure::fillRandom(t.data.data(), t.data.size(), 1 + i);
        in.push_back(std::move(t));
    }
    return in;
}

// Relative max error of a device's output 0 against the interpreter's on the same inputs.
double errorAgainstInterpreter(const graph::Graph& g, const std::vector<rpc::NamedTensor>& inputs,
                               const runtime::RemoteRunResult& r) {
    std::map<std::string, te::Buffer> byName;
    for (const auto& t : inputs) byName[t.name] = te::Buffer{t.shape, t.data};
    const auto ref = graph::runGraph(g, byName);
    if (r.outputs.size() != ref.size() || r.outputs[0].shape != ref[0].shape) return 1e30;
    return runtime::relativeMaxError(r.outputs[0].data.data(), ref[0].data.data(), ref[0].data.size());
}

// A server of kernels only: the network call gets MeasureExecutor::call's "no function" reply.
class KernelOnlyExecutor final : public rpc::MeasureExecutor {
public:
    rpc::RunReply run(const rpc::RunRequest&) override { return {}; }
};

using test::CliResult;
using test::runCli;

}  // namespace

// The board part's precondition, in the test function itself (QSKIP and QVERIFY return from the
// function they are in): skipped when the emulation cannot run here at all, failed when it should.
#define REQUIRE_BOARD()                                                       \
    do {                                                                      \
        if (!m_boardMissing.isEmpty()) QSKIP(qPrintable(m_boardMissing));    \
        const QString down = boardDown();                                     \
        QVERIFY2(down.isEmpty(), qPrintable(down));                           \
    } while (0)

class TestDeviceBench : public QObject {
    Q_OBJECT

    std::unique_ptr<rpc::Tracker> m_tracker;
    std::vector<std::unique_ptr<rpc::RpcServer>> m_servers;
    std::string m_hostKey, m_oldKey, m_boardKey;
    std::unique_ptr<QProcess> m_board;
    QString m_boardMissing;  // why the board part is skipped (empty: it runs)

    int serversOf(const std::string& key) const { return test::freeServers(m_tracker->port(), key); }

    bool waitForFree(const std::string& key, int n, int seconds) const {
        for (int i = 0; i < seconds * 10; ++i) {
            if (serversOf(key) >= n) return true;
            if (m_board && key == m_boardKey && m_board->state() == QProcess::NotRunning) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    }

    runtime::RemoteRunOptions remoteOptions(const std::string& key) const {
        runtime::RemoteRunOptions o;
        o.trackerPort = m_tracker->port();
        o.key = key;
        o.repeat = 3;
        o.number = 1;
        o.requestTimeoutS = 60;
        o.timeoutS = 120;
        return o;
    }

    // Why the board is not running ("" when it is).
    QString boardDown() const {
        if (m_board && m_board->state() == QProcess::Running) return {};
        return QStringLiteral("the emulated board is not running:\n") + QString::fromUtf8(m_board ? m_board->readAll() : QByteArray());
    }

private Q_SLOTS:
    void initTestCase() {
        rpc::TrackerOptions to;
        to.host = "127.0.0.1";
        to.port = 0;
        m_tracker = std::make_unique<rpc::Tracker>(to);
        m_tracker->start();
        const std::string pid = std::to_string(getpid());
        m_hostKey = "hostnet" + pid;
        m_oldKey = "kernelsonly" + pid;
        m_boardKey = "rasp4b-64-bench" + pid;
        m_servers.push_back(std::make_unique<rpc::RpcServer>(test::serverOptions(m_tracker->port(), m_hostKey),
                                                             std::make_shared<test::HostNetworkExecutor>()));
        m_servers.push_back(std::make_unique<rpc::RpcServer>(test::serverOptions(m_tracker->port(), m_oldKey),
                                                             std::make_shared<KernelOnlyExecutor>()));
        for (auto& s : m_servers) s->start();
        QVERIFY(waitForFree(m_hostKey, 1, 30));
        QVERIFY(waitForFree(m_oldKey, 1, 30));

        // The emulated board, when this machine can run one.
        const QString qemu = QStandardPaths::findExecutable(QLatin1String(kQemu));
#ifdef TB_DEVICE_SERVER_MISSING
        m_boardMissing = QStringLiteral("the AArch64 device server was not built: " TB_DEVICE_SERVER_MISSING);
#else
        const QString server = QStringLiteral(TB_DEVICE_SERVER_PATH);
        if (qemu.isEmpty())
            m_boardMissing = QStringLiteral("qemu-aarch64-static is missing, no emulated ARM board "
                                            "(apt-get install qemu-user-static; scripts/setup installs it)");
        else if (!QFileInfo::exists(QStringLiteral("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1")))
            m_boardMissing = QStringLiteral("/usr/aarch64-linux-gnu is missing (install libc6-dev-arm64-cross)");
        else if (!QFileInfo(server).isExecutable())
            m_boardMissing = QStringLiteral("the AArch64 device server %1 is not built").arg(server);
        if (!m_boardMissing.isEmpty()) return;
        m_board = std::make_unique<QProcess>();
        m_board->setProcessChannelMode(QProcess::MergedChannels);
        m_board->start(qemu, {QStringLiteral("-L"), QStringLiteral("/usr/aarch64-linux-gnu"), server,
                              QStringLiteral("--tracker"), QStringLiteral("127.0.0.1:%1").arg(m_tracker->port()),
                              QStringLiteral("--key"), QString::fromStdString(m_boardKey), QStringLiteral("--host"),
                              QStringLiteral("127.0.0.1"), QStringLiteral("--port"), QStringLiteral("0"),
                              QStringLiteral("--threads"), QStringLiteral("1")});
        QVERIFY2(m_board->waitForStarted(10000), qPrintable(m_board->errorString()));
        QVERIFY2(waitForFree(m_boardKey, 1, 60),
                 qPrintable(QStringLiteral("the emulated board did not register:\n") + QString::fromUtf8(m_board->readAll())));
#endif
    }

    void cleanupTestCase() {
        if (m_board && m_board->state() != QProcess::NotRunning) {
            m_board->terminate();
            if (!m_board->waitForFinished(10000)) {
                m_board->kill();
                m_board->waitForFinished(5000);
            }
        }
        for (auto& s : m_servers) s->stop();
        if (m_tracker) m_tracker->stop();
    }

    void testHostServerRunsTheExport() {
        // Compiled and exported for this machine; the server loads the export with DeployedNetwork,
        // runs it on the inputs the call carried and times it: outputs equal to the interpreter's,
        // one timing per repeat, TVM's summary.
        const graph::Graph g = smallNetwork();
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const runtime::CompiledModule mod = exportNetwork(g, tmp);
        const auto inputs = seededInputs(mod.graph());
        std::vector<std::string> steps;
        runtime::RemoteRunOptions o = remoteOptions(m_hostKey);
        o.progress = [&](const std::string& s) { steps.push_back(s); };
        const runtime::RemoteRunResult r = runtime::runOnDevice(tmp.path().toStdString(), inputs, o);
        QCOMPARE(QString::fromStdString(r.serverKey), QString::fromStdString("server:" + m_hostKey));
        QVERIFY(r.uploadBytes > 0);
        QCOMPARE(r.outputs.size(), size_t(1));
        QCOMPARE(r.outputs[0].shape, (std::vector<int64_t>{1, 16, 16, 16}));
        const double err = errorAgainstInterpreter(g, inputs, r);
        QVERIFY2(err <= 1e-5, qPrintable(QString::number(err)));
        // Not vacuous: the output has ordinary values, and another input gives another output.
        float maxAbs = 0;
        for (float v : r.outputs[0].data) maxAbs = std::max(maxAbs, std::abs(v));
        QVERIFY(maxAbs > 0.1f);
        QCOMPARE(r.bench.results.size(), size_t(3));
        for (double c : r.bench.results) QVERIFY(c > 0 && c < 10);
        QVERIFY(QString::fromStdString(r.bench.summary()).startsWith(QStringLiteral("Execution time summary:\n")));
        QVERIFY(steps.size() >= 5);  // request, connected, three uploads, evaluate
        auto wrong = inputs;
        wrong[0].data[0] += 100.f;
        const runtime::RemoteRunResult r2 = runtime::runOnDevice(tmp.path().toStdString(), wrong, remoteOptions(m_hostKey));
        QVERIFY(errorAgainstInterpreter(g, inputs, r2) > 1e-3);
    }

    void testServerWithoutTheFunction() {
        // A server that only times kernels answers the call with COMPILE_DEVICE "no function".
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const runtime::CompiledModule mod = exportNetwork(smallNetwork(), tmp);
        try {
            runtime::runOnDevice(tmp.path().toStdString(), seededInputs(mod.graph()), remoteOptions(m_oldKey));
            QFAIL("runOnDevice succeeded on a server without the network function");
        } catch (const runtime::RemoteRunError& e) {
            const QString m = QString::fromUtf8(e.what());
            QVERIFY2(m.contains(QStringLiteral("COMPILE_DEVICE")) &&
                         m.contains(QStringLiteral("has no function 'tunebench.graph_executor.benchmark'")),
                     e.what());
        }
        // The server lives on and is handed out again.
        QVERIFY(waitForFree(m_oldKey, 1, 30));
    }

    void testCliNoDeviceOfKey() {
        // compile --runner rpc with a key nobody registered: exit 1 at once, naming the key and the
        // keys the tracker has (TVM's request would wait forever).
        QVERIFY2(QFileInfo::exists(QString::fromStdString(kClsModel)), kClsModel.c_str());
        const CliResult r = runCli({QStringLiteral("compile"), QStringLiteral("--onnx"), QString::fromStdString(kClsModel),
                                    QStringLiteral("--shape"), QStringLiteral("x=1,3,48,192"), QStringLiteral("--target"),
                                    QLatin1String(kArmTarget), QStringLiteral("--runner"), QStringLiteral("rpc"),
                                    QStringLiteral("--tracker"), QStringLiteral("127.0.0.1:%1").arg(m_tracker->port()),
                                    QStringLiteral("--key"), QStringLiteral("nosuchboard"), QStringLiteral("--bench")},
                                   240000);
        QVERIFY2(r.exitCode == 1, qPrintable(r.out + r.err));
        QVERIFY2(r.err.contains(QStringLiteral("has no device of key 'nosuchboard'")) &&
                     r.err.contains(QString::fromStdString(m_hostKey + " (1)")),
                 qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("Compiled for llvm -mtriple=aarch64-linux-gnu")), qPrintable(r.out));
    }

    void testBoardRunsTheNetwork() {
        // Cross-compiled for AArch64 (not loaded here), run by the board's graph executor under qemu.
        REQUIRE_BOARD();
        graph::NodeId firstLayer = -1;
        const graph::Graph g = smallNetwork(&firstLayer);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const runtime::CompiledModule mod = exportNetwork(g, tmp, kArmTarget);
        QVERIFY(!mod.runnable());
        const auto inputs = seededInputs(mod.graph());
        // The first kernel's output comes back too (debug_get_output): the last kernel's input.
        runtime::RemoteRunOptions o = remoteOptions(m_boardKey);
        const std::vector<int> ops = mod.graph().opNodes();
        QCOMPARE(ops.size(), size_t(2));
        o.debugNodes = {ops[0]};
        const runtime::RemoteRunResult r = runtime::runOnDevice(tmp.path().toStdString(), inputs, o);
        QCOMPARE(QString::fromStdString(r.serverKey), QString::fromStdString("server:" + m_boardKey));
        QCOMPARE(r.deviceThreads, 1);
        const double err = errorAgainstInterpreter(g, inputs, r);
        qInfo("small network on the emulated board: mean %.3f ms, relative max error %.3g", r.bench.mean * 1e3, err);
        QVERIFY2(err <= 1e-5, qPrintable(QString::number(err)));
        QCOMPARE(r.bench.results.size(), size_t(3));
        graph::Graph first = g;
        first.setOutputs({firstLayer});
        std::map<std::string, te::Buffer> byName;
        for (const auto& t : inputs) byName[t.name] = te::Buffer{t.shape, t.data};
        const auto want = graph::runGraph(first.pruned(), byName);
        QCOMPARE(r.debugOutputs.size(), size_t(1));
        QCOMPARE(r.debugOutputs[0].shape, want.at(0).shape);
        const double firstErr =
            runtime::relativeMaxError(r.debugOutputs[0].data.data(), want[0].data.data(), want[0].data.size());
        QVERIFY2(firstErr <= 1e-5, qPrintable(QString::number(firstErr)));
    }

    void testCliBenchOnBoard() {
        // The seed-000 command on a real model (PP-OCR's direction classifier, real weights): the
        // check line says ok and the device's Execution time summary follows.
        REQUIRE_BOARD();
        const CliResult r = runCli({QStringLiteral("compile"), QStringLiteral("--onnx"), QString::fromStdString(kClsModel),
                                    QStringLiteral("--shape"), QStringLiteral("x=1,3,48,192"), QStringLiteral("--target"),
                                    QLatin1String(kArmTarget), QStringLiteral("--runner"), QStringLiteral("rpc"),
                                    QStringLiteral("--tracker"), QStringLiteral("127.0.0.1:%1").arg(m_tracker->port()),
                                    QStringLiteral("--key"), QString::fromStdString(m_boardKey), QStringLiteral("--bench"),
                                    QStringLiteral("--repeat"), QStringLiteral("2"), QStringLiteral("--number"),
                                    QStringLiteral("1")},
                                   240000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        // The cls model ends in a softmax: its input (the logits) is fetched from the board and checked too.
        const QStringList checked = {QStringLiteral("output 0"), QStringLiteral("the final softmax%1s input").arg(QChar(0x27))};
        for (const QString& what : checked) {
            const QRegularExpression line(QStringLiteral("check %1 \\(1x2\\) against the host interpreter: max abs error "
                                                         "\\S+, max abs error / max abs value \\S+ \\(ok, tolerance 0.0001\\)")
                                              .arg(QRegularExpression::escape(what)));
            QVERIFY2(r.out.contains(line), qPrintable(r.out));
        }
        const QRegularExpression summary(QStringLiteral(
            "Execution time summary:\n mean \\(ms\\)   median \\(ms\\)    max \\(ms\\)     min \\(ms\\)     std \\(ms\\)  \n"
            " *([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) {15,}\n"));
        const auto m = summary.match(r.out);
        QVERIFY2(m.hasMatch(), qPrintable(r.out));
        QVERIFY(m.captured(1).toDouble() > 0);
        QVERIFY2(r.out.contains(QStringLiteral("Execution time on ")) &&
                     r.out.contains(QString::fromStdString("(server:" + m_boardKey + ")")),
                 qPrintable(r.out));
    }

    void testBoardRejectsACorruptLibrary() {
        REQUIRE_BOARD();
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const runtime::CompiledModule mod = exportNetwork(smallNetwork(), tmp, kArmTarget);
        { std::ofstream(tmp.filePath(QStringLiteral("deploy_lib.so")).toStdString(), std::ios::binary) << "not an ELF"; }
        try {
            runtime::runOnDevice(tmp.path().toStdString(), seededInputs(mod.graph()), remoteOptions(m_boardKey));
            QFAIL("a corrupt library ran");
        } catch (const runtime::RemoteRunError& e) {
            const QString m = QString::fromUtf8(e.what());
            QVERIFY2(m.contains(QStringLiteral("COMPILE_DEVICE")) && m.contains(QStringLiteral("cannot load")), e.what());
        }
        QVERIFY(waitForFree(m_boardKey, 1, 30));  // the board survived
    }

    void testBoardKilledMidRun() {
        // The board dies while it times the network: a clear "lost device" error, at once.
        REQUIRE_BOARD();
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const runtime::CompiledModule mod = exportNetwork(smallNetwork(), tmp, kArmTarget);
        runtime::RemoteRunOptions o = remoteOptions(m_boardKey);
        o.repeat = 1000;  // minutes of timing: it is killed long before
        o.minRepeatMs = 1000;
        o.timeoutS = 600;
        std::atomic<bool> running{false};
        o.progress = [&](const std::string& s) {
            if (s.rfind("Evaluate", 0) == 0) running = true;
        };
        std::string error;
        std::thread t([&] {
            try {
                runtime::runOnDevice(tmp.path().toStdString(), seededInputs(mod.graph()), o);
            } catch (const std::exception& e) {
                error = e.what();
            }
        });
        for (int i = 0; i < 600 && !running; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        const auto killedAt = std::chrono::steady_clock::now();
        m_board->kill();
        m_board->waitForFinished(10000);
        t.join();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killedAt).count();
        QVERIFY(running);
        QVERIFY2(QString::fromStdString(error).contains(QStringLiteral("lost device")), error.c_str());
        QVERIFY2(seconds < 20, qPrintable(QString::number(seconds)));
    }
};

QTEST_APPLESS_MAIN(TestDeviceBench)
#include "tst_device_bench.moc"
