// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file test_cli_util.h
/// \brief Helpers shared by the tests that drive tunebench-cli against a tracker (header only;
/// the test target defines TB_CLI_PATH and links tb::rpc): running the CLI, and counting the free
/// servers of a key.

#include <QProcess>
#include <QStringList>

#include <string>

#include "engine/rpc/tracker_client.h"

#ifndef TB_CLI_PATH
#error "test_cli_util.h needs TB_CLI_PATH (the tunebench-cli executable)"
#endif

namespace tb::test {

struct CliResult {
    int exitCode = -1;  ///< -1 when it crashed or did not finish
    QString out, err;
};

/// Runs tunebench-cli with `args`, waiting at most `timeoutMs` (then kills it: exitCode -1 and
/// err says so).
inline CliResult runCli(const QStringList& args, int timeoutMs) {
    QProcess p;
    p.start(QStringLiteral(TB_CLI_PATH), args);
    CliResult r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(5000);
        r.err = QStringLiteral("tunebench-cli did not finish in time");
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

/// The free servers of `key` at the tracker on 127.0.0.1:trackerPort (0 for an unknown key, -1
/// when the tracker does not answer).
inline int freeServers(int trackerPort, const std::string& key) {
    try {
        rpc::ConnectOptions co;
        co.retryTimeoutMs = 0;
        const auto s = rpc::TrackerSession::connect("127.0.0.1", trackerPort, co).summary();
        const auto* q = s.queue(key);
        return q ? int(q->free) : 0;
    } catch (const rpc::RpcError&) {
        return -1;
    }
}

}  // namespace tb::test
