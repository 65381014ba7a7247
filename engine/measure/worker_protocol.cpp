// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/worker_protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "engine/support/error.h"

namespace tb::measure::detail {
namespace {

class Writer {
public:
    template <class T>
    void pod(const T& v) {
        m_s.append(reinterpret_cast<const char*>(&v), sizeof(T));
    }
    void str(const std::string& s) {
        pod<uint64_t>(s.size());
        m_s += s;
    }
    template <class T>
    void vec(const std::vector<T>& v) {
        pod<uint64_t>(v.size());
        m_s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    }
    std::string take() { return std::move(m_s); }

private:
    std::string m_s;
};

class Reader {
public:
    explicit Reader(const std::string& s) : m_s(s) {}
    template <class T>
    T pod() {
        TB_CHECK(m_pos + sizeof(T) <= m_s.size()) << "truncated worker message";
        T v;
        std::memcpy(&v, m_s.data() + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }
    std::string str() {
        const uint64_t n = pod<uint64_t>();
        TB_CHECK(m_pos + n <= m_s.size()) << "truncated worker message";
        std::string r = m_s.substr(m_pos, n);
        m_pos += n;
        return r;
    }
    template <class T>
    std::vector<T> vec() {
        const uint64_t n = pod<uint64_t>();
        TB_CHECK(n <= (m_s.size() - m_pos) / sizeof(T)) << "truncated worker message";
        std::vector<T> v(n);
        // An empty vector's data() may be null, which memcpy must not get even for 0 bytes (UBSan).
        if (n > 0) std::memcpy(v.data(), m_s.data() + m_pos, n * sizeof(T));
        m_pos += n * sizeof(T);
        return v;
    }

private:
    const std::string& m_s;
    size_t m_pos = 0;
};

}  // namespace

std::string encode(const RunRequest& r) {
    Writer w;
    w.pod(kWorkerMagic);
    w.str(r.symbol);
    w.vec(r.object);
    w.vec(r.argElements);
    w.pod<int32_t>(r.timer.number);
    w.pod<int32_t>(r.timer.repeat);
    w.pod<int32_t>(r.timer.repeatsToCooldown);
    w.pod<double>(r.timer.minRepeatMs);
    w.pod<double>(r.timer.cooldownIntervalMs);
    w.pod<uint8_t>(r.timer.rejectPreempted);
    w.pod<double>(r.timer.abandonAboveS);
    w.pod<double>(r.timer.screenMs);
    w.pod<double>(r.timer.screenAboveS);
    w.pod<int32_t>(r.timer.slices);
    w.pod<uint8_t>(r.flushCache);
    w.vec(r.flushArgs);
    w.pod<uint64_t>(r.seed);
    w.pod<uint8_t>(r.hasCheck);
    if (r.hasCheck) {
        w.pod<uint64_t>(r.check.inputs.size());
        for (auto& v : r.check.inputs) w.vec(v);
        w.pod<uint64_t>(r.check.expected.size());
        for (auto& v : r.check.expected) w.vec(v);
        w.pod<double>(r.check.rtol);
        w.pod<double>(r.check.atol);
    }
    return w.take();
}

RunRequest decodeRequest(const std::string& payload) {
    Reader rd(payload);
    TB_CHECK(rd.pod<uint32_t>() == kWorkerMagic)
        << "the measure worker got a request of another protocol version (a tunebench-worker and a caller from different builds?)";
    RunRequest r;
    r.symbol = rd.str();
    r.object = rd.vec<uint8_t>();
    r.argElements = rd.vec<int64_t>();
    r.timer.number = rd.pod<int32_t>();
    r.timer.repeat = rd.pod<int32_t>();
    r.timer.repeatsToCooldown = rd.pod<int32_t>();
    r.timer.minRepeatMs = rd.pod<double>();
    r.timer.cooldownIntervalMs = rd.pod<double>();
    r.timer.rejectPreempted = rd.pod<uint8_t>();
    r.timer.abandonAboveS = rd.pod<double>();
    r.timer.screenMs = rd.pod<double>();
    r.timer.screenAboveS = rd.pod<double>();
    r.timer.slices = rd.pod<int32_t>();
    r.flushCache = rd.pod<uint8_t>();
    r.flushArgs = rd.vec<int32_t>();
    r.seed = rd.pod<uint64_t>();
    r.hasCheck = rd.pod<uint8_t>();
    if (r.hasCheck) {
        r.check.inputs.resize(rd.pod<uint64_t>());
        for (auto& v : r.check.inputs) v = rd.vec<float>();
        r.check.expected.resize(rd.pod<uint64_t>());
        for (auto& v : r.check.expected) v = rd.vec<float>();
        r.check.rtol = rd.pod<double>();
        r.check.atol = rd.pod<double>();
    }
    return r;
}

std::string encode(const RunReply& r) {
    Writer w;
    w.pod(kWorkerMagic);
    w.pod<int32_t>(r.errorNo);
    w.str(r.message);
    w.vec(r.costs);
    return w.take();
}

RunReply decodeReply(const std::string& payload) {
    Reader rd(payload);
    TB_CHECK(rd.pod<uint32_t>() == kWorkerMagic)
        << "the measure worker replied in another protocol version (a tunebench-worker and a caller from different builds?)";
    RunReply r;
    r.errorNo = rd.pod<int32_t>();
    r.message = rd.str();
    r.costs = rd.vec<double>();
    return r;
}

bool writeFrame(int fd, const std::string& payload) {
    std::string frame;
    const uint64_t n = payload.size();
    frame.append(reinterpret_cast<const char*>(&n), sizeof(n));
    frame += payload;
    size_t off = 0;
    while (off < frame.size()) {
        ssize_t w = send(fd, frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        off += size_t(w);
    }
    return true;
}

int readFrame(int fd, std::string* payload, double timeoutMs) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::duration<double, std::milli>(timeoutMs < 0 ? 0 : timeoutMs);
    std::string buf;
    uint64_t need = sizeof(uint64_t);
    bool haveHeader = false;
    char tmp[65536];
    for (;;) {
        if (buf.size() >= need) {
            if (!haveHeader) {
                std::memcpy(&need, buf.data(), sizeof(uint64_t));
                buf.erase(0, sizeof(uint64_t));
                haveHeader = true;
                if (buf.size() >= need) {
                    *payload = std::move(buf);
                    return 1;
                }
            } else {
                *payload = std::move(buf);
                return 1;
            }
        }
        int waitMs = -1;
        if (timeoutMs >= 0) {
            const double left = std::chrono::duration<double, std::milli>(deadline - clock::now()).count();
            if (left <= 0) return -1;
            waitMs = static_cast<int>(left) + 1;
        }
        pollfd p{fd, POLLIN, 0};
        const int pr = poll(&p, 1, waitMs);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) return 0;
        if (pr == 0) return -1;
        const size_t want = std::min<uint64_t>(sizeof(tmp), need - buf.size() + (haveHeader ? 0 : 0));
        ssize_t r = read(fd, tmp, want ? want : sizeof(tmp));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return 0;
        buf.append(tmp, size_t(r));
    }
}

}  // namespace tb::measure::detail
