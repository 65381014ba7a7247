// SPDX-License-Identifier: Apache-2.0
#include "engine/rpc/protocol.h"

#include <mutex>
#include <random>

namespace tb::rpc {

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
