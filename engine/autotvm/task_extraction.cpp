// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/task_extraction.h"

#include <set>

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

}  // namespace

ExtractedTasks extractX86Tasks(const graph::Graph& graph) {
    ExtractedTasks out;
    std::set<std::string> seen;
    auto add = [&](const std::string& name, ojson args) {
        if (seen.insert(name + args.dump()).second) out.tasks.push_back({name, std::move(args)});
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
            add("dense_pack.x86", args);
            add("dense_nopack.x86", args);
            continue;
        }
        const auto& a = n.attrs;
        if (a.getString("data_layout", "NCHW") != "NCHW" || a.getString("kernel_layout", "OIHW") != "OIHW" ||
            a.getInt("groups", 1) != 1) {
            ++out.skippedOps;
            continue;
        }
        add("conv2d_NCHWc.x86", conv2dNCHWcTaskArgs(data.shape, weight.shape, a));
    }
    return out;
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
