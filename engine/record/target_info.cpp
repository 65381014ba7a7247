// SPDX-License-Identifier: Apache-2.0
#include "engine/record/target_info.h"

#include <algorithm>

namespace tb::record {

namespace {

// TVM target_kind.cc `set_default_keys`.
std::vector<std::string> defaultKeys(const std::string& kind) {
    if (kind == "llvm" || kind == "c") return {"cpu"};
    if (kind == "cuda" || kind == "nvptx") return {"cuda", "gpu"};
    if (kind == "rocm") return {"rocm", "gpu"};
    if (kind == "opencl") return {"opencl", "gpu"};
    if (kind == "vulkan") return {"vulkan", "gpu"};
    if (kind == "metal") return {"metal", "gpu"};
    if (kind == "webgpu") return {"webgpu", "gpu"};
    if (kind == "hexagon") return {"hexagon", "cpu"};
    return {};
}

std::vector<std::string> splitComma(std::string_view s) {
    std::vector<std::string> out;
    while (!s.empty()) {
        const size_t c = s.find(',');
        if (c != 0) out.emplace_back(s.substr(0, c));
        if (c == std::string_view::npos) break;
        s.remove_prefix(c + 1);
    }
    return out;
}

}  // namespace

TargetInfo parseTargetInfo(std::string_view target) {
    TargetInfo info;
    std::vector<std::string_view> tokens;
    for (size_t i = 0; i < target.size();) {
        while (i < target.size() && target[i] == ' ') ++i;
        size_t j = i;
        while (j < target.size() && target[j] != ' ') ++j;
        if (j > i) tokens.push_back(target.substr(i, j - i));
        i = j;
    }
    if (tokens.empty()) return info;
    info.kind = std::string(tokens[0]);
    std::vector<std::string> userKeys;
    bool hasUserKeys = false;
    for (size_t t = 1; t < tokens.size(); ++t) {
        std::string_view tok = tokens[t];
        while (!tok.empty() && tok.front() == '-') tok.remove_prefix(1);
        const size_t eq = tok.find('=');
        const std::string_view name = tok.substr(0, eq);
        std::string_view value = eq == std::string_view::npos ? std::string_view() : tok.substr(eq + 1);
        if (eq == std::string_view::npos && t + 1 < tokens.size() && tokens[t + 1].front() != '-' &&
            (name == "keys" || name == "model" || name == "device")) {
            value = tokens[++t];  // the "-model rk3399" spelling
        }
        if (name == "keys") {
            hasUserKeys = true;
            for (auto& k : splitComma(value)) userKeys.push_back(k);
        } else if (name == "model") {
            info.model = std::string(value);
        } else if (name == "device") {
            info.device = std::string(value);
        }
    }
    std::vector<std::string> keys = userKeys;
    if (!info.device.empty()) keys.push_back(info.device);
    if (!hasUserKeys)
        for (auto& k : defaultKeys(info.kind)) keys.push_back(k);
    for (auto& k : keys)
        if (std::find(info.keys.begin(), info.keys.end(), k) == info.keys.end()) info.keys.push_back(k);
    return info;
}

}  // namespace tb::record
