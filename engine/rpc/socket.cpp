// SPDX-License-Identifier: Apache-2.0
#include "engine/rpc/socket.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tb::rpc {

namespace {

std::string errnoText(int err) { return std::strerror(err); }

void setNoDelay(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

struct AddrInfo {
    addrinfo* list = nullptr;
    ~AddrInfo() {
        if (list) ::freeaddrinfo(list);
    }
};

void resolve(const std::string& host, int port, bool passive, AddrInfo& out) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    if (passive) hints.ai_flags = AI_PASSIVE;
    const std::string service = std::to_string(port);
    const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &out.list);
    if (rc != 0)
        throw RpcError(RpcError::Kind::kIo, "cannot resolve host '" + host + "': " + ::gai_strerror(rc));
}

std::string numericHost(const sockaddr* sa, socklen_t len) {
    char host[NI_MAXHOST] = {0};
    if (::getnameinfo(sa, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return "";
    std::string s = host;
    if (s.rfind("::ffff:", 0) == 0 && s.find('.') != std::string::npos) s = s.substr(7);
    return s;
}

// Waits for `events` on fd, or for wakeFd to become readable, until the deadline.
void waitFor(int fd, short events, Deadline deadline, int wakeFd) {
    for (;;) {
        int timeoutMs = -1;
        if (deadline != kNoDeadline) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) throw RpcError(RpcError::Kind::kTimeout, "network operation timed out");
            timeoutMs = int(std::min<long long>(left, 1 << 30));
        }
        pollfd fds[2] = {{fd, events, 0}, {wakeFd, POLLIN, 0}};
        const int n = ::poll(fds, wakeFd >= 0 ? 2 : 1, timeoutMs);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw RpcError(RpcError::Kind::kIo, "poll failed: " + errnoText(errno));
        }
        if (n == 0) continue;  // re-checks the deadline
        if (wakeFd >= 0 && (fds[1].revents & POLLIN)) throw RpcError(RpcError::Kind::kInterrupted, "interrupted");
        if (fds[0].revents) return;
    }
}

}  // namespace

Deadline deadlineAfterMs(long long ms) {
    if (ms < 0) return kNoDeadline;
    return Clock::now() + std::chrono::milliseconds(ms);
}

Socket& Socket::operator=(Socket&& o) noexcept {
    if (this != &o) {
        close();
        m_fd = o.release();
    }
    return *this;
}

void Socket::close() {
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
}

WakePipe::WakePipe() {
    int p[2];
    if (::pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0)
        throw RpcError(RpcError::Kind::kIo, "pipe2 failed: " + errnoText(errno));
    m_r = p[0];
    m_w = p[1];
}

WakePipe::~WakePipe() {
    ::close(m_r);
    ::close(m_w);
}

void WakePipe::wake() {
    const char c = 1;
    [[maybe_unused]] auto n = ::write(m_w, &c, 1);  // a full pipe is already "woken"
}

void WakePipe::drain() {
    char buf[64];
    while (::read(m_r, buf, sizeof buf) > 0) {
    }
}

Socket listenTcp(const std::string& host, int port, int portEnd, int* boundPort, int backlog) {
    if (port < 0 || port > 65535) throw RpcError(RpcError::Kind::kIo, "invalid port " + std::to_string(port));
    const int last = portEnd > port ? std::min(portEnd, 65536) : port + 1;
    std::string lastErr = "no port tried";
    for (int p = port; p < last; ++p) {
        AddrInfo ai;
        resolve(host, p, true, ai);
        for (addrinfo* a = ai.list; a; a = a->ai_next) {
            Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
            if (!s.valid()) {
                lastErr = errnoText(errno);
                continue;
            }
            int one = 1;
            ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (::bind(s.fd(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(s.fd(), backlog) != 0) {
                lastErr = errnoText(errno);
                continue;
            }
            sockaddr_storage ss{};
            socklen_t len = sizeof ss;
            ::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&ss), &len);
            int actual = p;
            if (ss.ss_family == AF_INET) actual = ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
            if (ss.ss_family == AF_INET6) actual = ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
            if (boundPort) *boundPort = actual;
            return s;
        }
    }
    throw RpcError(RpcError::Kind::kIo, "cannot bind to any port in [" + std::to_string(port) + ", " +
                                            std::to_string(last) + ") on '" + host + "': " + lastErr);
}

Socket connectTcp(const std::string& host, int port, int timeoutMs) {
    AddrInfo ai;
    resolve(host, port, false, ai);
    const Deadline deadline = deadlineAfterMs(timeoutMs);
    std::string lastErr = "no address";
    RpcError::Kind kind = RpcError::Kind::kIo;
    for (addrinfo* a = ai.list; a; a = a->ai_next) {
        Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
        if (!s.valid()) {
            lastErr = errnoText(errno);
            continue;
        }
        if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
            if (errno != EINPROGRESS) {
                lastErr = errnoText(errno);
                continue;
            }
            try {
                waitFor(s.fd(), POLLOUT, deadline, -1);
            } catch (const RpcError& e) {
                lastErr = e.what();
                kind = e.kind();
                continue;
            }
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) {
                lastErr = errnoText(err);
                continue;
            }
        }
        setNoDelay(s.fd());
        return s;
    }
    throw RpcError(kind, "cannot connect to " + host + ":" + std::to_string(port) + ": " + lastErr);
}

Socket acceptTcp(int listenFd, std::string* peerIp) {
    for (;;) {
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        const int fd = ::accept4(listenFd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return Socket();  // EAGAIN, or out of descriptors: the caller retries on the next poll
        }
        setNoDelay(fd);
        if (peerIp) *peerIp = numericHost(reinterpret_cast<sockaddr*>(&ss), len);
        return Socket(fd);
    }
}

void sendAll(int fd, const void* data, size_t n, Deadline deadline, int wakeFd) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= size_t(k);
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            waitFor(fd, POLLOUT, deadline, wakeFd);
            continue;
        }
        if (k < 0 && (errno == EPIPE || errno == ECONNRESET))
            throw RpcError(RpcError::Kind::kClosed, "connection closed by peer");
        throw RpcError(RpcError::Kind::kIo, "send failed: " + errnoText(errno));
    }
}

void recvAll(int fd, void* data, size_t n, Deadline deadline, int wakeFd) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
        const ssize_t k = ::recv(fd, p, n, 0);
        if (k > 0) {
            p += k;
            n -= size_t(k);
            continue;
        }
        if (k == 0) throw RpcError(RpcError::Kind::kClosed, "connection closed by peer");
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            waitFor(fd, POLLIN, deadline, wakeFd);
            continue;
        }
        if (errno == ECONNRESET) throw RpcError(RpcError::Kind::kClosed, "connection reset by peer");
        throw RpcError(RpcError::Kind::kIo, "recv failed: " + errnoText(errno));
    }
}

std::string peerAddress(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
    return numericHost(reinterpret_cast<sockaddr*>(&ss), len);
}

}  // namespace tb::rpc
