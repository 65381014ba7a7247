// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file socket.h
/// \brief Thin POSIX TCP helpers for engine/rpc: an owning socket, listen/connect, and blocking
/// send/receive with deadlines that a wake-up pipe can interrupt.
///
/// Exists because the engine links no Qt (so no QTcpSocket) and every blocking network call in the
/// tracker client and the RPC server must be bounded in time and stoppable from another thread
/// (RpcServer::stop, the GUI closing). All sockets are non-blocking and close-on-exec; waiting is
/// done with poll(2). Writes use MSG_NOSIGNAL, so a vanished peer is an RpcError, never SIGPIPE.

#include <chrono>
#include <cstddef>
#include <string>

#include "engine/rpc/protocol.h"

namespace tb::rpc {

using Clock = std::chrono::steady_clock;
/// An absolute point in time after which an operation fails with RpcError::Kind::kTimeout.
using Deadline = Clock::time_point;
/// No deadline.
inline constexpr Deadline kNoDeadline = Deadline::max();
/// now + ms; a negative ms means no deadline.
Deadline deadlineAfterMs(long long ms);

/// Owns one file descriptor; closes it on destruction. Movable, not copyable.
class Socket {
public:
    Socket() = default;
    explicit Socket(int fd) : m_fd(fd) {}
    ~Socket() { close(); }
    Socket(Socket&& o) noexcept : m_fd(o.release()) {}
    Socket& operator=(Socket&& o) noexcept;
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;

    int fd() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }
    int release() {
        int fd = m_fd;
        m_fd = -1;
        return fd;
    }
    void close();

private:
    int m_fd = -1;
};

/// A self-pipe used to interrupt poll(2) from another thread. wake() is async-signal-safe.
class WakePipe {
public:
    WakePipe();
    ~WakePipe();
    WakePipe(const WakePipe&) = delete;
    WakePipe& operator=(const WakePipe&) = delete;
    int readFd() const { return m_r; }
    void wake();
    void drain();

private:
    int m_r = -1, m_w = -1;
};

/// Binds and listens on `host` at the first free port of [port, portEnd) (TVM's rule; portEnd <=
/// port means just `port`; port 0 asks the kernel for a free port). SO_REUSEADDR is set, as TVM
/// does. Returns the socket and stores the bound port in *boundPort. Throws RpcError(kIo) naming
/// the address when nothing can be bound or `host` does not resolve.
Socket listenTcp(const std::string& host, int port, int portEnd, int* boundPort, int backlog = 128);

/// Connects to host:port within timeoutMs (< 0: the system's timeout). Throws RpcError(kIo) for
/// refusal/unreachable/resolution failure, RpcError(kTimeout) when the time runs out.
Socket connectTcp(const std::string& host, int port, int timeoutMs);

/// Accepts one pending connection from a non-blocking listening socket; returns an invalid Socket
/// when none is pending. Fills *peerIp with the numeric address (IPv4-mapped IPv6 shown as IPv4).
Socket acceptTcp(int listenFd, std::string* peerIp);

/// Sends all bytes before `deadline`. `wakeFd` (or -1): becoming readable aborts with kInterrupted.
void sendAll(int fd, const void* data, size_t n, Deadline deadline, int wakeFd = -1);
/// Receives exactly n bytes before `deadline`; EOF -> RpcError(kClosed). `wakeFd` as in sendAll.
void recvAll(int fd, void* data, size_t n, Deadline deadline, int wakeFd = -1);

/// Numeric address of the socket's peer, e.g. "127.0.0.1".
std::string peerAddress(int fd);

}  // namespace tb::rpc
