// SPDX-License-Identifier: Apache-2.0
// Remote measurement on this machine: a tracker and four RPC servers (separate processes, each an
// RpcServer whose executor is the SandboxExecutor, as `tunebench-cli rpc-server` runs it) on
// 127.0.0.1, measured through RPCRunner. The runner must give the same kind of results as
// LocalRunner on the same candidates (good, crashing, hanging, wrong, out of bounds), use every
// server at once, turn a server killed mid-batch into error records for its candidate only, and
// survive a tracker restart. Also: the check blob codec, the executor's refusals, linking for a
// device, and the runner's errors when no tracker or no device is there.
#include <QtTest>

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "engine/codegen/codegen_llvm.h"
#include "engine/lower/lower_dag.h"
#include "engine/lower/loop_ir.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "engine/measure/rpc_runner.h"
#include "engine/measure/sandbox_executor.h"
#include "engine/rpc/rpc_server.h"
#include "engine/rpc/socket.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"
#include "engine/support/error.h"
#include "engine/te/compute_dag.h"
#include "tests/engine/test_measure_util.h"
#include "tests/engine/test_rpc_util.h"

using namespace tb;
using measure::MeasureErrorNo;
using te::Expr;
using te::Var;
using namespace tb::test;

namespace {

std::shared_ptr<lower::LoweredFunc> matmul(int64_t n) {
    auto A = te::placeholder({n, n}, "A");
    auto B = te::placeholder({n, n}, "B");
    auto k = te::reduceAxis(n, "k");
    auto C = te::compute(
        {n, n}, {"i", "j"}, [&](const std::vector<Var>& v) { return te::sum(A(v[0], k.var) * B(k.var, v[1]), {k}); },
        "C");
    return std::make_shared<lower::LoweredFunc>(lower::lowerComputeDag(te::ComputeDAG({A, B, C}), "mm"));
}

// A server process: RpcServer + SandboxExecutor registered under `key`. Forked (not exec'd) from
// this test before it starts any thread, so the child is an ordinary single-threaded copy.
struct ServerProc {
    pid_t pid = -1;
    int port = -1;
};

ServerProc forkServer(int trackerPort, const std::string& key, const std::string& workDir) {
    int fds[2];
    if (pipe(fds) != 0) return {};
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        int rc = 0;
        try {
            rpc::RpcServerOptions o = serverOptions(trackerPort, key);
            o.pingPeriodMs = 500;
            o.unmatchTimeoutMs = 1000;
            o.workDir = workDir;  // a SIGKILLed server leaves its session directory behind
            measure::SandboxExecutorOptions eo;
            eo.numThreads = 1;
            rpc::RpcServer server(o, std::make_shared<measure::SandboxExecutor>(eo));
            server.start();
            const int port = server.port();
            if (write(fds[1], &port, sizeof port) != sizeof port) _exit(4);
            close(fds[1]);
            int sig = 0;
            sigwait(&set, &sig);
            server.stop();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "server process: %s\n", e.what());
            rc = 3;
        }
        _exit(rc);
    }
    close(fds[1]);
    ServerProc s;
    s.pid = pid;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 30000) == 1 && read(fds[0], &s.port, sizeof s.port) == sizeof s.port) {
    } else {
        s.port = -1;
    }
    close(fds[0]);
    return s;
}

void stopServer(ServerProc& s, int sig) {
    if (s.pid <= 0) return;
    kill(s.pid, sig);
    int status = 0;
    while (waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
    }
    s.pid = -1;
}

int countServers(int trackerPort, const std::string& key) {
    try {
        rpc::ConnectOptions co;
        co.retryTimeoutMs = 0;
        auto t = rpc::TrackerSession::connect("127.0.0.1", trackerPort, co);
        int n = 0;
        for (const auto& s : t.summary().servers) n += s.key == "server:" + key;
        return n;
    } catch (const rpc::RpcError&) {
        return -1;
    }
}

std::string describe(const measure::MeasureResult& r) {
    return std::string(measure::errorName(r.errorNo)) + ": " + r.errorMsg;
}

}  // namespace

class TestRpcMeasure : public QObject {
    Q_OBJECT

    std::unique_ptr<rpc::Tracker> m_tracker;
    int m_trackerPort = 0;
    std::string m_key;
    std::vector<ServerProc> m_servers;
    std::filesystem::path m_workDir;

    measure::RpcRunnerOptions runnerOptions() const {
        measure::RpcRunnerOptions o;
        o.trackerHost = "127.0.0.1";
        o.trackerPort = m_trackerPort;
        o.key = m_key;
        o.timeoutS = 3;
        o.number = 2;
        o.repeat = 3;
        o.minRepeatMs = 0;
        o.requestTimeoutS = 30;
        o.trackerRetryTimeoutS = 30;
        o.ioTimeoutS = 20;
        return o;
    }

    std::vector<measure::BuildResult> build(const std::vector<measure::MeasureInput>& inputs) {
        measure::LocalBuilder builder(codegen::Target::host());
        return builder.build(inputs);
    }

    ServerProc* serverAt(const std::string& hostPort) {
        for (auto& s : m_servers)
            if (hostPort == "127.0.0.1:" + std::to_string(s.port)) return &s;
        return nullptr;
    }

private Q_SLOTS:
    void initTestCase() {
        // The servers are forked while this process has no other thread (no tracker thread yet):
        // they retry the tracker's port until it is up.
        rpc::listenTcp("127.0.0.1", 0, 0, &m_trackerPort);  // a free port: bound, read, closed at once
        m_key = "rpcmeasure-" + std::to_string(getpid());
        m_workDir = std::filesystem::temp_directory_path() / ("tst_rpc_measure_servers_" + std::to_string(getpid()));
        std::filesystem::create_directories(m_workDir);
        for (int i = 0; i < 4; ++i) {
            m_servers.push_back(forkServer(m_trackerPort, m_key, m_workDir.string()));
            QVERIFY2(m_servers.back().port > 0, "an RPC server process did not start");
        }
        rpc::TrackerOptions to;
        to.host = "127.0.0.1";
        to.port = m_trackerPort;
        to.portEnd = m_trackerPort + 1;
        m_tracker = std::make_unique<rpc::Tracker>(to);
        m_tracker->start();
        QVERIFY2(waitForServers(m_trackerPort, m_key, 4), "the four servers did not register with the tracker");
    }

    void cleanupTestCase() {
        for (auto& s : m_servers) stopServer(s, SIGTERM);
        if (m_tracker) m_tracker->stop();
        std::error_code ec;
        if (!m_workDir.empty()) std::filesystem::remove_all(m_workDir, ec);
    }

    void testCheckBlobRoundTrip() {
        measure::CheckSpec c;
        c.inputs = {{1.f, 2.f, 3.f}, {}, {-0.5f}};
        c.expected = {{}, {7.f, 8.f}};
        c.rtol = 1e-3;
        c.atol = 2e-6;
        const std::string blob = measure::encodeCheckBlob(c);
        QCOMPARE(blob.substr(0, 4), std::string("TBCK"));
        const measure::CheckSpec d = measure::decodeCheckBlob(blob);
        QCOMPARE(d.inputs, c.inputs);
        QCOMPARE(d.expected, c.expected);
        QCOMPARE(d.rtol, c.rtol);
        QCOMPARE(d.atol, c.atol);
        for (size_t cut : {size_t(3), size_t(20), blob.size() - 1}) {
            try {
                measure::decodeCheckBlob(blob.substr(0, cut));
                QFAIL(qPrintable(QStringLiteral("a blob cut at %1 bytes was accepted").arg(cut)));
            } catch (const UserError& e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("check blob")), e.what());
            }
        }
        QVERIFY_THROWS_EXCEPTION(UserError, measure::decodeCheckBlob(blob + "x"));
    }

    void testSandboxExecutorRefusesWhatItCannotLoad() {
        namespace fs = std::filesystem;
        const fs::path dir = fs::temp_directory_path() / ("tst_rpc_measure_" + std::to_string(getpid()));
        fs::create_directories(dir);
        auto write = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
            std::ofstream f(dir / name, std::ios::binary);
            f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
            return (dir / name).string();
        };
        measure::SandboxExecutorOptions eo;
        eo.numThreads = 1;
        measure::SandboxExecutor ex(eo);
        const auto host = codegen::compile(*vectorAdd(), codegen::Target::host(), {false, false});
        const auto arm = codegen::compile(
            *vectorAdd(), codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"), {false, false});
        rpc::RunRequest req;
        req.function = "vadd";
        req.args = {{{kN}, "float32"}, {{kN}, "float32"}, {{kN}, "float32"}};
        req.number = 1;
        req.minRepeatMs = 0;
        req.timeoutSec = 5;

        req.module = "arm.o";
        req.modulePath = write("arm.o", arm.object);
        rpc::RunReply r = ex.run(req);
        QCOMPARE(r.errorNo, int(MeasureErrorNo::CompileDevice));
        QVERIFY2(QString::fromStdString(r.errorMsg).contains(QStringLiteral("aarch64")), r.errorMsg.c_str());

        req.module = "host.so";
        req.modulePath = write("host.so", measure::linkSharedLibrary(host.object, measure::findLinker()));
        r = ex.run(req);
        QCOMPARE(r.errorNo, int(MeasureErrorNo::CompileDevice));
        QVERIFY2(QString::fromStdString(r.errorMsg).contains(QStringLiteral("shared library")), r.errorMsg.c_str());

        req.module = "host.o";
        req.modulePath = write("host.o", host.object);
        req.function = "no_such_kernel";
        r = ex.run(req);
        QCOMPARE(r.errorNo, int(MeasureErrorNo::CompileDevice));

        // The same object with the right name runs, and a check blob next to it is honoured.
        req.function = "vadd";
        r = ex.run(req);
        QCOMPARE(r.errorNo, 0);
        QCOMPARE(r.costs.size(), size_t(1));
        auto wrong = addCheck();
        wrong->expected[2][7] += 1.f;
        {
            std::ofstream f(dir / "host.o.check", std::ios::binary);
            f << measure::encodeCheckBlob(*wrong);
        }
        r = ex.run(req);
        QCOMPARE(r.errorNo, int(MeasureErrorNo::WrongAnswer));
        QVERIFY2(QString::fromStdString(r.errorMsg).contains(QStringLiteral("element 7")), r.errorMsg.c_str());
        fs::remove_all(dir);
    }

    void testLinkForTheDevice() {
        const auto arm = codegen::compile(
            *matmul(8), codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"), {false, false});
        const auto so = measure::linkSharedLibrary(arm.object, measure::findLinker());
        QVERIFY(so.size() > 64);
        QCOMPARE(std::string(so.begin(), so.begin() + 4), std::string("\177ELF"));
        QCOMPARE(int(so[16] | so[17] << 8), 3);    // ET_DYN
        QCOMPARE(int(so[18] | so[19] << 8), 183);  // EM_AARCH64
        try {
            measure::linkSharedLibrary({'n', 'o', 't', ' ', 'e', 'l', 'f'}, measure::findLinker());
            QFAIL("garbage linked");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("failed")), e.what());
        }
    }

    void testSameKindAsLocalRunner() {
        std::vector<measure::MeasureInput> inputs = {
            input(vectorAdd(), addCheck()),                    // 0 ok
            input(matmul(48)),                                 // 1 ok
            input(vectorAdd(kN, false, -(int64_t(1) << 40))),  // 2 SIGSEGV -> RUNTIME_DEVICE
            input(vectorAdd(kN, true), addCheck()),            // 3 WRONG_ANSWER
            input(vectorAdd(kN + 1)),                          // 4 canary -> RUNTIME_DEVICE
            input(endlessLoop()),                              // 5 RUN_TIMEOUT
            input(vectorAdd()),                                // 6 build error (below)
            input(vectorAdd(), addCheck()),                    // 7 ok
        };
        std::vector<measure::BuildResult> builds = build(inputs);
        builds[6] = measure::BuildResult{};
        builds[6].errorNo = MeasureErrorNo::CompileHost;
        builds[6].errorMsg = "scripted build failure";
        for (size_t i = 0; i < builds.size(); ++i)
            if (i != 6) QVERIFY2(builds[i].errorNo == MeasureErrorNo::NoError, builds[i].errorMsg.c_str());

        measure::RunnerOptions lo;
        lo.timeoutS = 3;
        lo.number = 2;
        lo.repeat = 3;
        lo.minRepeatMs = 0;
        lo.numThreads = 1;
        measure::LocalRunner local(lo);
        const auto want = local.run(inputs, builds);

        auto runner = measure::makeRpcRunner(runnerOptions());
        const auto got = runner->run(inputs, builds);
        QCOMPARE(got.size(), want.size());
        const MeasureErrorNo expected[] = {MeasureErrorNo::NoError,       MeasureErrorNo::NoError,
                                           MeasureErrorNo::RuntimeDevice, MeasureErrorNo::WrongAnswer,
                                           MeasureErrorNo::RuntimeDevice, MeasureErrorNo::RunTimeout,
                                           MeasureErrorNo::CompileHost,   MeasureErrorNo::NoError};
        for (size_t i = 0; i < got.size(); ++i) {
            const QByteArray what = QByteArray::number(qulonglong(i)) + ": local " + describe(want[i]).c_str() +
                                    " / rpc " + describe(got[i]).c_str();
            QVERIFY2(want[i].errorNo == expected[i], what.constData());
            QVERIFY2(got[i].errorNo == want[i].errorNo, what.constData());
            QCOMPARE(got[i].costs.size(), want[i].costs.size());
            if (got[i].ok()) {
                for (double c : got[i].costs) QVERIFY2(c > 0 && c < 1, what.constData());
            } else {
                QCOMPARE(got[i].costs, std::vector<double>{measure::kMaxFloat});
                // Same sandbox, same diagnosis (a timeout's text names the same limit too).
                QVERIFY2(got[i].errorMsg == want[i].errorMsg, what.constData());
            }
            QVERIFY(got[i].allCost >= builds[i].timeCost);
            QVERIFY(got[i].timestamp > 1.6e9);
        }
    }

    void testUsesEveryServerInParallel() {
        // Each Running event waits until four different servers are running a candidate at the same
        // time: a runner that measured on fewer devices at once could never get past the latch.
        std::mutex mu;
        std::condition_variable cv;
        std::set<std::string> running;
        bool latchOpened = false;
        std::map<std::string, int> perServer;
        auto o = runnerOptions();
        o.onEvent = [&](const measure::RpcRunnerEvent& e) {
            if (e.kind != measure::RpcRunnerEvent::Kind::Running) return;
            std::unique_lock<std::mutex> lock(mu);
            ++perServer[e.server];
            running.insert(e.server);
            if (running.size() >= 4) latchOpened = true;
            cv.notify_all();
            cv.wait_for(lock, std::chrono::seconds(60), [&] { return latchOpened; });
        };
        std::vector<measure::MeasureInput> inputs;
        for (int i = 0; i < 12; ++i) inputs.push_back(input(vectorAdd(), addCheck()));
        const auto builds = build(inputs);
        measure::RpcRunner runner(o);
        const auto res = runner.run(inputs, builds);
        for (const auto& r : res) QVERIFY2(r.ok(), describe(r).c_str());
        QVERIFY2(latchOpened, "the runner never had four candidates running at once");
        QCOMPARE(int(perServer.size()), 4);
        for (const auto& [server, n] : perServer) QVERIFY2(serverAt(server), server.c_str());
        const auto st = runner.stats();
        QCOMPARE(st.candidates, 12LL);
        QCOMPARE(st.sessions, 4LL);
        QCOMPARE(st.sessionsLost, 0LL);
    }

    void testNoTrackerNoDevice() {
        // Nobody listens on the port of a tracker we start and stop: every candidate is an error record.
        int deadPort = 0;
        {
            rpc::TrackerOptions to;
            to.host = "127.0.0.1";
            to.port = 0;
            rpc::Tracker t(to);
            t.start();
            deadPort = t.port();
        }
        std::vector<measure::MeasureInput> inputs = {input(vectorAdd()), input(vectorAdd())};
        const auto builds = build(inputs);
        auto o = runnerOptions();
        o.trackerPort = deadPort;
        o.trackerRetryTimeoutS = 1;
        auto res = measure::RpcRunner(o).run(inputs, builds);
        for (const auto& r : res) {
            QVERIFY2(r.errorNo == MeasureErrorNo::CompileDevice, describe(r).c_str());
            QVERIFY2(QString::fromStdString(r.errorMsg).contains(QStringLiteral("cannot reach the RPC tracker")),
                     r.errorMsg.c_str());
        }
        // A key no server has: the request times out.
        o = runnerOptions();
        o.key = m_key + "-nobody";
        o.requestTimeoutS = 1;
        res = measure::RpcRunner(o).run(inputs, builds);
        for (const auto& r : res) {
            QVERIFY2(r.errorNo == MeasureErrorNo::CompileDevice, describe(r).c_str());
            QVERIFY2(QString::fromStdString(r.errorMsg).contains(QStringLiteral("no device of key")),
                     r.errorMsg.c_str());
        }
        QVERIFY_THROWS_EXCEPTION(UserError, measure::RpcRunner(measure::RpcRunnerOptions{}));
    }

    void testKillServerMidBatch() {
        // Candidate 5 starts on some server: that server is killed (SIGKILL) before its reply. Only
        // candidate 5 may fail; the batch goes on with the three other servers.
        const int victimCandidate = 5;
        std::mutex mu;
        std::string victim;
        std::vector<std::string> lost;
        auto o = runnerOptions();
        o.onEvent = [&](const measure::RpcRunnerEvent& e) {
            std::lock_guard<std::mutex> lock(mu);
            if (e.kind == measure::RpcRunnerEvent::Kind::Running && e.candidate == victimCandidate && victim.empty()) {
                victim = e.server;
                if (ServerProc* s = serverAt(e.server)) stopServer(*s, SIGKILL);
            }
            if (e.kind == measure::RpcRunnerEvent::Kind::SessionLost) lost.push_back(e.server);
        };
        std::vector<measure::MeasureInput> inputs;
        for (int i = 0; i < 12; ++i) inputs.push_back(input(vectorAdd(), addCheck()));
        const auto builds = build(inputs);
        measure::RpcRunner runner(o);
        const auto res = runner.run(inputs, builds);
        QVERIFY2(!victim.empty(), "candidate 5 never ran");
        for (size_t i = 0; i < res.size(); ++i) {
            if (int(i) == victimCandidate) {
                QVERIFY2(res[i].errorNo == MeasureErrorNo::RuntimeDevice, describe(res[i]).c_str());
                QVERIFY2(QString::fromStdString(res[i].errorMsg).contains(QString::fromStdString(victim)),
                         res[i].errorMsg.c_str());
            } else {
                QVERIFY2(res[i].ok(),
                         QByteArray(QByteArray::number(qulonglong(i)) + " " + describe(res[i]).c_str()).constData());
            }
        }
        {
            std::lock_guard<std::mutex> lock(mu);
            QCOMPARE(lost, std::vector<std::string>{victim});
        }

        // Tuning goes on: the next batch runs on the three servers left.
        QVERIFY2(waitForServers(m_trackerPort, m_key, 3), "the three remaining servers are not free again");
        std::vector<measure::MeasureInput> next;
        for (int i = 0; i < 6; ++i) next.push_back(input(vectorAdd(), addCheck()));
        for (const auto& r : runner.run(next, build(next))) QVERIFY2(r.ok(), describe(r).c_str());
        std::lock_guard<std::mutex> lock(mu);
        QCOMPARE(lost.size(), size_t(1));
    }

    void testTrackerRestart() {
        QVERIFY2(waitForServers(m_trackerPort, m_key, 3), "servers not ready");
        m_tracker->stop();
        QCOMPARE(countServers(m_trackerPort, m_key), -1);
        // The new tracker comes up on the same port while the batch is already asking for devices.
        std::thread restart([this] {
            std::this_thread::sleep_for(std::chrono::milliseconds(1500));
            rpc::TrackerOptions to;
            to.host = "127.0.0.1";
            to.port = m_trackerPort;
            to.portEnd = m_trackerPort + 1;
            m_tracker = std::make_unique<rpc::Tracker>(to);
            m_tracker->start();
        });
        std::vector<measure::MeasureInput> inputs;
        for (int i = 0; i < 6; ++i) inputs.push_back(input(vectorAdd(), addCheck()));
        const auto builds = build(inputs);
        auto runner = measure::makeRpcRunner(runnerOptions());
        const auto res = runner->run(inputs, builds);
        restart.join();
        for (const auto& r : res) QVERIFY2(r.ok(), describe(r).c_str());
        QVERIFY2(waitForServers(m_trackerPort, m_key, 3), "the servers did not register with the restarted tracker");
    }
};

QTEST_APPLESS_MAIN(TestRpcMeasure)
#include "tst_rpc_measure.moc"
