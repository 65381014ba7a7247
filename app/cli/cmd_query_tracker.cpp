// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli query-tracker`: prints a tracker's Server List and Queue Status exactly as TVM's
// `python -m tvm.exec.query_rpc_tracker` does (same defaults: $TVM_TRACKER_HOST or 127.0.0.1,
// $TVM_TRACKER_PORT or 9190), or the raw SUMMARY with --json.
#include <QCommandLineParser>

#include <cstdio>
#include <cstdlib>

#include "app/cli/commands.h"
#include "engine/rpc/tracker_client.h"
#include "engine/support/error.h"

namespace tb::cli {

int runQueryTracker(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Print the servers and queues of an RPC tracker."));
    p.addHelpOption();
    p.addOption({QStringLiteral("host"), QStringLiteral("Tracker host (default $TVM_TRACKER_HOST or 127.0.0.1)."),
                 QStringLiteral("host")});
    p.addOption({QStringLiteral("port"), QStringLiteral("Tracker port (default $TVM_TRACKER_PORT or 9190)."),
                 QStringLiteral("port")});
    p.addOption({QStringLiteral("json"), QStringLiteral("Print the SUMMARY reply as JSON instead of the tables.")});
    p.addOption({QStringLiteral("legacy-layout"),
                 QStringLiteral("Right-align server addresses as TVM v0.9 to v0.23 did.")});
    p.process(args);

    std::string host = p.value(QStringLiteral("host")).toStdString();
    if (host.empty()) host = std::getenv("TVM_TRACKER_HOST") ? std::getenv("TVM_TRACKER_HOST") : "127.0.0.1";
    std::string portText = p.value(QStringLiteral("port")).toStdString();
    if (portText.empty()) portText = std::getenv("TVM_TRACKER_PORT") ? std::getenv("TVM_TRACKER_PORT") : "9190";
    char* end = nullptr;
    const long port = std::strtol(portText.c_str(), &end, 10);
    TB_USER_CHECK(!portText.empty() && *end == '\0' && port > 0 && port <= 65535)
        << "tracker port '" << portText << "' is not a port number";

    try {
        rpc::ConnectOptions co;
        co.retryTimeoutMs = 0;
        rpc::TrackerSession s = rpc::TrackerSession::connect(host, int(port), co);
        const rpc::TrackerSummary summary = s.summary();
        if (p.isSet(QStringLiteral("json"))) {
            std::printf("%s\n", rpc::pyDumps(summary.raw).c_str());
        } else {
            // print(f"Tracker address {host}:{port}\n"); print(text_summary)
            std::printf("Tracker address %s:%ld\n\n", host.c_str(), port);
            const auto layout = p.isSet(QStringLiteral("legacy-layout")) ? rpc::SummaryLayout::kRightAligned
                                                                          : rpc::SummaryLayout::kCurrent;
            std::printf("%s\n", rpc::textSummary(summary, layout).c_str());
        }
    } catch (const rpc::RpcError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}

}  // namespace tb::cli
