// SPDX-License-Identifier: Apache-2.0
#include "engine/codegen/kernel_runtime.h"

#include <cstdlib>

#include "engine/support/thread_pool.h"

extern "C" {
// Default visibility: hosts that dlopen() kernel libraries export these from the executable.
__attribute__((visibility("default"))) int32_t tb_rt_parallel_for(int64_t extent, TBParallelBody body,
                                                                  void* closure) {
    tb::ThreadPool::global().parallelForRange(extent, [&](int64_t b, int64_t e) { body(b, e, closure); });
    return 0;
}

__attribute__((visibility("default"))) void* tb_rt_alloc(int64_t bytes) {
    const size_t n = (static_cast<size_t>(bytes) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, n ? n : 64);
    if (!p) std::abort();
    return p;
}

__attribute__((visibility("default"))) void tb_rt_free(void* p) { std::free(p); }
}

namespace tb::codegen {

std::vector<std::pair<std::string, void*>> runtimeSymbols() {
    return {{kernel_abi::kParallelFor, reinterpret_cast<void*>(&tb_rt_parallel_for)},
            {kernel_abi::kAlloc, reinterpret_cast<void*>(&tb_rt_alloc)},
            {kernel_abi::kFree, reinterpret_cast<void*>(&tb_rt_free)}};
}

}  // namespace tb::codegen
