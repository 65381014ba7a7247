// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file remote_network.h
/// \brief Running an exported network on a device of the fleet: the host side of the last step of
/// TVM's ARM tutorial (seeds/000): `remote = request_remote(key, host, port)`, `remote.upload(lib)`,
/// `graph_executor.GraphModule(rlib["default"](dev))`, `set_input`, `module.benchmark(dev, ...)`.
///
/// Why: a network tuned on boards must be evaluated on a board; the host cannot run code compiled for
/// `llvm -mtriple=aarch64-linux-gnu`. runOnDevice takes the directory CompiledModule::exportLibrary
/// wrote for the device's target (build with BuildOptions::load = false), asks the tracker for a
/// device of the key, uploads the three files, calls the device's graph executor
/// (rpc/network_call.h) with the inputs, and returns the device's outputs and timings.
///
/// Steps and their errors (RemoteRunError, one sentence naming the tracker, key or device):
///  1. connect to the tracker (refused connections retried for trackerRetryTimeoutS);
///  2. SUMMARY: a key with no registered device fails at once (TVM would wait forever) and the
///     message lists the keys the tracker knows;
///  3. REQUEST + handshake (TVM request_remote), waiting requestTimeoutS for a free device;
///  4. upload deploy_lib.so, deploy_graph.json, deploy_param.params (a broken connection: "upload
///     ... failed");
///  5. the call; a device that dies or drops the connection mid-run: "lost device ...", no reply
///     within timeoutS + ioTimeoutS: "no reply from ...", a device server without the function
///     (older than SessionOp::kCall, or another kind of server): "... cannot run whole networks",
///     a failure on the device (library does not load, crash, timeout): its TVM error name and
///     message.
/// Input files that cannot be read are tb::UserError.

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/rpc/network_call.h"
#include "engine/runtime/benchmark.h"

namespace tb::runtime {

/// A device or network failure while running a network remotely (the message says which step).
class RemoteRunError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct RemoteRunOptions {
    std::string trackerHost = "127.0.0.1";
    int trackerPort = 9190;
    std::string key;    ///< device key, e.g. "rasp4b-64" (required)
    std::string token;  ///< the device servers' shared secret (RpcServerOptions::token); empty: none
    int priority = 1;   ///< REQUEST priority
    double trackerRetryTimeoutS = 10;  ///< keep retrying a refused tracker connection (s)
    double requestTimeoutS = 60;       ///< wait for a free device of the key (s)
    double timeoutS = 600;             ///< the device's budget for load + first run + timing (s)
    double ioTimeoutS = 60;            ///< each upload, and the reply beyond timeoutS (s)
    // TVM module.benchmark(dev, repeat, number, min_repeat_ms)
    int repeat = 3;
    int number = 1;
    double minRepeatMs = 0;  ///< rounded to whole milliseconds on the wire
    /// Graph nodes whose values after the first run come back too (NetworkRunRequest::debugNodes).
    std::vector<int> debugNodes;
    /// Receives one line per step ("Request a device...", "Upload...", ...). May be empty.
    std::function<void(const std::string&)> progress;
};

struct RemoteRunResult {
    std::string server;     ///< "host:port" of the device's data plane
    std::string serverKey;  ///< its greeting, e.g. "server:rasp4b-64"
    std::vector<rpc::NamedTensor> outputs;  ///< of the first run, in the graph's output order
    std::vector<rpc::NamedTensor> debugOutputs;  ///< options.debugNodes' values, in order
    BenchmarkResult bench;                  ///< the device's per-repeat means (seconds)
    long long uploadBytes = 0;              ///< the three files together
    double uploadSeconds = 0;
    double loadSeconds = 0;      ///< on the device: dlopen + graph + params
    double firstRunSeconds = 0;  ///< on the device: the first run
    int deviceThreads = 0;       ///< the device's kernel thread pool
};

/// Runs the export in `exportDir` on a device of options.key with `inputs` (graph input names, see
/// the file comment for the steps and errors). Throws tb::UserError for an empty key or repeat /
/// number < 1, RemoteRunError for a tracker, device or network failure.
RemoteRunResult runOnDevice(const std::string& exportDir, const std::vector<rpc::NamedTensor>& inputs,
                            const RemoteRunOptions& options);

}  // namespace tb::runtime
