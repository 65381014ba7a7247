// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/cpu_caches.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>

namespace tb::measure {

namespace {

std::optional<std::string> readLine(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::string s;
    if (!in || !std::getline(in, s)) return std::nullopt;
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
}

// "32K", "1024K", "32M", "1G" or a plain number of bytes.
std::optional<int64_t> parseSize(const std::string& s) {
    size_t i = 0;
    int64_t v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) v = v * 10 + (s[i++] - '0');
    if (i == 0) return std::nullopt;
    const std::string unit = s.substr(i);
    if (unit.empty()) return v;
    if (unit == "K" || unit == "k") return v << 10;
    if (unit == "M") return v << 20;
    if (unit == "G") return v << 30;
    return std::nullopt;
}

}  // namespace

std::vector<CpuCache> readCpuCaches(const std::string& dir) {
    std::vector<CpuCache> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().filename().string().rfind("index", 0) != 0) continue;
        const auto level = readLine(entry.path() / "level"), type = readLine(entry.path() / "type"),
                   size = readLine(entry.path() / "size");
        if (!level || !type || !size) continue;
        const auto bytes = parseSize(*size), lv = parseSize(*level);
        if (!bytes || !lv || *lv <= 0) continue;
        out.push_back({int(*lv), *type, *bytes});
    }
    std::sort(out.begin(), out.end(), [](const CpuCache& a, const CpuCache& b) {
        return a.level != b.level ? a.level < b.level : a.type < b.type;
    });
    return out;
}

int64_t lastLevelCacheBytes(const std::vector<CpuCache>& caches) {
    int level = 0;
    int64_t bytes = 0;
    for (const CpuCache& c : caches) {
        if (c.type == "Instruction") continue;
        if (c.level > level || (c.level == level && c.bytes > bytes)) {
            level = c.level;
            bytes = c.bytes;
        }
    }
    return bytes;
}

int64_t hostLastLevelCacheBytes() {
    static const int64_t bytes = lastLevelCacheBytes(readCpuCaches());
    return bytes;
}

}  // namespace tb::measure
