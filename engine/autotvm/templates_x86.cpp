// SPDX-License-Identifier: Apache-2.0
// x86 templates (TVM v0.14 python/tvm/topi/x86/): the knobs each one declares, in order.
#include "engine/autotvm/templates_common.h"
#include "engine/support/error.h"

namespace tb::autotvm::detail {

namespace {

using ojson = nlohmann::ordered_json;

// conv2d_NCHWc (x86/conv2d.py). The output width ignores dilation, as TVM's does.
void conv2dNCHWc(const TaskArgs& args, ConfigSpace& cfg) {
    args.requireAtLeast(4);
    const TensorArg data = args.tensor(0), kernel = args.tensor(1);
    std::int64_t inChannel = 0, numFilter = 0, ih = 0, iw = 0;
    if (data.shape.size() == 5) {
        TB_USER_CHECK(kernel.shape.size() == 6) << args.taskName() << ": NCHWc data needs a 6-D kernel";
        inChannel = data.shape[1] * data.shape[4];
        numFilter = kernel.shape[0] * kernel.shape[5];
    } else {
        TB_USER_CHECK(data.shape.size() == 4 && kernel.shape.size() == 4)
            << args.taskName() << ": expects NCHW data with an OIHW kernel, or NCHWc data";
        inChannel = data.shape[1];
        numFilter = kernel.shape[0];
    }
    ih = data.shape[2];
    iw = data.shape[3];
    const std::int64_t kh = kernel.shape[2], kw = kernel.shape[3];
    const bool kernel1x1 = kh == 1 && kw == 1;
    const auto pad = args.padding(3, kh, kw);
    const auto [sh, sw] = args.intPair(2);
    const std::int64_t oh = floorDiv(ih - kh + pad.top + pad.bottom, sh) + 1;
    const std::int64_t ow = floorDiv(iw - kw + pad.left + pad.right, sw) + 1;

    cfg.defineSplit("tile_ic", inChannel, splitOpts(2));
    cfg.defineSplit("tile_oc", numFilter, splitOpts(2));
    cfg.defineSplit("tile_ow", ow, splitOpts(2, innermostAtMost(64), std::int64_t(1) << 31, "verbose"));
    if (kernel1x1) cfg.defineKnob("tile_oh", oh > 1 ? std::vector<ojson>{1, 2} : std::vector<ojson>{1});
    else cfg.defineKnob("unroll_kw", {true, false});
}

// depthwise_conv2d_NCHWc (x86/depthwise_conv2d.py).
void depthwiseConv2dNCHWc(const TaskArgs& args, ConfigSpace& cfg) {
    args.requireAtLeast(5);
    const TensorArg data = args.tensor(0), kernel = args.tensor(1);
    std::int64_t inChannel = 0, outChannel = 0, multiplier = 0;
    if (data.shape.size() == 5) {
        TB_USER_CHECK(kernel.shape.size() == 6) << args.taskName() << ": NCHWc data needs a 6-D kernel";
        inChannel = data.shape[1] * data.shape[4];
        outChannel = kernel.shape[0] * kernel.shape[5];
        multiplier = kernel.shape[1] * kernel.shape[4];
    } else {
        TB_USER_CHECK(data.shape.size() == 4 && kernel.shape.size() == 4)
            << args.taskName() << ": expects NCHW data with a 4-D kernel, or NCHWc data";
        inChannel = data.shape[1];
        outChannel = kernel.shape[0];
        multiplier = kernel.shape[1];
    }
    TB_USER_CHECK(multiplier == 1) << args.taskName() << ": channel multiplier " << multiplier << " (TVM asserts 1)";
    const std::int64_t sw = args.intPair(2).second;
    const auto [dh, dw] = args.intPair(4);
    const std::int64_t dkh = (kernel.shape[2] - 1) * dh + 1, dkw = (kernel.shape[3] - 1) * dw + 1;
    const auto pad = args.padding(3, dkh, dkw);
    const std::int64_t outWidth = floorDiv(data.shape[3] + pad.left + pad.right - dkw, sw) + 1;

    cfg.defineSplit("tile_ic", inChannel, splitOpts(2));
    cfg.defineSplit("tile_oc", outChannel, splitOpts(2));
    cfg.defineSplit("tile_ow", outWidth, splitOpts(2, innermostAtMost(64)));
    cfg.defineKnob("unroll_kw", {true, false});
}

// dense_nopack (x86/dense.py).
void denseNopack(const TaskArgs& args, ConfigSpace& cfg) {
    const DenseShape s = denseShape(args, false);
    cfg.defineSplit("tile_y", s.m, splitOpts(2));
    cfg.defineSplit("tile_x", s.n, splitOpts(2));
    cfg.defineSplit("tile_k", s.k, splitOpts(2));
}

// dense_pack (x86/dense.py); the weight may come pre-packed (N/bn, K, bn).
void densePack(const TaskArgs& args, ConfigSpace& cfg) {
    const DenseShape s = denseShape(args, true);
    cfg.defineSplit("tile_y", s.m, splitOpts(3));
    cfg.defineSplit("tile_x", s.n, splitOpts(3));
    cfg.defineSplit("tile_k", s.k, splitOpts(2));
    cfg.defineSplit("tile_inner", s.m, splitOpts(2, innermostAtMost(16)));
}

}  // namespace

void addX86Templates(TemplateList& out) {
    addTemplate(out, "conv2d_NCHWc.x86", "python/tvm/topi/x86/conv2d.py: conv2d_NCHWc", conv2dNCHWc);
    addTemplate(out, "depthwise_conv2d_NCHWc.x86",
                "python/tvm/topi/x86/depthwise_conv2d.py: depthwise_conv2d_NCHWc", depthwiseConv2dNCHWc);
    addTemplate(out, "dense_nopack.x86", "python/tvm/topi/x86/dense.py: dense_nopack", denseNopack);
    addTemplate(out, "dense_pack.x86", "python/tvm/topi/x86/dense.py: dense_pack", densePack);
}

}  // namespace tb::autotvm::detail
