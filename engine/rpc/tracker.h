// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file tracker.h
/// \brief The RPC tracker: a TCP service that hands free measurement devices to the clients that
/// ask for them, speaking TVM's tracker protocol byte for byte (python/tvm/rpc/tracker.py).
///
/// Why it exists: remote measurement (RPCRunner) needs a broker between tuning jobs and a fleet of
/// devices; being wire-compatible with TVM lets TVM's rpc_server, query_rpc_tracker and autotvm use
/// our tracker, and ours use theirs. It runs in-process (start/stop, bound port query), so the GUI
/// and the tests embed it; `tunebench-cli tracker` wraps it for the command line.
///
/// Model (as TVM's TrackerServerHandler + PriorityScheduler):
///  * Each device key has a FIFO of free resources `(owner connection, address, port, match key)`
///    (added by PUT) and a queue of blocked REQUESTs ordered by highest priority first, then arrival.
///    A REQUEST is answered `[0, [address, port, matchkey]]` as soon as a resource exists; a handed
///    out match key leaves its owner's pending set (GET_PENDING_MATCHKEYS).
///  * UPDATE_INFO merges a dict into the connection's info; a null `addr[0]` (and a null PUT custom
///    address) becomes the peer IP. SUMMARY lists every key's free/pending counts in first-seen
///    order, and the info of connections whose key starts with "server".
///  * When a connection that sent an info `key` closes, its queued resources are withdrawn.
///
/// Implementation: one thread, non-blocking sockets, poll(2). Each connection buffers input, so a
/// frame may arrive byte by byte and many frames in one segment (TVM behaves so). Framing limits
/// follow TVM v0.25: a length <= 0 or > maxMessageBytes, malformed JSON, a malformed request, an
/// unknown code, or a wrong magic closes only that connection (logged, no reply).
///
/// Deliberate differences from TVM, each making the tracker more robust without changing a reply:
///  * The magic may arrive in one segment with the first frame (TVM requires the first read to be
///    exactly 4 bytes and drops such clients); clients must still wait for the echo against TVM.
///  * A blocked REQUEST whose connection closed is dropped at once, so `pending` counts only live
///    requests (TVM keeps the dead entry until a resource arrives, then re-queues the resource at
///    the back of the free list).
///  * Resources are withdrawn from the key they were PUT under (TVM re-derives the key from the
///    match key, which fails when the two disagree).
///  * Connections that never finish the handshake, or leave a frame incomplete, are closed after a
///    timeout; the number of connections and unread output per connection are bounded.

#include <functional>
#include <memory>
#include <string>

namespace tb::rpc {

struct TrackerOptions {
    /// Address to bind (TVM default "0.0.0.0"; tests and the embedded default use "127.0.0.1").
    std::string host = "0.0.0.0";
    /// First port tried; ports [port, portEnd) are tried in order (TVM 9190..9198). 0: any free port.
    int port = 9190;
    int portEnd = 9199;
    /// Frames longer than this (bytes of JSON) close the connection. TVM v0.25+: 1 MiB.
    int maxMessageBytes = 1 << 20;
    /// Connections beyond this number are accepted and closed at once.
    int maxConnections = 4096;
    /// A connection must send the 4-byte magic within this many milliseconds.
    int handshakeTimeoutMs = 10000;
    /// A frame started but not completed within this many milliseconds closes the connection.
    int partialMessageTimeoutMs = 60000;
    /// Replies a peer does not read pile up to at most this many bytes, then it is closed.
    long long maxPendingOutputBytes = 64ll << 20;
    /// The secret of STOP. Empty: a TVM-style random "tracker:<float>" made at construction.
    std::string stopKey;
    /// Receives one line per notable event (bind, rejected connection and why). May be empty.
    /// Called on the tracker thread.
    std::function<void(const std::string&)> log;
};

class Tracker {
public:
    explicit Tracker(TrackerOptions options = {});
    /// Stops the tracker (see stop()).
    ~Tracker();
    Tracker(const Tracker&) = delete;
    Tracker& operator=(const Tracker&) = delete;

    /// Binds (throws RpcError(kIo) when no port of the range is free or the host is invalid) and
    /// starts the event thread. Throws InternalError if already started.
    void start();
    /// Closes every connection and the listening socket and joins the thread. Idempotent; safe
    /// after a remote STOP ended the loop.
    void stop();
    /// True from start() until stop() or a remote STOP with the right key.
    bool running() const;
    /// Blocks until the tracker stopped or `timeoutMs` passed (< 0: forever); returns !running().
    bool waitStopped(int timeoutMs) const;

    /// The port actually bound (valid after start()).
    int port() const;
    const std::string& host() const;
    /// The key a STOP request must carry (`[2, stopKey]`).
    const std::string& stopKey() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace tb::rpc
