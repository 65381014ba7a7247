// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli tracker`: runs the RPC tracker in the foreground, like `python -m tvm.exec.rpc_tracker`.
// Stops on SIGINT/SIGTERM, or when a client sends STOP with the tracker's key.
#include <QCommandLineParser>

#include <csignal>
#include <cstdio>
#include <ctime>

#include "app/cli/commands.h"
#include "engine/rpc/protocol.h"
#include "engine/rpc/tracker.h"
#include "engine/support/error.h"

namespace tb::cli {

namespace {

int portOption(const QCommandLineParser& p, const QString& name) {
    bool ok = false;
    const int v = p.value(name).toInt(&ok);
    TB_USER_CHECK(ok && v >= 0 && v <= 65535) << "--" << name.toStdString() << ": '" << p.value(name).toStdString()
                                              << "' is not a port number (0..65535)";
    return v;
}

// TVM's log line format: "2024-01-31 12:00:00.123 INFO message".
void logLine(const std::string& line) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    tm t{};
    localtime_r(&ts.tv_sec, &t);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &t);
    std::fprintf(stderr, "%s.%03ld INFO %s\n", stamp, ts.tv_nsec / 1000000, line.c_str());
    std::fflush(stderr);
}

}  // namespace

int runTracker(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Run a TVM-compatible RPC tracker until interrupted."));
    p.addHelpOption();
    p.addOption({QStringLiteral("host"), QStringLiteral("Address to bind (default 0.0.0.0)."), QStringLiteral("host"),
                 QStringLiteral("0.0.0.0")});
    p.addOption({QStringLiteral("port"), QStringLiteral("First port to try (default 9190)."), QStringLiteral("port"),
                 QStringLiteral("9190")});
    p.addOption({QStringLiteral("port-end"), QStringLiteral("End of the port range, exclusive (default 9199)."),
                 QStringLiteral("port"), QStringLiteral("9199")});
    p.addOption({QStringLiteral("silent"), QStringLiteral("Log only the bound address.")});
    p.process(args);

    rpc::TrackerOptions o;
    o.host = p.value(QStringLiteral("host")).toStdString();
    o.port = portOption(p, QStringLiteral("port"));
    o.portEnd = portOption(p, QStringLiteral("port-end"));
    const bool silent = p.isSet(QStringLiteral("silent"));
    if (!silent) o.log = logLine;

    // Signals are taken synchronously below; block them before the tracker thread inherits the mask.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);

    rpc::Tracker tracker(o);
    try {
        tracker.start();
    } catch (const rpc::RpcError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    if (silent) logLine("bind to " + o.host + ":" + std::to_string(tracker.port()));
    while (tracker.running()) {
        const timespec wait{0, 200 * 1000 * 1000};
        if (sigtimedwait(&set, nullptr, &wait) > 0) break;
    }
    tracker.stop();
    return 0;
}

}  // namespace tb::cli
