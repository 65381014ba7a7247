// SPDX-License-Identifier: Apache-2.0
// Loop IR construction, printing, the arithmetic simplifier, the unroll pass and the unscheduled
// DAG lowering (engine/lower).
#include <QtTest>

#include "engine/lower/loop_ir.h"
#include "engine/lower/lower_dag.h"
#include "engine/lower/simplify.h"
#include "engine/support/error.h"
#include "engine/te/compute_dag.h"
#include "engine/te/printer.h"

using namespace tb;
using te::Expr;
using te::Var;

namespace {
QString str(const Expr& e) { return QString::fromStdString(te::toString(e)); }
}  // namespace

class TestCodegenLoopIr : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testSimplifyRules() {
        Var i("i"), j("j"), k("k");
        lower::Analyzer an;
        an.bindLoop(i, 0, 64);
        an.bindLoop(j, 0, 16);
        an.bindLoop(k, 0, 4);
        // (a*c1)*c2 and distribution into a linear form.
        QCOMPARE(str(an.simplify((i * 4) * 8)), QStringLiteral("(i*32)"));
        QCOMPARE(str(an.simplify((i * 4 + j) * 16)), QStringLiteral("((i*64) + (j*16))"));
        QCOMPARE(str(an.simplify((i + 3) + 5 - i)), QStringLiteral("8"));
        QCOMPARE(str(an.simplify(i * 1 + 0)), QStringLiteral("i"));
        // floordiv / floormod of affine forms with known bounds.
        QCOMPARE(str(an.simplify(te::floordiv(i * 16 + j, 16))), QStringLiteral("i"));
        QCOMPARE(str(an.simplify(te::floormod(i * 16 + j, 16))), QStringLiteral("j"));
        QCOMPARE(str(an.simplify(te::floordiv(i * 64 + j * 4 + k, 4))), QStringLiteral("((i*16) + j)"));
        QCOMPARE(str(an.simplify(te::floormod(i * 64 + j * 4 + k, 4))), QStringLiteral("k"));
        QCOMPARE(str(an.simplify(te::floordiv(te::floordiv(i * 64 + j * 4 + k, 4), 16))), QStringLiteral("i"));
        // j in [0,16) is not within [0, 8): the division must stay.
        QCOMPARE(str(an.simplify(te::floordiv(j, 8))), QStringLiteral("floordiv(j, 8)"));
        QCOMPARE(str(an.simplify(te::floormod(i * 8 + j, 8))), QStringLiteral("floormod(j, 8)"));
        // Comparisons proven from ranges.
        QCOMPARE(str(an.simplify(i * 16 + j < 1024)), QStringLiteral("(bool)1"));
        QCOMPARE(str(an.simplify(i * 16 + j >= 1024)), QStringLiteral("(bool)0"));
        QCOMPARE(str(an.simplify(i * 16 + j < 1000)), QStringLiteral("(((i*16) + j) < 1000)"));
        QCOMPARE(str(an.simplify(te::min(j, 20))), QStringLiteral("j"));
        QCOMPARE(str(an.simplify(te::max(k, 3 + j))), QStringLiteral("(j + 3)"));
        // if_then_else decided by a proven condition; floats are never re-associated.
        Expr f = te::ifThenElse(j < 16, te::floatImm(1.0), te::floatImm(2.0));
        QCOMPARE(str(an.simplify(f)), QStringLiteral("1f"));
        Var x("x", te::DType::Float32);
        QCOMPARE(str(an.simplify((x + 1.0f) + 2.0f)), QStringLiteral("((x + 1f) + 2f)"));
        QCOMPARE(str(an.simplify(x * 1.0f + 0.0f)), QStringLiteral("x"));
        QVERIFY(an.canProve(te::logicalAnd(i >= 0, i < 64)));
        QVERIFY(!an.canProve(i < 63));
        auto r = an.bound(i * 16 + j);
        QVERIFY(r.has_value());
        QCOMPARE(r->min, int64_t(0));
        QCOMPARE(r->max, int64_t(1023));
    }

    void testSimplifyStatements() {
        auto A = lower::makeBuffer("A", {100});
        Var io("i.outer"), ii("i.inner"), u("u");
        // A split of 100 by 16 without a guard on the divisible part and with one on the tail.
        Expr idx = io * 16 + ii;
        lower::Stmt store = lower::makeStore(A, {idx}, te::floatImm(1.0));
        lower::Stmt guarded = lower::makeIf(idx < 112, store);  // always true for io<7, ii<16
        lower::Stmt nest = lower::makeFor(io, 7, lower::ForKind::Serial,
                                          lower::makeFor(ii, 16, lower::ForKind::Vectorized, guarded));
        lower::Stmt one = lower::makeFor(u, 1, lower::ForKind::Serial, lower::makeStore(A, {u + 99}, te::floatImm(2.0)));
        lower::Stmt s = lower::simplify(lower::makeSeq({nest, one}));
        const QString text = QString::fromStdString(lower::toString(s));
        QCOMPARE(text, QStringLiteral("for (i.outer, 0, 7) {\n"
                                      "  vectorized (i.inner, 0, 16) {\n"
                                      "    A[((i.outer*16) + i.inner)] = 1f\n"
                                      "  }\n"
                                      "}\n"
                                      "A[99] = 2f\n"));
        // A guard that is not provable stays; one proven false disappears with its loop.
        lower::Stmt tail = lower::simplify(lower::makeFor(io, 7, lower::ForKind::Serial,
                                                          lower::makeFor(ii, 16, lower::ForKind::Serial,
                                                                         lower::makeIf(idx < 100, store))));
        QVERIFY(QString::fromStdString(lower::toString(tail)).contains(QStringLiteral("if ((((i.outer*16) + i.inner) < 100))")));
        lower::Stmt dead = lower::simplify(lower::makeFor(ii, 16, lower::ForKind::Serial, lower::makeIf(ii > 20, store)));
        QVERIFY(lower::isNop(dead));
    }

    void testUnrollPragma() {
        auto A = lower::makeBuffer("A", {8, 64});
        Var i("i"), j("j"), k("k");
        lower::Stmt body = lower::makeStore(A, {i, j}, te::floatImm(0.0));
        lower::Stmt nest = lower::makeFor(i, 8, lower::ForKind::Serial,
                                          lower::makeFor(j, 4, lower::ForKind::Serial, body));
        // max step 16: j (4 steps) unrolls, i (32 steps) does not.
        lower::Stmt u = lower::unrollLoops(lower::makeAttr(lower::attr::kAutoUnrollMaxStep, 16, nest));
        QString text = QString::fromStdString(lower::toString(u));
        QVERIFY2(text.contains(QStringLiteral("unrolled (j, 0, 4)")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("for (i, 0, 8)")), qPrintable(text));
        // max step 64: both unroll; no pragma: nothing changes.
        text = QString::fromStdString(lower::toString(lower::unrollLoops(lower::makeAttr(lower::attr::kAutoUnrollMaxStep, 64, nest))));
        QVERIFY(text.contains(QStringLiteral("unrolled (i, 0, 8)")));
        QCOMPARE(QString::fromStdString(lower::toString(lower::unrollLoops(nest))), QString::fromStdString(lower::toString(nest)));
    }

    void testLowerMatmulDag() {
        auto A = te::placeholder({4, 3}, "A");
        auto B = te::placeholder({3, 5}, "B");
        auto k = te::reduceAxis(3, "k");
        auto C = te::compute({4, 5}, {"i", "j"},
                             [&](const std::vector<Var>& v) { return te::sum(A(v[0], k.var) * B(k.var, v[1]), {k}); }, "C");
        te::ComputeDAG dag({A, B, C});
        lower::LoweredFunc f = lower::lowerComputeDag(dag, "mm");
        QCOMPARE(f.args.size(), size_t(3));
        QCOMPARE(QString::fromStdString(f.print()),
                 QStringLiteral("// kernel mm(A: float32[4, 3], B: float32[3, 5], C: float32[4, 5])\n"
                                "for (i, 0, 4) {\n"
                                "  for (j, 0, 5) {\n"
                                "    C[i, j] = 0f\n"
                                "    for (k, 0, 3) {\n"
                                "      C[i, j] = (C[i, j] + (A[i, k]*B[k, j]))\n"
                                "    }\n"
                                "  }\n"
                                "}\n"));
        QCOMPARE(lower::flatIndex(f.args[2], {Expr(2), Expr(3)}).as<te::IntImmNode>()->value, int64_t(13));
    }

    void testBufferErrors() {
        auto A = lower::makeBuffer("A", {4, 4});
        QVERIFY_THROWS_EXCEPTION(InternalError, lower::makeStore(A, {Expr(0)}, te::floatImm(0.0)));
        QVERIFY_THROWS_EXCEPTION(InternalError, lower::makeStore(A, {Expr(0), Expr(0)}, Expr(1)));
        QVERIFY_THROWS_EXCEPTION(InternalError, lower::makeBuffer("Z", {0}));
        QVERIFY_THROWS_EXCEPTION(InternalError, lower::bufferLoad(A, {Expr(1)}));
        auto S = lower::makeBuffer("S", {4, 4}, lower::BufferScope::Local, {1, 8});
        QCOMPARE(S->spanElements(), int64_t(4 + 3 * 8));
        QCOMPARE(S->spanBytes(), int64_t(28 * 4));
    }
};

QTEST_APPLESS_MAIN(TestCodegenLoopIr)
#include "tst_codegen_loopir.moc"
