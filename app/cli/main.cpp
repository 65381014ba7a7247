// SPDX-License-Identifier: Apache-2.0
// tunebench-cli: the headless, scriptable face of the engine (mirrors TVM's python entry points).
#include <QCoreApplication>
#include <QTextStream>

#include <cstdio>

#include "app/cli/commands.h"
#include "engine/support/process.h"

namespace {

const tb::cli::Command kCommands[] = {
    {"tracker", "run a TVM-compatible RPC tracker", tb::cli::runTracker},
    {"rpc-server", "serve measurements, registered with a tracker", tb::cli::runRpcServer},
    {"query-tracker", "print a tracker's servers and queues", tb::cli::runQueryTracker},
    {"fleet", "fleet up: a tracker with local servers and emulated ARM boards, until Ctrl-C", tb::cli::runFleet},
    {"log", "summarize or distill a tuning log (auto_scheduler or AutoTVM)", tb::cli::runLog},
    {"tasks", "extract the tuning tasks of a network (TVM extract_tasks)", tb::cli::runTasks},
    {"tune", "tune a network: sketch search, XGBoost cost model, task scheduler", tb::cli::runTune},
    {"compile", "compile a network with the best schedules of a log; benchmark, export", tb::cli::runCompile},
    {"autotvm", "AutoTVM: tune one template task (random/grid/GA/XGB tuners), pick the best records",
     tb::cli::runAutotvm},
    {"run", "compile and run a network on .pb inputs (optionally check against the interpreter)", tb::cli::runRun},
    {"vta", "VTA: a quantized, packed network's tasks (seed 004) and its run on the VTA simulator", tb::cli::runVta},
};

void printUsage(FILE* out) {
    std::fprintf(out, "Usage: tunebench-cli <command> [options]\n\nCommands:\n");
    for (const auto& c : kCommands) std::fprintf(out, "  %-16s %s\n", c.name, c.summary);
    std::fprintf(out, "\nRun 'tunebench-cli <command> --help' for the options of a command.\n");
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("tunebench-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral("0.1.0"));
    QStringList args = QCoreApplication::arguments();
    if (args.size() < 2 || args[1] == QLatin1String("--help") || args[1] == QLatin1String("-h")) {
        printUsage(args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? 2 : 0;
    }
    const QString name = args[1];
    for (const auto& c : kCommands) {
        if (name == QLatin1String(c.name)) {
            QStringList sub = args.mid(1);
            sub[0] = QStringLiteral("tunebench-cli ") + name;
            return tb::runMain([&] { return c.run(sub); });
        }
    }
    std::fprintf(stderr, "error: unknown command '%s'\n\n", qPrintable(name));
    printUsage(stderr);
    return 2;
}
