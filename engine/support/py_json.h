// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file py_json.h
/// \brief JSON text byte-identical to Python's `json.dumps(value)` with its default arguments.
///
/// Why byte-exact: TVM writes two things TuneBench must reproduce with Python's json module, and
/// both are compared as bytes, not as JSON values.
///   - The RPC tracker protocol (python/tvm/rpc/tracker.py, base.py): every message is
///     `json.dumps(...)` behind an int32 length that Python computed with `len()`; our tracker's
///     replies are compared byte for byte with TVM's (tests/engine/tst_rpc_tracker).
///   - AutoTVM's log lines (autotvm/record.py encode) and the JSON part of auto_scheduler workload
///     keys (`json.dumps(args)` in auto_scheduler/workload_registry.py, hashed into TVM's keys):
///     a line we write must be the line TVM writes, or logs diff and keys differ.
/// nlohmann's dump() differs in every point that matters here (separators, float digits, non-ASCII),
/// so this writer exists once, below the two layers that need it (record/json_format.h adds TVM's
/// C++ dialect on top of it; rpc/protocol.h uses it as is).
///
/// What json.dumps writes with the defaults (`ensure_ascii=True, allow_nan=True,
/// separators=(", ", ": ")`):
///   - separators `", "` between items and `": "` after keys, no newlines; object members in the
///     container's order (insertion order for ordered_json, as Python dicts; sorted for json);
///   - integers in decimal; floats as `repr(float)` (pyFloatRepr), non-finite ones as `NaN`,
///     `Infinity`, `-Infinity`;
///   - strings ASCII-only: `\" \\ \n \r \t \b \f` in short form, every other character outside
///     0x20..0x7e as `\uXXXX` (lower-case hex), characters above U+FFFF as a surrogate pair. So
///     the text is pure ASCII and its byte length is Python's `len()`.
/// Input strings are UTF-8. A byte that is not part of a well-formed UTF-8 sequence (never the case
/// for text Python could hold) is written as `\u00XX`, one escape per byte, so it is not lost.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tb {

/// Python's `repr(float)`: the shortest digits that read back to `v`, in fixed notation with at
/// least one fractional digit when 1e-4 <= |v| < 1e16 (`0.5`, `9090.0`, `-0.0`), else in exponent
/// form with a sign and at least two exponent digits (`1e-05`, `1.5e+16`); `nan`, `inf`, `-inf`.
/// Locale-independent.
std::string pyFloatRepr(double v);

/// A float as json.dumps writes it: pyFloatRepr, except `NaN`, `Infinity`, `-Infinity`.
std::string pyJsonFloat(double v);

/// Appends `s` (UTF-8) quoted and escaped as json.dumps writes a str (file comment).
void appendPyJsonString(std::string& out, std::string_view s);

/// The two-character escape json.dumps writes for `c` (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`,
/// `\f`), or nullptr when it has none.
const char* pyJsonShortEscape(char c);

/// How a json.dumps-shaped writer formats strings and floats; the defaults are Python's. Other
/// dialects with the same structure (TVM's C++ log writer, record/json_format.h) replace them.
struct JsonScalarFormat {
    void (*appendString)(std::string& out, std::string_view s) = appendPyJsonString;
    std::string (*formatFloat)(double v) = pyJsonFloat;
};

/// Appends `v` as json.dumps writes it, scalars as `format` says. Throws InternalError for a binary
/// or discarded value (no JSON text exists for them).
void appendPyJson(std::string& out, const nlohmann::json& v, const JsonScalarFormat& format = {});
void appendPyJson(std::string& out, const nlohmann::ordered_json& v, const JsonScalarFormat& format = {});

/// `json.dumps(v)`.
std::string pyDumps(const nlohmann::json& v);
std::string pyDumps(const nlohmann::ordered_json& v);

}  // namespace tb
