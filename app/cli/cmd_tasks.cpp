// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli tasks`: TVM's `auto_scheduler.extract_tasks` on a zoo network or an ONNX file,
// printed as the tutorials print them:
//   ========== Task 0  (workload key: ["6d62...", [1, 56, 56, 128], ...]) ==========
//   <the compute DAG, full mode>
// followed by the weight and FLOPs of each task; `--json` prints an array of task objects instead.
#include <QCommandLineParser>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "engine/graph/onnx_import.h"
#include "engine/graph/passes/passes.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/support/error.h"

namespace tb::cli {

int runTasks(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Extract the tuning tasks of a network as TVM's auto_scheduler.extract_tasks does (x86 rules)."));
    p.addHelpOption();
    QCommandLineOption network(QStringLiteral("network"), QStringLiteral("Zoo network (resnet-50, mobilenet, ...)."),
                               QStringLiteral("NAME"));
    QCommandLineOption onnx(QStringLiteral("onnx"), QStringLiteral("ONNX model file."), QStringLiteral("FILE"));
    QCommandLineOption batch(QStringLiteral("batch"), QStringLiteral("Batch size of a zoo network (default 1)."),
                             QStringLiteral("N"), QStringLiteral("1"));
    QCommandLineOption layout(QStringLiteral("layout"),
                              QStringLiteral("NHWC or NCHW (default NHWC). For --onnx, NHWC converts the NCHW model "
                                             "with ConvertLayout; NCHW keeps it."),
                              QStringLiteral("LAYOUT"), QStringLiteral("NHWC"));
    QCommandLineOption target(QStringLiteral("target"), QStringLiteral("TVM target (default llvm -mcpu=core-avx2)."),
                              QStringLiteral("TARGET"), QStringLiteral("llvm -mcpu=core-avx2"));
    QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print a JSON array of tasks."));
    QCommandLineOption simple(QStringLiteral("include-simple-tasks"),
                              QStringLiteral("Also list fused functions without a reduction."));
    QCommandLineOption shape(QStringLiteral("shape"),
                             QStringLiteral("Bind an ONNX input shape, e.g. x=1,3,640,640 (repeatable)."),
                             QStringLiteral("NAME=DIMS"));
    p.addOptions({network, onnx, batch, layout, target, json, simple, shape});
    if (!p.parse(args)) {
        std::fprintf(stderr, "error: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fprintf(stdout, "%s", qPrintable(p.helpText()));
        return 0;
    }
    TB_USER_CHECK(p.isSet(network) != p.isSet(onnx)) << "give exactly one of --network NAME or --onnx FILE";
    bool ok = false;
    int64_t b = p.value(batch).toLongLong(&ok);
    TB_USER_CHECK(ok && b >= 1) << "--batch must be a positive integer, got '" << p.value(batch).toStdString() << "'";
    const std::string lay = p.value(layout).toStdString();
    TB_USER_CHECK(lay == "NHWC" || lay == "NCHW") << "--layout must be NHWC or NCHW, got '" << lay << "'";

    graph::Graph g;
    if (p.isSet(network)) {
        TB_USER_CHECK(!p.isSet(shape)) << "--shape applies to --onnx models only";
        g = graph::makeNetwork(p.value(network).toStdString(), b, lay);
    } else {
        graph::OnnxImportOptions opt;
        for (const QString& s : p.values(shape))
            for (auto& [k, v] : graph::parseShapeMap(s.toStdString())) opt.inputShapes[k] = v;
        g = graph::importOnnx(p.value(onnx).toStdString(), opt);
        if (lay == "NHWC") g = graph::convertLayout(g, "NHWC");
    }
    graph::TaskExtractionOptions eo;
    eo.target = p.value(target).toStdString();
    eo.includeSimpleTasks = p.isSet(simple);
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
        std::fprintf(stdout, "weight: %d  FLOPs: %.0f  desc: %s\n\n", t.weight, t.flop, t.desc.c_str());
        total += t.weight;
        flops += t.flop * t.weight;
    }
    std::fprintf(stdout, "%zu tasks, total weight %d, %.4f GFLOPs per inference\n", tasks.size(), total, flops / 1e9);
    return 0;
}

}  // namespace tb::cli
