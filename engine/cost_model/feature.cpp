// SPDX-License-Identifier: Apache-2.0
#include "engine/cost_model/feature.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/support/error.h"

namespace tb::cost_model {

namespace {

using lower::ForKind;

struct LoopInfo {
    const te::VarNode* var;
    int64_t extent;
    ForKind kind;
};

// Static evaluation of the integer extent of a loop (constant after bound inference).
int64_t constExtent(const te::Expr& e) {
    int64_t v;
    return te::isConstInt(e, &v) ? std::max<int64_t>(v, 1) : 1;
}

struct OpCounts {
    double c[16] = {};
};

enum { kFMad, kFAddSub, kFMul, kFDivMod, kFCmp, kFMath, kFOther, kIMad, kIAddSub, kIMul, kIDivMod, kICmp, kIMath, kIOther, kBool, kSelect };

void countOps(const te::Expr& e, OpCounts& oc) {
    te::postOrderVisit(e, [&](const te::Expr& x) {
        bool fl = te::isFloat(x.dtype());
        switch (x.kind()) {
            case te::ExprKind::Add: case te::ExprKind::Sub:
                oc.c[fl ? kFAddSub : kIAddSub] += 1; break;
            case te::ExprKind::Mul:
                oc.c[fl ? kFMul : kIMul] += 1; break;
            case te::ExprKind::Div: case te::ExprKind::Mod: case te::ExprKind::FloorDiv: case te::ExprKind::FloorMod:
                oc.c[fl ? kFDivMod : kIDivMod] += 1; break;
            case te::ExprKind::Min: case te::ExprKind::Max:
                oc.c[fl ? kFCmp : kICmp] += 1; break;
            case te::ExprKind::EQ: case te::ExprKind::NE: case te::ExprKind::LT: case te::ExprKind::LE:
            case te::ExprKind::GT: case te::ExprKind::GE: {
                auto* b = x.as<te::BinaryNode>();
                oc.c[te::isFloat(b->a.dtype()) ? kFCmp : kICmp] += 1;
                break;
            }
            case te::ExprKind::And: case te::ExprKind::Or: case te::ExprKind::Not:
                oc.c[kBool] += 1; break;
            case te::ExprKind::Select:
                oc.c[kSelect] += 1; break;
            case te::ExprKind::Call: {
                auto* c = x.as<te::CallNode>();
                if (c->op == "tir.if_then_else") oc.c[kSelect] += 1;
                else oc.c[fl ? kFMath : kIMath] += 1;
                break;
            }
            default: break;
        }
    });
}

// Coefficient of `var` in a flat affine index, or 0 if it does not appear; -1 if non-affine.
int64_t coefficientOf(const te::Expr& e, const te::VarNode* var) {
    using K = te::ExprKind;
    switch (e.kind()) {
        case K::Var: return e.get() == var ? 1 : 0;
        case K::IntImm: case K::FloatImm: return 0;
        case K::Add: case K::Sub: {
            auto* b = e.as<te::BinaryNode>();
            int64_t x = coefficientOf(b->a, var), y = coefficientOf(b->b, var);
            if (x < 0 || y < 0) return -1;
            return e.kind() == K::Add ? x + y : x - y;  // may go negative for odd strides: keep magnitude
        }
        case K::Mul: {
            auto* b = e.as<te::BinaryNode>();
            int64_t c;
            if (te::isConstInt(b->b, &c)) {
                int64_t x = coefficientOf(b->a, var);
                return x < 0 ? -1 : x * c;
            }
            if (te::isConstInt(b->a, &c)) {
                int64_t x = coefficientOf(b->b, var);
                return x < 0 ? -1 : x * c;
            }
            bool uses = false;
            te::postOrderVisit(e, [&](const te::Expr& z) { uses |= z.get() == var; });
            return uses ? -1 : 0;
        }
        default: {
            bool uses = false;
            te::postOrderVisit(e, [&](const te::Expr& z) { uses |= z.get() == var; });
            return uses ? 1 : 0;  // non-affine (floordiv ...): treat as touching with unit stride
        }
    }
}

struct Extractor {
    int lineBytes;
    std::map<const te::OperationNode*, lower::Buffer> keyToBuffer;
    std::vector<LoopInfo> loops;
    std::vector<int64_t> unrollPragma;
    std::vector<std::pair<lower::Buffer, int64_t>> allocs;  // (buffer, outer product at allocation)
    std::vector<std::vector<float>> rows;

    static double prodOf(const std::vector<LoopInfo>& ls, size_t from = 0) {
        double p = 1;
        for (size_t i = from; i < ls.size(); ++i) p *= double(ls[i].extent);
        return p;
    }

    void visit(const lower::Stmt& s) {
        if (!s) return;
        using lower::StmtKind;
        switch (s->kind) {
            case StmtKind::For: {
                auto* f = lower::as<lower::ForNode>(s);
                loops.push_back({f->var.node(), constExtent(f->extent), f->forKind});
                visit(f->body);
                loops.pop_back();
                break;
            }
            case StmtKind::Allocate: {
                auto* a = lower::as<lower::AllocateNode>(s);
                keyToBuffer[a->buffer->key.get()] = a->buffer;
                allocs.emplace_back(a->buffer, int64_t(prodOf(loops)));
                visit(a->body);
                allocs.pop_back();
                break;
            }
            case StmtKind::Seq:
                for (const auto& c : lower::as<lower::SeqNode>(s)->seq) visit(c);
                break;
            case StmtKind::IfThenElse: {
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
                store(lower::as<lower::BufferStoreNode>(s));
                break;
        }
    }

    void store(const lower::BufferStoreNode* st) {
        std::vector<float> row(kFeatureLength, 0.0f);
        const double outer = prodOf(loops);
        // Spatial loops: those whose variable indexes the stored element.
        std::vector<char> spatial(loops.size(), 0);
        for (size_t i = 0; i < loops.size(); ++i)
            for (const auto& idx : st->indices)
                if (coefficientOf(idx, loops[i].var) != 0) spatial[i] = 1;

        // Group 1: op counters.
        OpCounts oc;
        countOps(st->value, oc);
        for (const auto& idx : st->indices) countOps(idx, oc);
        int k = 0;
        for (double c : oc.c) row[size_t(k++)] = log2p(c * outer);
        // vectorize / unroll / parallel.
        for (ForKind kind : {ForKind::Vectorized, ForKind::Unrolled, ForKind::Parallel}) {
            double num = 0, prod = 1, len = 0;
            int pos = 0;  // 0 none
            for (size_t i = 0; i < loops.size(); ++i) {
                if (loops[i].kind != kind) continue;
                num += 1;
                prod *= double(loops[i].extent);
                len = double(loops[i].extent);
                // Position of this loop among the loops of its class (spatial / reduce).
                int before = 0, after = 0;
                for (size_t j = 0; j < loops.size(); ++j) {
                    if (spatial[j] != spatial[i]) continue;
                    if (j < i) ++before;
                    if (j > i) ++after;
                }
                int base = spatial[i] ? 1 : 4;
                pos = after == 0 ? base : before == 0 ? base + 2 : base + 1;
            }
            row[size_t(k++)] = log2p(num);
            row[size_t(k++)] = log2p(prod);
            row[size_t(k++)] = log2p(len);
            for (int p = 0; p < 8; ++p) row[size_t(k++)] = p == pos ? 1.0f : 0.0f;
        }
        k += 8;  // GPU slots stay 0
        TB_CHECK(k == 57) << "feature layout drifted (group 1 ends at " << k << ")";

        // Group 2: buffer accesses.
        struct BufFeat {
            bool read = false, write = false;
            double bytes = 0, uniqueBytes = 0, lines = 0, uniqueLines = 0;
            int reuseType = 2;  // NoReuse
            double reuseDisIter = 0, reuseDisBytes = 0, reuseCt = 0, stride = 0;
        };
        std::map<const lower::BufferNode*, BufFeat> feats;
        std::vector<std::pair<lower::Buffer, std::vector<te::Expr>>> accesses;
        te::postOrderVisit(st->value, [&](const te::Expr& x) {
            auto* l = x.as<te::LoadNode>();
            if (!l) return;
            auto it = keyToBuffer.find(l->op.get());
            if (it == keyToBuffer.end()) return;
            accesses.emplace_back(it->second, l->indices);
        });
        const double elem = 4.0;
        auto analyze = [&](const lower::Buffer& buf, const std::vector<te::Expr>& idx, bool write) {
            BufFeat& bf = feats[buf.get()];
            (write ? bf.write : bf.read) = true;
            te::Expr flat = lower::flatIndex(buf, idx);
            std::vector<int64_t> coef(loops.size());
            for (size_t i = 0; i < loops.size(); ++i) coef[i] = std::abs(coefficientOf(flat, loops[i].var));
            double unique = 1;
            for (size_t i = 0; i < loops.size(); ++i)
                if (coef[i] != 0) unique *= double(loops[i].extent);
            unique = std::min(unique, double(buf->spanElements()));
            double stride = 0;
            size_t reduceRun = loops.size();  // innermost loops that do not move the index
            for (size_t i = loops.size(); i-- > 0;) {
                if (coef[i] != 0) {
                    stride = double(coef[i]);
                    break;
                }
                reduceRun = i;
            }
            double reduceRatio = prodOf(loops, reduceRun);
            bf.bytes += outer * elem;
            bf.uniqueBytes = std::max(bf.uniqueBytes, unique * elem);
            double lines = outer / std::max(reduceRatio, 1.0) * std::min(1.0, stride * elem / lineBytes);
            bf.lines += std::max(lines, 1.0);
            bf.uniqueLines = std::max(bf.uniqueLines, std::max(unique * elem / lineBytes, 1.0));
            bf.stride = bf.stride == 0 ? stride : std::min(bf.stride, stride);
            // Reuse: the innermost loop whose variable does not move the index.
            for (size_t i = loops.size(); i-- > 0;) {
                if (coef[i] == 0 && loops[i].extent > 1) {
                    bf.reuseType = 0;  // LoopMultipleRead
                    bf.reuseCt = double(loops[i].extent);
                    bf.reuseDisIter = prodOf(loops, i + 1);
                    double inner = 1;
                    for (size_t j = i + 1; j < loops.size(); ++j)
                        if (coef[j] != 0) inner *= double(loops[j].extent);
                    bf.reuseDisBytes = inner * elem;
                    break;
                }
            }
        };
        for (const auto& [buf, idx] : accesses) analyze(buf, idx, false);
        analyze(st->buffer, st->indices, true);
        for (auto& [_, bf] : feats)
            if (bf.read && bf.write && bf.reuseType == 2) bf.reuseType = 1;  // SerialMultipleReadWrite
        std::vector<BufFeat> sorted;
        for (auto& [_, bf] : feats) sorted.push_back(bf);
        std::sort(sorted.begin(), sorted.end(), [](const BufFeat& a, const BufFeat& b) {
            return a.lines != b.lines ? a.lines > b.lines : a.bytes > b.bytes;
        });
        for (size_t b = 0; b < 5; ++b) {
            if (b >= sorted.size()) {
                k += 18;
                continue;
            }
            const BufFeat& bf = sorted[b];
            int acc = bf.read && bf.write ? 2 : bf.write ? 1 : 0;
            for (int t = 0; t < 3; ++t) row[size_t(k++)] = t == acc ? 1.0f : 0.0f;
            row[size_t(k++)] = log2p(bf.bytes);
            row[size_t(k++)] = log2p(bf.uniqueBytes);
            row[size_t(k++)] = log2p(bf.lines);
            row[size_t(k++)] = log2p(bf.uniqueLines);
            for (int t = 0; t < 3; ++t) row[size_t(k++)] = t == bf.reuseType ? 1.0f : 0.0f;
            row[size_t(k++)] = log2p(bf.reuseDisIter);
            row[size_t(k++)] = log2p(bf.reuseDisBytes);
            row[size_t(k++)] = log2p(bf.reuseCt);
            auto ratio = [&](double v) { return bf.reuseCt > 0.5 ? v / bf.reuseCt : v * 2; };
            row[size_t(k++)] = log2p(ratio(bf.bytes));
            row[size_t(k++)] = log2p(ratio(bf.uniqueBytes));
            row[size_t(k++)] = log2p(ratio(bf.lines));
            row[size_t(k++)] = log2p(ratio(bf.uniqueLines));
            row[size_t(k++)] = log2p(bf.stride);
        }
        TB_CHECK(k == 147) << "feature layout drifted (group 2 ends at " << k << ")";

        // Group 3: arithmetic intensity curve over loop levels (innermost first).
        double opsPerIter = 0;
        for (int c = 0; c < 16; ++c) opsPerIter += oc.c[c];
        std::vector<double> xs, ys;
        for (size_t lvl = loops.size() + 1; lvl-- > 0;) {
            double iters = prodOf(loops, lvl);
            double bytes = 0;
            for (const auto& [buf, idx] : accesses) {
                te::Expr flat = lower::flatIndex(buf, idx);
                double u = 1;
                for (size_t i = lvl; i < loops.size(); ++i)
                    if (coefficientOf(flat, loops[i].var) != 0) u *= double(loops[i].extent);
                bytes += u * elem;
            }
            bytes += elem;  // the stored element
            xs.push_back(std::log2(opsPerIter * iters + 1));
            ys.push_back(opsPerIter * iters / bytes);
        }
        for (int p = 0; p < 10; ++p) {
            double v = 0;
            if (!xs.empty()) {
                double target = xs.back() * double(p + 1) / 10.0;
                size_t j = 0;
                while (j + 1 < xs.size() && xs[j + 1] < target) ++j;
                if (j + 1 < xs.size() && xs[j + 1] > xs[j]) {
                    double t = (target - xs[j]) / (xs[j + 1] - xs[j]);
                    v = ys[j] + std::clamp(t, 0.0, 1.0) * (ys[j + 1] - ys[j]);
                } else {
                    v = ys[j];
                }
            }
            row[size_t(k++)] = float(v);
        }
        // Group 4: allocation of the stored buffer (when it is an Allocate'd buffer).
        for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) {
            if (it->first.get() != st->buffer.get()) continue;
            double prod = double(it->first->spanElements());
            row[size_t(k)] = log2p(prod * elem);
            row[size_t(k + 1)] = log2p(prod);
            row[size_t(k + 2)] = log2p(double(it->second));
            row[size_t(k + 3)] = log2p(outer / std::max(double(it->second), 1.0));
            break;
        }
        k += 4;
        // Group 5.
        row[size_t(k++)] = log2p(outer);
        row[size_t(k++)] = log2p(double(loops.size()));
        row[size_t(k++)] = log2p(unrollPragma.empty() ? 0.0 : double(unrollPragma.back()));
        TB_CHECK(k == kFeatureLength) << "feature layout drifted (ends at " << k << ")";
        rows.push_back(std::move(row));
    }
};

}  // namespace

std::vector<std::vector<float>> extractPerStoreFeatures(const lower::LoweredFunc& f, int cacheLineBytes) {
    Extractor ex;
    ex.lineBytes = cacheLineBytes;
    for (const auto& b : f.args) ex.keyToBuffer[b->key.get()] = b;
    ex.visit(f.body);
    return std::move(ex.rows);
}

}  // namespace tb::cost_model
