// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/task_extraction.h"

#include <algorithm>
#include <cctype>

#include "engine/support/md5.h"

#include <map>
#include <sstream>
#include <unordered_map>

#include "engine/graph/fuse_ops.h"
#include "engine/graph/op_registry.h"
#include "engine/support/error.h"
#include "engine/topi/elemwise.h"
#include "engine/topi/nn/winograd.h"

namespace tb::graph {

namespace {

// The TVM keys of a target string (target.cc FromConfig): -keys, then -device, then (only
// without -keys) the kind's defaults; duplicates dropped. Only what the strategy dispatch needs:
// options after a -host= belong to the host.
std::vector<std::string> targetKeys(const std::string& kind, const std::vector<std::string>& tokens) {
    std::vector<std::string> keys, user;
    std::string device;
    bool userKeys = false;
    for (size_t i = 1; i < tokens.size(); ++i) {
        const std::string& tok = tokens[i];
        if (tok.rfind("-host=", 0) == 0) break;
        if (tok.rfind("-keys=", 0) == 0) {
            userKeys = true;
            std::istringstream ks(tok.substr(6));
            for (std::string k; std::getline(ks, k, ',');)
                if (!k.empty()) user.push_back(k);
        } else if (tok.rfind("-device=", 0) == 0) {
            device = tok.substr(8);
        }
    }
    std::vector<std::string> all = user;
    if (!device.empty()) all.push_back(device);
    if (!userKeys) {
        all.push_back(kind);
        all.push_back("gpu");
    }
    for (const auto& k : all)
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    return keys;
}

}  // namespace

AlterLayoutOptions alterOptionsForTarget(const std::string& target) {
    std::istringstream ss(target);
    std::vector<std::string> tokens;
    for (std::string tok; ss >> tok;) tokens.push_back(tok);
    const std::string kind = tokens.empty() ? std::string() : tokens[0];
    AlterLayoutOptions o;
    if (kind == "cuda" || kind == "opencl") {
        // TVM dispatches on the first key with a registration: mali, else cuda/gpu.
        for (const auto& k : targetKeys(kind, tokens)) {
            if (k == "mali") {
                o.strategy = OpStrategy::Mali;
                break;
            }
            if (k == "cuda" || k == "gpu") {
                o.strategy = kind == "cuda" ? OpStrategy::Cuda : OpStrategy::GpuGeneric;
                break;
            }
        }
        TB_USER_CHECK(o.strategy != OpStrategy::X86)
            << "target '" << target << "': its keys name no TVM strategy family (expected mali, cuda or gpu)";
        return o;
    }
    TB_USER_CHECK(kind == "llvm") << "target '" << target
                                  << "': task extraction follows TVM's x86 (llvm), cuda, mali and opencl strategies only";
    for (size_t i = 1; i < tokens.size(); ++i) {
        const std::string& tok = tokens[i];
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
    std::unordered_map<const te::OperationNode*, size_t> paramOf;
    for (size_t i = 0; i < group.params.size(); ++i) paramOf[t.at(group.params[i]).op().get()] = i;
    const auto& ts = r.dag.tensors();
    for (size_t k = 0; k < ts.size(); ++k) {
        const auto it = paramOf.find(ts[k].op().get());
        if (it != paramOf.end() && g.node(group.params[it->second]).kind == NodeKind::Constant)
            r.constantArgs.push_back(int(k));
    }
    for (const auto& op : r.dag.ops())
        if (op->isCompute() && !op->reduceAxis.empty()) r.hasReduce = true;
    return r;
}

OpImplementation gpuImplementation(const AlterLayoutOptions& target) {
    if (target.strategy == OpStrategy::X86 || target.strategy == OpStrategy::Cuda) return {};
    const OpStrategy st = target.strategy;
    const bool winograd = target.winograd && target.autoScheduler;
    return [st, winograd](const Node& n, const std::vector<te::Tensor>& in) -> std::optional<te::Tensor> {
        if (n.op != "nn.conv2d") return std::nullopt;
        const std::string dl = n.attrs.getString("data_layout", "NCHW");
        const int64_t groups = n.attrs.getInt("groups", 1);
        // strategy/mali.py: an NCHW conv2d is the AutoTVM template conv2d_nchw_spatial_pack.mali,
        // whose packed compute is not implemented here.
        TB_USER_CHECK(!(st == OpStrategy::Mali && dl == "NCHW" && groups == 1))
            << "nn.conv2d '" << n.name << "': TVM's Mali strategy lowers an NCHW convolution with the AutoTVM "
            << "spatial-pack template, which is not implemented; convert the network to NHWC";
        if (st != OpStrategy::GpuGeneric || !winograd) return std::nullopt;
        // A generic OpenCL target picks conv2d_nhwc.winograd (strategy/cuda.py) without the weight
        // pre-transform, so the task holds topi.nn.conv2d_winograd_nhwc with its kernel_pack stage.
        const auto& w = in[1].shape();
        auto strides = n.attrs.getInts("strides", {1, 1});
        auto dil = n.attrs.getInts("dilation", {1, 1});
        if (strides.size() == 1) strides.push_back(strides[0]);
        if (dil.size() == 1) dil.push_back(dil[0]);
        const bool fp32 = in[0].dtype() == te::DType::Float32 && in[1].dtype() == te::DType::Float32;
        if (dl != "NHWC" || n.attrs.getString("kernel_layout", "OIHW") != "HWIO" || groups != 1 || !fp32 ||
            w[0] != 3 || w[1] != 3 || strides[0] != 1 || strides[1] != 1 || dil[0] != 1 || dil[1] != 1)
            return std::nullopt;
        const int64_t tile = in[0].shape()[1] % 8 == 0 ? 4 : 2;  // topi/cuda/conv2d_winograd.py _infer_tile_size
        auto pad = n.attrs.getInts("padding", {0, 0});
        return topi::nn::conv2dWinogradNhwc(in[0], in[1], pad, false, tile);
    };
}

std::vector<ExtractedTask> extractTasksFromOptimized(const Graph& optimized, bool includeSimpleTasks) {
    return extractTasksFromOptimized(optimized, AlterLayoutOptions{}, includeSimpleTasks);
}

namespace {
// A task as its first group makes it: weight 1, named after the group as TVM names the function.
ExtractedTask firstOccurrence(const std::string& key, te::ComputeDAG dag, const std::string& groupName, NodeId root,
                              std::vector<int> constantArgs) {
    ExtractedTask task;
    task.constantArgs = std::move(constantArgs);
    task.workloadKey = key;
    task.flop = dag.flopCount();
    task.dag = std::move(dag);
    task.weight = 1;
    task.desc = "vm_mod_" + groupName;
    task.groupRoots.push_back(root);
    return task;
}
}  // namespace

std::vector<ExtractedTask> extractTasksFromOptimized(const Graph& optimized, const AlterLayoutOptions& target,
                                                     bool includeSimpleTasks) {
    const OpImplementation impl = gpuImplementation(target);
    // Only x86 lowers concatenate to a te.extern (concatenate.cpu); the cuda/gpu strategy takes
    // topi.transform.concatenate, a plain injective compute.
    const bool concatIsExtern = target.strategy == OpStrategy::X86;
    std::vector<ExtractedTask> tasks;
    std::map<std::string, size_t> byKey;
    for (const FusedGroup& fg : fuseOps(optimized)) {
        // Quick exits before lowering: groups that cannot or need not become tasks.
        bool hasRealOp = false;
        for (NodeId id : fg.nodes) hasRealOp |= optimized.node(id).kind == NodeKind::Op;
        if (!hasRealOp) continue;
        LoweredGroup lg = lowerGroup(optimized, fg, impl);
        if (lg.extern_ && concatIsExtern) continue;
        if (!lg.hasReduce && !includeSimpleTasks) continue;
        std::string key = lg.dag.workloadKey();
        auto it = byKey.find(key);
        if (it == byKey.end()) {
            byKey[key] = tasks.size();
            tasks.push_back(firstOccurrence(key, std::move(lg.dag), fg.name, fg.root, std::move(lg.constantArgs)));
        } else {
            tasks[it->second].weight += 1;
            tasks[it->second].groupRoots.push_back(fg.root);
        }
    }
    return tasks;
}

namespace {
bool isWinogradGroup(const Graph& g, const FusedGroup& fg) {
    for (NodeId id : fg.nodes)
        if (g.node(id).kind == NodeKind::Op && g.node(id).op == "nn.contrib_conv2d_winograd_without_weight_transform")
            return true;
    return false;
}
}  // namespace

std::vector<WinogradDirectPair> winogradDirectPairs(const Graph& g, const Graph& ruleGraph,
                                                    const std::vector<FusedGroup>& ruleGroups,
                                                    const AlterLayoutOptions& ao) {
    if (std::none_of(ruleGroups.begin(), ruleGroups.end(),
                     [&](const FusedGroup& fg) { return isWinogradGroup(ruleGraph, fg); }))
        return {};
    AlterLayoutOptions direct = ao;
    direct.winograd = false;
    direct.winogradAt = nullptr;
    const Graph dg = optimizeForTasks(g, direct);
    const std::vector<FusedGroup> dgroups = fuseOps(dg);
    if (ruleGroups.size() != dgroups.size()) return {};
    const OpImplementation impl = gpuImplementation(ao);
    std::vector<WinogradDirectPair> pairs;
    for (size_t i = 0; i < ruleGroups.size(); ++i) {
        if (!isWinogradGroup(ruleGraph, ruleGroups[i])) continue;
        LoweredGroup direct = lowerGroup(dg, dgroups[i], impl);
        pairs.push_back({lowerGroup(ruleGraph, ruleGroups[i], impl).dag.workloadKey(), std::move(direct.dag),
                         dgroups[i].name, dgroups[i].root, std::move(direct.constantArgs)});
    }
    return pairs;
}

std::vector<ExtractedTask> extractTasks(const Graph& g, const TaskExtractionOptions& options) {
    AlterLayoutOptions ao = alterOptionsForTarget(options.target);
    ao.winograd = options.winograd;
    Graph opt = optimizeForTasks(g, ao);
    std::vector<ExtractedTask> tasks = extractTasksFromOptimized(opt, ao, options.includeSimpleTasks);
    if (!options.winograd || !options.winogradAlternatives) return tasks;
    std::map<std::string, size_t> byKey;
    for (size_t i = 0; i < tasks.size(); ++i) byKey[tasks[i].workloadKey] = i;
    const size_t tvmTasks = tasks.size();
    for (WinogradDirectPair& p : winogradDirectPairs(g, opt, fuseOps(opt), ao)) {
        const auto w = byKey.find(p.winogradKey);
        if (w == byKey.end()) continue;
        std::string key = p.direct.workloadKey();
        const auto d = byKey.find(key);
        if (d != byKey.end()) {
            if (d->second < tvmTasks) continue;  // already one of TVM's tasks: not an alternative
            tasks[d->second].weight += 1;          // another convolution of the same alternative
            tasks[d->second].groupRoots.push_back(p.directRoot);
            continue;
        }
        ExtractedTask alt = firstOccurrence(key, std::move(p.direct), p.directName, p.directRoot, std::move(p.directConstantArgs));
        alt.alternativeOf = int(w->second);
        byKey[std::move(key)] = tasks.size();
        tasks.push_back(std::move(alt));
    }
    return tasks;
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
