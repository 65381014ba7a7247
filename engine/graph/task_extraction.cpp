// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/task_extraction.h"

#include <cctype>

#include "engine/support/md5.h"

#include <map>
#include <sstream>
#include <unordered_map>

#include "engine/graph/fuse_ops.h"
#include "engine/graph/op_registry.h"
#include "engine/support/error.h"
#include "engine/topi/elemwise.h"

namespace tb::graph {

AlterLayoutOptions alterOptionsForTarget(const std::string& target) {
    std::istringstream ss(target);
    std::string kind;
    ss >> kind;
    TB_USER_CHECK(kind == "llvm") << "target '" << target
                                  << "': task extraction follows TVM's x86 (llvm) strategies only";
    AlterLayoutOptions o;
    std::string tok;
    while (ss >> tok) {
        if (tok.rfind("-mcpu=", 0) == 0) {
            std::string cpu = tok.substr(6);
            static const char* avx512[] = {"skylake-avx512", "skx", "cascadelake", "cooperlake", "icelake-client",
                                           "icelake-server", "tigerlake", "rocketlake", "sapphirerapids",
                                           "knl", "knm", "znver4", "x86-64-v4"};
            for (const char* c : avx512)
                if (cpu == c) o.simdLanes = 16;
        } else if (tok.rfind("-mattr=", 0) == 0 && tok.find("avx512f") != std::string::npos) {
            o.simdLanes = 16;
        }
    }
    return o;
}

LoweredGroup lowerGroup(const Graph& g, const FusedGroup& group, const OpImplementation& implementation) {
    std::unordered_map<NodeId, te::Tensor> t;
    for (size_t i = 0; i < group.params.size(); ++i) {
        const Node& p = g.node(group.params[i]);
        t[group.params[i]] = te::placeholder(p.type.shape, "p" + std::to_string(i), p.type.dtype);
    }
    LoweredGroup r;
    for (NodeId id : group.nodes) {
        const Node& n = g.node(id);
        if (n.kind == NodeKind::Constant) {
            // A scalar constant inside a fused function (te_compiler_cache.cc: compile_engine_const).
            TB_CHECK(n.type.shape.empty() && !n.value->f.empty()) << "non-scalar constant inside a group";
            t[id] = topi::scalarConst(n.value->f[0], n.type.dtype);
            continue;
        }
        if (n.op == "concatenate") r.extern_ = true;
        const OpDef* def = findOp(n.op);
        TB_USER_CHECK(def && def->lower) << "operator '" << n.op << "' has no te lowering";
        std::vector<te::Tensor> in;
        for (NodeId p : n.inputs) {
            auto it = t.find(p);
            TB_CHECK(it != t.end()) << "input %" << p << " of %" << id << " is neither a member nor a param";
            in.push_back(it->second);
        }
        if (implementation) {
            if (auto impl = implementation(n, in)) {
                t[id] = *impl;
                continue;
            }
        }
        try {
            t[id] = def->lower(in, n.attrs);
        } catch (const UserError& e) {
            TB_USER_ERROR() << n.op << (n.name.empty() ? "" : " '" + n.name + "'") << ": " << e.what();
        }
    }
    r.dag = te::ComputeDAG::fromOutputs({t.at(group.root)});
    for (const auto& op : r.dag.ops())
        if (op->isCompute() && !op->reduceAxis.empty()) r.hasReduce = true;
    return r;
}

std::vector<ExtractedTask> extractTasksFromOptimized(const Graph& optimized, bool includeSimpleTasks) {
    std::vector<ExtractedTask> tasks;
    std::map<std::string, size_t> byKey;
    for (const FusedGroup& fg : fuseOps(optimized)) {
        // Quick exits before lowering: groups that cannot or need not become tasks.
        bool hasRealOp = false;
        for (NodeId id : fg.nodes) hasRealOp |= optimized.node(id).kind == NodeKind::Op;
        if (!hasRealOp) continue;
        LoweredGroup lg = lowerGroup(optimized, fg);
        if (lg.extern_) continue;
        if (!lg.hasReduce && !includeSimpleTasks) continue;
        std::string key = lg.dag.workloadKey();
        auto it = byKey.find(key);
        if (it == byKey.end()) {
            ExtractedTask task;
            task.workloadKey = key;
            task.flop = lg.dag.flopCount();
            task.dag = std::move(lg.dag);
            task.weight = 1;
            task.desc = "vm_mod_" + fg.name;
            task.groupRoots.push_back(fg.root);
            byKey[key] = tasks.size();
            tasks.push_back(std::move(task));
        } else {
            tasks[it->second].weight += 1;
            tasks[it->second].groupRoots.push_back(fg.root);
        }
    }
    return tasks;
}

std::vector<ExtractedTask> extractTasks(const Graph& g, const TaskExtractionOptions& options) {
    AlterLayoutOptions ao = alterOptionsForTarget(options.target);
    ao.winograd = options.winograd;
    Graph opt = optimizeForTasks(g, ao);
    return extractTasksFromOptimized(opt, options.includeSimpleTasks);
}

std::string legacyTvmWorkloadKey(const te::ComputeDAG& dag) {
    std::string text = dag.print(true);
    auto isIdent = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    auto replaceWord = [&](const std::string& from, const std::string& to) {
        for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos;) {
            bool start = pos == 0 || !isIdent(text[pos - 1]);
            bool end = pos + from.size() >= text.size() || !isIdent(text[pos + from.size()]);
            if (start && end) {
                text.replace(pos, from.size(), to);
                pos += to.size();
            } else {
                pos += from.size();
            }
        }
    };
    for (const auto& t : dag.inputs()) replaceWord(t.name(), "placeholder");
    if (text.find("conv2d_nhwc") != std::string::npos) replaceWord("pad_temp", "PaddedInput");
    replaceWord("conv2d_nhwc", "Conv2dOutput");
    for (const char* pool : {"pool_max", "adaptive_pool_sum", "adaptive_pool_avg"}) replaceWord(pool, "tensor");
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& io : dag.tensors()) shapes.push_back(io.shape());
    return te::makeWorkloadKey(md5Hex(text), shapes);
}

}  // namespace tb::graph
