// SPDX-License-Identifier: Apache-2.0
#include "engine/search/default_schedule.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "engine/schedule/transform_step.h"
#include "engine/search/search_utils.h"
#include "engine/support/error.h"

namespace tb::search {

namespace {

using te::Expr;
using te::ExprKind;
using te::Operation;
using te::OperationNode;
using te::VarNode;
using Inlined = std::set<const OperationNode*>;

bool mentions(const Expr& e, const VarNode* v) {
    bool found = false;
    te::postOrderVisit(e, [&](const Expr& x) { found = found || x.get() == v; });
    return found;
}

/// Coefficient of v in e when e is affine in v (other variables are constants), else nullopt.
std::optional<int64_t> coefOf(const Expr& e, const VarNode* v) {
    switch (e.kind()) {
        case ExprKind::IntImm:
        case ExprKind::FloatImm: return 0;
        case ExprKind::Var: return e.get() == v ? 1 : 0;
        case ExprKind::Add:
        case ExprKind::Sub: {
            const auto* b = e.as<te::BinaryNode>();
            auto x = coefOf(b->a, v), y = coefOf(b->b, v);
            if (!x || !y) return std::nullopt;
            return e.kind() == ExprKind::Add ? *x + *y : *x - *y;
        }
        case ExprKind::Mul: {
            const auto* b = e.as<te::BinaryNode>();
            int64_t c = 0;
            if (te::isConstInt(b->a, &c)) {
                auto y = coefOf(b->b, v);
                return y ? std::optional<int64_t>(c * *y) : std::nullopt;
            }
            if (te::isConstInt(b->b, &c)) {
                auto x = coefOf(b->a, v);
                return x ? std::optional<int64_t>(c * *x) : std::nullopt;
            }
            break;
        }
        default: break;
    }
    return mentions(e, v) ? std::nullopt : std::optional<int64_t>(0);
}

enum class Access { Invariant, Contiguous, Gather };

/// How a load moves when v steps by one: by the flat (row-major) offset, so `W[di, dj, c, 0]` of a
/// [3, 3, C, 1] tensor is contiguous in c.
Access classify(const te::LoadNode* ld, const VarNode* v) {
    const auto& shape = ld->op->shape;
    int64_t flat = 0, stride = 1;
    bool moves = false;
    for (size_t k = ld->indices.size(); k-- > 0;) {
        auto c = coefOf(ld->indices[k], v);
        if (!c) return Access::Gather;
        moves |= *c != 0;
        flat += *c * stride;
        stride *= k < shape.size() ? shape[k] : 1;
    }
    if (!moves) return Access::Invariant;
    return flat == 1 ? Access::Contiguous : Access::Gather;
}

/// Every load the compute body of `op` performs once inlined stages are substituted.
void collectLoads(Expr e, const Inlined& inlined, std::vector<Expr>& keep, std::vector<const te::LoadNode*>& out,
                  int depth) {  // e by value: `keep` grows (reallocates) while e is visited
    TB_CHECK(depth < 64) << "inline chain too deep";
    te::postOrderVisit(e, [&](const Expr& x) {
        const auto* ld = x.as<te::LoadNode>();
        if (!ld) return;
        if (!inlined.count(ld->op.get())) {
            out.push_back(ld);
            return;
        }
        std::vector<std::pair<te::Var, Expr>> map;
        for (size_t i = 0; i < ld->op->axis.size(); ++i) map.emplace_back(ld->op->axis[i].var, ld->indices[i]);
        Expr sub = te::substitute(ld->op->body.at(0), map);
        keep.push_back(sub);  // keeps the loads found in it alive
        collectLoads(sub, inlined, keep, out, depth + 1);
    });
}

/// True when no load of op's body (inlined stages expanded) is a gather along `var`. Loads of the
/// operations in `relaid` (placeholders whose layout the caller rewrites into loop order) count as
/// contiguous.
bool vectorizableAlong(const Operation& op, const te::Var& var, const Inlined& inlined, const Inlined& relaid = {}) {
    std::vector<Expr> keep;
    std::vector<const te::LoadNode*> loads;
    collectLoads(op->body.at(0), inlined, keep, loads, 0);
    for (const auto* ld : loads)
        if (!relaid.count(ld->op.get()) && classify(ld, var.node()) == Access::Gather) return false;
    return true;
}

/// Vector length for an axis of `ext` elements (a divisor, or the whole axis), 0 for none.
int64_t vectorFactor(int64_t ext, int lanes) {
    if (ext % lanes == 0) return lanes;
    if (ext < lanes && ext >= 4) return ext;
    for (int64_t f : {8, 4})
        if (f < lanes && ext % f == 0) return f;
    return 0;
}

/// Vector length for an axis of `ext` elements that no lane count divides (42 or 18 channels):
/// the vector width (`lanes` or 8) that wastes the fewest lanes in the last, partial vector, whose
/// loads and stores the guard of the non-dividing split masks (codegen_llvm). 0 below 8 elements.
int64_t maskedVectorFactor(int64_t ext, int lanes) {
    if (const int64_t f = vectorFactor(ext, lanes); f > 0) return f;
    if (ext < 8) return 0;
    auto padded = [&](int64_t f) { return (ext + f - 1) / f * f; };
    if (ext >= lanes && 4 * (padded(lanes) - ext) <= padded(lanes)) return lanes;  // at most a quarter idle
    return ext >= lanes && padded(lanes) <= padded(8) ? lanes : 8;
}

int64_t workOf(const Operation& op) {
    int64_t w = 1;
    for (const auto& a : op->axis) w *= a.extent;
    for (const auto& a : op->reduceAxis) w *= a.extent;
    return w;
}

class Scheduler {
public:
    Scheduler(const te::ComputeDAG& dag, const DefaultScheduleOptions& o) : m_dag(dag), m_o(o), m_state(dag) {}

    bool readsRewrittenLayout() const { return m_readsRewrittenLayout; }

    State run() {
        const auto& ops = m_dag.ops();
        const int n = int(ops.size());
        // 1. Inlining, consumers first so a stage knows whether its readers are inlined.
        for (int s = n - 1; s >= 0; --s) {
            const Operation& op = ops[size_t(s)];
            if (!op->isCompute() || !op->reduceAxis.empty() || m_dag.access(op).isOutput) continue;
            bool readByReduction = false;
            for (const Operation& c : effectiveConsumers(op)) readByReduction |= !c->reduceAxis.empty();
            if (m_dag.access(op).isStrictlyInlineable || !readByReduction) {
                search::computeInline(&m_state, m_dag, s);
                m_inlined.insert(op.get());
            }
        }
        // 2-4. Root stages in stage order. Cache-write and rfactor insert a stage before the one
        // they apply to; `shift` counts the insertions so far (all before the current stage), so
        // original stage i is state stage i + shift.
        std::set<int> handled;
        int shift = 0;
        for (int i = 0; i < n; ++i) {
            const Operation& op = ops[size_t(i)];
            if (!op->isCompute() || m_inlined.count(op.get()) || handled.count(i)) continue;
            const int s = i + shift;
            if (!op->reduceAxis.empty()) {
                int inserted = 0;
                if (m_o.registerTiling && tryConstUnrollTiling(op, s, &inserted)) {
                    shift += inserted;
                    continue;
                }
                if (m_o.registerTiling && tryRegisterTiling(op, s, shift, &inserted, handled)) {
                    shift += inserted;
                    continue;
                }
                if (m_o.registerTiling && tryInnerLaneAxis(op, s, shift, &inserted, handled)) {
                    shift += inserted;
                    continue;
                }
                if (m_o.rfactor && tryRfactor(op, s, &inserted)) {
                    shift += inserted;
                    continue;
                }
            }
            scheduleGeneric(op, s);
        }
        return m_state;
    }

private:
    /// Readers of op, looking through inlined stages.
    std::vector<Operation> effectiveConsumers(const Operation& op) const {
        std::vector<Operation> out;
        for (const Operation& c : m_dag.consumers(op)) {
            if (m_inlined.count(c.get())) {
                for (const Operation& cc : effectiveConsumers(c)) out.push_back(cc);
            } else {
                out.push_back(c);
            }
        }
        return out;
    }

    int dagIndex(const Operation& op) const {
        const auto& ops = m_dag.ops();
        for (size_t i = 0; i < ops.size(); ++i)
            if (ops[i] == op) return int(i);
        return -1;
    }

    /// Step 4 on state stage s, which computes the DAG's `op` (analysis uses the DAG's op: a stage
    /// rebuilt by an earlier rfactor/cache-write computes the same values).
    void scheduleGeneric(const Operation& op, int s) {
        const int nS = int(op->axis.size()), nR = int(op->reduceAxis.size());
        if (nS == 0) return;
        if (nR == 0 && trailingUnitLanes(op, s)) return;
        const int64_t ext = op->axis[size_t(nS - 1)].extent;
        const int64_t f = vectorizableAlong(op, op->axis[size_t(nS - 1)].var, m_inlined) ? maskedVectorFactor(ext, m_o.vectorLanes) : 0;
        int vecIdx = -1, numOuter = nS;
        if (f > 0 && f < ext) {
            search::split(&m_state, m_dag, s, nS - 1, {f});
            if (nR > 0) {
                std::vector<int> order;
                for (int i = 0; i < nS; ++i) order.push_back(i);
                for (int i = 0; i < nR; ++i) order.push_back(nS + 1 + i);
                order.push_back(nS);
                search::reorder(&m_state, m_dag, s, order);
            }
            vecIdx = nS + nR;
        } else if (f == ext && f > 0) {
            if (nR > 0) {
                std::vector<int> order;
                for (int i = 0; i < nS - 1; ++i) order.push_back(i);
                for (int i = 0; i < nR; ++i) order.push_back(nS + i);
                order.push_back(nS - 1);
                search::reorder(&m_state, m_dag, s, order);
            }
            vecIdx = nS + nR - 1;
            numOuter = nS - 1;
        }
        parallelizeOuter(s, numOuter, workOf(op), &vecIdx);
        if (vecIdx >= 0) search::annotate(&m_state, m_dag, s, vecIdx, IteratorAnnotation::Vectorize);
    }

    /// Step 4 for an injective stage whose last axes have one element (an NCHWc packing with one
    /// channel per block, `data_vec[n, c, h, w, 0]`): the axis before them carries the lanes, its
    /// stores contiguous; loads that are gathers along it (a dilated input's `floordiv(w - 1, 2)`)
    /// become masked vector gathers, which still beat one scalar iteration per element with its
    /// index arithmetic (the transposed conv of PP-OCR det: 10M elements). False when it does not
    /// apply (state untouched).
    bool trailingUnitLanes(const Operation& op, int s) {
        const int nS = int(op->axis.size());
        int a = nS - 1;
        while (a >= 0 && op->axis[size_t(a)].extent == 1) --a;
        if (a == nS - 1 || a < 0) return false;
        const int64_t ext = op->axis[size_t(a)].extent;
        const int64_t f = maskedVectorFactor(ext, m_o.vectorLanes);
        if (f == 0) return false;
        State backup = m_state;
        try {
            // [outer.., a, units..] -> [outer.., a.0, units.., a.1]
            int vecIdx = a;
            if (f < ext) {
                search::split(&m_state, m_dag, s, a, {f});
                std::vector<int> order;
                for (int i = 0; i <= a; ++i) order.push_back(i);
                for (int i = a + 2; i < nS + 1; ++i) order.push_back(i);
                order.push_back(a + 1);
                search::reorder(&m_state, m_dag, s, order);
                vecIdx = nS;
            } else {
                std::vector<int> order;
                for (int i = 0; i < nS; ++i)
                    if (i != a) order.push_back(i);
                order.push_back(a);
                search::reorder(&m_state, m_dag, s, order);
                vecIdx = nS - 1;
            }
            parallelizeOuter(s, a, workOf(op), &vecIdx);
            search::annotate(&m_state, m_dag, s, vecIdx, IteratorAnnotation::Vectorize);
        } catch (const std::exception&) {
            m_state = backup;
            return false;
        }
        return true;
    }

    /// Fuses loops [0, count) of stage s and marks the result parallel when the stage is big enough.
    /// Marks the outer loops [0, count) of stage s parallel when the stage is big enough: the
    /// shortest prefix of them whose extents multiply to `parallelGoal` is fused into one loop
    /// (fusing more only adds index divisions).
    void parallelizeOuter(int s, int count, int64_t work, int* laterIdx) {
        if (count < 1 || work < m_o.parallelMinWork) return;
        int m = 0;
        int64_t product = 1;
        while (m < count && product < m_o.parallelGoal) {
            const int64_t e = search::extentOf(m_state.stage(s).iters[size_t(m)]);
            product *= e > 0 ? e : m_o.parallelGoal;
            ++m;
        }
        if (m >= 2) {
            std::vector<int> ids;
            for (int i = 0; i < m; ++i) ids.push_back(i);
            search::fuse(&m_state, m_dag, s, ids);
            if (laterIdx && *laterIdx >= 0) *laterIdx -= m - 1;
        }
        const int64_t e = search::extentOf(m_state.stage(s).iters[0]);
        if (e < 0 || e >= 2) search::annotate(&m_state, m_dag, s, 0, IteratorAnnotation::Parallel);
    }

    /// Step 2 for a reduction with constant-matrix operands (winograd's data_pack and inverse: the
    /// op lists the axes that index its const matrices in `auto_scheduler_simplify_const_tensor_
    /// indices`). Those axes are unrolled so the matrices' select chains fold to constants, inside
    /// a cache-write copy's `[outer.., v.0]` tile: `[outer.., v.0 | const.. (unrolled), v.1]`
    /// (TVM's sketch rule SimplifyComputeWithConstTensor, with the lanes innermost).
    bool tryConstUnrollTiling(const Operation& op, int s, int* inserted) {
        const te::AttrValue* a = op->attr(te::attr::kSimplifyConstTensorIndices);
        const auto* names = a ? std::get_if<std::vector<std::string>>(a) : nullptr;
        if (!names || names->empty()) return false;
        const std::set<std::string> constNames(names->begin(), names->end());
        const int nS = int(op->axis.size()), nR = int(op->reduceAxis.size());
        if (nS < 2) return false;
        for (const auto& r : op->reduceAxis)
            if (!constNames.count(r.name())) return false;
        const auto& v = op->axis.back();
        if (constNames.count(v.name()) || !vectorizableAlong(op, v.var, m_inlined)) return false;
        const int64_t f = vectorFactor(v.extent, m_o.vectorLanes);
        if (f == 0 || v.extent % f != 0) return false;
        std::vector<int> outer, constSpatial;  // op axis indices, v excluded
        for (int i = 0; i + 1 < nS; ++i) (constNames.count(op->axis[size_t(i)].name()) ? constSpatial : outer).push_back(i);
        State backup = m_state;
        try {
            search::cacheWrite(&m_state, m_dag, s, "local");
            *inserted = 1;
            const int r = s, o = s + 1;
            // Both stages after splitting v: [S.., v.0 (nS-1), v.1 (nS), R.. (nS+1..)].
            search::split(&m_state, m_dag, r, nS - 1, {f});
            search::split(&m_state, m_dag, o, nS - 1, {f});
            std::vector<int> order;
            for (int i : outer) order.push_back(i);
            order.push_back(nS - 1);
            for (int i : constSpatial) order.push_back(i);
            for (int i = 0; i < nR; ++i) order.push_back(nS + 1 + i);
            order.push_back(nS);
            search::reorder(&m_state, m_dag, r, order);
            const int numOuter = int(outer.size()) + 1;  // .. v.0
            for (int i = numOuter; i < numOuter + int(constSpatial.size()) + nR; ++i)
                search::annotate(&m_state, m_dag, r, i, IteratorAnnotation::Unroll);
            search::annotate(&m_state, m_dag, r, int(order.size()) - 1, IteratorAnnotation::Vectorize);
            order.clear();
            for (int i : outer) order.push_back(i);
            order.push_back(nS - 1);
            for (int i : constSpatial) order.push_back(i);
            order.push_back(nS);
            search::reorder(&m_state, m_dag, o, order);
            search::computeAt(&m_state, m_dag, r, o, numOuter - 1);
            int vecIdx = nS;
            parallelizeOuter(o, numOuter, workOf(op), &vecIdx);
            for (int i = vecIdx - int(constSpatial.size()); i < vecIdx; ++i)
                search::annotate(&m_state, m_dag, o, i, IteratorAnnotation::Unroll);
            search::annotate(&m_state, m_dag, o, vecIdx, IteratorAnnotation::Vectorize);
        } catch (const std::exception&) {
            m_state = backup;
            *inserted = 0;
            return false;
        }
        return true;
    }

    /// True when the inputs that do not move with the `rows` axes (weights, read again for every
    /// row) are much larger than the ones that do (activations).
    bool weightHeavy(const Operation& op, const std::vector<int>& rows) const {
        std::vector<Expr> keep;
        std::vector<const te::LoadNode*> loads;
        collectLoads(op->body.at(0), m_inlined, keep, loads, 0);
        std::map<const OperationNode*, bool> movesWithRows;
        for (const auto* ld : loads) {
            bool moves = false;
            for (int a : rows)
                for (const auto& idx : ld->indices) moves = moves || mentions(idx, op->axis[size_t(a)].var.node());
            movesWithRows[ld->op.get()] = movesWithRows[ld->op.get()] || moves;
        }
        int64_t weights = 0, data = 0;
        for (const auto& [producer, moves] : movesWithRows) {
            int64_t n = 1;
            for (int64_t d : producer->shape) n *= d;
            (moves ? data : weights) += n;
        }
        return weights > 8 * data;  // at 2.6x (mobilenet's 14x14x512 pointwise) rows-outer measured faster
    }

    /// Step 2 for the reduction at stage s. Returns false (state untouched) when it does not apply.
    /// `va` / `ra`: the op axes that become the vector lanes and the unrolled rows of the tile
    /// (default: the last and second-to-last). `forceCacheWrite`: op is a stage the DAG does not
    /// know (an rfactor stage): skip the reader analysis and tile a cache-write copy.
    bool tryRegisterTiling(const Operation& op, int s, int shift, int* inserted, std::set<int>& handled,
                           bool forceCacheWrite = false, int va = -1, int ra = -1) {
        const int nS = int(op->axis.size());
        if (nS < 2) return false;
        if (va < 0) va = nS - 1;
        if (ra < 0) ra = nS - 2;
        const auto& v = op->axis[size_t(va)];
        const auto& w = op->axis[size_t(ra)];
        bool relaid = false;
        if (!vectorizableAlong(op, v.var, m_inlined)) {
            // Dense's W[j, k] along j: contiguous once rewritten into the tile's loop order, worth it
            // when the tile has rows to reuse each weight vector in (below 4, step 3's rfactor).
            if (!m_o.layoutFreeContiguous || w.extent < 4 || op->layoutFreePlaceholders.empty()) return false;
            Inlined free;
            for (const auto& p : op->layoutFreePlaceholders) free.insert(p.get());
            if (!vectorizableAlong(op, v.var, m_inlined, free)) return false;
            relaid = true;
        }
        const int64_t f = maskedVectorFactor(v.extent, m_o.vectorLanes);
        if (f == 0) return false;
        int64_t tw = 1;
        for (int64_t d = std::min<int64_t>(m_o.maxTileRows, w.extent); d >= 1; --d)
            if (w.extent % d == 0) {
                tw = d;
                break;
            }
        // Vectors narrower than the target's (8 lanes of a 24-channel conv) leave the FMA units half
        // fed by one column of rows x lanes accumulators: take up to 4 columns of them, at most 24
        // accumulators in all (PP-OCR det's 24-channel 3x3 convs: 68% -> see the bench).
        int64_t vc = 1;
        if (f < m_o.vectorLanes && v.extent % f == 0)
            for (int64_t c = std::min<int64_t>(4, v.extent / f); c >= 2; --c)
                if ((v.extent / f) % c == 0 && tw * c <= 24) {
                    vc = c;
                    break;
                }
        // Full-width vectors on a core that issues two of them per cycle: one column of rows x 1
        // accumulators needs rows broadcasts per rows FMAs, more loads than two load ports serve;
        // two columns halve that (mobilenet's pointwise convs: see the README).
        if (vc == 1 && f == m_o.vectorLanes && m_o.fmaLanes >= f && tw >= 2 && v.extent % (2 * f) == 0 && tw * 2 <= 24) vc = 2;
        // The reader that receives the tile: the single element-wise consumer (conv + bias + relu),
        // else a cache-write copy (an output reduction, winograd's transforms and batch gemm).
        int r = s, o = -1, consumerIndex = -1;
        bool useCacheWrite = true;
        if (!forceCacheWrite && !m_dag.access(op).isOutput) {
            auto consumers = effectiveConsumers(op);
            std::set<const OperationNode*> uniq;
            for (const auto& c : consumers) uniq.insert(c.get());
            const Operation c = consumers.empty() ? Operation() : consumers.front();
            if (uniq.size() == 1 && c->reduceAxis.empty() && c->axis.size() == op->axis.size() &&
                m_dag.elementWiseMatch(op, c) && dagIndex(c) > dagIndex(op)) {
                consumerIndex = dagIndex(c);
                o = consumerIndex + shift;
                useCacheWrite = false;
            }
        }
        State backup = m_state;
        try {
            if (useCacheWrite) {
                search::cacheWrite(&m_state, m_dag, s, "local");
                r = s;      // the .local stage computes the reduction
                o = s + 1;  // the original stage now copies it
                *inserted = 1;
            }
            // Loops are found by name: splits renumber them ("x" -> "x.0", "x.1").
            auto names = [&](int st, int from, int to) {
                std::vector<std::string> n;
                for (int i = from; i < to; ++i) n.push_back(m_state.stage(st).iters[size_t(i)].name);
                return n;
            };
            auto index = [&](int st, const std::string& name) {
                const int i = search::iterIndex(m_state.stage(st), name);
                TB_CHECK(i >= 0) << "no loop " << name;
                return i;
            };
            auto reorderByName = [&](int st, const std::vector<std::string>& order) {
                std::vector<int> ids;
                for (const auto& n : order) ids.push_back(index(st, n));
                search::reorder(&m_state, m_dag, st, ids);
            };
            const std::vector<std::string> rAx = names(r, 0, nS), oAx = names(o, 0, nS);
            const std::vector<std::string> rRed = names(r, nS, int(m_state.stage(r).iters.size()));
            for (int st : {r, o}) {
                const auto& ax = st == r ? rAx : oAx;
                if (vc > 1)
                    search::split(&m_state, m_dag, st, index(st, ax[size_t(va)]), {vc, f});
                else
                    search::split(&m_state, m_dag, st, index(st, ax[size_t(va)]), {f});
                search::split(&m_state, m_dag, st, index(st, ax[size_t(ra)]), {tw});
            }
            // The lanes' loops, innermost last: [v.1] or [v.1 (vc columns, unrolled), v.2 (lanes)].
            auto laneLoops = [&](const std::vector<std::string>& ax) {
                std::vector<std::string> l{ax[size_t(va)] + ".1"};
                if (vc > 1) l.push_back(ax[size_t(va)] + ".2");
                return l;
            };
            // When the weights far outweigh the data (late 1x1 convolutions, dense), v.0 goes
            // outermost, so each weight slice is streamed once (see the reader below).
            std::vector<int> rows;
            for (int i = 0; i < nS; ++i)
                if (i != va) rows.push_back(i);
            const bool vOuter = weightHeavy(op, rows);
            // Reduction: [others.., w.0, v.0, R.., w.1, v.1], or [v.0, others.., w.0, R.., w.1, v.1]:
            // its outer loops in the reader's order, which the layout rewrite relies on (it names
            // the attach target's loops after the stage's own loops at the same positions).
            std::vector<std::string> order;
            if (vOuter) order.push_back(rAx[size_t(va)] + ".0");
            for (int i = 0; i < nS; ++i)
                if (i != va && i != ra) order.push_back(rAx[size_t(i)]);
            order.push_back(rAx[size_t(ra)] + ".0");
            if (!vOuter) order.push_back(rAx[size_t(va)] + ".0");
            order.insert(order.end(), rRed.begin(), rRed.end());
            order.push_back(rAx[size_t(ra)] + ".1");
            for (const auto& l : laneLoops(rAx)) order.push_back(l);
            reorderByName(r, order);
            if (tw > 1) search::annotate(&m_state, m_dag, r, index(r, rAx[size_t(ra)] + ".1"), IteratorAnnotation::Unroll);
            if (vc > 1) search::annotate(&m_state, m_dag, r, index(r, rAx[size_t(va)] + ".1"), IteratorAnnotation::Unroll);
            search::annotate(&m_state, m_dag, r, index(r, laneLoops(rAx).back()), IteratorAnnotation::Vectorize);
            // Reader: [others.., w.0, v.0, w.1, v.1], the reduction computed at v.0; when the weights
            // far outweigh the data (late 1x1 convolutions), v.0 goes outermost instead,
            // [v.0, others.., w.0, w.1, v.1], so each weight slice is streamed once.
            order.clear();
            if (vOuter) order.push_back(oAx[size_t(va)] + ".0");
            for (int i = 0; i < nS; ++i)
                if (i != va && i != ra) order.push_back(oAx[size_t(i)]);
            order.push_back(oAx[size_t(ra)] + ".0");
            if (!vOuter) order.push_back(oAx[size_t(va)] + ".0");
            order.push_back(oAx[size_t(ra)] + ".1");
            for (const auto& l : laneLoops(oAx)) order.push_back(l);
            reorderByName(o, order);
            search::computeAt(&m_state, m_dag, r, o, nS - 1);  // the last of the nS outer loops
            int vecIdx = vc > 1 ? nS + 2 : nS + 1;
            parallelizeOuter(o, nS, workOf(op), &vecIdx);
            // The reader's lanes are contiguous only when v is its last axis.
            const Operation oop = m_state.stage(o).op;
            if (va == nS - 1 && vectorizableAlong(oop, oop->axis.back().var, m_inlined))
                search::annotate(&m_state, m_dag, o, vecIdx, IteratorAnnotation::Vectorize);
        } catch (const std::exception&) {
            m_state = backup;
            *inserted = 0;
            return false;
        }
        if (consumerIndex >= 0) handled.insert(consumerIndex);
        m_readsRewrittenLayout = m_readsRewrittenLayout || relaid;
        return true;
    }

    /// Step 2 when the last output axis cannot carry the lanes (an NCHWc conv with one output
    /// channel per block, as a transposed conv to one channel gets: [n, occ, oh, ow, ocb = 1]): the
    /// innermost axis of at least 8 elements along which every load is contiguous or invariant
    /// carries them, and the axis before it (of more than one element) the tile's rows.
    bool tryInnerLaneAxis(const Operation& op, int s, int shift, int* inserted, std::set<int>& handled) {
        const int nS = int(op->axis.size());
        for (int va = nS - 2; va >= 1; --va) {
            if (op->axis[size_t(va)].extent < 8 || !vectorizableAlong(op, op->axis[size_t(va)].var, m_inlined)) continue;
            int ra = va - 1;
            while (ra > 0 && op->axis[size_t(ra)].extent < 2) --ra;
            return tryRegisterTiling(op, s, shift, inserted, handled, false, va, ra);
        }
        return false;
    }

    /// Step 3 for the reduction at stage s.
    bool tryRfactor(const Operation& op, int s, int* inserted) {
        const int nS = int(op->axis.size()), nR = int(op->reduceAxis.size());
        if (nS == 0 || nR == 0) return false;
        if (vectorizableAlong(op, op->axis.back().var, m_inlined)) return false;  // step 4 vectorizes it
        const auto& k = op->reduceAxis.back();
        // The lanes need not divide k (softmax's 6625 classes): the rf stage's last vector is masked.
        const int64_t kf = maskedVectorFactor(k.extent, m_o.vectorLanes);
        if (kf == 0 || k.extent < 2 * kf) return false;
        if (!vectorizableAlong(op, k.var, m_inlined)) return false;
        State backup = m_state;
        try {
            const int kIdx = nS + nR - 1;
            search::split(&m_state, m_dag, s, kIdx, {kf});
            // rf[S.., kv] = sum over R.., k.0 (the lanes kv last, contiguous in rf's tile).
            search::rfactor(&m_state, m_dag, s, kIdx + 1, nS);
            *inserted = 1;
            const int rf = s, repl = s + 1;  // the .rf stage is inserted before the op
            // rf loops [S.., kv, R.., k.0] and repl loops [S.., kv_v]: S_last split into row tiles
            // of tr; rf computed at repl's S_last.0, so a [tr x lanes] tile of partial sums lives in
            // registers (a Local buffer) and repl sums its rows right there, instead of a global
            // rf buffer `lanes` times the size of the output.
            const int64_t last = op->axis.back().extent;
            int64_t tr = 1;
            for (int64_t d = std::min<int64_t>(m_o.maxTileRows, last); d >= 1; --d)
                if (last % d == 0) {
                    tr = d;
                    break;
                }
            search::split(&m_state, m_dag, rf, nS - 1, {tr});  // [S.., s.0, s.1, kv, R.., k.0]
            std::vector<int> order;
            for (int i = 0; i < nS; ++i) order.push_back(i);  // .., s.0
            const int cnt = int(m_state.stage(rf).iters.size());
            for (int i = nS + 2; i < cnt; ++i) order.push_back(i);  // R.., k.0
            order.push_back(nS);                                   // s.1
            order.push_back(nS + 1);                               // kv
            search::reorder(&m_state, m_dag, rf, order);
            if (tr > 1) search::annotate(&m_state, m_dag, rf, cnt - 2, IteratorAnnotation::Unroll);
            search::annotate(&m_state, m_dag, rf, cnt - 1, IteratorAnnotation::Vectorize);
            search::split(&m_state, m_dag, repl, nS - 1, {tr});  // [S.., s.0, s.1, kv_v]
            if (nS >= 2 && weightHeavy(op, {nS - 2})) {
                // Weights reused across S_{-2} (winograd's tiles p): s.0 outside it, so a row tile of
                // weights stays in L1 while S_{-2} runs: [.., s.0, S_{-2}, s.1, kv_v].
                std::vector<int> o2;
                for (int i = 0; i < nS - 2; ++i) o2.push_back(i);
                o2.push_back(nS - 1);
                o2.push_back(nS - 2);
                o2.push_back(nS);
                o2.push_back(nS + 1);
                search::reorder(&m_state, m_dag, repl, o2);
            }
            search::computeAt(&m_state, m_dag, rf, repl, nS - 1);
            search::annotate(&m_state, m_dag, repl, nS + 1, IteratorAnnotation::Unroll);
            parallelizeOuter(repl, nS, workOf(op), nullptr);
        } catch (const std::exception&) {
            m_state = backup;
            *inserted = 0;
            return false;
        }
        return true;
    }

    const te::ComputeDAG& m_dag;
    DefaultScheduleOptions m_o;
    State m_state;
    Inlined m_inlined;
    bool m_readsRewrittenLayout = false;
};

}  // namespace

State defaultSchedule(const te::ComputeDAG& dag, const DefaultScheduleOptions& options, bool* readsRewrittenLayout) {
    Scheduler scheduler(dag, options);
    State s = scheduler.run();
    if (readsRewrittenLayout) *readsRewrittenLayout = scheduler.readsRewrittenLayout();
    return s;
}

}  // namespace tb::search
