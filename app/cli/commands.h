// SPDX-License-Identifier: Apache-2.0
#pragma once
// The subcommands of tunebench-cli. Each lives in its own cmd_<name>.cpp, parses its own options
// with QCommandLineParser (args[0] is "tunebench-cli <name>") and returns the process exit code:
// 0 success, 1 failure of the job, 2 bad usage or bad input (the message names the problem).

#include <QCommandLineParser>
#include <QStringList>

#include <cstdio>
#include <optional>

namespace tb::cli {

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const QStringList& args);
};

/// Parses a subcommand's options: nullopt to go on, else the exit code to return now (2 after
/// printing the parse error, 0 after printing --help).
inline std::optional<int> parseOrExit(QCommandLineParser& p, const QStringList& args) {
    if (!p.parse(args)) {
        std::fprintf(stderr, "error: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fprintf(stdout, "%s", qPrintable(p.helpText()));
        return 0;
    }
    return std::nullopt;
}

// One declaration per subcommand; add the entry to kCommands in main.cpp.
int runTracker(const QStringList& args);       // cmd_tracker.cpp
int runRpcServer(const QStringList& args);     // cmd_rpc_server.cpp
int runQueryTracker(const QStringList& args);  // cmd_query_tracker.cpp
int runLog(const QStringList& args);           // cmd_log.cpp
int runTasks(const QStringList& args);         // cmd_tasks.cpp
int runTune(const QStringList& args);          // cmd_tune.cpp
int runCompile(const QStringList& args);       // cmd_compile.cpp
int runRun(const QStringList& args);           // cmd_run.cpp
int runAutotvm(const QStringList& args);       // cmd_autotvm.cpp
int runAutotvmVtaTune(const QStringList& args);  // cmd_autotvm_vta.cpp (autotvm vta-tune)
int runFleet(const QStringList& args);         // cmd_fleet.cpp
int runVta(const QStringList& args);           // cmd_vta.cpp (vta tasks / vta run)

}  // namespace tb::cli
