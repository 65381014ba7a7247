// SPDX-License-Identifier: Apache-2.0
#include "app/session/benchworker.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QTemporaryDir>

#include <exception>
#include <string>
#include <vector>

#include "app/session/engineadapter.h"
#include "engine/codegen/target.h"
#include "engine/measure/machine_peak.h"
#include "engine/runtime/build_module.h"
#include "engine/runtime/kernel_roofline.h"
#include "engine/runtime/network_eval.h"
#include "engine/support/error.h"
#include "engine/support/thread_pool.h"
#include "engine/tuning/tuning_job.h"

namespace tb::session {

namespace {

// `compile --bench`'s defaults (TVM module.benchmark(dev, repeat=5, number=5)) and --tolerance.
constexpr int kRepeat = 5, kNumber = 5;
constexpr double kTolerance = 1e-4;

QString tr(const char* text) { return QCoreApplication::translate("tb::session::BenchWorker", text); }

void logText(const std::function<void(const QString&)>& log, const std::string& text) {
    QString t = adapter::qstr(text);
    while (t.endsWith(QLatin1Char('\n'))) t.chop(1);
    for (const QString& line : t.split(QLatin1Char('\n'))) log(line);
}

QString outcomeLine(const QString& where, double medianS, double maxRelError, bool checked) {
    return tr("Benchmark on %1: median %2 ms, max error %3 (%4)")
        .arg(where)
        .arg(medianS * 1e3, 0, 'f', 3)
        .arg(maxRelError, 0, 'g', 3)
        .arg(checked ? tr("ok") : tr("FAILED"));
}

// `compile --profile`: every kernel timed, then placed against the measured roofs (measured once
// per machine and thread count, then read from the user's cache directory).
RooflineSnapshot profileRoofline(runtime::CompiledModule& mod, const std::function<void(const QString&)>& log) {
    const int threads = ThreadPool::global().numThreads();
    log(tr("Profiling every kernel against this machine's roofline (%1 threads)…").arg(threads));
    const auto prof = mod.runtime().profile(kNumber * 4);
    const measure::MachinePeak peak = measure::machinePeak(threads);
    const auto rows = runtime::kernelRoofline(mod.runtime().graph(), prof, peak);
    logText(log, runtime::kernelRooflineText(rows, peak));
    return adapter::rooflineSnapshot(rows, peak);
}

BenchOutcome run(const TuningJob& job, const std::function<void(const QString&)>& log) {
    const runtime::LineSink sink = [&log](const std::string& line) { logText(log, line); };
    const tuning::TuningJob ej = adapter::engineJob(job);
    const bool remote = job.runner == QLatin1String("rpc");
    runtime::BuildOptions bo;
    bo.target = ej.target;
    // A GPU target runs on this machine's GPU (PoCL's OpenCL device here) or, with the rpc runner,
    // on a GPU device server, which gets the network's GPU module (as `compile --runner rpc`).
    const bool gpuTarget = !bo.target.empty() && codegen::Target::parse(bo.target).isGpu();
    const bool runsHere = bo.target.empty() || gpuTarget || codegen::Target::parse(bo.target).runsOnHost();
    TB_USER_CHECK(remote || runsHere) << "target '" << bo.target
                                      << "' does not run on this machine: choose the rpc runner and a device key";
    TB_USER_CHECK(!remote || !job.deviceKey.isEmpty()) << "the rpc runner needs a device key";
    bo.load = !remote;
    bo.winograd = ej.network.winograd;
    if (!job.logPath.isEmpty() && QFileInfo::exists(job.logPath)) bo.logPath = job.logPath.toStdString();
    const QString name = adapter::qstr(tuning::networkName(ej.network));
    log(bo.logPath.empty()
            ? tr("Compiling %1 (%2) without a tuning log: every group uses its default schedule…").arg(name, job.layout)
            : tr("Compiling %1 (%2) with the best records of %3…").arg(name, job.layout, job.logPath));
    const graph::Graph g = tuning::loadNetwork(ej.network);
    runtime::CompiledModule mod = runtime::build(g, bo);
    logText(log, mod.report().text());
    const std::vector<te::Buffer> inputs = runtime::seededInputs(mod.graph());

    if (!remote) {
        std::vector<rpc::NamedTensor> outs;
        for (te::Buffer& b : mod.run(inputs)) outs.push_back({std::string(), b.shape, std::move(b.data)});
        const runtime::OutputCheck c = runtime::checkAgainstInterpreter(g, inputs, outs, kTolerance, sink);
        const runtime::BenchmarkResult r = mod.benchmark(kRepeat, kNumber, 0);
        logText(log, r.summary());
        BenchOutcome out{c.ok, outcomeLine(tr("this machine"), r.median, c.maxRelError, c.ok), {}};
        if (!mod.gpuModule()) out.roofline = profileRoofline(mod, log);
        return out;
    }
    runtime::RemoteRunOptions ro;
    ro.trackerHost = job.trackerHost.toStdString();
    ro.trackerPort = job.trackerPort;
    ro.key = job.deviceKey.toStdString();
    ro.trackerRetryTimeoutS = job.trackerRetryTimeoutS;
    ro.timeoutS = 300;  // the CLI's --timeout and --request-timeout defaults
    ro.requestTimeoutS = 60;
    ro.repeat = kRepeat;
    ro.number = kNumber;
    runtime::DeviceRun dr;
    if (mod.gpuModule()) {
        dr = runtime::runGpuNetworkOnDevice(g, mod, inputs, ro, true, kTolerance, sink);
    } else {
        // TVM: lib.export_library(tmp.relpath(filename)), then remote.upload.
        QTemporaryDir tmp;
        TB_USER_CHECK(tmp.isValid()) << "cannot create a temporary directory for the export";
        const std::string dir = tmp.path().toStdString();
        mod.exportLibrary(dir);
        log(tr("Exported %1 kernels for %2").arg(mod.report().kernels.size()).arg(adapter::qstr(bo.target)));
        dr = runtime::runAndCheckOnDevice(g, mod.graph(), dir, inputs, ro, true, kTolerance, sink);
    }
    if (!dr.ran) {
        log(QStringLiteral("error: ") + adapter::qstr(dr.error));
        return {false, tr("Benchmark failed: %1").arg(adapter::qstr(dr.error))};
    }
    logText(log, runtime::deviceExecutionSummary(dr.result));
    const QString where =
        QStringLiteral("%1 (%2)").arg(adapter::qstr(dr.result.serverKey), adapter::qstr(dr.result.server));
    return {dr.checked, outcomeLine(where, dr.result.bench.median, dr.maxRelError, dr.checked)};
}

}  // namespace

BenchOutcome compileAndBenchmarkJob(const TuningJob& job, const std::function<void(const QString&)>& log) {
    try {
        return run(job, log);
    } catch (const std::exception& e) {
        const QString msg = QString::fromUtf8(e.what());
        log(QStringLiteral("error: ") + msg);
        return {false, tr("Compile and benchmark failed: %1").arg(msg)};
    }
}

}  // namespace tb::session
