// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli fleet up`: a device fleet on this machine in one command (issue 21). This
// process runs the tracker (rpc::Tracker, as `tunebench-cli tracker` does) and starts, as child
// processes (session::DeviceFleet, which the window's fleet controls use too), N sandboxed host
// servers (`tunebench-cli rpc-server --key <key-local>`) and N emulated ARM boards (one
// `scripts/arm-board -n 1 --key <key-arm>` each, qemu-aarch64). Once every device
// has registered (or --wait-seconds passed) it prints the tracker address and the
// `query-tracker` tables, then waits for Ctrl-C / SIGTERM (or --for-seconds, for scripts) and
// stops every child: SIGTERM, then SIGKILL after 10 s. Children's output goes to --log-dir.
//
//   tunebench-cli fleet up --local 3                       # tracker 127.0.0.1:9190, key "local"
//   tunebench-cli tune --runner rpc --tracker 127.0.0.1:9190 --key local ...
#include <QCommandLineParser>

#include <chrono>
#include <cstdio>
#include <string>

#include "app/cli/commands.h"
#include "app/session/devicefleet.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"
#include "engine/support/error.h"
#include "engine/support/process.h"

namespace tb::cli {

namespace {

using Clock = std::chrono::steady_clock;

int countServers(const rpc::TrackerSummary& s, const std::string& key) {
    int n = 0;
    for (const auto& srv : s.servers)
        if (srv.key == "server:" + key) ++n;
    return n;
}

int nonNegative(const QCommandLineParser& p, const char* name) {
    bool ok = false;
    const int n = p.value(QString::fromLatin1(name)).toInt(&ok);
    TB_USER_CHECK(ok && n >= 0) << "--" << name << " must be an integer >= 0";
    return n;
}

int runUp(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        QStringLiteral("Start a tracker and a fleet of local servers and emulated ARM boards; Ctrl-C stops them."));
    p.addHelpOption();
    p.addOption({QStringLiteral("host"), QStringLiteral("Address of the tracker and the servers (default 127.0.0.1)."),
                 QStringLiteral("host"), QStringLiteral("127.0.0.1")});
    p.addOption({QStringLiteral("port"), QStringLiteral("First tracker port to try (default 9190; 0: any free port)."),
                 QStringLiteral("port"), QStringLiteral("9190")});
    p.addOption({QStringLiteral("local"), QStringLiteral("Sandboxed host servers to start (default 2)."),
                 QStringLiteral("n"), QStringLiteral("2")});
    p.addOption({QStringLiteral("arm"), QStringLiteral("Emulated ARM boards to start (scripts/arm-board; default 0)."),
                 QStringLiteral("n"), QStringLiteral("0")});
    p.addOption({QStringLiteral("key-local"), QStringLiteral("Key of the host servers (default local)."),
                 QStringLiteral("key"), QStringLiteral("local")});
    p.addOption({QStringLiteral("key-arm"), QStringLiteral("Key of the ARM boards (default rasp4b-64)."),
                 QStringLiteral("key"), QStringLiteral("rasp4b-64")});
    p.addOption({QStringLiteral("num-threads"), QStringLiteral("Threads of each host server's worker (default 1)."),
                 QStringLiteral("n"), QStringLiteral("1")});
    p.addOption({QStringLiteral("log-dir"),
                 QStringLiteral("Directory for the devices' logs (default $TMPDIR/tunebench-fleet-<pid>)."),
                 QStringLiteral("dir")});
    p.addOption({QStringLiteral("wait-seconds"),
                 QStringLiteral("How long to wait for every device to register (default 120)."), QStringLiteral("s"),
                 QStringLiteral("120")});
    p.addOption({QStringLiteral("for-seconds"),
                 QStringLiteral("Stop by itself after this many seconds (for scripts; default: until Ctrl-C)."),
                 QStringLiteral("s")});
    if (auto rc = parseOrExit(p, args)) return *rc;
    TB_USER_CHECK(p.positionalArguments().isEmpty())
        << "fleet up takes no positional arguments (got '" << p.positionalArguments().join(QLatin1Char(' ')).toStdString() << "')";

    const std::string host = p.value(QStringLiteral("host")).toStdString();
    const std::string portText = p.value(QStringLiteral("port")).toStdString();
    const int port = portText == "0" ? 0 : parsePort(portText, "--port");
    const int nLocal = nonNegative(p, "local"), nArm = nonNegative(p, "arm"), threads = nonNegative(p, "num-threads");
    const int waitS = nonNegative(p, "wait-seconds");
    const int forS = p.isSet(QStringLiteral("for-seconds")) ? nonNegative(p, "for-seconds") : -1;
    const std::string keyLocal = p.value(QStringLiteral("key-local")).toStdString();
    const std::string keyArm = p.value(QStringLiteral("key-arm")).toStdString();
    TB_USER_CHECK(nLocal + nArm > 0) << "a fleet needs at least one device (--local N or --arm N)";
    for (const std::string& k : {keyLocal, keyArm}) {
        TB_USER_CHECK(!k.empty() && k.find_first_of(" \t\r\n") == std::string::npos)
            << "device key '" << k << "' must be non-empty without whitespace";
    }

    session::FleetPaths paths = session::FleetPaths::defaults();
    if (p.isSet(QStringLiteral("log-dir"))) paths.logDir = p.value(QStringLiteral("log-dir")).toStdString();
    const std::string& logDir = paths.logDir;

    const StopSignals signals;  // before the tracker thread starts
    rpc::TrackerOptions to;
    to.host = host;
    to.port = port;
    to.portEnd = port == 0 ? 0 : port + 9;
    rpc::Tracker tracker(to);
    try {
        tracker.start();
    } catch (const rpc::RpcError& e) {
        std::fprintf(stderr, "error: tracker: %s\n", e.what());
        return 1;
    }
    const std::string trackerAddr = host + ":" + std::to_string(tracker.port());

    int rc = 0;
    session::DeviceFleet fleet(paths, trackerAddr, host);  // stops its devices when it goes
    for (int i = 0; i < nLocal; ++i) fleet.add(session::DeviceFleet::Kind::Local, keyLocal, threads);
    for (int i = 0; i < nArm; ++i) fleet.add(session::DeviceFleet::Kind::Arm, keyArm);

    // Devices that ended by themselves (a port clash, a missing tool): reported, not fatal.
    auto reap = [&] {
        for (const auto& d : fleet.reap())
            std::fprintf(stderr, "fleet: %s %s; see %s\n", d.name.c_str(), d.ended.c_str(), d.log.c_str());
    };
    auto alive = [&] {
        return fleet.running(session::DeviceFleet::Kind::Local) + fleet.running(session::DeviceFleet::Kind::Arm) > 0;
    };

    // Wait for the devices to register.
    rpc::ConnectOptions co;
    co.retryTimeoutMs = 0;
    co.ioTimeoutMs = 5000;
    const auto registered = Clock::now() + std::chrono::seconds(waitS);
    rpc::TrackerSummary summary;
    bool stopping = false;
    for (;;) {
        try {
            summary = rpc::TrackerSession::connect(host == "0.0.0.0" ? "127.0.0.1" : host, tracker.port(), co).summary();
        } catch (const rpc::RpcError& e) {
            std::fprintf(stderr, "error: cannot query the tracker at %s: %s\n", trackerAddr.c_str(), e.what());
            return 1;
        }
        reap();
        const int local = countServers(summary, keyLocal), arm = countServers(summary, keyArm);
        if (local >= nLocal && arm >= nArm) break;
        const auto tick = Clock::now() + std::chrono::milliseconds(100);
        const int sig = signals.wait([&] { return Clock::now() < tick; });  // Ctrl-C while waiting: stop
        if (sig != 0 || !alive() || Clock::now() >= registered) {
            std::fprintf(stderr, "fleet: only %d of %d local servers and %d of %d ARM boards registered (logs in %s)\n",
                         local, nLocal, arm, nArm, logDir.c_str());
            rc = sig != 0 ? 0 : 1;
            stopping = sig != 0;
            break;
        }
    }

    std::printf("Fleet: %d local server(s) (key %s), %d ARM board(s) (key %s); logs in %s\n", nLocal, keyLocal.c_str(),
                nArm, keyArm.c_str(), logDir.c_str());
    std::printf("Tracker address %s\n\n%s\n", trackerAddr.c_str(), rpc::textSummary(summary).c_str());
    std::fflush(stdout);

    if (rc == 0 && !stopping) {
        const auto until = Clock::now() + std::chrono::seconds(forS < 0 ? 0 : forS);
        if (forS < 0) std::fprintf(stderr, "fleet: running; Ctrl-C stops it\n");
        signals.wait([&] {
            reap();
            return forS < 0 || Clock::now() < until;
        });
    }
    fleet.stopAll(10);
    tracker.stop();
    std::printf("Fleet stopped\n");
    return rc;
}

}  // namespace

int runFleet(const QStringList& args) {
    if (args.size() < 2 || args[1] == QLatin1String("--help") || args[1] == QLatin1String("-h")) {
        std::fprintf(args.size() < 2 ? stderr : stdout,
                     "Usage: tunebench-cli fleet up [options]  (see 'tunebench-cli fleet up --help')\n");
        return args.size() < 2 ? 2 : 0;
    }
    const QString action = args[1];
    QStringList sub = args.mid(1);
    sub[0] = args[0] + QLatin1Char(' ') + action;
    if (action == QLatin1String("up")) return runUp(sub);
    std::fprintf(stderr, "error: unknown fleet action '%s' (known: up)\n", qPrintable(action));
    return 2;
}

}  // namespace tb::cli
