// SPDX-License-Identifier: Apache-2.0
#include "engine/search/gpu_limits.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "engine/schedule/infer_bound.h"
#include "engine/support/error.h"

namespace tb::search {

namespace {

bool computed(const Stage& st) { return st.opType == StageKind::Compute && st.computeAt != ComputeAtKind::Inlined; }

int64_t extentOr1(const Iterator& it) { return it.range ? std::max<int64_t>(it.range->extent, 1) : 1; }

bool endsWith(const std::string& s, const char* suffix) {
    const std::string t(suffix);
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

// Visits the loops around stage `sid`'s stores, innermost first: its own loops, then the loops of
// the stage it is attached at up to the attach point, and so on.
template <class F>
void forEnclosingLoops(const State& state, int sid, F&& f) {
    const Stage& own = state.stage(sid);
    for (size_t i = own.iters.size(); i-- > 0;) f(own.iters[i]);
    int cur = sid;
    for (size_t guard = 0; guard <= state.stages().size(); ++guard) {
        auto at = state.attachMap().attachedAt(cur);
        if (!at) return;
        const Stage& ts = state.stage(at->first);
        for (int i = at->second; i >= 0 && size_t(i) < ts.iters.size(); --i) f(ts.iters[size_t(i)]);
        cur = at->first;
    }
}

int rootOf(const State& state, int sid) {
    int cur = sid;
    for (size_t guard = 0; guard <= state.stages().size(); ++guard) {
        auto at = state.attachMap().attachedAt(cur);
        if (!at) return cur;
        cur = at->first;
    }
    return cur;
}

}  // namespace

int dtypeBytes(te::DType t) {
    switch (t) {
        case te::DType::Bool: return 1;
        case te::DType::Int64: case te::DType::Float64: return 8;
        default: return 4;
    }
}

std::vector<GpuThreadExtents> gpuThreadExtents(const State& state) {
    std::vector<GpuThreadExtents> out(state.stages().size());
    for (size_t sid = 0; sid < out.size(); ++sid) {
        if (!computed(state.stage(int(sid)))) continue;
        GpuThreadExtents& g = out[sid];
        bool seen[6] = {};
        forEnclosingLoops(state, int(sid), [&](const Iterator& it) {
            int64_t* slot = nullptr;
            int k = -1;
            switch (it.annotation) {
                case IteratorAnnotation::BlockX: slot = &g.blockX; k = 0; break;
                case IteratorAnnotation::BlockY: slot = &g.blockY; k = 1; break;
                case IteratorAnnotation::BlockZ: slot = &g.blockZ; k = 2; break;
                case IteratorAnnotation::ThreadX: slot = &g.threadX; k = 3; break;
                case IteratorAnnotation::ThreadY: slot = &g.threadY; k = 4; break;
                case IteratorAnnotation::ThreadZ: slot = &g.threadZ; k = 5; break;
                case IteratorAnnotation::VThread: g.vthread *= extentOr1(it); g.bound = true; return;
                default: return;
            }
            g.bound = true;
            if (seen[k]) return;  // an inner binding of the same tag wins (TVM's nested thread_extent)
            seen[k] = true;
            *slot = extentOr1(it);
        });
    }
    return out;
}

std::vector<GpuKernelUsage> gpuKernelUsage(const State& state) {
    const size_t n = state.stages().size();
    // Region sizes of the cache stages, from the same bound inference the lowering uses.
    LoopVars vars(n);
    for (size_t sid = 0; sid < n; ++sid) {
        const Stage& st = state.stage(int(sid));
        if (!computed(st)) continue;
        for (const auto& it : st.iters) vars[sid].push_back(te::Var(it.name));
    }
    const std::vector<StageBounds> bounds = inferSymbolicBounds(state, vars);
    const std::vector<GpuThreadExtents> threads = gpuThreadExtents(state);

    std::map<int, GpuKernelUsage> kernels;
    std::map<int, std::map<IteratorAnnotation, int64_t>> threadTags;  // kernel -> tag -> extent
    for (size_t sid = 0; sid < n; ++sid) {
        const Stage& st = state.stage(int(sid));
        if (!computed(st)) continue;
        const int root = rootOf(state, int(sid));
        GpuKernelUsage& k = kernels[root];
        k.rootStage = root;
        k.maxVthread = std::max(k.maxVthread, threads[sid].vthread);
        const int elem = dtypeBytes(st.op->dtype);
        for (const auto& it : st.iters) {
            if (it.annotation == IteratorAnnotation::Vectorize)
                k.maxVectorBytes = std::max(k.maxVectorBytes, extentOr1(it) * elem);
            if (int(sid) == root && isThreadBinding(it.annotation) && it.annotation != IteratorAnnotation::VThread)
                k.bound = true;
            if (it.annotation != IteratorAnnotation::ThreadX && it.annotation != IteratorAnnotation::ThreadY &&
                it.annotation != IteratorAnnotation::ThreadZ)
                continue;
            auto [pos, fresh] = threadTags[root].emplace(it.annotation, extentOr1(it));
            if (!fresh && pos->second != extentOr1(it) && k.threadMismatch.empty()) {
                std::ostringstream os;
                os << annotationString(it.annotation) << " is bound with extents " << pos->second << " and "
                   << extentOr1(it) << " (" << st.op->name << ")";
                k.threadMismatch = os.str();
            }
        }
        const bool shared = endsWith(st.op->name, ".shared"), local = endsWith(st.op->name, ".local");
        if (!shared && !local) continue;
        int64_t elems = 1;
        const StageBounds& b = bounds[sid];
        for (size_t a = 0; a < st.op->axis.size() && a < b.extent.size(); ++a) elems *= std::max<int64_t>(b.extent[a], 1);
        (shared ? k.sharedBytes : k.localBytes) += elems * elem;
    }
    std::vector<GpuKernelUsage> out;
    for (auto& [root, k] : kernels) {
        for (const auto& [tag, ext] : threadTags[root]) k.threadsPerBlock *= ext;
        out.push_back(std::move(k));
    }
    return out;
}

std::string verifyGpuState(const State& state, const HardwareParams& hw) {
    std::ostringstream os;
    for (const GpuKernelUsage& k : gpuKernelUsage(state)) {
        const std::string& name = state.stage(k.rootStage).op->name;
        if (!k.bound) {
            os << name << ": the kernel binds no loop to blockIdx or threadIdx";
        } else if (!k.threadMismatch.empty()) {
            os << name << ": " << k.threadMismatch;
        } else if (hw.maxThreadsPerBlock > 0 && k.threadsPerBlock > hw.maxThreadsPerBlock) {
            os << name << ": " << k.threadsPerBlock << " threads per block > max_threads_per_block "
               << hw.maxThreadsPerBlock;
        } else if (hw.maxVthreadExtent > 0 && k.maxVthread > hw.maxVthreadExtent) {
            os << name << ": vthread extent " << k.maxVthread << " > max_vthread_extent " << hw.maxVthreadExtent;
        } else if (hw.maxSharedMemoryPerBlock > 0 && k.sharedBytes > hw.maxSharedMemoryPerBlock) {
            os << name << ": " << k.sharedBytes << " bytes of shared memory > max_shared_memory_per_block "
               << hw.maxSharedMemoryPerBlock;
        } else if (hw.maxLocalMemoryPerBlock > 0 && k.localBytes > hw.maxLocalMemoryPerBlock) {
            os << name << ": " << k.localBytes << " bytes of local memory > max_local_memory_per_block "
               << hw.maxLocalMemoryPerBlock;
        } else if (hw.vectorUnitBytes > 0 && k.maxVectorBytes > hw.vectorUnitBytes) {
            os << name << ": a vectorized loop of " << k.maxVectorBytes << " bytes > vector_unit_bytes "
               << hw.vectorUnitBytes;
        }
        if (os.tellp() > 0) return os.str();
    }
    return {};
}

}  // namespace tb::search
