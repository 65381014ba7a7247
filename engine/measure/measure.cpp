// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/measure.h"

#include <chrono>
#include <numeric>

#include "engine/support/error.h"

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

HardwareParams defaultHardwareParams(const codegen::Target& target) {
    if (target.isGpu()) return target.gpuHardwareParams();
    TB_USER_CHECK(target.kind == "llvm") << "no default hardware parameters for target kind '" << target.kind << "'";
    return HardwareParams::cpu(target.numCores, target.vectorBits() / 8);
}

double nowTimestamp() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

MeasureResult MeasureEventSource::runStep(long long batch, int candidate, const std::string& workloadKey,
                                          const std::string& device, const std::function<MeasureResult()>& run) const {
    MeasureEvent e;
    e.phase = MeasureEvent::Phase::Run;
    e.batch = batch;
    e.candidate = candidate;
    e.workloadKey = workloadKey;
    e.device = device;
    e.deviceKey = "local";
    e.startTime = nowTimestamp();
    emitEvent(e);
    MeasureResult r = run();
    e.kind = MeasureEvent::Kind::Finished;
    e.endTime = nowTimestamp();
    e.errorNo = r.errorNo;
    e.message = r.errorMsg;
    emitEvent(e);
    return r;
}

}  // namespace tb::measure
