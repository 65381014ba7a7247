// SPDX-License-Identifier: Apache-2.0
#include "engine/rpc/network_call.h"

#include <cstring>

#include "engine/rpc/session_protocol.h"

namespace tb::rpc {

namespace {

[[noreturn]] void bad(const std::string& what) {
    throw RpcError(RpcError::Kind::kProtocol, std::string(kGraphBenchmarkFunction) + ": " + what);
}

// Header entries of `tensors`, their values appended to `blob`.
Json describe(const std::vector<NamedTensor>& tensors, std::string* blob) {
    Json list = Json::array();
    for (const NamedTensor& t : tensors) {
        Json e = Json::object();
        e["name"] = t.name;
        e["shape"] = t.shape;
        e["dtype"] = "float32";
        list.push_back(std::move(e));
        blob->append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
    }
    return list;
}

// The tensors a header list describes, their values taken from `blob` from *pos on (advanced).
std::vector<NamedTensor> tensorsOf(const Json& list, const std::string& blob, size_t* at, const char* what) {
    if (!list.is_array()) bad(std::string(what) + " must be a list");
    std::vector<NamedTensor> out;
    size_t& pos = *at;
    for (const Json& e : list) {
        if (!e.is_object()) bad(std::string("an entry of ") + what + " is not a dict");
        NamedTensor t;
        try {
            t.name = e.value("name", std::string());
            t.shape = e.value("shape", std::vector<std::int64_t>{});
            if (e.value("dtype", std::string("float32")) != "float32") bad(std::string(what) + ": only float32 tensors");
        } catch (const RpcError&) {
            throw;
        } catch (const std::exception& ex) {
            bad(std::string(what) + ": " + ex.what());
        }
        const std::uint64_t left = (blob.size() - pos) / sizeof(float);
        std::uint64_t n = 1;
        for (std::int64_t d : t.shape) {
            if (d < 0) bad(std::string(what) + ": negative dimension");
            if (d != 0 && n > left / std::uint64_t(d)) bad(std::string(what) + ": more values than the blob holds");
            n *= std::uint64_t(d);
        }
        if (n > left) bad(std::string(what) + ": more values than the blob holds");
        t.data.resize(size_t(n));
        if (n > 0) std::memcpy(t.data.data(), blob.data() + pos, size_t(n) * sizeof(float));  // data() of empty: null
        pos += size_t(n) * sizeof(float);
        out.push_back(std::move(t));
    }
    return out;
}

void checkConsumed(const std::string& blob, size_t pos, const char* what) {
    if (pos != blob.size()) bad(std::string("the blob holds more bytes than the ") + what + " describe");
}

template <class T>
T field(const Json& j, const char* name, T dflt) {
    return jsonField<T>(j, name, std::move(dflt), kGraphBenchmarkFunction);
}

}  // namespace

CallRequest toCall(const NetworkRunRequest& r) {
    CallRequest c;
    c.function = kGraphBenchmarkFunction;
    c.args["function"] = c.function;
    c.args["lib"] = r.lib;
    c.args["graph"] = r.graph;
    c.args["params"] = r.params;
    c.args["inputs"] = describe(r.inputs, &c.blob);
    c.args["repeat"] = r.repeat;
    c.args["number"] = r.number;
    c.args["min_repeat_ms"] = r.minRepeatMs;
    c.args["timeout"] = r.timeoutSec;
    c.args["debug_nodes"] = r.debugNodes;
    return c;
}

NetworkRunRequest networkRunRequestFromCall(const CallRequest& call) {
    const Json& j = call.args;
    if (!j.is_object()) bad("the arguments are not a dict");
    NetworkRunRequest r;
    r.lib = field<std::string>(j, "lib", "");
    r.graph = field<std::string>(j, "graph", "");
    r.params = field<std::string>(j, "params", "");
    if (r.lib.empty() || r.graph.empty() || r.params.empty()) bad("'lib', 'graph' and 'params' name the uploaded files");
    r.repeat = field<int>(j, "repeat", r.repeat);
    r.number = field<int>(j, "number", r.number);
    r.minRepeatMs = field<int>(j, "min_repeat_ms", r.minRepeatMs);
    r.timeoutSec = field<double>(j, "timeout", r.timeoutSec);
    if (r.repeat < 1 || r.number < 1) bad("repeat and number must be >= 1");
    if (r.minRepeatMs < 0) bad("min_repeat_ms must be >= 0");
    if (!(r.timeoutSec > 0)) bad("timeout must be > 0");
    r.debugNodes = field<std::vector<int>>(j, "debug_nodes", {});
    for (int n : r.debugNodes)
        if (n < 0) bad("negative debug node id");
    size_t pos = 0;
    r.inputs = tensorsOf(field<Json>(j, "inputs", Json::array()), call.blob, &pos, "inputs");
    checkConsumed(call.blob, pos, "inputs");
    return r;
}

CallReply toCallReply(const NetworkRunReply& r) {
    CallReply c;
    c.result["error_no"] = r.errorNo;
    c.result["error_msg"] = r.errorMsg;
    c.result["outputs"] = describe(r.outputs, &c.blob);
    c.result["debug_outputs"] = describe(r.debugOutputs, &c.blob);
    c.result["costs"] = r.costs;
    c.result["load_sec"] = r.loadSec;
    c.result["first_run_sec"] = r.firstRunSec;
    c.result["threads"] = r.threads;
    return c;
}

NetworkRunReply networkRunReplyFromCall(const CallReply& reply) {
    const Json& j = reply.result;
    if (!j.is_object()) bad("the reply is not a dict");
    NetworkRunReply r;
    r.errorNo = field<int>(j, "error_no", 0);
    r.errorMsg = field<std::string>(j, "error_msg", "");
    r.costs = field<std::vector<double>>(j, "costs", {});
    r.loadSec = field<double>(j, "load_sec", 0.0);
    r.firstRunSec = field<double>(j, "first_run_sec", 0.0);
    r.threads = field<int>(j, "threads", 0);
    r.elapsedSec = field<double>(j, "elapsed", 0.0);
    size_t pos = 0;
    r.outputs = tensorsOf(field<Json>(j, "outputs", Json::array()), reply.blob, &pos, "outputs");
    r.debugOutputs = tensorsOf(field<Json>(j, "debug_outputs", Json::array()), reply.blob, &pos, "debug outputs");
    checkConsumed(reply.blob, pos, "outputs");
    return r;
}

}  // namespace tb::rpc
