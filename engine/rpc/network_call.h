// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file network_call.h
/// \brief The device function that runs a whole compiled network, `tunebench.graph_executor.benchmark`:
/// what travels between the host (`tunebench-cli compile --runner rpc --bench`) and a device server.
///
/// Why: TVM's ARM tutorial ends by evaluating the tuned network on the board (`remote.upload(lib)`,
/// `graph_executor.GraphModule(rlib["default"](dev))`, `set_input`, `module.benchmark(dev, repeat=3,
/// min_repeat_ms=500)`). TVM does that through its general remote runtime; our data plane is the
/// smaller session protocol (session_protocol.h), so the same step is one named call (SessionOp::kCall,
/// the way TVM's RPC names packed functions): the host uploads the export of
/// CompiledModule::exportLibrary (deploy_lib.so linked for the device, deploy_graph.json,
/// deploy_param.params) and calls this function with the inputs; the device loads the library with
/// dlopen, runs the graph executor (engine/runtime/deployed_network.h: no compiler, no LLVM there)
/// once for the outputs, then times it with TVM's time evaluator (`repeat` measurements of `number`
/// runs each, grown to at least `min_repeat_ms`, one warm-up run first: TVM's module.benchmark) and
/// replies with the outputs and the per-repeat means.
///
/// Wire form (a kCall message): header
/// `{"function": "tunebench.graph_executor.benchmark", "lib": NAME, "graph": NAME, "params": NAME,
///   "inputs": [{"name", "shape", "dtype": "float32"}...], "repeat", "number", "min_repeat_ms", "timeout",
///   "debug_nodes": [node ids]}`
/// (NAMEs are uploads of the same session), blob = the inputs' float32 values one after the other
/// (little-endian, as every supported host and board). Reply (kOk): `{"error_no", "error_msg",
/// "outputs": [{"name", "shape", "dtype"}...], "debug_outputs": [...], "costs": [seconds per run, one
/// per repeat], "load_sec", "first_run_sec", "threads", "elapsed"}`, blob = the outputs' float32
/// values, then the debug outputs'.
/// error_no is TVM's MeasureErrorNO: COMPILE_DEVICE (3) when the files cannot be loaded,
/// RUNTIME_DEVICE (4) when the run crashed, RUN_TIMEOUT (7) when it outlasted `timeout`.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/rpc/measure_executor.h"

namespace tb::rpc {

/// The function's name, as the device server registers it.
inline constexpr const char* kGraphBenchmarkFunction = "tunebench.graph_executor.benchmark";

/// A named float32 tensor.
struct NamedTensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<float> data;  ///< row-major, product(shape) values
};

struct NetworkRunRequest {
    std::string lib;     ///< upload name of the shared library (deploy_lib.so)
    std::string graph;   ///< upload name of the graph JSON (deploy_graph.json)
    std::string params;  ///< upload name of the param dictionary (deploy_param.params)
    /// Inputs by graph input name (a name the graph lacks is an error on the device).
    std::vector<NamedTensor> inputs;
    int repeat = 3;          ///< measurements (TVM module.benchmark repeat)
    int number = 1;          ///< runs per measurement, grown to reach minRepeatMs
    int minRepeatMs = 0;     ///< a measurement lasts at least this long (milliseconds)
    double timeoutSec = 600; ///< the device's budget for load + first run + timing (seconds)
    /// Graph node ids (graph JSON order) whose values after the first run come back too, as TVM's
    /// debug executor `debug_get_output(node)`: e.g. the logits a final softmax flattens.
    std::vector<int> debugNodes;
};

struct NetworkRunReply {
    int errorNo = kErrorNoNone;  ///< TVM MeasureErrorNO (file comment)
    std::string errorMsg;
    std::vector<NamedTensor> outputs;  ///< of the first run, in the graph's output order
    std::vector<NamedTensor> debugOutputs;  ///< the request's debugNodes after the first run, in order
    std::vector<double> costs;         ///< seconds per run, one per repeat
    double loadSec = 0;      ///< dlopen + graph + params on the device (seconds)
    double firstRunSec = 0;  ///< the first (checked) run (seconds)
    int threads = 0;         ///< threads of the device's kernel thread pool
    double elapsedSec = 0;   ///< wall time the server spent on the call (seconds)
};

/// The kCall request for `r` (header + input blob).
CallRequest toCall(const NetworkRunRequest& r);
/// Parses a kCall request. Throws RpcError(kProtocol) naming the bad field: a missing file name,
/// repeat/number < 1, min_repeat_ms < 0, timeout <= 0, a negative dimension or debug node id, a
/// dtype other than float32, or a blob whose size is not the inputs' total.
NetworkRunRequest networkRunRequestFromCall(const CallRequest& call);
/// The reply for `r` (result JSON + output blob).
CallReply toCallReply(const NetworkRunReply& r);
/// Parses a reply. Throws RpcError(kProtocol) for a malformed body or a blob whose size is not the
/// outputs' total.
NetworkRunReply networkRunReplyFromCall(const CallReply& reply);

}  // namespace tb::rpc
