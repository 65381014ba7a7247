// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/depthwise_conv2d.h"

#include "engine/topi/detail.h"
#include "engine/topi/nn/conv2d.h"
#include "engine/topi/nn/pad.h"
#include "engine/topi/nn/utils.h"

namespace tb::topi::nn {

using namespace te;
using detail::ci;

namespace {
struct Window {
    std::vector<int64_t> stride, dilation;
    PadTuple pad;
    int64_t oh = 0, ow = 0;
};
Window window(const char* op, const std::vector<int64_t>& strideArg, const std::vector<int64_t>& padding,
              const std::vector<int64_t>& dilationArg, int64_t ih, int64_t iw, int64_t kh, int64_t kw,
              const Tensor& input, const Tensor& filter) {
    Window w;
    w.stride = detail::expandTuple(strideArg, 2, op, "stride");
    w.dilation = detail::expandTuple(dilationArg, 2, op, "dilation");
    detail::checkAtLeast(w.stride, 1, op, "stride");
    detail::checkAtLeast(w.dilation, 1, op, "dilation");
    w.pad = getPadTuple(padding, op);
    w.oh = convOutputExtent(ih, kh, w.stride[0], w.dilation[0], w.pad.top, w.pad.bottom);
    w.ow = convOutputExtent(iw, kw, w.stride[1], w.dilation[1], w.pad.left, w.pad.right);
    TB_USER_CHECK(w.oh > 0 && w.ow > 0) << op << ": the filter " << shapeToString(filter.shape())
                                        << " does not fit the input " << shapeToString(input.shape());
    return w;
}
}  // namespace

Tensor depthwiseConv2dNhwc(const Tensor& input, const Tensor& filter, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
    const char* op = "topi.nn.depthwise_conv2d_nhwc";
    detail::checkRank(input, 4, op, "data");
    detail::checkRank(filter, 4, op, "kernel");
    const auto& is = input.shape();
    const auto& fs = filter.shape();
    const int64_t batch = is[0], ih = is[1], iw = is[2], ic = is[3];
    const int64_t kh = fs[0], kw = fs[1], fc = fs[2], mult = fs[3];
    TB_USER_CHECK(fc == ic) << op << ": filter " << shapeToString(fs) << " has " << fc << " channels but the input "
                            << shapeToString(is) << " has " << ic;
    Window w = window(op, stride, padding, dilation, ih, iw, kh, kw, input, filter);
    Tensor padded = pad(input, {0, w.pad.top, w.pad.left, 0}, {0, w.pad.bottom, w.pad.right, 0}, 0.0, "PaddedInput");
    IterVar di = reduceAxis(kh, "di"), dj = reduceAxis(kw, "dj");
    return compute({batch, w.oh, w.ow, ic * mult}, {"b", "i", "j", "c"}, [&](const std::vector<Var>& v) {
        Expr d = padded(v[0], v[1] * ci(w.stride[0]) + di.var * ci(w.dilation[0]),
                        v[2] * ci(w.stride[1]) + dj.var * ci(w.dilation[1]), floordiv(v[3], ci(mult)));
        Expr k = filter(di.var, dj.var, floordiv(v[3], ci(mult)), floormod(v[3], ci(mult)));
        return sum(d * k, {di, dj});
    }, "DepthwiseConv2d", ComputeOptions{"depthwise_conv2d_nhwc", {}, {}});
}

Tensor depthwiseConv2dNchw(const Tensor& input, const Tensor& filter, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
    const char* op = "topi.nn.depthwise_conv2d_nchw";
    detail::checkRank(input, 4, op, "data");
    detail::checkRank(filter, 4, op, "kernel");
    const auto& is = input.shape();
    const auto& fs = filter.shape();
    const int64_t batch = is[0], ic = is[1], ih = is[2], iw = is[3];
    const int64_t fc = fs[0], mult = fs[1], kh = fs[2], kw = fs[3];
    TB_USER_CHECK(fc == ic) << op << ": filter " << shapeToString(fs) << " has " << fc << " channels but the input "
                            << shapeToString(is) << " has " << ic;
    Window w = window(op, stride, padding, dilation, ih, iw, kh, kw, input, filter);
    Tensor padded = pad(input, {0, 0, w.pad.top, w.pad.left}, {0, 0, w.pad.bottom, w.pad.right}, 0.0, "PaddedInput");
    IterVar di = reduceAxis(kh, "di"), dj = reduceAxis(kw, "dj");
    return compute({batch, ic * mult, w.oh, w.ow}, {"b", "c", "i", "j"}, [&](const std::vector<Var>& v) {
        Expr d = padded(v[0], floordiv(v[1], ci(mult)), v[2] * ci(w.stride[0]) + di.var * ci(w.dilation[0]),
                        v[3] * ci(w.stride[1]) + dj.var * ci(w.dilation[1]));
        Expr k = filter(floordiv(v[1], ci(mult)), floormod(v[1], ci(mult)), di.var, dj.var);
        return sum(d * k, {di, dj});
    }, "DepthwiseConv2d", ComputeOptions{"depthwise_conv2d_nchw", {}, {}});
}

Tensor depthwiseConv2dNCHWc(const Tensor& data, const Tensor& filter, const std::vector<int64_t>& stride,
                            const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
    const char* op = "topi.x86.depthwise_conv2d_NCHWc";
    detail::checkRank(data, 5, op, "data");
    detail::checkRank(filter, 6, op, "kernel");
    const auto& ds = data.shape();
    const auto& fs = filter.shape();
    const int64_t batch = ds[0], icChunk = ds[1], ih = ds[2], iw = ds[3], icBlock = ds[4];
    const int64_t ocChunk = fs[0], cmChunk = fs[1], kh = fs[2], kw = fs[3], cmBlock = fs[4], ocBlock = fs[5];
    const int64_t mult = cmChunk * cmBlock;
    TB_USER_CHECK(mult == 1) << op << ": only channel multiplier 1 is supported, kernel " << shapeToString(fs);
    TB_USER_CHECK(ocChunk * ocBlock == icChunk * icBlock)
        << op << ": kernel " << shapeToString(fs) << " has " << ocChunk * ocBlock << " channels but the data "
        << shapeToString(ds) << " has " << icChunk * icBlock;
    Window w = window(op, stride, padding, dilation, ih, iw, kh, kw, data, filter);
    const bool doPad = w.pad.top != 0 || w.pad.left != 0 || w.pad.bottom != 0 || w.pad.right != 0;
    Tensor padded = doPad ? pad(data, {0, 0, w.pad.top, w.pad.left, 0}, {0, 0, w.pad.bottom, w.pad.right, 0}, 0.0,
                                "PaddedInput")
                          : data;
    IterVar rkh = reduceAxis(kh, "kh"), rkw = reduceAxis(kw, "kw");
    return compute({batch, ocChunk, w.oh, w.ow, ocBlock}, {"b", "oco", "oh", "ow", "oci"},
                   [&](const std::vector<Var>& v) {
        Expr c = floordiv(v[1] * ci(ocBlock) + v[4], ci(mult));
        Expr d = padded(v[0], floordiv(c, ci(icBlock)), v[2] * ci(w.stride[0]) + rkh.var * ci(w.dilation[0]),
                        v[3] * ci(w.stride[1]) + rkw.var * ci(w.dilation[1]), floormod(c, ci(icBlock)));
        Expr k = filter(v[1], ci(0), rkh.var, rkw.var, ci(0), v[4]);
        return sum(d * k, {rkh, rkw});
    }, "DepthwiseConv2d", ComputeOptions{"depthwise_conv2d_NCHWc", {}, {}});
}

}  // namespace tb::topi::nn
