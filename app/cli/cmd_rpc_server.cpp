// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli rpc-server`: a measurement device that registers with a tracker under --key,
// like `python -m tvm.exec.rpc_server --tracker HOST:PORT --key KEY`. Runs until SIGINT/SIGTERM.
#include <QCommandLineParser>

#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>

#include "app/cli/commands.h"
#include "engine/rpc/rpc_server.h"
#include "engine/support/error.h"

namespace tb::cli {

namespace {

// Placeholder until the sandboxed runner of engine/measure is wired in: every run reports a
// runtime-device error naming the cause, so clients see a clear failure instead of a hang.
class UnwiredExecutor : public rpc::MeasureExecutor {
public:
    rpc::RunReply run(const rpc::RunRequest&) override {
        rpc::RunReply r;
        r.errorNo = rpc::kErrorNoRuntimeDevice;
        r.errorMsg = "this tunebench-cli build has no measurement runner attached to rpc-server";
        return r;
    }
};

int parsePort(const std::string& text, const char* what) {
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    TB_USER_CHECK(!text.empty() && *end == '\0' && v >= 0 && v <= 65535)
        << what << ": '" << text << "' is not a port number (0..65535)";
    return int(v);
}

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

int runRpcServer(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Serve measurements and register with an RPC tracker."));
    p.addHelpOption();
    p.addOption({QStringLiteral("tracker"), QStringLiteral("Tracker address HOST:PORT to register with."),
                 QStringLiteral("host:port")});
    p.addOption({QStringLiteral("key"), QStringLiteral("Device key the server registers under."), QStringLiteral("key")});
    p.addOption({QStringLiteral("host"), QStringLiteral("Address to listen on (default 127.0.0.1)."),
                 QStringLiteral("host"), QStringLiteral("127.0.0.1")});
    p.addOption({QStringLiteral("port"), QStringLiteral("First port to try (default 9090)."), QStringLiteral("port"),
                 QStringLiteral("9090")});
    p.addOption({QStringLiteral("port-end"), QStringLiteral("End of the port range, exclusive (default 9199)."),
                 QStringLiteral("port"), QStringLiteral("9199")});
    p.addOption({QStringLiteral("token"), QStringLiteral("Shared secret clients must present."), QStringLiteral("token")});
    p.addOption({QStringLiteral("custom-addr"), QStringLiteral("Address announced to the tracker instead of the one it sees."),
                 QStringLiteral("addr")});
    p.process(args);

    rpc::RpcServerOptions o;
    o.host = p.value(QStringLiteral("host")).toStdString();
    o.port = parsePort(p.value(QStringLiteral("port")).toStdString(), "--port");
    o.portEnd = parsePort(p.value(QStringLiteral("port-end")).toStdString(), "--port-end");
    o.key = p.value(QStringLiteral("key")).toStdString();
    o.token = p.value(QStringLiteral("token")).toStdString();
    if (p.isSet(QStringLiteral("custom-addr"))) o.customAddr = p.value(QStringLiteral("custom-addr")).toStdString();
    if (p.isSet(QStringLiteral("tracker"))) {
        const std::string t = p.value(QStringLiteral("tracker")).toStdString();
        const size_t colon = t.rfind(':');
        TB_USER_CHECK(colon != std::string::npos && colon > 0) << "--tracker: '" << t << "' is not HOST:PORT";
        o.trackerHost = t.substr(0, colon);
        o.trackerPort = parsePort(t.substr(colon + 1), "--tracker");
    }
    o.log = logLine;

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);

    rpc::RpcServer server(o, std::make_shared<UnwiredExecutor>());
    try {
        server.start();
    } catch (const rpc::RpcError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    int sig = 0;
    while (sig <= 0) {
        const timespec wait{1, 0};
        sig = sigtimedwait(&set, nullptr, &wait);
    }
    server.stop();
    return 0;
}

}  // namespace tb::cli
