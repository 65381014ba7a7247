// SPDX-License-Identifier: Apache-2.0
#include "engine/record/json_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "engine/support/error.h"

namespace tb::record {

namespace {

// std::to_chars/from_chars: never affected by the C locale (QCoreApplication calls setlocale).
bool readsBack(const char* first, const char* last, double v) {
    double back = 0;
    auto r = std::from_chars(first, last, back);
    return r.ec == std::errc() && back == v;
}

void appendHex4(std::string& out, unsigned cp) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", cp & 0xffffu);
    out += buf;
}

// Decodes one UTF-8 sequence at s[i]; returns the code point and advances i, or -1 (and i+1) on
// invalid input.
long decodeUtf8(std::string_view s, size_t& i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    const int n = b0 < 0x80 ? 0 : (b0 >> 5) == 6 ? 1 : (b0 >> 4) == 14 ? 2 : (b0 >> 3) == 30 ? 3 : -1;
    if (n == 0) {
        ++i;
        return b0;
    }
    if (n < 0 || i + size_t(n) >= s.size()) {
        ++i;
        return -1;
    }
    long cp = n == 1 ? (b0 & 0x1f) : n == 2 ? (b0 & 0x0f) : (b0 & 0x07);
    for (int k = 1; k <= n; ++k) {
        const auto b = static_cast<unsigned char>(s[i + size_t(k)]);
        if ((b >> 6) != 2) {
            ++i;
            return -1;
        }
        cp = (cp << 6) | (b & 0x3f);
    }
    i += size_t(n) + 1;
    return cp;
}

template <class J>
void appendValue(std::string& out, const J& v, JsonStyle style) {
    switch (v.type()) {
    case nlohmann::detail::value_t::null: out += "null"; break;
    case nlohmann::detail::value_t::boolean: out += v.template get<bool>() ? "true" : "false"; break;
    case nlohmann::detail::value_t::number_integer: out += std::to_string(v.template get<std::int64_t>()); break;
    case nlohmann::detail::value_t::number_unsigned: out += std::to_string(v.template get<std::uint64_t>()); break;
    case nlohmann::detail::value_t::number_float: {
        const double d = v.template get<double>();
        out += style == JsonStyle::Tvm ? formatDoubleTvm(d) : formatDoublePython(d);
        break;
    }
    case nlohmann::detail::value_t::string: appendJsonString(out, v.template get_ref<const std::string&>(), style); break;
    case nlohmann::detail::value_t::array: {
        out += '[';
        bool first = true;
        for (const auto& e : v) {
            if (!first) out += ", ";
            first = false;
            appendValue(out, e, style);
        }
        out += ']';
        break;
    }
    case nlohmann::detail::value_t::object: {
        out += '{';
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!first) out += ", ";
            first = false;
            appendJsonString(out, it.key(), style);
            out += ": ";
            appendValue(out, it.value(), style);
        }
        out += '}';
        break;
    }
    default: TB_CHECK(false) << "JSON value of type " << v.type_name() << " cannot be written to a log";
    }
}

}  // namespace

std::string formatDoubleTvm(double v) {
    TB_CHECK(std::isfinite(v)) << "non-finite number " << v << " in a TVM log line";
    char buf[64];
    for (int precision = 6; precision <= 17; ++precision) {
        auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, precision);
        TB_CHECK(r.ec == std::errc());
        if (readsBack(buf, r.ptr, v)) return std::string(buf, r.ptr);
    }
    TB_CHECK(false) << "no %g precision reads back " << v;
    return {};
}

std::string formatDoublePython(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    // Shortest round-trip digits, then Python's float_repr_style 'r' layout: fixed notation for
    // decimal exponents in [-4, 16), scientific with a signed, at least 2-digit exponent otherwise.
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    TB_CHECK(r.ec == std::errc());
    std::string_view s(buf, size_t(r.ptr - buf));
    std::string out;
    if (s.front() == '-') {
        out += '-';
        s.remove_prefix(1);
    }
    const size_t e = s.find('e');
    std::string digits;
    for (char c : s.substr(0, e))
        if (c != '.') digits += c;
    int exp = 0;
    std::from_chars(s.data() + e + 1 + (s[e + 1] == '+' ? 1 : 0), s.data() + s.size(), exp);
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            out += "0.";
            out.append(size_t(-exp - 1), '0');
            out += digits;
        } else {
            const size_t intLen = size_t(exp) + 1;
            if (digits.size() <= intLen) {
                out += digits;
                out.append(intLen - digits.size(), '0');
                out += ".0";
            } else {
                out += digits.substr(0, intLen);
                out += '.';
                out += digits.substr(intLen);
            }
        }
    } else {
        out += digits[0];
        if (digits.size() > 1) {
            out += '.';
            out += digits.substr(1);
        }
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        out += eb;
    }
    return out;
}

void appendJsonString(std::string& out, std::string_view s, JsonStyle style) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
        const char c = s[i];
        switch (c) {
        case '"': out += "\\\""; ++i; continue;
        case '\\': out += "\\\\"; ++i; continue;
        case '\n': out += "\\n"; ++i; continue;
        case '\r': out += "\\r"; ++i; continue;
        case '\t': out += "\\t"; ++i; continue;
        default: break;
        }
        const auto uc = static_cast<unsigned char>(c);
        if (style == JsonStyle::Python && (c == '\b' || c == '\f')) {
            out += c == '\b' ? "\\b" : "\\f";
            ++i;
        } else if (uc < 0x20) {
            // dmlc would write these raw (invalid JSON); no TVM log contains them.
            appendHex4(out, uc);
            ++i;
        } else if (uc < 0x80 || style == JsonStyle::Tvm) {
            out += c;
            ++i;
        } else {
            const size_t start = i;
            const long cp = decodeUtf8(s, i);
            if (cp < 0) {
                appendHex4(out, static_cast<unsigned char>(s[start]));
            } else if (cp >= 0x10000) {
                const long u = cp - 0x10000;
                appendHex4(out, unsigned(0xd800 + (u >> 10)));
                appendHex4(out, unsigned(0xdc00 + (u & 0x3ff)));
            } else {
                appendHex4(out, unsigned(cp));
            }
        }
    }
    out += '"';
}

void appendJson(std::string& out, const nlohmann::json& v, JsonStyle style) { appendValue(out, v, style); }
void appendJson(std::string& out, const nlohmann::ordered_json& v, JsonStyle style) { appendValue(out, v, style); }

std::string dumpJson(const nlohmann::json& v, JsonStyle style) {
    std::string out;
    appendValue(out, v, style);
    return out;
}

std::string dumpJson(const nlohmann::ordered_json& v, JsonStyle style) {
    std::string out;
    appendValue(out, v, style);
    return out;
}

}  // namespace tb::record
