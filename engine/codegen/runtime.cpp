// SPDX-License-Identifier: Apache-2.0
#include "engine/codegen/runtime.h"

#include <cstdlib>

#include "engine/support/thread_pool.h"

extern "C" {
int32_t tb_rt_parallel_for(int64_t extent, tb::codegen::ParallelBody body, void* closure) {
    tb::ThreadPool::global().parallelForRange(extent, [&](int64_t b, int64_t e) { body(b, e, closure); });
    return 0;
}

void* tb_rt_alloc(int64_t bytes) {
    const size_t n = (static_cast<size_t>(bytes) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, n ? n : 64);
    if (!p) std::abort();
    return p;
}

void tb_rt_free(void* p) { std::free(p); }
}

namespace tb::codegen {

std::vector<std::pair<std::string, void*>> runtimeSymbols() {
    return {{"tb_rt_parallel_for", reinterpret_cast<void*>(&tb_rt_parallel_for)},
            {"tb_rt_alloc", reinterpret_cast<void*>(&tb_rt_alloc)},
            {"tb_rt_free", reinterpret_cast<void*>(&tb_rt_free)}};
}

}  // namespace tb::codegen
