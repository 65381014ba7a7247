// SPDX-License-Identifier: Apache-2.0
// Tensor-expression core: TVM's constant folding, the legacy printer, DAG stage order, workload
// keys, FLOP counting and access analysis.
#include <QtTest>

#include "engine/support/error.h"
#include "engine/support/md5.h"
#include "engine/te/compute_dag.h"
#include "engine/te/printer.h"

using namespace tb::te;

namespace {
QString str(const Expr& e) { return QString::fromStdString(toString(e)); }

// conv2d_nhwc (1x1 or padded 3x3) + bias add + relu, built by hand like TVM's topi does.
Tensor convBiasRelu(int64_t h, int64_t c, int64_t k, int64_t r, int64_t stride, int64_t pad) {
    auto p0 = placeholder({1, h, h, c}, "p0");
    auto p1 = placeholder({r, r, c, k}, "p1");
    auto p2 = placeholder({1, 1, 1, k}, "p2");
    int64_t hp = h + 2 * pad;
    auto padT = compute({1, hp, hp, c}, axisNames(4, "i"), [&](const std::vector<Var>& v) {
        if (pad == 0) return p0(v[0], v[1], v[2], v[3]);
        Expr cond = logicalAnd(logicalAnd(logicalAnd(v[1] >= Expr(int(pad)), v[1] < Expr(int(h + pad))),
                                          v[2] >= Expr(int(pad))),
                               v[2] < Expr(int(h + pad)));
        return ifThenElse(cond, p0(v[0], v[1] - Expr(int(pad)), v[2] - Expr(int(pad)), v[3]), 0.0f);
    }, "pad_temp");
    int64_t oh = (hp - r) / stride + 1;
    auto ry = reduceAxis(r, "ry"), rx = reduceAxis(r, "rx"), rc = reduceAxis(c, "rc");
    auto conv = compute({1, oh, oh, k}, {"nn", "yy", "xx", "ff"}, [&](const std::vector<Var>& v) {
        return sum(padT(v[0], v[1] * Expr(int(stride)) + ry.var, v[2] * Expr(int(stride)) + rx.var, rc.var) *
                       p1(ry.var, rx.var, rc.var, v[3]),
                   {ry, rx, rc});
    }, "conv2d_nhwc", ComputeOptions{{}, {}, {p1}});
    auto add = compute({1, oh, oh, k}, axisNames(4, "ax"), [&](const std::vector<Var>& v) {
        return conv(v[0], v[1], v[2], v[3]) + p2(v[0], 0, 0, v[3]);
    }, "T_add");
    return compute({1, oh, oh, k}, axisNames(4, "ax"), [&](const std::vector<Var>& v) {
        return max(add(v[0], v[1], v[2], v[3]), 0.0f);
    }, "T_relu");
}
}  // namespace

class TestTe : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testConstantFolding() {
        Var x("x"), y("y");
        QCOMPARE(str(x * 1), QStringLiteral("x"));
        QCOMPARE(str(x + 0), QStringLiteral("x"));
        QCOMPARE(str(Expr(0) + x), QStringLiteral("x"));
        QCOMPARE(str(x * 0), QStringLiteral("0"));
        QCOMPARE(str(floordiv(x, 1)), QStringLiteral("x"));
        QCOMPARE(str(floormod(x, 1)), QStringLiteral("0"));
        QCOMPARE(str(Expr(6) * 7), QStringLiteral("42"));
        QCOMPARE(str(floordiv(-7, 2)), QStringLiteral("-4"));
        QCOMPARE(str(floormod(-7, 2)), QStringLiteral("1"));
        QCOMPARE(str(Expr(-7) / 2), QStringLiteral("-3"));  // truncdiv on ints
        // No re-association: (x*4)*4 stays.
        QCOMPARE(str((x * 4) * 4), QStringLiteral("((x*4)*4)"));
        QCOMPARE(str(eq(floormod(Expr(7), 1), 0)), QStringLiteral("(bool)1"));
        QCOMPARE(str(Expr(1.0f) * Var("f", DType::Float32)), QStringLiteral("f"));
        QCOMPARE(str(logicalAnd(boolImm(true), x < y)), QStringLiteral("(x < y)"));
        QCOMPARE(str(logicalOr(boolImm(true), x < y)), QStringLiteral("(bool)1"));
        QCOMPARE(str(cast(DType::Int32, x)), QStringLiteral("x"));
        // TVM BinaryOpMatchTypes: a float operand wins over an int one (the int side is cast).
        QCOMPARE(str(x + 0.5f), QStringLiteral("(float32(x) + 0.5f)"));
        QCOMPARE(str(Var("f", DType::Float32) * 2), QStringLiteral("(f*2f)"));
        QCOMPARE(str(-Var("g", DType::Float32)), QStringLiteral("(0f - g)"));
        QCOMPARE(str(-x), QStringLiteral("(0 - x)"));
    }

    void testPrinter_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        Var x("x"), y("y");
        Var f("f", DType::Float32);
        QTest::addRow("add") << str(x + y) << "(x + y)";
        QTest::addRow("sub") << str(x - y) << "(x - y)";
        QTest::addRow("mul") << str(x * y) << "(x*y)";
        QTest::addRow("div") << str(f / 2.0f) << "(f/2f)";
        QTest::addRow("mod") << str(truncmod(x, y)) << "(x % y)";
        QTest::addRow("floordiv") << str(floordiv(x, 3)) << "floordiv(x, 3)";
        QTest::addRow("floormod") << str(floormod(x, 3)) << "floormod(x, 3)";
        QTest::addRow("min") << str(min(x, y)) << "min(x, y)";
        QTest::addRow("max0f") << str(max(f, 0.0f)) << "max(f, 0f)";
        QTest::addRow("cmp") << str(x >= 1) << "(x >= 1)";
        QTest::addRow("ne") << str(ne(x, y)) << "(x != y)";
        QTest::addRow("and") << str(logicalAnd(x < 3, y > 1)) << "((x < 3) && (y > 1))";
        QTest::addRow("or") << str(logicalOr(x < 3, y > 1)) << "((x < 3) || (y > 1))";
        QTest::addRow("not") << str(logicalNot(x < 3)) << "!(x < 3)";
        QTest::addRow("select") << str(select(x < 3, f, 1.5f)) << "select((x < 3), f, 1.5f)";
        QTest::addRow("cast") << str(cast(DType::Float32, x)) << "float32(x)";
        QTest::addRow("exp") << str(exp(f)) << "tir.exp(f)";
        QTest::addRow("lowest") << str(minValue(DType::Float32)) << "-3.40282e+38f";
        QTest::addRow("eighth") << str(Expr(0.125f)) << "0.125f";
        QTest::addRow("neg") << str(Expr(-2.5f)) << "-2.5f";
        QTest::addRow("int64") << str(intImm(0, DType::Int64)) << "(int64)0";
    }
    void testPrinter() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        QCOMPARE(text, expected);
    }

    // The tutorial's pointwise conv task (REFERENCE-ZOO §6 self-test) and a padded stride-2 one.
    void testWorkloadKeys() {
        auto dag = ComputeDAG::fromOutputs({convBiasRelu(56, 128, 128, 1, 1, 0)});
        QCOMPARE(QString::fromStdString(dag.workloadKey()),
                 QStringLiteral("[\"6d628209072e3e3dd8f49359935acea6\", [1, 56, 56, 128], [1, 1, 128, 128], "
                                "[1, 1, 1, 128], [1, 56, 56, 128]]"));
        // REFERENCE-ZOO §5.0: every padded stride-2 conv with bias+relu prints to 07f9fcad...
        auto dag2 = ComputeDAG::fromOutputs({convBiasRelu(56, 64, 128, 3, 2, 1)});
        QCOMPARE(QString::fromStdString(dag2.hash()), QStringLiteral("07f9fcad27bdd3233f86fe35a5185d33"));
        QCOMPARE(QString::fromStdString(tb::md5Hex(dag2.print(true))), QString::fromStdString(dag2.hash()));
        // Simple mode hides shapes and call bodies.
        QVERIFY(dag2.print(true).find("pad_temp(i0, i1, i2, i3) = Op(tir.if_then_else)\n") != std::string::npos);
        QVERIFY(dag2.print(true).find("p0 = PLACEHOLDER \n") != std::string::npos);
        QVERIFY(dag2.print(false).find("p0 = PLACEHOLDER [1, 56, 56, 64]\n") != std::string::npos);
    }

    void testStageOrderAndIo() {
        auto out = convBiasRelu(14, 8, 8, 3, 1, 1);
        auto dag = ComputeDAG::fromOutputs({out});
        QStringList names;
        for (const auto& op : dag.ops()) names << QString::fromStdString(op->name);
        QCOMPARE(names, (QStringList{QStringLiteral("p0"), QStringLiteral("pad_temp"), QStringLiteral("p1"),
                                     QStringLiteral("conv2d_nhwc"), QStringLiteral("p2"), QStringLiteral("T_add"),
                                     QStringLiteral("T_relu")}));
        QCOMPARE(dag.tensors().size(), size_t(4));
        QCOMPARE(dag.inputs().size(), size_t(3));
        QCOMPARE(QString::fromStdString(dag.outputs()[0].name()), QStringLiteral("T_relu"));
        // The explicit-tensor constructor with the same io order prints the same.
        ComputeDAG dag2(dag.tensors());
        QCOMPARE(dag2.print(), dag.print());
    }

    void testFlops_data() {
        QTest::addColumn<int>("h");
        QTest::addColumn<int>("c");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("r");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("pad");
        QTest::addRow("1x1 56x56 128->128") << 56 << 128 << 128 << 1 << 1 << 0;
        QTest::addRow("3x3 56x56 64->64") << 56 << 64 << 64 << 3 << 1 << 1;
        QTest::addRow("3x3 s2 224 3->32") << 224 << 3 << 32 << 3 << 2 << 1;
        QTest::addRow("7x7 s2 224 3->64") << 224 << 3 << 64 << 7 << 2 << 3;
    }
    void testFlops() {
        QFETCH(int, h);
        QFETCH(int, c);
        QFETCH(int, k);
        QFETCH(int, r);
        QFETCH(int, stride);
        QFETCH(int, pad);
        auto dag = ComputeDAG::fromOutputs({convBiasRelu(h, c, k, r, stride, pad)});
        double oh = double((h + 2 * pad - r) / stride + 1);
        // TVM's rule: 2*N*H*W*K*C*R*S for the conv (padding taps included), +1 per element for
        // the bias add and +1 for relu; index arithmetic and the padding select count 0.
        double expected = 2.0 * oh * oh * k * c * r * r + 2.0 * oh * oh * k;
        QCOMPARE(dag.flopCount(), expected);
    }

    void testAccessAnalysis() {
        auto dag = ComputeDAG::fromOutputs({convBiasRelu(14, 8, 8, 3, 1, 1)});
        std::map<std::string, const OpAccessInfo*> info;
        for (const auto& op : dag.ops()) info[op->name] = &dag.access(op);
        QVERIFY(info["conv2d_nhwc"]->needsMultiLevelTiling);
        QVERIFY(!info["conv2d_nhwc"]->isStrictlyInlineable);
        QVERIFY(!info["pad_temp"]->isStrictlyInlineable);  // if_then_else is a branch
        QVERIFY(info["pad_temp"]->isSimpleAccess == false);  // (i1 - 1) is not a plain axis
        QVERIFY(info["T_add"]->isStrictlyInlineable);        // p2[ax0, 0, 0, ax3]: missing axes are fine
        QVERIFY(!info["T_add"]->needsMultiLevelTiling);
        QVERIFY(info["T_relu"]->isOutput);
        QVERIFY(!info["T_add"]->isOutput);
        QCOMPARE(info["conv2d_nhwc"]->readFrom.size(), size_t(2));
        QCOMPARE(info["pad_temp"]->readBy.size(), size_t(1));
        auto ops = dag.ops();
        QVERIFY(dag.elementWiseMatch(ops[5], ops[6]));  // T_add -> T_relu
        QVERIFY(!dag.elementWiseMatch(ops[1], ops[3]));  // pad_temp -> conv: not element-wise
        // A matmul: both inputs miss an output axis -> multi-level tiling.
        auto a = placeholder({64, 32}, "A"), b = placeholder({32, 16}, "B");
        auto kk = reduceAxis(32, "k");
        auto mm = compute({64, 16}, {"i", "j"}, [&](const std::vector<Var>& v) { return sum(a(v[0], kk.var) * b(kk.var, v[1]), {kk}); }, "matmul");
        ComputeDAG md({a, b, mm});
        QVERIFY(md.access(mm.op()).needsMultiLevelTiling);
        QCOMPARE(md.flopCount(), 2.0 * 64 * 16 * 32);
        QCOMPARE(QString::fromStdString(md.print(true)),
                 QStringLiteral("A = PLACEHOLDER \nB = PLACEHOLDER \nmatmul(i, j) += (A[i, k]*B[k, j])\n"));
    }

    void testErrors() {
        auto a = placeholder({4, 4}, "A");
        QVERIFY_THROWS_EXCEPTION(tb::InternalError, a(Var("i")));                 // wrong index count
        QVERIFY_THROWS_EXCEPTION(tb::InternalError, logicalAnd(Var("i"), Var("j")));  // && on ints
        // A DAG whose io list misses a placeholder that is read.
        auto b = compute({4, 4}, {"i", "j"}, [&](const std::vector<Var>& v) { return a(v[0], v[1]) + 1.0f; }, "B");
        QVERIFY_THROWS_EXCEPTION(tb::InternalError, ComputeDAG({b}));
    }
};

QTEST_APPLESS_MAIN(TestTe)
#include "tst_te.moc"
