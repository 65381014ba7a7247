// SPDX-License-Identifier: Apache-2.0
#include "engine/support/hardware_params.h"

#include <algorithm>
#include <thread>

namespace tb {

HardwareParams HardwareParams::cpu(int numCores, int vectorUnitBytes) {
    HardwareParams p;
    p.numCores = numCores > 0 ? numCores : std::max(1, int(std::thread::hardware_concurrency()));
    p.vectorUnitBytes = vectorUnitBytes;
    p.cacheLineBytes = 64;
    return p;
}

HardwareParams HardwareParams::gpu(int maxSharedMemoryPerBlock, int maxThreadsPerBlock, int warpSize) {
    // No explicit local-memory limit on these devices: INT32_MAX disables the check (TVM).
    return {-1, 16, 64, maxSharedMemoryPerBlock, INT_MAX, maxThreadsPerBlock, std::max(1, warpSize / 4), warpSize};
}

HardwareParams HardwareParams::mali() { return {-1, 16, 64, 32768, INT_MAX, 256, 1, 1}; }

}  // namespace tb
