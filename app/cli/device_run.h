// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by `compile` and `run`: running the compiled network on a device of the fleet instead of
// this machine (`--runner rpc --tracker H:P --key K`), the host side of TVM's ARM tutorial's last
// step (engine/runtime/remote_network.h). The options, and the printing form of
// runtime::runAndCheckOnDevice (engine/runtime/network_eval.h, shared with the window).

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>

#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/runtime/graph_runtime.h"
#include "engine/runtime/network_eval.h"
#include "engine/runtime/remote_network.h"
#include "engine/te/interpreter.h"

namespace tb::cli {

struct DeviceRunOptions {
    QCommandLineOption runner{QStringLiteral("runner"),
                              QStringLiteral("Where the network runs: local (this machine, default) or rpc (a device of "
                                             "--key from --tracker; the network is cross-compiled for --target)."),
                              QStringLiteral("local|rpc"), QStringLiteral("local")};
    QCommandLineOption tracker{QStringLiteral("tracker"), QStringLiteral("RPC tracker HOST:PORT (--runner rpc)."),
                               QStringLiteral("HOST:PORT")};
    QCommandLineOption key{QStringLiteral("key"), QStringLiteral("Device key, e.g. rasp4b-64 (--runner rpc)."),
                           QStringLiteral("KEY")};
    QCommandLineOption token{QStringLiteral("token"), QStringLiteral("The device servers' shared secret (--runner rpc)."),
                             QStringLiteral("T")};
    QCommandLineOption timeout{QStringLiteral("timeout"),
                               QStringLiteral("The device's budget for loading, running and timing the network in "
                                              "seconds (--runner rpc, default 300)."),
                               QStringLiteral("S"), QStringLiteral("300")};
    QCommandLineOption requestTimeout{QStringLiteral("request-timeout"),
                                      QStringLiteral("Wait this long for a free device in seconds (--runner rpc, default 60)."),
                                      QStringLiteral("S"), QStringLiteral("60")};
    QList<QCommandLineOption> options() const { return {runner, tracker, key, token, timeout, requestTimeout}; }

    /// True for --runner rpc, with `ro`'s tracker, key, token and timeouts filled in; false for
    /// local. Throws tb::UserError for an unknown runner, --runner rpc without --tracker and --key,
    /// a malformed value, or --tracker / --key / --token without --runner rpc.
    bool remote(const QCommandLineParser& p, runtime::RemoteRunOptions* ro) const;
};

/// runtime::runAndCheckOnDevice (engine/runtime/network_eval.h) with its lines on stdout and a
/// device or network failure printed to stderr as `error: ...` (DeviceRun::ran false).
runtime::DeviceRun runAndCheckOnDevice(const graph::Graph& g, const runtime::ExecGraph& eg, const std::string& dir,
                                       const std::vector<te::Buffer>& inputs, const runtime::RemoteRunOptions& ro,
                                       bool check, double tolerance);

}  // namespace tb::cli
