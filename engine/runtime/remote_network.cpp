// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/remote_network.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/measure/measure.h"
#include "engine/rpc/rpc_session.h"
#include "engine/rpc/tracker_client.h"
#include "engine/runtime/deployed_network.h"
#include "engine/support/error.h"

namespace tb::runtime {

namespace {

int toMs(double seconds) { return int(std::lround(std::min(seconds, 2.0e6) * 1000.0)); }

std::string megabytes(size_t bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f MB", double(bytes) / 1e6);
    return b;
}

// "rasp4b-64 (2), local (1)" from the servers a SUMMARY lists, or "none".
std::string keysListed(const rpc::TrackerSummary& s) {
    std::map<std::string, int> count;
    for (const auto& srv : s.servers) {
        const std::string k = srv.key.rfind("server:", 0) == 0 ? srv.key.substr(7) : srv.key;
        ++count[k];
    }
    std::string out;
    for (const auto& [k, n] : count) out += (out.empty() ? "" : ", ") + k + " (" + std::to_string(n) + ")";
    return out.empty() ? "none" : out;
}

}  // namespace

RemoteRunResult runOnDevice(const std::string& exportDir, const std::vector<rpc::NamedTensor>& inputs,
                            const RemoteRunOptions& o) {
    TB_USER_CHECK(!o.key.empty()) << "running on a device needs its key (--key, e.g. rasp4b-64)";
    TB_USER_CHECK(o.repeat >= 1 && o.number >= 1) << "repeat and number must be >= 1";
    auto say = [&](const std::string& line) {
        if (o.progress) o.progress(line);
    };
    const std::string tracker = o.trackerHost + ":" + std::to_string(o.trackerPort);
    const char* fileNames[] = {"deploy_lib.so", "deploy_graph.json", "deploy_param.params"};
    std::vector<std::string> files;
    for (const char* f : fileNames) files.push_back(readFileBytes(exportDir + "/" + f));

    // 1-2. The tracker, and a device of the key registered with it.
    rpc::ConnectOptions co;
    co.retryTimeoutMs = toMs(o.trackerRetryTimeoutS);
    co.retryPeriodMs = 500;
    co.ioTimeoutMs = toMs(o.ioTimeoutS);
    rpc::TrackerSession ts;
    rpc::TrackerSummary summary;
    try {
        ts = rpc::TrackerSession::connect(o.trackerHost, o.trackerPort, co);
        summary = ts.summary();
    } catch (const rpc::RpcError& e) {
        throw RemoteRunError("cannot reach the RPC tracker " + tracker + ": " + e.what());
    }
    int registered = 0;
    for (const auto& srv : summary.servers) registered += srv.key == "server:" + o.key;
    if (registered == 0)
        throw RemoteRunError("the tracker " + tracker + " has no device of key '" + o.key +
                             "' (registered devices by key: " + keysListed(summary) +
                             "); start one, e.g. scripts/arm-board --tracker " + tracker + " --key " + o.key);

    // 3. TVM request_remote.
    say("Request a device of key '" + o.key + "' from the tracker " + tracker + " (" + std::to_string(registered) +
        " registered)...");
    rpc::SessionOptions so;
    so.token = o.token;
    so.ioTimeoutMs = toMs(o.ioTimeoutS);
    rpc::RpcSession session;
    rpc::DeviceAssignment assigned;
    try {
        session = rpc::requestSession(ts, o.key, o.priority, so, /*maxRetry=*/3, toMs(o.requestTimeoutS), &assigned);
    } catch (const rpc::RpcError& e) {
        if (e.kind() == rpc::RpcError::Kind::kTimeout)
            throw RemoteRunError("no device of key '" + o.key + "' became free within " +
                                 std::to_string(int(o.requestTimeoutS)) + " s (" + std::to_string(registered) +
                                 " registered with " + tracker + ", all busy)");
        throw RemoteRunError("cannot get a device of key '" + o.key + "' from " + tracker + ": " + e.what());
    }
    ts.close();
    RemoteRunResult res;
    res.serverKey = session.serverKey();
    res.server = assigned.host + ":" + std::to_string(assigned.port);
    const std::string device = "device " + res.server + " (" + res.serverKey + ")";
    say("Connected to " + device + ".");

    // 4. remote.upload(...)
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < files.size(); ++i) {
        say(std::string("Upload ") + fileNames[i] + " (" + megabytes(files[i].size()) + ")...");
        try {
            session.upload(fileNames[i], files[i]);
        } catch (const rpc::RpcError& e) {
            throw RemoteRunError(std::string("upload of ") + fileNames[i] + " (" + megabytes(files[i].size()) + ") to " +
                                 device + " failed: " + e.what());
        }
        res.uploadBytes += (long long)files[i].size();
    }
    res.uploadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // 5. graph_executor + module.benchmark on the device.
    rpc::NetworkRunRequest req;
    req.lib = fileNames[0];
    req.graph = fileNames[1];
    req.params = fileNames[2];
    req.inputs = inputs;
    req.repeat = o.repeat;
    req.number = o.number;
    req.minRepeatMs = int(std::lround(o.minRepeatMs));
    req.timeoutSec = o.timeoutS;
    req.debugNodes = o.debugNodes;
    say("Evaluate inference time cost on " + device + "...");
    rpc::NetworkRunReply rep;
    try {
        rep = rpc::networkRunReplyFromCall(session.call(rpc::toCall(req), o.timeoutS));
    } catch (const rpc::RpcError& e) {
        const std::string what = e.what();
        if (e.kind() == rpc::RpcError::Kind::kRemote && what.find("unknown session op") != std::string::npos)
            throw RemoteRunError(device + " cannot run whole networks (its server predates the '" +
                                 rpc::kGraphBenchmarkFunction + "' call; rebuild tunebench-device-server): " + what);
        if (e.kind() == rpc::RpcError::Kind::kTimeout)
            throw RemoteRunError("no reply from " + device + " within " + std::to_string(int(o.timeoutS + o.ioTimeoutS)) +
                                 " s while running the network");
        if (e.kind() == rpc::RpcError::Kind::kProtocol || e.kind() == rpc::RpcError::Kind::kRemote)
            throw RemoteRunError(device + " refused the network run: " + what);
        throw RemoteRunError("lost " + device + " while running the network (it died or the connection broke): " + what);
    }
    session.close();
    if (rep.errorNo != rpc::kErrorNoNone) {
        const int e = rep.errorNo;
        const char* name = e >= 0 && e <= int(measure::MeasureErrorNo::UnknownError)
                               ? measure::errorName(measure::MeasureErrorNo(e))
                               : "UNKNOWN_ERROR";
        throw RemoteRunError("the network failed on " + device + ": " + name + ": " + rep.errorMsg);
    }
    if (rep.costs.size() != size_t(o.repeat))
        throw RemoteRunError(device + " returned " + std::to_string(rep.costs.size()) + " timings for repeat " +
                             std::to_string(o.repeat));
    for (double c : rep.costs)
        if (!std::isfinite(c) || c < 0) throw RemoteRunError(device + " returned an invalid timing");
    if (rep.debugOutputs.size() != o.debugNodes.size())
        throw RemoteRunError(device + " returned " + std::to_string(rep.debugOutputs.size()) + " debug outputs for " +
                             std::to_string(o.debugNodes.size()) + " nodes");
    res.outputs = std::move(rep.outputs);
    res.debugOutputs = std::move(rep.debugOutputs);
    res.bench = BenchmarkResult::fromResults(rep.costs);
    res.loadSeconds = rep.loadSec;
    res.firstRunSeconds = rep.firstRunSec;
    res.deviceThreads = rep.threads;
    return res;
}

}  // namespace tb::runtime
