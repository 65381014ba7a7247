// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/winograd.h"

#include "engine/topi/detail.h"
#include "engine/topi/nn/pad.h"
#include "engine/topi/nn/utils.h"

namespace tb::topi::nn {

using namespace te;
using detail::ci;

Tensor constMatrix(const std::vector<double>& values, int64_t rows, int64_t cols, const std::string& name) {
    TB_CHECK(int64_t(values.size()) == rows * cols) << "const_matrix " << name << ": " << values.size()
                                                    << " values for " << rows << "x" << cols;
    ComputeOptions opts;
    opts.attrs[attr::kConstMatrix] = int64_t(1);
    return compute({rows, cols}, {"i", "j"}, [&](const std::vector<Var>& v) {
        Expr now = floatImm(0.0, DType::Float32);
        for (int64_t ii = 0; ii < rows; ++ii)
            for (int64_t jj = 0; jj < cols; ++jj)
                now = select(logicalAnd(eq(floormod(v[0], ci(rows)), ci(ii)), eq(floormod(v[1], ci(cols)), ci(jj))),
                             floatImm(values[size_t(ii * cols + jj)], DType::Float32), now);
        return now;
    }, name, opts);
}

WinogradMatrices winogradMatrices(int64_t tileSize, int64_t kernelSize) {
    TB_USER_CHECK((tileSize == 4 || tileSize == 2) && kernelSize == 3)
        << "topi.nn.winograd_transform_matrices: only F(4x4, 3x3) and F(2x2, 3x3) are supported, got tile " << tileSize
        << " and kernel " << kernelSize;
    WinogradMatrices w;
    w.m = tileSize;
    w.alpha = tileSize + kernelSize - 1;
    if (tileSize == 2) {
        // Cook-Toom with interpolation points 0, -1, 1 (winograd_util.py, degree 2): every entry
        // is exact, and none is a negative zero.
        w.A = {1, 0,  1, -1,  1, 1,  0, 1};
        w.B = {1, 0, 0, 0,  0, -1, 1, -1,  -1, 1, 1, 0,  0, 0, 0, 1};
        w.G = {1, 0, 0,  0.5, -0.5, 0.5,  0.5, 0.5, 0.5,  0, 0, 1};
        return w;
    }
    // Cook-Toom with interpolation points 0, -1, 1, 1/2, -2 (winograd_util.py), exact in float32
    // except G's thirds and fifteenths.
    w.A = {1, 0, 0, 0,  1, -1, 1, -1,  1, 1, 1, 1,  1, 0.5, 0.25, 0.125,  1, -2, 4, -8,  0, 0, 0, 1};
    w.B = {1, 0, 0, 0, 0, 0,          -1.5, 1, -1, -2, 0.5, 1,  -2, -2.5, 0.5, -1, -1, -1.5,
           1.5, 0.5, 2.5, 2, -0.5, -2, 1, 1, 1, 1, 1, 1.5,      0, 0, 0, 0, 0, 1};
    w.G = {1, 0, 0,
           -1.0 / 3, 1.0 / 3, -1.0 / 3,
           1.0 / 3, 1.0 / 3, 1.0 / 3,
           -16.0 / 15, -8.0 / 15, -4.0 / 15,
           1.0 / 15, -2.0 / 15, 4.0 / 15,
           0, 0, 1};
    return w;
}

Tensor conv2dWinogradNhwc(const Tensor& data, const Tensor& weight, const std::vector<int64_t>& padding,
                          bool preComputed, int64_t tileSize) {
    const char* op = "topi.nn.conv2d_winograd_nhwc";
    detail::checkRank(data, 4, op, "data");
    detail::checkRank(weight, 4, op, "weight");
    const int64_t m = tileSize;
    const int64_t n = data.shape()[0], h = data.shape()[1], w = data.shape()[2], ci_ = data.shape()[3];
    int64_t kh, kw, co, wci;
    if (!preComputed) {
        kh = weight.shape()[0];
        kw = weight.shape()[1];
        wci = weight.shape()[2];
        co = weight.shape()[3];
    } else {
        TB_USER_CHECK(weight.shape()[0] == weight.shape()[1])
            << op << ": pre-computed weight " << shapeToString(weight.shape()) << " must be [alpha, alpha, CO, CI]";
        kh = kw = weight.shape()[0] - m + 1;
        co = weight.shape()[2];
        wci = weight.shape()[3];
    }
    TB_USER_CHECK(kh == 3 && kw == 3) << op << ": only 3x3 kernels are supported, weight " << shapeToString(weight.shape());
    TB_USER_CHECK(wci == ci_) << op << ": weight " << shapeToString(weight.shape()) << " expects " << wci
                              << " input channels but the data " << shapeToString(data.shape()) << " has " << ci_;
    const WinogradMatrices mats = winogradMatrices(m, kh);
    const int64_t alpha = mats.alpha;
    PadTuple p = getPadTuple(padding, op);
    const int64_t oh = h + p.top + p.bottom - kh + 1, ow = w + p.left + p.right - kw + 1;
    TB_USER_CHECK(oh > 0 && ow > 0) << op << ": the kernel does not fit the input " << shapeToString(data.shape());
    const int64_t nH = (oh + m - 1) / m, nW = (ow + m - 1) / m, P = n * nH * nW;
    // pad_extra uses the output H for both dims, as TVM does.
    const int64_t padExtra = (nW - 1) * m + alpha - (oh + p.top + p.bottom);
    Tensor dataPad = pad(data, {0, p.top, p.left, 0}, {0, p.bottom + padExtra, p.right + padExtra, 0}, 0.0, "data_pad",
                         {{"schedule_rule", std::string("None")}});
    Tensor A = constMatrix(mats.A, alpha, m, "A");
    Tensor B = constMatrix(mats.B, alpha, alpha, "B");

    Tensor kernelPack = weight;
    ComputeOptions bgemmOpts;
    if (!preComputed) {
        Tensor G = constMatrix(mats.G, alpha, kh, "G");
        IterVar rkh = reduceAxis(kh, "r_kh"), rkw = reduceAxis(kw, "r_kw");
        kernelPack = compute({alpha, alpha, co, ci_}, {"eps", "nu", "co", "ci"}, [&](const std::vector<Var>& v) {
            return sum(weight(rkh.var, rkw.var, v[3], v[2]) * G(v[0], rkh.var) * G(v[1], rkw.var), {rkh, rkw});
        }, "kernel_pack");
    } else {
        bgemmOpts.layoutFreePlaceholders = {kernelPack};
    }
    Tensor inputTile = compute({alpha, alpha, P, ci_}, {"eps", "nu", "p", "ci"}, [&](const std::vector<Var>& v) {
        const Var &eps = v[0], &nu = v[1], &pv = v[2];
        return dataPad(floordiv(pv, ci(nH * nW)), floormod(floordiv(pv, ci(nW)), ci(nH)) * ci(m) + eps,
                       floormod(pv, ci(nW)) * ci(m) + nu, v[3]);
    }, "input_tile", ComputeOptions{"", {{"schedule_rule", std::string("None")}}, {}});

    IterVar ra = reduceAxis(alpha, "r_a"), rb = reduceAxis(alpha, "r_b");
    ComputeOptions packOpts;
    packOpts.attrs[attr::kSimplifyConstTensorIndices] = std::vector<std::string>{"eps", "nu", "r_a", "r_b"};
    Tensor dataPack = compute({alpha, alpha, P, ci_}, {"eps", "nu", "p", "ci"}, [&](const std::vector<Var>& v) {
        return sum(inputTile(ra.var, rb.var, v[2], v[3]) * B(ra.var, v[0]) * B(rb.var, v[1]), {ra, rb});
    }, "data_pack", packOpts);

    IterVar rci = reduceAxis(ci_, "ci");
    Tensor bgemm = compute({alpha, alpha, P, co}, {"eps", "nu", "p", "co"}, [&](const std::vector<Var>& v) {
        return sum(dataPack(v[0], v[1], v[2], rci.var) * kernelPack(v[0], v[1], v[3], rci.var), {rci});
    }, "bgemm", bgemmOpts);

    IterVar ra2 = reduceAxis(alpha, "r_a"), rb2 = reduceAxis(alpha, "r_b");
    ComputeOptions invOpts;
    invOpts.attrs[attr::kSimplifyConstTensorIndices] = std::vector<std::string>{"vh", "vw", "r_a", "r_b"};
    Tensor inverse = compute({m, m, P, co}, {"vh", "vw", "p", "co"}, [&](const std::vector<Var>& v) {
        return sum(bgemm(ra2.var, rb2.var, v[2], v[3]) * A(ra2.var, v[0]) * A(rb2.var, v[1]), {ra2, rb2});
    }, "inverse", invOpts);

    return compute({n, oh, ow, co}, {"n", "h", "w", "co"}, [&](const std::vector<Var>& v) {
        const Var &nv = v[0], &hv = v[1], &wv = v[2];
        Expr tile = nv * ci(nH) * ci(nW) + floordiv(hv, ci(m)) * ci(nW) + floordiv(wv, ci(m));
        return inverse(floormod(hv, ci(m)), floormod(wv, ci(m)), tile, v[3]);
    }, "conv2d_winograd");
}

Tensor conv2dWinogradWeightTransform(const Tensor& kernel, int64_t tileSize) {
    const char* op = "topi.nn.conv2d_winograd_weight_transform";
    detail::checkRank(kernel, 4, op, "kernel");
    const auto& s = kernel.shape();
    TB_USER_CHECK(s[2] == s[3]) << op << ": only square kernels are supported, got " << shapeToString(s);
    const WinogradMatrices mats = winogradMatrices(tileSize, s[3]);
    const int64_t r = mats.alpha;
    Tensor G = constMatrix(mats.G, mats.alpha, mats.r, "G");
    IterVar rkh = reduceAxis(s[3], "r_kh"), rkw = reduceAxis(s[3], "r_kw");
    return compute({r, r, s[0], s[1]}, {"eps", "nu", "co", "ci"}, [&](const std::vector<Var>& v) {
        return sum(kernel(v[2], v[3], rkh.var, rkw.var) * G(v[0], rkh.var) * G(v[1], rkw.var), {rkh, rkw});
    }, "transform_weight");
}

}  // namespace tb::topi::nn
