// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/task_args.h"

#include "engine/support/error.h"

namespace tb::autotvm {

TaskArgs::TaskArgs(std::string taskName, nlohmann::ordered_json args)
    : m_taskName(std::move(taskName)), m_args(std::move(args)) {
    TB_USER_CHECK(m_args.is_array()) << m_taskName << ": the task args must be a list, not " << m_args.dump();
}

std::string TaskArgs::where(std::size_t i) const { return m_taskName + ": argument " + std::to_string(i); }

void TaskArgs::requireAtLeast(std::size_t n) const {
    TB_USER_CHECK(m_args.size() >= n) << m_taskName << ": expected at least " << n << " arguments, got " << m_args.size();
}

const nlohmann::ordered_json& TaskArgs::raw(std::size_t i) const {
    TB_USER_CHECK(i < m_args.size()) << where(i) << " is missing (" << m_args.size() << " arguments)";
    return m_args[i];
}

TensorArg TaskArgs::tensor(std::size_t i) const {
    const auto& a = raw(i);
    TB_USER_CHECK(a.is_array() && a.size() == 3 && a[0] == "TENSOR" && a[1].is_array() && a[2].is_string())
        << where(i) << " must be [\"TENSOR\", shape, dtype], not " << a.dump();
    TensorArg t;
    for (const auto& d : a[1]) {
        TB_USER_CHECK(d.is_number_integer()) << where(i) << ": dimension " << d.dump() << " is not a static integer";
        t.shape.push_back(d.get<std::int64_t>());
    }
    t.dtype = a[2].get<std::string>();
    return t;
}

bool TaskArgs::isNull(std::size_t i) const { return raw(i).is_null(); }

std::vector<std::int64_t> TaskArgs::ints(std::size_t i) const {
    const auto& a = raw(i);
    if (a.is_number_integer()) return {a.get<std::int64_t>()};
    TB_USER_CHECK(a.is_array()) << where(i) << " must be an integer or a list of integers, not " << a.dump();
    std::vector<std::int64_t> out;
    for (const auto& v : a) {
        TB_USER_CHECK(v.is_number_integer()) << where(i) << ": " << v.dump() << " is not an integer";
        out.push_back(v.get<std::int64_t>());
    }
    return out;
}

std::pair<std::int64_t, std::int64_t> TaskArgs::intPair(std::size_t i) const {
    const auto v = ints(i);
    TB_USER_CHECK(v.size() == 1 || v.size() == 2) << where(i) << " must be an integer or a pair, not " << raw(i).dump();
    return {v.front(), v.back()};
}

std::string TaskArgs::str(std::size_t i) const {
    const auto& a = raw(i);
    TB_USER_CHECK(a.is_string()) << where(i) << " must be a string, not " << a.dump();
    return a.get<std::string>();
}

topi::nn::PadTuple TaskArgs::padding(std::size_t i, std::int64_t kernelH, std::int64_t kernelW) const {
    const auto& a = raw(i);
    const std::string what = where(i) + " (padding)";
    if (a.is_string()) {
        const std::string s = a.get<std::string>();
        if (s == "VALID") return {};
        TB_USER_CHECK(s == "SAME") << what << ": unknown padding option '" << s << "'";
        return topi::nn::getPadTuple(topi::nn::samePadding({kernelH, kernelW}), what.c_str());
    }
    return topi::nn::getPadTuple(ints(i), what.c_str());
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
    TB_USER_CHECK(b > 0) << "division by a non-positive stride " << b;
    const std::int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace tb::autotvm
