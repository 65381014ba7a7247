// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/check_blob.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "engine/support/error.h"

namespace tb::measure {

static_assert(std::endian::native == std::endian::little, "the check blob is written in host order (little-endian)");

namespace {


constexpr char kCheckMagic[4] = {'T', 'B', 'C', 'K'};
constexpr uint32_t kCheckVersion = 1;

template <class T>
void put(std::string& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}

void putArrays(std::string& out, const std::vector<std::vector<float>>& arrays) {
    put<uint32_t>(out, static_cast<uint32_t>(arrays.size()));
    for (const auto& a : arrays) {
        put<uint64_t>(out, a.size());
        out.append(reinterpret_cast<const char*>(a.data()), a.size() * sizeof(float));
    }
}

class Reader {
public:
    explicit Reader(std::string_view s) : m_s(s) {}
    template <class T>
    T get(const char* what) {
        TB_USER_CHECK(m_s.size() - m_pos >= sizeof(T)) << "check blob truncated while reading " << what;
        T v;
        std::memcpy(&v, m_s.data() + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }
    std::vector<std::vector<float>> arrays(const char* what) {
        const uint32_t n = get<uint32_t>(what);
        TB_USER_CHECK(n <= 4096) << "check blob lists " << n << " " << what << " (at most 4096)";
        std::vector<std::vector<float>> out(n);
        for (auto& a : out) {
            const uint64_t count = get<uint64_t>(what);
            TB_USER_CHECK(count <= (m_s.size() - m_pos) / sizeof(float)) << "check blob truncated in " << what;
            a.resize(size_t(count));
            if (count > 0) std::memcpy(a.data(), m_s.data() + m_pos, size_t(count) * sizeof(float));
            m_pos += size_t(count) * sizeof(float);
        }
        return out;
    }
    bool atEnd() const { return m_pos == m_s.size(); }

private:
    std::string_view m_s;
    size_t m_pos = 0;
};

}  // namespace

std::string encodeCheckBlob(const CheckSpec& check) {
    std::string out(kCheckMagic, 4);
    put<uint32_t>(out, kCheckVersion);
    put<double>(out, check.rtol);
    put<double>(out, check.atol);
    putArrays(out, check.inputs);
    putArrays(out, check.expected);
    return out;
}

CheckSpec decodeCheckBlob(std::string_view blob) {
    TB_USER_CHECK(blob.size() >= 8 && std::memcmp(blob.data(), kCheckMagic, 4) == 0)
        << "not a check blob (no TBCK magic)";
    Reader r(blob.substr(4));
    const uint32_t version = r.get<uint32_t>("the version");
    TB_USER_CHECK(version == kCheckVersion)
        << "check blob version " << version << " (expected " << kCheckVersion << ")";
    CheckSpec c;
    c.rtol = r.get<double>("rtol");
    c.atol = r.get<double>("atol");
    TB_USER_CHECK(std::isfinite(c.rtol) && std::isfinite(c.atol) && c.rtol >= 0 && c.atol >= 0)
        << "check blob tolerances must be finite and >= 0";
    c.inputs = r.arrays("inputs");
    c.expected = r.arrays("expected outputs");
    TB_USER_CHECK(r.atEnd()) << "check blob has trailing bytes";
    return c;
}

}  // namespace tb::measure
