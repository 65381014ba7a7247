// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file measure_executor.h
/// \brief What an RPC server does with a measurement request: the MeasureExecutor interface, and
/// the value types that travel between an RPC client (RPCRunner) and the server.
///
/// TVM's RPC server exposes a general remote runtime (upload, load_module, time_evaluator). We only
/// need the measurement part of it, so our data plane carries two requests: upload a blob (an
/// object file or shared library built by the Builder) and run it with TVM's timer parameters
/// (REFERENCE-TVM §4.1-4.2). The server does not load code itself: it hands each RunRequest to a
/// MeasureExecutor. The real one, the sandboxed runner of engine/measure, is wired in by the
/// caller (so engine/rpc does not depend on engine/measure); tests use a fake.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/rpc/protocol.h"

namespace tb::rpc {

/// TVM's MeasureErrorNO values (REFERENCE-TVM §4.3) that the RPC layer itself produces; the full
/// enum lives in engine/measure.
inline constexpr int kErrorNoNone = 0;
inline constexpr int kErrorNoCompileDevice = 3;  ///< module could not be loaded / resolved
inline constexpr int kErrorNoRuntimeDevice = 4;  ///< the run failed on the device
inline constexpr int kErrorNoUnknown = 8;        ///< the executor threw

/// One argument tensor of the function to time: shape and TVM dtype string ("float32", "int8"...).
struct ArgSpec {
    std::vector<std::int64_t> shape;
    std::string dtype = "float32";

    /// Bytes of one element of `dtype`: 4 for float32/int32/uint32, 8 for float64/int64/uint64, 2
    /// for float16/bfloat16/int16/uint16, 1 for int8/uint8/bool; 0 for any other dtype (executors
    /// report it as an error).
    int elementBytes() const;
    /// The float32 slots an executor allocates for this argument, ceil(elements x elementBytes() /
    /// 4): kernels address their buffers as float32 (codegen/kernel_abi.h).
    std::int64_t floatSlots() const;
};

/// A timing request (TVM time_evaluator parameters).
struct RunRequest {
    /// Name of a blob uploaded earlier in the same session.
    std::string module;
    /// Absolute path of that blob on the server. Filled in by the server, never sent.
    std::string modulePath;
    /// Entry symbol to call; empty: the module's default entry.
    std::string function;
    int number = 3;                    ///< calls per repeat (grown to reach minRepeatMs)
    int repeat = 1;                    ///< measurements returned
    int minRepeatMs = 100;             ///< a repeat runs at least this long (milliseconds)
    bool enableCpuCacheFlush = false;  ///< flush caches before each repeat (all args but arg 0)
    std::vector<ArgSpec> args;
    double timeoutSec = 10;  ///< the executor's budget for the whole run (seconds)
};

/// The result: `repeat` per-call averages in seconds, or an error.
struct RunReply {
    int errorNo = kErrorNoNone;  ///< TVM MeasureErrorNO
    std::string errorMsg;
    std::vector<double> costs;  ///< seconds per call, one per repeat
    double elapsedSec = 0;      ///< wall time the server spent on the request (seconds)
    /// Device counters of the run ("device_counters" on the wire, omitted when empty; a TuneBench
    /// field of our own session protocol, e.g. the VTA simulator's stats()).
    std::map<std::string, std::uint64_t> deviceCounters;
};

/// A call of a device function by name (SessionOp::kCall), TuneBench's counterpart of TVM's
/// `remote.get_function(name)(args...)`: TVM's RPC calls packed functions by name, and so do we for
/// what goes beyond timing one kernel (network_call.h: run a whole network). The header is the
/// function's JSON arguments, the blob its binary payload (tensors).
struct CallRequest {
    std::string function;  ///< the function name, e.g. "tunebench.graph_executor.benchmark"
    Json args = Json::object();  ///< the request's whole JSON header ("function" included)
    std::string blob;            ///< binary payload (function-specific layout)
    /// Every blob uploaded in this session: name -> absolute path on the server. Filled in by the
    /// server, never sent; a function refers to its files by upload name.
    std::map<std::string, std::string> uploads;
};

/// The result of a call: a JSON body with at least "error_no" (TVM MeasureErrorNO, 0 = success) and
/// "error_msg", plus a binary payload (function-specific).
struct CallReply {
    Json result = Json::object();
    std::string blob;
};

/// A CallReply carrying only an error: {"error_no": errorNo, "error_msg": message}.
CallReply callError(int errorNo, const std::string& message);

/// Runs measurements on behalf of an RPC server. Called on the server's thread, one request at a
/// time; may block for the run's duration. Expected failures are returned in RunReply (errorNo);
/// an exception is reported to the client as kErrorNoUnknown with its message.
class MeasureExecutor {
public:
    virtual ~MeasureExecutor() = default;
    virtual RunReply run(const RunRequest& request) = 0;
    /// A named device function (SessionOp::kCall). Same threading and error rules as run(). The
    /// default knows no function: error_no kErrorNoCompileDevice, "... has no function '<name>'".
    virtual CallReply call(const CallRequest& request);
};

/// JSON forms used on the wire (snake_case as TVM's python names). fromJson throws RpcError
/// (kProtocol) naming the bad field: wrong types, number/repeat < 1, min_repeat_ms < 0, negative
/// dimensions, more than 2^32 elements in one argument, more than 64 arguments.
Json toJson(const RunRequest& r);
RunRequest runRequestFromJson(const Json& j);
Json toJson(const RunReply& r);
RunReply runReplyFromJson(const Json& j);

}  // namespace tb::rpc
