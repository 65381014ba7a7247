// SPDX-License-Identifier: Apache-2.0
#pragma once
// The subcommands of tunebench-cli. Each lives in its own cmd_<name>.cpp, parses its own options
// with QCommandLineParser (args[0] is "tunebench-cli <name>") and returns the process exit code:
// 0 success, 1 failure of the job, 2 bad usage or bad input (the message names the problem).

#include <QStringList>

namespace tb::cli {

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const QStringList& args);
};

// One declaration per subcommand; add the entry to kCommands in main.cpp.

}  // namespace tb::cli
