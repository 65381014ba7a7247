// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/dense.h"

#include "engine/topi/detail.h"
#include "engine/topi/tags.h"

namespace tb::topi::nn {

using namespace te;
using detail::ci;

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& bias, bool transposeA, bool transposeB) {
    const char* op = transposeB && !transposeA ? "topi.nn.dense" : "topi.nn.matmul";
    detail::checkRank(a, 2, op, "data");
    detail::checkRank(b, 2, op, "weight");
    const int64_t batch = transposeA ? a.shape()[1] : a.shape()[0];
    const int64_t inDim = transposeA ? a.shape()[0] : a.shape()[1];
    const int64_t outDim = transposeB ? b.shape()[0] : b.shape()[1];
    const int64_t redDim = transposeB ? b.shape()[1] : b.shape()[0];
    TB_USER_CHECK(inDim == redDim) << op << ": inner dimensions do not match: " << shapeToString(a.shape()) << " and "
                                   << shapeToString(b.shape());
    if (bias) {
        detail::checkRank(bias, 1, op, "bias");
        TB_USER_CHECK(bias.shape()[0] == outDim) << op << ": bias " << shapeToString(bias.shape()) << " does not match "
                                                 << outDim << " outputs";
    }
    IterVar k = reduceAxis(inDim, "k");
    std::string name = std::string("T_matmul_") + (transposeA ? "T" : "N") + (transposeB ? "T" : "N");
    ComputeOptions opts;
    opts.tag = (!transposeA && transposeB) ? "dense" : "matmul";
    opts.layoutFreePlaceholders = {b};
    Tensor mat = compute({batch, outDim}, {"i", "j"}, [&](const std::vector<Var>& v) {
        Expr x = transposeA ? a(k.var, v[0]) : a(v[0], k.var);
        Expr y = transposeB ? b(v[1], k.var) : b(k.var, v[1]);
        return sum(x * y, {k});
    }, name, opts);
    if (!bias) return mat;
    return compute({batch, outDim}, {"i", "j"}, [&](const std::vector<Var>& v) {
        return mat(v[0], v[1]) + bias(v[1]);
    }, "compute", ComputeOptions{tag::kBroadcast, {}, {}});
}

Tensor dense(const Tensor& data, const Tensor& weight, const Tensor& bias) {
    return matmul(data, weight, bias, false, true);
}

Tensor batchMatmul(const Tensor& a, const Tensor& b, bool transposeA, bool transposeB) {
    const char* op = "topi.nn.batch_matmul";
    detail::checkRank(a, 3, op, "tensor_a");
    detail::checkRank(b, 3, op, "tensor_b");
    const auto& as = a.shape();
    const auto& bs = b.shape();
    const int64_t xb = as[0], xi = transposeA ? as[2] : as[1], xk = transposeA ? as[1] : as[2];
    const int64_t yb = bs[0], yj = transposeB ? bs[1] : bs[2], yk = transposeB ? bs[2] : bs[1];
    TB_USER_CHECK(xk == yk) << op << ": reduction dimensions do not match: " << shapeToString(as) << " and "
                            << shapeToString(bs);
    TB_USER_CHECK(xb == yb || xb == 1 || yb == 1)
        << op << ": batch dimensions do not broadcast: " << shapeToString(as) << " and " << shapeToString(bs);
    const int64_t batch = std::max(xb, yb);
    IterVar k = reduceAxis(xk, "k");
    std::string name = std::string("T_batch_matmul_") + (transposeA ? "T" : "N") + (transposeB ? "T" : "N");
    ComputeOptions opts;
    opts.tag = "batch_matmul";
    opts.layoutFreePlaceholders = {b};
    return compute({batch, xi, yj}, {"b", "i", "j"}, [&](const std::vector<Var>& v) {
        Expr ba = xb != 1 ? Expr(v[0]) : ci(0);
        Expr bb = yb != 1 ? Expr(v[0]) : ci(0);
        Expr x = transposeA ? a(ba, k.var, v[1]) : a(ba, v[1], k.var);
        Expr y = transposeB ? b(bb, v[2], k.var) : b(bb, k.var, v[2]);
        return sum(x * y, {k});
    }, name, opts);
}

}  // namespace tb::topi::nn
