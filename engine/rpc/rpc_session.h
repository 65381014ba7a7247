// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file rpc_session.h
/// \brief Client side of a measurement session with an RpcServer: TVM's data-plane handshake
/// (`rpc.connect(url, port, key, session_timeout)`), then uploads and timed runs over
/// session_protocol.h. The RPC runner of engine/measure drives remote measurement through it.
///
/// requestSession() is TVM's `TrackerSession.request`: ask the tracker for a device of a key, then
/// connect to it with the match key, retrying (max_retry, default 5) when the device vanished or
/// refused a stale key in between.
///
/// Errors: RpcError. kRejected when the server answered MISMATCH (wrong match key or token),
/// kRemote when it replied kError (the message says why; the server has closed the connection),
/// kClosed/kIo/kTimeout for network trouble. Measurement failures are not errors: they come back
/// in RunReply::errorNo.

#include <string>
#include <string_view>

#include "engine/rpc/measure_executor.h"
#include "engine/rpc/session_protocol.h"
#include "engine/rpc/socket.h"

namespace tb::rpc {

class TrackerSession;
struct DeviceAssignment;

struct SessionOptions {
    /// Shared secret the server expects (RpcServerOptions::token); empty: none.
    std::string token;
    /// Asks the server to end the session after this many seconds (TVM session_timeout); 0: never.
    int sessionTimeoutSec = 0;
    int connectTimeoutMs = 5000;
    /// Deadline for each reply besides a run's own timeout (milliseconds).
    int ioTimeoutMs = 60000;
};

class RpcSession {
public:
    RpcSession() = default;
    /// Connects to host:port and performs the handshake presenting `matchKey`.
    static RpcSession connect(const std::string& host, int port, const std::string& matchKey,
                              const SessionOptions& options = {});
    RpcSession(RpcSession&&) noexcept = default;
    RpcSession& operator=(RpcSession&&) noexcept = default;
    /// Closes the connection without the polite kClose (never blocks).
    ~RpcSession() = default;

    bool connected() const { return m_sock.valid(); }
    /// The server's answer to the greeting, e.g. "server:rasp3b".
    const std::string& serverKey() const { return m_serverKey; }

    /// Stores `blob` on the server under `name` (a plain file name) for later runs.
    void upload(const std::string& name, std::string_view blob);
    /// Times an uploaded module; waits up to request.timeoutSec plus ioTimeoutMs for the reply.
    RunReply run(const RunRequest& request);
    /// Calls the device function `request.function` (SessionOp::kCall) with request.args as the
    /// header (its "function" field is set here) and request.blob; waits up to timeoutSec plus
    /// ioTimeoutMs for the reply. The reply's error_no/error_msg are the function's business (not
    /// thrown). A server that predates kCall answers kError: RpcError(kRemote, "... unknown session
    /// op 5"), and the session is closed, as for every kError.
    CallReply call(const CallRequest& request, double timeoutSec);
    /// Ends the session politely (kClose) and closes the socket. Never throws.
    void close();

private:
    SessionMessage roundTrip(SessionOp op, const Json& header, std::string_view blob, Deadline deadline);

    Socket m_sock;
    std::string m_serverKey;
    SessionOptions m_options;
};

/// TVM `TrackerSession.request(key, priority, session_timeout, max_retry)`: REQUEST a device of
/// `key` (waiting up to requestTimeoutMs, < 0 forever; a timeout is not retried) and connect to it.
/// Network failures and rejections are retried up to maxRetry attempts in all; the last error is
/// rethrown. `assigned`, when given, receives the device the session is connected to.
RpcSession requestSession(TrackerSession& tracker, const std::string& key, int priority = 1,
                          const SessionOptions& options = {}, int maxRetry = 5, int requestTimeoutMs = -1,
                          DeviceAssignment* assigned = nullptr);

}  // namespace tb::rpc
