// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/template.h"

#include <algorithm>

#include "engine/autotvm/templates_common.h"
#include "engine/support/error.h"

namespace tb::autotvm {

namespace {

// Built on first use (explicit registration: a static library drops self-registering objects).
const detail::TemplateList& registry() {
    static const detail::TemplateList list = [] {
        detail::TemplateList l;
        detail::addX86Templates(l);
        detail::addArmCpuTemplates(l);
        detail::addMaliTemplates(l);
        std::sort(l.begin(), l.end(), [](const auto& a, const auto& b) { return a->name() < b->name(); });
        return l;
    }();
    return list;
}

}  // namespace

TemplateInstance Template::instantiate(const TaskArgs& args, const ConfigEntity&) const {
    (void)args;
    throw UserError("AutoTVM template '" + name() + "' cannot be instantiated here yet (only its space is known)");
}

te::Tensor Template::networkCompute(const TaskArgs& args, const ConfigEntity&, const std::vector<te::Tensor>&) const {
    (void)args;
    throw UserError("AutoTVM template '" + name() + "' has no network compute here");
}

State Template::scheduleFused(const TaskArgs& args, const ConfigEntity&,
                               const std::shared_ptr<const te::ComputeDAG>&) const {
    (void)args;
    throw UserError("AutoTVM template '" + name() + "' cannot schedule a fused network kernel here yet");
}

ConfigEntity Template::fallbackConfig(const TaskArgs& args, int) const {
    ConfigSpace cfg;
    defineSpace(args, cfg);
    ConfigEntity e = cfg.get(0);
    e.index = -1;
    return e;
}

ConfigSpace Template::space(const nlohmann::ordered_json& args) const {
    ConfigSpace cfg;
    defineSpace(TaskArgs(name(), args), cfg);
    return cfg;
}

const Template* findTemplate(std::string_view taskName) {
    for (const auto& t : registry())
        if (t->name() == taskName) return t.get();
    return nullptr;
}

std::vector<const Template*> allTemplates() {
    std::vector<const Template*> out;
    for (const auto& t : registry()) out.push_back(t.get());
    return out;
}

namespace detail {

void setKnob(ConfigEntity& e, const std::string& name, Entity value) {
    for (auto& [n, v] : e.knobs)
        if (n == name) {
            v = std::move(value);
            return;
        }
    throw UserError("config has no knob '" + name + "'");
}

SplitOptions splitOpts(int numOutputs, std::function<bool(const SplitEntity&)> filter, std::int64_t maxFactor,
                       std::string policy) {
    SplitOptions o;
    o.policy = std::move(policy);
    o.numOutputs = numOutputs;
    o.maxFactor = maxFactor;
    o.filter = std::move(filter);
    return o;
}

std::function<bool(const SplitEntity&)> innermostAtMost(std::int64_t limit) {
    return [limit](const SplitEntity& e) { return e.size.back() <= limit; };
}

DepthwiseNchwOutput depthwiseNchwOutput(const TaskArgs& args) {
    args.requireAtLeast(5);
    const TensorArg data = args.tensor(0), kernel = args.tensor(1);
    TB_USER_CHECK(data.shape.size() == 4 && kernel.shape.size() == 4)
        << args.taskName() << ": expects NCHW data and a 4-D kernel";
    const auto [sh, sw] = args.intPair(2);
    const auto [dh, dw] = args.intPair(4);
    const std::int64_t dkh = (kernel.shape[2] - 1) * dh + 1, dkw = (kernel.shape[3] - 1) * dw + 1;
    const auto pad = args.padding(3, dkh, dkw);
    DepthwiseNchwOutput o;
    o.channels = data.shape[1] * kernel.shape[1];
    o.height = floorDiv(data.shape[2] - dkh + pad.top + pad.bottom, sh) + 1;
    o.width = floorDiv(data.shape[3] - dkw + pad.left + pad.right, sw) + 1;
    return o;
}

WinogradNchwShape winogradNchwShape(const TaskArgs& args, std::int64_t tileSize) {
    args.requireAtLeast(5);
    const TensorArg data = args.tensor(0), kernel = args.tensor(1);
    TB_USER_CHECK(data.shape.size() == 4) << args.taskName() << ": expects NCHW data";
    const auto [dh, dw] = args.intPair(4);
    WinogradNchwShape s;
    s.ci = data.shape[1];
    std::int64_t kh = 0, kw = 0;
    if (kernel.shape.size() == 4) {
        s.co = kernel.shape[0];
        kh = (kernel.shape[2] - 1) * dh + 1;  // nn.dilate of the kernel
        kw = (kernel.shape[3] - 1) * dw + 1;
    } else {
        TB_USER_CHECK(kernel.shape.size() == 5) << args.taskName() << ": expects a 4-D or pre-transformed 5-D kernel";
        TB_USER_CHECK(dh == 1 && dw == 1) << args.taskName() << ": a pre-transformed kernel does not support dilation";
        s.co = kernel.shape[2] * kernel.shape[4];
        s.ci = kernel.shape[3];
        kh = kernel.shape[0] - tileSize + 1;
        kw = kernel.shape[1] - tileSize + 1;
    }
    const auto [sh, sw] = args.intPair(2);
    const auto pad = args.padding(3, kh, kw);
    TB_USER_CHECK(kh == 3 && kw == 3 && sh == 1 && sw == 1)
        << args.taskName() << ": winograd needs a 3x3 kernel with stride 1 (TVM asserts it)";
    const std::int64_t h = floorDiv(data.shape[2] + pad.top + pad.bottom - 3, sh) + 1;
    const std::int64_t w = floorDiv(data.shape[3] + pad.left + pad.right - 3, sw) + 1;
    s.p = data.shape[0] * ((h + tileSize - 1) / tileSize) * ((w + tileSize - 1) / tileSize);
    return s;
}

void defineSpatialPackNchw(const TaskArgs& args, ConfigSpace& cfg, int numTile) {
    args.requireAtLeast(5);
    const TensorArg data = args.tensor(0), kernel = args.tensor(1);
    TB_USER_CHECK(data.shape.size() == 4) << args.taskName() << ": expects NCHW data";
    TB_USER_CHECK(kernel.shape.size() == 4 || kernel.shape.size() == 5)
        << args.taskName() << ": expects a 4-D or pre-packed 5-D kernel";
    const auto [dh, dw] = args.intPair(4);
    const std::int64_t co = kernel.shape.size() == 4 ? kernel.shape[0] : kernel.shape[0] * kernel.shape[4];
    const std::int64_t dkh = (kernel.shape[2] - 1) * dh + 1, dkw = (kernel.shape[3] - 1) * dw + 1;
    const auto pad = args.padding(3, dkh, dkw);
    const auto [sh, sw] = args.intPair(2);
    const std::int64_t oh = floorDiv(data.shape[2] + pad.top + pad.bottom - dkh, sh) + 1;
    const std::int64_t ow = floorDiv(data.shape[3] + pad.left + pad.right - dkw, sw) + 1;

    cfg.defineSplit("tile_co", co, splitOpts(numTile));
    cfg.defineSplit("tile_oh", oh, splitOpts(numTile));
    cfg.defineSplit("tile_ow", ow, splitOpts(numTile));
    // Axes [n, co, oh, ow, ci, kh, kw, vh, vw, vc]; the second candidate moves vc before vh, vw.
    ReorderOptions reorder;
    reorder.candidate = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {0, 1, 2, 3, 4, 5, 6, 9, 7, 8}};
    cfg.defineReorder("reorder_0", 10, "candidate", reorder);
    cfg.defineAnnotate("ann_reduce", 2, "try_unroll");
    cfg.defineAnnotate("ann_spatial", 3, "try_unroll_vec");
}

DenseShape denseShape(const TaskArgs& args, bool allowPackedWeight) {
    args.requireAtLeast(2);
    const TensorArg data = args.tensor(0), weight = args.tensor(1);
    TB_USER_CHECK(data.shape.size() == 2) << args.taskName() << ": expects 2-D data (batch, in_dim)";
    DenseShape s;
    s.m = data.shape[0];
    s.k = data.shape[1];
    if (weight.shape.size() == 3 && allowPackedWeight) {
        s.n = weight.shape[0] * weight.shape[2];
    } else {
        TB_USER_CHECK(weight.shape.size() == 2) << args.taskName() << ": expects a 2-D weight (out_dim, in_dim)";
        s.n = weight.shape[0];
    }
    return s;
}

}  // namespace detail

}  // namespace tb::autotvm
