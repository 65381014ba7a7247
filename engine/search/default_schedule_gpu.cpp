// SPDX-License-Identifier: Apache-2.0
#include "engine/search/default_schedule_gpu.h"

#include <algorithm>
#include <vector>

#include "engine/search/search_utils.h"
#include "engine/support/error.h"

namespace tb::search {

namespace {

using te::Operation;

/// A stage without spatial axes (a reduction to a scalar), as TVM topi's all-reduce schedule
/// (topi/cuda/reduction.py): its reduce loops fused, split by `threads` (by its own extent when
/// that is smaller) and the inner part bound to threadIdx.x, a cross-thread reduction in one block
/// (the GPU lowering's allreduce). Returns the index of the threadIdx.x loop.
int bindScalarReduction(State* st, const te::ComputeDAG& dag, int s, int threads) {
    const int n = int(st->stage(s).iters.size());
    TB_USER_CHECK(n >= 1) << "stage " << st->stage(s).op->name << " has no axis to bind to GPU threads (a scalar)";
    if (n >= 2) {
        std::vector<int> ids;
        for (int i = 0; i < n; ++i) ids.push_back(i);
        fuse(st, dag, s, ids);
    }
    const int64_t extent = extentOf(st->stage(s).iters[0]);
    split(st, dag, s, 0, {extent > 0 && extent < threads ? extent : int64_t(threads)});
    annotate(st, dag, s, 1, IteratorAnnotation::ThreadX);
    return 1;
}

/// Fuses the first `count` loops of stage s, splits the result by `threads` and binds it:
/// [blockIdx.x, threadIdx.x], or [threadIdx.x] alone when it is no larger than `threads`. Returns
/// the index of the threadIdx.x loop. A stage without spatial axes goes to bindScalarReduction.
int bindSpatial(State* st, const te::ComputeDAG& dag, int s, int count, int threads) {
    if (count == 0) return bindScalarReduction(st, dag, s, threads);
    if (count >= 2) {
        std::vector<int> ids;
        for (int i = 0; i < count; ++i) ids.push_back(i);
        fuse(st, dag, s, ids);
    }
    const int64_t extent = extentOf(st->stage(s).iters[0]);
    if (extent > 0 && extent <= threads) {
        // One block: the whole axis on threadIdx.x (TVM's schedule_injective does the same when
        // the output fits one block).
        annotate(st, dag, s, 0, IteratorAnnotation::ThreadX);
        return 0;
    }
    split(st, dag, s, 0, {threads});
    annotate(st, dag, s, 0, IteratorAnnotation::BlockX);
    annotate(st, dag, s, 1, IteratorAnnotation::ThreadX);
    return 1;
}

}  // namespace

State defaultGpuSchedule(const te::ComputeDAG& dag, const HardwareParams& hw) {
    TB_USER_CHECK(hw.maxThreadsPerBlock > 0) << "a GPU default schedule needs max_threads_per_block";
    const int threadsPerBlock = std::min(hw.maxThreadsPerBlock, 256);
    const auto& ops = dag.ops();
    const int n = int(ops.size());
    State st(dag);
    std::vector<bool> inlined(size_t(n), false);
    // 1. Inline every non-output stage without reduction.
    for (int s = 0; s < n; ++s) {
        const Operation& op = ops[size_t(s)];
        if (!op->isCompute() || !op->reduceAxis.empty() || dag.access(op).isOutput) continue;
        computeInline(&st, dag, s);
        inlined[size_t(s)] = true;
    }
    // The readers of each stage, looking through inlined stages.
    auto indexOf = [&](const Operation& op) {
        for (int k = 0; k < n; ++k)
            if (ops[size_t(k)].get() == op.get()) return k;
        return -1;
    };
    auto readers = [&](int s) {
        std::vector<int> out, work{s};
        std::vector<bool> seen(size_t(n), false);
        while (!work.empty()) {
            int cur = work.back();
            work.pop_back();
            for (const auto& [consumer, indices] : dag.access(ops[size_t(cur)]).readBy) {
                const int c = indexOf(consumer);
                if (c < 0 || seen[size_t(c)]) continue;
                seen[size_t(c)] = true;
                if (inlined[size_t(c)]) work.push_back(c);
                else out.push_back(c);
            }
        }
        return out;
    };
    // 2./3. Root stages in order; `shift` counts the cache-write stages inserted before stage i.
    int shift = 0;
    std::vector<bool> fusedInto(size_t(n), false);
    for (int i = 0; i < n; ++i) {
        const Operation& op = ops[size_t(i)];
        if (!op->isCompute() || inlined[size_t(i)] || fusedInto[size_t(i)]) continue;
        const int s = i + shift;
        const int nS = int(op->axis.size());
        if (!op->reduceAxis.empty() && !dag.access(op).isOutput) {
            std::vector<int> rd = readers(i);
            if (rd.size() == 1 && dag.access(ops[size_t(rd[0])]).isOutput && ops[size_t(rd[0])]->reduceAxis.empty() &&
                ops[size_t(rd[0])]->axis.size() == op->axis.size()) {
                bool sameExtents = true;
                for (int k = 0; k < nS; ++k)
                    sameExtents &= ops[size_t(rd[0])]->axis[size_t(k)].extent == op->axis[size_t(k)].extent;
                if (sameExtents) {
                    State backup = st;
                    try {
                        cacheWrite(&st, dag, s, "local");  // s: op.local, s + 1: op (a copy now)
                        computeInline(&st, dag, s + 1);
                        const int o = rd[0] + shift + 1;
                        const int tx = bindSpatial(&st, dag, o, int(ops[size_t(rd[0])]->axis.size()), threadsPerBlock);
                        computeAt(&st, dag, s, o, tx);
                        ++shift;
                        fusedInto[size_t(rd[0])] = true;
                        continue;
                    } catch (const std::exception&) {
                        st = backup;  // fall through to a kernel of its own
                    }
                }
            }
        }
        bindSpatial(&st, dag, s, nS, threadsPerBlock);
    }
    return st;
}

}  // namespace tb::search
