// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli rpc-server`: a measurement device that registers with a tracker under --key,
// like `python -m tvm.exec.rpc_server --tracker HOST:PORT --key KEY`. Runs until SIGINT/SIGTERM.
// Uploaded objects are timed in the sandbox worker of engine/measure (SandboxExecutor): a
// candidate that crashes or hangs costs one error record, never the server. With --device opencl or
// cuda the server measures GPU modules on a GPU of this machine instead (GpuExecutor, the same
// executor as tools/gpu's light tunebench-gpu-server) and answers the device-attribute call. With
// --device vta it is a VTA board for AutoTVM's VTA tuning (TVM's RPCRunner(env.TARGET, ...), seed
// 004): uploaded VTA programs run on the simulator of --vta-target / --vta-config (default: the
// VTA target named by --key), costs are simulated seconds (measure/vta_sim_executor.h).
#include <QCommandLineParser>

#include <cstdio>
#include <memory>
#include <tuple>

#include "app/cli/commands.h"
#include "engine/measure/gpu_executor.h"
#include "engine/measure/sandbox_executor.h"
#include "engine/measure/vta_sim_executor.h"
#include "engine/rpc/rpc_server.h"
#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/support/process.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_task.h"

namespace tb::cli {

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
    p.addOption({QStringLiteral("device"),
                 QStringLiteral("What this server measures: cpu (objects in the sandbox worker, default), opencl or cuda "
                                "(GPU modules on a GPU of this machine), vta (VTA programs on the VTA simulator)."),
                 QStringLiteral("kind"), QStringLiteral("cpu")});
    p.addOption({QStringLiteral("device-index"), QStringLiteral("Which GPU of that kind (default 0)."), QStringLiteral("n"),
                 QStringLiteral("0")});
    p.addOption({QStringLiteral("vta-target"),
                 QStringLiteral("--device vta: the simulated VTA's TARGET (sim, pynq, intelfocl, ...; default: --key)."),
                 QStringLiteral("target")});
    p.addOption({QStringLiteral("vta-config"), QStringLiteral("--device vta: a vta_config.json for the simulated VTA."),
                 QStringLiteral("file")});
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
    if (p.isSet(QStringLiteral("tracker")))
        std::tie(o.trackerHost, o.trackerPort) =
            parseHostPort(p.value(QStringLiteral("tracker")).toStdString(), "--tracker");
    if (p.isSet(QStringLiteral("work-dir"))) o.workDir = p.value(QStringLiteral("work-dir")).toStdString();
    o.log = logLine;

    const std::string device = p.value(QStringLiteral("device")).toStdString();
    std::shared_ptr<rpc::MeasureExecutor> executor;
    if (device == "cpu") {
        measure::SandboxExecutorOptions eo;
        bool okThreads = false;
        eo.numThreads = p.value(QStringLiteral("num-threads")).toInt(&okThreads);
        TB_USER_CHECK(okThreads && eo.numThreads >= 0) << "--num-threads must be an integer >= 0";
        executor = std::make_shared<measure::SandboxExecutor>(eo);  // UserError when tunebench-worker is missing
    } else if (device == "vta") {
        vta::VtaConfig cfg;
        if (p.isSet(QStringLiteral("vta-config"))) {
            TB_USER_CHECK(!p.isSet(QStringLiteral("vta-target"))) << "give --vta-target or --vta-config, not both";
            cfg = vta::VtaConfig::fromFile(p.value(QStringLiteral("vta-config")).toStdString());
        } else {
            const std::string target =
                p.isSet(QStringLiteral("vta-target")) ? p.value(QStringLiteral("vta-target")).toStdString() : o.key;
            TB_USER_CHECK(vta::isKnownVtaTarget(target))
                << "--device vta: '" << target << "' is not a VTA target (sim, tsim, pynq, de10nano, ultra96, zcu104, "
                << "intelfocl); give --vta-target or --vta-config";
            cfg = vta::VtaConfig::forTarget(target);
        }
        executor = std::make_shared<measure::VtaSimExecutor>(cfg);
        logLine("VTA simulator " + cfg.model() + " (target '" + vta::vtaTargetString(cfg) +
                "'): costs are simulated seconds");
    } else {
        TB_USER_CHECK(device == "opencl" || device == "cuda")
            << "--device must be cpu, opencl, cuda or vta, not '" << device << "'";
        bool okIndex = false;
        const int index = p.value(QStringLiteral("device-index")).toInt(&okIndex);
        TB_USER_CHECK(okIndex && index >= 0) << "--device-index must be an integer >= 0";
        try {
            executor = std::make_shared<measure::GpuExecutor>(gpu::parseGpuApi(device), index);
        } catch (const gpu::GpuError& e) {
            TB_USER_ERROR() << device << " device " << index << ": " << e.what();
        }
    }

    const StopSignals signals;  // before the server's threads start
    rpc::RpcServer server(o, executor);
    try {
        server.start();
    } catch (const rpc::RpcError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    signals.wait();
    server.stop();
    return 0;
}

}  // namespace tb::cli
