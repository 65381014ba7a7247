// SPDX-License-Identifier: Apache-2.0
#include "engine/lower/loop_ir.h"

#include <sstream>

#include "engine/support/error.h"
#include "engine/te/printer.h"

namespace tb::lower {

using te::Expr;

int64_t BufferNode::spanElements() const {
    int64_t n = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
        if (shape[k] == 0) return 0;
        n += (shape[k] - 1) * strides[k];
    }
    return n;
}

int64_t BufferNode::elementBytes() const {
    return (dtype == te::DType::Float64 || dtype == te::DType::Int64) ? 8 : dtype == te::DType::Bool ? 1 : 4;
}
int64_t BufferNode::spanBytes() const { return spanElements() * elementBytes(); }

Buffer makeBuffer(const std::string& name, std::vector<int64_t> shape, BufferScope scope, std::vector<int64_t> strides,
                  te::DType dtype) {
    TB_CHECK(!shape.empty()) << "buffer " << name << " has no dimensions";
    for (int64_t e : shape) TB_CHECK(e > 0) << "buffer " << name << " has extent " << e;
    if (strides.empty()) {
        strides.assign(shape.size(), 1);
        for (size_t k = shape.size() - 1; k > 0; --k) strides[k - 1] = strides[k] * shape[k];
    }
    TB_CHECK(strides.size() == shape.size()) << "buffer " << name << ": " << strides.size() << " strides for "
                                             << shape.size() << " dimensions";
    auto b = std::make_shared<BufferNode>();
    b->name = name;
    b->shape = std::move(shape);
    b->strides = std::move(strides);
    b->dtype = dtype;
    b->scope = scope;
    b->key = te::placeholder(b->shape, name, dtype).op();
    return b;
}

Expr bufferLoad(const Buffer& buffer, std::vector<Expr> indices) {
    TB_CHECK(indices.size() == buffer->ndim()) << "load of " << buffer->name << " with " << indices.size()
                                               << " indices, buffer has " << buffer->ndim() << " dimensions";
    return Expr(std::make_shared<te::LoadNode>(buffer->dtype, buffer->key, 0, std::move(indices)));
}

Expr flatIndex(const Buffer& buffer, const std::vector<Expr>& indices) {
    TB_CHECK(indices.size() == buffer->ndim()) << "index count mismatch for " << buffer->name;
    Expr r = te::intImm(0);
    for (size_t k = 0; k < indices.size(); ++k) r = r + indices[k] * te::intImm(buffer->strides[k], indices[k].dtype());
    return r;
}

const char* forKindName(ForKind k) {
    switch (k) {
        case ForKind::Serial: return "serial";
        case ForKind::Parallel: return "parallel";
        case ForKind::Vectorized: return "vectorized";
        case ForKind::Unrolled: return "unrolled";
        case ForKind::ThreadBinding: return "thread_binding";
    }
    return "?";
}

const char* bufferScopeName(BufferScope s) {
    switch (s) {
        case BufferScope::Global: return "global";
        case BufferScope::Local: return "local";
        case BufferScope::Shared: return "shared";
    }
    return "?";
}

Stmt makeFor(te::Var var, Expr min, Expr extent, ForKind kind, Stmt body, std::string threadTag) {
    TB_CHECK(min && extent && body) << "incomplete For over " << var.name();
    TB_CHECK((kind == ForKind::ThreadBinding) == !threadTag.empty())
        << "For over " << var.name() << ": a thread tag goes with (and only with) a thread_binding loop";
    return std::make_shared<ForNode>(std::move(var), std::move(min), std::move(extent), kind, std::move(body),
                                     std::move(threadTag));
}
Stmt remakeFor(const ForNode* f, Expr min, Expr extent, ForKind kind, Stmt body) {
    return makeFor(f->var, std::move(min), std::move(extent), kind, std::move(body),
                   kind == ForKind::ThreadBinding ? f->threadTag : std::string());
}
Stmt makeFor(te::Var var, int64_t extent, ForKind kind, Stmt body) {
    return makeFor(std::move(var), te::intImm(0), te::intImm(extent), kind, std::move(body));
}
Stmt makeAllocate(Buffer buffer, Stmt body) {
    TB_CHECK(buffer && body) << "incomplete Allocate";
    return std::make_shared<AllocateNode>(std::move(buffer), std::move(body));
}
Stmt makeStore(Buffer buffer, std::vector<Expr> indices, Expr value) {
    TB_CHECK(indices.size() == buffer->ndim()) << "store to " << buffer->name << " with " << indices.size()
                                               << " indices, buffer has " << buffer->ndim() << " dimensions";
    TB_CHECK(value && value.dtype() == buffer->dtype)
        << "store to " << buffer->name << " of a " << (value ? te::dtypeName(value.dtype()) : "null") << " value";
    return std::make_shared<BufferStoreNode>(std::move(buffer), std::move(indices), std::move(value));
}
Stmt makeIf(Expr condition, Stmt thenCase, Stmt elseCase) {
    TB_CHECK(condition && condition.dtype() == te::DType::Bool) << "if condition must be bool";
    return std::make_shared<IfThenElseNode>(std::move(condition), std::move(thenCase), std::move(elseCase));
}
Stmt makeSeq(std::vector<Stmt> stmts) {
    std::vector<Stmt> flat;
    for (auto& s : stmts) {
        if (!s) continue;
        if (auto* q = as<SeqNode>(s)) {
            for (auto& c : q->seq) flat.push_back(c);
        } else {
            flat.push_back(std::move(s));
        }
    }
    if (flat.size() == 1) return flat[0];
    return std::make_shared<SeqNode>(std::move(flat));
}
Stmt makeAttr(std::string key, int64_t value, Stmt body) {
    return std::make_shared<AttrNode>(std::move(key), value, std::move(body));
}
Stmt makeBarrier() { return std::make_shared<BarrierNode>(); }
Stmt makePrefetch(Buffer buffer, Expr offset) {
    TB_CHECK(buffer && offset && te::isInt(offset.dtype())) << "prefetch needs a buffer and an integer offset";
    return std::make_shared<PrefetchNode>(std::move(buffer), std::move(offset));
}
Stmt makeNop() { return std::make_shared<SeqNode>(std::vector<Stmt>{}); }
bool isNop(const Stmt& s) {
    if (!s) return true;
    auto* q = as<SeqNode>(s);
    return q && q->seq.empty();
}

// ---- printer ---------------------------------------------------------------------------------

namespace {

std::string shapeText(const Buffer& b) {
    std::string s = std::string(te::dtypeName(b->dtype)) + te::shapeToString(b->shape);
    bool rowMajor = true;
    int64_t st = 1;
    for (size_t k = b->ndim(); k-- > 0;) {
        if (b->strides[k] != st) rowMajor = false;
        st *= b->shape[k];
    }
    if (!rowMajor) s += " strides" + te::shapeToString(b->strides);
    return s;
}

void printStmt(std::ostream& os, const Stmt& s, int indent) {
    const std::string pad(size_t(indent) * 2, ' ');
    if (!s) return;
    switch (s->kind) {
        case StmtKind::For: {
            auto* f = as<ForNode>(s);
            os << pad << (f->forKind == ForKind::Serial ? "for" : forKindName(f->forKind)) << " (" << f->var.name() << ", "
               << te::toString(f->min) << ", " << te::toString(f->extent);
            if (!f->threadTag.empty()) os << ", \"" << f->threadTag << '"';
            os << ") {\n";
            printStmt(os, f->body, indent + 1);
            os << pad << "}\n";
            return;
        }
        case StmtKind::Allocate: {
            auto* a = as<AllocateNode>(s);
            os << pad << "allocate " << a->buffer->name << "[" << shapeText(a->buffer) << "], "
               << bufferScopeName(a->buffer->scope) << "\n";
            printStmt(os, a->body, indent);
            return;
        }
        case StmtKind::BufferStore: {
            auto* st = as<BufferStoreNode>(s);
            os << pad << st->buffer->name << '[';
            for (size_t i = 0; i < st->indices.size(); ++i) os << (i ? ", " : "") << te::toString(st->indices[i]);
            os << "] = " << te::toString(st->value) << "\n";
            return;
        }
        case StmtKind::IfThenElse: {
            auto* i = as<IfThenElseNode>(s);
            os << pad << "if (" << te::toString(i->condition) << ") {\n";
            printStmt(os, i->thenCase, indent + 1);
            if (i->elseCase && !isNop(i->elseCase)) {
                os << pad << "} else {\n";
                printStmt(os, i->elseCase, indent + 1);
            }
            os << pad << "}\n";
            return;
        }
        case StmtKind::Seq:
            for (auto& c : as<SeqNode>(s)->seq) printStmt(os, c, indent);
            return;
        case StmtKind::Attr: {
            auto* a = as<AttrNode>(s);
            os << pad << "// attr " << a->key << " = " << a->value << "\n";
            printStmt(os, a->body, indent);
            return;
        }
        case StmtKind::Barrier: os << pad << "barrier\n"; return;
        case StmtKind::Prefetch: {
            auto* p = as<PrefetchNode>(s);
            os << pad << "prefetch(" << p->buffer->name << ", " << te::toString(p->offset) << ")\n";
            return;
        }
    }
}

}  // namespace

std::string toString(const Stmt& s, int indent) {
    std::ostringstream os;
    printStmt(os, s, indent);
    return os.str();
}

std::string LoweredFunc::print() const {
    std::ostringstream os;
    os << "// kernel " << name << "(";
    for (size_t i = 0; i < args.size(); ++i) os << (i ? ", " : "") << args[i]->name << ": " << shapeText(args[i]);
    os << ")\n";
    printStmt(os, body, 0);
    return os.str();
}

// ---- traversal -------------------------------------------------------------------------------

Stmt substitute(const Stmt& s, const std::vector<std::pair<te::Var, Expr>>& map) {
    if (!s || map.empty()) return s;
    auto sub = [&](const Expr& e) { return e ? te::substitute(e, map) : e; };
    switch (s->kind) {
        case StmtKind::For: {
            auto* f = as<ForNode>(s);
            return remakeFor(f, sub(f->min), sub(f->extent), f->forKind, substitute(f->body, map));
        }
        case StmtKind::Allocate: {
            auto* a = as<AllocateNode>(s);
            return makeAllocate(a->buffer, substitute(a->body, map));
        }
        case StmtKind::BufferStore: {
            auto* st = as<BufferStoreNode>(s);
            std::vector<Expr> idx;
            for (auto& e : st->indices) idx.push_back(sub(e));
            return makeStore(st->buffer, std::move(idx), sub(st->value));
        }
        case StmtKind::IfThenElse: {
            auto* i = as<IfThenElseNode>(s);
            return makeIf(sub(i->condition), substitute(i->thenCase, map), substitute(i->elseCase, map));
        }
        case StmtKind::Seq: {
            std::vector<Stmt> v;
            for (auto& c : as<SeqNode>(s)->seq) v.push_back(substitute(c, map));
            return std::make_shared<SeqNode>(std::move(v));
        }
        case StmtKind::Attr: {
            auto* a = as<AttrNode>(s);
            return makeAttr(a->key, a->value, substitute(a->body, map));
        }
        case StmtKind::Barrier: return s;
        case StmtKind::Prefetch: {
            auto* p = as<PrefetchNode>(s);
            return makePrefetch(p->buffer, sub(p->offset));
        }
    }
    return s;
}

void preOrderVisit(const Stmt& s, const std::function<void(const Stmt&)>& f) {
    if (!s) return;
    f(s);
    switch (s->kind) {
        case StmtKind::For: preOrderVisit(as<ForNode>(s)->body, f); break;
        case StmtKind::Allocate: preOrderVisit(as<AllocateNode>(s)->body, f); break;
        case StmtKind::BufferStore: break;
        case StmtKind::IfThenElse:
            preOrderVisit(as<IfThenElseNode>(s)->thenCase, f);
            preOrderVisit(as<IfThenElseNode>(s)->elseCase, f);
            break;
        case StmtKind::Seq:
            for (auto& c : as<SeqNode>(s)->seq) preOrderVisit(c, f);
            break;
        case StmtKind::Attr: preOrderVisit(as<AttrNode>(s)->body, f); break;
        case StmtKind::Barrier: break;
        case StmtKind::Prefetch: break;
    }
}

bool usesVar(const Expr& e, const te::Var& v) {
    bool found = false;
    te::postOrderVisit(e, [&](const Expr& x) {
        if (x.same(v)) found = true;
    });
    return found;
}

}  // namespace tb::lower
