// SPDX-License-Identifier: Apache-2.0
#include "engine/lower/lower_gpu.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "engine/lower/lower_state.h"
#include "engine/lower/simplify.h"
#include "engine/support/error.h"

namespace tb::lower {

ThreadAxis threadAxisOf(const std::string& tag) {
    auto dimOf = [](char c) { return c == 'x' ? 0 : c == 'y' ? 1 : c == 'z' ? 2 : -1; };
    if (tag.size() == 10 && tag.compare(0, 9, "blockIdx.") == 0) return {true, dimOf(tag[9])};
    if (tag.size() == 11 && tag.compare(0, 10, "threadIdx.") == 0) return {false, dimOf(tag[10])};
    return {};
}

std::vector<Buffer> GpuLoweredFunc::buffers() const {
    std::vector<Buffer> all = args;
    all.insert(all.end(), workspaces.begin(), workspaces.end());
    return all;
}

std::string GpuLoweredFunc::print() const {
    std::ostringstream os;
    const auto all = buffers();
    for (const GpuKernel& k : kernels) {
        os << "// kernel " << k.name << "<<<(" << k.grid[0] << ", " << k.grid[1] << ", " << k.grid[2] << "), ("
           << k.block[0] << ", " << k.block[1] << ", " << k.block[2] << ")>>>(";
        for (size_t i = 0; i < k.params.size(); ++i) os << (i ? ", " : "") << all[size_t(k.params[i])]->name;
        os << ")\n" << toString(k.body, 0);
    }
    return os.str();
}

namespace {

// ---- barrier planning (TVM ThreadSync "shared") -------------------------------------------------

using BufSet = std::set<const te::OperationNode*>;  // Shared buffers, by key

struct SharedAccess {
    BufSet reads, writes;
    bool empty() const { return reads.empty() && writes.empty(); }
    void add(const SharedAccess& o) {
        reads.insert(o.reads.begin(), o.reads.end());
        writes.insert(o.writes.begin(), o.writes.end());
    }
};

bool intersects(const BufSet& a, const BufSet& b) {
    return std::any_of(a.begin(), a.end(), [&](const te::OperationNode* x) { return b.count(x) != 0; });
}

class BarrierPlanner {
public:
    // `root`: s is on the kernel's outer chain of block / vthread / thread loops.
    Stmt plan(const Stmt& s, SharedAccess& pending, bool root) {
        if (!s) return s;
        switch (s->kind) {
            case StmtKind::Seq: {
                std::vector<Stmt> out;
                for (const Stmt& c : as<SeqNode>(s)->seq) out.push_back(plan(c, pending, false));
                return makeSeq(std::move(out));
            }
            case StmtKind::Allocate: {
                auto* a = as<AllocateNode>(s);
                if (a->buffer->scope == BufferScope::Shared) m_shared.insert(a->buffer->key.get());
                return makeAllocate(a->buffer, plan(a->body, pending, false));
            }
            case StmtKind::Attr: {
                auto* a = as<AttrNode>(s);
                return makeAttr(a->key, a->value, plan(a->body, pending, root));
            }
            case StmtKind::For: {
                auto* f = as<ForNode>(s);
                if (f->forKind == ForKind::Vectorized) return unit(s, pending);
                const bool bound = f->forKind == ForKind::ThreadBinding;
                if (bound && threadAxisOf(f->threadTag).dim >= 0) {
                    // The kernel's own block / thread loops are every thread at once (not a
                    // sequence); a stage's nested thread loop (a cooperative fetch, maybe guarded)
                    // is one unit, so its barrier goes before it, outside any guard.
                    if (!root) return unit(s, pending);
                    return remakeFor(f, f->min, f->extent, f->forKind, plan(f->body, pending, true));
                }
                // A serial loop (vthread too, see the header). One that does not both read and
                // write a shared buffer needs no barrier inside: one unit (its barrier goes before
                // the loop, not into every iteration). Otherwise it is walked twice: the second
                // pass sees what the end of the body leaves for its next iteration.
                const bool inner = root && bound;
                const SharedAccess acc = accessOf(f->body);
                if (acc.empty()) return s;
                if (!intersects(acc.reads, acc.writes)) return unit(s, pending);
                SharedAccess first = pending;
                plan(f->body, first, inner);
                SharedAccess carried = pending;
                carried.add(first);
                Stmt body = plan(f->body, carried, inner);
                pending.add(carried);
                return remakeFor(f, f->min, f->extent, f->forKind, body);
            }
            case StmtKind::BufferStore: case StmtKind::IfThenElse: return unit(s, pending);
            case StmtKind::Barrier:
                pending = SharedAccess{};
                return s;
            case StmtKind::Prefetch: return s;
        }
        return s;
    }

private:
    Stmt unit(const Stmt& s, SharedAccess& pending) {
        SharedAccess acc = accessOf(s);
        if (acc.empty()) return s;
        const bool conflict = intersects(acc.reads, pending.writes) || intersects(acc.writes, pending.reads);
        if (!conflict) {
            pending.add(acc);
            return s;
        }
        pending = acc;
        return makeSeq({makeBarrier(), s});
    }

    void exprAccess(const te::Expr& e, SharedAccess& acc) const {
        if (!e) return;
        te::postOrderVisit(e, [&](const te::Expr& x) {
            if (x.kind() != te::ExprKind::Load) return;
            auto* l = x.as<te::LoadNode>();
            if (m_shared.count(l->op.get())) acc.reads.insert(l->op.get());
        });
    }

    // Shared buffers read / written anywhere in s (identified by their key).
    SharedAccess accessOf(const Stmt& s) {
        SharedAccess acc;
        preOrderVisit(s, [&](const Stmt& x) {
            switch (x->kind) {
                case StmtKind::Allocate: {
                    auto* a = as<AllocateNode>(x);
                    if (a->buffer->scope == BufferScope::Shared) m_shared.insert(a->buffer->key.get());
                    break;
                }
                case StmtKind::BufferStore: {
                    auto* st = as<BufferStoreNode>(x);
                    if (m_shared.count(st->buffer->key.get()))
                        acc.writes.insert(st->buffer->key.get());
                    for (const auto& i : st->indices) exprAccess(i, acc);
                    exprAccess(st->value, acc);
                    break;
                }
                case StmtKind::IfThenElse: exprAccess(as<IfThenElseNode>(x)->condition, acc); break;
                case StmtKind::For: {
                    auto* f = as<ForNode>(x);
                    exprAccess(f->min, acc);
                    exprAccess(f->extent, acc);
                    break;
                }
                default: break;
            }
        });
        return acc;
    }

    std::set<const te::OperationNode*> m_shared;  // keys of the Shared buffers seen
};

// ---- virtual threads (TVM InjectVirtualThread) -------------------------------------------------------

// Rewrites the body of a vthread loop `for vt in [0, n)` so that it runs once per thread: every Local
// buffer allocated inside gets one copy per virtual thread (a leading dimension of n indexed by vt),
// then the vt loop is pushed down the statement tree: a statement that does not mention vt runs
// once (a shared fetch, whose region covers every virtual thread), loops and guards that do not
// depend on vt keep their place with vt pushed into their bodies, and a store that mentions vt
// becomes n copies with vt = 0 .. n-1 (vectorized loops, vt-dependent guards or bounds and nested
// thread loops get a serial loop over vt around them instead).
class VThreadInjector {
public:
    VThreadInjector(te::Var vt, int64_t n) : m_vt(std::move(vt)), m_n(n) {}

    Stmt run(const Stmt& body) {
        preOrderVisit(body, [&](const Stmt& x) {
            if (x->kind != StmtKind::Allocate) return;
            const Buffer& b = as<AllocateNode>(x)->buffer;
            if (b->scope != BufferScope::Local) return;
            std::vector<int64_t> shape{m_n};
            shape.insert(shape.end(), b->shape.begin(), b->shape.end());
            m_expanded[b->key.get()] = makeBuffer(b->name, std::move(shape), BufferScope::Local, {}, b->dtype);
        });
        return simplify(push(expand(body)));
    }

private:
    te::Expr rw(const te::Expr& e) const {
        if (!e) return e;
        using te::ExprKind;
        switch (e.kind()) {
            case ExprKind::IntImm: case ExprKind::FloatImm: case ExprKind::Var: return e;
            case ExprKind::Not: return te::logicalNot(rw(e.as<te::NotNode>()->a));
            case ExprKind::Select: {
                auto* n = e.as<te::SelectNode>();
                return te::select(rw(n->cond), rw(n->t), rw(n->f));
            }
            case ExprKind::Cast: return te::cast(e.dtype(), rw(e.as<te::CastNode>()->value));
            case ExprKind::Call: {
                auto* n = e.as<te::CallNode>();
                std::vector<te::Expr> args;
                for (const auto& a : n->args) args.push_back(rw(a));
                return te::call(n->dtype, n->op, std::move(args));
            }
            case ExprKind::Load: {
                auto* l = e.as<te::LoadNode>();
                std::vector<te::Expr> idx;
                for (const auto& i : l->indices) idx.push_back(rw(i));
                auto it = m_expanded.find(l->op.get());
                if (it == m_expanded.end()) return te::Expr(std::make_shared<te::LoadNode>(l->dtype, l->op, l->valueIndex, std::move(idx)));
                idx.insert(idx.begin(), m_vt);
                return bufferLoad(it->second, std::move(idx));
            }
            case ExprKind::Reduce: return e;
            default: {
                auto* b = static_cast<const te::BinaryNode*>(e.get());
                return te::binary(e.kind(), rw(b->a), rw(b->b));
            }
        }
    }

    // Every access to a Local buffer goes to its per-vthread copy.
    Stmt expand(const Stmt& s) const {
        if (!s) return s;
        switch (s->kind) {
            case StmtKind::For: {
                auto* f = as<ForNode>(s);
                return remakeFor(f, rw(f->min), rw(f->extent), f->forKind, expand(f->body));
            }
            case StmtKind::Allocate: {
                auto* a = as<AllocateNode>(s);
                auto it = m_expanded.find(a->buffer->key.get());
                return makeAllocate(it == m_expanded.end() ? a->buffer : it->second, expand(a->body));
            }
            case StmtKind::BufferStore: {
                auto* st = as<BufferStoreNode>(s);
                std::vector<te::Expr> idx;
                for (const auto& i : st->indices) idx.push_back(rw(i));
                auto it = m_expanded.find(st->buffer->key.get());
                if (it == m_expanded.end()) return makeStore(st->buffer, std::move(idx), rw(st->value));
                idx.insert(idx.begin(), m_vt);
                return makeStore(it->second, std::move(idx), rw(st->value));
            }
            case StmtKind::IfThenElse: {
                auto* i = as<IfThenElseNode>(s);
                return makeIf(rw(i->condition), expand(i->thenCase), i->elseCase ? expand(i->elseCase) : nullptr);
            }
            case StmtKind::Seq: {
                std::vector<Stmt> v;
                for (const Stmt& c : as<SeqNode>(s)->seq) v.push_back(expand(c));
                return makeSeq(std::move(v));
            }
            case StmtKind::Attr: {
                auto* a = as<AttrNode>(s);
                return makeAttr(a->key, a->value, expand(a->body));
            }
            case StmtKind::Barrier: case StmtKind::Prefetch: return s;
        }
        return s;
    }

    bool uses(const Stmt& s) const {
        bool found = false;
        auto check = [&](const te::Expr& e) { found = found || (e && usesVar(e, m_vt)); };
        preOrderVisit(s, [&](const Stmt& x) {
            if (found) return;
            switch (x->kind) {
                case StmtKind::For: check(as<ForNode>(x)->min); check(as<ForNode>(x)->extent); break;
                case StmtKind::BufferStore:
                    for (const auto& i : as<BufferStoreNode>(x)->indices) check(i);
                    check(as<BufferStoreNode>(x)->value);
                    break;
                case StmtKind::IfThenElse: check(as<IfThenElseNode>(x)->condition); break;
                default: break;
            }
        });
        return found;
    }

    Stmt copies(const Stmt& s) const {
        std::vector<Stmt> v;
        for (int64_t k = 0; k < m_n; ++k) v.push_back(substitute(s, {{m_vt, te::intImm(k)}}));
        return makeSeq(std::move(v));
    }
    Stmt loopOver(const Stmt& s) const { return makeFor(m_vt, m_n, ForKind::Serial, s); }

    Stmt push(const Stmt& s) const {
        if (!s || !uses(s)) return s;
        switch (s->kind) {
            case StmtKind::Seq: {
                std::vector<Stmt> v;
                for (const Stmt& c : as<SeqNode>(s)->seq) v.push_back(push(c));
                return makeSeq(std::move(v));
            }
            case StmtKind::Allocate: {
                auto* a = as<AllocateNode>(s);
                return makeAllocate(a->buffer, push(a->body));
            }
            case StmtKind::Attr: {
                auto* a = as<AttrNode>(s);
                return makeAttr(a->key, a->value, push(a->body));
            }
            case StmtKind::For: {
                auto* f = as<ForNode>(s);
                const bool plain = f->forKind == ForKind::Serial || f->forKind == ForKind::Unrolled ||
                                   f->forKind == ForKind::Parallel;
                if (plain && !usesVar(f->min, m_vt) && !usesVar(f->extent, m_vt))
                    return remakeFor(f, f->min, f->extent, f->forKind, push(f->body));
                return loopOver(s);
            }
            case StmtKind::IfThenElse: {
                auto* i = as<IfThenElseNode>(s);
                if (usesVar(i->condition, m_vt)) return loopOver(s);
                return makeIf(i->condition, push(i->thenCase), i->elseCase ? push(i->elseCase) : nullptr);
            }
            case StmtKind::BufferStore: return copies(s);
            case StmtKind::Barrier: case StmtKind::Prefetch: return s;
        }
        return s;
    }

    te::Var m_vt;
    int64_t m_n;
    std::unordered_map<const te::OperationNode*, Buffer> m_expanded;  // old key -> per-vthread buffer
};

// The kernel's outer chain with every vthread loop on it injected (innermost first), the thread
// loops moved outside (they are parallel, so the order is free).
Stmt injectVirtualThreads(const Stmt& s) {
    if (!s) return s;
    if (s->kind == StmtKind::Attr) {
        auto* a = as<AttrNode>(s);
        return makeAttr(a->key, a->value, injectVirtualThreads(a->body));
    }
    if (s->kind != StmtKind::For || as<ForNode>(s)->forKind != ForKind::ThreadBinding) return s;
    auto* f = as<ForNode>(s);
    const Stmt inner = injectVirtualThreads(f->body);
    if (threadAxisOf(f->threadTag).dim >= 0) return remakeFor(f, f->min, f->extent, f->forKind, inner);
    int64_t n = 0;
    TB_CHECK(te::isConstInt(f->extent, &n)) << "lowerStateGpu: vthread loop without a constant extent";
    // Peel the block / thread loops (and attributes) below the vthread loop, inject under them.
    std::vector<Stmt> chain;
    Stmt cur = inner;
    while (cur && (cur->kind == StmtKind::Attr ||
                   (cur->kind == StmtKind::For && as<ForNode>(cur)->forKind == ForKind::ThreadBinding &&
                    threadAxisOf(as<ForNode>(cur)->threadTag).dim >= 0))) {
        chain.push_back(cur);
        cur = cur->kind == StmtKind::Attr ? as<AttrNode>(cur)->body : as<ForNode>(cur)->body;
    }
    Stmt body = VThreadInjector(f->var, n).run(cur);
    for (size_t i = chain.size(); i-- > 0;) {
        if (chain[i]->kind == StmtKind::Attr) {
            auto* a = as<AttrNode>(chain[i]);
            body = makeAttr(a->key, a->value, body);
        } else {
            auto* t = as<ForNode>(chain[i]);
            body = remakeFor(t, t->min, t->extent, t->forKind, body);
        }
    }
    return body;
}

// ---- kernel split (SplitHostDevice) ---------------------------------------------------------------

struct Binding {
    ThreadAxis axis;
    int64_t extent;
    bool outer;  // on the kernel's outer chain of bound loops
};

void collectBindings(const Stmt& s, bool outer, std::vector<Binding>& out, const std::string& stage) {
    if (!s) return;
    switch (s->kind) {
        case StmtKind::For: {
            auto* f = as<ForNode>(s);
            if (f->forKind == ForKind::ThreadBinding) {
                const ThreadAxis ax = threadAxisOf(f->threadTag);
                int64_t ext = 0;
                TB_USER_CHECK(te::isConstInt(f->extent, &ext))
                    << "lowerStateGpu: the " << f->threadTag << " loop " << f->var.name() << " of " << stage
                    << " has no constant extent";
                if (ax.dim >= 0) {
                    TB_USER_CHECK(outer || !ax.block)
                        << "lowerStateGpu: " << stage << " binds " << f->threadTag << " inside a loop that is not "
                        << "bound to a block axis; blockIdx loops must be the outermost loops of a kernel";
                    out.push_back({ax, ext, outer});
                }
                collectBindings(f->body, outer, out, stage);
            } else {
                collectBindings(f->body, false, out, stage);
            }
            return;
        }
        case StmtKind::Allocate: collectBindings(as<AllocateNode>(s)->body, false, out, stage); return;
        case StmtKind::Attr: collectBindings(as<AttrNode>(s)->body, outer, out, stage); return;
        case StmtKind::IfThenElse:
            collectBindings(as<IfThenElseNode>(s)->thenCase, false, out, stage);
            collectBindings(as<IfThenElseNode>(s)->elseCase, false, out, stage);
            return;
        case StmtKind::Seq:
            for (const Stmt& c : as<SeqNode>(s)->seq) collectBindings(c, false, out, stage);
            return;
        default: return;
    }
}

// The buffer the root nest writes last (its stage's output), to name it in messages.
std::string nestName(const Stmt& s) {
    std::string name = "a root stage";
    preOrderVisit(s, [&](const Stmt& x) {
        if (x->kind == StmtKind::BufferStore) name = "stage " + as<BufferStoreNode>(x)->buffer->name;
    });
    return name;
}

// The outermost loop of a nest (through pragma attributes), or null.
const ForNode* outermostLoop(const Stmt& s) {
    Stmt cur = s;
    while (cur && cur->kind == StmtKind::Attr) cur = as<AttrNode>(cur)->body;
    return cur && cur->kind == StmtKind::For ? as<ForNode>(cur) : nullptr;
}

// The most stores an explicitly unrolled loop may expand to (larger ones stay `#pragma unroll`
// loops), as the CPU code generator's limit.
constexpr int64_t kMaxExplicitUnrollStores = 16384;

GpuKernel makeKernel(const Stmt& nest, const std::string& name, const std::unordered_map<const te::OperationNode*, int>& bufIndex) {
    GpuKernel k;
    k.name = name;
    const std::string stage = nestName(nest);
    const ForNode* top = outermostLoop(nest);
    TB_USER_CHECK(top && top->forKind == ForKind::ThreadBinding && threadAxisOf(top->threadTag).dim >= 0)
        << "lowerStateGpu: " << stage << " is computed at the root but its outermost loop "
        << (top ? "'" + top->var.name() + "' " : std::string()) << "is not bound to blockIdx / threadIdx: "
        << "every root stage of a GPU kernel runs on the device. Did you forget to bind?";

    std::vector<Binding> binds;
    collectBindings(nest, true, binds, stage);
    for (const Binding& b : binds) {
        int64_t& e = b.axis.block ? k.grid[size_t(b.axis.dim)] : k.block[size_t(b.axis.dim)];
        e = std::max(e, b.extent);
    }
    for (const Binding& b : binds) {
        const int64_t e = b.axis.block ? k.grid[size_t(b.axis.dim)] : k.block[size_t(b.axis.dim)];
        TB_USER_CHECK(!b.outer || b.extent == e)
            << "lowerStateGpu: " << stage << " binds " << (b.axis.block ? "blockIdx." : "threadIdx.")
            << "xyz"[b.axis.dim] << " with extent " << b.extent << " but a stage inside it binds the same axis with "
            << "extent " << e << "; inner bindings may not exceed the kernel's own";
    }

    // A thread loop narrower than its launch dimension runs behind a guard (codegen), so a barrier
    // inside it (a cross-thread reduction's) would not be reached by every thread of the block.
    preOrderVisit(nest, [&](const Stmt& x) {
        if (x->kind != StmtKind::For || as<ForNode>(x)->forKind != ForKind::ThreadBinding) return;
        auto* f = as<ForNode>(x);
        const ThreadAxis ax = threadAxisOf(f->threadTag);
        int64_t ext = 0;
        if (ax.dim < 0 || ax.block || !te::isConstInt(f->extent, &ext) || ext == k.block[size_t(ax.dim)]) return;
        bool barrier = false;
        preOrderVisit(f->body, [&](const Stmt& y) { barrier = barrier || y->kind == StmtKind::Barrier; });
        TB_USER_CHECK(!barrier) << "lowerStateGpu: " << stage << " synchronizes the threads of its " << f->threadTag
                                << " loop of extent " << ext << ", but the kernel launches " << k.block[size_t(ax.dim)]
                                << " threads on that axis (the others would never reach the barrier)";
    });

    // Parameters and shared memory.
    std::set<int> params;
    auto noteLoad = [&](const te::Expr& e) {
        if (!e) return;
        te::postOrderVisit(e, [&](const te::Expr& x) {
            if (x.kind() != te::ExprKind::Load) return;
            auto it = bufIndex.find(x.as<te::LoadNode>()->op.get());
            if (it != bufIndex.end()) params.insert(it->second);
        });
    };
    preOrderVisit(nest, [&](const Stmt& x) {
        switch (x->kind) {
            case StmtKind::BufferStore: {
                auto* st = as<BufferStoreNode>(x);
                auto it = bufIndex.find(st->buffer->key.get());
                if (it != bufIndex.end()) params.insert(it->second);
                for (const auto& i : st->indices) noteLoad(i);
                noteLoad(st->value);
                break;
            }
            case StmtKind::IfThenElse: noteLoad(as<IfThenElseNode>(x)->condition); break;
            case StmtKind::Allocate: {
                auto* a = as<AllocateNode>(x);
                TB_USER_CHECK(a->buffer->scope != BufferScope::Global)
                    << "lowerStateGpu: " << a->buffer->name << " is attached inside " << stage
                    << " outside every thread loop, so it would be a global buffer inside a kernel; attach it "
                    << "inside a blockIdx / threadIdx loop or compute it at the root";
                if (a->buffer->scope == BufferScope::Shared) k.sharedBytes += a->buffer->spanBytes();
                break;
            }
            default: break;
        }
    });
    k.params.assign(params.begin(), params.end());
    // Loops the schedule itself unrolls (te `unroll`, an Unroll annotation: the AutoTVM GPU
    // templates' 6x6 winograd transforms) are unrolled explicitly and simplified, as TVM's
    // UnrollLoop (explicit_unroll) + Simplify do for them; the constant-matrix selects then fold
    // here instead of in the device compiler (PoCL took over a minute per winograd kernel). Kernels
    // without such loops are left as they are; the loops `pragma_auto_unroll_max_step` marks stay
    // `#pragma unroll` loops.
    Stmt body = injectVirtualThreads(nest);
    bool scheduleUnrolled = false;
    preOrderVisit(body, [&](const Stmt& x) {
        scheduleUnrolled = scheduleUnrolled || (x->kind == StmtKind::For && as<ForNode>(x)->forKind == ForKind::Unrolled);
    });
    if (scheduleUnrolled) body = expandUnrolled(body, kMaxExplicitUnrollStores);
    k.body = insertBarriers(unrollLoops(body));
    return k;
}

}  // namespace

Stmt insertBarriers(const Stmt& kernelBody) {
    SharedAccess pending;
    return BarrierPlanner().plan(kernelBody, pending, true);
}

GpuLoweredFunc lowerStateGpu(const te::ComputeDAG& dag, const State& state, const std::string& name) {
    const LoweredFunc f = lowerStateThreaded(dag, state, name);
    GpuLoweredFunc g;
    g.name = name;
    g.args = f.args;
    Stmt body = f.body;
    while (body && body->kind == StmtKind::Allocate && as<AllocateNode>(body)->buffer->scope == BufferScope::Global) {
        g.workspaces.push_back(as<AllocateNode>(body)->buffer);
        body = as<AllocateNode>(body)->body;
    }
    std::unordered_map<const te::OperationNode*, int> bufIndex;
    const auto all = g.buffers();
    for (size_t i = 0; i < all.size(); ++i) bufIndex[all[i]->key.get()] = int(i);

    std::vector<Stmt> nests;
    if (body && body->kind == StmtKind::Seq) nests = as<SeqNode>(body)->seq;
    else if (!isNop(body)) nests.push_back(body);
    for (size_t i = 0; i < nests.size(); ++i)
        g.kernels.push_back(makeKernel(nests[i], name + "_kernel" + std::to_string(i), bufIndex));
    return g;
}

}  // namespace tb::lower
