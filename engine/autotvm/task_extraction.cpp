// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/task_extraction.h"

#include <set>

#include "engine/autotvm/template.h"
#include "engine/support/error.h"

namespace tb::autotvm {

namespace {

using ojson = nlohmann::ordered_json;

ojson tensorArg(const graph::TensorType& t) {
    return ojson::array({"TENSOR", t.shape, "float32"});
}

std::vector<std::int64_t> fourPads(const std::vector<std::int64_t>& p) {
    if (p.size() == 1) return {p[0], p[0], p[0], p[0]};
    if (p.size() == 2) return {p[0], p[1], p[0], p[1]};
    return p;
}

std::vector<std::int64_t> pair(const std::vector<std::int64_t>& v) {
    return v.size() == 1 ? std::vector<std::int64_t>{v[0], v[0]} : v;
}

enum class Family { X86, ArmCpu, Mali };

// The strategies: the templates TVM's strategy offers for one op, in strategy order.
ExtractedTasks extract(const graph::Graph& graph, Family family) {
    const bool arm = family == Family::ArmCpu, mali = family == Family::Mali;
    ExtractedTasks out;
    std::set<std::string> seen;
    auto add = [&](const std::string& name, ojson args) {
        if (!seen.insert(name + args.dump()).second) return;
        const Template* t = findTemplate(name);
        out.all.push_back({name, args});
        (t && t->canInstantiate() ? out.tasks : out.notInstantiable).push_back({name, std::move(args)});
    };
    for (const auto& n : graph.nodes()) {
        if (n.kind != graph::NodeKind::Op || (n.op != "nn.conv2d" && n.op != "nn.dense")) continue;
        const auto& data = graph.node(n.inputs.at(0)).type;
        const auto& weight = graph.node(n.inputs.at(1)).type;
        if (data.dtype != graph::DType::Float32 || weight.dtype != graph::DType::Float32) {
            ++out.skippedOps;
            continue;
        }
        if (n.op == "nn.dense") {
            if (data.shape.size() != 2 || weight.shape.size() != 2) {
                ++out.skippedOps;
                continue;
            }
            const ojson args = ojson::array({tensorArg(data), tensorArg(weight), nullptr, "float32"});
            if (mali) {
                add("dense.mali", args);
                continue;
            }
            add("dense_nopack.x86", args);
            add("dense_pack.x86", args);
            continue;
        }
        const auto& a = n.attrs;
        const int64_t groups = a.getInt("groups", 1);
        if (a.getString("data_layout", "NCHW") != "NCHW" || a.getString("kernel_layout", "OIHW") != "OIHW" ||
            data.shape.size() != 4 || weight.shape.size() != 4) {
            ++out.skippedOps;
            continue;
        }
        // TVM is_depthwise_conv2d: in channels == groups == out channels.
        const bool depthwise = groups > 1 && groups == data.shape[1] && groups == weight.shape[0];
        const auto strides = pair(a.getInts("strides", {1, 1}));
        const auto dilation = pair(a.getInts("dilation", {1, 1}));
        const ojson armArgs = armCpuConvTaskArgs(data.shape, weight.shape, a);
        const bool winogradShape = weight.shape[2] == 3 && weight.shape[3] == 3 &&
                                   strides == std::vector<std::int64_t>{1, 1} &&
                                   dilation == std::vector<std::int64_t>{1, 1};
        if (mali) {  // strategy/mali.py conv2d_strategy_mali (NCHW, OIHW)
            if (groups == 1) {
                add("conv2d_nchw_spatial_pack.mali", armArgs);
                if (winogradShape) add("conv2d_nchw_winograd.mali", armArgs);
            } else if (depthwise) {
                add("depthwise_conv2d_nchw.mali", armArgs);
            } else {
                ++out.skippedOps;  // TVM raises "group_conv2d is not supported for mali"
            }
            continue;
        }
        if (groups == 1) {
            if (arm) add("conv2d_nchw_spatial_pack.arm_cpu", armArgs);
            add("conv2d_NCHWc.x86", conv2dNCHWcTaskArgs(data.shape, weight.shape, a));
            if (arm && winogradShape)
                add("conv2d_nchw_winograd.arm_cpu", armArgs);
        } else if (depthwise) {
            if (arm) add("depthwise_conv2d_nchw.arm_cpu", armArgs);
            if (weight.shape[1] == 1 && dilation == std::vector<std::int64_t>{1, 1})
                add("depthwise_conv2d_NCHWc.x86", conv2dNCHWcTaskArgs(data.shape, weight.shape, a));
        } else {
            ++out.skippedOps;
        }
    }
    return out;
}

}  // namespace

ExtractedTasks extractX86Tasks(const graph::Graph& graph) { return extract(graph, Family::X86); }
ExtractedTasks extractArmCpuTasks(const graph::Graph& graph) { return extract(graph, Family::ArmCpu); }
ExtractedTasks extractMaliTasks(const graph::Graph& graph) { return extract(graph, Family::Mali); }

bool isMaliTarget(const std::string& target) {
    const std::string kind = target.substr(0, target.find_first_of(" \t"));
    return kind == "opencl" && (target.find("-device=mali") != std::string::npos ||
                                (target.find("-keys=") != std::string::npos && target.find("mali") != std::string::npos));
}

std::string relayOpOf(const std::string& taskName) {
    return taskName.rfind("dense", 0) == 0 ? "nn.dense" : "nn.conv2d";
}

bool isArmCpuTarget(const std::string& target) {
    return target.find("-device=arm_cpu") != std::string::npos ||
           (target.find("-keys=") != std::string::npos && target.find("arm_cpu") != std::string::npos);
}

ExtractedTasks extractTasks(const graph::Graph& graph, const std::string& target) {
    // Other GPU targets (cuda, opencl without mali) have their own templates (strategy/cuda.py);
    // until they are here, say so rather than hand out the x86 ones.
    if (isMaliTarget(target)) return extractMaliTasks(graph);
    const std::string kind = target.substr(0, target.find_first_of(" \t"));
    TB_USER_CHECK(kind != "cuda" && kind != "opencl")
        << "target '" << target << "': AutoTVM task extraction follows the x86, arm_cpu and mali strategies only "
        << "(no templates for other GPUs yet)";
    return isArmCpuTarget(target) ? extractArmCpuTasks(graph) : extractX86Tasks(graph);
}

ojson armCpuConvTaskArgs(const std::vector<std::int64_t>& dataNCHW, const std::vector<std::int64_t>& kernelOIHW,
                         const graph::Attrs& a) {
    return ojson::array({ojson::array({"TENSOR", dataNCHW, "float32"}), ojson::array({"TENSOR", kernelOIHW, "float32"}),
                         pair(a.getInts("strides", {1, 1})), fourPads(a.getInts("padding", {0, 0})),
                         pair(a.getInts("dilation", {1, 1})), "float32"});
}

ojson conv2dNCHWcTaskArgs(const std::vector<std::int64_t>& dataNCHW, const std::vector<std::int64_t>& kernelOIHW,
                          const graph::Attrs& a) {
    ojson args = ojson::array({ojson::array({"TENSOR", dataNCHW, "float32"}),
                               ojson::array({"TENSOR", kernelOIHW, "float32"})});
    args.push_back(pair(a.getInts("strides", {1, 1})));
    args.push_back(fourPads(a.getInts("padding", {0, 0})));
    args.push_back(pair(a.getInts("dilation", {1, 1})));
    args.push_back("NCHW");
    args.push_back("NCHW");
    args.push_back("float32");
    return args;
}

}  // namespace tb::autotvm
