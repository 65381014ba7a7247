// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/conv2d.h"

#include <algorithm>
#include <cctype>

#include "engine/topi/detail.h"
#include "engine/topi/nn/pad.h"
#include "engine/topi/nn/utils.h"
#include "engine/topi/tags.h"

namespace tb::topi::nn {

using namespace te;
using detail::ci;

int64_t convOutputExtent(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBefore,
                         int64_t padAfter) {
    int64_t dilated = (kernel - 1) * dilation + 1;
    int64_t span = in + padBefore + padAfter - dilated;
    return span < 0 ? 0 : span / stride + 1;
}

namespace {

// Positions of `first`, `second`, then every other letter, in `layout` (conv's permutation_to).
std::vector<size_t> permutationTo(const std::string& layout, char first, char second) {
    std::vector<size_t> p{layout.find(first), layout.find(second)};
    for (size_t i = 0; i < layout.size(); ++i)
        if (layout[i] != first && layout[i] != second) p.push_back(i);
    return p;
}

std::vector<size_t> argsort(const std::vector<size_t>& p) {
    std::vector<size_t> inv(p.size());
    for (size_t k = 0; k < p.size(); ++k) inv[p[k]] = k;
    return inv;
}

bool validLayout(const std::string& layout, size_t rank, char a, char b) {
    if (layout.size() != rank) return false;
    if (std::count(layout.begin(), layout.end(), a) != 1 || std::count(layout.begin(), layout.end(), b) != 1)
        return false;
    for (size_t i = 0; i < layout.size(); ++i) {
        if (!std::isupper(static_cast<unsigned char>(layout[i]))) return false;
        if (layout.find(layout[i]) != i) return false;  // duplicated letter
    }
    return true;
}

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

Tensor conv(const Tensor& inp, const Tensor& filt, const std::vector<int64_t>& strideArg,
            const std::vector<int64_t>& padding, const std::vector<int64_t>& dilationArg, int64_t groups,
            const std::string& dataLayout, const std::string& kernelLayoutArg, bool autoSchedulerRewriteLayout) {
    TB_USER_CHECK(bool(inp) && bool(filt)) << "topi.nn.conv: input 'data' or 'kernel' is not defined";
    TB_USER_CHECK(inp.ndim() >= 3) << "topi.nn.conv: input must be at least 3-D, got "
                                   << shapeToString(inp.shape());
    const size_t dim = inp.ndim() - 2;
    const std::string stage = std::string(groups > 1 ? "group_" : "") + "conv" + std::to_string(dim) + "d_" +
                              lower(dataLayout);
    const std::string opName = "topi.nn." + stage;
    const char* op = opName.c_str();
    TB_USER_CHECK(validLayout(dataLayout, inp.ndim(), 'N', 'C'))
        << op << ": data layout '" << dataLayout << "' does not describe the " << inp.ndim() << "-D input "
        << shapeToString(inp.shape());
    detail::checkRank(filt, inp.ndim(), op, "kernel");
    TB_USER_CHECK(groups >= 1) << op << ": groups must be >= 1, got " << groups;
    const std::vector<int64_t> strides = detail::expandTuple(strideArg, dim, op, "stride");
    const std::vector<int64_t> dilations = detail::expandTuple(dilationArg, dim, op, "dilation");
    detail::checkAtLeast(strides, 1, op, "stride");
    detail::checkAtLeast(dilations, 1, op, "dilation");

    const std::vector<size_t> dTo = permutationTo(dataLayout, 'N', 'C');
    const std::vector<size_t> dFrom = argsort(dTo);
    std::vector<size_t> kTo;
    if (kernelLayoutArg.empty()) {
        // Default kernel layout: OIHW-like when C precedes the spatial dims, HWIO-like otherwise.
        size_t firstSpatial = dataLayout.find_first_not_of("NC");
        if (dataLayout.find('C') < firstSpatial) {
            for (size_t i = 0; i < dim + 2; ++i) kTo.push_back(i);
        } else {
            kTo = {dim + 1, dim};
            for (size_t i = 0; i < dim; ++i) kTo.push_back(i);
        }
    } else {
        TB_USER_CHECK(validLayout(kernelLayoutArg, filt.ndim(), 'O', 'I'))
            << op << ": kernel layout '" << kernelLayoutArg << "' does not describe the " << filt.ndim()
            << "-D kernel " << shapeToString(filt.shape());
        kTo = permutationTo(kernelLayoutArg, 'O', 'I');
    }
    const std::vector<size_t> kFrom = argsort(kTo);

    const int64_t batch = inp.shape()[dTo[0]], inChannel = inp.shape()[dTo[1]];
    const int64_t numFilter = filt.shape()[kTo[0]], filterIn = filt.shape()[kTo[1]];
    std::vector<int64_t> dims, kdims;
    for (size_t k = 0; k < dim; ++k) {
        dims.push_back(inp.shape()[dTo[k + 2]]);
        kdims.push_back(filt.shape()[kTo[k + 2]]);
    }
    TB_USER_CHECK(inChannel % groups == 0) << op << ": input channels " << inChannel << " must divide by groups "
                                           << groups;
    TB_USER_CHECK(numFilter % groups == 0) << op << ": output channels " << numFilter << " must divide by groups "
                                           << groups;
    TB_USER_CHECK(filterIn == inChannel / groups)
        << op << ": kernel " << shapeToString(filt.shape()) << " expects " << filterIn * groups
        << " input channels but the input " << shapeToString(inp.shape()) << " has " << inChannel;

    std::vector<int64_t> dilatedK;
    for (size_t k = 0; k < dim; ++k) dilatedK.push_back((kdims[k] - 1) * dilations[k] + 1);
    auto [padBegin, padEnd] = getPadTupleGeneric(padding, dim, op);
    std::vector<int64_t> outDims;
    for (size_t k = 0; k < dim; ++k) {
        int64_t o = convOutputExtent(dims[k], kdims[k], strides[k], dilations[k], padBegin[k], padEnd[k]);
        TB_USER_CHECK(o > 0) << op << ": the kernel " << shapeToString(filt.shape()) << " does not fit the input "
                             << shapeToString(inp.shape()) << " with this padding";
        outDims.push_back(o);
    }

    // pad_before = ([0, 0] + pad_begin)[data_permutation_from], i.e. canonical k goes to dTo[k].
    std::vector<int64_t> padBefore(dim + 2, 0), padAfter(dim + 2, 0);
    for (size_t k = 0; k < dim; ++k) {
        padBefore[dTo[k + 2]] = padBegin[k];
        padAfter[dTo[k + 2]] = padEnd[k];
    }
    Tensor temp = pad(inp, padBefore, padAfter, 0.0, "pad_temp");

    IterVar rc = reduceAxis(inChannel / groups, "rc");
    const char* rNames[] = {"ry", "rx", "rz"};
    TB_USER_CHECK(dim <= 3) << op << ": at most 3 spatial dims are supported";
    std::vector<IterVar> rs;
    for (size_t k = 0; k < dim; ++k) rs.push_back(reduceAxis(kdims[k], rNames[k]));
    // Reduction order: [rc, *rs][data_permutation_from_reductions].
    std::vector<IterVar> canonRed{rc};
    canonRed.insert(canonRed.end(), rs.begin(), rs.end());
    std::vector<IterVar> redAxes;
    for (size_t j = 1; j < dFrom.size(); ++j) {
        size_t f = dFrom[j];
        if (f > dFrom[0]) --f;
        redAxes.push_back(canonRed[f]);
    }

    std::vector<int64_t> canonOut{batch, numFilter};
    canonOut.insert(canonOut.end(), outDims.begin(), outDims.end());
    std::vector<int64_t> outShape(dim + 2);
    std::vector<std::string> names(dim + 2);
    const char* varNames[] = {"nn", "ff", "yy", "xx", "zz"};
    for (size_t j = 0; j < dim + 2; ++j) {
        outShape[j] = canonOut[dFrom[j]];
        names[j] = varNames[dFrom[j]];
    }

    ComputeOptions opts;
    opts.tag = stage;
    if (autoSchedulerRewriteLayout) opts.layoutFreePlaceholders = {filt};
    const int64_t kPerGroup = numFilter / groups, cPerGroup = inChannel / groups;
    return compute(outShape, names, [&](const std::vector<Var>& args) {
        std::vector<Expr> canon;
        for (size_t k = 0; k < dim + 2; ++k) canon.push_back(args[dTo[k]]);
        Expr nn = canon[0], ff = canon[1];
        Expr channel = groups == 1 ? Expr(rc.var) : floordiv(ff, ci(kPerGroup)) * ci(cPerGroup) + rc.var;
        std::vector<Expr> dataCanon{nn, channel};
        for (size_t k = 0; k < dim; ++k)
            dataCanon.push_back(canon[k + 2] * ci(strides[k]) + rs[k].var * ci(dilations[k]));
        std::vector<Expr> dataIdx(dim + 2), filtIdx(dim + 2);
        std::vector<Expr> filtCanon{ff, rc.var};
        for (size_t k = 0; k < dim; ++k) filtCanon.push_back(rs[k].var);
        for (size_t j = 0; j < dim + 2; ++j) {
            dataIdx[j] = dataCanon[dFrom[j]];
            filtIdx[j] = filtCanon[kFrom[j]];
        }
        return sum(temp(dataIdx) * filt(filtIdx), redAxes);
    }, stage, opts);
}

Tensor conv2dNhwc(const Tensor& input, const Tensor& weight, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
    detail::checkRank(input, 4, "topi.nn.conv2d_nhwc", "data");
    detail::checkRank(weight, 4, "topi.nn.conv2d_nhwc", "kernel");
    return conv(input, weight, stride, padding, dilation, 1, "NHWC", "HWIO", true);
}

Tensor conv2dNchw(const Tensor& input, const Tensor& weight, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
    detail::checkRank(input, 4, "topi.nn.conv2d_nchw", "data");
    detail::checkRank(weight, 4, "topi.nn.conv2d_nchw", "kernel");
    return conv(input, weight, stride, padding, dilation, 1, "NCHW", "OIHW", false);
}

Tensor groupConv2dNhwc(const Tensor& input, const Tensor& weight, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
    detail::checkRank(input, 4, "topi.nn.group_conv2d_nhwc", "data");
    detail::checkRank(weight, 4, "topi.nn.group_conv2d_nhwc", "kernel");
    return conv(input, weight, stride, padding, dilation, groups, "NHWC", "HWIO", false);
}

Tensor groupConv2dNchw(const Tensor& input, const Tensor& weight, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
    detail::checkRank(input, 4, "topi.nn.group_conv2d_nchw", "data");
    detail::checkRank(weight, 4, "topi.nn.group_conv2d_nchw", "kernel");
    return conv(input, weight, stride, padding, dilation, groups, "NCHW", "OIHW", false);
}

Tensor conv2dNCHWc(const Tensor& data, const Tensor& kernel, const std::vector<int64_t>& strideArg,
                   const std::vector<int64_t>& padding, const std::vector<int64_t>& dilationArg) {
    const char* op = "topi.nn.conv2d_NCHWc";
    detail::checkRank(data, 5, op, "data");
    detail::checkRank(kernel, 6, op, "kernel");
    const auto stride = detail::expandTuple(strideArg, 2, op, "stride");
    const auto dilation = detail::expandTuple(dilationArg, 2, op, "dilation");
    detail::checkAtLeast(stride, 1, op, "stride");
    detail::checkAtLeast(dilation, 1, op, "dilation");
    const auto& ds = data.shape();
    const auto& ks = kernel.shape();
    const int64_t n = ds[0], icChunk = ds[1], ih = ds[2], iw = ds[3], icBn = ds[4];
    const int64_t inChannel = icChunk * icBn;
    const int64_t ocChunk = ks[0], icChunkGroup = ks[1], kh = ks[2], kw = ks[3], kernelIcBn = ks[4], ocBn = ks[5];
    TB_USER_CHECK(kernelIcBn == icBn) << op << ": kernel " << shapeToString(ks) << " has input block " << kernelIcBn
                                      << " but the data " << shapeToString(ds) << " has " << icBn;
    TB_USER_CHECK(icChunkGroup > 0 && icChunk % icChunkGroup == 0)
        << op << ": kernel " << shapeToString(ks) << " does not match the input channels of " << shapeToString(ds);
    const int64_t groups = inChannel / (icChunkGroup * kernelIcBn);
    TB_USER_CHECK(ocChunk % groups == 0) << op << ": output chunks " << ocChunk << " must divide by groups "
                                         << groups;
    PadTuple p = getPadTuple(padding, op);
    const int64_t oh = convOutputExtent(ih, kh, stride[0], dilation[0], p.top, p.bottom);
    const int64_t ow = convOutputExtent(iw, kw, stride[1], dilation[1], p.left, p.right);
    TB_USER_CHECK(oh > 0 && ow > 0) << op << ": the kernel " << shapeToString(ks) << " does not fit the input "
                                    << shapeToString(ds);
    const bool doPad = (p.top + p.bottom) != 0 || (p.left + p.right) != 0;
    Tensor dataPad = doPad ? pad(data, {0, 0, p.top, p.left, 0}, {0, 0, p.bottom, p.right, 0}, 0.0, "data_pad") : data;
    IterVar ic = reduceAxis(inChannel / groups, "ic");
    IterVar rkh = reduceAxis(kh, "kh"), rkw = reduceAxis(kw, "kw");
    std::vector<std::string> names{"n", groups == 1 ? "oc_chunk" : "occ", "oh", "ow", "oc_block"};
    return compute({n, ocChunk, oh, ow, ocBn}, names, [&](const std::vector<Var>& v) {
        Expr chan = floordiv(ic.var, ci(icBn));
        if (groups != 1) chan = floordiv(v[1], ci(ocChunk / groups)) * ci(icChunk / groups) + chan;
        Expr d = dataPad(v[0], chan, v[2] * ci(stride[0]) + rkh.var * ci(dilation[0]),
                         v[3] * ci(stride[1]) + rkw.var * ci(dilation[1]), floormod(ic.var, ci(icBn)));
        Expr k = kernel(v[1], floordiv(ic.var, ci(icBn)), rkh.var, rkw.var, floormod(ic.var, ci(icBn)), v[4]);
        return sum(d * k, {ic, rkh, rkw});
    }, "conv2d_NCHWc", ComputeOptions{"conv2d_NCHWc", {}, {}});
}

Tensor unpackNCHWcToNchw(const Tensor& packed) {
    detail::checkRank(packed, 5, "topi.nn.unpack_NCHWc_to_nchw", "packed_out");
    const auto& s = packed.shape();
    const int64_t bn = s[4];
    return compute({s[0], s[1] * bn, s[2], s[3]}, {"n", "c", "h", "w"}, [&](const std::vector<Var>& v) {
        return packed(v[0], floordiv(v[1], ci(bn)), v[2], v[3], floormod(v[1], ci(bn)));
    }, "output_unpack", ComputeOptions{"injective,unpack_nchwc", {}, {}});
}

}  // namespace tb::topi::nn
