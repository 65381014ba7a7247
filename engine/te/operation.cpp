// SPDX-License-Identifier: Apache-2.0
#include "engine/te/operation.h"

#include <algorithm>

#include "engine/support/error.h"

namespace tb::te {

std::vector<Tensor> OperationNode::inputTensors() const {
    std::vector<Tensor> out;
    for (const auto& b : body) {
        postOrderVisit(b, [&](const Expr& e) {
            if (e.kind() != ExprKind::Load) return;
            auto* l = e.as<LoadNode>();
            Tensor t(l->op, l->valueIndex);
            if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
        });
    }
    return out;
}

const AttrValue* OperationNode::attr(const std::string& key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? nullptr : &it->second;
}

int64_t Tensor::numElements() const {
    int64_t n = 1;
    for (int64_t d : shape()) n *= d;
    return n;
}

Expr Tensor::operator()(std::vector<Expr> indices) const {
    TB_CHECK(m_op) << "load from a null tensor";
    TB_CHECK(indices.size() == ndim()) << "tensor " << name() << " has " << ndim() << " dims, indexed with "
                                       << indices.size();
    for (auto& i : indices) {
        TB_CHECK(i.get() && isInt(i.dtype())) << "non-integer index into " << name();
    }
    return Expr(std::make_shared<LoadNode>(dtype(), m_op, m_valueIndex, std::move(indices)));
}

Tensor placeholder(std::vector<int64_t> shape, const std::string& name, DType dtype) {
    auto op = std::make_shared<OperationNode>();
    op->type = OpType::Placeholder;
    op->name = name;
    op->shape = std::move(shape);
    op->dtype = dtype;
    return Tensor(op);
}

Tensor compute(const std::vector<int64_t>& shape, const std::vector<std::string>& names,
               const std::function<Expr(const std::vector<Var>&)>& fcompute, const std::string& name,
               const ComputeOptions& options) {
    TB_CHECK(names.size() == shape.size()) << name << ": " << names.size() << " axis names for " << shape.size()
                                           << " dims";
    auto op = std::make_shared<OperationNode>();
    op->type = OpType::Compute;
    op->name = name;
    op->tag = options.tag;
    op->attrs = options.attrs;
    op->shape = shape;
    std::vector<Var> vars;
    for (size_t i = 0; i < shape.size(); ++i) {
        TB_CHECK(shape[i] > 0) << name << ": dimension " << i << " has extent " << shape[i];
        vars.emplace_back(names[i]);
        op->axis.push_back(IterVar{vars.back(), 0, shape[i], IterKind::DataPar});
    }
    Expr body = fcompute(vars);
    TB_CHECK(body) << name << ": null body";
    op->dtype = body.dtype();
    if (auto* r = body.as<ReduceNode>()) op->reduceAxis = r->axis;
    op->body.push_back(std::move(body));
    for (const auto& t : options.layoutFreePlaceholders) op->layoutFreePlaceholders.push_back(t.op());
    return Tensor(op);
}

std::vector<std::string> axisNames(size_t n, const std::string& prefix) {
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
    return out;
}

}  // namespace tb::te
