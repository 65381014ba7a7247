// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file broadcast.h
/// \brief Broadcasting binary operators (include/tvm/topi/broadcast.h, topi/detail/broadcast.h).
///
/// These are the epilogues fused into nearly every task (`T_add`, `T_multiply`, ...), so their
/// index rule decides workload keys: shapes are aligned from the right; for each output dim an
/// operand reads the output var when its extent equals the other operand's (both 1 included), the
/// constant `0` when its extent is 1 and the other's is not, and nothing for leading dims it lacks.
/// So p[1,1,1,C] against [1,H,W,C] reads `p[ax0, 0, 0, ax3]` and p[C] reads `p[ax3]`. Output axes
/// are `ax0, ax1, ...`, stage name `T_<op>`, tag "broadcast" (tensor-tensor) or "elemwise"
/// (tensor-scalar, which keeps the tensor's shape).
///
/// Every function throws UserError naming the operator when the shapes cannot broadcast.

#include <string>

#include "engine/te/operation.h"

namespace tb::topi {

/// The broadcast result shape of a and b (numpy rules; throws UserError naming `op` otherwise).
std::vector<int64_t> broadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const char* op);

/// `T_add`: a + b.
te::Tensor add(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_add");
/// `T_subtract`: a - b.
te::Tensor subtract(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_subtract");
/// `T_multiply`: a * b.
te::Tensor multiply(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_multiply");
/// `T_divide`: a / b (true division for floats).
te::Tensor divide(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_divide");
/// `T_floor_divide`: floordiv(a, b) for ints, floor(a / b) for floats.
te::Tensor floorDivide(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_floor_divide");
/// `T_floor_mod`: floormod(a, b) (ints) or a - floor(a / b) * b (floats).
te::Tensor floorMod(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_floor_mod");
/// `T_maximum` / `T_minimum`: max(a, b) / min(a, b).
te::Tensor maximum(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_maximum");
te::Tensor minimum(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_minimum");
/// `T_power`: tir.pow(a, b).
te::Tensor power(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_power");
/// Comparisons (bool result): `T_greater`, `T_less`, `T_equal`, `T_not_equal`, `T_greater_equal`,
/// `T_less_equal`.
te::Tensor greater(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_greater");
te::Tensor less(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_less");
te::Tensor equal(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_equal");
te::Tensor notEqual(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_not_equal");
te::Tensor greaterEqual(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_greater_equal");
te::Tensor lessEqual(const te::Tensor& a, const te::Tensor& b, const std::string& name = "T_less_equal");

/// Tensor-scalar forms (TVM's `Name(Tensor, PrimExpr)` overloads): the scalar expression `s` (e.g.
/// `te::Expr(0.5f)`, converted to the tensor's dtype when it is an immediate) is applied to every
/// element; output shape = a's shape, tag "elemwise".
te::Tensor add(const te::Tensor& a, const te::Expr& s, const std::string& name = "T_add");
te::Tensor subtract(const te::Tensor& a, const te::Expr& s, const std::string& name = "T_subtract");
te::Tensor multiply(const te::Tensor& a, const te::Expr& s, const std::string& name = "T_multiply");
te::Tensor divide(const te::Tensor& a, const te::Expr& s, const std::string& name = "T_divide");
te::Tensor maximum(const te::Tensor& a, const te::Expr& s, const std::string& name = "T_maximum");
te::Tensor minimum(const te::Tensor& a, const te::Expr& s, const std::string& name = "T_minimum");
/// Scalar-tensor forms: `s op a`.
te::Tensor add(const te::Expr& s, const te::Tensor& a, const std::string& name = "T_add");
te::Tensor subtract(const te::Expr& s, const te::Tensor& a, const std::string& name = "T_subtract");
te::Tensor multiply(const te::Expr& s, const te::Tensor& a, const std::string& name = "T_multiply");
te::Tensor divide(const te::Expr& s, const te::Tensor& a, const std::string& name = "T_divide");

/// The generic form: `T = op(a[...], b[...])` with TVM's broadcast index rule (detail::WithBroadcast).
/// `opName` is used in error messages ("topi.add").
te::Tensor withBroadcast(const std::function<te::Expr(const te::Expr&, const te::Expr&)>& fn, const te::Tensor& a,
                         const te::Tensor& b, const std::string& name, const char* opName);

}  // namespace tb::topi
