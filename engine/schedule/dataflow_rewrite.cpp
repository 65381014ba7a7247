// SPDX-License-Identifier: Apache-2.0
#include "engine/schedule/dataflow_rewrite.h"

#include <algorithm>
#include <map>

#include "engine/support/error.h"
#include "engine/support/int_math.h"

namespace tb {

using te::Expr;
using te::ExprKind;
using te::Operation;
using te::OperationNode;

namespace {

using OpMap = std::map<const OperationNode*, Operation>;

// Rebuild e with every load of a mapped op reading the replacement instead.
Expr replaceLoads(const Expr& e, const OpMap& map, bool* changed) {
    return rewriteLoads(e, [&](const te::LoadNode& n, std::vector<Expr> idx) {
        Operation op = n.op;
        if (auto it = map.find(op.get()); it != map.end()) {
            op = it->second;
            *changed = true;
        }
        return Expr(std::make_shared<te::LoadNode>(n.dtype, op, n.valueIndex, std::move(idx)));
    });
}

// op with its loads redirected through map; the same op if it reads nothing mapped (te ReplaceInputs).
Operation replaceInputs(const Operation& op, const OpMap& map) {
    if (!op->isCompute()) return op;
    bool changed = false;
    std::vector<Expr> body;
    for (const auto& b : op->body) body.push_back(replaceLoads(b, map, &changed));
    if (!changed) return op;
    auto n = std::make_shared<OperationNode>(*op);
    n->body = std::move(body);
    return n;
}

}  // namespace

Expr rewriteLoads(const Expr& e, const LoadRewriter& f) {
    if (!e.get()) return e;
    switch (e.kind()) {
        case ExprKind::IntImm: case ExprKind::FloatImm: case ExprKind::Var:
            return e;
        case ExprKind::Not:
            return te::logicalNot(rewriteLoads(e.as<te::NotNode>()->a, f));
        case ExprKind::Select: {
            auto* n = e.as<te::SelectNode>();
            return te::select(rewriteLoads(n->cond, f), rewriteLoads(n->t, f),
                              rewriteLoads(n->f, f));
        }
        case ExprKind::Cast:
            return te::cast(e.dtype(), rewriteLoads(e.as<te::CastNode>()->value, f));
        case ExprKind::Call: {
            auto* n = e.as<te::CallNode>();
            std::vector<Expr> args;
            for (auto& a : n->args) args.push_back(rewriteLoads(a, f));
            return te::call(n->dtype, n->op, std::move(args));
        }
        case ExprKind::Load: {
            auto* n = e.as<te::LoadNode>();
            std::vector<Expr> idx;
            for (auto& a : n->indices) idx.push_back(rewriteLoads(a, f));
            return f(*n, std::move(idx));
        }
        case ExprKind::Reduce: {
            auto* n = e.as<te::ReduceNode>();
            return te::reduce(n->combiner, rewriteLoads(n->source, f), n->axis,
                              rewriteLoads(n->condition, f), rewriteLoads(n->init, f));
        }
        default: {
            auto* n = e.as<te::BinaryNode>();
            return te::binary(n->kind, rewriteLoads(n->a, f), rewriteLoads(n->b, f));
        }
    }
}

// te ReplaceDataFlow over the ops in stage order (topological): rebuild every reader of a replaced
// op, transitively. Ops that are keys of `map` are themselves left to the caller.
void replaceDataFlow(std::vector<Operation>& ops, std::map<const OperationNode*, Operation> map) {
    for (auto& op : ops) {
        Operation r = replaceInputs(op, map);
        if (r != op) {
            map[op.get()] = r;
            op = r;
        }
    }
}

std::vector<Operation> cacheReadOps(const std::vector<Operation>& ops, int stageId, const std::string& scope,
                                    const std::vector<int>& readerStageIds) {
    TB_CHECK(stageId >= 0 && size_t(stageId) < ops.size()) << "cache_read stage " << stageId;
    const Operation& src = ops[size_t(stageId)];
    std::string base = src->name;
    for (const auto& op : ops)
        if (op->name == base + "." + scope) base += ".d";
    std::vector<te::Var> vars;
    auto cache = std::make_shared<OperationNode>();
    cache->type = te::OpType::Compute;
    cache->name = base + "." + scope;
    cache->shape = src->shape;
    cache->dtype = src->dtype;
    std::vector<Expr> idx;
    for (size_t i = 0; i < src->shape.size(); ++i) {
        te::Var v("ax" + std::to_string(i));
        cache->axis.push_back(te::IterVar{v, 0, src->shape[i], te::IterKind::DataPar});
        idx.push_back(v);
    }
    cache->body.push_back(te::Tensor(src)(idx));
    Operation cacheOp = cache;

    std::vector<Operation> out = ops;
    OpMap readerMap;
    OpMap sub{{src.get(), cacheOp}};
    for (int r : readerStageIds) {
        TB_USER_CHECK(r >= 0 && size_t(r) < ops.size()) << "cache_read: reader stage " << r << " does not exist";
        Operation repl = replaceInputs(ops[size_t(r)], sub);
        TB_USER_CHECK(repl != ops[size_t(r)]) << "cache_read: stage " << r << " (" << ops[size_t(r)]->name
                                              << ") does not read " << src->name;
        readerMap[ops[size_t(r)].get()] = repl;
        out[size_t(r)] = repl;
    }
    replaceDataFlow(out, readerMap);
    out.insert(out.begin() + stageId + 1, cacheOp);
    return out;
}

std::vector<Operation> cacheWriteOps(const std::vector<Operation>& ops, int stageId, const std::string& scope) {
    TB_CHECK(stageId >= 0 && size_t(stageId) < ops.size()) << "cache_write stage " << stageId;
    const Operation& orig = ops[size_t(stageId)];
    TB_USER_CHECK(orig->isCompute()) << "cache_write: stage " << stageId << " (" << orig->name
                                     << ") is not a compute op";
    TB_USER_CHECK(orig->body.size() == 1) << "cache_write: multi-output op " << orig->name << " is not supported";
    auto cache = std::make_shared<OperationNode>(*orig);
    cache->name = orig->name + "." + scope;
    cache->axis.clear();
    std::vector<std::pair<te::Var, Expr>> vsub;
    for (const auto& ax : orig->axis) {
        te::Var v(ax.name() + ".c", ax.var.dtype());
        cache->axis.push_back(te::IterVar{v, ax.min, ax.extent, ax.kind});
        vsub.emplace_back(ax.var, v);
    }
    cache->body = {te::substitute(orig->body[0], vsub)};
    Operation cacheOp = cache;

    auto repl = std::make_shared<OperationNode>(*orig);
    repl->reduceAxis.clear();
    std::vector<Expr> args;
    for (const auto& ax : orig->axis) args.push_back(ax.var);
    repl->body = {te::Tensor(cacheOp)(args)};
    Operation replOp = repl;

    std::vector<Operation> out = ops;
    out[size_t(stageId)] = replOp;
    replaceDataFlow(out, OpMap{{orig.get(), replOp}});
    out.insert(out.begin() + stageId, cacheOp);
    return out;
}

std::vector<Operation> rfactorOps(const std::vector<Operation>& ops, int stageId, const Stage& stage, int iterId,
                                  int factorAxis) {
    TB_CHECK(stageId >= 0 && size_t(stageId) < ops.size()) << "rfactor stage " << stageId;
    const Operation& orig = ops[size_t(stageId)];
    TB_USER_CHECK(orig->isCompute() && orig->body.size() == 1) << "rfactor: " << orig->name
                                                               << " is not a single-output compute op";
    auto* red = orig->body[0].as<te::ReduceNode>();
    TB_USER_CHECK(red) << "rfactor: " << orig->name << " is not a reduction";
    TB_USER_CHECK(iterId >= 0 && size_t(iterId) < stage.iters.size())
        << "rfactor: loop " << iterId << " of " << orig->name << " does not exist";
    const IterVarGraph& g = *stage.graph;
    const int axisVar = stage.iters[size_t(iterId)].var;
    const int nSpatial = int(orig->axis.size());
    TB_USER_CHECK(axisVar >= 0 && g.vars[size_t(axisVar)].kind == IteratorKind::Reduction)
        << "rfactor: loop " << stage.iters[size_t(iterId)].name << " of " << orig->name << " is not a reduction loop";

    // Touched vars: everything connected to the factored loop by relations (te PassUp/DownBitMaskOr).
    std::vector<char> touched(g.vars.size(), 0);
    touched[size_t(axisVar)] = 1;
    for (auto it = g.relations.rbegin(); it != g.relations.rend(); ++it) {  // up
        if (it->kind == IterRelation::Kind::Split) {
            if (touched[size_t(it->outer)] || touched[size_t(it->inner)]) touched[size_t(it->parent)] = 1;
        } else if (touched[size_t(it->parent)]) {
            touched[size_t(it->outer)] = touched[size_t(it->inner)] = 1;
        }
    }
    for (const auto& r : g.relations) {  // down
        if (r.kind == IterRelation::Kind::Split) {
            if (touched[size_t(r.parent)]) touched[size_t(r.outer)] = touched[size_t(r.inner)] = 1;
        } else if (touched[size_t(r.outer)] || touched[size_t(r.inner)]) {
            touched[size_t(r.parent)] = 1;
        }
    }
    for (int i = 0; i < nSpatial; ++i)
        TB_USER_CHECK(!touched[size_t(i)]) << "rfactor: the factored loop of " << orig->name << " touches a spatial axis";

    // Domains without tightening (te PassDownDomain with allow_missing).
    std::vector<int64_t> ext(g.vars.size(), -1);
    for (int i = 0; i < g.numRoots; ++i) {
        const te::IterVar& ax = i < nSpatial ? orig->axis[size_t(i)] : orig->reduceAxis[size_t(i - nSpatial)];
        ext[size_t(i)] = ax.extent;
    }
    for (const auto& r : g.relations) {
        if (r.kind == IterRelation::Kind::Split) {
            TB_USER_CHECK(r.factor > 0) << "rfactor: a split of " << orig->name << " has an undefined length";
            int64_t p = ext[size_t(r.parent)];
            if (r.nparts) {
                ext[size_t(r.outer)] = r.factor;
                ext[size_t(r.inner)] = ceilDiv(p, r.factor);
            } else {
                ext[size_t(r.inner)] = r.factor;
                ext[size_t(r.outer)] = ceilDiv(p, r.factor);
            }
        } else {
            ext[size_t(r.parent)] = ext[size_t(r.outer)] * ext[size_t(r.inner)];
        }
    }

    // Values of the touched vars in terms of the touched leaves (te PassUpIndex).
    std::vector<Expr> value(g.vars.size());
    std::vector<te::Var> leafVar(g.vars.size());
    for (const auto& it : stage.iters) {
        if (!touched[size_t(it.var)]) continue;
        leafVar[size_t(it.var)] = te::Var(g.vars[size_t(it.var)].teName);
        value[size_t(it.var)] = ext[size_t(it.var)] == 1 ? Expr(0) : Expr(leafVar[size_t(it.var)]);
    }
    std::vector<Expr> preds;
    for (auto it = g.relations.rbegin(); it != g.relations.rend(); ++it) {
        if (it->kind == IterRelation::Kind::Split) {
            if (!value[size_t(it->outer)].get() || !value[size_t(it->inner)].get()) continue;
            Expr v = value[size_t(it->inner)] + value[size_t(it->outer)] * Expr(int(ext[size_t(it->inner)]));
            value[size_t(it->parent)] = v;
            if (ext[size_t(it->outer)] * ext[size_t(it->inner)] != ext[size_t(it->parent)])
                preds.push_back(te::lt(v, Expr(int(ext[size_t(it->parent)]))));
        } else {
            if (!value[size_t(it->parent)].get()) continue;
            Expr f = Expr(int(ext[size_t(it->inner)]));
            value[size_t(it->outer)] = te::floordiv(value[size_t(it->parent)], f);
            value[size_t(it->inner)] = te::floormod(value[size_t(it->parent)], f);
        }
    }

    auto rf = std::make_shared<OperationNode>();
    rf->type = te::OpType::Compute;
    rf->name = orig->name + ".rf";
    TB_USER_CHECK(factorAxis >= 0 && factorAxis <= nSpatial)
        << "rfactor: factor axis " << factorAxis << " out of range for " << orig->name;
    te::IterVar factorIv{leafVar[size_t(axisVar)], 0, ext[size_t(axisVar)], te::IterKind::DataPar};
    for (int i = 0; i < nSpatial; ++i) {
        if (i == factorAxis) rf->axis.push_back(factorIv);
        rf->axis.push_back(orig->axis[size_t(i)]);
    }
    if (factorAxis == nSpatial) rf->axis.push_back(factorIv);
    std::vector<std::pair<te::Var, Expr>> vsub;
    for (size_t i = 0; i < orig->reduceAxis.size(); ++i) {
        const size_t v = size_t(nSpatial) + i;
        if (!touched[v]) rf->reduceAxis.push_back(orig->reduceAxis[i]);
        else vsub.emplace_back(orig->reduceAxis[i].var, value[v]);
    }
    for (const auto& it : stage.iters) {
        if (touched[size_t(it.var)] && it.var != axisVar)
            rf->reduceAxis.push_back(te::IterVar{leafVar[size_t(it.var)], 0, ext[size_t(it.var)], te::IterKind::CommReduce});
    }
    Expr cond;
    for (auto& p : preds) cond = cond.get() ? te::logicalAnd(cond, p) : p;
    if (red->condition.get() && !te::isConstInt(red->condition, int64_t(1)))
        cond = cond.get() ? te::logicalAnd(cond, red->condition) : red->condition;
    if (cond.get()) cond = te::call(te::DType::Bool, "tir.likely", {te::substitute(cond, vsub)});
    rf->body = {te::reduce(red->combiner, te::substitute(red->source, vsub), rf->reduceAxis, cond)};
    rf->dtype = rf->body[0].dtype();
    for (const auto& ax : rf->axis) rf->shape.push_back(ax.extent);
    Operation rfOp = rf;

    auto repl = std::make_shared<OperationNode>();
    repl->type = te::OpType::Compute;
    repl->name = orig->name + ".repl";
    repl->shape = orig->shape;
    repl->dtype = orig->dtype;
    std::vector<Expr> idx;
    std::vector<std::pair<te::Var, Expr>> initSub;
    te::IterVar replRed{te::Var(g.vars[size_t(axisVar)].teName + ".v"), 0, ext[size_t(axisVar)], te::IterKind::CommReduce};
    for (int i = 0; i < nSpatial; ++i) {
        te::Var v("ax" + std::to_string(i));
        repl->axis.push_back(te::IterVar{v, 0, orig->shape[size_t(i)], te::IterKind::DataPar});
        if (i == factorAxis) idx.push_back(replRed.var);
        idx.push_back(v);
        initSub.emplace_back(orig->axis[size_t(i)].var, v);
    }
    if (factorAxis == nSpatial) idx.push_back(replRed.var);
    repl->reduceAxis = {replRed};
    repl->body = {te::reduce(red->combiner, te::Tensor(rfOp)(idx), repl->reduceAxis, Expr(),
                             te::substitute(red->init, initSub))};
    Operation replOp = repl;

    std::vector<Operation> out = ops;
    out[size_t(stageId)] = replOp;
    replaceDataFlow(out, OpMap{{orig.get(), replOp}});
    out.insert(out.begin() + stageId, rfOp);
    return out;
}

std::shared_ptr<const te::ComputeDAG> makeDagFromOps(const std::vector<Operation>& ops) {
    std::vector<te::Tensor> tensors;
    std::map<const OperationNode*, bool> read;
    for (const auto& op : ops)
        for (const auto& t : op->inputTensors()) read[t.op().get()] = true;
    for (const auto& op : ops)
        if (op->isPlaceholder()) tensors.emplace_back(op);
    for (const auto& op : ops)
        if (op->isCompute() && !read.count(op.get())) tensors.emplace_back(op);
    return std::make_shared<const te::ComputeDAG>(std::move(tensors));
}

}  // namespace tb
