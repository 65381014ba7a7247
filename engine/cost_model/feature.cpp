// SPDX-License-Identifier: Apache-2.0
#include "engine/cost_model/feature.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>
#include <optional>
#include <unordered_map>

#include "engine/lower/simplify.h"
#include "engine/support/error.h"

namespace tb::cost_model {

namespace {

using lower::ForKind;

struct LoopInfo {
    const lower::ForNode* node;
    const te::VarNode* var;
    int64_t min;
    int64_t extent;
    ForKind kind;
};

// Static value of a loop bound (constant after bound inference); `fallback` when it is not.
int64_t constOr(const te::Expr& e, int64_t fallback) {
    int64_t v;
    return te::isConstInt(e, &v) ? v : fallback;
}

enum { kFMad, kFAddSub, kFMul, kFDivMod, kFCmp, kFMath, kFOther, kIMad, kIAddSub, kIMul, kIDivMod, kICmp, kIMath, kIOther, kBool, kSelect };

// TVM MathOpCounter: binary ops by the type of their first operand, calls by their result type
// (every call we emit is pure, so it is a math function; tir.if_then_else included, as in TVM).
// MAD is never detected (TVM's todo), so kFMad / kIMad stay 0.
struct OpCounts {
    double c[16] = {};
    double floatOps() const { return c[kFMad] + c[kFAddSub] + c[kFMul] + c[kFDivMod] + c[kFCmp] + c[kFMath] + c[kFOther]; }
};

void countOps(const te::Expr& e, OpCounts& oc) {
    te::postOrderVisit(e, [&](const te::Expr& x) {
        using K = te::ExprKind;
        const K k = x.kind();
        if (te::isBinaryKind(k) && k != K::And && k != K::Or) {
            const bool fl = te::isFloat(x.as<te::BinaryNode>()->a.dtype());
            switch (k) {
                case K::Add: case K::Sub: oc.c[fl ? kFAddSub : kIAddSub] += 1; break;
                case K::Mul: oc.c[fl ? kFMul : kIMul] += 1; break;
                case K::Div: case K::Mod: case K::FloorDiv: case K::FloorMod: oc.c[fl ? kFDivMod : kIDivMod] += 1; break;
                default: oc.c[fl ? kFCmp : kICmp] += 1; break;  // min, max, comparisons
            }
        } else if (k == K::And || k == K::Or || k == K::Not) {
            oc.c[kBool] += 1;
        } else if (k == K::Select) {
            oc.c[kSelect] += 1;
        } else if (k == K::Call) {
            oc.c[te::isFloat(x.dtype()) ? kFMath : kIMath] += 1;
        }
    });
}

// Coefficient of `var` in an index, 0 if it does not appear (TVM CoefficientExtractor). Exact on the
// simplifier's linear forms c1*t1 + c2*t2 + c0; a non-affine use (floordiv ...) counts as 1.
int64_t coefficientOf(const te::Expr& e, const te::VarNode* var) {
    using K = te::ExprKind;
    auto uses = [&](const te::Expr& x) {
        bool found = false;
        te::postOrderVisit(x, [&](const te::Expr& z) { found |= z.get() == var; });
        return found;
    };
    switch (e.kind()) {
        case K::Var: return e.get() == var ? 1 : 0;
        case K::IntImm: case K::FloatImm: return 0;
        case K::Add: case K::Sub: {
            auto* b = e.as<te::BinaryNode>();
            int64_t x = coefficientOf(b->a, var), y = coefficientOf(b->b, var);
            return e.kind() == K::Add ? x + y : x - y;
        }
        case K::Mul: {
            auto* b = e.as<te::BinaryNode>();
            int64_t c;
            if (te::isConstInt(b->b, &c)) return coefficientOf(b->a, var) * c;
            if (te::isConstInt(b->a, &c)) return coefficientOf(b->b, var) * c;
            return uses(e) ? 1 : 0;
        }
        default: return uses(e) ? 1 : 0;
    }
}

// Interval of an integer index expression over loop ranges (TVM arith::ConstIntBound, reduced to
// what lowered indices contain); nullopt when some part is not covered.
struct Interval {
    int64_t lo, hi;
};
using Ranges = std::unordered_map<const te::VarNode*, Interval>;

int64_t floorDivInt(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::optional<Interval> boundOf(const te::Expr& e, const Ranges& ranges) {
    using K = te::ExprKind;
    switch (e.kind()) {
        case K::IntImm: {
            int64_t v = 0;
            te::isConstInt(e, &v);
            return Interval{v, v};
        }
        case K::Var: {
            auto it = ranges.find(static_cast<const te::VarNode*>(e.get()));
            if (it == ranges.end()) return std::nullopt;
            return it->second;
        }
        case K::Cast: return boundOf(e.as<te::CastNode>()->value, ranges);
        case K::Add: case K::Sub: case K::Mul: case K::Min: case K::Max:
        case K::FloorDiv: case K::Div: case K::FloorMod: case K::Mod: {
            auto* b = e.as<te::BinaryNode>();
            auto x = boundOf(b->a, ranges), y = boundOf(b->b, ranges);
            if (!x || !y) return std::nullopt;
            switch (e.kind()) {
                case K::Add: return Interval{x->lo + y->lo, x->hi + y->hi};
                case K::Sub: return Interval{x->lo - y->hi, x->hi - y->lo};
                case K::Mul: {
                    int64_t p[4] = {x->lo * y->lo, x->lo * y->hi, x->hi * y->lo, x->hi * y->hi};
                    return Interval{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
                }
                case K::Min: return Interval{std::min(x->lo, y->lo), std::min(x->hi, y->hi)};
                case K::Max: return Interval{std::max(x->lo, y->lo), std::max(x->hi, y->hi)};
                default: break;
            }
            // Division and modulo by a positive constant (the only kind lowering emits).
            if (y->lo != y->hi || y->lo <= 0) return std::nullopt;
            const int64_t c = y->lo;
            if (e.kind() == K::FloorDiv || e.kind() == K::Div) return Interval{floorDivInt(x->lo, c), floorDivInt(x->hi, c)};
            if (x->lo >= 0 && floorDivInt(x->lo, c) == floorDivInt(x->hi, c)) return Interval{x->lo % c, x->hi % c};
            return Interval{0, c - 1};
        }
        default: return std::nullopt;
    }
}

int64_t elemBytes(const lower::Buffer& b) { return b->spanBytes() / std::max<int64_t>(b->spanElements(), 1); }

// TVM BufferAccessType / ReuseType.
enum AccType { kRead = 0, kWrite = 1, kReadWrite = 2 };
enum ReuseKind { kLoopMultipleRead = 0, kSerialMultipleReadWrite = 1, kNoReuse = 2 };

// The accesses of one store to one buffer (TVM BufferAccess): the index lists, except that a
// buffer both written and read keeps only the store's indices (an update reads what it writes).
struct Access {
    lower::Buffer buf;
    AccType type;
    std::vector<std::vector<te::Expr>> indices;
};

// Elements of `buf` touched by the index lists when the loops are bound as in `ranges`: the
// product over dimensions of the union of the lists' ranges (TVM ComputeRegion). A dimension whose
// range is unknown counts as the whole extent.
std::vector<int64_t> region(const Access& a, const Ranges& ranges) {
    std::vector<int64_t> r(a.buf->ndim());
    for (size_t d = 0; d < r.size(); ++d) {
        int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
        for (const auto& idx : a.indices) {
            auto b = boundOf(idx[d], ranges);
            if (!b) b = Interval{0, a.buf->shape[d] - 1};
            lo = std::min(lo, b->lo);
            hi = std::max(hi, b->hi);
        }
        r[d] = hi - lo + 1;
    }
    return r;
}

int64_t product(const std::vector<int64_t>& v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return std::max<int64_t>(p, 0);
}

// One entry of TVM's for_touch_regions: a store touched `touched` elements of a buffer inside a loop.
struct Touch {
    int64_t touched;
    int64_t elemBytes;
};
using TouchMap = std::unordered_map<const lower::BufferNode*, std::vector<Touch>>;

// Walks a loop nest in program order, keeping the enclosing loops, allocations and auto-unroll
// pragmas, and calls Derived::store for every BufferStore (both branches of an if, as TVM).
template <class Derived>
struct LoopNestWalker {
    std::unordered_map<const te::OperationNode*, lower::Buffer> keyToBuffer;
    std::vector<LoopInfo> loops;
    std::vector<int64_t> unrollPragma;
    std::vector<std::pair<lower::Buffer, double>> allocs;  // (buffer, outer loop product at allocation)

    // Calls fn(buffer, indices) for every load in `value` of a buffer the function binds or allocates.
    template <class Fn>
    void forEachLoad(const te::Expr& value, Fn&& fn) const {
        te::postOrderVisit(value, [&](const te::Expr& x) {
            auto* l = x.as<te::LoadNode>();
            if (!l) return;
            auto it = keyToBuffer.find(l->op.get());
            if (it != keyToBuffer.end()) fn(it->second, l->indices);
        });
    }

    static double prodOf(const std::vector<LoopInfo>& ls) {
        double p = 1;
        for (const auto& l : ls) p *= double(l.extent);
        return p;
    }

    void visit(const lower::Stmt& s) {
        if (!s) return;
        using lower::StmtKind;
        switch (s->kind) {
            case StmtKind::For: {
                auto* f = lower::as<lower::ForNode>(s);
                loops.push_back({f, f->var.node(), constOr(f->min, 0), std::max<int64_t>(constOr(f->extent, 1), 1), f->forKind});
                visit(f->body);
                loops.pop_back();
                break;
            }
            case StmtKind::Allocate: {
                auto* a = lower::as<lower::AllocateNode>(s);
                keyToBuffer[a->buffer->key.get()] = a->buffer;
                allocs.emplace_back(a->buffer, prodOf(loops));
                visit(a->body);
                allocs.pop_back();
                break;
            }
            case StmtKind::Seq:
                for (const auto& c : lower::as<lower::SeqNode>(s)->seq) visit(c);
                break;
            case StmtKind::IfThenElse: {  // both branches, as TVM
                auto* i = lower::as<lower::IfThenElseNode>(s);
                visit(i->thenCase);
                visit(i->elseCase);
                break;
            }
            case StmtKind::Attr: {
                auto* a = lower::as<lower::AttrNode>(s);
                bool unroll = a->key == lower::attr::kAutoUnrollMaxStep;
                if (unroll) unrollPragma.push_back(a->value);
                visit(a->body);
                if (unroll) unrollPragma.pop_back();
                break;
            }
            case StmtKind::BufferStore:
                static_cast<Derived*>(this)->store(lower::as<lower::BufferStoreNode>(s));
                break;
            case StmtKind::Barrier: break;  // a GPU barrier touches no buffer: no features
            case StmtKind::Prefetch: break;  // a cache hint (codegen inserts it after features are taken)
        }
    }

};

struct Extractor : LoopNestWalker<Extractor> {
    int lineBytes;
    const GpuStoreContext* gpu = nullptr;
    // TVM for_touch_regions_: per loop, per buffer, one entry per store inside the loop that touches
    // the buffer (accumulated over the stores visited so far, as TVM does).
    std::unordered_map<const lower::ForNode*, TouchMap> touch;
    std::vector<std::vector<float>> rows;
    std::vector<std::vector<double>> footprints;  // per store: bytes touched by each loop, innermost first

    // TVM BufferAccessExtractor: the store's buffer as Write, then every load of the value.
    std::vector<Access> accessesOf(const lower::BufferStoreNode* st) const {
        std::vector<Access> acc{{st->buffer, kWrite, {st->indices}}};
        forEachLoad(st->value, [&](const lower::Buffer& buf, const std::vector<te::Expr>& indices) {
            auto a = std::find_if(acc.begin(), acc.end(), [&](const Access& y) { return y.buf == buf; });
            if (a == acc.end()) {
                acc.push_back({buf, kRead, {}});
                a = acc.end() - 1;
            } else if (a->type == kWrite) {
                a->type = kReadWrite;
            }
            if (a->type != kReadWrite) a->indices.push_back(indices);
        });
        return acc;
    }

    bool usesLoop(const Access& a, size_t loop) const {
        for (const auto& idx : a.indices)
            for (const auto& e : idx)
                if (coefficientOf(e, loops[loop].var) != 0) return true;
        return false;
    }

    // Smallest stride (elements) of `a` along loop `loop`, 0 when no index uses it (TVM ComputeStride).
    int64_t strideOf(const Access& a, size_t loop) const {
        int64_t best = std::numeric_limits<int64_t>::max();
        bool found = false;
        for (const auto& idx : a.indices)
            for (size_t d = idx.size(); d-- > 0;) {
                int64_t c = coefficientOf(idx[d], loops[loop].var);
                if (c == 0) continue;
                found = true;
                best = std::min(best, std::abs(c) * a.buf->strides[d]);
                break;
            }
        return found ? best : 0;
    }

    // TVM ComputeReuse: (reuse type, distance in iterations, distance in bytes, reuse count).
    struct Reuse {
        ReuseKind kind = kNoReuse;
        double disIter = 0, disBytes = 0, count = 0;
    };
    Reuse reuseOf(const Access& a) const {
        auto touchedBytes = [&](const TouchMap& m, bool oneElement) {
            double b = 0;
            for (const auto& [_, v] : m)
                for (const auto& t : v) b += double(oneElement ? 1 : t.touched) * double(t.elemBytes);
            return b;
        };
        double disIter = 1, disBytes = -1;
        for (size_t i = loops.size(); i-- > 0;) {
            const TouchMap& m = touch.at(loops[i].node);
            const double extent = double(loops[i].extent);
            if (!usesLoop(a, i)) {
                // The data of the loops inside is read again in every iteration of this loop.
                if (disBytes < 0) disBytes = touchedBytes(m, true);
                return {kLoopMultipleRead, disIter, disBytes, extent};
            }
            disIter *= extent;
            disBytes = touchedBytes(m, false);
            const auto& mine = m.at(a.buf.get());
            if (mine.size() > 1) {  // several stores inside this loop touch the buffer
                double minTouched = std::numeric_limits<double>::max();
                for (const auto& t : mine) minTouched = std::min(minTouched, double(t.touched));
                return {kSerialMultipleReadWrite, minTouched / extent, disBytes / extent, double(mine.size() - 1)};
            }
        }
        return {};
    }

    void store(const lower::BufferStoreNode* st) {
        std::vector<float> row(kFeatureLength, 0.0f);
        const double outer = prodOf(loops);
        const size_t n = loops.size();
        int k = 0;

        // ---- Group 1: op counts x outer loop product; vectorize / unroll / parallel; GPU.
        OpCounts oc;
        countOps(st->value, oc);
        for (double c : oc.c) row[size_t(k++)] = log2p(c * outer);
        // Spatial loops (for the annotation position): those whose variable indexes the stored element.
        std::vector<char> spatial(n, 0);
        for (size_t i = 0; i < n; ++i)
            for (const auto& idx : st->indices)
                if (coefficientOf(idx, loops[i].var) != 0) spatial[i] = 1;
        for (ForKind kind : {ForKind::Vectorized, ForKind::Unrolled, ForKind::Parallel}) {
            double num = 0, prod = 0, len = 0;
            int pos = 0;  // kPosNone
            for (size_t i = 0; i < n; ++i) {
                if (loops[i].kind != kind) continue;
                num += 1;
                prod = (prod == 0 ? 1 : prod) * double(loops[i].extent);
                len = double(loops[i].extent);
                // Position of the innermost such loop among the loops of its class (spatial / reduce).
                int before = 0, after = 0;
                for (size_t j = 0; j < n; ++j) {
                    if (spatial[j] != spatial[i]) continue;
                    if (j < i) ++before;
                    if (j > i) ++after;
                }
                const int base = spatial[i] ? 1 : 4;
                pos = after == 0 ? base : before == 0 ? base + 2 : base + 1;
            }
            row[size_t(k++)] = log2p(num);
            row[size_t(k++)] = log2p(prod);
            row[size_t(k++)] = log2p(len);
            for (int p = 0; p < 8; ++p) row[size_t(k++)] = p == pos ? 1.0f : 0.0f;
        }
        // is_gpu, then blockIdx.{x,y,z}, threadIdx.{x,y,z}, vthread lengths: 1 on a CPU (log2p = 1).
        TB_CHECK(k == kIsGpuFeature) << "feature layout drifted (is_gpu at " << k << ")";
        search::GpuThreadExtents g;
        if (gpu) {
            auto it = gpu->byBuffer.find(st->buffer->name);
            if (it != gpu->byBuffer.end()) g = it->second;
        }
        row[size_t(k++)] = gpu ? 1.0f : 0.0f;
        for (int64_t len : {g.blockX, g.blockY, g.blockZ, g.threadX, g.threadY, g.threadZ, g.vthread})
            row[size_t(k++)] = log2p(double(len));
        TB_CHECK(k == 57) << "feature layout drifted (group 1 ends at " << k << ")";

        // ---- Touched regions per loop level, innermost first (TVM ExtractBufferAccessFeature).
        std::vector<Access> acc = accessesOf(st);
        std::vector<double> memBytes, computeOps;  // per level, innermost first
        std::vector<std::vector<int64_t>> outerRegion(acc.size());  // region of each access at loop 0
        Ranges ranges;
        for (const auto& l : loops) ranges[l.var] = {l.min, l.min};  // loops outside a level: one iteration
        double ops = oc.floatOps();
        for (size_t i = n; i-- > 0;) {
            ranges[loops[i].var] = {loops[i].min, loops[i].min + loops[i].extent - 1};
            TouchMap& m = touch[loops[i].node];
            double bytes = 0;
            for (size_t a = 0; a < acc.size(); ++a) {
                std::vector<int64_t> r = region(acc[a], ranges);
                const int64_t touched = product(r);
                m[acc[a].buf.get()].push_back({touched, elemBytes(acc[a].buf)});
                bytes += double(touched) * double(elemBytes(acc[a].buf));
                if (i == 0) outerRegion[a] = std::move(r);
            }
            memBytes.push_back(bytes);
            ops *= double(loops[i].extent);
            computeOps.push_back(ops);
        }
        footprints.push_back(memBytes);

        // ---- Group 2: the 5 buffers with the most cache lines (then bytes), 18 values each.
        struct BufFeat {
            AccType type;
            double bytes, uniqueBytes, lines, uniqueLines;
            Reuse reuse;
            double stride;
        };
        std::vector<BufFeat> feats;
        for (size_t a = 0; a < acc.size(); ++a) {
            const Access& ac = acc[a];
            const double eb = double(elemBytes(ac.buf));
            BufFeat f{ac.type, outer * eb, eb, 1, 1, reuseOf(ac), 0};
            if (n > 0) {
                f.uniqueBytes = double(touch.at(loops.front().node).at(ac.buf.get()).front().touched) * eb;
                // Stride along the innermost loop that moves the access; the loops inside it re-read
                // the same lines (TVM multiplies the innermost loop's extent each time: we take the
                // extents of those loops).
                int64_t stride = 0;
                double reduceRatio = 1;
                size_t i = n;
                while (i-- > 0) {
                    stride = strideOf(ac, i);
                    if (stride != 0) break;
                    reduceRatio *= double(loops[i].extent);
                }
                f.lines = std::max(outer / reduceRatio * std::min(1.0, double(stride) * eb / lineBytes), 1.0);
                f.stride = i == n - 1 ? double(stride) : 0.0;  // the stride of the innermost loop only
                // Unique lines: unique bytes over the contiguous run, i.e. the innermost dimension the
                // whole of which is touched (capped at a cache line).
                double contiguous = eb;
                const auto& r = outerRegion[a];
                for (size_t d = std::min(r.size(), ac.buf->ndim()); d-- > 0;)
                    if (r[d] == ac.buf->shape[d]) {
                        contiguous *= double(r[d]);
                        break;
                    }
                f.uniqueLines = std::max(f.uniqueBytes / std::min(contiguous, double(lineBytes)), 1.0);
            }
            feats.push_back(f);
        }
        std::stable_sort(feats.begin(), feats.end(), [](const BufFeat& a, const BufFeat& b) {
            return a.lines != b.lines ? a.lines > b.lines : a.bytes > b.bytes;
        });
        for (size_t b = 0; b < 5; ++b) {
            if (b >= feats.size()) {
                k += 18;
                continue;
            }
            const BufFeat& f = feats[b];
            for (int t = 0; t < 3; ++t) row[size_t(k++)] = t == f.type ? 1.0f : 0.0f;
            row[size_t(k++)] = log2p(f.bytes);
            row[size_t(k++)] = log2p(f.uniqueBytes);
            row[size_t(k++)] = log2p(f.lines);
            row[size_t(k++)] = log2p(f.uniqueLines);
            for (int t = 0; t < 3; ++t) row[size_t(k++)] = t == f.reuse.kind ? 1.0f : 0.0f;
            row[size_t(k++)] = log2p(f.reuse.disIter);
            row[size_t(k++)] = log2p(f.reuse.disBytes);
            row[size_t(k++)] = log2p(f.reuse.count);
            auto perReuse = [&](double v) { return f.reuse.count > 0.5 ? v / f.reuse.count : v * 2; };
            row[size_t(k++)] = log2p(perReuse(f.bytes));
            row[size_t(k++)] = log2p(perReuse(f.uniqueBytes));
            row[size_t(k++)] = log2p(perReuse(f.lines));
            row[size_t(k++)] = log2p(perReuse(f.uniqueLines));
            row[size_t(k++)] = log2p(f.stride);
        }
        TB_CHECK(k == 147) << "feature layout drifted (group 2 ends at " << k << ")";

        // ---- Group 3: arithmetic intensity (float ops / touched bytes) as a function of the float
        // ops done by the loops from the innermost outwards, sampled at 10 evenly spaced op counts
        // with linear interpolation (TVM ExtractArithmeticIntensityFeature).
        if (oc.floatOps() > 0 && !computeOps.empty()) {
            size_t pt = 0;
            for (int s = 0; s < 10; ++s) {
                const double target = computeOps.back() * double(s + 1) / 10.0;
                while (computeOps[pt] < target - 1e-4) ++pt;
                double v = computeOps[pt] / memBytes[pt];
                if (pt > 0) {
                    const double base = computeOps[pt - 1] / memBytes[pt - 1];
                    const double slope = (v - base) / (computeOps[pt] - computeOps[pt - 1]);
                    v = base + slope * (target - computeOps[pt - 1]);
                }
                row[size_t(k++)] = log2p(v);
            }
        } else {
            k += 10;
        }

        // ---- Group 4: allocation of the stored buffer, when an Allocate encloses the store.
        for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) {
            if (it->first.get() != st->buffer.get()) continue;
            const double elems = double(it->first->spanElements());
            row[size_t(k)] = log2p(elems * double(elemBytes(it->first)));  // alloc_size
            row[size_t(k + 1)] = log2p(elems * it->second);                 // alloc_prod
            row[size_t(k + 2)] = log2p(it->second);                         // alloc_outer_prod
            row[size_t(k + 3)] = log2p(outer / std::max(it->second, 1.0));  // alloc_inner_prod
            break;
        }
        k += 4;

        // ---- Group 5: outer loops.
        row[size_t(k++)] = log2p(outer);
        row[size_t(k++)] = log2p(double(n));
        row[size_t(k++)] = log2p(unrollPragma.empty() ? 0.0 : double(unrollPragma.back()));
        TB_CHECK(k == kTvmFeatureLength) << "feature layout drifted (ends at " << k << ")";
        rows.push_back(std::move(row));
    }
};


// ---- Group 6 (ours, not TVM's): the straight-line block of the hot loop, on the loop kinds codegen
// will see (lower::unrollLoops applied). See feature.h.
struct BlockExtractor : LoopNestWalker<BlockExtractor> {
    double cores = 1;
    double fmaLanes = kDefaultFmaLanes;  // float lanes of one full-rate FMA
    const std::vector<std::vector<double>>* footprints = nullptr;  // Extractor's, per store
    std::vector<std::array<float, kBlockFeatureLength>> rows;

    // Stride (elements) of an index list along `var`: coefficient x stride of the innermost
    // dimension that uses it; 0 when no dimension does.
    static int64_t strideAlong(const lower::Buffer& b, const std::vector<te::Expr>& idx, const te::VarNode* var) {
        for (size_t d = idx.size(); d-- > 0;) {
            const int64_t c = coefficientOf(idx[d], var);
            if (c != 0) return std::abs(c) * b->strides[d];
        }
        return 0;
    }

    void store(const lower::BufferStoreNode* st) {
        std::array<float, kBlockFeatureLength> row{};
        const size_t n = loops.size();
        // The block: the loops inside the innermost Serial/Parallel loop (Unrolled and Vectorized
        // ones run straight-line); the hot loop is that Serial/Parallel loop.
        size_t first = n;
        while (first > 0 && (loops[first - 1].kind == ForKind::Unrolled || loops[first - 1].kind == ForKind::Vectorized)) --first;
        double block = 1, outer = 1;
        const LoopInfo* vec = nullptr;
        for (size_t i = 0; i < n; ++i) (i >= first ? block : outer) *= double(loops[i].extent);
        for (size_t i = first; i < n; ++i)
            if (loops[i].kind == ForKind::Vectorized) vec = &loops[i];
        const double lanes = vec ? double(vec->extent) : 1.0;
        const double width = std::min(lanes, fmaLanes);  // lanes per machine vector op
        auto distinct = [&](const std::vector<std::vector<te::Expr>>& lists) {
            double d = 1;
            for (size_t i = first; i < n; ++i) {
                bool used = false;
                for (const auto& idx : lists)
                    for (const auto& e : idx) used = used || coefficientOf(e, loops[i].var) != 0;
                if (used) d *= double(loops[i].extent);
            }
            return d;
        };
        // Loads of the value, grouped per buffer (indices of every read).
        std::vector<std::pair<lower::Buffer, std::vector<std::vector<te::Expr>>>> reads;
        forEachLoad(st->value, [&](const lower::Buffer& buf, const std::vector<te::Expr>& indices) {
            auto r = std::find_if(reads.begin(), reads.end(), [&](const auto& y) { return y.first == buf; });
            if (r == reads.end()) reads.push_back({buf, {}}), r = reads.end() - 1;
            r->second.push_back(indices);
        });
        OpCounts oc;
        countOps(st->value, oc);
        const double flops = std::max(1.0, oc.floatOps());
        const double arith = block / width * std::max(1.0, flops / 2);  // vector FMAs (or ops) per block
        // The accumulator run: consecutive iterations of the serial loops from the hot loop outwards
        // that leave the stored element in place (LLVM keeps it in a register across them).
        double run = 1;
        for (size_t i = first; i-- > 0;) {
            if (loops[i].kind != ForKind::Serial) break;
            bool moves = false;
            for (const auto& e : st->indices) moves = moves || coefficientOf(e, loops[i].var) != 0;
            if (moves) break;
            run *= double(loops[i].extent);
        }
        double loadOps = 0, contiguous = 0, broadcast = 0, gathers = 0, accumulators = 0, storeOps = 0;
        const double storeDistinct = distinct({st->indices});
        bool selfRead = false;
        for (const auto& [buf, lists] : reads) {
            const double d = distinct(lists);
            if (buf == st->buffer) {
                selfRead = true;
                continue;
            }
            int64_t stride = 0;
            if (vec)
                for (const auto& idx : lists) stride = std::max(stride, strideAlong(buf, idx, vec->var));
            if (!vec || stride == 0) broadcast += 1, loadOps += d;  // one (broadcast) load per element
            else if (stride == 1) contiguous += 1, loadOps += d / width;
            else gathers += 1, loadOps += d;
        }
        int64_t storeStride = vec ? strideAlong(st->buffer, st->indices, vec->var) : 0;
        const double storeVec = storeStride == 1 ? storeDistinct / width : storeDistinct;
        if (selfRead) accumulators = storeDistinct / width;
        // An accumulator is loaded and stored once per run; any other store writes every block.
        storeOps = selfRead ? storeVec / run : storeVec;
        loadOps += selfRead ? storeVec / run : 0;
        // Cycles per block on two FMA pipes of fmaLanes floats, two load ports, one store port (Zen 4 /
        // Skylake class; a broadcast is one load at any width).
        // Accumulators beyond the register file spill: a load and a store each per block.
        const double vecRegs = 32;
        if (accumulators > vecRegs - 4) loadOps += accumulators, storeOps += accumulators;
        double cycles = std::max({arith / 2, loadOps / 2, storeOps, 1.0});
        // Memory: the bytes each cache level must refill. The innermost loop whose footprint exceeds
        // a cache re-reads the footprint of its body in every iteration; refills per cycle per core
        // at the next level's bandwidth.
        double memCycles = 0;
        if (footprints && rows.size() < footprints->size()) {
            const std::vector<double>& fp = (*footprints)[rows.size()];  // fp[k]: loop n-1-k
            struct Level { double bytes, bytesPerCycle; };
            // L1 32 KiB refilled from L2 at 64 B/cycle, L2 1 MiB from L3 at 32 B/cycle (Zen 4).
            for (Level lv : {Level{32768, 64}, Level{1 << 20, 32}}) {
                double traffic = fp.empty() ? 0 : fp.back();  // compulsory: the whole footprint once
                for (size_t i = n; i-- > 0;) {
                    const size_t k = n - 1 - i;
                    if (k < fp.size() && fp[k] > lv.bytes) {
                        double iters = 1;
                        for (size_t j = 0; j <= i; ++j) iters *= double(loops[j].extent);
                        const double body = k == 0 ? 0 : fp[k - 1];
                        traffic = std::max(traffic, iters * body);
                        break;
                    }
                }
                memCycles += traffic / lv.bytesPerCycle;
            }
        }
        // Parallel loops split the iterations over the cores, in whole chunks.
        double par = 1;
        for (size_t i = 0; i < first; ++i)
            if (loops[i].kind == ForKind::Parallel) par *= double(loops[i].extent);
        const double parFactor = std::ceil(par / cores) / par;  // share of the iterations on the busiest core
        int k = 0;
        row[size_t(k++)] = log2p(block);
        row[size_t(k++)] = log2p(lanes);
        row[size_t(k++)] = log2p(accumulators);
        row[size_t(k++)] = float(loadOps / std::max(arith, 1.0));
        row[size_t(k++)] = float(arith / 2 / cycles);
        row[size_t(k++)] = log2p(first > 0 ? double(loops[first - 1].extent) : 0.0);
        row[size_t(k++)] = log2p(run);
        row[size_t(k++)] = log2p(contiguous);
        row[size_t(k++)] = log2p(broadcast);
        row[size_t(k++)] = log2p(gathers);
        row[size_t(k++)] = storeStride == 1 ? 1.0f : 0.0f;
        // Refills overlap computation only in part: added (on bench_rank's logs this ranks better than the max).
        row[size_t(k++)] = log2p((cycles * outer + memCycles) * parFactor);
        TB_CHECK(k == kBlockFeatureLength) << "feature layout drifted (group 6 ends at " << k << ")";
        rows.push_back(row);
    }
};

}  // namespace

GpuStoreContext gpuStoreContext(const State& state) {
    GpuStoreContext ctx;
    const std::vector<search::GpuThreadExtents> ext = search::gpuThreadExtents(state);
    for (size_t sid = 0; sid < ext.size(); ++sid) {
        const Stage& st = state.stage(int(sid));
        if (st.opType == StageKind::Compute && st.computeAt != ComputeAtKind::Inlined) ctx.byBuffer[st.op->name] = ext[sid];
    }
    return ctx;
}

std::vector<std::vector<float>> extractPerStoreFeatures(const lower::LoweredFunc& f, int cacheLineBytes,
                                                        const GpuStoreContext* gpu, int numCores, int fmaLanes) {
    TB_CHECK(fmaLanes >= 1) << "fmaLanes must be >= 1, got " << fmaLanes;
    Extractor ex;
    ex.lineBytes = cacheLineBytes;
    ex.gpu = gpu;
    for (const auto& b : f.args) ex.keyToBuffer[b->key.get()] = b;
    ex.visit(f.body);
    if (!gpu) {
        BlockExtractor bx;
        bx.cores = std::max(1, numCores);
        bx.fmaLanes = fmaLanes;
        bx.footprints = &ex.footprints;
        bx.keyToBuffer = ex.keyToBuffer;
        bx.visit(lower::unrollLoops(f.body));
        TB_CHECK(bx.rows.size() == ex.rows.size()) << "group 6 saw " << bx.rows.size() << " stores, not " << ex.rows.size();
        for (size_t i = 0; i < ex.rows.size(); ++i)
            std::copy(bx.rows[i].begin(), bx.rows[i].end(), ex.rows[i].begin() + kTvmFeatureLength);
    }
    return std::move(ex.rows);
}

}  // namespace tb::cost_model

namespace tb::cost_model {

double estimatedCycles(const std::vector<std::vector<float>>& rows) {
    double c = 0;
    for (const auto& r : rows) {
        TB_CHECK(r.size() == size_t(kFeatureLength)) << "a feature row of " << r.size() << " values";
        c += std::exp2(double(r[size_t(kCyclesFeature)])) - 1;  // log2p inverted
    }
    return c;
}

}  // namespace tb::cost_model
