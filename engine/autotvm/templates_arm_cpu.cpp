// SPDX-License-Identifier: Apache-2.0
// ARM CPU templates (TVM v0.14 python/tvm/topi/arm_cpu/): the knobs each one declares, in order.
#include "engine/autotvm/templates_common.h"

namespace tb::autotvm::detail {

namespace {

// conv2d_nchw_winograd (arm_cpu/conv2d.py): tile_p, tile_k in the compute (`_decl_winograd`,
// tile size 4), then tile_c and the two annotations in the schedule (`_schedule_winograd`).
void conv2dNchwWinograd(const TaskArgs& args, ConfigSpace& cfg) {
    const WinogradNchwShape s = winogradNchwShape(args, 4);
    cfg.defineSplit("tile_p", s.p, splitOpts(2, innermostAtMost(16)));
    cfg.defineSplit("tile_k", s.co, splitOpts(2, innermostAtMost(16)));
    cfg.defineSplit("tile_c", s.ci, splitOpts(2, innermostAtMost(16)));
    cfg.defineAnnotate("ann_reduce", 1, "try_unroll");       // [ci]
    cfg.defineAnnotate("ann_spatial", 2, "try_unroll_vec");   // [k, xi]
}

// depthwise_conv2d_nchw (arm_cpu/depthwise_conv2d.py): splits of the output's c, h, w, then the
// annotation of their inner parts [vh, vw, vc].
void depthwiseConv2dNchw(const TaskArgs& args, ConfigSpace& cfg) {
    const DepthwiseNchwOutput o = depthwiseNchwOutput(args);
    cfg.defineSplit("tile_c", o.channels, splitOpts(2));
    cfg.defineSplit("tile_h", o.height, splitOpts(2));
    cfg.defineSplit("tile_w", o.width, splitOpts(2));
    cfg.defineAnnotate("ann", 3, "try_unroll_vec");
}

}  // namespace

void addArmCpuTemplates(TemplateList& out) {
    addTemplate(out, "conv2d_nchw_spatial_pack.arm_cpu",
                "python/tvm/topi/arm_cpu/conv2d_spatial_pack.py: conv2d_spatial_pack_nchw (num_tile=2)",
                [](const TaskArgs& args, ConfigSpace& cfg) { defineSpatialPackNchw(args, cfg, 2); });
    addTemplate(out, "conv2d_nchw_winograd.arm_cpu",
                "python/tvm/topi/arm_cpu/conv2d.py: _decl_winograd, _schedule_winograd", conv2dNchwWinograd);
    addTemplate(out, "depthwise_conv2d_nchw.arm_cpu",
                "python/tvm/topi/arm_cpu/depthwise_conv2d.py: schedule_depthwise_conv2d_nchw", depthwiseConv2dNchw);
}

}  // namespace tb::autotvm::detail
