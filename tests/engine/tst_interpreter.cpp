// SPDX-License-Identifier: Apache-2.0
// The reference interpreter: hand-computed cases, randomized comparisons with plain nested loops,
// specialized-vs-general and threaded-vs-serial bit equality, error reporting, and a timed
// 56x56x64 conv2d (printed, not asserted).
#include <QtTest>

#include <cfloat>
#include <cmath>
#include <ctime>
#include <random>

#include "engine/support/error.h"
#include "engine/te/compute_dag.h"
#include "engine/te/interpreter.h"
#include "tests/engine/test_util.h"

using namespace tb::te;
using tb::test::randomBuffer;

namespace {

Expr ci(int64_t v) { return Expr(int(v)); }

// Number of elements that differ (as values, so +0 == -0, and NaN matches NaN); -1 if shapes differ.
int64_t mismatches(const Buffer& a, const Buffer& b) {
    if (a.shape != b.shape || a.data.size() != b.data.size()) return -1;
    int64_t n = 0;
    for (size_t i = 0; i < a.data.size(); ++i)
        if (!(a.data[i] == b.data[i]) && !(std::isnan(a.data[i]) && std::isnan(b.data[i]))) ++n;
    return n;
}

EvalOptions serialGeneral() {
    EvalOptions o;
    o.numThreads = 1;
    o.specialize = false;
    return o;
}
EvalOptions forcedThreads() {
    EvalOptions o;
    o.numThreads = 3;
    o.parallelThreshold = 1;
    return o;
}

QString errorOf(const std::function<void()>& f, bool* wasInternal, bool* wasUser) {
    *wasInternal = *wasUser = false;
    try {
        f();
    } catch (const tb::InternalError& e) {
        *wasInternal = true;
        return QString::fromStdString(e.what());
    } catch (const tb::UserError& e) {
        *wasUser = true;
        return QString::fromStdString(e.what());
    }
    return {};
}

// TVM topi-style NHWC padding: if_then_else(bounds, x[shifted], padValue); no stage when pad == 0.
Tensor padNhwc(const Tensor& x, int64_t pad, float padValue, const std::string& name) {
    if (pad == 0) return x;
    const auto& s = x.shape();
    return compute({s[0], s[1] + 2 * pad, s[2] + 2 * pad, s[3]}, axisNames(4, "i"), [&](const std::vector<Var>& v) {
        Expr cond = logicalAnd(logicalAnd(logicalAnd(v[1] >= ci(pad), v[1] < ci(s[1] + pad)), v[2] >= ci(pad)),
                               v[2] < ci(s[2] + pad));
        return ifThenElse(cond, x(v[0], v[1] - ci(pad), v[2] - ci(pad), v[3]), Expr(padValue));
    }, name);
}

struct ConvCase {
    int64_t n, h, w, ci, co, kh, kw, stride, pad, dil;
    int64_t oh() const { return (h + 2 * pad - dil * (kh - 1) - 1) / stride + 1; }
    int64_t ow() const { return (w + 2 * pad - dil * (kw - 1) - 1) / stride + 1; }
};

// conv2d_nhwc as topi builds it: pad_temp stage, reduce axes ry, rx, rc.
Tensor conv2dNhwc(const Tensor& x, const Tensor& wt, const ConvCase& c) {
    Tensor pt = padNhwc(x, c.pad, 0.0f, "pad_temp");
    auto ry = reduceAxis(c.kh, "ry"), rx = reduceAxis(c.kw, "rx"), rc = reduceAxis(c.ci, "rc");
    return compute({c.n, c.oh(), c.ow(), c.co}, {"nn", "yy", "xx", "ff"}, [&](const std::vector<Var>& v) {
        return sum(pt(v[0], v[1] * ci(c.stride) + ry.var * ci(c.dil), v[2] * ci(c.stride) + rx.var * ci(c.dil),
                      rc.var) *
                       wt(ry.var, rx.var, rc.var, v[3]),
                   {ry, rx, rc});
    }, "conv2d_nhwc");
}

// The same convolution as plain loops: double accumulator, reduce order ry, rx, rc, padding as 0.
Buffer conv2dNhwcLoops(const Buffer& x, const Buffer& wt, const ConvCase& c) {
    Buffer out = Buffer::zeros({c.n, c.oh(), c.ow(), c.co});
    for (int64_t n = 0; n < c.n; ++n)
        for (int64_t y = 0; y < c.oh(); ++y)
            for (int64_t xx = 0; xx < c.ow(); ++xx)
                for (int64_t f = 0; f < c.co; ++f) {
                    double acc = 0;
                    for (int64_t ry = 0; ry < c.kh; ++ry)
                        for (int64_t rx = 0; rx < c.kw; ++rx)
                            for (int64_t rc = 0; rc < c.ci; ++rc) {
                                int64_t iy = y * c.stride + ry * c.dil - c.pad, ix = xx * c.stride + rx * c.dil - c.pad;
                                bool in = iy >= 0 && iy < c.h && ix >= 0 && ix < c.w;
                                float v = in ? x.data[size_t(((n * c.h + iy) * c.w + ix) * c.ci + rc)] : 0.0f;
                                acc += double(v) * double(wt.data[size_t(((ry * c.kw + rx) * c.ci + rc) * c.co + f)]);
                            }
                    out.data[size_t(((n * c.oh() + y) * c.ow() + xx) * c.co + f)] = float(acc);
                }
    return out;
}

// A one-input elementwise op over a 1-D buffer, evaluated through a DAG.
std::vector<float> unary1d(const std::vector<float>& in, const std::function<Expr(const Tensor&, const Var&)>& body,
                           int64_t outLen = -1) {
    auto x = placeholder({int64_t(in.size())}, "x");
    auto y = compute({outLen < 0 ? int64_t(in.size()) : outLen}, {"i"},
                     [&](const std::vector<Var>& v) { return body(x, v[0]); }, "y");
    ComputeDAG dag({x, y});
    auto out = evaluate(dag, {Buffer{{int64_t(in.size())}, in}});
    auto again = evaluate(dag, {Buffer{{int64_t(in.size())}, in}}, serialGeneral());
    if (mismatches(out[0], again[0]) != 0) return {};  // the paths disagree: fail the caller's comparison
    return out[0].data;
}

}  // namespace

Q_DECLARE_METATYPE(ConvCase)

class TestInterpreter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testMatmul() {
        auto a = placeholder({2, 3}, "A");
        auto b = placeholder({3, 2}, "B");
        auto k = reduceAxis(3, "k");
        auto c = compute({2, 2}, {"i", "j"}, [&](const std::vector<Var>& v) {
            return sum(a(v[0], k.var) * b(k.var, v[1]), {k});
        }, "C");
        ComputeDAG dag({a, b, c});
        std::vector<Buffer> in{{{2, 3}, {1, 2, 3, 4, 5, 6}}, {{3, 2}, {7, 8, 9, 10, 11, 12}}};
        for (const auto& opts : {EvalOptions{}, serialGeneral(), forcedThreads()}) {
            auto out = evaluate(dag, in, opts);
            QCOMPARE(out.size(), size_t(1));
            QCOMPARE(out[0].shape, (std::vector<int64_t>{2, 2}));
            QCOMPARE(out[0].data, (std::vector<float>{58, 64, 139, 154}));
        }
    }

    void testConvPaddedStrided_data() {
        QTest::addColumn<bool>("padStage");
        QTest::addRow("pad_temp stage") << true;
        QTest::addRow("guard inside the reduction") << false;
    }
    void testConvPaddedStrided() {
        // NCHW 1x1x3x3 input 1..9, 3x3 kernel, stride 2, pad 1 -> 2x2; expected values by hand:
        // out(0,0) = 1*x00 - x11 = -4, out(0,1) = x02 = 3, out(1,0) = 2*x10 + x20 = 15,
        // out(1,1) = x11 + 2*x12 + x22 = 26.
        QFETCH(bool, padStage);
        auto x = placeholder({1, 1, 3, 3}, "x");
        auto w = placeholder({1, 1, 3, 3}, "w");
        auto inside = [](const Expr& y, const Expr& xx) {
            return logicalAnd(logicalAnd(logicalAnd(y >= 1, y < 4), xx >= 1), xx < 4);
        };
        auto rc = reduceAxis(1, "rc"), ry = reduceAxis(3, "ry"), rx = reduceAxis(3, "rx");
        Tensor conv;
        if (padStage) {
            auto pt = compute({1, 1, 5, 5}, axisNames(4, "i"), [&](const std::vector<Var>& v) {
                return ifThenElse(inside(v[2], v[3]), x(v[0], v[1], v[2] - 1, v[3] - 1), 0.0f);
            }, "pad_temp");
            conv = compute({1, 1, 2, 2}, {"nn", "ff", "yy", "xx"}, [&](const std::vector<Var>& v) {
                return sum(pt(v[0], rc.var, v[2] * 2 + ry.var, v[3] * 2 + rx.var) * w(v[1], rc.var, ry.var, rx.var),
                           {rc, ry, rx});
            }, "conv2d_nchw");
        } else {
            conv = compute({1, 1, 2, 2}, {"nn", "ff", "yy", "xx"}, [&](const std::vector<Var>& v) {
                Expr y = v[2] * 2 + ry.var, xx = v[3] * 2 + rx.var;
                return sum(ifThenElse(inside(y, xx), x(v[0], rc.var, y - 1, xx - 1), 0.0f) *
                               w(v[1], rc.var, ry.var, rx.var),
                           {rc, ry, rx});
            }, "conv2d_nchw");
        }
        ComputeDAG dag({x, w, conv});
        std::vector<Buffer> in{{{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}, {{1, 1, 3, 3}, {1, 2, 0, 0, 1, 0, 0, 0, -1}}};
        for (const auto& opts : {EvalOptions{}, serialGeneral()}) {
            auto out = evaluate(dag, in, opts);
            QCOMPARE(out[0].data, (std::vector<float>{-4, 3, 15, 26}));
        }
    }

    void testReductions_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<bool>("all");
        QTest::addColumn<std::vector<float>>("expected");
        // M = [[3, -1, 4, 1], [-5, -9, -2, -6], [5, 3, 5, 8]]
        QTest::addRow("sum rows") << int(ReduceKind::Sum) << false << std::vector<float>{7, -22, 21};
        QTest::addRow("max rows") << int(ReduceKind::Max) << false << std::vector<float>{4, -2, 8};
        QTest::addRow("min rows") << int(ReduceKind::Min) << false << std::vector<float>{-1, -9, 3};
        QTest::addRow("sum all (0-d)") << int(ReduceKind::Sum) << true << std::vector<float>{6};
        QTest::addRow("max all (0-d)") << int(ReduceKind::Max) << true << std::vector<float>{8};
        QTest::addRow("min all (0-d)") << int(ReduceKind::Min) << true << std::vector<float>{-9};
    }
    void testReductions() {
        QFETCH(int, kind);
        QFETCH(bool, all);
        QFETCH(std::vector<float>, expected);
        auto m = placeholder({3, 4}, "M");
        Buffer mb{{3, 4}, {3, -1, 4, 1, -5, -9, -2, -6, 5, 3, 5, 8}};
        auto r = reduceAxis(3, "r"), k = reduceAxis(4, "k");
        Tensor out = all ? compute({}, {}, [&](const std::vector<Var>&) {
            return reduce(ReduceKind(kind), m(r.var, k.var), {r, k});
        }, "red") : compute({3}, {"i"}, [&](const std::vector<Var>& v) {
            return reduce(ReduceKind(kind), m(v[0], k.var), {k});
        }, "red");
        for (const auto& opts : {EvalOptions{}, serialGeneral()}) {
            BufferMap res = evaluateTensors({out}, {{m.op(), mb}}, opts);
            QCOMPARE(res.at(out.op()).data, expected);
            QCOMPARE(res.at(out.op()).shape, out.shape());
        }
    }

    void testReduceConditionAndInit() {
        auto m = placeholder({4}, "M");
        Buffer mb{{4}, {3, -1, 4, 1}};
        auto k = reduceAxis(4, "k");
        // Prefix sums through a condition, with and without an init value.
        auto prefix = compute({4}, {"i"}, [&](const std::vector<Var>& v) {
            return reduce(ReduceKind::Sum, m(k.var), {k}, k.var <= v[0]);
        }, "prefix");
        auto prefixInit = compute({4}, {"i"}, [&](const std::vector<Var>& v) {
            return reduce(ReduceKind::Sum, m(k.var), {k}, k.var <= v[0], Expr(10.0f));
        }, "prefix_init");
        // A max whose condition never holds yields TVM's identity, the lowest float32.
        auto empty = compute({1}, {"i"}, [&](const std::vector<Var>& v) {
            return reduce(ReduceKind::Max, m(k.var), {k}, k.var < v[0]);
        }, "empty_max");
        // Init without condition goes through the specialized loop.
        auto sumInit = compute({1}, {"i"}, [&](const std::vector<Var>&) {
            return reduce(ReduceKind::Sum, m(k.var), {k}, Expr(), Expr(-100.0f));
        }, "sum_init");
        for (const auto& opts : {EvalOptions{}, serialGeneral()}) {
            BufferMap res = evaluateTensors({prefix, prefixInit, empty, sumInit}, {{m.op(), mb}}, opts);
            QCOMPARE(res.at(prefix.op()).data, (std::vector<float>{3, 2, 6, 7}));
            QCOMPARE(res.at(prefixInit.op()).data, (std::vector<float>{13, 12, 16, 17}));
            QCOMPARE(res.at(empty.op()).data, (std::vector<float>{-FLT_MAX}));
            QCOMPARE(res.at(sumInit.op()).data, (std::vector<float>{-93}));
        }
    }

    void testSelectAndIfThenElse() {
        std::vector<float> x{-2, -0.5f, 0, 1.5f};
        QCOMPARE(unary1d(x, [](const Tensor& t, const Var& i) { return select(t(i) > 0.0f, t(i), 0.0f); }),
                 (std::vector<float>{0, 0, 0, 1.5f}));
        // Guarded reads past the end: only the taken branch is evaluated, so no out-of-bounds error.
        QCOMPARE(unary1d(x, [](const Tensor& t, const Var& i) { return ifThenElse(i < 4, t(i), -1.0f); }, 6),
                 (std::vector<float>{-2, -0.5f, 0, 1.5f, -1, -1}));
        QCOMPARE(unary1d(x, [](const Tensor& t, const Var& i) { return select(i < 4, t(i), -1.0f); }, 6),
                 (std::vector<float>{-2, -0.5f, 0, 1.5f, -1, -1}));
        QCOMPARE(unary1d(x, [](const Tensor& t, const Var& i) {
                     return ifThenElse(logicalAnd(i >= 1, i < 5), t(i - 1), 0.0f);
                 }, 6),
                 (std::vector<float>{0, -2, -0.5f, 0, 1.5f, 0}));
        // Short-circuit &&: the second operand would read out of bounds when i >= 4.
        QCOMPARE(unary1d(x, [](const Tensor& t, const Var& i) {
                     return select(logicalAnd(i < 4, t(i) < 0.0f), 1.0f, 0.0f);
                 }, 6),
                 (std::vector<float>{1, 1, 0, 0, 0, 0}));
        QCOMPARE(unary1d(x, [](const Tensor& t, const Var& i) {
                     return select(logicalOr(i >= 4, logicalNot(t(i) < 0.0f)), 1.0f, 0.0f);
                 }, 6),
                 (std::vector<float>{0, 0, 1, 1, 1, 1}));
    }

    void testIntegerMath_data() {
        QTest::addColumn<int>("op");
        QTest::addColumn<std::vector<float>>("expected");
        // v = i - 7 for i = 0..9, i.e. v = -7..2 (values worked out by hand).
        QTest::addRow("floordiv(v, 3)") << 0 << std::vector<float>{-3, -2, -2, -2, -1, -1, -1, 0, 0, 0};
        QTest::addRow("floormod(v, 3)") << 1 << std::vector<float>{2, 0, 1, 2, 0, 1, 2, 0, 1, 2};
        QTest::addRow("truncdiv(v, 3)") << 2 << std::vector<float>{-2, -2, -1, -1, -1, 0, 0, 0, 0, 0};
        QTest::addRow("truncmod(v, 3)") << 3 << std::vector<float>{-1, 0, -2, -1, 0, -2, -1, 0, 1, 2};
        QTest::addRow("floordiv(v, -3)") << 4 << std::vector<float>{2, 2, 1, 1, 1, 0, 0, 0, -1, -1};
        QTest::addRow("floormod(v, -3)") << 5 << std::vector<float>{-1, 0, -2, -1, 0, -2, -1, 0, -2, -1};
        QTest::addRow("min(v, -3)") << 6 << std::vector<float>{-7, -6, -5, -4, -3, -3, -3, -3, -3, -3};
        QTest::addRow("max(v*2, -3)") << 7 << std::vector<float>{-3, -3, -3, -3, -3, -3, -2, 0, 2, 4};
        QTest::addRow("select abs") << 8 << std::vector<float>{7, 6, 5, 4, 3, 2, 1, 0, 1, 2};
        QTest::addRow("(v >= -2) != (v == 0)") << 9 << std::vector<float>{0, 0, 0, 0, 0, 1, 1, 0, 1, 1};
        QTest::addRow("floordiv by a variable") << 10 << std::vector<float>{-7, -3, -2, -1, -1, -1, -1, 0, 0, 0};
        QTest::addRow("A[floormod(v, 4)]") << 11 << std::vector<float>{20, 30, 40, 10, 20, 30, 40, 10, 20, 30};
        QTest::addRow("v*v - 3*v") << 12 << std::vector<float>{70, 54, 40, 28, 18, 10, 4, 0, -2, -2};
    }
    void testIntegerMath() {
        QFETCH(int, op);
        QFETCH(std::vector<float>, expected);
        auto a = placeholder({4}, "A");
        auto out = compute({10}, {"i"}, [&](const std::vector<Var>& iv) {
            Expr i = iv[0];
            Expr v = i - 7;
            switch (op) {
                case 0: return cast(DType::Float32, floordiv(v, 3));
                case 1: return cast(DType::Float32, floormod(v, 3));
                case 2: return cast(DType::Float32, v / 3);
                case 3: return cast(DType::Float32, truncmod(v, 3));
                case 4: return cast(DType::Float32, floordiv(v, -3));
                case 5: return cast(DType::Float32, floormod(v, -3));
                case 6: return cast(DType::Float32, min(v, -3));
                case 7: return cast(DType::Float32, max(v * 2, -3));
                case 8: return cast(DType::Float32, select(v < 0, Expr(0) - v, v));
                case 9: return cast(DType::Float32, ne(v >= -2, eq(v, 0)));
                case 10: return cast(DType::Float32, floordiv(v, i + 1));  // -7/1, -6/2, -5/3, ...
                case 11: return a(floormod(v, 4));
                default: return cast(DType::Float32, v * v - v * 3);
            }
        }, "out");
        Buffer ab{{4}, {10, 20, 30, 40}};
        for (const auto& opts : {EvalOptions{}, serialGeneral()}) {
            BufferMap res = evaluateTensors({out}, {{a.op(), ab}}, opts);
            QCOMPARE(res.at(out.op()).data, expected);
        }
    }

    void testCasts() {
        std::vector<float> x{-2.7f, -0.5f, 0.0f, 0.5f, 2.7f, 3.0f};
        // float -> int truncates towards zero.
        QCOMPARE(unary1d(x, [](const Tensor& t, const Var& i) { return cast(DType::Float32, cast(DType::Int32, t(i))); }),
                 (std::vector<float>{-2, 0, 0, 0, 2, 3}));
        // Integer math on the truncated value.
        QCOMPARE(unary1d(x, [](const Tensor& t, const Var& i) {
                     return cast(DType::Float32, cast(DType::Int32, t(i)) * 2 + i);
                 }),
                 (std::vector<float>{-4, 1, 2, 3, 8, 11}));
        QCOMPARE(unary1d(x, [](const Tensor& t, const Var& i) { return cast(DType::Float32, cast(DType::Bool, t(i))); }),
                 (std::vector<float>{1, 1, 0, 1, 1, 1}));
        // An explicit cast to float32 rounds: 2^24 + 1 is not representable in float32 (-> 2^24), while
        // 2^24 + 2 is; the subtraction then runs in double.
        QCOMPARE(unary1d({0, 0}, [](const Tensor&, const Var& i) {
                     return cast(DType::Float32, i + 16777217) - 16777216.0f;
                 }),
                 (std::vector<float>{0, 2}));
        // Casting through float64 keeps the double value until the store.
        QCOMPARE(unary1d({0, 0}, [](const Tensor&, const Var& i) {
                     return cast(DType::Float32, cast(DType::Float64, i + 16777217) - makeConst(DType::Float64, 16777216));
                 }),
                 (std::vector<float>{1, 2}));
    }

    void testMathIntrinsics_data() {
        QTest::addColumn<QString>("name");
        for (const char* n : {"exp", "sigmoid", "tanh", "log", "sqrt", "erf", "fabs", "floor", "ceil", "pow"})
            QTest::addRow("%s", n) << QString::fromLatin1(n);
    }
    void testMathIntrinsics() {
        QFETCH(QString, name);
        const std::vector<float> x{-3.0f, -0.7f, -0.5f, 0.0f, 0.25f, 1.5f, 2.5f};
        std::function<Expr(Expr)> te;
        std::function<double(double)> ref;
        if (name == QLatin1String("exp")) { te = [](Expr e) { return exp(e); }; ref = [](double v) { return std::exp(v); }; }
        if (name == QLatin1String("sigmoid")) { te = [](Expr e) { return sigmoid(e); }; ref = [](double v) { return 1.0 / (1.0 + std::exp(-v)); }; }
        if (name == QLatin1String("tanh")) { te = [](Expr e) { return tanh(e); }; ref = [](double v) { return std::tanh(v); }; }
        if (name == QLatin1String("log")) { te = [](Expr e) { return log(fabs(e) + 1.0f); }; ref = [](double v) { return std::log(std::fabs(v) + 1.0); }; }
        if (name == QLatin1String("sqrt")) { te = [](Expr e) { return sqrt(fabs(e)); }; ref = [](double v) { return std::sqrt(std::fabs(v)); }; }
        if (name == QLatin1String("erf")) { te = [](Expr e) { return erf(e); }; ref = [](double v) { return std::erf(v); }; }
        if (name == QLatin1String("fabs")) { te = [](Expr e) { return fabs(e); }; ref = [](double v) { return std::fabs(v); }; }
        if (name == QLatin1String("floor")) { te = [](Expr e) { return floor(e); }; ref = [](double v) { return std::floor(v); }; }
        if (name == QLatin1String("ceil")) { te = [](Expr e) { return ceil(e); }; ref = [](double v) { return std::ceil(v); }; }
        if (name == QLatin1String("pow")) { te = [](Expr e) { return pow(e, 3.0f); }; ref = [](double v) { return std::pow(v, 3.0); }; }
        QVERIFY(te && ref);
        auto got = unary1d(x, [&](const Tensor& t, const Var& i) { return te(t(i)); });
        QCOMPARE(got.size(), x.size());
        for (size_t k = 0; k < x.size(); ++k) QCOMPARE(got[k], float(ref(double(x[k]))));
        // Spot values by hand.
        if (name == QLatin1String("sigmoid")) QCOMPARE(got[3], 0.5f);
        if (name == QLatin1String("tanh")) QCOMPARE(got[3], 0.0f);
        if (name == QLatin1String("exp")) QCOMPARE(got[3], 1.0f);
        if (name == QLatin1String("floor")) QCOMPARE(got[1], -1.0f);
        if (name == QLatin1String("ceil")) QCOMPARE(got[1], -0.0f);
    }

    void testRounding() {
        // tir.round is llvm.round (half away from zero); tir.nearbyint rounds half to even.
        const std::vector<float> x{-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.4f};
        auto got = unary1d(x, [](const Tensor& t, const Var& i) { return round(t(i)); });
        QCOMPARE(got, (std::vector<float>{-3, -2, -1, 1, 2, 3, 2}));
        got = unary1d(x, [](const Tensor& t, const Var& i) { return call(DType::Float32, "tir.nearbyint", {t(i)}); });
        QCOMPARE(got, (std::vector<float>{-2, -2, -0.0f, 0, 2, 2, 2}));
        QVERIFY(std::signbit(got[2]));
        got = unary1d(x, [](const Tensor& t, const Var& i) { return call(DType::Float32, "tir.trunc", {t(i)}); });
        QCOMPARE(got, (std::vector<float>{-2, -1, -0.0f, 0, 1, 2, 2}));
    }

    void testMaxMinNanSemantics() {
        // max(a, b) = a > b ? a : b, as TVM lowers it: a NaN second operand wins, a NaN first one loses.
        float nan = std::numeric_limits<float>::quiet_NaN();
        auto got = unary1d({nan, 1.0f}, [](const Tensor& t, const Var& i) { return max(t(i), 0.5f); });
        QCOMPARE(got.size(), size_t(2));
        QCOMPARE(got[0], 0.5f);
        QCOMPARE(got[1], 1.0f);
        got = unary1d({nan, 1.0f}, [](const Tensor& t, const Var& i) { return max(Expr(0.5f), t(i)); });
        QCOMPARE(got.size(), size_t(2));
        QVERIFY(std::isnan(got[0]));
        QCOMPARE(got[1], 1.0f);
    }

    void testRandomConv2d_data() {
        QTest::addColumn<ConvCase>("c");
        QTest::addRow("3x3 s1 p1") << ConvCase{1, 9, 9, 5, 7, 3, 3, 1, 1, 1};
        QTest::addRow("3x3 s2 p1") << ConvCase{1, 10, 11, 4, 6, 3, 3, 2, 1, 1};
        QTest::addRow("5x5 s2 p2 batch 2") << ConvCase{2, 8, 8, 3, 5, 5, 5, 2, 2, 1};
        QTest::addRow("1x1 s1 p0") << ConvCase{1, 7, 7, 16, 8, 1, 1, 1, 0, 1};
        QTest::addRow("3x3 s1 p2 dilation 2") << ConvCase{1, 9, 8, 3, 4, 3, 3, 1, 2, 2};
        QTest::addRow("7x7 s2 p3 (stem)") << ConvCase{1, 16, 16, 3, 8, 7, 7, 2, 3, 1};
        QTest::addRow("3x1 s1 p0 non-square") << ConvCase{1, 6, 5, 2, 3, 3, 1, 1, 0, 1};
    }
    void testRandomConv2d() {
        QFETCH(ConvCase, c);
        auto x = placeholder({c.n, c.h, c.w, c.ci}, "p0");
        auto w = placeholder({c.kh, c.kw, c.ci, c.co}, "p1");
        Tensor conv = conv2dNhwc(x, w, c);
        ComputeDAG dag({x, w, conv});
        Buffer xb = randomBuffer(x.shape(), 11), wb = randomBuffer(w.shape(), 12);
        Buffer ref = conv2dNhwcLoops(xb, wb, c);
        auto fast = evaluate(dag, {xb, wb});
        auto general = evaluate(dag, {xb, wb}, serialGeneral());
        auto threaded = evaluate(dag, {xb, wb}, forcedThreads());
        QCOMPARE(mismatches(fast[0], ref), int64_t(0));
        QCOMPARE(mismatches(general[0], ref), int64_t(0));
        QCOMPARE(mismatches(threaded[0], ref), int64_t(0));
    }

    void testRandomDepthwise_data() {
        QTest::addColumn<int>("h");
        QTest::addColumn<int>("c");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("stride");
        QTest::addRow("3x3 s1") << 12 << 8 << 3 << 1;
        QTest::addRow("3x3 s2") << 13 << 5 << 3 << 2;
        QTest::addRow("5x5 s2") << 11 << 4 << 5 << 2;
    }
    void testRandomDepthwise() {
        QFETCH(int, h);
        QFETCH(int, c);
        QFETCH(int, k);
        QFETCH(int, stride);
        const int pad = k / 2, oh = (h + 2 * pad - k) / stride + 1;
        auto x = placeholder({1, h, h, c}, "p0");
        auto w = placeholder({k, k, c, 1}, "p1");
        Tensor pi = padNhwc(x, pad, 0.0f, "PaddedInput");
        auto di = reduceAxis(k, "di"), dj = reduceAxis(k, "dj");
        auto dw = compute({1, oh, oh, c}, {"b", "i", "j", "c"}, [&](const std::vector<Var>& v) {
            return sum(pi(v[0], v[1] * stride + di.var, v[2] * stride + dj.var, v[3]) * w(di.var, dj.var, v[3], 0),
                       {di, dj});
        }, "DepthwiseConv2d");
        ComputeDAG dag({x, w, dw});
        Buffer xb = randomBuffer(x.shape(), 21), wb = randomBuffer(w.shape(), 22);
        Buffer ref = Buffer::zeros({1, oh, oh, c});
        for (int i = 0; i < oh; ++i)
            for (int j = 0; j < oh; ++j)
                for (int ch = 0; ch < c; ++ch) {
                    double acc = 0;
                    for (int a = 0; a < k; ++a)
                        for (int b = 0; b < k; ++b) {
                            int y = i * stride + a - pad, xx = j * stride + b - pad;
                            float v = (y >= 0 && y < h && xx >= 0 && xx < h) ? xb.at({0, y, xx, ch}) : 0.0f;
                            acc += double(v) * double(wb.at({a, b, ch, 0}));
                        }
                    ref.at({0, i, j, ch}) = float(acc);
                }
        QCOMPARE(mismatches(evaluate(dag, {xb, wb})[0], ref), int64_t(0));
        QCOMPARE(mismatches(evaluate(dag, {xb, wb}, serialGeneral())[0], ref), int64_t(0));
        QCOMPARE(mismatches(evaluate(dag, {xb, wb}, forcedThreads())[0], ref), int64_t(0));
    }

    void testPoolingAndSoftmax() {
        // Padded 3x3 s2 max pool (pad value = lowest float32), global average pool and softmax,
        // against loops.
        const int h = 9, c = 3, oh = 5;
        auto x = placeholder({1, h, h, c}, "p0");
        Tensor pt = padNhwc(x, 1, -FLT_MAX, "pad_temp");
        auto rv0 = reduceAxis(3, "rv0"), rv1 = reduceAxis(3, "rv1");
        auto pool = compute({1, oh, oh, c}, axisNames(4, "ax"), [&](const std::vector<Var>& v) {
            return reduceMax(pt(v[0], v[1] * 2 + rv0.var, v[2] * 2 + rv1.var, v[3]), {rv0, rv1});
        }, "pool_max");
        auto g0 = reduceAxis(h, "rv0"), g1 = reduceAxis(h, "rv1");
        auto gsum = compute({1, 1, 1, c}, axisNames(4, "ax"), [&](const std::vector<Var>& v) {
            return sum(x(v[0], v[1] * h + g0.var, v[2] * h + g1.var, v[3]), {g0, g1});
        }, "adaptive_pool_sum");
        auto gavg = compute({1, 1, 1, c}, axisNames(4, "ax"), [&](const std::vector<Var>& v) {
            return gsum(v[0], v[1], v[2], v[3]) / float(h * h);
        }, "adaptive_pool_avg");
        auto k = reduceAxis(c, "k");
        auto maxel = compute({1}, {"i0"}, [&](const std::vector<Var>& v) { return reduceMax(gavg(v[0], 0, 0, k.var), {k}); },
                             "T_softmax_maxelem");
        auto ex = compute({1, c}, {"i0", "i1"}, [&](const std::vector<Var>& v) {
            return exp(gavg(v[0], 0, 0, v[1]) - maxel(v[0]));
        }, "T_softmax_exp");
        auto k2 = reduceAxis(c, "k");
        auto esum = compute({1}, {"i0"}, [&](const std::vector<Var>& v) { return sum(ex(v[0], k2.var), {k2}); },
                            "T_softmax_expsum");
        auto norm = compute({1, c}, {"i0", "i1"}, [&](const std::vector<Var>& v) {
            return ex(v[0], v[1]) / esum(v[0]);
        }, "T_softmax_norm");
        ComputeDAG dag({x, pool, norm});
        Buffer xb = randomBuffer(x.shape(), 31);
        auto out = evaluate(dag, {xb});
        QCOMPARE(out.size(), size_t(2));
        QCOMPARE(mismatches(out[0], evaluate(dag, {xb}, serialGeneral())[0]), int64_t(0));
        for (int i = 0; i < oh; ++i)
            for (int j = 0; j < oh; ++j)
                for (int ch = 0; ch < c; ++ch) {
                    double m = -FLT_MAX;
                    for (int a = 0; a < 3; ++a)
                        for (int b = 0; b < 3; ++b) {
                            int y = i * 2 + a - 1, xx = j * 2 + b - 1;
                            double v = (y >= 0 && y < h && xx >= 0 && xx < h) ? xb.at({0, y, xx, ch}) : -FLT_MAX;
                            m = m > v ? m : v;
                        }
                    QCOMPARE(out[0].at({0, i, j, ch}), float(m));
                }
        double avg[c], mx = -FLT_MAX, es = 0, e[c];
        for (int ch = 0; ch < c; ++ch) {
            double s = 0;
            for (int y = 0; y < h; ++y)
                for (int xx = 0; xx < h; ++xx) s += xb.at({0, y, xx, ch});
            avg[ch] = float(float(s) / double(float(h * h)));
            mx = mx > avg[ch] ? mx : avg[ch];
        }
        for (int ch = 0; ch < c; ++ch) es += (e[ch] = float(std::exp(avg[ch] - double(float(mx)))));
        for (int ch = 0; ch < c; ++ch) QCOMPARE(out[1].at({0, ch}), float(e[ch] / double(float(es))));
    }

    void testProductOfThreeLoadsAndNonAffineIndices() {
        // A winograd-style transform: data_pack(eps, nu, p) += (tile[ra, rb, p] * B[ra, eps]) * B[rb, nu],
        // with tile gathered from the input through floordiv/floormod indices.
        const int P = 6, T = 4;
        auto d = placeholder({2 * T, 3 * T}, "d");
        auto bm = placeholder({T, T}, "B");
        auto tile = compute({T, T, P}, {"eps", "nu", "p"}, [&](const std::vector<Var>& v) {
            return d(floordiv(v[2], 3) * T + v[0], floormod(v[2], 3) * T + v[1]);
        }, "input_tile");
        auto ra = reduceAxis(T, "r_a"), rb = reduceAxis(T, "r_b");
        auto pack = compute({T, T, P}, {"eps", "nu", "p"}, [&](const std::vector<Var>& v) {
            return sum(tile(ra.var, rb.var, v[2]) * bm(ra.var, v[0]) * bm(rb.var, v[1]), {ra, rb});
        }, "data_pack");
        ComputeDAG dag({d, bm, pack});
        Buffer db = randomBuffer(d.shape(), 41), bb = randomBuffer(bm.shape(), 42);
        auto fast = evaluate(dag, {db, bb});
        auto general = evaluate(dag, {db, bb}, serialGeneral());
        QCOMPARE(mismatches(fast[0], general[0]), int64_t(0));
        for (int eps = 0; eps < T; ++eps)
            for (int nu = 0; nu < T; ++nu)
                for (int p = 0; p < P; ++p) {
                    double acc = 0;
                    for (int a = 0; a < T; ++a)
                        for (int b = 0; b < T; ++b)
                            acc += double(db.at({(p / 3) * T + a, (p % 3) * T + b})) * double(bb.at({a, eps})) *
                                   double(bb.at({b, nu}));
                    float got = fast[0].at({eps, nu, p});
                    QVERIFY2(std::fabs(double(got) - acc) <= 1e-6 * (1 + std::fabs(acc)), qPrintable(QString::number(got)));
                }
    }

    void testEvaluateTensorsReturnsIntermediates() {
        ConvCase c{1, 5, 5, 2, 3, 3, 3, 1, 1, 1};
        auto x = placeholder({1, 5, 5, 2}, "p0");
        auto w = placeholder({3, 3, 2, 3}, "p1");
        Tensor conv = conv2dNhwc(x, w, c);
        Operation padOp = conv.op()->inputTensors().at(0).op();
        QCOMPARE(padOp->name, std::string("pad_temp"));
        Buffer xb = randomBuffer(x.shape(), 51), wb = randomBuffer(w.shape(), 52);
        BufferMap res = evaluateTensors({conv}, {{x.op(), xb}, {w.op(), wb}});
        QCOMPARE(res.size(), size_t(2));  // pad_temp and conv2d_nhwc, not the inputs
        const Buffer& pad = res.at(padOp);
        QCOMPARE(pad.shape, (std::vector<int64_t>{1, 7, 7, 2}));
        for (int y = 0; y < 7; ++y)
            for (int xx = 0; xx < 7; ++xx)
                for (int ch = 0; ch < 2; ++ch) {
                    bool in = y >= 1 && y <= 5 && xx >= 1 && xx <= 5;
                    QCOMPARE(pad.at({0, y, xx, ch}), in ? xb.at({0, y - 1, xx - 1, ch}) : 0.0f);
                }
        QCOMPARE(mismatches(res.at(conv.op()), conv2dNhwcLoops(xb, wb, c)), int64_t(0));
        // A given compute op is used as is: feed a pad_temp of ones; the input is not needed.
        Buffer ones = Buffer::zeros({1, 7, 7, 2});
        std::fill(ones.data.begin(), ones.data.end(), 1.0f);
        BufferMap res2 = evaluateTensors({conv}, {{padOp, ones}, {w.op(), wb}});
        QCOMPARE(res2.size(), size_t(1));
        for (int f = 0; f < 3; ++f) {
            double s = 0;
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b)
                    for (int ch = 0; ch < 2; ++ch) s += wb.at({a, b, ch, f});
            QCOMPARE(res2.at(conv.op()).at({0, 2, 3, f}), float(s));
        }
    }

    void testDagWithSeveralOutputs() {
        auto a = placeholder({3}, "A");
        auto b = placeholder({3}, "B");
        auto s = compute({3}, {"i"}, [&](const std::vector<Var>& v) { return a(v[0]) + b(v[0]); }, "T_add");
        auto m = compute({3}, {"i"}, [&](const std::vector<Var>& v) { return s(v[0]) * a(v[0]); }, "T_multiply");
        ComputeDAG dag({a, b, m, s});
        auto out = evaluate(dag, {Buffer{{3}, {1, 2, 3}}, Buffer{{3}, {10, 20, 30}}});
        QCOMPARE(out.size(), size_t(2));
        QCOMPARE(out[0].data, (std::vector<float>{11, 44, 99}));
        QCOMPARE(out[1].data, (std::vector<float>{11, 22, 33}));
    }

    void testErrors_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<bool>("internal");
        QTest::addColumn<QString>("needle");
        QTest::addRow("affine load past the end") << 0 << true << QStringLiteral("A[4]");
        QTest::addRow("non-affine load past the end") << 1 << true << QStringLiteral("A[4]");
        QTest::addRow("reduction load past the end") << 2 << true << QStringLiteral("A[4]");
        QTest::addRow("negative index") << 3 << true << QStringLiteral("A[-1]");
        QTest::addRow("per-dimension check") << 4 << true << QStringLiteral("M[0, 3]");
        QTest::addRow("first error when threaded") << 5 << true << QStringLiteral("A[1010]");
        QTest::addRow("integer division by zero") << 6 << true << QStringLiteral("division by zero");
        QTest::addRow("cast out of range") << 7 << true << QStringLiteral("out of range");
        QTest::addRow("unknown intrinsic") << 8 << true << QStringLiteral("tir.bogus");
        QTest::addRow("wrong input shape") << 9 << false << QStringLiteral("[4]");
        QTest::addRow("wrong input count") << 10 << false << QStringLiteral("1 inputs, got 2");
        QTest::addRow("data size mismatch") << 11 << false << QStringLiteral("needs 4 values, got 3");
        QTest::addRow("missing placeholder") << 12 << false << QStringLiteral("'A'");
    }
    void testErrors() {
        QFETCH(int, which);
        QFETCH(bool, internal);
        QFETCH(QString, needle);
        auto a = placeholder({4}, "A");
        auto m = placeholder({2, 3}, "M");
        Tensor out;
        std::vector<Buffer> inputs{Buffer{{4}, {1, 2, 3, 4}}};
        EvalOptions opts;
        auto k = reduceAxis(3, "k");
        auto body = [&](std::function<Expr(const Var&)> f, int64_t n = 4) {
            return compute({n}, {"i"}, [&](const std::vector<Var>& v) { return f(v[0]); }, "out");
        };
        switch (which) {
            case 0: out = body([&](const Var& i) { return a(i + 1); }); break;
            case 1: out = body([&](const Var& i) { return a(floormod(i, 3) * 2); }); break;
            case 2: out = body([&](const Var& i) { return sum(a(i + k.var), {k}); }); break;
            case 3: out = body([&](const Var& i) { return a(i - 1); }); break;
            case 4:
                // Flat offset 3 is inside M's 6 elements, but column 3 is not.
                out = compute({2, 4}, {"i", "j"}, [&](const std::vector<Var>& v) { return m(v[0], v[1]); }, "out");
                inputs = {Buffer{{2, 3}, {1, 2, 3, 4, 5, 6}}};
                break;
            case 5:
                out = body([&](const Var& i) {
                    return ifThenElse(logicalOr(eq(i, 10), i >= 60), a(i + 1000), a(floormod(i, 4)));
                }, 100);
                opts = forcedThreads();
                break;
            case 6: out = body([&](const Var& i) { return cast(DType::Float32, floordiv(7, i)); }); break;
            case 7: out = body([&](const Var& i) { return cast(DType::Float32, cast(DType::Int32, a(i) * 1e10f)); }); break;
            case 8: out = body([&](const Var& i) { return call(DType::Float32, "tir.bogus", {a(i)}); }); break;
            case 9: out = body([&](const Var& i) { return a(i); }); inputs = {Buffer{{2, 2}, {1, 2, 3, 4}}}; break;
            case 10: out = body([&](const Var& i) { return a(i); }); inputs.push_back(inputs[0]); break;
            case 11: out = body([&](const Var& i) { return a(i); }); inputs = {Buffer{{4}, {1, 2, 3}}}; break;
            default: out = body([&](const Var& i) { return a(i); }); break;
        }
        bool gotInternal, gotUser;
        QString msg;
        if (which == 12) {
            msg = errorOf([&] { evaluateTensors({out}, {}); }, &gotInternal, &gotUser);
        } else {
            ComputeDAG dag({which == 4 ? m : a, out});
            msg = errorOf([&] { evaluate(dag, inputs, opts); }, &gotInternal, &gotUser);
        }
        QVERIFY2(internal ? gotInternal : gotUser, qPrintable(msg));
        QVERIFY2(msg.contains(needle), qPrintable(msg));
        if (which <= 5) QVERIFY2(msg.contains(QLatin1String("'out'")), qPrintable(msg));  // names the stage
    }

    void testConv56x56x64() {
        // conv2d_nhwc 3x3 s1 p1, 1x56x56x64 -> 64: 115.6 M multiply-adds. Timing is printed only.
        ConvCase c{1, 56, 56, 64, 64, 3, 3, 1, 1, 1};
        auto x = placeholder({1, 56, 56, 64}, "p0");
        auto w = placeholder({3, 3, 64, 64}, "p1");
        Tensor conv = conv2dNhwc(x, w, c);
        ComputeDAG dag({x, w, conv});
        Buffer xb = randomBuffer(x.shape(), 61), wb = randomBuffer(w.shape(), 62);
        QElapsedTimer timer;
        timer.start();
        std::clock_t cpu0 = std::clock();
        EvalOptions one;
        one.numThreads = 1;
        auto serial = evaluate(dag, {xb, wb}, one);
        qint64 serialMs = timer.restart();
        double serialCpuMs = 1000.0 * double(std::clock() - cpu0) / CLOCKS_PER_SEC;
        auto parallel = evaluate(dag, {xb, wb});
        qint64 parallelMs = timer.elapsed();
        // Wall time depends on what else runs on the machine; the CPU time of the serial run less so.
        qInfo("conv2d_nhwc 56x56x64->64 3x3 (115.6 M MACs): 1 thread %lld ms wall (%.0f ms CPU), "
              "default threads %lld ms wall",
              serialMs, serialCpuMs, parallelMs);
        QCOMPARE(mismatches(serial[0], parallel[0]), int64_t(0));
        // Check sampled outputs (borders included) against a direct sum.
        std::mt19937 rng(63);
        for (int s = 0; s < 64; ++s) {
            int y = int(rng() % 56), xx = int(rng() % 56), f = int(rng() % 64);
            if (s < 4) y = s % 2 ? 55 : 0;
            double acc = 0;
            for (int ry = 0; ry < 3; ++ry)
                for (int rx = 0; rx < 3; ++rx)
                    for (int rc = 0; rc < 64; ++rc) {
                        int iy = y + ry - 1, ix = xx + rx - 1;
                        float v = (iy >= 0 && iy < 56 && ix >= 0 && ix < 56) ? xb.at({0, iy, ix, rc}) : 0.0f;
                        acc += double(v) * double(wb.at({ry, rx, rc, f}));
                    }
            QCOMPARE(parallel[0].at({0, y, xx, f}), float(acc));
        }
    }
};

QTEST_APPLESS_MAIN(TestInterpreter)
#include "tst_interpreter.moc"
