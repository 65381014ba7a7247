// SPDX-License-Identifier: Apache-2.0
// Lowering of loop States (engine/lower/lower_state.h), checked numerically: every lowered state is
// compiled for the host, run on random inputs and compared with the reference interpreter. Cases:
// TVM's logged matmul_add schedule, TVM's resnet-18 conv2d records on topi DAGs, random states of
// the sketch policy (fusion, cache_write and rfactor sketches, and mutations of them), non-dividing
// splits, compute_at of pad_temp into a tiled conv, inlining, and the errors.
#include <QtTest>

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/target.h"
#include "engine/lower/lower_state.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/search/cost_model.h"
#include "engine/search/sketch_policy.h"
#include "engine/support/error.h"
#include "engine/te/compute_dag.h"
#include "engine/te/interpreter.h"
#include "engine/te/printer.h"
#include "engine/topi/broadcast.h"
#include "engine/topi/nn.h"
#include "engine/topi/nn/conv2d.h"
#include "tests/engine/test_measure_util.h"
#include "tests/engine/test_util.h"

using namespace tb;
using namespace tb::te;
using nlohmann::json;
using namespace tb::test;

Q_DECLARE_METATYPE(std::shared_ptr<const tb::te::ComputeDAG>)

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// ---- DAGs -------------------------------------------------------------------------------------

// A plain matmul (its output is the DAG's output, so the sketches use cache_write or rfactor).
std::shared_ptr<const ComputeDAG> matmul(int64_t n, int64_t l, int64_t m) {
    auto A = placeholder({n, l}, "A");
    auto B = placeholder({l, m}, "B");
    auto k = reduceAxis(l, "k");
    auto C = compute({n, m}, {"i", "j"}, [&](const std::vector<Var>& v) {
        return sum(A(v[0], k.var) * B(k.var, v[1]), {k});
    }, "matmul");
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{A, B, C});
}

// conv2d_nhwc [+ bias add + relu] from topi, as Relay fuses resnet-18's layers.
std::shared_ptr<const ComputeDAG> topiConv(int64_t h, int64_t c, int64_t k, int64_t r, int64_t stride, int64_t pad,
                                           bool biasRelu) {
    auto p0 = placeholder({1, h, h, c}, "p0");
    auto p1 = placeholder({r, r, c, k}, "p1");
    Tensor out = topi::nn::conv2dNhwc(p0, p1, {stride, stride}, {pad, pad});
    if (biasRelu) out = topi::relu(topi::add(out, placeholder({1, 1, 1, k}, "p2")));
    return std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({out}));
}

// A small NHWC conv2d (3x3, pad 1) + relu: data(0) pad_temp(1) kernel(2) conv2d_nhwc(3) T_relu(4).
std::shared_ptr<const ComputeDAG> convRelu(int64_t h = 8) {
    auto data = placeholder({1, h, h, 4}, "data");
    auto kernel = placeholder({3, 3, 4, 8}, "kernel");
    auto padT = compute({1, h + 2, h + 2, 4}, axisNames(4, "i"), [&](const std::vector<Var>& v) {
        Expr cond = logicalAnd(logicalAnd(logicalAnd(v[1] >= Expr(1), v[1] < Expr(int(h + 1))), v[2] >= Expr(1)),
                               v[2] < Expr(int(h + 1)));
        return ifThenElse(cond, data(v[0], v[1] - Expr(1), v[2] - Expr(1), v[3]), 0.0f);
    }, "pad_temp");
    auto ry = reduceAxis(3, "ry"), rx = reduceAxis(3, "rx"), rc = reduceAxis(4, "rc");
    auto conv = compute({1, h, h, 8}, {"nn", "yy", "xx", "ff"}, [&](const std::vector<Var>& v) {
        return sum(padT(v[0], v[1] + ry.var, v[2] + rx.var, rc.var) * kernel(ry.var, rx.var, rc.var, v[3]), {ry, rx, rc});
    }, "conv2d_nhwc");
    auto relu = compute({1, h, h, 8}, axisNames(4, "ax"), [&](const std::vector<Var>& v) {
        return max(conv(v[0], v[1], v[2], v[3]), 0.0f);
    }, "T_relu");
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{data, kernel, relu});
}

// B[i] = max_k A[i, k] (a non-Sum combiner), A is 6 x 40.
std::shared_ptr<const ComputeDAG> rowMax() {
    auto A = placeholder({6, 40}, "A");
    auto k = reduceAxis(40, "k");
    auto B = compute({6}, {"i"}, [&](const std::vector<Var>& v) { return reduceMax(A(v[0], k.var), {k}); }, "B");
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{A, B});
}

std::vector<Step> steps(const char* text) { return stepsFromJson(json::parse(text)); }

std::vector<std::string> recordLines(const char* path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#' && line[0] != ' ') lines.push_back(line);
    return lines;
}

// ---- running ----------------------------------------------------------------------------------

// ---- a checking interpreter of the loop IR --------------------------------------------------
// Runs a LoweredFunc statement by statement and throws on any load or store outside its buffer
// (per dimension) and on any read of an element that nothing wrote (an attached stage's region
// that misses what its consumer reads, a missing init, ...). Compiled code would not notice either.
class IrChecker {
public:
    std::vector<std::vector<float>> run(const lower::LoweredFunc& f, const ComputeDAG& dag,
                                        const std::vector<te::Buffer>& inputs) {
        const auto ins = dag.inputs();
        size_t in = 0;
        for (size_t i = 0; i < f.args.size(); ++i) {
            Storage& st = m_bufs[f.args[i]->key.get()];
            st.buf = f.args[i].get();
            const bool isInput = std::find(ins.begin(), ins.end(), dag.tensors()[i]) != ins.end();
            st.data.assign(size_t(f.args[i]->spanElements()), 0.f);
            st.written.assign(st.data.size(), isInput);
            if (isInput) st.data = inputs[in++].data;
        }
        exec(f.body);
        std::vector<std::vector<float>> outs;
        for (size_t i = 0; i < f.args.size(); ++i) {
            if (std::find(ins.begin(), ins.end(), dag.tensors()[i]) != ins.end()) continue;
            Storage& st = m_bufs[f.args[i]->key.get()];
            for (size_t k = 0; k < st.written.size(); ++k)
                if (!st.written[k]) fail("output " + st.buf->name + " element " + std::to_string(k) + " is never written");
            outs.push_back(st.data);
        }
        return outs;
    }
    int64_t accesses = 0;

private:
    struct Storage {
        const lower::BufferNode* buf = nullptr;
        std::vector<float> data;
        std::vector<char> written;
    };
    [[noreturn]] static void fail(const std::string& what) { throw std::runtime_error("IR check: " + what); }

    size_t offset(const lower::BufferNode* b, const std::vector<Expr>& idx) {
        ++accesses;
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d) {
            const int64_t v = evalI(idx[d]);
            if (v < 0 || v >= b->shape[d])
                fail("index " + std::to_string(v) + " of dimension " + std::to_string(d) + " of " + b->name +
                     " (extent " + std::to_string(b->shape[d]) + "): " + te::toString(idx[d]));
            off += v * b->strides[d];
        }
        return size_t(off);
    }
    Storage& storage(const te::OperationNode* key) {
        auto it = m_bufs.find(key);
        if (it == m_bufs.end() || !it->second.buf) fail("access to " + key->name + ", which is not in scope");
        return it->second;
    }
    double load(const te::LoadNode* n) {
        Storage& st = storage(n->op.get());
        const size_t o = offset(st.buf, n->indices);
        if (!st.written[o]) fail("read of an element of " + st.buf->name + " that was never written");
        return st.data[o];
    }
    int64_t evalI(const Expr& e) {
        if (isFloat(e.dtype())) fail("float expression where an integer is needed: " + te::toString(e));
        switch (e.kind()) {
            case ExprKind::IntImm: return e.as<te::IntImmNode>()->value;
            case ExprKind::Var: {
                auto it = m_vars.find(e.get());
                if (it == m_vars.end()) fail("unbound variable " + te::toString(e));
                return it->second;
            }
            case ExprKind::Not: return !evalI(e.as<te::NotNode>()->a);
            case ExprKind::Select: {
                auto* n = e.as<te::SelectNode>();
                return evalI(n->cond) ? evalI(n->t) : evalI(n->f);
            }
            case ExprKind::Cast: {
                const Expr& v = e.as<te::CastNode>()->value;
                if (isFloat(v.dtype())) return e.dtype() == DType::Bool ? evalF(v) != 0 : int64_t(evalF(v));
                return e.dtype() == DType::Bool ? evalI(v) != 0 : evalI(v);
            }
            case ExprKind::Call: {
                auto* n = e.as<te::CallNode>();
                if (n->op == "tir.if_then_else") return evalI(n->args[0]) ? evalI(n->args[1]) : evalI(n->args[2]);
                fail("integer call " + n->op);
            }
            case ExprKind::Load: return int64_t(load(static_cast<const te::LoadNode*>(e.get())));
            default: break;
        }
        auto* b = static_cast<const te::BinaryNode*>(e.get());
        if (e.kind() == ExprKind::And) return evalI(b->a) && evalI(b->b);
        if (e.kind() == ExprKind::Or) return evalI(b->a) || evalI(b->b);
        if (isFloat(b->a.dtype())) {
            const double x = evalF(b->a), y = evalF(b->b);
            switch (e.kind()) {
                case ExprKind::EQ: return x == y;
                case ExprKind::NE: return x != y;
                case ExprKind::LT: return x < y;
                case ExprKind::LE: return x <= y;
                case ExprKind::GT: return x > y;
                case ExprKind::GE: return x >= y;
                default: fail("float operands for " + te::toString(e));
            }
        }
        const int64_t x = evalI(b->a), y = evalI(b->b);
        auto fdiv = [&](int64_t a, int64_t c) {
            if (c == 0) fail("division by zero in " + te::toString(e));
            int64_t q = a / c;
            if ((a % c != 0) && ((a < 0) != (c < 0))) --q;
            return q;
        };
        switch (e.kind()) {
            case ExprKind::Add: return x + y;
            case ExprKind::Sub: return x - y;
            case ExprKind::Mul: return x * y;
            case ExprKind::Div: if (y == 0) fail("division by zero"); return x / y;
            case ExprKind::Mod: if (y == 0) fail("division by zero"); return x % y;
            case ExprKind::FloorDiv: return fdiv(x, y);
            case ExprKind::FloorMod: return x - fdiv(x, y) * y;
            case ExprKind::Min: return std::min(x, y);
            case ExprKind::Max: return std::max(x, y);
            case ExprKind::EQ: return x == y;
            case ExprKind::NE: return x != y;
            case ExprKind::LT: return x < y;
            case ExprKind::LE: return x <= y;
            case ExprKind::GT: return x > y;
            case ExprKind::GE: return x >= y;
            default: fail("integer expression " + te::toString(e));
        }
    }
    double evalF(const Expr& e) {
        if (!isFloat(e.dtype())) return double(evalI(e));
        switch (e.kind()) {
            case ExprKind::FloatImm: return e.as<te::FloatImmNode>()->value;
            case ExprKind::Select: {
                auto* n = e.as<te::SelectNode>();
                return evalI(n->cond) ? evalF(n->t) : evalF(n->f);
            }
            case ExprKind::Cast: {
                const Expr& v = e.as<te::CastNode>()->value;
                return e.dtype() == DType::Float32 ? double(float(evalF(v))) : evalF(v);
            }
            case ExprKind::Call: {
                auto* n = e.as<te::CallNode>();
                if (n->op == "tir.if_then_else") return evalI(n->args[0]) ? evalF(n->args[1]) : evalF(n->args[2]);
                if (n->op == "tir.exp") return std::exp(evalF(n->args[0]));
                if (n->op == "tir.sqrt") return std::sqrt(evalF(n->args[0]));
                if (n->op == "tir.fabs") return std::fabs(evalF(n->args[0]));
                fail("float call " + n->op);
            }
            case ExprKind::Load: return load(static_cast<const te::LoadNode*>(e.get()));
            default: break;
        }
        auto* b = static_cast<const te::BinaryNode*>(e.get());
        const double x = evalF(b->a), y = evalF(b->b);
        switch (e.kind()) {
            case ExprKind::Add: return x + y;
            case ExprKind::Sub: return x - y;
            case ExprKind::Mul: return x * y;
            case ExprKind::Div: return x / y;
            case ExprKind::Min: return x < y ? x : y;
            case ExprKind::Max: return x > y ? x : y;
            default: fail("float expression " + te::toString(e));
        }
    }
    void exec(const lower::Stmt& s) {
        using lower::StmtKind;
        switch (s->kind) {
            case StmtKind::For: {
                auto* f = lower::as<lower::ForNode>(s);
                const int64_t mn = evalI(f->min), ext = evalI(f->extent);
                for (int64_t v = mn; v < mn + ext; ++v) {
                    m_vars[f->var.get()] = v;
                    exec(f->body);
                }
                m_vars.erase(f->var.get());
                return;
            }
            case StmtKind::Allocate: {
                auto* a = lower::as<lower::AllocateNode>(s);
                Storage& st = m_bufs[a->buffer->key.get()];
                if (st.buf) fail("buffer " + a->buffer->name + " allocated twice");
                st.buf = a->buffer.get();
                st.data.assign(size_t(a->buffer->spanElements()), 0.f);
                st.written.assign(st.data.size(), 0);
                exec(a->body);
                m_bufs.erase(a->buffer->key.get());
                return;
            }
            case StmtKind::BufferStore: {
                auto* st = lower::as<lower::BufferStoreNode>(s);
                Storage& b = storage(st->buffer->key.get());
                const size_t o = offset(b.buf, st->indices);
                b.data[o] = float(evalF(st->value));
                b.written[o] = 1;
                return;
            }
            case StmtKind::IfThenElse: {
                auto* i = lower::as<lower::IfThenElseNode>(s);
                if (evalI(i->condition)) exec(i->thenCase);
                else if (i->elseCase) exec(i->elseCase);
                return;
            }
            case StmtKind::Seq:
                for (const auto& c : lower::as<lower::SeqNode>(s)->seq) exec(c);
                return;
            case StmtKind::Attr: exec(lower::as<lower::AttrNode>(s)->body); return;
            case StmtKind::Barrier: return;  // GPU only; one thread needs no barrier
            case StmtKind::Prefetch: return;  // a cache hint: no effect on values
        }
    }

    std::unordered_map<const te::OperationNode*, Storage> m_bufs;
    std::unordered_map<const te::ExprNode*, int64_t> m_vars;
};

// Lower, compile, run and compare; empty on success, else what went wrong (with the lowered IR).
// With `checkIr`, the IR is first run by IrChecker (bounds and initialisation of every access).
QString lowerAndCheck(const ComputeDAG& dag, const State& state, const std::vector<te::Buffer>& inputs,
                      const std::vector<te::Buffer>& expected, lower::LoweredFunc* out = nullptr,
                      bool checkIr = false) {
    lower::LoweredFunc f;
    try {
        f = lower::lowerState(dag, state);
        if (out) *out = f;
        if (checkIr) {
            const QString err = compareOutputs(IrChecker().run(f, dag, inputs), expected);
            if (!err.isEmpty()) throw std::runtime_error("IR check: " + err.toStdString());
        }
        const QString err = compareOutputs(runCompiled(f, dag, inputs), expected);
        if (err.isEmpty()) return err;
        return err + QStringLiteral("\nstate:\n") + qs(state.toStr()) + QStringLiteral("\nlowered:\n") + qs(f.print());
    } catch (const std::exception& e) {
        return QStringLiteral("exception: ") + QString::fromUtf8(e.what()) + QStringLiteral("\nstate:\n") +
               qs(state.toStr()) + (f.body ? QStringLiteral("\nlowered:\n") + qs(f.print()) : QString());
    }
}

search::SearchTask task(std::shared_ptr<const ComputeDAG> dag, int cores) {
    search::SearchTask t;
    t.dag = std::move(dag);
    t.workloadKey = t.dag->workloadKey();
    t.hardware.numCores = cores;
    return t;
}

int countBuffers(const lower::LoweredFunc& f, const std::string& name, lower::BufferScope scope,
                 std::vector<int64_t>* shape = nullptr) {
    int n = 0;
    lower::preOrderVisit(f.body, [&](const lower::Stmt& s) {
        auto* a = lower::as<lower::AllocateNode>(s);
        if (!a || a->buffer->name != name || a->buffer->scope != scope) return;
        ++n;
        if (shape) *shape = a->buffer->shape;
    });
    return n;
}

}  // namespace

class TestLowerState : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // TVM's CI matmul_add record: out tiled and parallel, matmul computed per 4x8 tile of out in a
    // local buffer, init before its reduce loops, the unroll pragma, vectorized inner loops.
    void testMatmulRecord() {
        const auto dag = matmulAdd(1024, 1024, 1024);
        const auto lines = recordLines("../shared/data/logs/ansor/tvm_ci_matmul.json");
        QCOMPARE(int(lines.size()), 1);
        const auto rec = json::parse(lines[0]);
        const State s = inferBound(replaySteps(*dag, stepsFromJson(rec.at("i").at(1).at(1))));
        const lower::LoweredFunc f = lower::lowerState(*dag, s, "matmul_add");
        const QString text = qs(f.print());
        QVERIFY2(text.startsWith(QStringLiteral(
                     "// kernel matmul_add(A: float32[1024, 1024], B: float32[1024, 1024], C: float32[1024, 1024], "
                     "out: float32[1024, 1024])\nparallel (i.0@j.0@, 0, 16384) {\n")),
                 qPrintable(text));
        std::vector<int64_t> shape;
        QCOMPARE(countBuffers(f, "matmul", lower::BufferScope::Local, &shape), 1);
        QCOMPARE(shape, (std::vector<int64_t>{4, 8}));
        QVERIFY2(text.contains(QStringLiteral("// attr pragma_auto_unroll_max_step = 8\n")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("// attr pragma_unroll_explicit = 1\n")));
        // The init runs over the tile's own (re-created) spatial loops, before k.0.
        const int init = int(text.indexOf(QStringLiteral("vectorized (j.3.init, 0, 8)")));
        const int k0 = int(text.indexOf(QStringLiteral("for (k.0, 0, 256)")));
        QVERIFY2(init > 0 && k0 > init, qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("vectorized (j.3, 0, 8)")));
        QVERIFY(text.contains(QStringLiteral("vectorized (j.2, 0, 8)")));
        QVERIFY2(!text.contains(QStringLiteral("if (")), "every split divides: no guard may remain");

        const auto inputs = randomInputs(*dag, 1);
        EvalOptions eo;
        const auto expected = te::evaluate(*dag, inputs, eo);
        const QString err = compareOutputs(runCompiled(f, *dag, inputs), expected);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    // TVM's resnet-18 NHWC records (the 204 conv2d ones that tst_schedule replays) on topi DAGs.
    void testResnetConvRecords() {
        struct Task {
            const char* keyShapes;
            std::shared_ptr<const ComputeDAG> dag;
            int records;
        };
        std::vector<Task> tasks = {
            {"[1, 56, 56, 64], [3, 3, 64, 64], [1, 1, 1, 64], [1, 56, 56, 64]]", topiConv(56, 64, 64, 3, 1, 1, true), 57},
            {"[1, 56, 56, 64], [3, 3, 64, 128], [1, 1, 1, 128], [1, 28, 28, 128]]", topiConv(56, 64, 128, 3, 2, 1, true), 49},
            {"[1, 56, 56, 64], [1, 1, 64, 128], [1, 28, 28, 128]]", topiConv(56, 64, 128, 1, 2, 0, false), 49},
            {"[1, 224, 224, 3], [7, 7, 3, 64], [1, 1, 1, 64], [1, 112, 112, 64]]", topiConv(224, 3, 64, 7, 2, 3, true), 49},
        };
        const auto lines = recordLines("../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json");
        int total = 0, ok = 0;
        std::map<std::string, int> kinds;
        for (auto& t : tasks) {
            const std::string key = t.dag->workloadKey();
            QCOMPARE(qs(key.substr(key.find("\", [") + 3)), QString::fromLatin1(t.keyShapes));
            const auto inputs = randomInputs(*t.dag, 7);
            const auto expected = te::evaluate(*t.dag, inputs);
            int replayed = 0;
            for (const auto& line : lines) {
                const json rec = json::parse(line);
                const std::string k = rec.at("i").at(0).at(0).get<std::string>();
                if (k.find(t.keyShapes) == std::string::npos || k.find("9a8fab9b") != std::string::npos ||
                    k.find("9b12f4c4") != std::string::npos)
                    continue;  // same shapes, other fused ops (residual add)
                const State s = inferBound(replaySteps(*t.dag, stepsFromJson(rec.at("i").at(1).at(1))));
                for (const auto& st : s.transformSteps()) kinds[st.prefix()]++;
                const QString err = lowerAndCheck(*t.dag, s, inputs, expected);
                if (!err.isEmpty()) qWarning().noquote() << "record" << replayed << "of" << qs(key) << ":" << err.left(6000);
                ok += err.isEmpty();
                ++replayed;
                ++total;
            }
            QCOMPARE(replayed, t.records);
        }
        qInfo("resnet-18 conv2d records: %d of %d lower, compile and match the interpreter", ok, total);
        QCOMPARE(ok, total);
        // The records exercise cache_write, rfactor-free tiling, compute_at and inlining.
        for (const char* kind : {"CHW", "CA", "CI", "FSP", "PR"}) QVERIFY2(kinds[kind] > 0, kind);
    }

    // Random states of the sketch policy, and mutations of them: every one that passes inferBound
    // must lower, compile and compute what the interpreter computes.
    void testRandomStates_data() {
        QTest::addColumn<std::shared_ptr<const ComputeDAG>>("dag");
        QTest::addColumn<int>("cores");
        QTest::addColumn<QStringList>("needPrefixes");
        QTest::addColumn<bool>("checkIr");  // also run IrChecker (small DAGs only: it is slow)
        QTest::addRow("conv2d+bias+relu (fusion sketches)") << topiConv(14, 32, 32, 3, 1, 1, true) << 8
                                                            << QStringList{QStringLiteral("CA")} << false;
        QTest::addRow("conv2d stride 2 (cache_write sketches)") << topiConv(15, 16, 24, 3, 2, 1, false) << 8
                                                                << QStringList{QStringLiteral("CHW")} << false;
        QTest::addRow("small conv2d+bias+relu, IR checked") << topiConv(6, 6, 10, 3, 1, 1, true) << 4
                                                            << QStringList{QStringLiteral("CA")} << true;
        QTest::addRow("matmul_add 96x80x72 (fusion)") << matmulAdd(96, 80, 72) << 4 << QStringList{QStringLiteral("CA")}
                                                      << false;
        QTest::addRow("matmul 8x512x12 (rfactor + cache_write), IR checked")
            << matmul(8, 512, 12) << 8 << QStringList{QStringLiteral("RF"), QStringLiteral("CHW")} << true;
    }
    void testRandomStates() {
        QFETCH(std::shared_ptr<const ComputeDAG>, dag);
        QFETCH(int, cores);
        QFETCH(QStringList, needPrefixes);
        QFETCH(bool, checkIr);
        const auto t = task(dag, cores);
        search::SketchPolicyParams params;
        params.numThreads = 1;
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(1), params, 42);
        const auto& sketches = policy.sketches();
        QVERIFY(!sketches.empty());
        const auto inputs = randomInputs(*dag, 3);
        const auto expected = te::evaluate(*dag, inputs);
        std::mt19937_64 rng(12345);
        int tried = 0, ok = 0, invalid = 0;
        QSet<QString> seenPrefixes;
        std::set<std::string> seen;
        for (int i = 0; tried < 40 && i < 400; ++i) {
            State s = policy.randomAnnotate(sketches[size_t(i) % sketches.size()], rng);
            if (s.defined() && i % 3 == 2) {
                State m = policy.mutate(s, rng);  // tile size, unroll, compute location, parallel
                if (m.defined()) s = m;
            }
            if (!s.defined()) {
                ++invalid;
                continue;
            }
            State b;
            try {
                b = inferBound(s);
            } catch (const UserError&) {
                ++invalid;
                continue;
            }
            if (!seen.insert(b.toStr()).second) continue;
            for (const auto& st : s.transformSteps()) seenPrefixes.insert(QString::fromLatin1(st.prefix()));
            const QString err = lowerAndCheck(*dag, b, inputs, expected, nullptr, checkIr);
            if (!err.isEmpty()) qWarning().noquote() << "state" << tried << ":" << err.left(8000);
            ok += err.isEmpty();
            ++tried;
        }
        qInfo("%s: %d of %d distinct random states lower, compile and match the interpreter (%d invalid draws)",
              QTest::currentDataTag(), ok, tried, invalid);
        QVERIFY2(tried >= 30, qPrintable(QString::number(tried)));
        QCOMPARE(ok, tried);
        for (const QString& p : needPrefixes) QVERIFY2(seenPrefixes.contains(p), qPrintable(p));
    }

    // Splits that do not divide their loops: guards keep every access in bounds, for the attached
    // producer (region tails) and for the consumer, with vectorized and parallel tails.
    void testNonDividingSplits() {
        const auto dag = matmulAdd(100, 37, 70);
        const auto inputs = randomInputs(*dag, 5);
        const auto expected = te::evaluate(*dag, inputs);
        // out: i by 16 (100 = 6.25 tiles), j by 3; matmul at out's j.0 with k split by 5 (37 = 7.4).
        const State s = inferBound(replaySteps(*dag, steps(
            "[[\"SP\", 4, 0, 100, [16], 1], [\"SP\", 4, 2, 70, [3], 1], [\"RE\", 4, [0, 2, 1, 3]],"
            " [\"CA\", 2, 4, 1], [\"SP\", 2, 2, 37, [5], 1], [\"AN\", 4, 0, 3], [\"AN\", 4, 3, 2],"
            " [\"AN\", 2, 1, 2]]")));
        lower::LoweredFunc f;
        QString err = lowerAndCheck(*dag, s, inputs, expected, &f, true);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        const QString text = qs(f.print());
        QVERIFY2(text.contains(QStringLiteral("if (")), qPrintable(text));
        // matmul's region is one 16x3 tile of out (its loops i (16), j (3), k.0 (8), k.1 (5)).
        std::vector<int64_t> shape;
        QCOMPARE(countBuffers(f, "matmul", lower::BufferScope::Local, &shape), 1);
        QCOMPARE(shape, (std::vector<int64_t>{16, 3}));

        // matmul at a fused loop of out: its region starts at floordiv/floormod of the fused variable.
        const State fu = inferBound(replaySteps(*dag, steps(
            "[[\"SP\", 4, 0, 100, [8], 1], [\"SP\", 4, 2, 70, [16], 1], [\"RE\", 4, [0, 2, 1, 3]],"
            " [\"FU\", 4, [0, 1]], [\"CA\", 2, 4, 0], [\"AN\", 4, 0, 3], [\"AN\", 4, 2, 2]]")));
        err = lowerAndCheck(*dag, fu, inputs, expected, &f, true);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        QVERIFY2(qs(f.print()).contains(QStringLiteral("floordiv(i.0@j.0@, 5)")), qPrintable(qs(f.print())));

        // Inner-to-outer and nparts splits, several levels, a fuse across a tail, unroll.
        const State t = inferBound(replaySteps(*dag, steps(
            "[[\"SP\", 2, 0, 100, [3, 7], 1], [\"SP\", 2, 3, 70, [4, 2], 0], [\"FU\", 2, [1, 2]],"
            " [\"AN\", 2, 0, 3], [\"AN\", 2, 2, 1], [\"SP\", 4, 1, 70, [32], 1], [\"AN\", 4, 2, 2]]")));
        err = lowerAndCheck(*dag, t, inputs, expected, nullptr, true);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    // pad_temp computed at a loop of a tiled conv: its region is the tile plus the halo, starting at
    // an expression of the conv's loop variables; with a non-dividing tile the region of the last
    // tile sticks out of pad_temp's domain and is guarded.
    void testComputeAtPadTemp() {
        const auto dag = convRelu(9);
        const auto inputs = randomInputs(*dag, 9);
        const auto expected = te::evaluate(*dag, inputs);
        // conv: yy (9) by 2, xx (9) by 4 -> tiles of 2x4 outputs (tails on both), pad_temp at xx.0.
        const State s = inferBound(replaySteps(*dag, steps(
            "[[\"SP\", 3, 1, 9, [2], 1], [\"SP\", 3, 3, 9, [4], 1],"
            " [\"RE\", 3, [0, 1, 3, 2, 4, 5, 6, 7, 8]], [\"CA\", 1, 3, 2]]")));
        QCOMPARE(s.stage(1).iters[1].range->extent, int64_t(4));  // 2 rows + 2 halo
        QCOMPARE(s.stage(1).iters[2].range->extent, int64_t(6));  // 4 columns + 2 halo
        lower::LoweredFunc f;
        QString err = lowerAndCheck(*dag, s, inputs, expected, &f, true);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        std::vector<int64_t> shape;
        QCOMPARE(countBuffers(f, "pad_temp", lower::BufferScope::Local, &shape), 1);
        QCOMPARE(shape, (std::vector<int64_t>{1, 4, 6, 4}));
        const QString text = qs(f.print());
        // pad_temp's rows start at yy.0*2 and its columns at xx.0*4; reads subtract them again.
        QVERIFY2(text.contains(QStringLiteral("pad_temp[0, i1, i2, i3] = tir.if_then_else(")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("((yy.0*2) + i1)")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("((xx.0*4) + i2)")), qPrintable(text));
        // The last tiles would read rows/columns 10 and 11 of a 11x11 pad_temp: guarded.
        QVERIFY2(text.contains(QStringLiteral("< 11)")), qPrintable(text));

        // The same one loop further out, and both conv and pad_temp attached to T_relu's loops.
        for (const char* rec : {"[[\"SP\", 3, 1, 9, [2], 1], [\"SP\", 3, 3, 9, [4], 1],"
                                " [\"RE\", 3, [0, 1, 3, 2, 4, 5, 6, 7, 8]], [\"CA\", 1, 3, 1]]",
                                "[[\"CA\", 3, 4, 1], [\"CA\", 1, 4, 1]]",
                                "[[\"SP\", 4, 2, 9, [2], 1], [\"CA\", 3, 4, 2], [\"CA\", 1, 3, 3], [\"AN\", 4, 0, 3]]"}) {
            const State u = inferBound(replaySteps(*dag, steps(rec)));
            err = lowerAndCheck(*dag, u, inputs, expected, nullptr, true);
            QVERIFY2(err.isEmpty(), qPrintable(err));
        }
    }

    // Inlined stages are substituted into their readers: no buffer, same numbers.
    void testInline() {
        const auto dag = topiConv(12, 8, 8, 3, 1, 1, true);  // p0, pad_temp, p1, conv, p2, T_add, T_relu
        const auto inputs = randomInputs(*dag, 11);
        const auto expected = te::evaluate(*dag, inputs);
        State init(*dag);
        QStringList names;
        for (const auto& st : init.stages()) names << qs(st->op->name);
        QCOMPARE(names, (QStringList{QStringLiteral("p0"), QStringLiteral("pad_temp"), QStringLiteral("p1"),
                                     QStringLiteral("conv2d_nhwc"), QStringLiteral("p2"), QStringLiteral("T_add"),
                                     QStringLiteral("T_relu")}));
        // Unscheduled: every intermediate is a global buffer.
        lower::LoweredFunc f0;
        QString err = lowerAndCheck(*dag, inferBound(init), inputs, expected, &f0, true);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        QCOMPARE(countBuffers(f0, "pad_temp", lower::BufferScope::Global), 1);
        QCOMPARE(countBuffers(f0, "T_add", lower::BufferScope::Global), 1);
        // Inline T_add and pad_temp: only the conv's buffer remains.
        lower::LoweredFunc f;
        const State s = inferBound(replaySteps(*dag, steps("[[\"CI\", 5], [\"CI\", 1]]")));
        err = lowerAndCheck(*dag, s, inputs, expected, &f, true);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        QCOMPARE(countBuffers(f, "pad_temp", lower::BufferScope::Global), 0);
        QCOMPARE(countBuffers(f, "T_add", lower::BufferScope::Global), 0);
        QCOMPARE(countBuffers(f, "conv2d_nhwc", lower::BufferScope::Global), 1);
        const QString text = qs(f.print());
        QVERIFY2(text.contains(QStringLiteral("p0[")) && text.contains(QStringLiteral("p2[")), qPrintable(text));
        // Inlined pad into a conv computed at T_relu's loop (a chain through an attached consumer).
        const State t = inferBound(replaySteps(*dag, steps("[[\"CI\", 5], [\"CI\", 1], [\"CA\", 3, 6, 2]]")));
        err = lowerAndCheck(*dag, t, inputs, expected, nullptr, true);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    // Cache stages and rfactor written by hand, with a Max reduction and a reduce condition (the
    // `likely` tail predicate rfactor puts into the .rf stage).
    void testCacheStagesAndRfactor() {
        const auto mm = matmul(20, 30, 12);
        auto inputs = randomInputs(*mm, 13);
        auto expected = te::evaluate(*mm, inputs);
        lower::LoweredFunc f;
        // CHW + tiling + the cache at the output's tile loop.
        const State cw = inferBound(replaySteps(*mm, steps(
            "[[\"CHW\", 2, \"local\"], [\"SP\", 3, 0, 20, [4], 1], [\"SP\", 3, 2, 12, [6], 1],"
            " [\"RE\", 3, [0, 2, 1, 3]], [\"CA\", 2, 3, 1], [\"AN\", 3, 0, 3]]")));
        QString err = lowerAndCheck(*mm, cw, inputs, expected, &f, true);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        std::vector<int64_t> shape;
        QCOMPARE(countBuffers(f, "matmul.local", lower::BufferScope::Local, &shape), 1);
        QCOMPARE(shape, (std::vector<int64_t>{4, 6}));
        // CHR of B for the matmul, at the matmul's k.0 loop (inside i and j: a 5x1 column of B).
        const State cr = inferBound(replaySteps(*mm, steps(
            "[[\"CHR\", 1, \"shared\", [2]], [\"SP\", 3, 2, 30, [5], 1], [\"CA\", 2, 3, 2]]")));
        err = lowerAndCheck(*mm, cr, inputs, expected, &f, true);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        QCOMPARE(countBuffers(f, "B.shared", lower::BufferScope::Local, &shape), 1);
        QCOMPARE(shape, (std::vector<int64_t>{5, 1}));

        const auto rm = rowMax();
        inputs = randomInputs(*rm, 17);
        expected = te::evaluate(*rm, inputs);
        // 40 = 7 * 6 - 2: the .rf stage's reduction carries the tail condition.
        for (const char* rec : {"[[\"SP\", 1, 1, 40, [7], 1], [\"RF\", 1, 2, 1]]",
                                "[[\"SP\", 1, 1, 40, [7], 1], [\"RF\", 1, 1, 0], [\"AN\", 2, 0, 3]]",
                                "[[\"SP\", 1, 1, 40, [8], 1], [\"RF\", 1, 2, 1], [\"CA\", 1, 2, 0], [\"AN\", 1, 1, 2]]"}) {
            const State s = inferBound(replaySteps(*rm, steps(rec)));
            err = lowerAndCheck(*rm, s, inputs, expected, &f, true);
            QVERIFY2(err.isEmpty(), qPrintable(err));
            QCOMPARE(countBuffers(f, "B.rf", s.stage(1).computeAt == ComputeAtKind::Iter ? lower::BufferScope::Local
                                                                                           : lower::BufferScope::Global),
                     1);
        }
    }

    void testErrors() {
        const auto dag = matmulAdd(16, 16, 16);
        // GPU thread bindings cannot be lowered for a CPU.
        const State gpu = inferBound(replaySteps(*dag, steps("[[\"AN\", 4, 0, 6]]")));
        try {
            lower::lowerState(*dag, gpu);
            QFAIL("a threadIdx.x binding was lowered");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("threadIdx.x")), e.what());
        }
        QVERIFY_THROWS_EXCEPTION(UserError, lower::lowerState(*dag, inferBound(replaySteps(*dag, steps("[[\"AN\", 2, 0, 4]]")))));
        // Bounds are required: a compute_at leaves the attached stage without ranges.
        try {
            lower::lowerState(*dag, replaySteps(*dag, steps("[[\"CA\", 2, 4, 1]]")));
            QFAIL("a state without bounds was lowered");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("inferBound")), e.what());
        }
        // A state of another DAG.
        const auto other = matmulAdd(16, 16, 16);
        QVERIFY_THROWS_EXCEPTION(UserError, lower::lowerState(*other, inferBound(State(*dag))));
        // Stale ranges: matmul's loops bounded for another attach point than the state's.
        State stale = inferBound(replaySteps(*dag, steps("[[\"CA\", 2, 4, 1]]")));
        const State other2 = inferBound(replaySteps(*dag, steps("[[\"CA\", 2, 4, 0]]")));
        stale.setStage(2, other2.stage(2));
        QVERIFY_THROWS_EXCEPTION(InternalError, lower::lowerState(*dag, stale));
    }

    // Time to lower (no compile) random conv2d states: printed, not asserted.
    void testLoweringSpeed() {
        const auto dag = topiConv(56, 64, 64, 3, 1, 1, true);
        const auto t = task(dag, 16);
        search::SketchPolicyParams params;
        params.numThreads = 1;
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(1), params, 7);
        std::mt19937_64 rng(99);
        std::vector<State> states;
        for (int i = 0; states.size() < 200 && i < 2000; ++i) {
            State s = policy.randomAnnotate(policy.sketches()[size_t(i) % policy.sketches().size()], rng);
            if (!s.defined()) continue;
            try {
                states.push_back(inferBound(s));
            } catch (const UserError&) {
            }
        }
        QVERIFY(states.size() >= 100);
        size_t stmts = 0;
        double best = 1e30;
        for (int pass = 0; pass < 3; ++pass) {  // best of three passes: the machine may be shared
            stmts = 0;
            const auto t0 = std::chrono::steady_clock::now();
            for (const auto& s : states) {
                const auto f = lower::lowerState(*dag, s);
                lower::preOrderVisit(f.body, [&](const lower::Stmt&) { ++stmts; });
            }
            best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        qInfo("lowerState on conv2d_nhwc 56x56x64 + bias + relu: %.1f us per state (%zu states, %.1f statements each)",
              best / double(states.size()), states.size(), double(stmts) / double(states.size()));
        QVERIFY(stmts > states.size());
    }
};

QTEST_APPLESS_MAIN(TestLowerState)
#include "tst_lower_state.moc"
