// SPDX-License-Identifier: Apache-2.0
#include "engine/record/json_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "engine/support/error.h"
#include "engine/support/py_json.h"

namespace tb::record {

namespace {

// std::to_chars/from_chars: never affected by the C locale (QCoreApplication calls setlocale).
bool readsBack(const char* first, const char* last, double v) {
    double back = 0;
    auto r = std::from_chars(first, last, back);
    return r.ec == std::errc() && back == v;
}

// dmlc::JSONWriter's strings: ", \, \n, \r, \t escaped (as json.dumps does), every other byte kept
// as is, UTF-8 included. Other control characters, which dmlc would write raw (invalid JSON; no TVM
// log contains them), become \u00XX.
void appendTvmString(std::string& out, std::string_view s) {
    out += '"';
    for (const char c : s) {
        const auto uc = static_cast<unsigned char>(c);
        if (const char* e = c == '\b' || c == '\f' ? nullptr : pyJsonShortEscape(c)) {
            out += e;
        } else if (uc < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(uc));
            out += buf;
        } else {
            out += c;
        }
    }
    out += '"';
}

JsonScalarFormat scalarFormat(JsonStyle style) {
    JsonScalarFormat f;  // Python's
    if (style == JsonStyle::Tvm) {
        f.appendString = appendTvmString;
        f.formatFloat = formatDoubleTvm;
    }
    return f;
}

}  // namespace

std::string formatDoubleTvm(double v) {
    TB_CHECK(std::isfinite(v)) << "non-finite number " << v << " in a TVM log line";
    // A negative zero is written as 0: %g's "-0" reads back as the integer 0 (JSON readers, ours
    // and Python's, parse it as an int), so the line would not read back to itself (fuzz_record).
    if (v == 0) return "0";
    char buf[64];
    for (int precision = 6; precision <= 17; ++precision) {
        auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, precision);
        TB_CHECK(r.ec == std::errc());
        if (readsBack(buf, r.ptr, v)) return std::string(buf, r.ptr);
    }
    TB_CHECK(false) << "no %g precision reads back " << v;
    return {};
}

std::string formatDoublePython(double v) { return pyJsonFloat(v); }

void appendJsonString(std::string& out, std::string_view s, JsonStyle style) { scalarFormat(style).appendString(out, s); }

void appendJson(std::string& out, const nlohmann::json& v, JsonStyle style) { appendPyJson(out, v, scalarFormat(style)); }
void appendJson(std::string& out, const nlohmann::ordered_json& v, JsonStyle style) {
    appendPyJson(out, v, scalarFormat(style));
}

std::string dumpJson(const nlohmann::json& v, JsonStyle style) {
    std::string out;
    appendJson(out, v, style);
    return out;
}

std::string dumpJson(const nlohmann::ordered_json& v, JsonStyle style) {
    std::string out;
    appendJson(out, v, style);
    return out;
}

}  // namespace tb::record
