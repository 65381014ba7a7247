// SPDX-License-Identifier: Apache-2.0
#include "engine/lower/lower_dag.h"

#include <map>
#include <set>

#include "engine/lower/simplify.h"
#include "engine/schedule/layout_rewrite.h"
#include "engine/support/error.h"

namespace tb::lower {

using te::Expr;
using te::ExprKind;

Expr bindLoads(const Expr& e, const std::map<const te::OperationNode*, Buffer>& bufferOf) {
    if (!e) return e;
    // Collect replacements bottom-up by rebuilding the tree through substitute's machinery would
    // lose loads, so rebuild explicitly.
    switch (e.kind()) {
        case ExprKind::IntImm: case ExprKind::FloatImm: case ExprKind::Var: return e;
        case ExprKind::Load: {
            auto* n = e.as<te::LoadNode>();
            std::vector<Expr> idx;
            for (auto& x : n->indices) idx.push_back(bindLoads(x, bufferOf));
            auto it = bufferOf.find(n->op.get());
            TB_CHECK(it != bufferOf.end()) << "load of " << n->op->name << " which has no buffer";
            TB_CHECK(n->valueIndex == 0) << "multi-output op " << n->op->name;
            return bufferLoad(it->second, std::move(idx));
        }
        case ExprKind::Not: return te::logicalNot(bindLoads(e.as<te::NotNode>()->a, bufferOf));
        case ExprKind::Select: {
            auto* n = e.as<te::SelectNode>();
            return te::select(bindLoads(n->cond, bufferOf), bindLoads(n->t, bufferOf), bindLoads(n->f, bufferOf));
        }
        case ExprKind::Cast: return te::cast(e.dtype(), bindLoads(e.as<te::CastNode>()->value, bufferOf));
        case ExprKind::Call: {
            auto* n = e.as<te::CallNode>();
            std::vector<Expr> args;
            for (auto& a : n->args) args.push_back(bindLoads(a, bufferOf));
            return te::call(n->dtype, n->op, std::move(args));
        }
        case ExprKind::Reduce: {
            auto* n = e.as<te::ReduceNode>();
            return te::reduce(n->combiner, bindLoads(n->source, bufferOf), n->axis, bindLoads(n->condition, bufferOf),
                              bindLoads(n->init, bufferOf));
        }
        default: {
            auto* n = static_cast<const te::BinaryNode*>(e.get());
            return te::binary(n->kind, bindLoads(n->a, bufferOf), bindLoads(n->b, bufferOf));
        }
    }
}

Expr reduceIdentity(te::ReduceKind k, te::DType t) {
    switch (k) {
        case te::ReduceKind::Sum: return te::makeConst(t, 0);
        case te::ReduceKind::Max: return te::minValue(t);
        case te::ReduceKind::Min: return te::maxValue(t);
    }
    TB_CHECK(false) << "unknown reduction kind " << int(k);
    return Expr();
}

Expr reduceCombine(te::ReduceKind k, Expr acc, Expr v) {
    switch (k) {
        case te::ReduceKind::Sum: return acc + v;
        case te::ReduceKind::Max: return te::max(acc, v);
        case te::ReduceKind::Min: return te::min(acc, v);
    }
    TB_CHECK(false) << "unknown reduction kind " << int(k);
    return Expr();
}

std::vector<int> weightArgIndices(const te::ComputeDAG& dag) {
    std::set<const te::OperationNode*> free;
    for (const auto& op : dag.ops()) {
        for (const auto& ph : op->layoutFreePlaceholders) free.insert(ph.get());
        if (op->isPlaceholder() && op->attr(kLayoutRewrittenAttr)) free.insert(op.get());
    }
    std::vector<int> out;
    const auto& ts = dag.tensors();
    for (size_t i = 0; i < ts.size(); ++i)
        if (free.count(ts[i].op().get())) out.push_back(static_cast<int>(i));
    return out;
}

LoweredFunc lowerComputeDag(const te::ComputeDAG& dag, const std::string& name) {
    LoweredFunc f;
    f.name = name;
    f.weightArgs = weightArgIndices(dag);
    std::map<const te::OperationNode*, Buffer> bufferOf;
    for (auto& t : dag.tensors()) {
        Buffer b = makeBuffer(t.name(), t.shape(), BufferScope::Global, {}, t.dtype());
        bufferOf[t.op().get()] = b;
        f.args.push_back(b);
    }
    std::vector<Buffer> intermediates;
    for (auto& op : dag.ops()) {
        if (op->isPlaceholder() || bufferOf.count(op.get())) continue;
        Buffer b = makeBuffer(op->name, op->shape, BufferScope::Global, {}, op->dtype);
        bufferOf[op.get()] = b;
        intermediates.push_back(b);
    }

    std::vector<Stmt> nests;
    for (auto& op : dag.ops()) {
        if (!op->isCompute()) continue;
        TB_CHECK(op->body.size() == 1) << "multi-output compute op " << op->name;
        const Buffer& out = bufferOf.at(op.get());
        std::vector<Expr> idx;
        for (auto& iv : op->axis) idx.push_back(iv.var);
        Expr body = bindLoads(op->body[0], bufferOf);
        Stmt nest;
        if (auto* red = body.as<te::ReduceNode>()) {
            Expr init = red->init ? red->init : reduceIdentity(red->combiner, red->dtype);
            Stmt update = makeStore(out, idx, reduceCombine(red->combiner, bufferLoad(out, idx), red->source));
            if (red->condition) update = makeIf(red->condition, update);
            for (size_t r = red->axis.size(); r-- > 0;) {
                auto& iv = red->axis[r];
                update = makeFor(iv.var, te::intImm(iv.min), te::intImm(iv.extent), ForKind::Serial, update);
            }
            nest = makeSeq({makeStore(out, idx, init), update});
        } else {
            nest = makeStore(out, idx, body);
        }
        for (size_t a = op->axis.size(); a-- > 0;) {
            auto& iv = op->axis[a];
            nest = makeFor(iv.var, te::intImm(iv.min), te::intImm(iv.extent), ForKind::Serial, nest);
        }
        nests.push_back(nest);
    }
    Stmt body = makeSeq(std::move(nests));
    for (size_t i = intermediates.size(); i-- > 0;) body = makeAllocate(intermediates[i], body);
    f.body = body;
    return simplify(f);
}

}  // namespace tb::lower
