// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli rpc-server`: a measurement device that registers with a tracker under --key,
// like `python -m tvm.exec.rpc_server --tracker HOST:PORT --key KEY`. Runs until SIGINT/SIGTERM.
// Uploaded objects are timed in the sandbox worker of engine/measure (SandboxExecutor): a
// candidate that crashes or hangs costs one error record, never the server.
#include <QCommandLineParser>

#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>

#include "app/cli/commands.h"
#include "engine/measure/sandbox_executor.h"
#include "engine/rpc/rpc_server.h"
#include "engine/support/error.h"

namespace tb::cli {

namespace {

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
    p.addOption({QStringLiteral("num-threads"), QStringLiteral("Threads of the measure worker (default: all cores)."),
                 QStringLiteral("n"), QStringLiteral("0")});
    p.addOption({QStringLiteral("work-dir"), QStringLiteral("Directory for uploaded modules (default $TMPDIR or /tmp)."),
                 QStringLiteral("dir")});
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
    if (p.isSet(QStringLiteral("work-dir"))) o.workDir = p.value(QStringLiteral("work-dir")).toStdString();
    o.log = logLine;

    measure::SandboxExecutorOptions eo;
    bool okThreads = false;
    eo.numThreads = p.value(QStringLiteral("num-threads")).toInt(&okThreads);
    TB_USER_CHECK(okThreads && eo.numThreads >= 0) << "--num-threads must be an integer >= 0";
    auto executor = std::make_shared<measure::SandboxExecutor>(eo);  // UserError when tunebench-worker is missing

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);

    rpc::RpcServer server(o, executor);
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
