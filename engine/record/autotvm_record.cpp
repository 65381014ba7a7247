// SPDX-License-Identifier: Apache-2.0
#include "engine/record/autotvm_record.h"

#include <cmath>
#include <limits>

#include "engine/record/json_format.h"
#include "engine/support/error.h"

namespace tb::record {

namespace {

using ojson = nlohmann::ordered_json;

double numberOf(const ojson& v, const char* what) {
    TB_USER_CHECK(v.is_number()) << what << " must be a number, not " << v.dump();
    return v.get<double>();
}

// "result" (v0.2) / "r" (v0.1): [costs, error_no, all_cost, timestamp].
void readResult(const ojson& r, const char* key, AutoTvmRecord& rec) {
    TB_USER_CHECK(r.is_array() && r.size() == 4) << "\"" << key << "\" must be [costs, error_no, all_cost, timestamp]";
    TB_USER_CHECK(r[0].is_array()) << "the costs (" << key << "[0]) must be a list";
    for (const auto& c : r[0]) rec.costs.push_back(numberOf(c, "a cost"));
    TB_USER_CHECK(r[1].is_number_integer()) << "error_no (" << key << "[1]) must be an integer, not " << r[1].dump();
    rec.errorNo = r[1].get<int>();
    rec.allCost = numberOf(r[2], ("all_cost (" + std::string(key) + "[2])").c_str());
    rec.timestamp = numberOf(r[3], ("the timestamp (" + std::string(key) + "[3])").c_str());
    rec.integerTimestamp = r[3].is_number_integer() || r[3].is_number_unsigned();
}

void checkEntityItems(const ojson& entity) {
    for (const auto& knob : entity)
        TB_USER_CHECK(knob.is_array() && knob.size() == 3 && knob[0].is_string() && knob[1].is_string())
            << "config.entity item " << knob.dump() << " is not [name, kind, value]";
}

// TVM <= 0.5 (record.py AUTOTVM_LOG_VERSION = 0.1): {"i": [target, task_name, args, kwargs,
// workload, {"i": index, "c": code_hash, "t": template_key, "e": entity}], "r": [...], "v": 0.1}.
AutoTvmRecord fromJsonV01(const ojson& j) {
    for (auto it = j.begin(); it != j.end(); ++it)
        TB_USER_CHECK(it.key() == "i" || it.key() == "r" || it.key() == "v")
            << "unknown member \"" << it.key() << "\" in a v0.1 record";
    TB_USER_CHECK(j.contains("i") && j.contains("r")) << "a v0.1 record needs \"i\" and \"r\"";
    const ojson& in = j["i"];
    TB_USER_CHECK(in.is_array() && in.size() == 6)
        << "v0.1 \"i\" must be [target, task_name, args, kwargs, workload, config]";
    TB_USER_CHECK(in[0].is_string() && in[1].is_string()) << "v0.1 target and task name must be strings";
    TB_USER_CHECK(in[2].is_array() && in[3].is_object()) << "v0.1 args must be a list and kwargs an object";
    const ojson& cfg = in[5];
    TB_USER_CHECK(cfg.is_object() && cfg.contains("i") && cfg["i"].is_number_integer() && cfg.contains("e") &&
                  cfg["e"].is_array())
        << "the v0.1 config must be {\"i\": index, \"c\": code_hash, \"t\": template_key, \"e\": entity}";
    checkEntityItems(cfg["e"]);
    AutoTvmRecord rec;
    rec.target = in[0].get<std::string>();
    rec.taskName = in[1].get<std::string>();
    rec.args = in[2];
    rec.kwargs = in[3];
    rec.config = ojson::object();
    rec.config["index"] = cfg["i"];
    rec.config["code_hash"] = cfg.contains("c") ? cfg["c"] : ojson(nullptr);
    rec.config["entity"] = cfg["e"];
    readResult(j["r"], "r", rec);
    rec.version = j["v"];
    rec.v01 = AutoTvmRecord::V01Fields{in[4], cfg.contains("t") && cfg["t"].is_string() ? cfg["t"].get<std::string>() : "",
                                       j};
    return rec;
}

}  // namespace

double AutoTvmRecord::meanCost() const {
    if (costs.empty()) return std::numeric_limits<double>::infinity();
    double sum = 0;
    for (double c : costs) sum += c;
    return sum / double(costs.size());
}

std::int64_t AutoTvmRecord::configIndex() const {
    auto it = config.find("index");
    return it != config.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
}

std::string AutoTvmRecord::workloadKey() const {
    ojson w = ojson::array({taskName});
    for (const auto& a : args) w.push_back(a);
    return dumpJson(w, JsonStyle::Python);
}

std::string AutoTvmRecord::serializedInput() const {
    std::string out;
    appendJsonString(out, target, JsonStyle::Python);
    out += ' ';
    out += workloadKey();
    out += ' ';
    appendJson(out, kwargs, JsonStyle::Python);
    out += ' ';
    appendJson(out, config, JsonStyle::Python);
    return out;
}

std::string AutoTvmRecord::toLine() const {
    if (v01) return dumpJson(v01->object, JsonStyle::Python);
    ojson input = ojson::array({target, taskName, args, kwargs});
    std::string out = "{\"input\": ";
    appendJson(out, input, JsonStyle::Python);
    out += ", \"config\": ";
    appendJson(out, config, JsonStyle::Python);
    out += ", \"result\": [[";
    for (size_t k = 0; k < costs.size(); ++k) {
        if (k) out += ", ";
        out += formatDoublePython(costs[k]);
    }
    out += "], " + std::to_string(errorNo) + ", " + formatDoublePython(allCost) + ", ";
    // json.dumps writes an int timestamp as an int; TVM writes time.time() (a float).
    out += integerTimestamp && timestamp == std::floor(timestamp) && std::fabs(timestamp) < 9.0e15
               ? std::to_string(static_cast<long long>(timestamp))
               : formatDoublePython(timestamp);
    out += ']';
    if (version) {
        out += ", \"version\": ";
        appendJson(out, *version, JsonStyle::Python);
    }
    if (tvmVersion) {
        out += ", \"tvm_version\": ";
        appendJsonString(out, *tvmVersion, JsonStyle::Python);
    }
    out += '}';
    return out;
}

AutoTvmRecord AutoTvmRecord::fromLine(std::string_view line) {
    ojson j;
    try {
        j = ojson::parse(line);
    } catch (const ojson::exception& e) {  // parse_error, and out_of_range for a number like 1e999
        std::string what = e.what();
        const size_t p = what.find("] ");
        TB_USER_ERROR() << "not valid JSON: " << (p == std::string::npos ? what : what.substr(p + 2));
    }
    return fromJson(j);
}

AutoTvmRecord AutoTvmRecord::fromJson(const ojson& j) {
    TB_USER_CHECK(j.is_object()) << "a record must be a JSON object, not " << std::string(j.type_name());
    if (j.contains("v") && j["v"].is_number()) {
        TB_USER_CHECK(j["v"].get<double>() == 0.1) << "AutoTVM log version " << j["v"].dump() << " is not supported";
        return fromJsonV01(j);
    }
    if (j.contains("i") && j.contains("r"))
        TB_USER_ERROR() << "an auto_scheduler record (keys i/r/v), not an AutoTVM record";
    TB_USER_CHECK(j.contains("input")) << "no \"input\" member";
    TB_USER_CHECK(j.contains("config")) << "no \"config\" member";
    TB_USER_CHECK(j.contains("result")) << "no \"result\" member";
    for (auto it = j.begin(); it != j.end(); ++it) {
        const auto& k = it.key();
        TB_USER_CHECK(k == "input" || k == "config" || k == "result" || k == "version" || k == "tvm_version")
            << "unknown member \"" << k << "\"";
    }
    AutoTvmRecord rec;
    const ojson& in = j["input"];
    TB_USER_CHECK(in.is_array() && in.size() == 4) << "\"input\" must be [target, task_name, args, kwargs]";
    TB_USER_CHECK(in[0].is_string()) << "the target (input[0]) must be a string";
    TB_USER_CHECK(in[1].is_string()) << "the task name (input[1]) must be a string";
    TB_USER_CHECK(in[2].is_array()) << "the task args (input[2]) must be a list";
    TB_USER_CHECK(in[3].is_object()) << "the task kwargs (input[3]) must be an object";
    rec.target = in[0].get<std::string>();
    rec.taskName = in[1].get<std::string>();
    rec.args = in[2];
    rec.kwargs = in[3];

    const ojson& cfg = j["config"];
    TB_USER_CHECK(cfg.is_object()) << "\"config\" must be an object";
    TB_USER_CHECK(cfg.contains("index") && cfg["index"].is_number_integer()) << "config.index must be an integer";
    TB_USER_CHECK(cfg.contains("entity") && cfg["entity"].is_array()) << "config.entity must be a list";
    checkEntityItems(cfg["entity"]);
    rec.config = cfg;
    readResult(j["result"], "result", rec);

    if (j.contains("version")) rec.version = j["version"];
    else rec.version.reset();
    if (j.contains("tvm_version")) {
        TB_USER_CHECK(j["tvm_version"].is_string()) << "tvm_version must be a string";
        rec.tvmVersion = j["tvm_version"].get<std::string>();
    }
    return rec;
}

}  // namespace tb::record
