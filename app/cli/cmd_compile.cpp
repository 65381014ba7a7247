// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli compile`: the network compiled with the best schedule of every task in a tuning
// log (TVM: `with auto_scheduler.ApplyHistoryBest(log): relay.build(...)`), then optionally
// benchmarked (`module.benchmark(dev, repeat, number, min_repeat_ms)`, TVM's summary layout),
// profiled kernel by kernel, and exported as deploy_lib.so + deploy_graph.json + deploy_param.params
// (run the export with `tunebench-runner DIR --input X.pb`).
//
// With `--runner rpc --tracker H:P --key K --bench` the network is cross-compiled for --target (e.g.
// `llvm -mtriple=aarch64-linux-gnu -mattr=+neon`, not loaded here), exported, and evaluated on a
// device of key K as the end of TVM's ARM tutorial does (request_remote, remote.upload,
// graph_executor, module.benchmark; engine/runtime/remote_network.h): the device runs it on the same
// seeded random inputs a host --bench uses, its outputs are compared with the graph reference
// interpreter's on this machine (exit 1 above --tolerance; for a network ending in softmax the
// logits too, fetched from the device like TVM's debug_get_output), and TVM's Execution time
// summary is the device's.
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/device_run.h"
#include "app/cli/network_loader.h"
#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/gpu_module.h"
#include "engine/codegen/target.h"
#include "engine/measure/machine_peak.h"
#include "engine/measure/timer.h"
#include "engine/runtime/build_module.h"
#include "engine/runtime/kernel_roofline.h"
#include "engine/support/error.h"
#include "engine/support/thread_pool.h"

namespace tb::cli {

namespace {
int positiveInt(const QCommandLineParser& p, const QCommandLineOption& o, int minValue) {
    bool ok = false;
    const int v = p.value(o).toInt(&ok);
    TB_USER_CHECK(ok && v >= minValue) << "--" << o.names().first().toStdString() << " must be an integer >= "
                                       << minValue << ", got '" << p.value(o).toStdString() << "'";
    return v;
}

void printProfile(runtime::CompiledModule& mod, int number) {
    const auto prof = mod.runtime().profile(number);
    double total = 0;
    for (const auto& k : prof) total += k.meanMs;
    const int threads = ThreadPool::global().numThreads();
    // Measured once per machine and thread count, then read from the user's cache directory.
    const measure::MachinePeak peak = measure::machinePeak(threads);
    std::map<std::string, std::string> source;
    for (const auto& k : mod.report().kernels) source[k.symbol] = runtime::scheduleSourceName(k.source);
    std::fprintf(stdout, "Per-kernel profile (%d calls each after a warm-up; sum %.3f ms per run, %d threads):\n",
                 number, total, threads);
    std::fputs(runtime::kernelRooflineText(runtime::kernelRoofline(mod.runtime().graph(), prof, peak), peak, source).c_str(),
               stdout);
    // Where the network loses time between kernels: each call timed in its place in whole-network
    // runs against its warm, back-to-back time above.
    double inNet = 0;
    std::map<std::string, std::pair<double, double>> bySymbol;  // symbol -> (warm, in network) ms per run
    std::map<std::string, std::string> labelOf;  // symbol -> "fused_nn_conv2d_add_nn_relu 1x56x56x128"
    std::map<std::string, std::string> funcNameOf;
    for (const auto& k : mod.report().kernels) funcNameOf[k.symbol] = k.funcName;
    for (const auto& k : prof) {
        inNet += k.inNetworkMs;
        bySymbol[k.func].first += k.meanMs;
        bySymbol[k.func].second += k.inNetworkMs;
        std::string shape;
        for (int64_t d : mod.runtime().graph().nodes[size_t(k.node)].shape)
            shape += (shape.empty() ? "" : "x") + std::to_string(d);
        labelOf[k.func] = (funcNameOf.count(k.func) ? funcNameOf[k.func] : k.func) + " " + shape;
    }
    std::vector<std::pair<double, std::string>> loss;
    for (const auto& [sym, t] : bySymbol) loss.emplace_back(t.second - t.first, sym);
    std::sort(loss.rbegin(), loss.rend());
    std::fprintf(stdout, "In the network (%d runs, each call timed in place): sum %.3f ms per run, %+.3f ms against the warm sum; "
                 "largest differences:\n", number, inNet, inNet - total);
    for (size_t i = 0; i < loss.size() && i < 6 && loss[i].first > 0; ++i) {
        const auto& t = bySymbol[loss[i].second];
        std::fprintf(stdout, "  %-60s warm %8.4f ms  in network %8.4f ms  (%+.4f)\n", labelOf[loss[i].second].c_str(),
                     t.first, t.second, loss[i].first);
    }
}
}  // namespace

int runCompile(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Compile a network with the best schedules of a tuning log (TVM ApplyHistoryBest + relay.build). Groups "
        "without a record get a default schedule; the report lists them."));
    p.addHelpOption();
    NetworkOptions net;
    net.addTo(p);
    QCommandLineOption log(QStringLiteral("log"), QStringLiteral("Tuning log (omit: no tuned schedules): auto_scheduler records, or AutoTVM records (told by "
                                          "their lines; x86 conv2d_NCHWc configs apply to NCHW convs: --layout NCHW)."),
                           QStringLiteral("FILE"));
    QCommandLineOption target(QStringLiteral("target"), QStringLiteral("TVM target string (default: this CPU)."),
                              QStringLiteral("TARGET"));
    QCommandLineOption bench(QStringLiteral("bench"), QStringLiteral("Benchmark the compiled network (random input)."));
    QCommandLineOption repeat(QStringLiteral("repeat"), QStringLiteral("Benchmark repeats (default 5)."),
                              QStringLiteral("N"), QStringLiteral("5"));
    QCommandLineOption number(QStringLiteral("number"), QStringLiteral("Runs per repeat (default 5)."),
                              QStringLiteral("N"), QStringLiteral("5"));
    QCommandLineOption minRepeat(QStringLiteral("min-repeat-ms"),
                                 QStringLiteral("Minimum duration of a repeat in ms (default 0)."), QStringLiteral("MS"),
                                 QStringLiteral("0"));
    QCommandLineOption profile(QStringLiteral("profile"), QStringLiteral("Time every kernel: per-kernel table with GFLOP/s, GB/s, FLOP/byte and the roofline bound against this machine's measured FMA peak and triad bandwidth (measured once, cached under ~/.cache/tunebench)."));
    QCommandLineOption exportDir(QStringLiteral("export"),
                                 QStringLiteral("Write deploy_lib.so, deploy_graph.json, deploy_param.params to DIR."),
                                 QStringLiteral("DIR"));
    QCommandLineOption threads(QStringLiteral("threads"),
                               QStringLiteral("Threads of the kernels' thread pool (default: TB_NUM_THREADS or all)."),
                               QStringLiteral("N"));
    QCommandLineOption compatible(QStringLiteral("include-compatible"),
                                  QStringLiteral("Also use records of compatible workloads (ApplyHistoryBest include_compatible)."));
    QCommandLineOption unscheduled(QStringLiteral("no-default-schedules"),
                                   QStringLiteral("Groups without a record use the unscheduled lowering."));
    QCommandLineOption dumpIr(QStringLiteral("dump-ir"),
                              QStringLiteral("Write every kernel's lowered IR to DIR/<kernel>.txt (with its DAG)."),
                              QStringLiteral("DIR"));
    const DeviceRunOptions device;
    QCommandLineOption tolerance(QStringLiteral("tolerance"),
                                 QStringLiteral("--runner rpc fails (exit 1) when a device output differs from the "
                                                "reference interpreter's by more than this relative error (default 1e-4)."),
                                 QStringLiteral("X"), QStringLiteral("1e-4"));
    QCommandLineOption noLayoutRewrite(
        QStringLiteral("no-layout-rewrite"),
        QStringLiteral("Tuned kernels read their weights in the original layout, even when their records were timed "
                       "with the weights pre-transformed (layout_rewrite_option 2)."));
    p.addOptions({log, target, bench, repeat, number, minRepeat, profile, exportDir, threads, compatible, unscheduled,
                  dumpIr, tolerance});
    p.addOption(noLayoutRewrite);
    p.addOptions(device.options());
    if (!p.parse(args)) {
        std::fprintf(stderr, "error: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fprintf(stdout, "%s", qPrintable(p.helpText()));
        return 0;
    }
    if (p.isSet(threads)) setenv("TB_NUM_THREADS", std::to_string(positiveInt(p, threads, 1)).c_str(), 1);
    const int rep = positiveInt(p, repeat, 1), num = positiveInt(p, number, 1);
    bool ok = false;
    const double minMs = p.value(minRepeat).toDouble(&ok);
    TB_USER_CHECK(ok && minMs >= 0) << "--min-repeat-ms must be a number >= 0";

    runtime::RemoteRunOptions ro;
    const bool remote = device.remote(p, &ro);
    double tol = 1e-4;
    if (remote) {
        TB_USER_CHECK(p.isSet(target))
            << "--runner rpc needs the device's --target, e.g. \"llvm -mtriple=aarch64-linux-gnu -mattr=+neon\"";
        TB_USER_CHECK(p.isSet(bench)) << "--runner rpc evaluates the network on a device: add --bench";
        TB_USER_CHECK(!p.isSet(profile)) << "--profile times kernels on this machine; it does not combine with --runner rpc";
        ro.repeat = rep;
        ro.number = num;
        ro.minRepeatMs = minMs;
        tol = p.value(tolerance).toDouble(&ok);
        TB_USER_CHECK(ok && tol > 0) << "--tolerance must be a positive number";
    }

    graph::Graph g = net.load(p);
    runtime::BuildOptions bo;
    if (p.isSet(target)) bo.target = p.value(target).toStdString();
    // A GPU target runs on this machine's GPU (PoCL's OpenCL device here, an NVIDIA GPU through CUDA).
    const bool gpuTarget = p.isSet(target) && codegen::Target::parse(bo.target).isGpu();
    const bool runsHere = !p.isSet(target) || gpuTarget || codegen::Target::parse(bo.target).runsOnHost();
    TB_USER_CHECK(!gpuTarget || !p.isSet(profile))
        << "--profile times CPU kernels one by one; for a GPU target use --bench (the whole network)";
    TB_USER_CHECK(!gpuTarget || !p.isSet(exportDir))
        << "--export writes a CPU library (deploy_lib.so); a GPU network runs on a device with --runner rpc --bench";
    TB_USER_CHECK(remote || runsHere || !(p.isSet(bench) || p.isSet(profile)))
        << "target '" << bo.target << "' does not run on this machine: benchmark it on a device with --runner rpc "
        << "--tracker HOST:PORT --key KEY, or only --export it";
    // Cross-compiling (TVM relay.build for a board): kernels for the device, not loaded here.
    bo.load = !remote && runsHere;
    if (p.isSet(log)) bo.logPath = p.value(log).toStdString();
    bo.includeCompatible = p.isSet(compatible);
    bo.defaultSchedules = !p.isSet(unscheduled);
    bo.winograd = net.winograd(p);
    bo.layoutRewrite = !p.isSet(noLayoutRewrite);
    runtime::CompiledModule mod = runtime::build(g, bo);
    std::fprintf(stdout, "%s", mod.report().text().c_str());
    if (!p.isSet(log)) std::fprintf(stdout, "No --log given: every group uses its default schedule.\n");
    std::fflush(stdout);

    if (p.isSet(dumpIr)) {
        const QString dir = p.value(dumpIr);
        QDir().mkpath(dir);
        const auto& reps = mod.report().kernels;
        if (const codegen::GpuModule* gm = mod.gpuModule()) {
            // One translation unit for the whole network: that is what the device compiles.
            const QString name = gm->language == codegen::GpuLanguage::CUDA ? QStringLiteral("network.cu")
                                                                            : QStringLiteral("network.cl");
            QFile f(dir + QLatin1Char('/') + name);
            TB_USER_CHECK(f.open(QIODevice::WriteOnly | QIODevice::Truncate)) << "cannot write into " << dir.toStdString();
            f.write(gm->source.data(), qint64(gm->source.size()));
            std::fprintf(stdout, "Source of %zu kernels (%zu launches) written to %s/%s\n", reps.size(),
                         gm->launches.size(), qPrintable(dir), qPrintable(name));
        }
        for (size_t i = 0; i < reps.size() && !mod.gpuModule(); ++i) {
            QFile f(dir + QLatin1Char('/') + QString::fromStdString(reps[i].symbol) + QStringLiteral(".txt"));
            TB_USER_CHECK(f.open(QIODevice::WriteOnly | QIODevice::Truncate)) << "cannot write into " << dir.toStdString();
            const std::string text = "// " + reps[i].funcName + " (" + runtime::scheduleSourceName(reps[i].source) +
                                     ", workload key " + reps[i].workloadKey + ")\n" + mod.kernels()[i]->loweredIr;
            f.write(text.data(), qint64(text.size()));
        }
        if (!mod.gpuModule()) std::fprintf(stdout, "Lowered IR of %zu kernels written to %s\n", reps.size(), qPrintable(dir));
    }
    if (!remote && (p.isSet(bench) || p.isSet(profile))) {
        mod.run(runtime::seededInputs(mod.graph()));
        if (p.isSet(bench)) {
            runtime::BenchmarkResult r = mod.benchmark(rep, num, minMs);
            std::fprintf(stdout, "%s\n", r.summary().c_str());
        }
        if (p.isSet(profile)) printProfile(mod, num * 4);
    }
    if (remote && mod.gpuModule()) {
        // A GPU device server compiles the network's source itself: it gets the module, not a library.
        const runtime::DeviceRun run = runtime::runGpuNetworkOnDevice(
            g, mod, runtime::seededInputs(mod.graph()), ro, true, tol, [](const std::string& line) {
                std::fprintf(stdout, "%s\n", line.c_str());
                std::fflush(stdout);
            });
        if (!run.ran) {
            std::fprintf(stderr, "error: %s\n", run.error.c_str());
            return 1;
        }
        if (run.checked) std::fprintf(stdout, "%s\n", runtime::deviceExecutionSummary(run.result).c_str());
        return run.checked ? 0 : 1;
    }
    // The device gets the export (TVM: lib.export_library(tmp.relpath(filename)), then remote.upload).
    QTemporaryDir tmp;
    std::string dir;
    if (p.isSet(exportDir)) {
        dir = p.value(exportDir).toStdString();
    } else if (remote) {
        TB_USER_CHECK(tmp.isValid()) << "cannot create a temporary directory for the export";
        dir = tmp.path().toStdString();
    }
    if (!dir.empty()) {
        mod.exportLibrary(dir);
        std::fprintf(stdout, "Exported %zu kernels to %s (deploy_lib.so, deploy_graph.json, deploy_param.params)\n",
                     mod.report().kernels.size(), dir.c_str());
        std::fflush(stdout);
    }
    if (remote) {
        const runtime::DeviceRun run =
            runAndCheckOnDevice(g, mod.graph(), dir, runtime::seededInputs(mod.graph()), ro, true, tol);
        if (!run.ran) return 1;
        std::fprintf(stdout, "%s\n", runtime::deviceExecutionSummary(run.result).c_str());
        return run.checked ? 0 : 1;
    }
    return 0;
}

}  // namespace tb::cli
