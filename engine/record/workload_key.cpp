// SPDX-License-Identifier: Apache-2.0
#include "engine/record/workload_key.h"

#include <cmath>
#include <limits>

#include "engine/record/json_format.h"

namespace tb::record {

namespace {

void flatten(const nlohmann::json& v, std::vector<nlohmann::json>& out) {
    if (v.is_array()) {
        for (const auto& e : v) flatten(e, out);
    } else {
        out.push_back(v);
    }
}

// Python equality of dict keys: 4 == 4.0 == True. Integral floats are written as integers, other
// numbers by repr; strings and lists by json.dumps.
void appendCanonical(std::string& out, const nlohmann::json& v) {
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
            out += std::to_string(static_cast<long long>(d));
            return;
        }
    }
    if (v.is_boolean()) {
        out += v.get<bool>() ? "1" : "0";
        return;
    }
    appendJson(out, v, JsonStyle::Python);
}

bool isInteger(const nlohmann::json& v) { return v.is_number_integer() || v.is_number_unsigned() || v.is_boolean(); }

}  // namespace

WorkloadKey WorkloadKey::parse(std::string_view key) {
    WorkloadKey k;
    k.m_text = std::string(key);
    k.m_name = k.m_text;
    const auto parsed = nlohmann::json::parse(key, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_array() && !parsed.empty()) {
        k.m_decodable = true;
        const auto& head = parsed.front();
        k.m_name = head.is_string() ? head.get<std::string>() : dumpJson(head, JsonStyle::Python);
        for (size_t i = 1; i < parsed.size(); ++i) {
            k.m_rawArgs.push_back(parsed[i]);
            flatten(parsed[i], k.m_flatArgs);
        }
    }
    std::string& ca = k.m_canonicalArgs;
    if (k.m_decodable) {
        ca += '(';
        for (size_t i = 0; i < k.m_flatArgs.size(); ++i) {
            if (i) ca += ", ";
            appendCanonical(ca, k.m_flatArgs[i]);
        }
        ca += ')';
    } else {
        ca = "None";
    }
    k.m_canonical.clear();
    appendJsonString(k.m_canonical, k.m_name, JsonStyle::Python);
    k.m_canonical += ' ';
    k.m_canonical += ca;
    return k;
}

bool WorkloadKey::isDagHash() const {
    if (m_name.size() != 32) return false;
    for (char c : m_name)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

bool WorkloadKey::nested() const {
    for (const auto& a : m_rawArgs)
        if (a.is_array()) return true;
    return false;
}

double calcWorkloadDisFactor(const WorkloadKey& target, const WorkloadKey& candidate) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const auto& ta = target.args();
    const auto& ca = candidate.args();
    if (target.name() != candidate.name() || ta.size() != ca.size()) return kInf;
    double factor = 1;
    for (size_t i = 0; i < ta.size(); ++i) {
        const auto& t = ta[i];
        const auto& c = ca[i];
        if (isInteger(t)) {
            const long long tv = t.is_boolean() ? (t.get<bool>() ? 1 : 0) : t.get<long long>();
            // Python: `target_arg == 0 or arg == 0` then `target_arg % arg`; a non-number
            // candidate is incompatible (Python would raise).
            if (!c.is_number() && !c.is_boolean()) return kInf;
            const double cv = c.is_boolean() ? (c.get<bool>() ? 1 : 0) : c.get<double>();
            if (tv == 0 || cv == 0) {
                if (double(tv) != cv) return kInf;
            } else if (std::fmod(double(tv), cv) != 0) {
                return kInf;
            } else {
                factor *= double(tv) / cv;
            }
        } else {
            std::string a, b;
            appendCanonical(a, t);
            appendCanonical(b, c);
            if (a != b) return kInf;
        }
    }
    return factor;
}

}  // namespace tb::record
