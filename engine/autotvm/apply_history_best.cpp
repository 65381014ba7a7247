// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/apply_history_best.h"

#include "engine/support/error.h"

namespace tb::autotvm {

ApplyHistoryBest::ApplyHistoryBest(const std::vector<record::AutoTvmRecord>& records, std::string target,
                                   int simdLanes)
    : m_target(std::move(target)), m_simdLanes(simdLanes), m_armCpu(isArmCpuTarget(m_target)),
      m_mali(isMaliTarget(m_target)) {
    for (const auto& r : records)
        if (!r.isV01()) m_best.add(r);
}

DispatchedConfig ApplyHistoryBest::query(const std::string& taskName, const nlohmann::ordered_json& args) const {
    DispatchedConfig d;
    d.tmpl = findTemplate(taskName);
    TB_USER_CHECK(d.tmpl) << "no AutoTVM template '" << taskName << "'";
    d.args = args;
    record::AutoTvmRecord key;
    key.taskName = taskName;
    key.args = args;
    d.record = m_best.query(m_target, key.workloadKey());
    d.config = d.record ? ConfigEntity::fromJson(d.record->config)
                        : d.tmpl->fallbackConfig(TaskArgs(taskName, args), m_simdLanes);
    return d;
}

std::optional<std::pair<std::int64_t, std::int64_t>> ApplyHistoryBest::nchwcBlocks(
    const graph::Node& conv, const std::vector<std::int64_t>& data, const std::vector<std::int64_t>& kernel) const {
    const DispatchedConfig d = query("conv2d_NCHWc.x86", conv2dNCHWcTaskArgs(data, kernel, conv.attrs));
    return std::make_pair(d.config.split("tile_ic").size.back(), d.config.split("tile_oc").size.back());
}

namespace {

constexpr const char* kWinogradOp = "nn.contrib_conv2d_winograd_without_weight_transform";

// The NCHW conv templates of the arm_cpu or the mali strategy.
struct ConvTemplates {
    const char* spatialPack;
    const char* winograd;
    const char* depthwise;
    const char* winogradBlockKnob;  // the knob whose value packs U (alter_op_layout's VC)
};
constexpr ConvTemplates kArmCpu{"conv2d_nchw_spatial_pack.arm_cpu", "conv2d_nchw_winograd.arm_cpu",
                                "depthwise_conv2d_nchw.arm_cpu", "tile_k"};
constexpr ConvTemplates kMali{"conv2d_nchw_spatial_pack.mali", "conv2d_nchw_winograd.mali",
                              "depthwise_conv2d_nchw.mali", "tile_bna"};

std::vector<std::int64_t> pairOf(const std::vector<std::int64_t>& v) {
    return v.size() == 1 ? std::vector<std::int64_t>{v[0], v[0]} : v;
}

}  // namespace

std::optional<graph::AlterLayoutOptions::ArmCpuConv> ApplyHistoryBest::armCpuConv(
    const graph::Node& conv, const std::vector<std::int64_t>& data, const std::vector<std::int64_t>& kernel) const {
    if (!m_armCpu && !m_mali) return std::nullopt;
    const ConvTemplates& t = m_mali ? kMali : kArmCpu;
    const nlohmann::ordered_json args = armCpuConvTaskArgs(data, kernel, conv.attrs);
    const std::vector<std::int64_t> one{1, 1};
    const bool winogradApplicable = kernel.size() == 4 && kernel[2] == 3 && kernel[3] == 3 &&
                                    pairOf(conv.attrs.getInts("strides", {1, 1})) == one &&
                                    pairOf(conv.attrs.getInts("dilation", {1, 1})) == one;
    // select_implementation: the fastest record among the implementations, else the highest plevel.
    // A conv the templates cannot take (their space refuses the args) stays as it is.
    try {
        const DispatchedConfig sp = query(t.spatialPack, args);
        graph::AlterLayoutOptions::ArmCpuConv choice{false, sp.config.split("tile_co").size.back()};
        if (winogradApplicable) {
            const DispatchedConfig wg = query(t.winograd, args);
            if (!wg.isFallback() && (sp.isFallback() || wg.record->meanCost() < sp.record->meanCost())) {
                // arm_cpu: tile_k's inner factor, tile size 4; mali: tile_bna, _pick_tile_size.
                const std::int64_t block = m_mali ? wg.config.knobValue(t.winogradBlockKnob).get<std::int64_t>()
                                                  : wg.config.split(t.winogradBlockKnob).size.back();
                const std::int64_t tile = m_mali && data.size() == 4 && data[2] % 4 != 0 ? 2 : 4;
                choice = {true, block, tile};
            }
        }
        return choice;
    } catch (const UserError&) {
        return std::nullopt;
    }
}

std::optional<ExtractedTask> ApplyHistoryBest::implementationOf(const graph::Graph& g,
                                                               const graph::FusedGroup& group) const {
    using ojson = nlohmann::ordered_json;
    for (graph::NodeId id : group.nodes) {
        const graph::Node& n = g.node(id);
        const ConvTemplates& t = m_mali ? kMali : kArmCpu;
        const bool armConv = (m_armCpu || m_mali) && (n.op == "nn.conv2d" || n.op == kWinogradOp);
        if (n.kind != graph::NodeKind::Op || (n.op != "nn.contrib_conv2d_NCHWc" && n.op != "nn.dense" && !armConv))
            continue;
        const auto& d = g.node(n.inputs.at(0)).type;
        const auto& k = g.node(n.inputs.at(1)).type;
        if (d.dtype != graph::DType::Float32 || k.dtype != graph::DType::Float32) return std::nullopt;
        if (armConv) {
            if (d.shape.size() != 4 || n.attrs.getString("data_layout", "NCHW") != "NCHW") return std::nullopt;
            const std::string kl = n.attrs.getString("kernel_layout", "OIHW");
            const std::int64_t groups = n.attrs.getInt("groups", 1);
            if (n.op == kWinogradOp) {
                if (k.shape.size() != 5) return std::nullopt;
                const std::vector<std::int64_t> kernel{k.shape[2] * k.shape[4], k.shape[3], 3, 3};
                return ExtractedTask{t.winograd, armCpuConvTaskArgs(d.shape, kernel, n.attrs)};
            }
            if (groups == 1 && k.shape.size() == 5 && kl == "OIHW" + std::to_string(k.shape[4]) + "o") {
                const std::vector<std::int64_t> kernel{k.shape[0] * k.shape[4], k.shape[1], k.shape[2], k.shape[3]};
                return ExtractedTask{t.spatialPack, armCpuConvTaskArgs(d.shape, kernel, n.attrs)};
            }
            // TVM is_depthwise_conv2d: in channels == groups == out channels.
            if (groups > 1 && kl == "OIHW" && k.shape.size() == 4 && groups == d.shape[1] && groups == k.shape[0])
                return ExtractedTask{t.depthwise, armCpuConvTaskArgs(d.shape, k.shape, n.attrs)};
            return std::nullopt;
        }
        if (n.op == "nn.dense") {
            if (d.shape.size() != 2 || k.shape.size() != 2) return std::nullopt;
            const ojson args = ojson::array({ojson::array({"TENSOR", d.shape, "float32"}),
                                             ojson::array({"TENSOR", k.shape, "float32"}), nullptr, "float32"});
            if (m_mali) return ExtractedTask{"dense.mali", args};  // strategy/mali.py: the only one
            // select_implementation: the fastest record among the implementations, else the
            // highest plevel (dense_pack 10 > dense_nopack 5).
            std::optional<ExtractedTask> best;
            double bestCost = 0;
            for (const char* name : {"dense_nopack.x86", "dense_pack.x86"}) {
                const DispatchedConfig c = query(name, args);
                if (c.isFallback()) continue;
                if (!best || c.record->meanCost() < bestCost) {
                    best = ExtractedTask{name, args};
                    bestCost = c.record->meanCost();
                }
            }
            return best ? best : ExtractedTask{"dense_pack.x86", args};
        }
        if (d.shape.size() != 5 || k.shape.size() != 6 || n.attrs.getInt("groups", 1) != 1) return std::nullopt;
        const std::vector<std::int64_t> data{d.shape[0], d.shape[1] * d.shape[4], d.shape[2], d.shape[3]};
        const std::vector<std::int64_t> kernel{k.shape[0] * k.shape[5], k.shape[1] * k.shape[4], k.shape[2],
                                               k.shape[3]};
        return ExtractedTask{"conv2d_NCHWc.x86", conv2dNCHWcTaskArgs(data, kernel, n.attrs)};
    }
    return std::nullopt;
}

graph::OpImplementation ApplyHistoryBest::opImplementation(const ExtractedTask& task) const {
    const DispatchedConfig d = query(task.taskName, task.args);
    if (!d.tmpl->hasNetworkCompute()) return {};
    const bool spatialPack = task.taskName == kArmCpu.spatialPack || task.taskName == kMali.spatialPack;
    const bool winograd = task.taskName == kArmCpu.winograd || task.taskName == kMali.winograd;
    const std::string anchorOp = spatialPack ? "nn.conv2d" : winograd ? kWinogradOp : "nn.dense";
    return [d, anchorOp](const graph::Node& n, const std::vector<te::Tensor>& inputs) -> std::optional<te::Tensor> {
        if (n.op != anchorOp) return std::nullopt;
        return d.tmpl->networkCompute(TaskArgs(d.tmpl->name(), d.args), d.config, inputs);
    };
}

}  // namespace tb::autotvm
