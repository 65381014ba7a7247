// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/measure.h"

#include <chrono>
#include <numeric>
#include <thread>

namespace tb::measure {

const char* errorName(MeasureErrorNo e) {
    switch (e) {
        case MeasureErrorNo::NoError: return "NO_ERROR";
        case MeasureErrorNo::InstantiationError: return "INSTANTIATION_ERROR";
        case MeasureErrorNo::CompileHost: return "COMPILE_HOST";
        case MeasureErrorNo::CompileDevice: return "COMPILE_DEVICE";
        case MeasureErrorNo::RuntimeDevice: return "RUNTIME_DEVICE";
        case MeasureErrorNo::WrongAnswer: return "WRONG_ANSWER";
        case MeasureErrorNo::BuildTimeout: return "BUILD_TIMEOUT";
        case MeasureErrorNo::RunTimeout: return "RUN_TIMEOUT";
        case MeasureErrorNo::UnknownError: return "UNKNOWN_ERROR";
    }
    return "UNKNOWN_ERROR";
}

double MeasureResult::meanCost() const {
    if (!ok() || costs.empty()) return kMaxFloat;
    return std::accumulate(costs.begin(), costs.end(), 0.0) / double(costs.size());
}

HardwareParams HardwareParams::forTarget(const codegen::Target& target) {
    HardwareParams p;
    p.numCores = target.numCores > 0 ? target.numCores : std::max(1, int(std::thread::hardware_concurrency()));
    p.vectorUnitBytes = target.vectorBits() / 8;
    p.cacheLineBytes = 64;
    return p;
}

double nowTimestamp() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace tb::measure
