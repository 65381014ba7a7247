// SPDX-License-Identifier: Apache-2.0
#include "engine/rpc/session_protocol.h"

#include "engine/rpc/measure_executor.h"

namespace tb::rpc {

void writeSessionMessage(int fd, SessionOp op, const Json& header, std::string_view blob, Deadline deadline, int wakeFd) {
    const std::string h = pyDumps(header);
    std::string out;
    out.reserve(16 + h.size());
    appendLe64(out, 8 + h.size() + blob.size());
    appendLe32(out, static_cast<std::int32_t>(op));
    appendLe32(out, static_cast<std::int32_t>(h.size()));
    out += h;
    sendAll(fd, out.data(), out.size(), deadline, wakeFd);
    if (!blob.empty()) sendAll(fd, blob.data(), blob.size(), deadline, wakeFd);
}

SessionMessage readSessionMessage(int fd, std::uint64_t maxBytes, Deadline deadline, int wakeFd) {
    char pre[16];
    recvAll(fd, pre, 8, deadline, wakeFd);
    const std::uint64_t n = readLe64(pre);
    if (n < 8 || n > maxBytes)
        throw RpcError(RpcError::Kind::kProtocol,
                       "session message of " + std::to_string(n) + " bytes (allowed 8.." + std::to_string(maxBytes) + ")");
    recvAll(fd, pre + 8, 8, deadline, wakeFd);
    SessionMessage m;
    m.op = static_cast<SessionOp>(readLe32(pre + 8));
    const std::int32_t h = readLe32(pre + 12);
    if (h < 0 || std::uint64_t(h) > n - 8)
        throw RpcError(RpcError::Kind::kProtocol, "session header length " + std::to_string(h) + " out of range");
    std::string header(size_t(h), '\0');
    recvAll(fd, header.data(), header.size(), deadline, wakeFd);
    m.blob.resize(size_t(n - 8 - std::uint64_t(h)));
    if (!m.blob.empty()) recvAll(fd, m.blob.data(), m.blob.size(), deadline, wakeFd);
    try {
        m.header = header.empty() ? Json::object() : Json::parse(header);
    } catch (const std::exception& e) {
        throw RpcError(RpcError::Kind::kProtocol, std::string("session header is not JSON: ") + e.what());
    }
    return m;
}

std::string clientHello(const std::string& matchKey, int sessionTimeoutSec, const std::string& token) {
    std::string s = "client:" + matchKey;
    if (sessionTimeoutSec > 0) s += " -timeout=" + std::to_string(sessionTimeoutSec);
    if (!token.empty()) s += " -token=" + token;
    return s;
}

CallReply callError(int errorNo, const std::string& message) {
    CallReply r;
    r.result["error_no"] = errorNo;
    r.result["error_msg"] = message;
    return r;
}

CallReply MeasureExecutor::call(const CallRequest& request) {
    return callError(kErrorNoCompileDevice, "this server has no function '" + request.function + "'");
}

// ---- RunRequest / RunReply JSON ------------------------------------------------------------

namespace {

[[noreturn]] void bad(const std::string& what) { throw RpcError(RpcError::Kind::kProtocol, "run request: " + what); }

template <class T>
T field(const Json& j, const char* name, T dflt) {
    return jsonField<T>(j, name, std::move(dflt), "run request");
}

}  // namespace

int ArgSpec::elementBytes() const {
    if (dtype == "float32" || dtype == "int32" || dtype == "uint32") return 4;
    if (dtype == "float64" || dtype == "int64" || dtype == "uint64") return 8;
    if (dtype == "float16" || dtype == "int16" || dtype == "uint16" || dtype == "bfloat16") return 2;
    if (dtype == "int8" || dtype == "uint8" || dtype == "bool") return 1;
    return 0;
}

std::int64_t ArgSpec::floatSlots() const {
    std::int64_t elems = 1;
    for (std::int64_t d : shape) elems *= d;
    return (elems * elementBytes() + 3) / 4;
}

Json toJson(const RunRequest& r) {
    Json args = Json::array();
    for (const auto& a : r.args) {
        Json e = Json::object();
        e["shape"] = a.shape;
        e["dtype"] = a.dtype;
        args.push_back(std::move(e));
    }
    Json j = Json::object();
    j["module"] = r.module;
    j["function"] = r.function;
    j["number"] = r.number;
    j["repeat"] = r.repeat;
    j["min_repeat_ms"] = r.minRepeatMs;
    j["enable_cpu_cache_flush"] = r.enableCpuCacheFlush;
    j["args"] = std::move(args);
    j["timeout"] = r.timeoutSec;
    return j;
}

RunRequest runRequestFromJson(const Json& j) {
    if (!j.is_object()) bad("not a dict");
    RunRequest r;
    r.module = field<std::string>(j, "module", "");
    r.function = field<std::string>(j, "function", "");
    r.number = field<int>(j, "number", r.number);
    r.repeat = field<int>(j, "repeat", r.repeat);
    r.minRepeatMs = field<int>(j, "min_repeat_ms", r.minRepeatMs);
    r.enableCpuCacheFlush = field<bool>(j, "enable_cpu_cache_flush", false);
    r.timeoutSec = field<double>(j, "timeout", r.timeoutSec);
    if (r.number < 1) bad("number must be >= 1");
    if (r.repeat < 1) bad("repeat must be >= 1");
    if (r.minRepeatMs < 0) bad("min_repeat_ms must be >= 0");
    if (!(r.timeoutSec > 0)) bad("timeout must be > 0");
    const Json args = field<Json>(j, "args", Json::array());
    if (!args.is_array()) bad("args must be a list");
    if (args.size() > 64) bad("more than 64 arguments");
    for (const auto& a : args) {
        if (!a.is_object()) bad("an argument is not a dict");
        ArgSpec s;
        s.shape = field<std::vector<std::int64_t>>(a, "shape", {});
        s.dtype = field<std::string>(a, "dtype", s.dtype);
        double elems = 1;
        for (auto d : s.shape) {
            if (d < 0) bad("negative dimension");
            elems *= double(d);
        }
        if (elems > 4294967296.0) bad("an argument has more than 2^32 elements");
        r.args.push_back(std::move(s));
    }
    return r;
}

Json toJson(const RunReply& r) {
    Json j = Json::object();
    j["error_no"] = r.errorNo;
    j["error_msg"] = r.errorMsg;
    j["costs"] = r.costs;
    j["elapsed"] = r.elapsedSec;
    if (!r.deviceCounters.empty()) j["device_counters"] = r.deviceCounters;
    return j;
}

RunReply runReplyFromJson(const Json& j) {
    if (!j.is_object()) throw RpcError(RpcError::Kind::kProtocol, "run reply is not a dict");
    RunReply r;
    // jsonField: an integer field takes JSON integers only (fuzz_session: error_no 4.4e26 was cast
    // to int by nlohmann's value(), undefined behaviour).
    r.errorNo = jsonField<int>(j, "error_no", 0, "run reply");
    r.errorMsg = jsonField<std::string>(j, "error_msg", std::string(), "run reply");
    r.costs = jsonField<std::vector<double>>(j, "costs", {}, "run reply");
    r.elapsedSec = jsonField<double>(j, "elapsed", 0.0, "run reply");
    if (auto it = j.find("device_counters"); it != j.end()) {
        if (!it->is_object())
            throw RpcError(RpcError::Kind::kProtocol, "run reply: field 'device_counters' has the wrong type");
        for (const auto& [name, v] : it->items()) {
            if (!v.is_number_unsigned())  // integers only: see jsonField
                throw RpcError(RpcError::Kind::kProtocol, "run reply: device counter '" + name + "' is not a count");
            r.deviceCounters[name] = v.get<std::uint64_t>();
        }
    }
    // TVM's MeasureErrorNo runs from NO_ERROR (0) to UNKNOWN_ERROR (8); readers index names by it.
    if (r.errorNo < 0 || r.errorNo > 8)
        throw RpcError(RpcError::Kind::kProtocol, "run reply: error_no " + std::to_string(r.errorNo) + " is not 0..8");
    return r;
}

}  // namespace tb::rpc
