// SPDX-License-Identifier: Apache-2.0
#include "engine/tuning/measure_policy.h"

#include <cstdio>

#include "engine/support/error.h"

namespace tb::tuning {

namespace {
std::string mb(int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MB", double(bytes) / 1e6);
    return buf;
}
/// Bytes as MB, or as KB below 0.1 MB (a depthwise conv's weights).
std::string size(int64_t bytes) {
    if (bytes >= 100000) return mb(bytes);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f KB", double(bytes) / 1e3);
    return buf;
}
/// The network's weights above which `auto` flushes: a quarter of the LLC (measure_policy.h says why).
int64_t networkWeightLimit(int64_t llcBytes) { return llcBytes / 4; }
}  // namespace

const char* cacheFlushModeName(CacheFlushMode m) {
    switch (m) {
        case CacheFlushMode::Off: return "off";
        case CacheFlushMode::On: return "on";
        case CacheFlushMode::Auto: break;
    }
    return "auto";
}

CacheFlushMode parseCacheFlushMode(const std::string& text) {
    if (text == "off") return CacheFlushMode::Off;
    if (text == "on") return CacheFlushMode::On;
    TB_USER_CHECK(text == "auto") << "the cache flush policy must be on, off or auto, got '" << text << "'";
    return CacheFlushMode::Auto;
}

std::string TaskMeasurePolicy::reason() const {
    const std::string verdict = flush ? "flush: " : "warm: ";
    if (mode != CacheFlushMode::Auto) return verdict + "--cache-flush " + cacheFlushModeName(mode);
    if (llcBytes <= 0) return verdict + "LLC unknown";
    const std::string llc = "LLC " + mb(llcBytes);
    const std::string quarter = "LLC/4 " + mb(networkWeightLimit(llcBytes));
    if (taskInputBytes > llcBytes) return verdict + "inputs+weights " + mb(taskInputBytes) + " > " + llc;
    if (networkWeightBytes > networkWeightLimit(llcBytes)) {
        const std::string why = "network weights " + mb(networkWeightBytes) + " > " + quarter;
        if (weightsOnly) return "flush weights " + size(taskWeightBytes) + ": " + why;
        if (taskWeightBytes == 0) return "warm: no weights, " + why;
        return verdict + why;
    }
    return verdict + "inputs+weights " + mb(taskInputBytes) + " <= " + llc + ", network weights " +
           mb(networkWeightBytes) + " <= " + quarter;
}

TaskMeasurePolicy chooseMeasurePolicy(int64_t taskInputBytes, int64_t networkWeightBytes, CacheFlushMode mode,
                                      int64_t llcBytes, int64_t taskWeightBytes) {
    TaskMeasurePolicy p;
    p.taskWeightBytes = taskWeightBytes;
    p.taskInputBytes = taskInputBytes;
    p.networkWeightBytes = networkWeightBytes;
    p.llcBytes = llcBytes;
    p.mode = mode;
    switch (mode) {
        case CacheFlushMode::Off: p.flush = false; break;
        case CacheFlushMode::On: p.flush = true; break;
        case CacheFlushMode::Auto:
            if (llcBytes <= 0) break;
            if (taskInputBytes > llcBytes) {
                p.flush = true;  // even its activations cannot stay cached: TVM's flush
            } else if (networkWeightBytes > networkWeightLimit(llcBytes)) {
                p.flush = taskWeightBytes != 0;  // its weights come cold; its activations do not
                p.weightsOnly = taskWeightBytes > 0;
            }
            break;
    }
    return p;
}

}  // namespace tb::tuning
