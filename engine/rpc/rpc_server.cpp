// SPDX-License-Identifier: Apache-2.0
#include "engine/rpc/rpc_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "engine/rpc/session_protocol.h"
#include "engine/rpc/socket.h"
#include "engine/rpc/tracker_client.h"
#include "engine/support/error.h"

namespace tb::rpc {

namespace {

constexpr std::int32_t kMaxGreetingBytes = 4096;
constexpr int kReplyTimeoutMs = 30000;
// Connections whose greeting is still arriving, at most; further peers wait in the listen backlog.
constexpr size_t kMaxPendingHandshakes = 32;

// Compares secrets without an early exit (the length may leak; the content does not).
bool constantTimeEqual(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

bool validBlobName(const std::string& n) {
    return !n.empty() && n.size() <= 255 && n != "." && n != ".." && n.find('/') == std::string::npos &&
           n.find('\0') == std::string::npos;
}

}  // namespace

struct RpcServer::Impl {
    RpcServerOptions opt;
    std::shared_ptr<MeasureExecutor> executor;
    Socket listen;
    int port = 0;
    WakePipe wake;  // written once by stop(), never drained: every later wait is interrupted
    std::thread thread;
    std::atomic<bool> stopping{false};
    std::atomic<bool> registered{false};
    std::atomic<long long> sessions{0}, registrations{0};
    mutable std::mutex keyMu;
    std::string matchKey;

    // One accepted connection whose greeting (magic, length, "client:<match key> [options]") is
    // still arriving. The server reads each peer's bytes as they come, so a peer that stalls half
    // way through holds its own slot until its deadline, never the server.
    struct PendingPeer {
        Socket s;
        std::string peer;
        Deadline deadline;
        std::string buf;  // the greeting's bytes so far
        size_t need = 4;  // bytes wanted before the next check: 4 (magic), 8 (length), 8 + length
    };
    enum class GreetingState { kWaiting, kComplete, kDrop };

    // ---- server thread only ----
    std::vector<PendingPeer> handshaking;  // accepted, greeting not complete yet
    TrackerSession tracker;
    std::set<std::string> oldKeys;
    int misses = 0;
    Clock::time_point nextPing, nextTrackerAttempt;
    bool trackerDownLogged = false;

    void log(const std::string& line) {
        if (opt.log) opt.log(line);
    }
    bool useTracker() const { return !opt.trackerHost.empty(); }
    std::string trackerName() const { return opt.trackerHost + ":" + std::to_string(opt.trackerPort); }
    void setMatchKey(const std::string& k) {
        std::lock_guard<std::mutex> lock(keyMu);
        matchKey = k;
    }
    std::string currentKey() const {
        std::lock_guard<std::mutex> lock(keyMu);
        return matchKey;
    }

    void run();
    void connectTracker();
    void dropTracker(const std::string& why);
    void offerNewKey();
    void pollPending();
    void acceptPeers();
    GreetingState readGreeting(PendingPeer& p);
    bool answerGreeting(Socket& s, const std::string& peer, const std::string& greeting, double* timeoutSec);
    void serveConnection(PendingPeer p);
    void serveSession(Socket& s, double timeoutSec, const std::string& peer);
};

void RpcServer::Impl::offerNewKey() {
    std::string k;
    do {
        k = randomKey(opt.key);
    } while (oldKeys.count(k));
    tracker.put(opt.key, port, k, opt.customAddr);
    oldKeys.insert(k);
    setMatchKey(k);
    misses = 0;
}

void RpcServer::Impl::dropTracker(const std::string& why) {
    tracker.close();
    registered = false;
    nextTrackerAttempt = Clock::now() + std::chrono::milliseconds(opt.trackerRetryPeriodMs);
    if (!trackerDownLogged) log("lost tracker " + trackerName() + " (" + why + "), reconnecting");
    trackerDownLogged = true;
}

void RpcServer::Impl::connectTracker() {
    ConnectOptions co;
    co.connectTimeoutMs = 2000;
    co.retryTimeoutMs = 0;  // the server loop retries, so it keeps serving direct clients meanwhile
    co.ioTimeoutMs = 10000;
    co.interruptFd = wake.readFd();
    try {
        tracker = TrackerSession::connect(opt.trackerHost, opt.trackerPort, co);
        tracker.updateInfo(opt.key, port, opt.customAddr);
        offerNewKey();
    } catch (const RpcError& e) {
        if (e.kind() == RpcError::Kind::kInterrupted) return;
        dropTracker(e.what());
        return;
    }
    registered = true;
    ++registrations;
    trackerDownLogged = false;
    nextPing = Clock::now() + std::chrono::milliseconds(opt.pingPeriodMs);
    log("registered with tracker " + trackerName() + " as key '" + opt.key + "'");
}

void RpcServer::Impl::pollPending() {
    const std::vector<std::string> pending = tracker.pendingMatchKeys();
    const std::string k = currentKey();
    oldKeys.insert(k);
    if (std::find(pending.begin(), pending.end(), k) == pending.end())
        ++misses;  // handed to a client that has not connected (yet)
    else
        misses = 0;
    if (static_cast<long long>(misses) * opt.pingPeriodMs > static_cast<long long>(opt.unmatchTimeoutMs) + opt.pingPeriodMs) {
        log("no incoming connections, regenerate key ...");
        offerNewKey();
    }
}

void RpcServer::Impl::acceptPeers() {
    while (handshaking.size() < kMaxPendingHandshakes) {
        PendingPeer p;
        p.s = acceptTcp(listen.fd(), &p.peer);
        if (!p.s.valid()) return;
        p.deadline = deadlineAfterMs(opt.handshakeTimeoutMs);
        handshaking.push_back(std::move(p));
    }
}

RpcServer::Impl::GreetingState RpcServer::Impl::readGreeting(PendingPeer& p) {
    while (p.buf.size() < p.need) {
        char chunk[512];
        const ssize_t n = ::recv(p.s.fd(), chunk, std::min(sizeof chunk, p.need - p.buf.size()), 0);
        if (n == 0) {
            log("handshake with " + p.peer + " failed: connection closed by the peer");
            return GreetingState::kDrop;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return GreetingState::kWaiting;
            log("handshake with " + p.peer + " failed: " + std::strerror(errno));
            return GreetingState::kDrop;
        }
        p.buf.append(chunk, size_t(n));
        if (p.buf.size() == 4 && p.need == 4) {
            if (readLe32(p.buf.data()) != kRpcMagic) {
                log("invalid magic from " + p.peer);
                return GreetingState::kDrop;
            }
            p.need = 8;
        } else if (p.buf.size() == 8 && p.need == 8) {
            const std::int32_t len = readLe32(p.buf.data() + 4);
            if (len <= 0 || len > kMaxGreetingBytes) {
                log("invalid greeting length " + std::to_string(len) + " from " + p.peer);
                return GreetingState::kDrop;
            }
            p.need = 8 + size_t(len);
        }
    }
    return GreetingState::kComplete;
}

bool RpcServer::Impl::answerGreeting(Socket& s, const std::string& peer, const std::string& greeting,
                                     double* timeoutSec) {
    const Deadline d = deadlineAfterMs(opt.handshakeTimeoutMs);
    const int w = wake.readFd();
    std::istringstream words(greeting);
    std::vector<std::string> arr;
    for (std::string word; words >> word;) arr.push_back(word);

    auto reject = [&](const std::string& why) {
        std::string out;
        appendLe32(out, kRpcCodeMismatch);
        sendAll(s.fd(), out.data(), out.size(), d, w);
        log(why + " from " + peer);
        return false;
    };
    if (arr.empty() || arr[0] != "client:" + currentKey()) return reject("mismatch key");
    std::string token;
    bool hasToken = false;
    *timeoutSec = 0;
    for (size_t i = 1; i < arr.size(); ++i) {
        if (arr[i].rfind("-timeout=", 0) == 0) *timeoutSec = std::strtod(arr[i].c_str() + 9, nullptr);
        if (arr[i].rfind("-token=", 0) == 0) {
            token = arr[i].substr(7);
            hasToken = true;
        }
    }
    if (!opt.token.empty() && !(hasToken && constantTimeEqual(token, opt.token))) return reject("token mismatch");
    const std::string serverKey = "server:" + opt.key;
    std::string out;
    appendLe32(out, kRpcCodeSuccess);
    appendLe32(out, static_cast<std::int32_t>(serverKey.size()));
    out += serverKey;
    sendAll(s.fd(), out.data(), out.size(), d, w);
    return true;
}

void RpcServer::Impl::serveConnection(PendingPeer p) {
    bool served = false;
    try {
        double timeoutSec = 0;
        if (answerGreeting(p.s, p.peer, p.buf.substr(8), &timeoutSec)) {
            ++sessions;
            served = true;
            log("connection from " + p.peer);
            serveSession(p.s, timeoutSec, p.peer);
        }
    } catch (const RpcError& e) {
        if (e.kind() != RpcError::Kind::kInterrupted) log("handshake with " + p.peer + " failed: " + e.what());
    }
    p.s.close();
    if (stopping || !served || !tracker.connected()) return;
    try {
        offerNewKey();
    } catch (const RpcError& e) {
        dropTracker(e.what());
    }
}

void RpcServer::Impl::serveSession(Socket& s, double timeoutSec, const std::string& peer) {
    namespace fs = std::filesystem;
    const int w = wake.readFd();
    const Deadline sessionEnd = timeoutSec > 0 ? Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeoutSec * 1000))
                                               : kNoDeadline;
    std::string base = opt.workDir;
    if (base.empty()) base = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
    std::string tmpl = base + "/tunebench-rpc-XXXXXX";
    if (!::mkdtemp(tmpl.data())) {
        log("cannot create a session directory in " + base + ": " + std::strerror(errno));
        return;
    }
    const fs::path dir = tmpl;
    std::set<std::string> uploaded;

    auto replyError = [&](const std::string& msg) {
        log("session from " + peer + ": " + msg);
        try {
            Json h = Json::object();
            h["error"] = msg;
            writeSessionMessage(s.fd(), SessionOp::kError, h, {}, deadlineAfterMs(2000), w);
        } catch (const RpcError&) {
        }
    };

    for (;;) {
        const Deadline d = std::min(sessionEnd, deadlineAfterMs(opt.idleTimeoutMs));
        SessionMessage m;
        try {
            m = readSessionMessage(s.fd(), opt.maxMessageBytes, d, w);
        } catch (const RpcError& e) {
            if (e.kind() == RpcError::Kind::kProtocol) replyError(e.what());
            else if (e.kind() == RpcError::Kind::kTimeout) log("session from " + peer + " timed out");
            break;
        }
        try {
            const Deadline rd = deadlineAfterMs(kReplyTimeoutMs);
            if (m.op == SessionOp::kUpload) {
                const auto it = m.header.find("name");
                if (it == m.header.end() || !it->is_string() || !validBlobName(it->get<std::string>())) {
                    replyError("upload needs a plain file name (no '/', at most 255 bytes)");
                    break;
                }
                const std::string name = it->get<std::string>();
                std::ofstream f(dir / name, std::ios::binary | std::ios::trunc);
                f.write(m.blob.data(), static_cast<std::streamsize>(m.blob.size()));
                f.close();
                if (!f) {
                    replyError("cannot store upload '" + name + "' on the server");
                    break;
                }
                uploaded.insert(name);
                Json h = Json::object();
                h["name"] = name;
                h["size"] = m.blob.size();
                writeSessionMessage(s.fd(), SessionOp::kOk, h, {}, rd, w);
            } else if (m.op == SessionOp::kRun) {
                RunRequest req = runRequestFromJson(m.header);
                RunReply rep;
                const auto t0 = Clock::now();
                if (!uploaded.count(req.module)) {
                    rep.errorNo = kErrorNoCompileDevice;
                    rep.errorMsg = "module '" + req.module + "' was not uploaded in this session";
                } else {
                    req.modulePath = (dir / req.module).string();
                    try {
                        rep = executor->run(req);
                    } catch (const std::exception& e) {
                        rep = RunReply{};
                        rep.errorNo = kErrorNoUnknown;
                        rep.errorMsg = e.what();
                    }
                }
                rep.elapsedSec = std::chrono::duration<double>(Clock::now() - t0).count();
                // Stopped while the candidate ran: no reply, the session ends as it does when TVM's
                // rpc_server process is killed, so the client counts the device as lost. A reply
                // here would let a stop during the last candidate of a batch go unnoticed.
                if (stopping) break;
                writeSessionMessage(s.fd(), SessionOp::kOk, toJson(rep), {}, rd, w);
            } else if (m.op == SessionOp::kCall) {
                CallRequest req;
                const auto it = m.header.find("function");
                if (it == m.header.end() || !it->is_string() || it->get<std::string>().empty()) {
                    replyError("call needs a function name");
                    break;
                }
                req.function = it->get<std::string>();
                req.args = std::move(m.header);
                req.blob = std::move(m.blob);
                for (const std::string& name : uploaded) req.uploads[name] = (dir / name).string();
                CallReply rep;
                const auto t0 = Clock::now();
                try {
                    rep = executor->call(req);
                } catch (const std::exception& e) {
                    rep = callError(kErrorNoUnknown, e.what());
                }
                if (!rep.result.is_object()) rep = callError(kErrorNoUnknown, "the function returned no result");
                if (stopping) break;  // stopped during the call: no reply (see kRun)
                rep.result["elapsed"] = std::chrono::duration<double>(Clock::now() - t0).count();
                // The call may have outlasted rd: the reply gets its own deadline.
                writeSessionMessage(s.fd(), SessionOp::kOk, rep.result, rep.blob, deadlineAfterMs(kReplyTimeoutMs), w);
            } else if (m.op == SessionOp::kClose) {
                writeSessionMessage(s.fd(), SessionOp::kOk, Json::object(), {}, rd, w);
                break;
            } else {
                replyError("unknown session op " + std::to_string(static_cast<int>(m.op)));
                break;
            }
        } catch (const RpcError& e) {
            if (e.kind() == RpcError::Kind::kProtocol) replyError(e.what());
            break;
        }
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
}

void RpcServer::Impl::run() {
    if (useTracker())
        nextTrackerAttempt = Clock::now();
    else
        setMatchKey(opt.key);
    while (!stopping) {
        if (useTracker() && !tracker.connected() && Clock::now() >= nextTrackerAttempt) {
            connectTracker();
            if (stopping) break;
        }
        // [wake, listen, tracker, pending peers...]; poll(2) skips a negative fd: the listen socket
        // while the pending slots are full, the tracker while disconnected.
        std::vector<pollfd> fds = {{wake.readFd(), POLLIN, 0},
                                   {handshaking.size() < kMaxPendingHandshakes ? listen.fd() : -1, POLLIN, 0},
                                   {tracker.connected() ? tracker.fd() : -1, POLLIN, 0}};
        const size_t polledPending = handshaking.size();
        for (const PendingPeer& p : handshaking) fds.push_back({p.s.fd(), POLLIN, 0});
        long long waitMs = 1000;
        const auto now = Clock::now();
        if (tracker.connected())
            waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(nextPing - now).count();
        else if (useTracker())
            waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(nextTrackerAttempt - now).count();
        for (const PendingPeer& p : handshaking)
            waitMs = std::min<long long>(waitMs, std::chrono::duration_cast<std::chrono::milliseconds>(p.deadline - now).count());
        waitMs = std::clamp<long long>(waitMs + 1, 0, 1000);
        if (::poll(fds.data(), fds.size(), int(waitMs)) < 0 && errno != EINTR) {
            log(std::string("poll failed: ") + std::strerror(errno));
            break;
        }
        if (fds[0].revents || stopping) break;
        if (fds[2].revents) {
            // The tracker never speaks unprompted: readable means it closed (restart) or broke.
            dropTracker("connection closed");
            continue;
        }
        // Read what the peers polled this round have sent; a complete greeting is answered (and
        // its session served) in arrival order, an incomplete one past its deadline is dropped.
        std::vector<PendingPeer> ready;
        const auto afterPoll = Clock::now();
        for (size_t i = 0; i < polledPending; ++i) {
            PendingPeer& p = handshaking[i];
            GreetingState st = fds[3 + i].revents ? readGreeting(p) : GreetingState::kWaiting;
            if (st == GreetingState::kWaiting && afterPoll >= p.deadline) {
                log("handshake with " + p.peer + " failed: no complete greeting within " +
                    std::to_string(opt.handshakeTimeoutMs) + " ms");
                st = GreetingState::kDrop;
            }
            if (st == GreetingState::kComplete) ready.push_back(std::move(p));  // leaves p.s invalid
            if (st == GreetingState::kDrop) p.s.close();
        }
        std::erase_if(handshaking, [](const PendingPeer& p) { return !p.s.valid(); });
        if (fds[1].revents & POLLIN) acceptPeers();
        for (PendingPeer& p : ready) {
            if (stopping) break;
            serveConnection(std::move(p));
        }
        if (stopping) break;
        if (!ready.empty()) {
            nextPing = Clock::now() + std::chrono::milliseconds(opt.pingPeriodMs);
            continue;
        }
        if (tracker.connected() && Clock::now() >= nextPing) {
            try {
                pollPending();
            } catch (const RpcError& e) {
                if (e.kind() != RpcError::Kind::kInterrupted) dropTracker(e.what());
            }
            nextPing = Clock::now() + std::chrono::milliseconds(opt.pingPeriodMs);
        }
    }
    handshaking.clear();
    tracker.close();
    registered = false;
}

// ---------------------------------------------------------------------------------------------

RpcServer::RpcServer(RpcServerOptions options, std::shared_ptr<MeasureExecutor> executor)
    : m_impl(std::make_unique<Impl>()) {
    m_impl->opt = std::move(options);
    m_impl->executor = std::move(executor);
    TB_CHECK(m_impl->executor) << "RpcServer needs a MeasureExecutor";
}

RpcServer::~RpcServer() { stop(); }

void RpcServer::start() {
    Impl& d = *m_impl;
    TB_CHECK(!d.thread.joinable()) << "RpcServer::start called twice";
    TB_USER_CHECK(!d.useTracker() || !d.opt.key.empty()) << "an RPC server registering with a tracker needs a --key";
    TB_USER_CHECK(d.opt.key.find_first_of(" \t\r\n") == std::string::npos)
        << "the device key '" << d.opt.key << "' must not contain whitespace";
    TB_USER_CHECK(d.opt.token.find_first_of(" \t\r\n") == std::string::npos) << "the token must not contain whitespace";
    d.listen = listenTcp(d.opt.host, d.opt.port, d.opt.portEnd, &d.port, 16);
    d.log("bind to " + d.opt.host + ":" + std::to_string(d.port));
    d.thread = std::thread([&d] { d.run(); });
}

void RpcServer::stop() {
    Impl& d = *m_impl;
    d.stopping = true;
    d.wake.wake();
    if (d.thread.joinable()) d.thread.join();
    d.listen.close();
}

int RpcServer::port() const { return m_impl->port; }
bool RpcServer::registered() const { return m_impl->registered; }
long long RpcServer::sessionsServed() const { return m_impl->sessions; }
long long RpcServer::registrations() const { return m_impl->registrations; }
std::string RpcServer::currentMatchKey() const { return m_impl->currentKey(); }

}  // namespace tb::rpc
