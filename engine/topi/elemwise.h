// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file elemwise.h
/// \brief Element-wise unary operators (include/tvm/topi/elemwise.h) and the activation functions
/// the ONNX importer composes from them (hard_sigmoid, hard_swish).
///
/// Unary math ops are one stage `T_<op>(ax0, ...) = tir.<op>(x[ax0, ...])` with tag "elemwise"; in
/// the simple-mode print (the hashed one) they read `T_exp(...) = Op(tir.exp)`. `clip` is
/// `max(min(x, hi), lo)` with the bounds converted to x's dtype. All functions accept any rank and
/// throw UserError for an undefined input.

#include <string>

#include "engine/te/operation.h"

namespace tb::topi {

/// Intrinsic unary ops: `T_exp` = tir.exp, `T_erf`, `T_sigmoid`, `T_sqrt`, `T_log`, `T_floor`,
/// `T_ceil`, `T_round`, `T_abs` (tir.fabs), `T_tanh` (tir.tanh, as TVM's topi.tanh: no fast path).
te::Tensor exp(const te::Tensor& x, const std::string& name = "T_exp");
te::Tensor erf(const te::Tensor& x, const std::string& name = "T_erf");
te::Tensor sigmoid(const te::Tensor& x, const std::string& name = "T_sigmoid");
te::Tensor sqrt(const te::Tensor& x, const std::string& name = "T_sqrt");
te::Tensor log(const te::Tensor& x, const std::string& name = "T_log");
te::Tensor floor(const te::Tensor& x, const std::string& name = "T_floor");
te::Tensor ceil(const te::Tensor& x, const std::string& name = "T_ceil");
te::Tensor round(const te::Tensor& x, const std::string& name = "T_round");
te::Tensor abs(const te::Tensor& x, const std::string& name = "T_abs");
te::Tensor tanh(const te::Tensor& x, const std::string& name = "T_tanh");

/// `T_identity(ax...) = x[ax...]`.
te::Tensor identity(const te::Tensor& x, const std::string& name = "T_identity");
/// `T_negative(ax...) = (0f - x[ax...])` (TVM's unary minus on a float).
te::Tensor negative(const te::Tensor& x, const std::string& name = "T_negative");
/// TVM `topi::rsqrt`: `tensor(ax...) = (1f/tir.sqrt(x))` (TVM's default name is "tensor").
te::Tensor rsqrt(const te::Tensor& x, const std::string& name = "tensor");

/// TVM `topi::clip(x, a_min, a_max)`: `T_clip(ax...) = max(min(x[ax...], a_max), a_min)`.
/// Throws UserError when aMin > aMax.
te::Tensor clip(const te::Tensor& x, double aMin, double aMax, const std::string& name = "T_clip");

/// TVM `topi::cast(x, dtype)`: `T_cast(ax...) = <dtype>(x[ax...])` (no-op body when equal).
te::Tensor cast(const te::Tensor& x, te::DType dtype, const std::string& name = "T_cast");

/// A 0-d constant stage, as Relay's TE compiler lowers a scalar constant inside a fused function
/// (src/relay/backend/te_compiler_cache.cc): `compile_engine_const() = <value>`, tag "broadcast".
/// Broadcasting ops read it as `compile_engine_const[]`.
te::Tensor scalarConst(double value, te::DType dtype = te::DType::Float32,
                       const std::string& name = "compile_engine_const");

/// ONNX HardSigmoid as TVM's ONNX frontend builds it (python/tvm/relay/frontend/onnx.py
/// `HardSigmoid`): `clip(x*alpha + beta, 0, 1)`, i.e. stages `T_multiply`, `T_add`, `T_clip` with
/// the scalars as immediates.
te::Tensor hardSigmoid(const te::Tensor& x, double alpha = 0.2, double beta = 0.5);

/// ONNX HardSwish as TVM's ONNX frontend builds it: `x * hard_sigmoid(x, 1/6, 0.5)`, stages
/// `T_multiply`, `T_add`, `T_clip`, `T_multiply`.
te::Tensor hardSwish(const te::Tensor& x);

}  // namespace tb::topi
