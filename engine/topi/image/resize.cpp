// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/image/resize.h"

#include "engine/topi/detail.h"
#include "engine/topi/tags.h"

namespace tb::topi::image {

using namespace te;
using detail::ci;

namespace {

const char* kOp = "topi.image.resize2d";

// get_inx: the float32 source coordinate of output index `x`.
Expr sourceCoordinate(const Expr& x, int64_t inSize, int64_t outSize, const std::string& mode) {
    Expr xf = te::cast(DType::Float32, x);
    // float32(in) / float32(out), folded in double and rounded to float32 as TryConstFold does.
    Expr scaleF = floatImm(double(inSize) / double(outSize), DType::Float32);
    if (mode == "half_pixel") return (xf + Expr(0.5f)) * scaleF - Expr(0.5f);
    if (mode == "align_corners") {
        Expr c = outSize > 1 ? floatImm(double(inSize - 1) / double(outSize - 1), DType::Float32)
                             : floatImm(0.0, DType::Float32);
        return c * xf;
    }
    if (mode == "asymmetric") return scaleF * xf;
    if (mode == "pytorch_half_pixel") {
        if (outSize > 1) return (xf + Expr(0.5f)) * scaleF - Expr(0.5f);
        return floatImm(0.0, DType::Float32);
    }
    if (mode == "tf_half_pixel_for_nn") return (xf + Expr(0.5f)) * scaleF;
    TB_USER_ERROR() << kOp << ": unsupported coordinate_transformation_mode '" << mode << "'";
}

Expr closestIndex(const Expr& in, const std::string& rounding) {
    const Expr eps = floatImm(1e-5, DType::Float32);
    Expr r;
    if (rounding == "round") r = te::round(in);
    else if (rounding == "round_prefer_floor") r = te::ceil(in - Expr(0.5f));
    else if (rounding == "round_prefer_ceil") r = te::floor(in + Expr(0.5f));
    else if (rounding == "floor") r = te::floor(in + eps);
    else if (rounding == "ceil") r = te::ceil(in - eps);
    else TB_USER_ERROR() << kOp << ": unknown rounding method '" << rounding << "'";
    return te::cast(DType::Int32, r);
}

}  // namespace

Tensor resize2d(const Tensor& data, const std::vector<int64_t>& size, const std::string& layout,
                const std::string& method, const std::string& mode, const std::string& roundingArg) {
    detail::checkRank(data, 4, kOp, "data");
    TB_USER_CHECK(layout == "NCHW" || layout == "NHWC") << kOp << ": unsupported layout '" << layout << "'";
    TB_USER_CHECK(size.size() == 2 && size[0] > 0 && size[1] > 0)
        << kOp << ": size needs two positive values, got " << shapeToString(size);
    TB_USER_CHECK(method == "nearest_neighbor" || method == "linear")
        << kOp << ": unsupported method '" << method << "'";
    // Validate the modes once, outside the compute lambda.
    (void)sourceCoordinate(ci(0), 1, 1, mode);
    std::string rounding = roundingArg.empty() ? (mode == "align_corners" ? "round" : "floor") : roundingArg;
    if (method == "nearest_neighbor") (void)closestIndex(floatImm(0.0, DType::Float32), rounding);

    const bool nchw = layout == "NCHW";
    const size_t hAxis = nchw ? 2 : 1, wAxis = nchw ? 3 : 2;
    const int64_t ih = data.shape()[hAxis], iw = data.shape()[wAxis];
    std::vector<int64_t> outShape = data.shape();
    outShape[hAxis] = size[0];
    outShape[wAxis] = size[1];
    auto pixel = [&](const std::vector<Var>& v, const Expr& y, const Expr& x) {
        Expr yc = max(min(y, ci(ih - 1)), ci(0));
        Expr xc = max(min(x, ci(iw - 1)), ci(0));
        std::vector<Expr> idx = detail::asExprs(v);
        idx[hAxis] = yc;
        idx[wAxis] = xc;
        return te::cast(DType::Float32, data(idx));
    };
    return compute(outShape, axisNames(4, "i"), [&](const std::vector<Var>& v) {
        Expr inY = sourceCoordinate(v[hAxis], ih, size[0], mode);
        Expr inX = sourceCoordinate(v[wAxis], iw, size[1], mode);
        Expr value;
        if (method == "nearest_neighbor") {
            Expr cx = closestIndex(inX, rounding), cy = closestIndex(inY, rounding);
            value = pixel(v, cy, cx);
        } else {
            Expr yInt = te::cast(DType::Int32, te::floor(inY));
            Expr xInt = te::cast(DType::Int32, te::floor(inX));
            Expr yLerp = inY - te::cast(DType::Float32, yInt);
            Expr xLerp = inX - te::cast(DType::Float32, xInt);
            auto lerp = [](const Expr& a, const Expr& b, const Expr& t) { return a * (Expr(1.0f) - t) + b * t; };
            Expr top = lerp(pixel(v, yInt, xInt), pixel(v, yInt, xInt + ci(1)), xLerp);
            Expr bottom = lerp(pixel(v, yInt + ci(1), xInt), pixel(v, yInt + ci(1), xInt + ci(1)), xLerp);
            value = lerp(top, bottom, yLerp);
        }
        return te::cast(data.dtype(), value);
    }, "resize", ComputeOptions{tag::kInjective, {}, {}});
}

}  // namespace tb::topi::image
