// SPDX-License-Identifier: Apache-2.0
#include "engine/rpc/protocol.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <random>

namespace tb::rpc {

namespace {

void appendHex4(std::string& out, unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", v & 0xffffu);
    out += buf;
}

// Decodes one UTF-8 sequence at s[i]; returns the code point and advances i. Invalid bytes give
// U+FFFD (nlohmann's parser already rejects ill-formed UTF-8, so this only guards our own strings).
unsigned decodeUtf8(std::string_view s, size_t& i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xe ? 3 : (b0 >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + size_t(len) > s.size()) {
        ++i;
        return 0xfffd;
    }
    unsigned cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1f) : len == 3 ? (b0 & 0x0f) : (b0 & 0x07);
    for (int k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + size_t(k)]);
        if ((b & 0xc0) != 0x80) {
            ++i;
            return 0xfffd;
        }
        cp = (cp << 6) | (b & 0x3f);
    }
    i += size_t(len);
    return cp;
}

void appendPyString(std::string& out, std::string_view s) {
    out.push_back('"');
    for (size_t i = 0; i < s.size();) {
        const char c = s[i];
        const auto uc = static_cast<unsigned char>(c);
        if (uc < 0x80) {
            ++i;
            switch (c) {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                default:
                    if (uc < 0x20 || uc == 0x7f)
                        appendHex4(out, uc);
                    else
                        out.push_back(c);
            }
            continue;
        }
        const unsigned cp = decodeUtf8(s, i);
        if (cp > 0xffff) {
            const unsigned v = cp - 0x10000;
            appendHex4(out, 0xd800 + (v >> 10));
            appendHex4(out, 0xdc00 + (v & 0x3ff));
        } else {
            appendHex4(out, cp);
        }
    }
    out.push_back('"');
}

void dumpTo(std::string& out, const Json& v) {
    switch (v.type()) {
        case Json::value_t::null: out += "null"; break;
        case Json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; break;
        case Json::value_t::number_integer: out += std::to_string(v.get<std::int64_t>()); break;
        case Json::value_t::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); break;
        case Json::value_t::number_float: {
            const double d = v.get<double>();
            if (std::isnan(d))
                out += "NaN";
            else if (std::isinf(d))
                out += d > 0 ? "Infinity" : "-Infinity";
            else
                out += pyFloatRepr(d);
            break;
        }
        case Json::value_t::string: appendPyString(out, v.get_ref<const std::string&>()); break;
        case Json::value_t::array: {
            out.push_back('[');
            bool first = true;
            for (const auto& e : v) {
                if (!first) out += ", ";
                first = false;
                dumpTo(out, e);
            }
            out.push_back(']');
            break;
        }
        case Json::value_t::object: {
            out.push_back('{');
            bool first = true;
            for (auto it = v.begin(); it != v.end(); ++it) {
                if (!first) out += ", ";
                first = false;
                appendPyString(out, it.key());
                out += ": ";
                dumpTo(out, it.value());
            }
            out.push_back('}');
            break;
        }
        case Json::value_t::binary:
        case Json::value_t::discarded: out += "null"; break;
    }
}

}  // namespace

std::string pyDumps(const Json& value) {
    std::string out;
    dumpTo(out, value);
    return out;
}

std::string pyFloatRepr(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    // Shortest round-trip digits in scientific form, e.g. "4.713140226013541e-01".
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    std::string sign;
    if (!sci.empty() && sci[0] == '-') {
        sign = "-";
        sci.erase(0, 1);
    }
    const size_t epos = sci.find('e');
    std::string digits = sci.substr(0, epos);
    const int exp10 = std::stoi(sci.substr(epos + 1));
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    const int decpt = exp10 + 1;  // position of the decimal point relative to the digit string
    const int nd = int(digits.size());
    std::string out = sign;
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out += "0." + std::string(size_t(-decpt), '0') + digits;
        } else if (decpt >= nd) {
            out += digits + std::string(size_t(decpt - nd), '0') + ".0";
        } else {
            out += digits.substr(0, size_t(decpt)) + "." + digits.substr(size_t(decpt));
        }
    } else {
        out += digits.substr(0, 1);
        if (nd > 1) out += "." + digits.substr(1);
        const int e = decpt - 1;
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
        out += eb;
    }
    return out;
}

std::string pyStr(const Json& value) {
    switch (value.type()) {
        case Json::value_t::string: return value.get<std::string>();
        case Json::value_t::null: return "None";
        case Json::value_t::boolean: return value.get<bool>() ? "True" : "False";
        case Json::value_t::number_float: return pyFloatRepr(value.get<double>());
        default: return pyDumps(value);
    }
}

std::string randomKey(std::string_view prefix) {
    static std::mutex mu;
    static std::mt19937_64 gen{std::random_device{}()};
    std::uint64_t bits;
    {
        std::lock_guard<std::mutex> lock(mu);
        bits = gen();
    }
    // 53 random bits in [0, 1), as Python's random.random().
    const double r = double(bits >> 11) * (1.0 / 9007199254740992.0);
    return std::string(prefix) + ":" + pyFloatRepr(r);
}

std::pair<std::string, std::string> splitRandomKey(std::string_view key) {
    const size_t pos = key.rfind(':');
    if (pos == std::string_view::npos) return {std::string(key), std::string()};
    return {std::string(key.substr(0, pos)), std::string(key.substr(pos + 1))};
}

std::string trackerFrame(std::string_view json) {
    std::string out;
    out.reserve(json.size() + 4);
    appendLe32(out, static_cast<std::int32_t>(json.size()));
    out.append(json);
    return out;
}

}  // namespace tb::rpc
