// SPDX-License-Identifier: Apache-2.0
// GPU measuring through the tracker, as seed 003 does it: an in-process tracker and two emulated
// "Mali" boards (tools/gpu's tunebench-gpu-server processes on PoCL, with scripts/mali-board's
// Mali-T860 limits). The host reads the device's attributes into HardwareParams, then RPCRunner
// measures hand-written OpenCL C GpuModules on both boards at once: correct modules give positive
// times, each broken one its own error record (compile error with the build log, out-of-bounds
// write, wrong answer, a work-group over the emulated limit, a hang), and a malformed module JSON
// is refused with the field named. Also: GpuLocalRunner on this machine's OpenCL device, and
// `tunebench-cli rpc-server --device opencl` answering the attribute query with PoCL's own limits.
#include <QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/measure/builder.h"
#include "engine/measure/gpu_executor.h"
#include "engine/measure/gpu_runner.h"
#include "engine/measure/gpu_worker_client.h"
#include "engine/measure/rpc_runner.h"
#include "engine/rpc/rpc_session.h"
#include "engine/rpc/socket.h"
#include "engine/rpc/tracker.h"
#include "engine/support/error.h"
#include "engine/support/process.h"
#include "tests/engine/test_rpc_util.h"
#include "tools/gpu/sample_modules.h"

using namespace tb;
using codegen::GpuLanguage;
using measure::MeasureErrorNo;

namespace {

std::string describe(const measure::MeasureResult& r) {
    return std::string(measure::errorName(r.errorNo)) + ": " + r.errorMsg;
}

measure::MeasureInput gpuInput(const codegen::GpuModule& m, const measure::CheckSpec* check = nullptr) {
    measure::MeasureInput in;
    in.gpuModule = std::make_shared<const codegen::GpuModule>(m);
    if (check) in.check = std::make_shared<const measure::CheckSpec>(*check);
    in.workloadKey = "gpu-sample";
    return in;
}

void stop(pid_t& pid) {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
}

}  // namespace

class TestGpuRpc : public QObject {
    Q_OBJECT

    std::unique_ptr<rpc::Tracker> m_tracker;
    int m_trackerPort = 0;
    std::string m_key;
    std::vector<pid_t> m_servers;
    std::filesystem::path m_logDir;

    measure::RpcRunnerOptions runnerOptions() const {
        measure::RpcRunnerOptions o;
        o.trackerPort = m_trackerPort;
        o.key = m_key;
        o.timeoutS = 20;  // PoCL compiles each module in the measuring child
        o.number = 2;
        o.repeat = 3;
        o.minRepeatMs = 5;
        o.requestTimeoutS = 30;
        o.ioTimeoutS = 30;
        return o;
    }

    pid_t spawnServer(std::vector<std::string> args, const std::string& log) {
        args.insert(args.end(), {"--tracker", "127.0.0.1:" + std::to_string(m_trackerPort), "--host", "127.0.0.1",
                                 "--port", "0"});
        return spawnLogged(args, (m_logDir / log).string());
    }

private Q_SLOTS:
    void initTestCase() {
        m_logDir = std::filesystem::temp_directory_path() / ("tst_gpu_rpc_" + std::to_string(getpid()));
        std::filesystem::create_directories(m_logDir);
        rpc::listenTcp("127.0.0.1", 0, 0, &m_trackerPort);  // a free port: bound, read, closed at once
        m_key = "rk3399-" + std::to_string(getpid());
        // scripts/mali-board's emulated Mali-T860 limits.
        const std::vector<std::string> mali = {"--attr", "max_threads_per_block=256", "--attr",
                                               "max_shared_memory_per_block=32768", "--attr",
                                               "device_name=Mali-T860 MP4 (PoCL emulation)"};
        for (int i = 0; i < 2; ++i) {
            std::vector<std::string> args = {TB_GPU_SERVER_PATH, "--device", "opencl", "--key", m_key};
            args.insert(args.end(), mali.begin(), mali.end());
            m_servers.push_back(spawnServer(args, "mali-" + std::to_string(i) + ".log"));
        }
        rpc::TrackerOptions to;
        to.host = "127.0.0.1";
        to.port = m_trackerPort;
        to.portEnd = m_trackerPort + 1;
        m_tracker = std::make_unique<rpc::Tracker>(to);
        m_tracker->start();
        QVERIFY2(test::waitForServers(m_trackerPort, m_key, 2),
                 ("the two GPU servers did not register; logs in " + m_logDir.string()).c_str());
    }

    void cleanupTestCase() {
        for (pid_t& p : m_servers) stop(p);
        if (m_tracker) m_tracker->stop();
        std::error_code ec;
        std::filesystem::remove_all(m_logDir, ec);
    }

    void testHardwareParamsFromTheDevice() {
        // Seed 003: request_remote(key), then dev.max_shared_memory_per_block & co.
        const measure::RemoteGpuDevice d = measure::queryRemoteGpuDevice("127.0.0.1", m_trackerPort, m_key, 30);
        QCOMPARE(QString::fromStdString(d.deviceApi), QStringLiteral("opencl"));
        QCOMPARE(d.attributes.maxThreadsPerBlock, 256);
        QCOMPARE(d.attributes.maxSharedMemoryPerBlock, 32768);
        QCOMPARE(d.attributes.warpSize, 1);
        QVERIFY(d.attributes.deviceName.find("Mali-T860") != std::string::npos);
        QCOMPARE(QString::fromStdString(d.attributes.platformName), QStringLiteral("Portable Computing Language"));
        // With warp_size 1 the seed's formula gives TVM's own Mali defaults.
        QVERIFY(measure::hardwareParamsFromGpu(d.attributes) == HardwareParams::mali());
        gpu::GpuDeviceAttributes nvidia;
        nvidia.maxSharedMemoryPerBlock = 49152;
        nvidia.maxThreadsPerBlock = 1024;
        nvidia.warpSize = 32;
        const HardwareParams h = measure::hardwareParamsFromGpu(nvidia);
        QCOMPARE(h.maxVthreadExtent, 8);
        QCOMPARE(h.maxLocalMemoryPerBlock, INT_MAX);
        QCOMPARE(h.numCores, -1);
        // A key nobody serves: a clear error naming it.
        try {
            measure::queryRemoteGpuDevice("127.0.0.1", m_trackerPort, "no-such-board", 1);
            QFAIL("attributes from a key nobody serves");
        } catch (const UserError& e) {
            QVERIFY2(std::string(e.what()).find("no-such-board") != std::string::npos, e.what());
        }
    }

    void testMeasureThroughTracker() {
        const GpuLanguage cl = GpuLanguage::OpenCL;
        const gpu::samples::SampleCase add = gpu::samples::vectorAdd(cl);
        const gpu::samples::SampleCase mm = gpu::samples::tiledMatmulBiasRelu(cl);
        gpu::samples::SampleCase wrong = gpu::samples::vectorAdd(cl);
        wrong.check.expected[2][3] = 42.0f;
        codegen::GpuModule tooWide = gpu::samples::vectorAdd(cl, 1024).module;  // fine for PoCL, not for a Mali
        tooWide.launches[0].grid = {2, 1, 1};
        tooWide.launches[0].block = {512, 1, 1};
        std::vector<measure::MeasureInput> inputs = {
            gpuInput(add.module, &add.check),      gpuInput(mm.module, &mm.check),
            gpuInput(gpu::samples::brokenSource(cl)), gpuInput(gpu::samples::outOfBoundsWrite(cl)),
            gpuInput(wrong.module, &wrong.check),  gpuInput(tooWide),
            gpuInput(gpu::samples::endlessLoop(cl)), gpuInput(mm.module),
        };
        // The builder passes GPU modules through (they are compiled on the device).
        measure::LocalBuilder builder(codegen::Target::host());
        const std::vector<measure::BuildResult> builds = builder.build(inputs);
        for (const auto& b : builds) {
            QVERIFY2(b.errorNo == MeasureErrorNo::NoError && b.gpuModule && !b.kernel, b.errorMsg.c_str());
        }
        measure::RpcRunnerOptions o = runnerOptions();
        o.timeoutS = 15;
        std::mutex mu;
        std::set<std::string> servers;
        o.onEvent = [&](const measure::RpcRunnerEvent& e) {
            std::lock_guard<std::mutex> lock(mu);
            if (e.kind == measure::RpcRunnerEvent::Kind::SessionOpened) servers.insert(e.server);
        };
        measure::RpcRunner runner(o);
        const std::vector<measure::MeasureResult> r = runner.run(inputs, builds);
        QCOMPARE(r.size(), inputs.size());
        for (int i : {0, 1, 7}) {
            QVERIFY2(r[size_t(i)].ok(), describe(r[size_t(i)]).c_str());
            QCOMPARE(int(r[size_t(i)].costs.size()), 3);
            for (double c : r[size_t(i)].costs) QVERIFY(c > 0 && c < 1);
        }
        QCOMPARE(r[2].errorNo, MeasureErrorNo::CompileDevice);
        QVERIFY2(r[2].errorMsg.find("undeclared_value") != std::string::npos, describe(r[2]).c_str());
        QCOMPARE(r[3].errorNo, MeasureErrorNo::RuntimeDevice);
        QVERIFY2(r[3].errorMsg.find("out-of-bounds") != std::string::npos, describe(r[3]).c_str());
        QCOMPARE(r[4].errorNo, MeasureErrorNo::WrongAnswer);
        QVERIFY2(r[4].errorMsg.find("element 3") != std::string::npos, describe(r[4]).c_str());
        QCOMPARE(r[5].errorNo, MeasureErrorNo::RuntimeDevice);
        QVERIFY2(r[5].errorMsg.find("512 threads per block exceed the device's 256") != std::string::npos,
                 describe(r[5]).c_str());
        QCOMPARE(r[6].errorNo, MeasureErrorNo::RunTimeout);
        for (size_t i = 2; i < 7; ++i) QCOMPARE(r[i].costs, std::vector<double>{measure::kMaxFloat});
        QCOMPARE(int(servers.size()), 2);  // both boards measured
        // The hung candidate cost its board nothing lasting: both are free again.
        QVERIFY(test::waitForServers(m_trackerPort, m_key, 2));
    }

    void testMalformedModuleUpload() {
        rpc::ConnectOptions co;
        rpc::TrackerSession t = rpc::TrackerSession::connect("127.0.0.1", m_trackerPort, co);
        rpc::RpcSession s = rpc::requestSession(t, m_key, 1, {}, 3, 30000);
        rpc::RunRequest req;
        req.timeoutSec = 20;
        req.module = "garbage.gpu.json";
        s.upload(req.module, "{this is not json");
        rpc::RunReply rep = s.run(req);
        QCOMPARE(rep.errorNo, int(MeasureErrorNo::CompileDevice));
        QVERIFY2(rep.errorMsg.find("malformed GPU module 'garbage.gpu.json'") != std::string::npos, rep.errorMsg.c_str());
        nlohmann::json j = codegen::toJson(gpu::samples::vectorAdd(GpuLanguage::OpenCL).module);
        j["launches"][0]["grid"] = {0, 1, 1};
        req.module = "zero_grid.gpu.json";
        s.upload(req.module, j.dump());
        rep = s.run(req);
        QCOMPARE(rep.errorNo, int(MeasureErrorNo::CompileDevice));
        QVERIFY2(rep.errorMsg.find("launch 0 has a non-positive extent") != std::string::npos, rep.errorMsg.c_str());
        // A CUDA module on an OpenCL board: refused, not crashed.
        req.module = "cuda.gpu.json";
        s.upload(req.module, codegen::toJson(gpu::samples::vectorAdd(GpuLanguage::CUDA).module).dump());
        rep = s.run(req);
        QCOMPARE(rep.errorNo, int(MeasureErrorNo::CompileDevice));
        QVERIFY2(rep.errorMsg.find("cannot run a cuda module") != std::string::npos, rep.errorMsg.c_str());
        s.close();
    }

    void testGpuLocalRunner() {
        const gpu::samples::SampleCase mm = gpu::samples::tiledMatmulBiasRelu(GpuLanguage::OpenCL);
        std::vector<measure::MeasureInput> inputs = {gpuInput(mm.module, &mm.check),
                                                     gpuInput(gpu::samples::brokenSource(GpuLanguage::OpenCL))};
        inputs.push_back(measure::MeasureInput{});  // a CPU candidate: no GPU module
        std::vector<measure::BuildResult> builds(3);
        builds[0].gpuModule = inputs[0].gpuModule;
        builds[1].gpuModule = inputs[1].gpuModule;
        builds[2].errorNo = MeasureErrorNo::NoError;
        measure::GpuRunnerOptions o;
        o.minRepeatMs = 5;
        o.repeat = 2;
        o.timeoutS = 60;
        measure::GpuLocalRunner runner(o);
        int events = 0;
        runner.setEventSink([&](const measure::MeasureEvent&) { ++events; });
        const auto r = runner.run(inputs, builds);
        QVERIFY2(r[0].ok(), describe(r[0]).c_str());
        QCOMPARE(int(r[0].costs.size()), 2);
        QVERIFY(r[0].costs[0] > 0 && r[0].allCost > 0);
        QCOMPARE(r[1].errorNo, MeasureErrorNo::CompileDevice);
        QCOMPARE(r[2].errorNo, MeasureErrorNo::CompileDevice);
        QVERIFY2(r[2].errorMsg.find("without a GPU module") != std::string::npos, describe(r[2]).c_str());
        QCOMPARE(events, 4);  // Started + Finished for each of the two GPU candidates
        QVERIFY_THROWS_EXCEPTION(UserError, measure::GpuLocalRunner(measure::GpuRunnerOptions{.repeat = 0}));
    }

    // A tuning round's batch in one worker process (measureGpuModulesInWorker): results in the
    // modules' order, each failure its own error number, and the candidates after a hang (killed)
    // or a run-time fault (the worker stops) measured by a fresh worker.
    void testWorkerBatch() {
        const gpu::samples::SampleCase add = gpu::samples::vectorAdd(GpuLanguage::OpenCL);
        const gpu::samples::SampleCase mm = gpu::samples::tiledMatmulBiasRelu(GpuLanguage::OpenCL);
        gpu::samples::SampleCase wrong = gpu::samples::vectorAdd(GpuLanguage::OpenCL);
        wrong.check.expected[2][5] += 1.0f;
        const codegen::GpuModule broken = gpu::samples::brokenSource(GpuLanguage::OpenCL);
        const codegen::GpuModule hang = gpu::samples::endlessLoop(GpuLanguage::OpenCL);
        const codegen::GpuModule oob = gpu::samples::outOfBoundsWrite(GpuLanguage::OpenCL);
        const std::vector<const codegen::GpuModule*> modules = {&add.module, &broken, &hang, &mm.module,
                                                                &oob, &wrong.module, &add.module};
        const std::vector<const gpu::GpuCheck*> checks = {&add.check, nullptr, nullptr, &mm.check,
                                                          nullptr, &wrong.check, &add.check};
        gpu::GpuMeasureOptions o;
        o.number = 2;
        o.repeat = 2;
        o.minRepeatMs = 2;
        std::vector<int> order;
        QElapsedTimer t;
        t.start();
        const auto r = measure::measureGpuModulesInWorker(
            gpu::GpuApi::OpenCL, 0, modules, o, checks, 5, 2, {},
            [&](int i, const gpu::GpuMeasureResult&) { order.push_back(i); });
        QCOMPARE(int(r.size()), 7);
        QCOMPARE(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
        const std::vector<int> want = {gpu::kErrorNone,          gpu::kErrorCompileDevice, gpu::kErrorRunTimeout,
                                       gpu::kErrorNone,          gpu::kErrorRuntimeDevice, gpu::kErrorWrongAnswer,
                                       gpu::kErrorNone};
        for (size_t i = 0; i < r.size(); ++i) {
            QVERIFY2(r[i].errorNo == want[i], (std::to_string(i) + ": " + std::to_string(r[i].errorNo) + " " + r[i].errorMsg).c_str());
            if (r[i].ok()) QVERIFY(r[i].costs.size() == 2 && r[i].costs[0] > 0);
        }
        QVERIFY2(r[4].errorMsg.find("out-of-bounds") != std::string::npos, r[4].errorMsg.c_str());
        QVERIFY(t.elapsed() < 60000);  // the hang costs its 5 s deadline, not the whole batch's
        // An empty batch starts nothing.
        QVERIFY(measure::measureGpuModulesInWorker(gpu::GpuApi::OpenCL, 0, {}, o, {}, 5).empty());
    }

    // Seed 003's flow through the CLI on the two boards, with mlp (seed 003 itself tunes mobilenet:
    // the same steps, minutes on PoCL): `tune` reads the hardware parameters from a board and
    // measures there, `compile --runner rpc --bench` runs the tuned network on a board, which checks
    // its output against the host interpreter's.
    void testSeed003FlowThroughTheCli() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString log = dir.filePath(QStringLiteral("mlp-mali.json"));
        const QString target = QStringLiteral("opencl -device=mali -host=llvm -mtriple=aarch64-linux-gnu");
        const QStringList fleet = {QStringLiteral("--runner"), QStringLiteral("rpc"), QStringLiteral("--tracker"),
                                   QStringLiteral("127.0.0.1:%1").arg(m_trackerPort), QStringLiteral("--key"),
                                   QString::fromStdString(m_key)};
        QProcess tune;
        tune.setProcessChannelMode(QProcess::MergedChannels);
        tune.start(QStringLiteral(TB_CLI_PATH), QStringList{QStringLiteral("tune"), QStringLiteral("--network"),
                                                             QStringLiteral("mlp"), QStringLiteral("--target"), target,
                                                             QStringLiteral("--trials"), QStringLiteral("16"),
                                                             QStringLiteral("--per-round"), QStringLiteral("4"),
                                                             QStringLiteral("--min-repeat-ms"), QStringLiteral("5"),
                                                             QStringLiteral("--log"), log} + fleet);
        QVERIFY(tune.waitForFinished(240000));
        const QString tuneOut = QString::fromUtf8(tune.readAll());
        QVERIFY2(tune.exitCode() == 0, qPrintable(tuneOut));
        // Every record carries the board's hardware parameters (Mali-T860 limits: TVM's Mali
        // defaults) and TVM's printed Mali target; some measured without error.
        QFile f(log);
        QVERIFY(f.open(QIODevice::ReadOnly));
        int records = 0, ok = 0;
        for (const QByteArray& line : f.readAll().split('\n')) {
            if (line.trimmed().isEmpty()) continue;
            const auto j = nlohmann::json::parse(line.toStdString());
            ++records;
            QCOMPARE(j["i"][0][2], nlohmann::json::parse("[-1, 16, 64, 32768, 2147483647, 256, 1, 1]"));
            QVERIFY(j["i"][0][1].get<std::string>().rfind("opencl -keys=mali,opencl,gpu -device=mali", 0) == 0);
            ok += j["r"][1].get<int>() == 0;
        }
        QCOMPARE(records, 16);
        QVERIFY2(ok >= 8, qPrintable(tuneOut));
        QProcess compile;
        compile.setProcessChannelMode(QProcess::MergedChannels);
        compile.start(QStringLiteral(TB_CLI_PATH),
                      QStringList{QStringLiteral("compile"), QStringLiteral("--network"), QStringLiteral("mlp"),
                                  QStringLiteral("--target"), target, QStringLiteral("--log"), log,
                                  QStringLiteral("--bench"), QStringLiteral("--repeat"), QStringLiteral("2")} +
                          fleet);
        QVERIFY(compile.waitForFinished(240000));
        const QString out = QString::fromUtf8(compile.readAll());
        QVERIFY2(compile.exitCode() == 0, qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("against the host interpreter on the device: ok")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("Execution time summary:")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral(" tuned ")), qPrintable(out));  // records applied
    }

    void testCliRpcServerDevice() {
        // `tunebench-cli rpc-server --device opencl`: the same executor, PoCL's own limits.
        const std::string key = "cli-opencl-" + std::to_string(getpid());
        pid_t cli = spawnServer({TB_CLI_PATH, "rpc-server", "--device", "opencl", "--key", key}, "cli.log");
        QVERIFY2(test::waitForServers(m_trackerPort, key, 1), "tunebench-cli rpc-server --device opencl did not register");
        const measure::RemoteGpuDevice d = measure::queryRemoteGpuDevice("127.0.0.1", m_trackerPort, key, 30);
        stop(cli);
        QCOMPARE(QString::fromStdString(d.deviceApi), QStringLiteral("opencl"));
        QVERIFY(d.attributes.maxThreadsPerBlock > 256);  // not the emulated Mali's
        QVERIFY(d.attributes.deviceName.find("Mali") == std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestGpuRpc)
#include "tst_gpu_rpc.moc"
