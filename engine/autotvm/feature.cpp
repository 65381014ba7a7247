// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/feature.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "engine/lower/lower_state.h"
#include "engine/lower/simplify.h"
#include "engine/support/error.h"

namespace tb::autotvm {

FeatureType featureTypeFromName(const std::string& name) {
    if (name == "knob") return FeatureType::Knob;
    if (name == "itervar") return FeatureType::Itervar;
    if (name == "curve") return FeatureType::Curve;
    throw UserError("invalid feature type '" + name + "' (knob, itervar or curve)");
}

const char* featureTypeName(FeatureType type) {
    switch (type) {
        case FeatureType::Knob: return "knob";
        case FeatureType::Itervar: return "itervar";
        case FeatureType::Curve: return "curve";
    }
    return "?";
}

namespace {

// ---- the loop tree TVM's ana_lower would give (see the file comment of feature.h) -----------------

// A loop or a store of the full tree; `children` in program order.
struct TreeNode {
    bool isLoop = false;
    std::string name;                       // loop: the iterator's name
    std::int64_t extent = 1;                // loop
    LoopAnnotation ann = LoopAnnotation::Serial;
    const lower::ForNode* irLoop = nullptr;  // matched IR loop (null for a loop of length 1)
    const lower::BufferStoreNode* irStore = nullptr;
    std::vector<int> children;
};

LoopAnnotation annotationOf(IteratorAnnotation a) {
    switch (a) {
        case IteratorAnnotation::Unroll: return LoopAnnotation::Unrolled;
        case IteratorAnnotation::Vectorize: return LoopAnnotation::Vectorized;
        case IteratorAnnotation::Parallel: return LoopAnnotation::Parallel;
        case IteratorAnnotation::VThread: return LoopAnnotation::VirtualThread;
        case IteratorAnnotation::BlockX: return LoopAnnotation::BlockX;
        case IteratorAnnotation::BlockY: return LoopAnnotation::BlockY;
        case IteratorAnnotation::BlockZ: return LoopAnnotation::BlockZ;
        case IteratorAnnotation::ThreadX: return LoopAnnotation::ThreadX;
        case IteratorAnnotation::ThreadY: return LoopAnnotation::ThreadY;
        case IteratorAnnotation::ThreadZ: return LoopAnnotation::ThreadZ;
        default: return LoopAnnotation::Serial;
    }
}

class TreeBuilder {
public:
    explicit TreeBuilder(const State& state) : m_state(state) { m_nodes.emplace_back(); }

    std::vector<TreeNode> build() {
        const auto& stages = m_state.stages();
        for (size_t i = 0; i < stages.size(); ++i)
            if (computed(int(i)) && !attached(int(i))) emitStage(int(i), 0);
        return std::move(m_nodes);
    }

private:
    bool computed(int id) const {
        const Stage& s = m_state.stage(id);
        return s.opType == StageKind::Compute && s.computeAt != ComputeAtKind::Inlined;
    }
    bool attached(int id) const {
        return m_state.stage(id).computeAt == ComputeAtKind::Iter && m_state.attachMap().attachedAt(id).has_value();
    }
    int add(int parent, TreeNode n) {
        m_nodes.push_back(std::move(n));
        const int id = int(m_nodes.size()) - 1;
        m_nodes[size_t(parent)].children.push_back(id);
        return id;
    }
    int addLoop(int parent, const Iterator& it, const std::string& suffix = "") {
        TreeNode n;
        n.isLoop = true;
        n.name = it.name + suffix;
        n.extent = it.range ? it.range->extent : 1;
        n.ann = annotationOf(it.annotation);
        return add(parent, std::move(n));
    }
    // lowerState's emitStage: loops outermost first, attached stages first inside their loop, a
    // reduction's init nest (its spatial loops below the first reduction loop) before that loop.
    void emitStage(int id, int parent) {
        const Stage& s = m_state.stage(id);
        const bool reduction = !s.op->body.empty() && s.op->body[0].kind() == te::ExprKind::Reduce;
        size_t beginLoop = s.iters.size();
        if (reduction)
            for (size_t j = 0; j < s.iters.size(); ++j)
                if (s.iters[j].kind == IteratorKind::Reduction || s.iters[j].kind == IteratorKind::Mixed) {
                    beginLoop = j;
                    break;
                }
        int cur = parent;
        for (size_t j = 0; j <= s.iters.size(); ++j) {
            if (reduction && j == beginLoop) {
                int init = cur;
                for (size_t k = beginLoop; k < s.iters.size(); ++k)
                    if (s.iters[k].kind != IteratorKind::Reduction) init = addLoop(init, s.iters[k], ".init");
                add(init, TreeNode{});
            }
            if (j == s.iters.size()) break;
            cur = addLoop(cur, s.iters[j]);
            std::vector<int> att = m_state.attachMap().attachedStages(IterKey(id, int(j)));
            std::sort(att.begin(), att.end());
            for (int a : att) emitStage(a, cur);
        }
        add(cur, TreeNode{});
    }

    const State& m_state;
    std::vector<TreeNode> m_nodes;  // [0] is the root
};

// The IR's loops and stores in program order.
void collectIr(const lower::Stmt& s, std::vector<const lower::StmtNode*>& out) {
    if (!s) return;
    switch (s->kind) {
        case lower::StmtKind::For: {
            // A GPU launch loop of length 1 stays in the IR (lower_gpu.h); the State's tree has no
            // row to match it with, as for any loop of length 1.
            const auto* f = lower::as<lower::ForNode>(s);
            std::int64_t extent = 0;
            if (!(f->forKind == lower::ForKind::ThreadBinding && te::isConstInt(f->extent, &extent) && extent == 1))
                out.push_back(s.get());
            collectIr(f->body, out);
            break;
        }
        case lower::StmtKind::BufferStore: out.push_back(s.get()); break;
        case lower::StmtKind::Allocate: collectIr(lower::as<lower::AllocateNode>(s)->body, out); break;
        case lower::StmtKind::Attr: collectIr(lower::as<lower::AttrNode>(s)->body, out); break;
        case lower::StmtKind::IfThenElse: {
            const auto* n = lower::as<lower::IfThenElseNode>(s);
            collectIr(n->thenCase, out);
            collectIr(n->elseCase, out);
            break;
        }
        case lower::StmtKind::Seq:
            for (const auto& c : lower::as<lower::SeqNode>(s)->seq) collectIr(c, out);
            break;
        case lower::StmtKind::Barrier: break;  // a GPU barrier is neither a loop nor a store
        case lower::StmtKind::Prefetch: break;  // a cache hint, added after features are taken
    }
}

// Matches the tree's loops of length > 1 and stores with the IR's, both in pre-order.
void matchIr(std::vector<TreeNode>& tree, const lower::LoweredFunc& f) {
    std::vector<const lower::StmtNode*> ir;
    collectIr(f.body, ir);
    size_t k = 0;
    std::vector<int> stack{0};
    std::vector<int> order;
    while (!stack.empty()) {  // pre-order
        const int n = stack.back();
        stack.pop_back();
        order.push_back(n);
        const auto& ch = tree[size_t(n)].children;
        for (size_t c = ch.size(); c-- > 0;) stack.push_back(ch[c]);
    }
    for (int n : order) {
        TreeNode& t = tree[size_t(n)];
        if (n == 0 || (t.isLoop && t.extent == 1)) continue;
        TB_CHECK(k < ir.size()) << "itervar features: the lowered IR has fewer loops and stores than the State";
        const lower::StmtNode* s = ir[k++];
        if (t.isLoop) {
            const auto* loop = dynamic_cast<const lower::ForNode*>(s);
            std::int64_t extent = 0;
            TB_CHECK(loop && te::isConstInt(loop->extent, &extent) && extent == t.extent &&
                     loop->var.name().rfind(t.name, 0) == 0)
                << "itervar features: the lowered IR does not have loop " << t.name << " (length " << t.extent
                << ") where the State has it";
            t.irLoop = loop;
        } else {
            t.irStore = dynamic_cast<const lower::BufferStoreNode*>(s);
            TB_CHECK(t.irStore) << "itervar features: the lowered IR has a loop where the State has a store";
        }
    }
    TB_CHECK(k == ir.size()) << "itervar features: the lowered IR has more loops and stores than the State";
}

// ---- TVM TouchExtractor over the full tree ------------------------------------------------------

int parallelLevel(LoopAnnotation a) {
    switch (a) {
        case LoopAnnotation::BlockX: case LoopAnnotation::BlockY: case LoopAnnotation::BlockZ: return 2;
        case LoopAnnotation::ThreadX: case LoopAnnotation::ThreadY: case LoopAnnotation::ThreadZ:
        case LoopAnnotation::Parallel: return 1;
        default: return 0;
    }
}

// The operands of e in TVM's ExprVisitor order (binary: a, b; select: cond, t, f; loads: indices).
template <class F>
void forEachOperand(const te::Expr& e, F&& f) {
    using K = te::ExprKind;
    switch (e.kind()) {
        case K::IntImm: case K::FloatImm: case K::Var: case K::Reduce: return;
        case K::Cast: f(e.as<te::CastNode>()->value); return;
        case K::Not: f(e.as<te::NotNode>()->a); return;
        case K::Select: {
            const auto* n = e.as<te::SelectNode>();
            f(n->cond);
            f(n->t);
            f(n->f);
            return;
        }
        case K::Call:
            for (const auto& a : e.as<te::CallNode>()->args) f(a);
            return;
        case K::Load:
            for (const auto& a : e.as<te::LoadNode>()->indices) f(a);
            return;
        default: {
            const auto* b = e.as<te::BinaryNode>();
            f(b->a);
            f(b->b);
        }
    }
}

// TVM IndexParser: a variable's stride is the constant it is multiplied by (`v * c`), else 1; only
// its first occurrence counts. (A `c * v` is read the same way; TVM's canonical form has v first.)
class IndexParser {
public:
    std::unordered_map<const te::ExprNode*, std::int64_t> strides;
    void visit(const te::Expr& e) {
        using K = te::ExprKind;
        if (e.kind() == K::Var) {
            if (!strides.count(e.get())) {
                strides[e.get()] = m_nextStride;
                m_nextStride = 1;
            }
            return;
        }
        if (e.kind() == K::Mul) {
            const auto* b = e.as<te::BinaryNode>();
            std::int64_t c = 0;
            if (b->a.kind() == K::Var && te::isConstInt(b->b, &c)) m_nextStride = c;
            else if (b->b.kind() == K::Var && te::isConstInt(b->a, &c)) m_nextStride = c;
        }
        forEachOperand(e, [&](const te::Expr& x) { visit(x); });
    }

private:
    std::int64_t m_nextStride = 1;
};

class TouchExtractor {
public:
    TouchExtractor(const std::vector<TreeNode>& tree, const lower::LoweredFunc& f) : m_tree(tree) {
        for (const auto& b : f.args) m_buffers[b->key.get()] = b;
        lower::preOrderVisit(f.body, [&](const lower::Stmt& s) {
            if (const auto* a = lower::as<lower::AllocateNode>(s)) m_buffers[a->buffer->key.get()] = a->buffer;
        });
    }

    std::vector<ItervarFeature> run() {
        visitNode(0);
        return std::move(m_features);
    }

private:
    void visitNode(int n) {
        const TreeNode& t = m_tree[size_t(n)];
        if (n != 0 && t.isLoop) {
            enterItervar(t);
            for (int c : t.children) visitNode(c);
            exitItervar();
        } else if (n != 0) {
            visitStore(*t.irStore);
        } else {
            for (int c : t.children) visitNode(c);
        }
    }

    void enterItervar(const TreeNode& t) {
        m_stack.push_back(int(m_features.size()));
        m_topdown *= t.extent;
        ItervarFeature f;
        f.var = t.irLoop ? t.irLoop->var.name() : t.name;
        f.length = t.extent;
        f.nestLevel = int(m_stack.size());
        f.ann = t.irLoop ? forAnnotation(t.irLoop->forKind) : t.ann;
        f.topdownProduct = m_topdown;
        m_vars.push_back(t.irLoop ? t.irLoop->var.get() : nullptr);
        m_features.push_back(std::move(f));
    }

    static LoopAnnotation forAnnotation(lower::ForKind k) {
        switch (k) {
            case lower::ForKind::Parallel: return LoopAnnotation::Parallel;
            case lower::ForKind::Vectorized: return LoopAnnotation::Vectorized;
            case lower::ForKind::Unrolled: return LoopAnnotation::Unrolled;
            default: return LoopAnnotation::Serial;
        }
    }

    // TVM TouchExtractor::ExitItervar_.
    void exitItervar() {
        const int v = m_stack.back();
        ItervarFeature& fv = m_features[size_t(v)];
        for (const auto& [buf, pat] : fv.touch) {
            for (int s : m_stack) {
                TouchPattern& p = m_features[size_t(s)].touch.at(buf);
                if (pat.stride != 0) p.count *= fv.length;
                else p.reuse *= fv.length;
            }
        }
        m_stack.pop_back();
        if (fv.length != 0) m_topdown /= fv.length;
        std::int64_t bottomup = -1;
        for (const auto& [buf, pat] : fv.touch) bottomup = std::max(bottomup, pat.count * pat.reuse);
        fv.bottomupProduct = bottomup;
        // the outermost loop below a parallel level hands its count and reuse up as the base
        const int level = parallelLevel(fv.ann);
        if (!m_stack.empty() && parallelLevel(m_features[size_t(m_stack.back())].ann) == level + 1) {
            for (const auto& [buf, pat] : fv.touch)
                for (int s : m_stack) {
                    if (parallelLevel(m_features[size_t(s)].ann) != level + 1) continue;
                    TouchPattern& p = m_features[size_t(s)].touch.at(buf);
                    p.threadReuse = -pat.reuse;
                    p.threadCount = -pat.count;
                }
        }
        for (auto& [buf, pat] : fv.touch)
            if (pat.threadCount < 0) {
                pat.threadCount = pat.count / -pat.threadCount;
                pat.threadReuse = pat.reuse / -pat.threadReuse;
            }
    }

    // TVM TouchExtractor::EnterMem_ on the flattened, simplified index.
    void enterMem(const lower::Buffer& buf, const std::vector<te::Expr>& indices) {
        const std::string name = buf->name + "_" + std::to_string(m_bufferCounter[buf->name]++);
        IndexParser parser;
        parser.visit(lower::simplify(lower::flatIndex(buf, indices)));
        for (size_t i = 0; i < m_stack.size(); ++i) {
            const int s = m_stack[i];
            TouchPattern p;
            if (const te::ExprNode* var = m_vars[size_t(s)]) {
                auto it = parser.strides.find(var);
                if (it != parser.strides.end()) p.stride = it->second;
            }
            m_features[size_t(s)].touch[name] = p;
        }
    }

    void visitStore(const lower::BufferStoreNode& st) {
        enterMem(st.buffer, st.indices);
        visitExpr(st.value);
        for (const auto& i : st.indices) visitExpr(i);
    }

    // StmtExprVisitor order: the node, then its operands; loads are accesses, float arithmetic is
    // counted on the innermost loop.
    void visitExpr(const te::Expr& e) {
        using K = te::ExprKind;
        if (e.kind() == K::Load) {
            const auto* l = e.as<te::LoadNode>();
            auto it = m_buffers.find(l->op.get());
            TB_CHECK(it != m_buffers.end()) << "itervar features: a load of an unknown buffer " << l->op->name;
            enterMem(it->second, l->indices);
        } else if (te::isBinaryKind(e.kind()) && te::isFloat(e.dtype()) && !m_stack.empty()) {
            ItervarFeature& f = m_features[size_t(m_stack.back())];
            if (e.kind() == K::Add || e.kind() == K::Sub) ++f.addCt;
            else if (e.kind() == K::Mul) ++f.mulCt;
            else if (e.kind() == K::Div || e.kind() == K::Mod || e.kind() == K::FloorDiv || e.kind() == K::FloorMod)
                ++f.divCt;
        }
        forEachOperand(e, [&](const te::Expr& x) { visitExpr(x); });
    }

    const std::vector<TreeNode>& m_tree;
    std::unordered_map<const te::OperationNode*, lower::Buffer> m_buffers;
    std::vector<ItervarFeature> m_features;      // in order of first occurrence
    std::vector<const te::ExprNode*> m_vars;     // per feature: the loop variable (null: length 1)
    std::vector<int> m_stack;
    std::int64_t m_topdown = 1;
    std::map<std::string, int> m_bufferCounter;
};

// TVM's take_log transform.
float trans(std::int64_t x, bool takeLog) {
    if (!takeLog) return float(x);
    if (x < 0) return float(-std::log2(double(-x + 1)));
    return float(std::log2(double(x + 1)));
}

// config.get_other_option().values()
std::vector<float> otherOptionValues(const ConfigEntity& config) {
    std::vector<float> out;
    for (const auto& [name, e] : config.knobs)
        if (const auto* o = std::get_if<OtherOptionEntity>(&e)) {
            const auto& v = o->val;
            if (v.is_boolean()) out.push_back(v.get<bool>() ? 1.f : 0.f);
            else if (v.is_number()) out.push_back(v.get<float>());
            else out.push_back(0.f);  // a string option (numpy would refuse it in TVM)
        }
    return out;
}

// TVM space.py _ann_to_number (the one-hot positions of annotations).
int annNumber(const std::string& ann) {
    static const char* kAnns[] = {"none", "vec", "unroll", "blockIdx.x", "blockIdx.y", "blockIdx.z",
                                  "threadIdx.x", "threadIdx.y", "threadIdx.z", "vthread", "fuse"};
    for (int i = 0; i < int(std::size(kAnns)); ++i)
        if (ann == kAnns[i]) return i;
    return 0;
}
constexpr int kNumAnns = 11;

}  // namespace

std::vector<ItervarFeature> itervarFeatures(const TemplateInstance& inst) {
    // A GPU template's program (loops bound to blockIdx / threadIdx) is lowered with its bindings,
    // as TVM's ana_lower keeps them.
    bool gpu = false;
    for (const auto& st : inst.state.stages())
        for (const auto& it : st->iters) gpu = gpu || isThreadBinding(it.annotation);
    const lower::LoweredFunc f =
        gpu ? lower::lowerStateThreaded(*inst.dag, inst.state) : lower::lowerState(*inst.dag, inst.state);
    std::vector<TreeNode> tree = TreeBuilder(inst.state).build();
    matchIr(tree, f);
    return TouchExtractor(tree, f).run();
}

std::vector<float> itervarFeatureFlatten(const TemplateInstance& inst, bool takeLog) {
    std::vector<float> out;
    for (const ItervarFeature& f : itervarFeatures(inst)) {
        out.push_back(trans(f.length, takeLog));
        out.push_back(float(f.nestLevel));
        out.push_back(trans(f.topdownProduct, takeLog));
        out.push_back(trans(f.bottomupProduct, takeLog));
        for (int i = 0; i < kNumLoopAnnotations; ++i) out.push_back(i == int(f.ann) ? 1.f : 0.f);
        out.push_back(trans(f.addCt, takeLog));
        out.push_back(trans(f.mulCt, takeLog));
        out.push_back(trans(f.divCt, takeLog));
        for (const auto& [buf, p] : f.touch)
            for (std::int64_t v : {p.stride, p.mod, p.count, p.reuse, p.threadCount, p.threadReuse})
                out.push_back(trans(v, takeLog));
    }
    return out;
}

std::vector<float> curveSampleFeatureFlatten(const TemplateInstance& inst, int sampleN) {
    const std::vector<ItervarFeature> vars = itervarFeatures(inst);
    int maxDepth = 0;
    for (const auto& f : vars) maxDepth = std::max(maxDepth, f.nestLevel);
    // the buffers accessed at the deepest level, one per raw name (`A_1` -> `A`, `A.local` -> `A`),
    // the last loop's first
    std::set<std::string> innermost, added;
    for (auto it = vars.rbegin(); it != vars.rend(); ++it) {
        if (it->nestLevel != maxDepth) continue;
        for (const auto& [buf, p] : it->touch) {
            std::string raw = buf.substr(0, buf.rfind('_'));
            raw = raw.substr(0, raw.find('.'));
            if (added.insert(raw).second) innermost.insert(buf);
        }
    }
    std::map<std::string, std::vector<double>> reuse, count, topdown;
    for (const auto& b : innermost) reuse[b] = count[b] = topdown[b] = {0.0};
    for (const auto& f : vars)
        for (const auto& [buf, p] : f.touch) {
            if (!innermost.count(buf)) continue;
            reuse[buf].push_back(std::log2(double(p.reuse)));
            count[buf].push_back(std::log2(double(p.count)));
            topdown[buf].push_back(std::log2(double(f.topdownProduct)));
        }
    std::vector<float> out;
    auto sample = [&](const std::vector<double>& x, const std::vector<double>& y) {
        for (int i = 0; i < sampleN; ++i) {
            const double xx = i;
            for (int j = int(x.size()) - 1; j >= 0; --j)
                if (xx > x[size_t(j)] - 1e-6) {
                    out.push_back(float(y[size_t(j)]));
                    out.push_back(float(xx - x[size_t(j)]));
                    break;
                }
        }
    };
    for (const auto& b : innermost) {
        std::vector<double>& c = count[b];
        std::vector<double>& r = reuse[b];
        std::vector<double>& t = topdown[b];
        std::sort(c.begin(), c.end());
        std::sort(r.begin(), r.end());
        std::sort(t.begin(), t.end());
        sample(c, r);
        sample(r, c);
        sample(c, t);
        sample(t, c);
    }
    return out;
}

std::vector<float> knobFeatures(const ConfigSpace& space, const ConfigEntity& c) {
    std::vector<float> f;
    for (size_t k = 0; k < c.knobs.size(); ++k) {
        const Entity& e = c.knobs[k].second;
        if (const auto* s = std::get_if<SplitEntity>(&e)) {
            for (auto v : s->size) f.push_back(float(v));
        } else if (const auto* r = std::get_if<ReorderEntity>(&e)) {
            for (int v : r->perm) f.push_back(float(v));
        } else if (const auto* a = std::get_if<AnnotateEntity>(&e)) {
            for (const auto& ann : a->anns) {
                std::vector<float> oneHot(kNumAnns, 0.f);
                oneHot[size_t(annNumber(ann))] = 1.f;
                f.insert(f.end(), oneHot.begin(), oneHot.end());
            }
            for (int v : a->anchors) f.push_back(float(v));
        } else {
            const auto& v = std::get<OtherOptionEntity>(e).val;
            // TVM appends the value itself (bools and numbers); a string knob gets its position.
            if (v.is_number() || v.is_boolean()) f.push_back(v.is_boolean() ? float(v.get<bool>()) : v.get<float>());
            else f.push_back(float(space.pointToKnob(c.index)[k]));
        }
    }
    return f;
}

std::vector<float> configFeatures(const Task& task, const ConfigEntity& config, FeatureType type) {
    if (type == FeatureType::Knob) return knobFeatures(task.space, config);
    const TemplateInstance inst = task.instantiate(config);
    std::vector<float> f = type == FeatureType::Itervar ? itervarFeatureFlatten(inst, true)
                                                        : curveSampleFeatureFlatten(inst, 20);
    const std::vector<float> other = otherOptionValues(config);
    f.insert(f.end(), other.begin(), other.end());
    return f;
}

}  // namespace tb::autotvm
