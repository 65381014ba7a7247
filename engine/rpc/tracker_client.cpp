// SPDX-License-Identifier: Apache-2.0
#include "engine/rpc/tracker_client.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <thread>

namespace tb::rpc {

namespace {

// Replies larger than this are refused (a SUMMARY of thousands of servers stays far below).
constexpr std::int32_t kMaxReplyBytes = 64 << 20;

// Python len() of a str: code points, i.e. UTF-8 bytes that are not continuation bytes.
size_t pyLen(const std::string& s) {
    return size_t(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
}

std::string ljust(const std::string& s, size_t width) {
    const size_t n = pyLen(s);
    return n >= width ? s : s + std::string(width - n, ' ');
}

std::string rjust(const std::string& s, size_t width) {
    const size_t n = pyLen(s);
    return n >= width ? s : std::string(width - n, ' ') + s;
}

long long countField(const Json& entry, const char* name, const std::string& key) {
    auto it = entry.find(name);
    if (it == entry.end() || !it->is_number_integer())
        throw RpcError(RpcError::Kind::kProtocol, "tracker summary: queue '" + key + "' lacks an integer '" + name + "'");
    return it->get<long long>();
}

int portFromJson(const Json& v) {
    if (v.is_number_integer()) return v.get<int>();
    if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        char* end = nullptr;
        const long p = std::strtol(s.c_str(), &end, 10);
        if (!s.empty() && end && *end == '\0' && p >= 0 && p <= 65535) return int(p);
    }
    return -1;
}

}  // namespace

int ServerInfo::port() const {
    auto it = info.find("addr");
    if (it == info.end() || !it->is_array() || it->size() < 2) return -1;
    return portFromJson((*it)[1]);
}

TrackerSummary TrackerSummary::fromJson(const Json& status) {
    TrackerSummary s;
    s.raw = status;
    if (!status.is_object()) throw RpcError(RpcError::Kind::kProtocol, "tracker summary is not a dict");
    auto q = status.find("queue_info");
    auto srv = status.find("server_info");
    if (q == status.end() || !q->is_object()) throw RpcError(RpcError::Kind::kProtocol, "tracker summary lacks queue_info");
    if (srv == status.end() || !srv->is_array()) throw RpcError(RpcError::Kind::kProtocol, "tracker summary lacks server_info");
    for (auto it = q->begin(); it != q->end(); ++it) {
        if (!it.value().is_object())
            throw RpcError(RpcError::Kind::kProtocol, "tracker summary: queue '" + it.key() + "' is not a dict");
        s.queues.push_back({it.key(), countField(it.value(), "free", it.key()), countField(it.value(), "pending", it.key())});
    }
    for (const auto& item : *srv) {
        if (!item.is_object() || !item.contains("key") || !item["key"].is_string())
            throw RpcError(RpcError::Kind::kProtocol, "tracker summary: a server entry has no string 'key'");
        ServerInfo info;
        info.key = item["key"].get<std::string>();
        info.info = item;
        if (auto a = item.find("addr"); a != item.end() && a->is_array())
            for (const auto& e : *a) info.addr.push_back(pyStr(e));
        s.servers.push_back(std::move(info));
    }
    return s;
}

const QueueInfo* TrackerSummary::queue(const std::string& key) const {
    for (const auto& q : queues)
        if (q.key == key) return &q;
    return nullptr;
}

std::string textSummary(const TrackerSummary& summary, SummaryLayout layout) {
    const std::string rule30(30, '-');
    std::string res;
    res += "Server List\n";
    res += rule30 + "\n";
    res += "server-address           key\n";
    res += rule30 + "\n";
    std::vector<const ServerInfo*> servers;
    for (const auto& s : summary.servers) servers.push_back(&s);
    std::stable_sort(servers.begin(), servers.end(), [](const ServerInfo* a, const ServerInfo* b) { return a->key < b->key; });
    std::map<std::string, long long> total;
    for (const ServerInfo* s : servers) {
        std::string addr;
        for (size_t i = 0; i < s->addr.size(); ++i) addr += (i ? ":" : "") + s->addr[i];
        res += (layout == SummaryLayout::kCurrent ? ljust(addr, 21) : rjust(addr, 21)) + "    ";
        res += s->key + "\n";
        // 'server:rasp3b' -> 'rasp3b' (TVM takes the second ':'-separated field).
        const size_t a = s->key.find(':');
        if (a != std::string::npos) {
            const size_t b = s->key.find(':', a + 1);
            ++total[s->key.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1)];
        }
    }
    res += rule30 + "\n";
    res += "\n";

    std::vector<const QueueInfo*> keys;
    size_t maxKeyLen = 0;
    for (const auto& q : summary.queues) {
        keys.push_back(&q);
        maxKeyLen = std::max(maxKeyLen, pyLen(q.key));
    }
    std::sort(keys.begin(), keys.end(), [](const QueueInfo* a, const QueueInfo* b) { return a->key < b->key; });
    res += "Queue Status\n";
    const std::string title = ljust("key", maxKeyLen) + "   total  free  pending\n";
    const std::string rule = std::string(pyLen(title), '-') + "\n";
    res += rule + title + rule;
    for (const QueueInfo* q : keys) {
        const long long t = total.count(q->key) ? total[q->key] : 0;
        if (t || q->pending)
            res += ljust(q->key, maxKeyLen) + "   " + ljust(std::to_string(t), 5) + "  " + ljust(std::to_string(q->free), 4) +
                   "  " + ljust(std::to_string(q->pending), 7) + "\n";
    }
    res += rule;
    return res;
}

// ---------------------------------------------------------------------------------------------

TrackerSession TrackerSession::connect(const std::string& host, int port, const ConnectOptions& options) {
    TrackerSession s;
    s.m_host = host;
    s.m_port = port;
    s.m_options = options;
    s.m_interruptFd = options.interruptFd;
    s.connectNow();
    return s;
}

void TrackerSession::connectNow() {
    m_sock.close();
    const Deadline giveUp = deadlineAfterMs(std::max(0, m_options.retryTimeoutMs));
    for (;;) {
        try {
            m_sock = connectTcp(m_host, m_port, m_options.connectTimeoutMs);
            break;
        } catch (const RpcError& e) {
            const bool unresolvable = std::string(e.what()).rfind("cannot resolve", 0) == 0;
            if (unresolvable || Clock::now() + std::chrono::milliseconds(m_options.retryPeriodMs) > giveUp) throw;
            std::this_thread::sleep_for(std::chrono::milliseconds(m_options.retryPeriodMs));
        }
    }
    try {
        std::string magic;
        appendLe32(magic, kTrackerMagic);
        const Deadline d = deadlineAfterMs(m_options.ioTimeoutMs);
        sendAll(m_sock.fd(), magic.data(), magic.size(), d, m_interruptFd);
        char echo[4];
        recvAll(m_sock.fd(), echo, 4, d, m_interruptFd);
        if (readLe32(echo) != kTrackerMagic)
            throw RpcError(RpcError::Kind::kProtocol, m_host + ":" + std::to_string(m_port) + " is not an RPC tracker");
    } catch (const RpcError& e) {
        m_sock.close();
        if (e.kind() == RpcError::Kind::kClosed)
            throw RpcError(RpcError::Kind::kProtocol,
                           m_host + ":" + std::to_string(m_port) + " closed the connection during the tracker handshake");
        throw;
    }
}

Json TrackerSession::call(const Json& request, int timeoutMs) {
    if (!m_sock.valid()) throw RpcError(RpcError::Kind::kClosed, "not connected to the tracker");
    try {
        const std::string frame = trackerFrame(pyDumps(request));
        sendAll(m_sock.fd(), frame.data(), frame.size(), deadlineAfterMs(m_options.ioTimeoutMs), m_interruptFd);
        const Deadline d = deadlineAfterMs(timeoutMs);
        char hdr[4];
        recvAll(m_sock.fd(), hdr, 4, d, m_interruptFd);
        const std::int32_t n = readLe32(hdr);
        if (n <= 0 || n > kMaxReplyBytes)
            throw RpcError(RpcError::Kind::kProtocol, "tracker sent an invalid frame length " + std::to_string(n));
        std::string body(size_t(n), '\0');
        recvAll(m_sock.fd(), body.data(), body.size(), d, m_interruptFd);
        try {
            return Json::parse(body);
        } catch (const std::exception& e) {
            throw RpcError(RpcError::Kind::kProtocol, std::string("tracker sent malformed JSON: ") + e.what());
        }
    } catch (const RpcError&) {
        m_sock.close();  // the stream position is unknown now: a later call must reconnect
        throw;
    }
}

void TrackerSession::expectSuccess(const Json& reply, const char* what) {
    if (!(reply.is_number_integer() && reply.get<long long>() == 0)) {
        m_sock.close();
        throw RpcError(RpcError::Kind::kProtocol, std::string(what) + ": tracker replied " + pyDumps(reply));
    }
}

void TrackerSession::ping() { expectSuccess(call(Json::array({int(TrackerCode::kPing)}), m_options.ioTimeoutMs), "PING"); }

DeviceAssignment TrackerSession::request(const std::string& key, int priority, int timeoutMs) {
    if (!m_sock.valid()) connectNow();
    const Json reply = call(Json::array({int(TrackerCode::kRequest), key, "", priority}), timeoutMs);
    if (!reply.is_array() || reply.size() != 2 || reply[0] != 0 || !reply[1].is_array() || reply[1].size() != 3 ||
        !reply[1][0].is_string() || !reply[1][2].is_string() || portFromJson(reply[1][1]) < 0) {
        m_sock.close();
        throw RpcError(RpcError::Kind::kProtocol, "REQUEST: invalid tracker reply " + pyDumps(reply));
    }
    return {reply[1][0].get<std::string>(), portFromJson(reply[1][1]), reply[1][2].get<std::string>()};
}

TrackerSummary TrackerSession::summary() {
    const Json reply = call(Json::array({int(TrackerCode::kSummary)}), m_options.ioTimeoutMs);
    if (!reply.is_array() || reply.size() != 2 || reply[0] != 0) {
        m_sock.close();
        throw RpcError(RpcError::Kind::kProtocol, "SUMMARY: invalid tracker reply " + pyDumps(reply));
    }
    return TrackerSummary::fromJson(reply[1]);
}

bool TrackerSession::stop(const std::string& stopKey) {
    const Json reply = call(Json::array({int(TrackerCode::kStop), stopKey}), m_options.ioTimeoutMs);
    return reply.is_number_integer() && reply.get<long long>() == 0;
}

void TrackerSession::updateInfo(const std::string& deviceKey, int port, const std::optional<std::string>& customAddr) {
    Json info = Json::object();
    info["key"] = "server:" + deviceKey;
    info["addr"] = Json::array({customAddr ? Json(*customAddr) : Json(nullptr), port});
    expectSuccess(call(Json::array({int(TrackerCode::kUpdateInfo), info}), m_options.ioTimeoutMs), "UPDATE_INFO");
}

void TrackerSession::put(const std::string& deviceKey, int port, const std::string& matchKey,
                         const std::optional<std::string>& customAddr) {
    const Json req = Json::array({int(TrackerCode::kPut), deviceKey, Json::array({port, matchKey}),
                                  customAddr ? Json(*customAddr) : Json(nullptr)});
    expectSuccess(call(req, m_options.ioTimeoutMs), "PUT");
}

std::vector<std::string> TrackerSession::pendingMatchKeys() {
    const Json reply = call(Json::array({int(TrackerCode::kGetPendingMatchKeys)}), m_options.ioTimeoutMs);
    if (!reply.is_array()) {
        m_sock.close();
        throw RpcError(RpcError::Kind::kProtocol, "GET_PENDING_MATCHKEYS: invalid tracker reply " + pyDumps(reply));
    }
    std::vector<std::string> keys;
    for (const auto& k : reply)
        if (k.is_string()) keys.push_back(k.get<std::string>());
    return keys;
}

}  // namespace tb::rpc
