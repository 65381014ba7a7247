// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli tasks`: TVM's `auto_scheduler.extract_tasks` on a zoo network or an ONNX file,
// printed as the tutorials print them:
//   ========== Task 0  (workload key: ["6d62...", [1, 56, 56, 128], ...]) ==========
//   <the compute DAG, full mode>
// followed by the weight and FLOPs of each task; `--json` prints an array of task objects instead.
// GPU targets as TVM writes them: `--target "opencl -device=mali" --target-host "llvm
// -mtriple=aarch64-linux-gnu"` (or `-host=...` inside the target string), `--target cuda`.
#include <QCommandLineParser>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/network_loader.h"
#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/support/error.h"

namespace tb::cli {

int runTasks(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Extract the tuning tasks of a network as TVM's auto_scheduler.extract_tasks does (x86, cuda, mali and "
        "OpenCL strategies)."));
    p.addHelpOption();
    NetworkOptions net;
    net.addTo(p);
    QCommandLineOption target(QStringLiteral("target"),
                              QStringLiteral("TVM target (default llvm -mcpu=core-avx2), e.g. cuda -arch=sm_90, "
                                             "opencl -device=mali."),
                              QStringLiteral("TARGET"), QStringLiteral("llvm -mcpu=core-avx2"));
    QCommandLineOption targetHost(QStringLiteral("target-host"),
                                  QStringLiteral("Host of a GPU target (TVM Target(target, host=...)), e.g. "
                                                 "llvm -mtriple=aarch64-linux-gnu."),
                                  QStringLiteral("TARGET"));
    QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print a JSON array of tasks."));
    QCommandLineOption simple(QStringLiteral("include-simple-tasks"),
                              QStringLiteral("Also list fused functions without a reduction."));
    p.addOptions({target, targetHost, json, simple});
    if (!p.parse(args)) {
        std::fprintf(stderr, "error: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fprintf(stdout, "%s", qPrintable(p.helpText()));
        return 0;
    }
    // Parsed first: a bad target or host fails before the network is built.
    const std::string targetText = p.value(target).toStdString();
    const codegen::Target parsed = codegen::Target::parse(targetText, p.value(targetHost).toStdString());
    graph::Graph g = net.load(p);
    graph::TaskExtractionOptions eo;
    // GPU targets are passed on in TVM's canonical form (what records store); llvm as given.
    eo.target = parsed.isGpu() ? parsed.str() : targetText;
    eo.includeSimpleTasks = p.isSet(simple);
    eo.winograd = net.winograd(p);
    eo.winogradAlternatives = net.source(p).winogradAlternatives;
    auto tasks = graph::extractTasks(g, eo);

    if (p.isSet(json)) {
        nlohmann::ordered_json arr = nlohmann::ordered_json::array();
        for (const auto& t : tasks) {
            nlohmann::ordered_json j;
            j["workload_key"] = t.workloadKey;
            j["weight"] = t.weight;
            j["flop"] = t.flop;
            j["desc"] = t.desc;
            j["dag"] = t.dag.print(false);
            if (t.alternativeOf >= 0) j["alternative_of"] = t.alternativeOf;
            arr.push_back(j);
        }
        std::fprintf(stdout, "%s\n", arr.dump(2).c_str());
        return 0;
    }
    int total = 0;
    double flops = 0;
    for (size_t i = 0; i < tasks.size(); ++i) {
        const auto& t = tasks[i];
        std::fprintf(stdout, "========== Task %zu  (workload key: %s) ==========\n%s", i, t.workloadKey.c_str(),
                     t.dag.print(false).c_str());
        std::fprintf(stdout, "weight: %d  FLOPs: %.0f  desc: %s\n", t.weight, t.flop, t.desc.c_str());
        if (t.alternativeOf >= 0)
            std::fprintf(stdout, "direct alternative of task %d (winograd): the network runs the faster of the two\n",
                         t.alternativeOf);
        std::fprintf(stdout, "\n");
        if (t.alternativeOf >= 0) continue;  // its convolutions are counted once, with the winograd task
        total += t.weight;
        flops += t.flop * t.weight;
    }
    std::fprintf(stdout, "%zu tasks, total weight %d, %.4f GFLOPs per inference\n", tasks.size(), total, flops / 1e9);
    return 0;
}

}  // namespace tb::cli
