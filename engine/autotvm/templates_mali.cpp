// SPDX-License-Identifier: Apache-2.0
// Mali GPU templates (TVM v0.14 python/tvm/topi/mali/): the knobs each one declares, in order.
#include <algorithm>

#include "engine/autotvm/templates_common.h"

namespace tb::autotvm::detail {

namespace {

using ojson = nlohmann::ordered_json;

// conv2d_nchw_winograd (mali/conv2d.py `_decl_winograd`); the output tile size is 4 when the
// input height is a multiple of 4, else 2 (`_pick_tile_size`).
void conv2dNchwWinograd(const TaskArgs& args, ConfigSpace& cfg) {
    const TensorArg data = args.tensor(0);
    const std::int64_t tileSize = data.shape.size() == 4 && data.shape[2] % 4 == 0 ? 4 : 2;
    const WinogradNchwShape s = winogradNchwShape(args, tileSize);
    const auto coFactors = getFactors(s.co);
    std::vector<ojson> bna;
    for (std::int64_t c : {1, 2, 4, 8, 16})
        if (std::find(coFactors.begin(), coFactors.end(), c) != coFactors.end()) bna.emplace_back(c);
    cfg.defineKnob("tile_bna", bna);
    cfg.defineKnob("tile_bnb", {1, 2, 4, 8, 16});
    cfg.defineSplit("tile_t1", s.ci, splitOpts(2, {}, 128));
    cfg.defineSplit("tile_t2", s.co, splitOpts(2, {}, 128));
    cfg.defineSplit("c_unroll", s.ci, splitOpts(2, {}, 8));
    cfg.defineKnob("yt", {1, 2, 4, 8, 16, 32});
}

// depthwise_conv2d_nchw (mali/depthwise_conv2d.py `_schedule`, NCHW).
void depthwiseConv2dNchw(const TaskArgs& args, ConfigSpace& cfg) {
    const DepthwiseNchwOutput o = depthwiseNchwOutput(args);
    cfg.defineSplit("tile_c", o.channels, splitOpts(3));
    cfg.defineSplit("tile_y", o.height, splitOpts(3));
    cfg.defineSplit("tile_x", o.width, splitOpts(3));
    cfg.defineAnnotate("ann_spatial", 3, "try_unroll_vec");
}

// dense (mali/dense.py `schedule_dense`): the output (M, N) and the reduction K.
void dense(const TaskArgs& args, ConfigSpace& cfg) {
    const DenseShape s = denseShape(args, false);
    cfg.defineSplit("tile_y", s.m, splitOpts(3));
    cfg.defineSplit("tile_x", s.n, splitOpts(3));
    cfg.defineSplit("c_unroll", s.k, splitOpts(2, {}, 64));
}

}  // namespace

void addMaliTemplates(TemplateList& out) {
    addTemplate(out, "conv2d_nchw_spatial_pack.mali",
                "python/tvm/topi/arm_cpu/conv2d_spatial_pack.py: conv2d_spatial_pack_nchw (num_tile=3, via "
                "mali/conv2d.py)",
                [](const TaskArgs& args, ConfigSpace& cfg) { defineSpatialPackNchw(args, cfg, 3); });
    addTemplate(out, "conv2d_nchw_winograd.mali", "python/tvm/topi/mali/conv2d.py: _decl_winograd", conv2dNchwWinograd);
    addTemplate(out, "depthwise_conv2d_nchw.mali", "python/tvm/topi/mali/depthwise_conv2d.py: _schedule",
                depthwiseConv2dNchw);
    addTemplate(out, "dense.mali", "python/tvm/topi/mali/dense.py: schedule_dense", dense);
}

}  // namespace tb::autotvm::detail
