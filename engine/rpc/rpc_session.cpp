// SPDX-License-Identifier: Apache-2.0
#include "engine/rpc/rpc_session.h"

#include <algorithm>

#include "engine/rpc/tracker_client.h"

namespace tb::rpc {

namespace {
constexpr std::uint64_t kMaxReplyBytes = 64ull << 20;
}

RpcSession RpcSession::connect(const std::string& host, int port, const std::string& matchKey,
                               const SessionOptions& options) {
    RpcSession s;
    s.m_options = options;
    s.m_sock = connectTcp(host, port, options.connectTimeoutMs);
    const Deadline d = deadlineAfterMs(options.ioTimeoutMs);
    const std::string greeting = clientHello(matchKey, options.sessionTimeoutSec, options.token);
    std::string out;
    appendLe32(out, kRpcMagic);
    appendLe32(out, static_cast<std::int32_t>(greeting.size()));
    out += greeting;
    sendAll(s.m_sock.fd(), out.data(), out.size(), d);
    char b[4];
    recvAll(s.m_sock.fd(), b, 4, d);
    const std::int32_t code = readLe32(b);
    const std::string where = host + ":" + std::to_string(port);
    if (code == kRpcCodeMismatch)
        throw RpcError(RpcError::Kind::kRejected, where + " rejected the session (wrong match key or token)");
    if (code != kRpcCodeSuccess) throw RpcError(RpcError::Kind::kProtocol, where + " is not an RPC server");
    recvAll(s.m_sock.fd(), b, 4, d);
    const std::int32_t len = readLe32(b);
    if (len < 0 || len > 4096) throw RpcError(RpcError::Kind::kProtocol, where + " sent an invalid server key length");
    s.m_serverKey.assign(size_t(len), '\0');
    recvAll(s.m_sock.fd(), s.m_serverKey.data(), s.m_serverKey.size(), d);
    return s;
}

SessionMessage RpcSession::roundTrip(SessionOp op, const Json& header, std::string_view blob, Deadline deadline) {
    if (!m_sock.valid()) throw RpcError(RpcError::Kind::kClosed, "the RPC session is closed");
    try {
        writeSessionMessage(m_sock.fd(), op, header, blob, deadline);
        SessionMessage m = readSessionMessage(m_sock.fd(), kMaxReplyBytes, deadline);
        if (m.op == SessionOp::kError) {
            m_sock.close();
            const auto it = m.header.find("error");
            throw RpcError(RpcError::Kind::kRemote,
                           "RPC server error: " + (it != m.header.end() && it->is_string() ? it->get<std::string>() : pyDumps(m.header)));
        }
        if (m.op != SessionOp::kOk) throw RpcError(RpcError::Kind::kProtocol, "unexpected session reply op");
        return m;
    } catch (const RpcError&) {
        m_sock.close();
        throw;
    }
}

void RpcSession::upload(const std::string& name, std::string_view blob) {
    Json h = Json::object();
    h["name"] = name;
    roundTrip(SessionOp::kUpload, h, blob, deadlineAfterMs(m_options.ioTimeoutMs));
}

RunReply RpcSession::run(const RunRequest& request) {
    const long long ms = static_cast<long long>(request.timeoutSec * 1000) + m_options.ioTimeoutMs;
    return runReplyFromJson(roundTrip(SessionOp::kRun, toJson(request), {}, deadlineAfterMs(ms)).header);
}

CallReply RpcSession::call(const CallRequest& request, double timeoutSec) {
    Json header = request.args.is_object() ? request.args : Json::object();
    header["function"] = request.function;
    const long long ms = static_cast<long long>(std::max(0.0, timeoutSec) * 1000) + m_options.ioTimeoutMs;
    SessionMessage m = roundTrip(SessionOp::kCall, header, request.blob, deadlineAfterMs(ms));
    CallReply r;
    r.result = std::move(m.header);
    r.blob = std::move(m.blob);
    return r;
}

void RpcSession::close() {
    if (!m_sock.valid()) return;
    try {
        roundTrip(SessionOp::kClose, Json::object(), {}, deadlineAfterMs(2000));
    } catch (const RpcError&) {
    }
    m_sock.close();
}

RpcSession requestSession(TrackerSession& tracker, const std::string& key, int priority, const SessionOptions& options,
                          int maxRetry, int requestTimeoutMs, DeviceAssignment* assigned) {
    std::string lastErr = "no attempt made";
    for (int attempt = 0; attempt < std::max(1, maxRetry); ++attempt) {
        DeviceAssignment a;
        try {
            a = tracker.request(key, priority, requestTimeoutMs);
        } catch (const RpcError& e) {
            if (e.kind() == RpcError::Kind::kTimeout || e.kind() == RpcError::Kind::kInterrupted) throw;
            lastErr = e.what();  // tracker connection broke: request() reconnects next time
            continue;
        }
        try {
            RpcSession s = RpcSession::connect(a.host, a.port, a.matchKey, options);
            if (assigned) *assigned = a;
            return s;
        } catch (const RpcError& e) {
            lastErr = e.what();
        }
    }
    throw RpcError(RpcError::Kind::kIo, "cannot request " + key + " after " + std::to_string(maxRetry) +
                                            " retries, last error: " + lastErr);
}

}  // namespace tb::rpc
