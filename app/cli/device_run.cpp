// SPDX-License-Identifier: Apache-2.0
#include "app/cli/device_run.h"

#include <cstdio>
#include <tuple>

#include "engine/support/error.h"
#include "engine/support/process.h"

namespace tb::cli {

namespace {

double seconds(const QCommandLineParser& p, const QCommandLineOption& o) {
    bool ok = false;
    const double v = p.value(o).toDouble(&ok);
    TB_USER_CHECK(ok && v > 0) << "--" << o.names().first().toStdString() << " must be a number of seconds > 0, got '"
                               << p.value(o).toStdString() << "'";
    return v;
}

}  // namespace

bool DeviceRunOptions::remote(const QCommandLineParser& p, runtime::RemoteRunOptions* ro) const {
    const std::string kind = p.value(runner).toStdString();
    TB_USER_CHECK(kind == "local" || kind == "rpc") << "--runner must be local or rpc, got '" << kind << "'";
    if (kind == "local") {
        for (const auto* o : {&tracker, &key, &token})
            TB_USER_CHECK(!p.isSet(*o)) << "--" << o->names().first().toStdString() << " needs --runner rpc";
        return false;
    }
    TB_USER_CHECK(p.isSet(tracker) && p.isSet(key)) << "--runner rpc needs --tracker HOST:PORT and --key KEY";
    std::tie(ro->trackerHost, ro->trackerPort) = parseHostPort(p.value(tracker).toStdString(), "--tracker");
    ro->key = p.value(key).toStdString();
    ro->token = p.value(token).toStdString();
    ro->timeoutS = seconds(p, timeout);
    ro->requestTimeoutS = seconds(p, requestTimeout);
    return true;
}

runtime::DeviceRun runAndCheckOnDevice(const graph::Graph& g, const runtime::ExecGraph& eg, const std::string& dir,
                                       const std::vector<te::Buffer>& inputs, const runtime::RemoteRunOptions& ro,
                                       bool check, double tolerance) {
    runtime::DeviceRun run = runtime::runAndCheckOnDevice(g, eg, dir, inputs, ro, check, tolerance,
                                                          [](const std::string& line) {
                                                              std::fprintf(stdout, "%s\n", line.c_str());
                                                              std::fflush(stdout);
                                                          });
    if (!run.ran) std::fprintf(stderr, "error: %s\n", run.error.c_str());
    return run;
}

}  // namespace tb::cli
