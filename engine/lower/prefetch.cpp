// SPDX-License-Identifier: Apache-2.0
#include "engine/lower/prefetch.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "engine/lower/simplify.h"

namespace tb::lower {

namespace {

using te::Expr;

// One read of a weight inside the parallel loop's body, with the loops around it (outermost first,
// P excluded).
struct WeightLoad {
    Expr flat;                            // flat element index
    std::vector<const ForNode*> loops;
};

// Collects the loads of `weights` in the statements under one parallel loop.
class LoadCollector {
public:
    LoadCollector(const std::vector<Buffer>& weights, const std::map<const te::OperationNode*, size_t>& weightOf)
        : m_weights(weights), m_weightOf(weightOf) {}

    std::map<size_t, std::vector<WeightLoad>> loads;  // by index into `weights`
    bool nestedParallel = false;

    void visit(const Stmt& s) {
        if (!s) return;
        switch (s->kind) {
            case StmtKind::For: {
                auto* f = as<ForNode>(s);
                if (f->forKind == ForKind::Parallel) nestedParallel = true;
                m_loops.push_back(f);
                visit(f->body);
                m_loops.pop_back();
                return;
            }
            case StmtKind::Allocate: visit(as<AllocateNode>(s)->body); return;
            case StmtKind::BufferStore: {
                auto* st = as<BufferStoreNode>(s);
                scan(st->value);
                for (auto& i : st->indices) scan(i);
                return;
            }
            case StmtKind::IfThenElse: {
                auto* i = as<IfThenElseNode>(s);
                scan(i->condition);
                visit(i->thenCase);
                visit(i->elseCase);
                return;
            }
            case StmtKind::Seq:
                for (auto& c : as<SeqNode>(s)->seq) visit(c);
                return;
            case StmtKind::Attr: visit(as<AttrNode>(s)->body); return;
            case StmtKind::Barrier: case StmtKind::Prefetch: return;
        }
    }

private:
    void scan(const Expr& e) {
        if (!e) return;
        te::postOrderVisit(e, [&](const Expr& x) {
            auto* ld = x.as<te::LoadNode>();
            if (!ld) return;
            auto it = m_weightOf.find(ld->op.get());
            if (it == m_weightOf.end()) return;
            loads[it->second].push_back({flatIndex(m_weights[it->second], ld->indices), m_loops});
        });
    }

    const std::vector<Buffer>& m_weights;
    const std::map<const te::OperationNode*, size_t>& m_weightOf;
    std::vector<const ForNode*> m_loops;
};

bool constExtent(const ForNode* f, int64_t* ext, int64_t* mn) {
    return te::isConstInt(f->extent, ext) && te::isConstInt(f->min, mn) && *ext >= 1;
}

// The prefetch statements for one weight under parallel loop `p`, and the loop whose body they
// open (nullptr: p's own body). Empty when the weight does not qualify (file comment of prefetch.h).
struct Plan {
    const ForNode* at = nullptr;
    std::vector<Stmt> stmts;
};

// The plan for the block of one iteration of `level` (p itself, or a serial loop of the deepest
// load's nest), or nullopt when that block does not qualify.
std::optional<Plan> planLevel(const ForNode* p, const ForNode* level, const Buffer& w, const std::vector<WeightLoad>& loads,
                              const WeightLoad& deepest, const PrefetchOptions& o) {
    const int64_t eb = w->elementBytes();
    int64_t lvlExt = 0, lvlMin = 0;
    if (!constExtent(level, &lvlExt, &lvlMin) || lvlExt < 2) return std::nullopt;
    int64_t pExt = 0, pMin = 0;
    if (!constExtent(p, &pExt, &pMin)) return std::nullopt;
    // Footprint of one iteration of `level` at its first and second value, the loops above it at
    // their first value, those below over their ranges. Only loads inside `level` count.
    std::optional<IntRange> r0, r1;
    int64_t touchable = 0;
    for (const WeightLoad& ld : loads) {
        const bool inside = level == p || std::find(ld.loops.begin(), ld.loops.end(), level) != ld.loops.end();
        if (!inside) continue;
        Analyzer a;
        int64_t volume = 1;
        bool below = level == p;
        if (level != p) a.bind(p->var, {pMin, pMin});
        for (const ForNode* f : ld.loops) {
            int64_t ext = 0, mn = 0;
            if (!constExtent(f, &ext, &mn)) return std::nullopt;
            if (f == level) {
                below = true;
                continue;
            }
            if (below) {
                a.bindLoop(f->var, mn, ext);
                if (usesVar(ld.flat, f->var)) volume *= ext;
            } else {
                a.bind(f->var, {mn, mn});
            }
        }
        touchable += volume;
        a.bind(level->var, {lvlMin, lvlMin});
        auto b0 = a.bound(ld.flat);
        a.bind(level->var, {lvlMin + 1, lvlMin + 1});
        auto b1 = a.bound(ld.flat);
        if (!b0 || !b1) return std::nullopt;
        r0 = r0 ? IntRange{std::min(r0->min, b0->min), std::max(r0->max, b0->max)} : *b0;
        r1 = r1 ? IntRange{std::min(r1->min, b1->min), std::max(r1->max, b1->max)} : *b1;
    }
    if (!r0 || r0->min == r1->min) return std::nullopt;  // the block does not move with `level`
    const int64_t elems = r0->max - r0->min + 1;
    const int64_t bytes = elems * eb;
    if (bytes < o.minBlockBytes || bytes > o.maxBlockBytes || elems > 2 * touchable) return std::nullopt;
    const int64_t lineElems = std::max<int64_t>(1, o.lineBytes / eb);
    const int64_t lines = (elems + lineElems - 1) / lineElems;

    // The loops of the deepest load's nest below `level` (vectorized ones excluded), and the
    // deepest of them whose iteration count stays within `lines`.
    std::vector<const ForNode*> chain;
    bool below = level == p;
    for (const ForNode* f : deepest.loops) {
        if (f == level) {
            below = true;
            continue;
        }
        if (below && f->forKind != ForKind::Vectorized) chain.push_back(f);
    }
    size_t depth = 0;
    int64_t iters = 1;
    for (size_t k = 0; k < chain.size(); ++k) {
        int64_t ext = 0, mn = 0;
        constExtent(chain[k], &ext, &mn);
        if (iters * ext > lines) break;
        iters *= ext;
        depth = k + 1;
    }
    const int64_t perIter = (lines + iters - 1) / iters;
    if (perIter > o.maxLinesPerIteration) return std::nullopt;

    // counter = the linear index of the iteration of chain[0..depth) (0 .. iters-1).
    Expr counter = te::intImm(0, te::DType::Int64);
    for (size_t k = 0; k < depth; ++k) {
        int64_t ext = 0, mn = 0;
        constExtent(chain[k], &ext, &mn);
        Expr v = te::cast(te::DType::Int64, chain[k]->var);
        if (mn) v = v - te::intImm(mn, te::DType::Int64);
        counter = counter * te::intImm(ext, te::DType::Int64) + v;
    }
    // Start of the next block: the deepest load's index with the loops below `level` at their
    // first iteration and `level` + 1, moved to the footprint's start (the offset of that load's
    // first element in the block, taken with every loop at its first value).
    std::vector<std::pair<te::Var, Expr>> first, allFirst;
    below = level == p;
    for (const ForNode* f : deepest.loops) {
        if (f == level) {
            below = true;
            continue;
        }
        if (below) first.emplace_back(f->var, f->min);
        allFirst.emplace_back(f->var, f->min);
    }
    allFirst.emplace_back(p->var, p->min);
    if (level != p) allFirst.emplace_back(level->var, level->min);
    const std::optional<IntRange> at0 = Analyzer().bound(te::substitute(deepest.flat, allFirst));
    if (!at0 || at0->min != at0->max) return std::nullopt;
    first.emplace_back(level->var, level->var + te::intImm(1));
    Expr nextBase = te::cast(te::DType::Int64, te::substitute(deepest.flat, first));
    nextBase = nextBase + te::intImm(r0->min - at0->min, te::DType::Int64);

    Plan plan;
    plan.at = depth ? chain[depth - 1] : (level == p ? nullptr : level);
    for (int64_t j = 0; j < perIter; ++j) {
        // Not clamped to the block: the last iterations may ask for the first lines of the block
        // after next (a hint, harmless), and each prefetch is one instruction at a constant offset
        // from the iteration's base (a clamp cost a compare and a select per line).
        Expr line = counter * te::intImm(perIter, te::DType::Int64) + te::intImm(j, te::DType::Int64);
        plan.stmts.push_back(makePrefetch(w, simplify(nextBase + line * te::intImm(lineElems, te::DType::Int64))));
    }
    return plan;
}

// The block is the outermost one that qualifies: one iteration of p, else of the serial loops of
// the deepest load's nest, outermost first (a parallel loop with as few iterations as threads
// gives each thread one block of several MB; its inner loops then stream sub-blocks).
std::optional<Plan> planWeight(const ForNode* p, const Buffer& w, const std::vector<WeightLoad>& loads,
                               const PrefetchOptions& o) {
    const WeightLoad* deepest = nullptr;
    for (const WeightLoad& ld : loads)
        if (!deepest || ld.loops.size() > deepest->loops.size()) deepest = &ld;
    if (!deepest) return std::nullopt;
    if (auto plan = planLevel(p, p, w, loads, *deepest, o)) return plan;
    for (const ForNode* f : deepest->loops) {
        if (f->forKind == ForKind::Vectorized) continue;
        if (auto plan = planLevel(p, f, w, loads, *deepest, o)) return plan;
    }
    return std::nullopt;
}

// `s` with `fn` applied to each of its child statements (a loop's, an allocation's, an attribute's
// body; both branches of an if; each statement of a sequence), rebuilt only where a child changed.
template <class Fn>
Stmt mapChildren(const Stmt& s, Fn&& fn) {
    if (!s) return s;
    switch (s->kind) {
        case StmtKind::For: {
            auto* f = as<ForNode>(s);
            Stmt body = fn(f->body);
            return body == f->body ? s : remakeFor(f, f->min, f->extent, f->forKind, body);
        }
        case StmtKind::Allocate: {
            auto* a = as<AllocateNode>(s);
            Stmt body = fn(a->body);
            return body == a->body ? s : makeAllocate(a->buffer, body);
        }
        case StmtKind::IfThenElse: {
            auto* i = as<IfThenElseNode>(s);
            Stmt t = fn(i->thenCase), e = i->elseCase ? fn(i->elseCase) : i->elseCase;
            return t == i->thenCase && e == i->elseCase ? s : makeIf(i->condition, t, e);
        }
        case StmtKind::Seq: {
            std::vector<Stmt> v;
            bool changed = false;
            for (auto& c : as<SeqNode>(s)->seq) {
                v.push_back(fn(c));
                changed = changed || v.back() != c;
            }
            return changed ? std::make_shared<SeqNode>(std::move(v)) : s;
        }
        case StmtKind::Attr: {
            auto* a = as<AttrNode>(s);
            Stmt body = fn(a->body);
            return body == a->body ? s : makeAttr(a->key, a->value, body);
        }
        case StmtKind::BufferStore: case StmtKind::Barrier: case StmtKind::Prefetch: return s;
    }
    return s;
}

// Rebuilds `s` with `insert[loop]` placed at the start of that loop's body.
Stmt place(const Stmt& s, const std::map<const ForNode*, std::vector<Stmt>>& insert) {
    auto* f = as<ForNode>(s);
    auto it = f ? insert.find(f) : insert.end();
    if (it == insert.end()) return mapChildren(s, [&](const Stmt& c) { return place(c, insert); });
    std::vector<Stmt> seq = it->second;
    seq.push_back(place(f->body, insert));
    return remakeFor(f, f->min, f->extent, f->forKind, makeSeq(std::move(seq)));
}

class Inserter {
public:
    Inserter(const std::vector<Buffer>& weights, const PrefetchOptions& o) : m_weights(weights), m_o(o) {
        for (size_t i = 0; i < weights.size(); ++i) m_weightOf[weights[i]->key.get()] = i;
    }
    int inserted = 0;

    Stmt rewrite(const Stmt& s) {
        auto* f = as<ForNode>(s);
        if (f && f->forKind == ForKind::Parallel) return parallel(s, f);
        return mapChildren(s, [&](const Stmt& c) { return rewrite(c); });
    }

private:
    Stmt parallel(const Stmt& s, const ForNode* p) {
        int64_t ext = 0, mn = 0;
        if (!constExtent(p, &ext, &mn) || ext < 2) return s;
        LoadCollector c(m_weights, m_weightOf);
        c.visit(p->body);
        if (c.nestedParallel) return s;
        std::map<const ForNode*, std::vector<Stmt>> insert;
        std::vector<Stmt> atTop;
        for (auto& [wi, loads] : c.loads) {
            auto plan = planWeight(p, m_weights[wi], loads, m_o);
            if (!plan) continue;
            inserted += static_cast<int>(plan->stmts.size());
            auto& dst = plan->at ? insert[plan->at] : atTop;
            dst.insert(dst.end(), plan->stmts.begin(), plan->stmts.end());
        }
        if (insert.empty() && atTop.empty()) return s;
        Stmt body = place(p->body, insert);
        if (!atTop.empty()) {
            atTop.push_back(body);
            body = makeSeq(std::move(atTop));
        }
        return remakeFor(p, p->min, p->extent, p->forKind, body);
    }

    const std::vector<Buffer>& m_weights;
    const PrefetchOptions& m_o;
    std::map<const te::OperationNode*, size_t> m_weightOf;
};

}  // namespace

Stmt insertWeightPrefetch(const Stmt& body, const std::vector<Buffer>& weights, const PrefetchOptions& options,
                          int* inserted) {
    if (inserted) *inserted = 0;
    if (weights.empty() || !body) return body;
    Inserter ins(weights, options);
    Stmt out = ins.rewrite(body);
    if (inserted) *inserted = ins.inserted;
    return out;
}

bool weightPrefetchEnabled() {
    static const bool enabled = [] {
        const char* e = std::getenv("TB_PREFETCH");
        return !(e && std::string(e) == "0");
    }();
    return enabled;
}

}  // namespace tb::lower
