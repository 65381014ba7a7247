// SPDX-License-Identifier: Apache-2.0
#include "engine/support/py_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "engine/support/error.h"

namespace tb {

namespace {

void appendHex4(std::string& out, unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", v & 0xffffu);
    out += buf;
}

// Decodes the well-formed UTF-8 sequence at s[i] (no overlong forms, surrogates or code points
// above U+10FFFF): returns the code point and advances i past it, or returns -1 and leaves i.
long decodeUtf8(std::string_view s, size_t& i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    const int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xe ? 3 : (b0 >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || s.size() - i < size_t(len)) return -1;
    long cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1f) : len == 3 ? (b0 & 0x0f) : (b0 & 0x07);
    for (int k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + size_t(k)]);
        if ((b & 0xc0) != 0x80) return -1;
        cp = (cp << 6) | (b & 0x3f);
    }
    static constexpr long kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
    i += size_t(len);
    return cp;
}

template <class J>
void appendValue(std::string& out, const J& v, const JsonScalarFormat& f) {
    switch (v.type()) {
        case nlohmann::detail::value_t::null: out += "null"; break;
        case nlohmann::detail::value_t::boolean: out += v.template get<bool>() ? "true" : "false"; break;
        case nlohmann::detail::value_t::number_integer: out += std::to_string(v.template get<std::int64_t>()); break;
        case nlohmann::detail::value_t::number_unsigned: out += std::to_string(v.template get<std::uint64_t>()); break;
        case nlohmann::detail::value_t::number_float: out += f.formatFloat(v.template get<double>()); break;
        case nlohmann::detail::value_t::string: f.appendString(out, v.template get_ref<const std::string&>()); break;
        case nlohmann::detail::value_t::array: {
            out += '[';
            bool first = true;
            for (const auto& e : v) {
                if (!first) out += ", ";
                first = false;
                appendValue(out, e, f);
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
                f.appendString(out, it.key());
                out += ": ";
                appendValue(out, it.value(), f);
            }
            out += '}';
            break;
        }
        default: TB_CHECK(false) << "a JSON value of type " << v.type_name() << " has no text form";
    }
}

}  // namespace

std::string pyFloatRepr(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    // Shortest round-trip digits in scientific form ("4.713140226013541e-01"), then Python's
    // float_repr_style 'r' layout. std::to_chars is never affected by the C locale.
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
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
        } else if (digits.size() <= size_t(exp) + 1) {
            out += digits;
            out.append(size_t(exp) + 1 - digits.size(), '0');
            out += ".0";
        } else {
            out += digits.substr(0, size_t(exp) + 1);
            out += '.';
            out += digits.substr(size_t(exp) + 1);
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

std::string pyJsonFloat(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    return pyFloatRepr(v);
}

const char* pyJsonShortEscape(char c) {
    switch (c) {
        case '"': return "\\\"";
        case '\\': return "\\\\";
        case '\n': return "\\n";
        case '\r': return "\\r";
        case '\t': return "\\t";
        case '\b': return "\\b";
        case '\f': return "\\f";
        default: return nullptr;
    }
}

void appendPyJsonString(std::string& out, std::string_view s) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
        const char c = s[i];
        const auto uc = static_cast<unsigned char>(c);
        if (uc < 0x80) {
            ++i;
            if (const char* e = pyJsonShortEscape(c))
                out += e;
            else if (uc < 0x20 || uc == 0x7f)
                appendHex4(out, uc);
            else
                out += c;
            continue;
        }
        const long cp = decodeUtf8(s, i);
        if (cp < 0) {
            appendHex4(out, uc);  // not UTF-8: keep the byte (file comment)
            ++i;
        } else if (cp > 0xffff) {
            const long u = cp - 0x10000;
            appendHex4(out, unsigned(0xd800 + (u >> 10)));
            appendHex4(out, unsigned(0xdc00 + (u & 0x3ff)));
        } else {
            appendHex4(out, unsigned(cp));
        }
    }
    out += '"';
}

void appendPyJson(std::string& out, const nlohmann::json& v, const JsonScalarFormat& format) {
    appendValue(out, v, format);
}
void appendPyJson(std::string& out, const nlohmann::ordered_json& v, const JsonScalarFormat& format) {
    appendValue(out, v, format);
}

std::string pyDumps(const nlohmann::json& v) {
    std::string out;
    appendValue(out, v, JsonScalarFormat{});
    return out;
}
std::string pyDumps(const nlohmann::ordered_json& v) {
    std::string out;
    appendValue(out, v, JsonScalarFormat{});
    return out;
}

}  // namespace tb
