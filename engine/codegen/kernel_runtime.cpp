// SPDX-License-Identifier: Apache-2.0
#include "engine/codegen/kernel_runtime.h"

#include <algorithm>
#include <cstddef>
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
    return tb::codegen::workspaceAlloc(bytes > 0 ? static_cast<size_t>(bytes) : 0);
}

__attribute__((visibility("default"))) void tb_rt_free(void* p) { tb::codegen::workspaceFree(p); }
}

namespace tb::codegen {

namespace {

/// Each block starts with a 64-byte header holding its usable size, so that a free knows it.
constexpr size_t kHeader = 64;
/// Bytes of freed blocks a thread keeps for reuse; beyond it, frees go back to the heap.
constexpr size_t kCacheLimit = size_t(1) << 30;

struct WorkspaceCache {
    std::vector<std::pair<size_t, void*>> blocks;  // (usable size, block start), freed and kept
    size_t bytes = 0;
    ~WorkspaceCache() {
        for (auto& [n, p] : blocks) std::free(p);
    }
};

WorkspaceCache& cache() {
    thread_local WorkspaceCache c;
    return c;
}

}  // namespace

void* workspaceAlloc(size_t bytes) {
    const size_t n = std::max<size_t>(64, (bytes + 63) / 64 * 64);
    WorkspaceCache& c = cache();
    // Best fit among the kept blocks, no more than twice the request (a small buffer must not pin a
    // large block that a later large request needs).
    size_t best = c.blocks.size();
    for (size_t i = 0; i < c.blocks.size(); ++i) {
        const size_t have = c.blocks[i].first;
        if (have >= n && have <= 2 * n && (best == c.blocks.size() || have < c.blocks[best].first)) best = i;
    }
    char* base = nullptr;
    if (best < c.blocks.size()) {
        base = static_cast<char*>(c.blocks[best].second);
        c.bytes -= c.blocks[best].first;
        c.blocks.erase(c.blocks.begin() + std::ptrdiff_t(best));
    } else {
        base = static_cast<char*>(std::aligned_alloc(64, n + kHeader));
        if (!base) std::abort();
        *reinterpret_cast<size_t*>(base) = n;
    }
    return base + kHeader;
}

void workspaceFree(void* p) {
    if (!p) return;
    char* base = static_cast<char*>(p) - kHeader;
    const size_t n = *reinterpret_cast<size_t*>(base);
    WorkspaceCache& c = cache();
    if (c.bytes + n > kCacheLimit) {
        std::free(base);
        return;
    }
    c.blocks.emplace_back(n, base);
    c.bytes += n;
}

std::vector<std::pair<std::string, void*>> runtimeSymbols() {
    return {{kernel_abi::kParallelFor, reinterpret_cast<void*>(&tb_rt_parallel_for)},
            {kernel_abi::kAlloc, reinterpret_cast<void*>(&tb_rt_alloc)},
            {kernel_abi::kFree, reinterpret_cast<void*>(&tb_rt_free)}};
}

}  // namespace tb::codegen
