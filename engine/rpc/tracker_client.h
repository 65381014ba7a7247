// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file tracker_client.h
/// \brief Client side of TVM's tracker protocol: TrackerSession (TVM `rpc.connect_tracker` /
/// `TrackerSession` in python/tvm/rpc/client.py), the parsed SUMMARY and its text rendering
/// (`TrackerSession.text_summary`, printed by `query_rpc_tracker`).
///
/// Used by the RPC runner to obtain a device, by RpcServer to register itself, by the GUI's device
/// queue view (summary()) and by `tunebench-cli query-tracker`. Works against our Tracker and
/// TVM's alike: it waits for the magic echo before sending any frame (TVM's tracker drops a client
/// whose first segment holds more than the magic) and sends JSON in Python's exact spacing.
///
/// Errors: every network or protocol failure throws RpcError (see protocol.h) and leaves the
/// session disconnected; request() reconnects on its next call, like TVM's.

#include <optional>
#include <string>
#include <vector>

#include "engine/rpc/protocol.h"
#include "engine/rpc/socket.h"

namespace tb::rpc {

struct ConnectOptions {
    /// One TCP connect attempt may take this long.
    int connectTimeoutMs = 5000;
    /// Keep retrying refused connections for this long (TVM connect_with_retry: 60 s). 0: one try.
    int retryTimeoutMs = 60000;
    /// Pause between attempts (TVM: 5 s; shorter here because our trackers restart fast).
    int retryPeriodMs = 1000;
    /// Deadline of each reply other than REQUEST's (which has its own timeout).
    int ioTimeoutMs = 30000;
    /// A readable fd (or -1) whose readiness aborts every wait with RpcError(kInterrupted); lets
    /// an owner thread (RpcServer::stop) interrupt a blocked session.
    int interruptFd = -1;
};

/// A device handed out by REQUEST: where to connect and the match key to present there.
struct DeviceAssignment {
    std::string host;
    int port = 0;
    std::string matchKey;
};

/// One `queue_info` entry: free = queued resources, pending = blocked requests.
struct QueueInfo {
    std::string key;
    long long free = 0;
    long long pending = 0;
};

/// One `server_info` entry (the UPDATE_INFO dict of a live server connection).
struct ServerInfo {
    std::string key;                ///< e.g. "server:rasp3b"
    std::vector<std::string> addr;  ///< Python str() of each addr element: {"127.0.0.1", "9090"}
    Json info;                      ///< the whole dict as received
    /// The listen port as a number (TVM's C++/Java servers send it as a string); -1 if unusable.
    int port() const;
};

/// A parsed SUMMARY reply. Queues keep the tracker's order; servers keep the reply's order.
struct TrackerSummary {
    std::vector<QueueInfo> queues;
    std::vector<ServerInfo> servers;
    /// The `{"queue_info": ..., "server_info": ...}` value as received.
    Json raw;

    /// Parses the second element of a SUMMARY reply. Throws RpcError(kProtocol) naming the field
    /// that is missing or has the wrong type.
    static TrackerSummary fromJson(const Json& status);
    const QueueInfo* queue(const std::string& key) const;
};

/// Layouts of TVM's "Server List" lines (TRACKER-PROTOCOL.md, "query_rpc_tracker output").
enum class SummaryLayout {
    kCurrent,       ///< TVM v0.24+ (HEAD): address left-justified in 21 columns, 4 spaces, key
    kRightAligned,  ///< TVM v0.9 .. v0.23: address right-justified in 21 columns (`%21s`)
};

/// TVM's `TrackerSession.text_summary()`, byte for byte: servers sorted by key; queue rows sorted,
/// only keys with live servers or pending requests, key column as wide as the longest key of
/// queue_info (at least "key"), rows `total:<5  free:<4  pending:<7` (trailing spaces kept), and
/// dashed rules one longer than the title line. Ends with the closing rule and "\n".
std::string textSummary(const TrackerSummary& summary, SummaryLayout layout = SummaryLayout::kCurrent);

class TrackerSession {
public:
    TrackerSession() = default;
    /// Connects (retrying refused connections per `options`) and exchanges the magic. Throws
    /// RpcError: kIo/kTimeout when unreachable, kProtocol when the peer is not a tracker.
    static TrackerSession connect(const std::string& host, int port, const ConnectOptions& options = {});

    TrackerSession(TrackerSession&&) noexcept = default;
    TrackerSession& operator=(TrackerSession&&) noexcept = default;

    bool connected() const { return m_sock.valid(); }
    void close() { m_sock.close(); }
    /// The socket (for poll-based owners such as RpcServer); -1 when disconnected.
    int fd() const { return m_sock.fd(); }
    const std::string& host() const { return m_host; }
    int port() const { return m_port; }
    /// A readable `fd` (or -1) whose readiness aborts any wait with RpcError(kInterrupted).
    void setInterruptFd(int fd) { m_interruptFd = fd; }

    /// PING; throws unless the tracker answers 0.
    void ping();
    /// REQUEST `[4, key, "", priority]`: blocks until a device of `key` is free or `timeoutMs`
    /// passes (< 0: forever). On timeout the connection is closed (withdrawing the request) and
    /// RpcError(kTimeout) is thrown. Reconnects first if the session was closed.
    DeviceAssignment request(const std::string& key, int priority = 1, int timeoutMs = -1);
    /// SUMMARY, parsed.
    TrackerSummary summary();
    /// STOP with the tracker's secret; true if accepted (the tracker then shuts down).
    bool stop(const std::string& stopKey);

    // ---- what an RPC server sends (TVM server.py _listen_loop) ----
    /// UPDATE_INFO `[5, {"key": "server:<key>", "addr": [customAddr or null, port]}]`.
    void updateInfo(const std::string& deviceKey, int port, const std::optional<std::string>& customAddr);
    /// PUT `[3, key, [port, matchKey], customAddr or null]`.
    void put(const std::string& deviceKey, int port, const std::string& matchKey,
             const std::optional<std::string>& customAddr);
    /// GET_PENDING_MATCHKEYS: this connection's offers not yet handed out.
    std::vector<std::string> pendingMatchKeys();

    /// Sends one request (Python-formatted) and returns the parsed reply within `timeoutMs`
    /// (< 0: forever). The building block of the calls above.
    Json call(const Json& request, int timeoutMs);

private:
    void connectNow();
    void expectSuccess(const Json& reply, const char* what);

    Socket m_sock;
    std::string m_host;
    int m_port = 0;
    ConnectOptions m_options;
    int m_interruptFd = -1;
};

}  // namespace tb::rpc
