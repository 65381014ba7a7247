// SPDX-License-Identifier: Apache-2.0
#include "engine/schedule/layout_rewrite.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/schedule/dataflow_rewrite.h"
#include "engine/schedule/infer_bound.h"
#include "engine/support/error.h"

namespace tb {

using te::Expr;
using te::ExprKind;
using te::Operation;
using te::OperationNode;

namespace {

// TVM AxisBaseName: the name before the last '_' (`ff_c` -> `ff`, the cache_write copy's axis).
std::string axisBaseName(const std::string& s) {
    const size_t p = s.rfind('_');
    return p == std::string::npos ? s : s.substr(0, p);
}

std::string layoutString(const std::vector<int64_t>& shape, const std::vector<std::string>& axes) {
    std::string out;
    for (size_t i = 0; i < shape.size(); ++i) out += std::to_string(shape[i]) + axes[i];
    return out;
}

// The axis an index of a layout-free placeholder names (TVM GetOrigLayout / IndexRewriter).
std::string indexAxisName(const Expr& e, const std::string& placeholder) {
    int64_t v = 0;
    if (te::isConstInt(e, &v)) {
        TB_USER_CHECK(v == 0) << "layout rewrite: placeholder " << placeholder << " is read at the constant index " << v
                              << " (only 0 or an axis can be rewritten)";
        return "IntImm";
    }
    TB_USER_CHECK(e.kind() == ExprKind::Var)
        << "layout rewrite: placeholder " << placeholder << " is read at an index that is not an axis";
    return axisBaseName(cleanName(static_cast<const te::VarNode*>(e.get())->name));
}

// The index tuples of every load of `ph` in op's body.
std::vector<std::vector<Expr>> readsOf(const OperationNode& op, const OperationNode* ph) {
    std::vector<std::vector<Expr>> out;
    for (const Expr& b : op.body)
        te::postOrderVisit(b, [&](const Expr& e) {
            if (e.kind() != ExprKind::Load) return;
            auto* n = static_cast<const te::LoadNode*>(e.get());
            if (n->op.get() == ph) out.push_back(n->indices);
        });
    return out;
}

bool readsDirectly(const OperationNode& op, const OperationNode* ph) {
    for (const te::Tensor& t : op.inputTensors())
        if (t.op().get() == ph) return true;
    return false;
}

// TVM GetOrigLayout: the axis of each dimension of `ph` as `op` reads it.
std::vector<std::string> origAxesOf(const OperationNode& op, const OperationNode& ph) {
    const auto reads = readsOf(op, &ph);
    TB_CHECK(!reads.empty()) << "layout rewrite: " << op.name << " does not read " << ph.name;
    std::vector<std::string> axes;
    for (const Expr& e : reads[0]) axes.push_back(indexAxisName(e, ph.name));
    for (const auto& r : reads) {
        std::vector<std::string> other;
        for (const Expr& e : r) other.push_back(indexAxisName(e, ph.name));
        TB_USER_CHECK(other == axes) << "layout rewrite: " << op.name << " reads placeholder " << ph.name
                                     << " at two different index tuples";
    }
    const std::set<std::string> distinct(axes.begin(), axes.end());
    TB_USER_CHECK(distinct.size() == ph.shape.size())
        << "layout rewrite: " << op.name << " reads placeholder " << ph.name << " with a repeated axis or constant";
    return axes;
}

// TVM GetNewLayout: the loops of stage `stageId` (after its attach target's loops up to the attach
// loop) that iterate over an axis of the placeholder, in loop order, as (extent, axis) pairs.
void newLayoutOf(const State& state, int stageId, const std::set<std::string>& phAxes, const std::string& phName,
                 std::vector<int64_t>* shape, std::vector<std::string>* axes) {
    const Stage& stage = state.stage(stageId);
    std::vector<const Iterator*> stageIters;
    int attachPos = -1;
    if (auto at = state.attachMap().attachedAt(stageId)) {
        const Stage& target = state.stage(at->first);
        attachPos = at->second;
        for (int i = 0; i <= attachPos; ++i) stageIters.push_back(&target.iters[size_t(i)]);
    }
    for (const Iterator& it : stage.iters) stageIters.push_back(&it);
    std::vector<const Iterator*> iters;  // fused loops replaced by the loops they fused
    size_t itersBeforeAttach = 0;
    for (size_t i = 0; i < stageIters.size(); ++i) {
        if (stageIters[i]->origIters.empty()) {
            iters.push_back(stageIters[i]);
        } else {
            for (const Iterator& o : stageIters[i]->origIters) iters.push_back(&o);
        }
        if (int(i) == attachPos) itersBeforeAttach = iters.size();
    }
    std::vector<std::string> names;
    for (const Iterator* it : iters) {
        const std::set<std::string> orig = originalIteratorNames(it->name);
        TB_USER_CHECK(orig.size() == 1) << "layout rewrite of " << phName << ": loop " << it->name << " of "
                                        << stage.op->name << " mixes " << orig.size() << " axes";
        names.push_back(axisBaseName(*orig.begin()));
    }
    for (size_t i = 0; i < iters.size(); ++i) {
        // The attach target's loops tile the same output axes as the stage's own outer loops.
        const size_t from = i < itersBeforeAttach ? i + itersBeforeAttach : i;
        TB_USER_CHECK(from < names.size()) << "layout rewrite of " << phName << ": " << stage.op->name
                                           << " has fewer loops than the loops it is attached under";
        if (!phAxes.count(names[from])) continue;
        shape->push_back(iters[i]->range ? iters[i]->range->extent : 1);
        axes->push_back(names[from]);
    }
}

// op with every load of `ph` reading `newPh` at the new layout's indices (TVM IndexRewriter).
Operation rewriteReads(const OperationNode& op, const Operation& ph, const Operation& newPh,
                       const PlaceholderLayout& layout) {
    auto n = std::make_shared<OperationNode>(op);
    n->body.clear();
    for (const Expr& b : op.body)
        n->body.push_back(rewriteLoads(b, [&](const te::LoadNode& load, std::vector<Expr> idx) -> Expr {
            if (load.op != ph) return Expr(std::make_shared<te::LoadNode>(load.dtype, load.op, load.valueIndex, std::move(idx)));
            std::map<std::string, Expr> argOf;
            for (const Expr& e : idx) {
                const std::string a = indexAxisName(e, ph->name);
                if (a != "IntImm") argOf[a] = e;
            }
            std::map<std::string, int64_t> divisor;
            std::vector<Expr> out(layout.newShape.size());
            for (size_t i = layout.newShape.size(); i-- > 0;) {
                auto it = argOf.find(layout.newAxes[i]);
                TB_USER_CHECK(it != argOf.end()) << "layout rewrite: " << op.name << " reads " << ph->name
                                                 << " without the axis " << layout.newAxes[i];
                const te::DType t = it->second.dtype();
                int64_t& d = divisor.try_emplace(layout.newAxes[i], 1).first->second;
                out[i] = te::floormod(te::floordiv(it->second, te::intImm(d, t)), te::intImm(layout.newShape[i], t));
                d *= layout.newShape[i];
            }
            return Expr(std::make_shared<te::LoadNode>(load.dtype, newPh, load.valueIndex, std::move(out)));
        }));
    auto& lf = n->layoutFreePlaceholders;
    lf.erase(std::remove(lf.begin(), lf.end(), ph), lf.end());
    return n;
}

// `dag` with placeholder `ph` replaced by one of the new shape and its reader rewritten (TVM
// RewriteLayout's op and tensor updates for RewriteForPreTransformed).
te::ComputeDAG rewriteDag(const te::ComputeDAG& dag, const Operation& ph, const PlaceholderLayout& layout) {
    std::vector<Operation> ops = dag.ops();
    const std::vector<Operation> before = ops;
    int readerIdx = -1;
    for (size_t i = 0; i < ops.size(); ++i) {
        if (!ops[i]->isCompute() || !readsDirectly(*ops[i], ph.get())) continue;
        TB_USER_CHECK(readerIdx < 0) << "layout rewrite: placeholder " << ph->name << " is read by two operations ("
                                     << ops[size_t(readerIdx)]->name << ", " << ops[i]->name << ")";
        readerIdx = int(i);
    }
    TB_CHECK(readerIdx >= 0) << "layout rewrite: nothing reads " << ph->name;
    const int phIdx = dag.opIndex(ph.get());
    TB_CHECK(phIdx >= 0) << "layout rewrite: " << ph->name << " is not an op of the DAG";
    // Still a weight (read-only, once per network run) though no longer layout-free: codegen
    // prefetches it (lower_dag.h weightArgIndices, prefetch.h).
    auto marked = std::make_shared<OperationNode>(*te::placeholder(layout.newShape, ph->name, ph->dtype).op());
    marked->attrs[kLayoutRewrittenAttr] = int64_t{1};
    const Operation newPh = marked;
    const Operation newReader = rewriteReads(*ops[size_t(readerIdx)], ph, newPh, layout);
    ops[size_t(phIdx)] = newPh;
    ops[size_t(readerIdx)] = newReader;
    replaceDataFlow(ops, {{ph.get(), newPh}, {before[size_t(readerIdx)].get(), newReader}});
    std::map<const OperationNode*, Operation> newOf;
    for (size_t i = 0; i < ops.size(); ++i) newOf[before[i].get()] = ops[i];
    std::vector<te::Tensor> tensors;
    for (const te::Tensor& t : dag.tensors()) tensors.emplace_back(newOf.at(t.op().get()), t.valueIndex());
    te::ComputeDAG out(std::move(tensors));
    TB_CHECK(out.ops().size() == before.size()) << "layout rewrite changed the stage count";
    for (size_t i = 0; i < before.size(); ++i)
        TB_CHECK(out.ops()[i]->name == before[i]->name) << "layout rewrite changed the stage order at " << i;
    return out;
}

}  // namespace

std::string PlaceholderLayout::origLayout() const { return layoutString(origShape, origAxes); }
std::string PlaceholderLayout::newLayout() const { return layoutString(newShape, newAxes); }

bool hasLayoutFreePlaceholders(const te::ComputeDAG& dag) {
    return std::any_of(dag.ops().begin(), dag.ops().end(),
                       [](const Operation& op) { return op->isCompute() && !op->layoutFreePlaceholders.empty(); });
}

LayoutRewrite rewriteLayout(const te::ComputeDAG& dag, const State& state, LayoutRewriteOption option) {
    TB_USER_CHECK(option != LayoutRewriteOption::InsertTransformStage)
        << "layout rewrite option 1 (InsertTransformStage) is not implemented; use 0 or 2";
    LayoutRewrite out;
    const std::vector<Step>& steps = state.transformSteps();
    if (option == LayoutRewriteOption::NoRewrite || steps.empty() || !hasLayoutFreePlaceholders(dag)) {
        out.dag = dag;
        out.state = state;
        return out;
    }
    te::ComputeDAG cur = dag;
    std::set<const OperationNode*> handled;
    for (size_t sid = 0; sid < state.stages().size(); ++sid) {
        const Operation& op = state.stage(int(sid)).op;
        if (!op->isCompute()) continue;
        for (const Operation& ph : op->layoutFreePlaceholders) {
            // A stage that reads the placeholder through another (a cache_write's copy) is skipped.
            if (handled.count(ph.get()) || !readsDirectly(*op, ph.get())) continue;
            handled.insert(ph.get());
            PlaceholderLayout l;
            l.placeholder = ph->name;
            for (size_t t = 0; t < dag.tensors().size(); ++t)
                if (dag.tensors()[t].op() == ph) l.tensorIndex = int(t);
            TB_CHECK(l.tensorIndex >= 0) << "layout rewrite: placeholder " << ph->name << " is not an io tensor";
            l.origShape = ph->shape;
            l.origAxes = origAxesOf(*op, *ph);
            const std::set<std::string> phAxes(l.origAxes.begin(), l.origAxes.end());
            newLayoutOf(state, int(sid), phAxes, ph->name, &l.newShape, &l.newAxes);
            for (size_t d = 0; d < l.origAxes.size(); ++d)
                TB_USER_CHECK(l.origShape[d] == 1 ||
                              std::find(l.newAxes.begin(), l.newAxes.end(), l.origAxes[d]) != l.newAxes.end())
                    << "layout rewrite: no loop of " << op->name << " iterates over axis " << l.origAxes[d] << " of "
                    << ph->name;
            cur = rewriteDag(cur, ph, l);
            out.layouts.push_back(std::move(l));
        }
    }
    out.dag = cur;
    out.state = out.layouts.empty() ? state : inferBound(replaySteps(cur, steps));
    return out;
}

std::vector<float> transformLayout(const PlaceholderLayout& layout, const std::vector<float>& orig) {
    const size_t nd = layout.origShape.size(), k = layout.newShape.size();
    int64_t origSize = 1, newSize = 1;
    for (int64_t e : layout.origShape) origSize *= e;
    for (int64_t e : layout.newShape) newSize *= e;
    TB_USER_CHECK(int64_t(orig.size()) == origSize) << "layout transform of " << layout.placeholder << ": got "
                                                    << orig.size() << " values for a tensor of " << origSize;
    // Per new dimension: the original dimension it indexes and the weight of its digit there.
    std::vector<size_t> dimOf(k, nd);
    std::vector<int64_t> weight(k, 1);
    std::map<std::string, int64_t> acc;
    for (size_t i = k; i-- > 0;) {
        for (size_t d = 0; d < nd; ++d)
            if (layout.origAxes[d] == layout.newAxes[i]) dimOf[i] = d;
        TB_USER_CHECK(dimOf[i] < nd) << "layout transform of " << layout.placeholder << ": axis " << layout.newAxes[i]
                                     << " is not an axis of the original layout";
        int64_t& a = acc.try_emplace(layout.newAxes[i], 1).first->second;
        weight[i] = a;
        a *= layout.newShape[i];
    }
    std::vector<int64_t> origStride(nd, 1);
    for (size_t d = nd; d-- > 1;) origStride[d - 1] = origStride[d] * layout.origShape[d];
    std::vector<float> out(size_t(newSize), 0.0f);
    std::vector<int64_t> digit(k, 0), index(nd, 0);
    for (int64_t flat = 0; flat < newSize; ++flat) {
        int64_t rest = flat;
        for (size_t i = k; i-- > 0;) {
            digit[i] = rest % layout.newShape[i];
            rest /= layout.newShape[i];
        }
        std::fill(index.begin(), index.end(), 0);
        for (size_t i = 0; i < k; ++i) index[dimOf[i]] += digit[i] * weight[i];
        int64_t src = 0;
        bool inside = true;
        for (size_t d = 0; d < nd; ++d) {
            inside &= index[d] < layout.origShape[d];
            src += index[d] * origStride[d];
        }
        if (inside) out[size_t(flat)] = orig[size_t(src)];
    }
    return out;
}

}  // namespace tb
