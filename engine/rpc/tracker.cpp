// SPDX-License-Identifier: Apache-2.0
#include "engine/rpc/tracker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/rpc/protocol.h"
#include "engine/rpc/socket.h"
#include "engine/support/error.h"

namespace tb::rpc {

namespace {

/// A request the peer got wrong: logged, then only that connection is closed.
class BadRequest : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Resource {
    std::uint64_t id = 0;
    int owner = 0;  // connection id of the server that PUT it
    Json addr;      // custom address or the owner's peer IP
    Json port;      // as sent (TVM's C++/Java servers send a string)
    std::string matchKey;
};

struct Waiter {
    double priority = 0;
    std::uint64_t seq = 0;
    int conn = 0;
};

// Highest priority first, FIFO among equal priorities (TVM's heap of (-priority, counter)).
struct WaiterOrder {
    bool operator()(const Waiter& a, const Waiter& b) const {
        if (a.priority != b.priority) return a.priority > b.priority;
        return a.seq < b.seq;
    }
};

struct Scheduler {
    std::deque<Resource> free;
    std::set<Waiter, WaiterOrder> waiting;
};

struct Conn {
    int id = 0;
    Socket sock;
    std::string peerIp;
    std::string name;  // "ip:port" for log lines
    std::string in, out;
    bool handshaken = false;
    bool dead = false;
    bool partial = false;
    Clock::time_point opened, partialSince;
    Json info = Json::object();
    std::vector<std::string> pending;                          // unclaimed match keys, PUT order
    std::vector<std::pair<std::string, std::uint64_t>> puts;  // (key, resource id) of every PUT
};

bool isIntegral(const Json& v, long long* out) {
    if (v.is_number_integer()) {
        *out = v.get<long long>();
        return true;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        // In range before the cast (fuzz_tracker: 1e83 cast to long long, UBSan); NaN fails both.
        if (d >= -9.2e18 && d <= 9.2e18 && d == double(static_cast<long long>(d))) {
            *out = static_cast<long long>(d);
            return true;
        }
    }
    return false;
}

const Json& arg(const Json& args, size_t i, const char* what) {
    if (i >= args.size()) throw BadRequest(std::string("missing argument ") + what);
    return args[i];
}

const std::string& stringArg(const Json& args, size_t i, const char* what) {
    const Json& v = arg(args, i, what);
    if (!v.is_string()) throw BadRequest(std::string(what) + " must be a string");
    return v.get_ref<const std::string&>();
}

}  // namespace

struct Tracker::Impl {
    TrackerOptions opt;
    std::string stopKey;
    int port = 0;
    Socket listen;
    WakePipe wake;
    std::thread thread;
    std::atomic<bool> stopRequested{false};
    mutable std::mutex mu;
    mutable std::condition_variable cv;
    bool running = false;  // guarded by mu

    // ---- state of the event thread only ----
    std::map<int, std::unique_ptr<Conn>> conns;
    int nextConnId = 1;
    std::uint64_t nextResourceId = 1, nextSeq = 0;
    std::vector<std::string> keyOrder;
    std::unordered_map<std::string, Scheduler> schedulers;
    bool remoteStop = false;

    void log(const std::string& line) {
        if (opt.log) opt.log(line);
    }

    Conn* alive(int id) {
        auto it = conns.find(id);
        return it == conns.end() || it->second->dead ? nullptr : it->second.get();
    }

    Scheduler& schedulerFor(const std::string& key) {
        auto it = schedulers.find(key);
        if (it == schedulers.end()) {
            keyOrder.push_back(key);
            it = schedulers.emplace(key, Scheduler{}).first;
        }
        return it->second;
    }

    void run();
    void acceptAll();
    void readConn(Conn& c);
    void processInput(Conn& c);
    void handleMessage(Conn& c, const std::string& text);
    void reply(Conn& c, const Json& value);
    void flush(Conn& c);
    void closeConn(Conn& c, const std::string& why);
    void schedule(const std::string& key);
    Json summary();
};

// ---------------------------------------------------------------------------------------------

void Tracker::Impl::closeConn(Conn& c, const std::string& why) {
    if (c.dead) return;
    if (!why.empty()) log(why + " from " + c.name + ", closing");
    c.dead = true;
    c.sock.close();
    // Its blocked requests die with it (TVM keeps them until a resource shows up).
    for (auto& [key, s] : schedulers)
        for (auto it = s.waiting.begin(); it != s.waiting.end();) it = it->conn == c.id ? s.waiting.erase(it) : std::next(it);
    // A server's offers are withdrawn, as TVM does for connections that sent UPDATE_INFO with a key.
    if (c.info.contains("key")) {
        for (const auto& [key, rid] : c.puts) {
            auto it = schedulers.find(key);
            if (it == schedulers.end()) continue;
            auto& free = it->second.free;
            free.erase(std::remove_if(free.begin(), free.end(), [rid = rid](const Resource& r) { return r.id == rid; }),
                       free.end());
        }
    }
}

void Tracker::Impl::reply(Conn& c, const Json& value) {
    if (c.dead) return;
    c.out += trackerFrame(pyDumps(value));
    if (static_cast<long long>(c.out.size()) > opt.maxPendingOutputBytes) closeConn(c, "Unread replies exceed the limit");
}

void Tracker::Impl::flush(Conn& c) {
    while (!c.dead && !c.out.empty()) {
        const ssize_t k = ::send(c.sock.fd(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
        if (k > 0) {
            c.out.erase(0, size_t(k));
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        closeConn(c, "");  // the peer is gone; TVM logs nothing either
        return;
    }
}

void Tracker::Impl::schedule(const std::string& key) {
    Scheduler& s = schedulers[key];
    while (!s.waiting.empty() && !s.free.empty()) {
        Resource r = std::move(s.free.front());
        s.free.pop_front();
        const Waiter w = *s.waiting.begin();
        s.waiting.erase(s.waiting.begin());
        Conn* requester = alive(w.conn);
        if (!requester) {  // cannot happen while closeConn drops waiters; kept as TVM's fallback
            s.free.push_back(std::move(r));
            continue;
        }
        reply(*requester, Json::array({0, Json::array({r.addr, r.port, r.matchKey})}));
        auto owner = conns.find(r.owner);
        if (owner != conns.end()) {
            auto& p = owner->second->pending;
            p.erase(std::remove(p.begin(), p.end(), r.matchKey), p.end());
        }
    }
}

Json Tracker::Impl::summary() {
    Json queue = Json::object();
    for (const auto& key : keyOrder) {
        const Scheduler& s = schedulers[key];
        Json entry = Json::object();
        entry["free"] = s.free.size();
        entry["pending"] = s.waiting.size();
        queue[key] = std::move(entry);
    }
    Json servers = Json::array();
    for (const auto& [id, c] : conns) {
        if (c->dead) continue;
        auto it = c->info.find("key");
        if (it != c->info.end() && it->is_string() && it->get_ref<const std::string&>().rfind("server", 0) == 0)
            servers.push_back(c->info);
    }
    Json result = Json::object();
    result["queue_info"] = std::move(queue);
    result["server_info"] = std::move(servers);
    return result;
}

void Tracker::Impl::handleMessage(Conn& c, const std::string& text) {
    Json args;
    try {
        args = Json::parse(text);
    } catch (const std::exception& e) {
        throw BadRequest(std::string("malformed JSON: ") + e.what());
    }
    if (!args.is_array() || args.empty()) throw BadRequest("a request must be a JSON array starting with a code");
    long long code = 0;
    if (!isIntegral(args[0], &code)) throw BadRequest("the tracker code must be an integer");

    switch (static_cast<TrackerCode>(code)) {
        case TrackerCode::kPut: {
            const std::string key = stringArg(args, 1, "key");
            const Json& value = arg(args, 2, "[port, matchkey]");
            if (!value.is_array() || value.size() != 2 || !value[1].is_string())
                throw BadRequest("PUT value must be [port, matchkey]");
            const std::string matchKey = value[1].get<std::string>();
            if (std::find(c.pending.begin(), c.pending.end(), matchKey) == c.pending.end()) c.pending.push_back(matchKey);
            Resource r;
            r.id = nextResourceId++;
            r.owner = c.id;
            r.addr = args.size() >= 4 && !args[3].is_null() ? args[3] : Json(c.peerIp);
            r.port = value[0];
            r.matchKey = matchKey;
            c.puts.emplace_back(key, r.id);
            schedulerFor(key).free.push_back(std::move(r));
            schedule(key);
            reply(c, 0);
            break;
        }
        case TrackerCode::kRequest: {
            const std::string key = stringArg(args, 1, "key");
            arg(args, 2, "user");  // accepted and ignored, as in TVM
            const Json& prio = arg(args, 3, "priority");
            if (!prio.is_number()) throw BadRequest("priority must be a number");
            schedulerFor(key).waiting.insert(Waiter{prio.get<double>(), nextSeq++, c.id});
            schedule(key);
            break;
        }
        case TrackerCode::kPing: reply(c, 0); break;
        case TrackerCode::kGetPendingMatchKeys: {
            Json keys = Json::array();
            for (const auto& k : c.pending) keys.push_back(k);
            reply(c, keys);
            break;
        }
        case TrackerCode::kStop: {
            const Json& key = arg(args, 1, "stop key");
            if (key.is_string() && key.get_ref<const std::string&>() == stopKey) {
                reply(c, 0);
                remoteStop = true;
                log("stop requested by " + c.name);
            } else {
                reply(c, -1);
            }
            break;
        }
        case TrackerCode::kUpdateInfo: {
            Json info = arg(args, 1, "info");
            if (!info.is_object()) throw BadRequest("UPDATE_INFO needs a dict");
            auto addr = info.find("addr");
            if (addr == info.end() || !addr->is_array() || addr->empty())
                throw BadRequest("UPDATE_INFO needs \"addr\": [host or null, port]");
            if ((*addr)[0].is_null()) (*addr)[0] = c.peerIp;
            for (auto it = info.begin(); it != info.end(); ++it) c.info[it.key()] = it.value();
            reply(c, 0);
            break;
        }
        case TrackerCode::kSummary: reply(c, Json::array({0, summary()})); break;
        default: throw BadRequest("unknown tracker code " + std::to_string(code));
    }
}

void Tracker::Impl::processInput(Conn& c) {
    if (!c.handshaken) {
        if (c.in.size() < 4) return;
        if (readLe32(c.in.data()) != kTrackerMagic) {
            closeConn(c, "Invalid magic");
            return;
        }
        c.in.erase(0, 4);
        c.handshaken = true;
        appendLe32(c.out, kTrackerMagic);
    }
    bool consumed = false;
    size_t pos = 0;
    while (!c.dead && c.in.size() - pos >= 4) {
        const std::int32_t n = readLe32(c.in.data() + pos);
        if (n <= 0 || n > opt.maxMessageBytes) {
            closeConn(c, "Invalid message size " + std::to_string(n));
            return;
        }
        if (c.in.size() - pos - 4 < size_t(n)) break;
        const std::string text = c.in.substr(pos + 4, size_t(n));
        pos += 4 + size_t(n);
        consumed = true;
        try {
            handleMessage(c, text);
        } catch (const std::exception& e) {
            closeConn(c, std::string("Error handling message (") + e.what() + ")");
            return;
        }
    }
    if (c.dead) return;
    c.in.erase(0, pos);
    if (c.in.empty()) {
        c.partial = false;
    } else if (!c.partial || consumed) {
        c.partial = true;
        c.partialSince = Clock::now();
    }
}

void Tracker::Impl::readConn(Conn& c) {
    char buf[65536];
    for (int round = 0; round < 16 && !c.dead; ++round) {
        const ssize_t k = ::recv(c.sock.fd(), buf, sizeof buf, 0);
        if (k > 0) {
            c.in.append(buf, size_t(k));
            processInput(c);
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        // EOF or error: the peer left. A half-received frame is simply dropped.
        closeConn(c, c.in.empty() ? "" : "Connection closed with an incomplete message");
        return;
    }
}

void Tracker::Impl::acceptAll() {
    for (;;) {
        std::string ip;
        Socket s = acceptTcp(listen.fd(), &ip);
        if (!s.valid()) return;
        const std::string name = ip + ":" + std::to_string([&] {
            sockaddr_storage ss{};
            socklen_t len = sizeof ss;
            ::getpeername(s.fd(), reinterpret_cast<sockaddr*>(&ss), &len);
            return ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                            : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
        }());
        size_t live = 0;
        for (const auto& [id, c] : conns) live += c->dead ? 0 : 1;
        if (live >= size_t(opt.maxConnections)) {
            log("Too many connections; refusing " + name);
            continue;  // s closes here
        }
        auto c = std::make_unique<Conn>();
        c->id = nextConnId++;
        c->sock = std::move(s);
        c->peerIp = ip;
        c->name = name;
        c->opened = Clock::now();
        conns.emplace(c->id, std::move(c));
    }
}

void Tracker::Impl::run() {
    std::vector<pollfd> fds;
    std::vector<int> ids;
    while (!stopRequested.load() && !remoteStop) {
        fds.clear();
        ids.clear();
        fds.push_back({wake.readFd(), POLLIN, 0});
        fds.push_back({listen.fd(), POLLIN, 0});
        const auto now = Clock::now();
        auto next = now + std::chrono::seconds(1);
        for (const auto& [id, c] : conns) {
            short ev = POLLIN;
            if (!c->out.empty()) ev |= POLLOUT;
            fds.push_back({c->sock.fd(), ev, 0});
            ids.push_back(id);
            if (!c->handshaken) next = std::min(next, c->opened + std::chrono::milliseconds(opt.handshakeTimeoutMs));
            if (c->partial) next = std::min(next, c->partialSince + std::chrono::milliseconds(opt.partialMessageTimeoutMs));
        }
        const auto waitMs = std::max<long long>(
            0, std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1);
        const int n = ::poll(fds.data(), fds.size(), int(waitMs));
        if (n < 0 && errno != EINTR) {
            log(std::string("poll failed: ") + std::strerror(errno));
            break;
        }
        if (fds[0].revents) wake.drain();
        if (fds[1].revents & POLLIN) acceptAll();
        for (size_t i = 0; i < ids.size(); ++i) {
            const short rev = fds[i + 2].revents;
            Conn* c = alive(ids[i]);
            if (!c || !rev) continue;
            if (rev & (POLLIN | POLLHUP | POLLERR)) readConn(*c);
        }
        const auto t = Clock::now();
        for (auto& [id, c] : conns) {
            if (c->dead) continue;
            flush(*c);
            if (!c->handshaken && t - c->opened > std::chrono::milliseconds(opt.handshakeTimeoutMs))
                closeConn(*c, "No handshake in time");
            else if (c->partial && t - c->partialSince > std::chrono::milliseconds(opt.partialMessageTimeoutMs))
                closeConn(*c, "Incomplete message timed out");
        }
        for (auto it = conns.begin(); it != conns.end();) it = it->second->dead ? conns.erase(it) : std::next(it);
    }
    // Stop: the STOP reply (and anything else queued) gets one last chance to leave, then all close.
    for (auto& [id, c] : conns) flush(*c);
    for (auto& [id, c] : conns) closeConn(*c, "");
    conns.clear();
    listen.close();
    {
        std::lock_guard<std::mutex> lock(mu);
        running = false;
    }
    cv.notify_all();
}

// ---------------------------------------------------------------------------------------------

Tracker::Tracker(TrackerOptions options) : m_impl(std::make_unique<Impl>()) {
    m_impl->opt = std::move(options);
    m_impl->stopKey = m_impl->opt.stopKey.empty() ? randomKey("tracker") : m_impl->opt.stopKey;
}

Tracker::~Tracker() { stop(); }

void Tracker::start() {
    Impl& d = *m_impl;
    TB_CHECK(!d.thread.joinable()) << "Tracker::start called twice";
    d.listen = listenTcp(d.opt.host, d.opt.port, d.opt.portEnd, &d.port);
    d.log("bind to " + d.opt.host + ":" + std::to_string(d.port));
    {
        std::lock_guard<std::mutex> lock(d.mu);
        d.running = true;
    }
    d.thread = std::thread([&d] { d.run(); });
}

void Tracker::stop() {
    Impl& d = *m_impl;
    d.stopRequested = true;
    d.wake.wake();
    if (d.thread.joinable()) d.thread.join();
}

bool Tracker::running() const {
    std::lock_guard<std::mutex> lock(m_impl->mu);
    return m_impl->running;
}

bool Tracker::waitStopped(int timeoutMs) const {
    std::unique_lock<std::mutex> lock(m_impl->mu);
    if (timeoutMs < 0) {
        m_impl->cv.wait(lock, [&] { return !m_impl->running; });
        return true;
    }
    return m_impl->cv.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return !m_impl->running; });
}

int Tracker::port() const { return m_impl->port; }
const std::string& Tracker::host() const { return m_impl->opt.host; }
const std::string& Tracker::stopKey() const { return m_impl->stopKey; }

}  // namespace tb::rpc
