// SPDX-License-Identifier: Apache-2.0
// A device fleet end to end (issue 21): an in-process tracker on 127.0.0.1 and three
// `tunebench-cli rpc-server --key <key>` processes (each measuring in its own sandbox worker) tune
// one mlp task through the RPC runner that buildTuner wires (RunnerConfig::Kind::Rpc). During the
// second round one device is killed with SIGKILL. The promises checked:
//  - the log holds exactly one complete record per measured candidate (none lost, none twice);
//  - the killed device costs exactly its in-flight candidate, recorded as an error naming that
//    device: error_no 4 (RUNTIME_DEVICE, "lost device HOST:PORT while running") when the run was in
//    progress, or 2 (COMPILE_DEVICE, "upload to HOST:PORT failed") when it died between candidates;
//  - the log's error count equals the tuner's, and no other candidate fails;
//  - tuning goes on to its budget on the two remaining devices, with error_no 0 records after the
//    kill, and no round hangs (the test is bounded by ctest's TIMEOUT and its own deadlines).
#include <QtTest>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "engine/support/process.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"
#include "engine/tuning/tuning_job.h"

extern char** environ;

using namespace tb;

namespace {

using Clock = std::chrono::steady_clock;

// One `tunebench-cli rpc-server` child; SIGTERM + wait on destruction (unless already reaped).
struct ServerProcess {
    pid_t pid = -1;
    int port = -1;  // its data-plane port, as the tracker lists it
    ~ServerProcess() { stop(SIGTERM); }
    void stop(int sig) {
        if (pid <= 0) return;
        ::kill(pid, sig);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        pid = -1;
    }
};

rpc::TrackerSummary summary(int trackerPort) {
    rpc::ConnectOptions co;
    co.retryTimeoutMs = 0;
    co.ioTimeoutMs = 5000;
    return rpc::TrackerSession::connect("127.0.0.1", trackerPort, co).summary();
}

std::vector<int> serverPorts(const rpc::TrackerSummary& s, const std::string& key) {
    std::vector<int> ports;
    for (const auto& srv : s.servers)
        if (srv.key == "server:" + key) ports.push_back(srv.port());
    return ports;
}

// Records the trials of every round (tuning thread) for the checks after the run.
struct TrialLog : tuning::TuneObserver {
    std::mutex mu;
    std::vector<tuning::MeasuredTrial> trials;
    std::atomic<int> rounds{0};
    void onTrials(const std::vector<tuning::MeasuredTrial>& t) override {
        std::lock_guard<std::mutex> lock(mu);
        trials.insert(trials.end(), t.begin(), t.end());
        ++rounds;
    }
};

}  // namespace

class TestFleet : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void deviceKilledDuringARound();
};

void TestFleet::deviceKilledDuringARound() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string work = dir.path().toStdString();
    const std::string key = "fleet" + std::to_string(::getpid());

    rpc::TrackerOptions to;
    to.host = "127.0.0.1";
    to.port = 0;
    rpc::Tracker tracker(to);
    tracker.start();
    const int trackerPort = tracker.port();

    // Three devices, started one by one so that each port belongs to a known process.
    std::vector<ServerProcess> servers(3);
    for (size_t i = 0; i < servers.size(); ++i) {
        servers[i].pid = tb::spawnLogged({TB_CLI_PATH, "rpc-server", "--tracker", "127.0.0.1:" + std::to_string(trackerPort),
                                "--key", key, "--host", "127.0.0.1", "--num-threads", "1"},
                               work + "/server" + std::to_string(i) + ".txt");
        QVERIFY(servers[i].pid > 0);
        const auto deadline = Clock::now() + std::chrono::seconds(30);
        for (;;) {
            const std::vector<int> ports = serverPorts(summary(trackerPort), key);
            if (ports.size() == i + 1) {
                for (int p : ports) {
                    bool known = false;
                    for (size_t j = 0; j < i; ++j) known = known || servers[j].port == p;
                    if (!known) servers[i].port = p;
                }
                break;
            }
            QVERIFY2(Clock::now() < deadline, "an rpc-server did not register with the tracker within 30 s");
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        QVERIFY(servers[i].port > 0);
    }

    tuning::TuningJob job;
    job.network.zooName = "mlp";
    job.taskIds = {0};
    job.runner.kind = tuning::RunnerConfig::Kind::Rpc;
    job.runner.trackerHost = "127.0.0.1";
    job.runner.trackerPort = trackerPort;
    job.runner.key = key;
    job.runner.number = 1;
    job.runner.repeat = 1;
    job.runner.minRepeatMs = 400;  // every candidate keeps its device busy >= 0.4 s: the kill lands mid-run
    job.runner.timeoutS = 20;
    job.runner.trackerRetryTimeoutS = 10;
    job.search.trials = 18;
    job.search.perRound = 6;  // two candidates per device and round
    job.search.costModel = "random";
    job.search.seed = 7;
    job.logPath = work + "/fleet.json";
    job.latencyLogPath = work + "/total_latency.tsv";
    const auto tuner = tuning::buildTuner(job);
    TrialLog observed;
    tuner->network().addObserver(&observed);

    // The killer: once round 1 is over and all three devices are taken again (round 2 is being
    // measured: the queue shows none free), wait until the candidates run, then SIGKILL device 0.
    std::atomic<bool> done{false}, killed{false};
    std::atomic<int> trialsBeforeKill{-1};
    std::thread killer([&] {
        while (!done) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (observed.rounds < 1) continue;
            const rpc::TrackerSummary s = summary(trackerPort);
            const rpc::QueueInfo* q = s.queue(key);
            if (!q || q->free != 0 || serverPorts(s, key).size() != 3) continue;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            {
                std::lock_guard<std::mutex> lock(observed.mu);
                trialsBeforeKill = int(observed.trials.size());
            }
            ::kill(servers[0].pid, SIGKILL);
            killed = true;
            return;
        }
    });
    const auto t0 = Clock::now();
    try {
        tuner->network().tune();
    } catch (...) {
        done = true;
        killer.join();
        throw;
    }
    done = true;
    killer.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    servers[0].stop(SIGKILL);  // reap it
    qInfo("tuned %zu trials in %.1f s", observed.trials.size(), seconds);
    QVERIFY2(killed, "the tuning run ended before a device could be killed during round 2");
    QVERIFY(seconds < 240);

    // The log: one complete record per measured candidate, in measurement order.
    std::ifstream f(job.logPath);
    std::vector<int> logErrors;
    for (std::string line; std::getline(f, line);) {
        QJsonParseError pe;
        const QJsonDocument d = QJsonDocument::fromJson(QByteArray::fromStdString(line), &pe);
        QVERIFY2(pe.error == QJsonParseError::NoError, line.c_str());
        const QJsonArray r = d.object().value(QStringLiteral("r")).toArray();
        QCOMPARE(r.size(), 4);
        logErrors.push_back(r.at(1).toInt(-1));
    }
    const std::vector<tuning::MeasuredTrial>& trials = observed.trials;
    QVERIFY(trials.size() >= size_t(job.search.trials));
    QCOMPARE(logErrors.size(), trials.size());
    for (size_t i = 0; i < trials.size(); ++i) {
        QCOMPARE(trials[i].trial, int(i));
        QCOMPARE(logErrors[i], trials[i].outcome.errorNo);
    }

    // Exactly the killed device's in-flight candidate failed, and it names that device.
    const std::string killedAddr = "127.0.0.1:" + std::to_string(servers[0].port);
    int errors = 0, okAfterKill = 0;
    for (size_t i = 0; i < trials.size(); ++i) {
        const search::MeasureOutcome& o = trials[i].outcome;
        if (o.errorNo == 0) {
            if (int(i) >= trialsBeforeKill) ++okAfterKill;
            continue;
        }
        ++errors;
        qInfo("trial %zu: error_no %d: %s", i, o.errorNo, o.errorMsg.c_str());
        QVERIFY2(o.errorNo == 4 || o.errorNo == 2, o.errorMsg.c_str());
        QVERIFY2(o.errorMsg.find(killedAddr) != std::string::npos, o.errorMsg.c_str());
        QVERIFY(int(i) >= trialsBeforeKill);
    }
    QCOMPARE(errors, 1);
    QCOMPARE(int(std::count_if(logErrors.begin(), logErrors.end(), [](int e) { return e != 0; })), errors);
    QVERIFY2(okAfterKill >= job.search.trials - trialsBeforeKill - 1,
             "tuning did not go on on the remaining devices");

    // The two survivors are back with the tracker, free.
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    for (;;) {
        const rpc::TrackerSummary s = summary(trackerPort);
        const rpc::QueueInfo* q = s.queue(key);
        if (serverPorts(s, key).size() == 2 && q && q->free == 2) break;
        QVERIFY2(Clock::now() < deadline, "the remaining devices did not return to the tracker");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

QTEST_APPLESS_MAIN(TestFleet)
#include "tst_fleet.moc"
