// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file rpc_server.h
/// \brief An RPC server: a measurement device that registers with a tracker under a device key,
/// exactly as TVM's `python -m tvm.exec.rpc_server` does, and serves measurement sessions.
///
/// Why: remote measurement (another board, another machine, or just a second process) needs a
/// process on the device that takes compiled code and times it. Registration follows TVM's
/// server.py `_listen_loop` so our servers work with TVM's tracker and appear in its
/// query_rpc_tracker:
///  1. connect to the tracker (retrying), magic, UPDATE_INFO {"key": "server:<key>", "addr":
///     [customAddr or null, listenPort]}, PUT [key, [port, "<key>:<random>"], customAddr or null];
///  2. while idle, every pingPeriodMs (TVM: 2 s) send GET_PENDING_MATCHKEYS; when the current match
///     key is missing (a client took it but never came) on consecutive polls until
///     `misses * pingPeriod > unmatchTimeout + pingPeriod` (TVM: 4 s + 2 s, the 4th miss), PUT a
///     fresh key;
///  3. after each session, PUT a fresh key; when the tracker connection breaks (tracker restart),
///     reconnect every trackerRetryPeriodMs and register again.
/// Without a tracker the expected match key is the plain device key (TVM's rule).
///
/// Data plane: TVM's handshake (see session_protocol.h). A wrong match key gets RPC_CODE_MISMATCH
/// and the server keeps waiting with the same key. With a token configured, the greeting must also
/// carry `-token=<token>` (a TuneBench extension: TVM clients ignore unknown options on the server
/// side and cannot send it, so they are refused with MISMATCH). The token travels in clear text:
/// it keeps strangers on a shared network from running code, it is not encryption.
///
/// Greetings are read from every accepted connection as their bytes arrive (up to 32 at once;
/// further peers wait in the listen backlog), so a peer that sends half a greeting and stalls holds
/// only its own connection, closed after handshakeTimeoutMs, and never delays another client's
/// handshake. Sessions are served one at a time on the server's single thread, like TVM's: a client
/// whose greeting completes during a session is answered when that session ends. A session ends on
/// kClose, on the client's `-timeout=N`, after idleTimeoutMs without a request, on any protocol
/// error (kError reply, then close), or on stop(). Uploaded blobs live in a per-session directory
/// under workDir, removed at session end. A kCall request goes to MeasureExecutor::call with the
/// paths of the session's uploads (a network run names its library, graph and params by upload name).

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "engine/rpc/measure_executor.h"

namespace tb::rpc {

struct RpcServerOptions {
    /// Listen address: loopback unless told otherwise (TVM's default is 0.0.0.0).
    std::string host = "127.0.0.1";
    /// First port tried; [port, portEnd) are tried in order (TVM: 9090..9198). 0: any free port.
    int port = 9090;
    int portEnd = 9199;
    /// Device key, e.g. "rasp3b". Required with a tracker; without one it is the match key.
    std::string key;
    /// Tracker to register with; empty host: none.
    std::string trackerHost;
    int trackerPort = 9190;
    /// Address announced to the tracker instead of the peer IP it sees (TVM --custom-addr).
    std::optional<std::string> customAddr;
    /// Shared secret a client must present in its greeting; empty: none.
    std::string token;
    int pingPeriodMs = 2000;         ///< TVM ping_period (2 s)
    int unmatchTimeoutMs = 4000;     ///< TVM unmatch_timeout (4 s)
    int trackerRetryPeriodMs = 1000; ///< pause between tracker reconnection attempts
    int handshakeTimeoutMs = 5000;   ///< an accepted connection must complete its greeting within this time
    int idleTimeoutMs = 600000;      ///< a session with no request for this long is closed
    /// Largest session message (an upload); larger ones are refused with kError.
    std::uint64_t maxMessageBytes = 512ull << 20;
    /// Where session directories are made; empty: $TMPDIR or /tmp.
    std::string workDir;
    /// Receives one line per notable event; called on the server thread. May be empty.
    std::function<void(const std::string&)> log;
};

class RpcServer {
public:
    /// `executor` runs the measurements; it must outlive the server (shared ownership here).
    RpcServer(RpcServerOptions options, std::shared_ptr<MeasureExecutor> executor);
    ~RpcServer();
    RpcServer(const RpcServer&) = delete;
    RpcServer& operator=(const RpcServer&) = delete;

    /// Binds the listen socket (throws RpcError(kIo) when no port is free; UserError when a tracker
    /// is configured without a key) and starts the server thread. The tracker need not be up yet.
    void start();
    /// Ends the current session, closes everything and joins the thread. A candidate or call that
    /// is running when stop() comes gets no reply (the client sees the device lost, as with a killed
    /// TVM rpc_server). Idempotent.
    void stop();

    int port() const;
    /// True while the server is registered with its tracker (after UPDATE_INFO + PUT succeeded).
    bool registered() const;
    /// How many sessions passed the handshake so far.
    long long sessionsServed() const;
    /// How many times the server (re-)registered with a tracker (1 after the first, +1 per restart).
    long long registrations() const;
    /// The match key currently offered (for tests and status displays).
    std::string currentMatchKey() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace tb::rpc
