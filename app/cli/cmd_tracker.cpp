// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli tracker`: runs the RPC tracker in the foreground, like `python -m tvm.exec.rpc_tracker`.
// Stops on SIGINT/SIGTERM, or when a client sends STOP with the tracker's key.
#include <QCommandLineParser>

#include <cstdio>

#include "app/cli/commands.h"
#include "engine/rpc/protocol.h"
#include "engine/rpc/tracker.h"
#include "engine/support/log.h"
#include "engine/support/process.h"

namespace tb::cli {

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
    o.port = parsePort(p.value(QStringLiteral("port")).toStdString(), "--port");
    o.portEnd = parsePort(p.value(QStringLiteral("port-end")).toStdString(), "--port-end");
    const bool silent = p.isSet(QStringLiteral("silent"));
    if (!silent) o.log = logLine;

    const StopSignals signals;  // before the tracker thread starts
    rpc::Tracker tracker(o);
    try {
        tracker.start();
    } catch (const rpc::RpcError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    if (silent) logLine("bind to " + o.host + ":" + std::to_string(tracker.port()));
    signals.wait([&] { return tracker.running(); });  // a STOP request ends it too
    tracker.stop();
    return 0;
}

}  // namespace tb::cli
