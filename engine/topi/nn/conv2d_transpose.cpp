// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/conv2d_transpose.h"

#include "engine/topi/detail.h"
#include "engine/topi/nn/conv2d.h"
#include "engine/topi/nn/pad.h"
#include "engine/topi/nn/utils.h"

namespace tb::topi::nn {

using namespace te;
using detail::ci;

std::pair<Tensor, Tensor> conv2dTransposeNchwPreprocess(const Tensor& data, const Tensor& kernel,
                                                        const std::vector<int64_t>& strideArg,
                                                        const std::vector<int64_t>& padding,
                                                        const std::vector<int64_t>& outputPaddingArg) {
    const char* op = "topi.nn.conv2d_transpose_nchw";
    detail::checkRank(data, 4, op, "data");
    detail::checkRank(kernel, 4, op, "kernel");
    const auto stride = detail::expandTuple(strideArg, 2, op, "strides");
    const auto opad = detail::expandTuple(outputPaddingArg, 2, op, "output_padding");
    detail::checkAtLeast(stride, 1, op, "strides");
    detail::checkAtLeast(opad, 0, op, "output_padding");
    TB_USER_CHECK(opad[0] < stride[0] && opad[1] < stride[1])
        << op << ": output_padding must be smaller than the stride";
    const int64_t inC = data.shape()[1], outC = kernel.shape()[1], fh = kernel.shape()[2], fw = kernel.shape()[3];
    TB_USER_CHECK(kernel.shape()[0] == inC) << op << ": kernel " << shapeToString(kernel.shape()) << " expects "
                                            << kernel.shape()[0] << " input channels but the data "
                                            << shapeToString(data.shape()) << " has " << inC;
    PadTuple p = getPadTuple(padding, op);
    TB_USER_CHECK(p.top <= fh - 1 && p.bottom <= fh - 1 + opad[0] && p.left <= fw - 1 && p.right <= fw - 1 + opad[1])
        << op << ": padding " << shapeToString(padding) << " is larger than the kernel allows";
    Tensor dilated = dilate(data, {1, 1, stride[0], stride[1]}, 0.0, "data_dilate");
    const int64_t bt = fh - 1 - p.top, bb = fh - 1 - p.bottom + opad[0];
    const int64_t bl = fw - 1 - p.left, br = fw - 1 - p.right + opad[1];
    Tensor dataPad = pad(dilated, {0, 0, bt, bl}, {0, 0, bb, br}, 0.0, "data_pad");
    Tensor kernelTransform = compute({outC, inC, fh, fw}, {"o", "i", "h", "w"}, [&](const std::vector<Var>& v) {
        return kernel(v[1], v[0], ci(fh - 1) - v[2], ci(fw - 1) - v[3]);
    }, "kernel_transform");
    return {dataPad, kernelTransform};
}

Tensor conv2dTransposeNchw(const Tensor& data, const Tensor& kernel, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& padding, const std::vector<int64_t>& outputPadding) {
    auto [dataPad, kt] = conv2dTransposeNchwPreprocess(data, kernel, stride, padding, outputPadding);
    const int64_t batch = dataPad.shape()[0], inC = dataPad.shape()[1], ih = dataPad.shape()[2], iw = dataPad.shape()[3];
    const int64_t outC = kt.shape()[0], fh = kt.shape()[2], fw = kt.shape()[3];
    IterVar dc = reduceAxis(inC, "dc"), dh = reduceAxis(fh, "dh"), dw = reduceAxis(fw, "dw");
    return compute({batch, outC, ih - fh + 1, iw - fw + 1}, {"b", "c", "h", "w"}, [&, dataPad = dataPad, kt = kt](const std::vector<Var>& v) {
        return sum(dataPad(v[0], dc.var, v[2] + dh.var, v[3] + dw.var) * kt(v[1], dc.var, dh.var, dw.var), {dc, dh, dw});
    }, "compute", ComputeOptions{"conv2d_transpose_nchw", {}, {}});
}

namespace x86 {

std::pair<int64_t, int64_t> fallbackChannelBlocks(int64_t inChannels, int64_t outChannels, int64_t simdLanes) {
    int64_t ocBn = 1;
    for (int64_t bn = simdLanes; bn > 0; --bn)
        if (outChannels % bn == 0) {
            ocBn = bn;
            break;
        }
    int64_t icBn = 1;
    for (int64_t bn = ocBn; bn > 0; --bn)
        if (inChannels % bn == 0) {
            icBn = bn;
            break;
        }
    return {icBn, ocBn};
}

Tensor conv2dNchw(const Tensor& data, const Tensor& kernel, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t icBn,
                  int64_t ocBn) {
    const char* op = "topi.x86.conv2d_nchw";
    detail::checkRank(data, 4, op, "data");
    detail::checkRank(kernel, 4, op, "kernel");
    const int64_t n = data.shape()[0], ih = data.shape()[2], iw = data.shape()[3];
    const int64_t oc = kernel.shape()[0], ic = kernel.shape()[1], kh = kernel.shape()[2], kw = kernel.shape()[3];
    TB_USER_CHECK(ic == data.shape()[1]) << op << ": kernel " << shapeToString(kernel.shape()) << " expects " << ic
                                         << " input channels but the data " << shapeToString(data.shape()) << " has "
                                         << data.shape()[1];
    TB_USER_CHECK(icBn > 0 && ocBn > 0 && ic % icBn == 0 && oc % ocBn == 0)
        << op << ": channel blocks " << icBn << "/" << ocBn << " do not divide " << ic << "/" << oc;
    Tensor dataVec = compute({n, ic / icBn, ih, iw, icBn}, {"bs", "c", "h", "w", "vc"}, [&](const std::vector<Var>& v) {
        return data(v[0], v[1] * ci(icBn) + v[4], v[2], v[3]);
    }, "data_vec");
    Tensor kernelVec = compute({oc / ocBn, ic / icBn, kh, kw, icBn, ocBn}, {"occ", "icc", "k_h", "k_w", "icb", "ocb"},
                               [&](const std::vector<Var>& v) {
        return kernel(v[0] * ci(ocBn) + v[5], v[1] * ci(icBn) + v[4], v[2], v[3]);
    }, "kernel_vec");
    return unpackNCHWcToNchw(conv2dNCHWc(dataVec, kernelVec, stride, padding, dilation));
}

Tensor conv2dTransposeNchw(const Tensor& data, const Tensor& kernel, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& padding, const std::vector<int64_t>& outputPadding,
                           int64_t icBlock, int64_t ocBlock, int64_t simdLanes) {
    auto [dataPad, kt] = conv2dTransposeNchwPreprocess(data, kernel, stride, padding, outputPadding);
    if (icBlock == 0 || ocBlock == 0) {
        auto [i, o] = fallbackChannelBlocks(kt.shape()[1], kt.shape()[0], simdLanes);
        icBlock = i;
        ocBlock = o;
    }
    return conv2dNchw(dataPad, kt, {1, 1}, {0, 0}, {1, 1}, icBlock, ocBlock);
}

}  // namespace x86

}  // namespace tb::topi::nn
