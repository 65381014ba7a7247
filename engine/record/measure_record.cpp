// SPDX-License-Identifier: Apache-2.0
#include "engine/record/measure_record.h"

#include <climits>
#include <cmath>
#include <limits>

#include "engine/record/json_format.h"
#include "engine/support/error.h"

namespace tb::record {

namespace {

using nlohmann::json;

const char* const kErrorNames[] = {"NO_ERROR",       "INSTANTIATION_ERROR", "COMPILE_HOST",
                                   "COMPILE_DEVICE", "RUNTIME_DEVICE",      "WRONG_ANSWER",
                                   "BUILD_TIMEOUT",  "RUN_TIMEOUT",         "UNKNOWN_ERROR"};

std::int64_t integerOf(const json& v, const char* what) {
    if (v.is_number_integer() || v.is_number_unsigned()) return v.get<std::int64_t>();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        TB_USER_CHECK(d == std::floor(d) && std::fabs(d) < 9.0e18) << what << " must be an integer, not " << v.dump();
        return static_cast<std::int64_t>(d);
    }
    TB_USER_ERROR() << what << " must be an integer, not " << v.dump();
    return 0;
}

double numberOf(const json& v, const char* what) {
    TB_USER_CHECK(v.is_number()) << what << " must be a number, not " << v.dump();
    return v.get<double>();
}

const std::string& stringOf(const json& v, const char* what) {
    TB_USER_CHECK(v.is_string()) << what << " must be a string, not " << v.dump();
    return v.get_ref<const std::string&>();
}

const json& arrayOf(const json& v, const char* what) {
    TB_USER_CHECK(v.is_array()) << what << " must be a JSON array, not " << std::string(v.type_name());
    return v;
}

std::string shortDump(const json& v) {
    std::string s = v.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

RecordTask parseTask(const json& t) {
    arrayOf(t, "the task (i[0])");
    const size_t n = t.size();
    TB_USER_CHECK(n == 2 || n == 3 || n == 5 || n == 6)
        << "the task (i[0]) has " << n << " elements; TVM writes 2, 3, 5 or 6";
    RecordTask task;
    task.arity = int(n);
    task.workloadKey = stringOf(t[0], "the workload key (i[0][0])");
    task.target = stringOf(t[1], "the target (i[0][1])");
    if (n >= 3) {
        const json& hw = arrayOf(t[2], "the hardware params (i[0][2])");
        TB_USER_CHECK(hw.size() == 8) << "the hardware params (i[0][2]) have " << hw.size() << " values, not 8";
        int v[8];
        for (size_t k = 0; k < 8; ++k) {
            const std::int64_t x = integerOf(hw[k], "a hardware parameter");
            TB_USER_CHECK(x >= INT_MIN && x <= INT_MAX) << "the hardware parameter " << x << " does not fit TVM's int";
            v[k] = int(x);
        }
        task.hardwareParams = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    }
    if (n >= 5) {
        task.targetHost = stringOf(t[3], "the target host (i[0][3])");
        task.layoutRewriteOption = int(integerOf(t[4], "the layout rewrite option (i[0][4])"));
    }
    if (n == 6) {
        for (const auto& name : arrayOf(t[5], "the task input names (i[0][5])"))
            task.taskInputNames.push_back(stringOf(name, "a task input name"));
    }
    return task;
}

void appendTask(std::string& out, const RecordTask& t) {
    TB_CHECK(t.arity == 2 || t.arity == 3 || t.arity == 5 || t.arity == 6) << "task arity " << t.arity;
    out += '[';
    appendJsonString(out, t.workloadKey, JsonStyle::Tvm);
    out += ", ";
    appendJsonString(out, t.target, JsonStyle::Tvm);
    if (t.arity >= 3) {
        const auto& h = t.hardwareParams;
        const int v[8] = {h.numCores, h.vectorUnitBytes, h.cacheLineBytes, h.maxSharedMemoryPerBlock,
                          h.maxLocalMemoryPerBlock, h.maxThreadsPerBlock, h.maxVthreadExtent, h.warpSize};
        out += ", [";
        for (int k = 0; k < 8; ++k) {
            if (k) out += ", ";
            out += std::to_string(v[k]);
        }
        out += ']';
    }
    if (t.arity >= 5) {
        out += ", ";
        appendJsonString(out, t.targetHost, JsonStyle::Tvm);
        out += ", ";
        out += std::to_string(t.layoutRewriteOption);
    }
    if (t.arity == 6) {
        out += ", [";
        for (size_t k = 0; k < t.taskInputNames.size(); ++k) {
            if (k) out += ", ";
            appendJsonString(out, t.taskInputNames[k], JsonStyle::Tvm);
        }
        out += ']';
    }
    out += ']';
}

void appendInput(std::string& out, const MeasureRecord& r) {
    out += "[";
    appendTask(out, r.task);
    out += ", [[], ";
    appendJson(out, r.steps, JsonStyle::Tvm);
    out += "]]";
}

}  // namespace

std::string measureErrorName(int errorNo) {
    if (errorNo >= 0 && errorNo < int(std::size(kErrorNames))) return kErrorNames[errorNo];
    return "ERROR_" + std::to_string(errorNo);
}

double MeasureRecord::meanCost() const {
    if (costs.empty()) return std::numeric_limits<double>::infinity();
    double sum = 0;
    for (double c : costs) sum += c;
    return sum / double(costs.size());
}

std::string MeasureRecord::toLine() const {
    std::string out = "{\"i\": ";
    appendInput(out, *this);
    out += ", \"r\": [[";
    for (size_t k = 0; k < costs.size(); ++k) {
        if (k) out += ", ";
        out += formatDoubleTvm(std::isfinite(costs[k]) ? costs[k] : 1e10);
    }
    out += "], ";
    out += std::to_string(errorNo);
    out += ", ";
    out += formatDoubleTvm(std::isfinite(allCost) ? allCost : 1e10);
    out += ", ";
    // A timestamp that no long long holds (a hostile or corrupt line: NaN, 1e28) is written as 0,
    // as a non-finite one always was; casting it would be undefined behaviour.
    const bool representable = std::isfinite(timestamp) && std::fabs(timestamp) < 9.2e18;
    out += std::to_string(representable ? static_cast<long long>(timestamp) : 0LL);
    out += ']';
    if (hasVersion) {
        out += ", \"v\": ";
        appendJsonString(out, version, JsonStyle::Tvm);
    }
    out += '}';
    return out;
}

std::string MeasureRecord::serializedInput() const {
    std::string out;
    appendInput(out, *this);
    return out;
}

MeasureRecord MeasureRecord::fromLine(std::string_view line) {
    json j;
    try {
        j = json::parse(line);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
        // nlohmann's message names the byte offset and the offending token.
        std::string what = e.what();
        const size_t p = what.find("] ");
        TB_USER_ERROR() << "not valid JSON: " << (p == std::string::npos ? what : what.substr(p + 2));
    }
    return fromJson(j);
}

MeasureRecord MeasureRecord::fromJson(const json& j) {
    TB_USER_CHECK(j.is_object()) << "a record must be a JSON object, not " << std::string(j.type_name());
    if (j.contains("input") || j.contains("config"))
        TB_USER_ERROR() << "an AutoTVM record (keys input/config/result), not an auto_scheduler record";
    for (auto it = j.begin(); it != j.end(); ++it)
        TB_USER_CHECK(it.key() == "i" || it.key() == "r" || it.key() == "v")
            << "unknown member \"" << it.key() << "\" (TVM's reader accepts only i, r, v)";
    TB_USER_CHECK(j.contains("i")) << "no \"i\" (measure input) member";
    TB_USER_CHECK(j.contains("r")) << "no \"r\" (measure result) member";
    if (j.contains("v") && j["v"].is_number())
        TB_USER_ERROR() << "\"v\": " << j["v"].dump() << " is an old AutoTVM log version, not an auto_scheduler record";

    MeasureRecord rec;
    const json& in = arrayOf(j["i"], "\"i\"");
    TB_USER_CHECK(in.size() == 2) << "\"i\" must be [task, state], not " << in.size() << " elements";
    rec.task = parseTask(in[0]);
    const json& state = arrayOf(in[1], "the state (i[1])");
    TB_USER_CHECK(state.size() == 2) << "the state (i[1]) must be [stages, steps], not " << state.size() << " elements";
    arrayOf(state[0], "the stages (i[1][0])");
    const json& steps = arrayOf(state[1], "the steps (i[1][1])");
    for (size_t k = 0; k < steps.size(); ++k) {
        const json& s = steps[k];
        TB_USER_CHECK(s.is_array() && !s.empty() && s[0].is_string())
            << "step " << k << " is not a [\"PREFIX\", ...] array: " << shortDump(s);
    }
    rec.steps = steps;

    const json& r = arrayOf(j["r"], "\"r\"");
    TB_USER_CHECK(r.size() == 4) << "\"r\" must be [costs, error_no, all_cost, timestamp], not " << r.size()
                                 << " elements";
    for (const auto& c : arrayOf(r[0], "the costs (r[0])")) rec.costs.push_back(numberOf(c, "a cost"));
    rec.errorNo = int(integerOf(r[1], "error_no (r[1])"));
    rec.allCost = numberOf(r[2], "all_cost (r[2])");
    rec.timestamp = numberOf(r[3], "the timestamp (r[3])");

    if (j.contains("v")) {
        rec.version = stringOf(j["v"], "the version (\"v\")");
    } else {
        rec.hasVersion = false;
        rec.version.clear();
    }
    return rec;
}

}  // namespace tb::record
