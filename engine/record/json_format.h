// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file json_format.h
/// \brief Byte-exact JSON output in the two dialects TVM's tuning logs are written in.
///
/// Measure-record logs are read by people, diffed, and fed back to TVM, so a line we write should
/// be the line TVM would have written. Both record formats use Python's `json.dumps` separators
/// (`", "` between items, `": "` after keys), but they format numbers and strings differently:
///
/// * **Tvm** (auto_scheduler, written from C++ by dmlc::JSONWriter in measure_record.cc): doubles go
///   through `std::ostream <<` with the default precision 6 (`%g`: `0.00245743`, `1e+10`, `15`);
///   strings escape only `"`, `\`, `\n`, `\r`, `\t` and keep UTF-8 as is.
/// * **Python** (AutoTVM, written by `json.dumps` in autotvm/record.py): floats use `repr()` (the
///   shortest string that reads back to the same double, with `.0` on integral values and an
///   exponent outside 1e-4..1e16: `9.593498664366054e-05`, `1000000000.0`); strings are ASCII-only
///   (`\uXXXX`, surrogate pairs above the BMP). This style is support/py_json.h, shared with the
///   RPC tracker protocol; the Tvm style is the same writer with dmlc's scalars.
///
/// A double that `%.6g` would round (one not written by TVM) gets the smallest `%g` precision that
/// reads back exactly, so writing never loses a value: write(read(line)) == line for TVM's lines
/// and == the same JSON value for any other line.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tb::record {

/// Which writer's conventions to reproduce (see the file comment).
enum class JsonStyle { Tvm, Python };

/// `v` as dmlc::JSONWriter writes a double (`%g`, precision 6, raised until it reads back
/// exactly). Locale-independent. Throws InternalError for NaN/infinity (not representable as
/// TVM writes them; callers sanitize, see MeasureRecord::toLine).
std::string formatDoubleTvm(double v);

/// `v` as Python's `repr(float)` / `json.dumps` writes it (`NaN`, `Infinity` included):
/// tb::pyJsonFloat.
std::string formatDoublePython(double v);

/// Appends `s` as a quoted JSON string in the given style. `s` is UTF-8; for the Python style
/// (tb::appendPyJsonString) invalid UTF-8 bytes are escaped as `\u00XX` (json.dumps never sees them).
void appendJsonString(std::string& out, std::string_view s, JsonStyle style);

/// Appends `v` in the given style. Object members keep the container's order (insertion order
/// for ordered_json, sorted for json). Integers are written as integers, floats by the style's
/// double formatter.
void appendJson(std::string& out, const nlohmann::json& v, JsonStyle style);
void appendJson(std::string& out, const nlohmann::ordered_json& v, JsonStyle style);

/// `v` as one string in the given style.
std::string dumpJson(const nlohmann::json& v, JsonStyle style);
std::string dumpJson(const nlohmann::ordered_json& v, JsonStyle style);

}  // namespace tb::record
