// SPDX-License-Identifier: Apache-2.0
// topi: the operator library must print (and so hash) exactly as TVM v0.14's topi. Checked against
// the task dumps in shared/seeds (full-mode DAG text + workload key of every mobilenet task, in the
// v0.14 `p0` naming and the older `placeholder` naming), the DAG-template md5 table of
// REFERENCE-ZOO §5.0 (resnet-18 convs, max pool, winograd), TVM's FLOP rule, bad input, and the
// reference interpreter against naive loops.
#include <QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <functional>
#include <random>

#include "engine/support/error.h"
#include "engine/support/md5.h"
#include "engine/te/compute_dag.h"
#include "engine/te/interpreter.h"
#include "engine/te/printer.h"
#include "engine/topi/broadcast.h"
#include "engine/topi/elemwise.h"
#include "engine/topi/image/resize.h"
#include "engine/topi/nn.h"
#include "engine/topi/nn/conv2d.h"
#include "engine/topi/nn/conv2d_transpose.h"
#include "engine/topi/nn/conv3d.h"
#include "engine/topi/nn/dense.h"
#include "engine/topi/nn/depthwise_conv2d.h"
#include "engine/topi/nn/flatten.h"
#include "engine/topi/nn/pooling.h"
#include "engine/topi/nn/softmax.h"
#include "engine/topi/nn/winograd.h"
#include "engine/topi/reduction.h"
#include "engine/topi/transform.h"
#include "tests/engine/test_util.h"

using namespace tb;
using namespace tb::te;
using tb::test::randomBuffer;
namespace nn = tb::topi::nn;

using Shape = std::vector<int64_t>;
using Shapes = std::vector<Shape>;
Q_DECLARE_METATYPE(Shapes)

namespace {

// ---- seed files ---------------------------------------------------------------------------------

struct SeedTask {
    int index = -1;
    QString key;   // the workload key as printed in the header
    QString text;  // the full-mode DAG print (every line + '\n')
    Shapes shapes; // io shapes parsed from the key
};

// Every "========== Task i  (workload key: ...) ==========" block of a tutorial dump: the DAG text
// runs until a blank line, a code fence or the next header.
std::vector<SeedTask> parseSeed(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
    static const QRegularExpression header(
        QStringLiteral("^========== Task (\\d+)  \\(workload key: (.*)\\) ==========$"));
    std::vector<SeedTask> tasks;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        auto m = header.match(lines[i]);
        if (!m.hasMatch()) continue;
        SeedTask t;
        t.index = m.captured(1).toInt();
        t.key = m.captured(2);
        const QJsonArray arr = QJsonDocument::fromJson(t.key.toUtf8()).array();
        for (qsizetype k = 1; k < arr.size(); ++k) {
            Shape s;
            for (const auto& d : arr[k].toArray()) s.push_back(d.toInteger());
            t.shapes.push_back(s);
        }
        for (qsizetype j = i + 1; j < lines.size(); ++j) {
            const QString& l = lines[j];
            if (l.isEmpty() || l.startsWith(QLatin1String("```")) || l.startsWith(QLatin1String("=========="))) break;
            t.text += l + QLatin1Char('\n');
        }
        tasks.push_back(t);
    }
    return tasks;
}

// Placeholder naming: TVM >= 0.8 names fused-function params p0, p1, ...; older releases printed
// every input as "placeholder".
struct Naming {
    bool legacy = false;
    int next = 0;
    Tensor input(const Shape& s) {
        std::string name = legacy ? std::string("placeholder") : "p" + std::to_string(next);
        ++next;
        return placeholder(s, name);
    }
};

struct BuiltTask {
    ComputeDAG dag;
    double expectedFlop = -1;  // TVM's rule computed from the shapes; -1 when not checked
};

int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

// Builds one mobilenet-NHWC task (REFERENCE-ZOO §5.1) from its key shapes alone: two 2-D io
// tensors are the softmax, 2-D data with a weight is dense + bias add, a 4-D input and output alone
// is the global average pool; everything else is a conv (buildConvTask).
BuiltTask buildHeadTask(const Shapes& shapes, bool legacy) {
    Naming nm{legacy};
    const Shape& out = shapes.back();
    const Shape& in = shapes[0];
    if (in.size() == 2 && shapes.size() == 2) {  // softmax
        Tensor x = nm.input(in);
        return {ComputeDAG::fromOutputs({nn::softmax(x, -1)}), -1};
    }
    if (in.size() == 2) {  // dense + bias add: 2*M*N*K, +1 per output element for the add
        Tensor x = nm.input(in), w = nm.input(shapes[1]);
        Tensor y = nn::dense(x, w);
        Tensor b = nm.input(shapes[2]);
        double flop = 2.0 * double(in[0] * w.shape()[0] * in[1]) + double(numel(out));
        return {ComputeDAG::fromOutputs({topi::add(y, b)}), flop};
    }
    Tensor x = nm.input(in);  // global average pool, NHWC
    nn::AdaptivePoolNames names;
    if (legacy) names = {"tensor", "tensor", "tensor"};
    return {ComputeDAG::fromOutputs({nn::globalPool(x, nn::PoolType::Avg, "NHWC", names)}), -1};
}

// A conv task: the strides follow from in/out extents, 3x3 windows are padded by 1, a [KH, KW, C, 1]
// weight with C in = C out is depthwise, and the epilogue takes the extra inputs in order (two
// per-H constants = the stem's BN multiply + add), then relu. Params are created in use order
// (p0 data, p1 weight, then each epilogue operand), as Relay numbers them. FLOPs by TVM's rule:
// 2 per MAC (padding taps included) + 1 per output element per epilogue op.
BuiltTask buildConvTask(const Shapes& shapes, bool legacy) {
    Naming nm{legacy};
    const Shape& in = shapes[0];
    const Shape& ws = shapes[1];
    const Shape& out = shapes.back();
    Tensor x = nm.input(in), w = nm.input(ws);
    const int64_t stride = in[1] / out[1];
    const int64_t pad = (ws[0] - 1) / 2;
    const bool depthwise = ws[3] == 1 && ws[2] == in[3] && out[3] == in[3];
    Tensor y = depthwise ? nn::depthwiseConv2dNhwc(x, w, {stride}, {pad}) : nn::conv2dNhwc(x, w, {stride}, {pad});
    const double macs = depthwise ? double(numel(out) * ws[0] * ws[1]) : double(numel(out) * ws[0] * ws[1] * ws[2]);
    double flop = 2.0 * macs;
    const size_t nExtra = shapes.size() - 3;
    if (nExtra == 2) {  // mobilenet stem: BN on axis 1 stays as multiply + add
        y = topi::multiply(y, nm.input(shapes[2]));
        y = topi::add(y, nm.input(shapes[3]));
    } else {
        for (size_t i = 0; i < nExtra; ++i) y = topi::add(y, nm.input(shapes[2 + i]));
    }
    y = topi::relu(y);
    flop += double(nExtra + 1) * double(numel(out));
    return {ComputeDAG::fromOutputs({y}), flop};
}

BuiltTask buildTask(const Shapes& shapes, bool legacy) {
    if (shapes[0].size() == 4 && shapes.size() >= 3) return buildConvTask(shapes, legacy);
    return buildHeadTask(shapes, legacy);
}

QString qs(const std::string& s) { return QString::fromStdString(s); }

// ---- REFERENCE-ZOO §5.0 templates ----------------------------------------------------------------

// conv2d_nhwc (+ epilogue) with params named in use order. `epilogue`: sequence of
// 'r' residual add (full shape), 'b' bias add [1,1,1,K], 'm' multiply [1,1,1,K], 'R' relu.
Tensor resnetConv(int64_t h, int64_t c, int64_t k, int64_t r, int64_t stride, const std::string& epilogue,
                  bool winograd = false) {
    Naming nm;
    Tensor x = nm.input({1, h, h, c});
    Tensor y;
    if (winograd) {
        Tensor w = nm.input({6, 6, k, c});
        y = nn::conv2dWinogradNhwc(x, w, {1}, true);
    } else {
        Tensor w = nm.input({r, r, c, k});
        y = nn::conv2dNhwc(x, w, {stride}, {(r - 1) / 2});
    }
    const Shape os = y.shape();
    for (char e : epilogue) {
        switch (e) {
            case 'r': y = topi::add(y, nm.input(os)); break;
            case 'b': y = topi::add(y, nm.input({1, 1, 1, k})); break;
            case 'm': y = topi::multiply(y, nm.input({1, 1, 1, k})); break;
            case 'R': y = topi::relu(y); break;
        }
    }
    return y;
}

// ---- interpreter helpers -------------------------------------------------------------------------

// Evaluates `outputs`; `inputs` are matched to the DAG's placeholders by position in `order`
// (the placeholders as the caller created them), whatever order the DAG discovers them in.
std::vector<Buffer> run(const std::vector<Tensor>& outputs, const std::vector<Tensor>& order,
                        const std::vector<Buffer>& inputs) {
    ComputeDAG dag = ComputeDAG::fromOutputs(outputs);
    std::vector<Buffer> byDag;
    for (const auto& t : dag.inputs()) {
        auto it = std::find(order.begin(), order.end(), t);
        if (it == order.end()) throw InternalError("test: unknown placeholder " + t.name());
        byDag.push_back(inputs[size_t(it - order.begin())]);
    }
    return evaluate(dag, byDag);
}

// Max |a - b| relative to max(1, |b|).
double maxRelErr(const std::vector<float>& a, const std::vector<double>& b) {
    double e = 0;
    for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(double(a[i]) - b[i]) / std::max(1.0, std::abs(b[i])));
    return e;
}

}  // namespace

class TestTopi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // 1 + 2. Every task of the seed dumps, rebuilt from its key shapes.
    void testSeedTasks_data() {
        QTest::addColumn<QString>("expectedText");
        QTest::addColumn<QString>("expectedKey");
        QTest::addColumn<Shapes>("shapes");
        QTest::addColumn<bool>("legacy");
        struct File {
            const char* path;
            bool legacy;
            int count;
        };
        const File files[] = {{"../shared/seeds/003_07f7492ab20a7ba4.txt", false, 22},
                              {"../shared/seeds/000_b30ca076338d8682.txt", true, 22}};
        for (const auto& f : files) {
            auto tasks = parseSeed(QString::fromLatin1(f.path));
            QCOMPARE(int(tasks.size()), f.count);
            for (const auto& t : tasks) {
                QVERIFY(!t.text.isEmpty());
                QVERIFY(t.shapes.size() >= 2);
                QTest::addRow("%s task %d", f.legacy ? "000" : "003", t.index) << t.text << t.key << t.shapes << f.legacy;
            }
        }
    }
    void testSeedTasks() {
        QFETCH(QString, expectedText);
        QFETCH(QString, expectedKey);
        QFETCH(Shapes, shapes);
        QFETCH(bool, legacy);
        BuiltTask t = buildTask(shapes, legacy);
        QCOMPARE(qs(t.dag.print(false)), expectedText);
        QCOMPARE(qs(t.dag.workloadKey()), expectedKey);
        // io order = placeholders in discovery order, then the output; shapes as in the key.
        QCOMPARE(t.dag.tensors().size(), shapes.size());
        for (size_t i = 0; i < shapes.size(); ++i) QCOMPARE(t.dag.tensors()[i].shape(), shapes[i]);
    }

    // 4. TVM's FLOP rule for the conv, depthwise and dense tasks of the seed (computed from shapes).
    void testSeedFlops_data() {
        QTest::addColumn<Shapes>("shapes");
        int n = 0;
        for (const auto& t : parseSeed(QStringLiteral("../shared/seeds/003_07f7492ab20a7ba4.txt"))) {
            if (t.shapes.size() < 3) continue;  // pools and softmax have no MAC rule
            QTest::addRow("task %d", t.index) << t.shapes;
            ++n;
        }
        QCOMPARE(n, 20);
    }
    void testSeedFlops() {
        QFETCH(Shapes, shapes);
        BuiltTask t = buildTask(shapes, false);
        QVERIFY(t.expectedFlop > 0);
        QCOMPARE(t.dag.flopCount(), t.expectedFlop);
    }

    // 3. The DAG templates of REFERENCE-ZOO §5.0: md5 of the simple-mode print.
    void testTemplateHashes_data() {
        QTest::addColumn<QString>("md5");
        QTest::addColumn<QString>("simpleText");
        auto row = [](const char* name, const char* md5, const Tensor& out) {
            QTest::addRow("%s", name) << QString::fromLatin1(md5)
                                      << qs(ComputeDAG::fromOutputs({out}).print(true));
        };
        row("1x1 s1 + bias + relu", "6d628209072e3e3dd8f49359935acea6", resnetConv(56, 64, 64, 1, 1, "bR"));
        row("1x1 s1 projection", "2d10de6646307f0e3e5cf4b31c20e69b", resnetConv(56, 64, 64, 1, 1, ""));
        row("1x1 s2 projection", "0fad1b42d0d33418e0a8d15d3bbad3c9", resnetConv(56, 64, 128, 1, 2, ""));
        row("3x3 s1 + bias + relu", "d37380659057397544e056461ea3bad3", resnetConv(56, 64, 64, 3, 1, "bR"));
        row("3x3 s1 + residual", "0ac855bdfa038be57efa3eaf46cce7f3", resnetConv(56, 64, 64, 3, 1, "r"));
        row("3x3 s1 + residual + bias + relu", "21540dea178301d4c9a69e34b539abca", resnetConv(56, 64, 64, 3, 1, "rbR"));
        row("3x3 s1 + residual + mul + add + relu", "79c97af859096e9b9ba27da3644bfbeb",
            resnetConv(7, 512, 512, 3, 1, "rmbR"));
        row("7x7 s2 stem + bias + relu", "07f9fcad27bdd3233f86fe35a5185d33", resnetConv(224, 3, 64, 7, 2, "bR"));
        row("3x3 s2 + bias + relu", "07f9fcad27bdd3233f86fe35a5185d33", resnetConv(56, 64, 128, 3, 2, "bR"));
        {
            Naming nm;
            Tensor x = nm.input({1, 112, 112, 64});
            Tensor y = nn::pool2d(x, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, nn::PoolType::Max, false, "NHWC");
            y = topi::relu(topi::add(y, nm.input({1, 1, 1, 64})));
            row("max pool + bias + relu", "6d012ba18a086c11ee2b85c7324e16f2", y);
        }
        {
            Naming nm;
            Tensor x = nm.input({1, 784}), w = nm.input({128, 784});
            Tensor y = topi::relu(topi::add(nn::dense(x, w), nm.input({1, 128})));
            row("dense + bias + relu (mlp)", "8879a6f07161b9cfdcdaa15096d38651", y);
        }
        row("winograd 28 + residual", "537223baf14e8a59840f417197200f33", resnetConv(28, 128, 128, 3, 1, "r", true));
        row("winograd 28 + bias + relu", "cfd09cf1ca9e943f0ee12a18813a5c75", resnetConv(28, 128, 128, 3, 1, "bR", true));
        row("winograd 28 + residual + bias + relu", "f0fb461c8a70c79e53421d2fedf7ceaf",
            resnetConv(28, 128, 128, 3, 1, "rbR", true));
        row("winograd 14 + residual", "2719b0a74de9776921503aa87576485b", resnetConv(14, 256, 256, 3, 1, "r", true));
        row("winograd 14 + bias + relu", "38552500208b25b4035682b0e93cbce3", resnetConv(14, 256, 256, 3, 1, "bR", true));
        row("winograd 14 + residual + bias + relu", "cafbe7cfba918072327daae9563f1ae9",
            resnetConv(14, 256, 256, 3, 1, "rbR", true));
    }
    void testTemplateHashes() {
        QFETCH(QString, md5);
        QFETCH(QString, simpleText);
        QCOMPARE(qs(md5Hex(simpleText.toStdString())), md5);
    }

    // The include_simple_tasks DAGs of REFERENCE-ZOO §7 (md5 prefixes only are recorded there).
    void testSimpleTaskHashes() {
        {
            Naming nm;
            Tensor x = nm.input({1, 224, 224, 3});
            Tensor y = topi::add(x, nm.input({3}));
            ComputeDAG dag = ComputeDAG::fromOutputs({y});
            QCOMPARE(qs(dag.print(true)), QStringLiteral("p0 = PLACEHOLDER \np1 = PLACEHOLDER \n"
                                                         "T_add(ax0, ax1, ax2, ax3) = (p0[ax0, ax1, ax2, ax3] + p1[ax3])\n"));
            QVERIFY2(dag.hash().rfind("4f7ef6a3", 0) == 0, dag.hash().c_str());
        }
        {
            Naming nm;
            Tensor x = nm.input({1, 56, 56, 64});
            ComputeDAG dag = ComputeDAG::fromOutputs({topi::relu(topi::add(x, nm.input({1, 1, 1, 64})))});
            QVERIFY2(dag.hash().rfind("0805324f", 0) == 0, dag.hash().c_str());
        }
        {
            Naming nm;
            ComputeDAG dag = ComputeDAG::fromOutputs({nn::batchFlatten(nm.input({1, 1, 1, 512}))});
            QCOMPARE(qs(dag.print(true)),
                     QStringLiteral("p0 = PLACEHOLDER \ntensor(ax0, ax1) = p0[ax0, 0, 0, floormod(ax1, 512)]\n"));
            QVERIFY2(dag.hash().rfind("dc304b45", 0) == 0, dag.hash().c_str());
        }
    }

    // Printed forms REFERENCE-ZOO §4-5 spells out for the NCHW(c), pooling and dcgan computes.
    void testStageText_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expectedLine");
        auto row = [](const char* name, const Tensor& out, const char* line) {
            QTest::addRow("%s", name) << qs(ComputeDAG::fromOutputs({out}).print(false)) << QString::fromLatin1(line);
        };
        {
            Tensor d = placeholder({1, 8, 56, 56, 8}, "p0"), w = placeholder({8, 8, 3, 3, 8, 8}, "p1");
            row("conv2d_NCHWc", nn::conv2dNCHWc(d, w, {1}, {1}),
                "conv2d_NCHWc(n, oc_chunk, oh, ow, oc_block) += (data_pad[n, floordiv(ic, 8), (oh + kh), (ow + kw), "
                "floormod(ic, 8)]*p1[oc_chunk, floordiv(ic, 8), kh, kw, floormod(ic, 8), oc_block])");
        }
        {
            Tensor d = placeholder({1, 32, 112, 112, 1}, "p0"), w = placeholder({4, 1, 3, 3, 1, 8}, "p1");
            Tensor d8 = placeholder({1, 4, 112, 112, 8}, "p0");
            row("depthwise NCHWc", nn::depthwiseConv2dNCHWc(d8, w, {1}, {1}),
                "DepthwiseConv2d(b, oco, oh, ow, oci) += (PaddedInput[b, floordiv(((oco*8) + oci), 8), (oh + kh), "
                "(ow + kw), floormod(((oco*8) + oci), 8)]*p1[oco, 0, kh, kw, 0, oci])");
            (void)d;
        }
        {
            Tensor d = placeholder({1, 8, 112, 112, 8}, "p0");
            row("max pool NCHW8c", nn::pool2d(d, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, nn::PoolType::Max, false, "NCHW8c"),
                "pool_max(ax0, ax1, ax2, ax3, ax4) max= pad_temp[ax0, ax1, ((ax2*2) + rv0), ((ax3*2) + rv1), ax4]");
        }
        {
            Tensor d = placeholder({1, 112, 112, 64}, "p0");
            row("max pool pad_temp", nn::pool2d(d, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, nn::PoolType::Max, false, "NHWC"),
                "pad_temp(ax0, ax1, ax2, ax3) = tir.if_then_else(((((ax1 >= 1) && (ax1 < 113)) && (ax2 >= 1)) && "
                "(ax2 < 113)), p0[ax0, (ax1 - 1), (ax2 - 1), ax3], -3.40282e+38f)");
        }
        {
            Tensor d = placeholder({1, 55, 55, 96}, "p0");
            row("unpadded max pool", nn::pool2d(d, {3, 3}, {2, 2}, {1, 1}, {0}, nn::PoolType::Max, false, "NHWC"),
                "pool_max(ax0, ax1, ax2, ax3) max= p0[ax0, ((ax1*2) + rv0), ((ax2*2) + rv1), ax3]");
        }
        {
            Tensor d = placeholder({1, 192, 35, 35}, "p0");
            row("avg pool count_include_pad", nn::pool2d(d, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, nn::PoolType::Avg),
                "pool_avg(ax0, ax1, ax2, ax3) = (pool_sum[ax0, ax1, ax2, ax3]/float32((((min(((ax2 - 1) + 2), 35) - "
                "(ax2 - 1)) + 1)*((min(((ax3 - 1) + 2), 35) - (ax3 - 1)) + 1))))");
        }
        {
            Tensor d = placeholder({1, 2048, 8, 8}, "p0");
            row("avg pool 8x8", nn::pool2d(d, {8, 8}, {1, 1}, {1, 1}, {0}, nn::PoolType::Avg),
                "pool_avg(ax0, ax1, ax2, ax3) = (pool_sum[ax0, ax1, ax2, ax3]/float32((((min((ax2 + 7), 7) - ax2) + "
                "1)*((min((ax3 + 7), 7) - ax3) + 1))))");
        }
        {
            Tensor d = placeholder({1, 512, 4, 4}, "p0"), w = placeholder({512, 256, 4, 4}, "p1");
            row("dcgan kernel_transform", nn::x86::conv2dTransposeNchw(d, w, {2}, {1}),
                "kernel_transform(o, i, h, w) = p1[i, o, (3 - h), (3 - w)]");
        }
        {
            Tensor d = placeholder({1, 64, 56, 56}, "p0"), w = placeholder({64, 64, 3, 3}, "p1");
            row("conv2d_nchw", nn::conv2dNchw(d, w, {1}, {1}),
                "conv2d_nchw(nn, ff, yy, xx) += (pad_temp[nn, rc, (yy + ry), (xx + rx)]*p1[ff, rc, ry, rx])");
        }
        {
            Tensor d = placeholder({1, 56, 56, 64}, "p0"), w = placeholder({3, 3, 16, 64}, "p1");
            row("group_conv2d_nhwc", nn::groupConv2dNhwc(d, w, {1}, {1}, {1}, 4),
                "group_conv2d_nhwc(nn, yy, xx, ff) += (pad_temp[nn, (yy + ry), (xx + rx), ((floordiv(ff, 16)*16) + "
                "rc)]*p1[ry, rx, rc, ff])");
        }
        {
            Tensor d = placeholder({1, 56, 56, 64}, "p0"), w = placeholder({3, 3, 64, 64}, "p1");
            row("dilated conv2d_nhwc", nn::conv2dNhwc(d, w, {1}, {2}, {2}),
                "conv2d_nhwc(nn, yy, xx, ff) += (pad_temp[nn, (yy + (ry*2)), (xx + (rx*2)), rc]*p1[ry, rx, rc, ff])");
        }
        {
            Tensor d = placeholder({1, 3, 16, 112, 112}, "p0"), w = placeholder({64, 3, 3, 7, 7}, "p1");
            row("conv3d_ncdhw", nn::conv3dNcdhw(d, w, {1, 2, 2}, {1, 3, 3}),
                "conv3d_ncdhw(nn, ff, yy, xx, zz) += (pad_temp[nn, rc, (yy + ry), ((xx*2) + rx), ((zz*2) + rz)]*"
                "p1[ff, rc, ry, rx, rz])");
        }
        {
            Tensor a = placeholder({12, 128, 64}, "p0"), b = placeholder({12, 128, 64}, "p1");
            row("batch_matmul", nn::batchMatmul(a, b),
                "T_batch_matmul_NT(b, i, j) += (p0[b, i, k]*p1[b, j, k])");
        }
        {
            Tensor a = placeholder({1, 64, 56, 56}, "p0");
            row("layout_transform NCHW8c", topi::layoutTransform(a, "NCHW", "NCHW8c"),
                "T_layout_trans(ax0, ax1, ax2, ax3, ax4) = tir.if_then_else(((((ax0 < 1) && (((ax1*8) + ax4) < 64)) && "
                "(ax2 < 56)) && (ax3 < 56)), p0[ax0, ((ax1*8) + ax4), ax2, ax3], 0f)");
        }
        {
            Tensor a = placeholder({1, 1000}, "p0");
            row("mean", topi::mean(a, std::vector<int>{1}, true), "T_divide(ax0, ax1) = (p0_red[ax0, ax1]/1000f)");
        }
        {
            Tensor a = placeholder({1, 64, 56, 56}, "p0"), b = placeholder({1, 32, 56, 56}, "p1");
            row("concatenate", topi::concatenate({a, b}, 1),
                "T_concat(ax0, ax1, ax2, ax3) = tir.if_then_else(((ax1 - 64) >= 0), p1[ax0, (ax1 - 64), ax2, ax3], "
                "p0[ax0, ax1, ax2, ax3])");
        }
    }
    void testStageText() {
        QFETCH(QString, text);
        QFETCH(QString, expectedLine);
        QVERIFY2(text.split(QLatin1Char('\n')).contains(expectedLine), qPrintable(text));
    }

    // 5. Bad input is a UserError naming the operator.
    void testBadInput_data() {
        QTest::addColumn<std::function<void()>>("call");
        QTest::addColumn<QString>("mentions");
        using F = std::function<void()>;
        QTest::addRow("conv2d_nhwc rank") << F([] {
            nn::conv2dNhwc(placeholder({56, 56, 64}, "x"), placeholder({3, 3, 64, 64}, "w"), {1}, {1});
        }) << "conv2d_nhwc";
        QTest::addRow("conv2d_nhwc channels") << F([] {
            nn::conv2dNhwc(placeholder({1, 56, 56, 64}, "x"), placeholder({3, 3, 32, 64}, "w"), {1}, {1});
        }) << "conv2d_nhwc";
        QTest::addRow("conv2d_nchw channels") << F([] {
            nn::conv2dNchw(placeholder({1, 64, 56, 56}, "x"), placeholder({64, 32, 3, 3}, "w"), {1}, {1});
        }) << "conv2d_nchw";
        QTest::addRow("conv2d bad padding") << F([] {
            nn::conv2dNhwc(placeholder({1, 56, 56, 64}, "x"), placeholder({3, 3, 64, 64}, "w"), {1}, {1, 1, 1});
        }) << "padding";
        QTest::addRow("conv2d kernel too large") << F([] {
            nn::conv2dNhwc(placeholder({1, 2, 2, 4}, "x"), placeholder({5, 5, 4, 4}, "w"), {1}, {0});
        }) << "does not fit";
        QTest::addRow("group conv groups") << F([] {
            nn::groupConv2dNhwc(placeholder({1, 8, 8, 6}, "x"), placeholder({3, 3, 2, 6}, "w"), {1}, {1}, {1}, 4);
        }) << "groups";
        QTest::addRow("depthwise channels") << F([] {
            nn::depthwiseConv2dNhwc(placeholder({1, 56, 56, 64}, "x"), placeholder({3, 3, 32, 1}, "w"), {1}, {1});
        }) << "depthwise_conv2d_nhwc";
        QTest::addRow("depthwise rank") << F([] {
            nn::depthwiseConv2dNchw(placeholder({1, 64, 56, 56}, "x"), placeholder({64, 3, 3}, "w"), {1}, {1});
        }) << "depthwise_conv2d_nchw";
        QTest::addRow("dense inner dim") << F([] {
            nn::dense(placeholder({1, 512}, "x"), placeholder({1000, 1024}, "w"));
        }) << "dense";
        QTest::addRow("dense rank") << F([] {
            nn::dense(placeholder({1, 1, 512}, "x"), placeholder({1000, 512}, "w"));
        }) << "dense";
        QTest::addRow("batch_matmul k") << F([] {
            nn::batchMatmul(placeholder({2, 4, 8}, "a"), placeholder({2, 5, 7}, "b"));
        }) << "batch_matmul";
        QTest::addRow("broadcast") << F([] { topi::add(placeholder({1, 4, 4}, "a"), placeholder({1, 3, 4}, "b")); })
                                   << "topi.add";
        QTest::addRow("pool layout") << F([] {
            nn::pool2d(placeholder({1, 8, 8}, "x"), {2, 2}, {2, 2}, {1, 1}, {0}, nn::PoolType::Max, false, "NCHW");
        }) << "max_pool2d";
        QTest::addRow("adaptive non-uniform") << F([] {
            nn::adaptivePool(placeholder({1, 7, 7, 8}, "x"), {3, 3}, nn::PoolType::Avg, "NHWC");
        }) << "adaptive";
        QTest::addRow("softmax axis") << F([] { nn::softmax(placeholder({1, 1000}, "x"), 2); }) << "softmax";
        QTest::addRow("reshape size") << F([] { topi::reshape(placeholder({1, 512}, "x"), {1, 500}); }) << "reshape";
        QTest::addRow("concatenate shapes") << F([] {
            topi::concatenate({placeholder({1, 4, 8}, "a"), placeholder({1, 4, 9}, "b")}, 1);
        }) << "concatenate";
        QTest::addRow("squeeze non-unit") << F([] { topi::squeeze(placeholder({1, 4}, "a"), std::vector<int>{1}); })
                                          << "squeeze";
        QTest::addRow("winograd stride kernel") << F([] {
            nn::conv2dWinogradNhwc(placeholder({1, 28, 28, 128}, "x"), placeholder({5, 5, 128, 128}, "w"), {1}, false);
        }) << "winograd";
        QTest::addRow("layout factor") << F([] {
            topi::layoutTransform(placeholder({1, 12, 8, 8}, "x"), "NCHW", "NCHW8c");
        }) << "layout_transform";
        QTest::addRow("bias_add size") << F([] {
            nn::biasAdd(placeholder({1, 64, 8, 8}, "x"), placeholder({32}, "b"), 1);
        }) << "bias_add";
        QTest::addRow("resize mode") << F([] {
            topi::image::resize2d(placeholder({1, 3, 8, 8}, "x"), {16, 16}, "NCHW", "linear", "bogus");
        }) << "resize2d";
        QTest::addRow("clip bounds") << F([] { topi::clip(placeholder({4}, "x"), 1.0, 0.0); }) << "clip";
    }
    void testBadInput() {
        QFETCH(std::function<void()>, call);
        QFETCH(QString, mentions);
        try {
            call();
            QFAIL("no UserError thrown");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(mentions), e.what());
        }
    }

    // ---- numerics against naive loops (reference interpreter) ------------------------------------

    void testConv2dNhwcNumerics() {
        const int64_t H = 9, C = 5, K = 6, R = 3, S = 2, P = 1;
        Tensor x = placeholder({1, H, H, C}, "p0"), w = placeholder({R, R, C, K}, "p1");
        Tensor y = nn::conv2dNhwc(x, w, {S}, {P});
        Buffer bx = randomBuffer(x.shape(), 1), bw = randomBuffer(w.shape(), 2);
        auto out = run({y}, {x, w}, {bx, bw});
        const int64_t OH = (H + 2 * P - R) / S + 1;
        QCOMPARE(out[0].shape, (Shape{1, OH, OH, K}));
        std::vector<double> ref;
        for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OH; ++ox)
                for (int64_t k = 0; k < K; ++k) {
                    double acc = 0;
                    for (int64_t ry = 0; ry < R; ++ry)
                        for (int64_t rx = 0; rx < R; ++rx)
                            for (int64_t c = 0; c < C; ++c) {
                                int64_t iy = oy * S + ry - P, ix = ox * S + rx - P;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                                acc += double(bx.at({0, iy, ix, c})) * double(bw.at({ry, rx, c, k}));
                            }
                    ref.push_back(acc);
                }
        QVERIFY(maxRelErr(out[0].data, ref) < 1e-5);
    }

    void testDepthwiseAndGroupNumerics() {
        const int64_t H = 7, C = 4, M = 2;
        Tensor x = placeholder({1, C, H, H}, "p0"), w = placeholder({C, M, 3, 3}, "p1");
        Tensor y = nn::depthwiseConv2dNchw(x, w, {1}, {1});
        Buffer bx = randomBuffer(x.shape(), 3), bw = randomBuffer(w.shape(), 4);
        auto out = run({y}, {x, w}, {bx, bw});
        std::vector<double> ref;
        for (int64_t oc = 0; oc < C * M; ++oc)
            for (int64_t oy = 0; oy < H; ++oy)
                for (int64_t ox = 0; ox < H; ++ox) {
                    double acc = 0;
                    for (int64_t ry = 0; ry < 3; ++ry)
                        for (int64_t rx = 0; rx < 3; ++rx) {
                            int64_t iy = oy + ry - 1, ix = ox + rx - 1;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                            acc += double(bx.at({0, oc / M, iy, ix})) * double(bw.at({oc / M, oc % M, ry, rx}));
                        }
                    ref.push_back(acc);
                }
        QVERIFY(maxRelErr(out[0].data, ref) < 1e-5);

        // A group conv with groups = C and one filter per group equals the depthwise conv (M = 1).
        Tensor w1 = placeholder({C, 1, 3, 3}, "p1");
        Tensor g = nn::groupConv2dNchw(x, w1, {1}, {1}, {1}, C);
        Tensor d = nn::depthwiseConv2dNchw(x, w1, {1}, {1});
        Buffer bw1 = randomBuffer(w1.shape(), 5);
        auto og = run({g}, {x, w1}, {bx, bw1});
        auto od = run({d}, {x, w1}, {bx, bw1});
        QCOMPARE(og[0].shape, od[0].shape);
        std::vector<double> dd(od[0].data.begin(), od[0].data.end());
        QVERIFY(maxRelErr(og[0].data, dd) < 1e-6);
    }

    void testWinogradMatchesDirectConv_data() {
        QTest::addColumn<int>("tile");
        QTest::addColumn<int>("height");
        QTest::addRow("F(4x4, 3x3), 10x10") << 4 << 10;  // x86, and cuda/mali where H % 8 (4) == 0
        QTest::addRow("F(2x2, 3x3), 7x7") << 2 << 7;     // cuda and mali elsewhere (resnet's 28, 14, 7)
    }
    void testWinogradMatchesDirectConv() {
        // conv2d_winograd_nhwc (pre-computed weight from the weight transform) == conv2d_nhwc.
        QFETCH(int, tile);
        QFETCH(int, height);
        const int64_t H = height, C = 3, K = 4, alpha = tile + 2;
        Tensor x = placeholder({1, H, H, C}, "p0"), w = placeholder({3, 3, C, K}, "p1");
        Buffer bx = randomBuffer(x.shape(), 6), bw = randomBuffer(w.shape(), 7);
        auto direct = run({nn::conv2dNhwc(x, w, {1}, {1})}, {x, w}, {bx, bw});
        auto wino = run({nn::conv2dWinogradNhwc(x, w, {1}, false, tile)}, {x, w}, {bx, bw});
        // The transform path: OIHW kernel -> [alpha, alpha, K, C] -> pre-computed winograd.
        Tensor oihw = placeholder({K, C, 3, 3}, "w");
        auto packed = run({nn::conv2dWinogradWeightTransform(oihw, tile)}, {oihw}, {[&] {
            Buffer b = Buffer::zeros({K, C, 3, 3});
            for (int64_t k = 0; k < K; ++k)
                for (int64_t c = 0; c < C; ++c)
                    for (int64_t i = 0; i < 3; ++i)
                        for (int64_t j = 0; j < 3; ++j) b.at({k, c, i, j}) = bw.at({i, j, c, k});
            return b;
        }()});
        Tensor wp = placeholder({alpha, alpha, K, C}, "p1");
        auto pre = run({nn::conv2dWinogradNhwc(x, wp, {1}, true, tile)}, {x, wp}, {bx, packed[0]});
        std::vector<double> ref(direct[0].data.begin(), direct[0].data.end());
        QCOMPARE(wino[0].shape, direct[0].shape);
        QVERIFY(maxRelErr(wino[0].data, ref) < 1e-4);
        QVERIFY(maxRelErr(pre[0].data, ref) < 1e-4);
    }

    void testPoolingNumerics() {
        Tensor x = placeholder({1, 6, 6, 2}, "p0");
        Buffer bx = randomBuffer(x.shape(), 8);
        auto mx = run({nn::pool2d(x, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, nn::PoolType::Max, false, "NHWC")}, {x}, {bx});
        auto av = run({nn::pool2d(x, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, nn::PoolType::Avg, false, "NHWC", false)}, {x}, {bx});
        auto avInc = run({nn::pool2d(x, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, nn::PoolType::Avg, false, "NHWC", true)}, {x}, {bx});
        auto gp = run({nn::globalPool(x, nn::PoolType::Avg, "NHWC")}, {x}, {bx});
        std::vector<double> rMax, rAvg, rInc, rGlobal;
        for (int64_t oy = 0; oy < 3; ++oy)
            for (int64_t ox = 0; ox < 3; ++ox)
                for (int64_t c = 0; c < 2; ++c) {
                    double m = -1e30, s = 0;
                    int cnt = 0;
                    for (int64_t ry = 0; ry < 3; ++ry)
                        for (int64_t rx = 0; rx < 3; ++rx) {
                            int64_t iy = oy * 2 + ry - 1, ix = ox * 2 + rx - 1;
                            if (iy < 0 || iy >= 6 || ix < 0 || ix >= 6) continue;
                            double v = bx.at({0, iy, ix, c});
                            m = std::max(m, v);
                            s += v;
                            ++cnt;
                        }
                    // count_include_pad counts the padded taps inside [start, min(end, in + pad - 1)].
                    int64_t ys = oy * 2 - 1, xs = ox * 2 - 1;
                    int64_t ye = std::min<int64_t>(ys + 2, 6), xe = std::min<int64_t>(xs + 2, 6);
                    rMax.push_back(m);
                    rAvg.push_back(s / cnt);
                    rInc.push_back(s / double((ye - ys + 1) * (xe - xs + 1)));
                }
        for (int64_t c = 0; c < 2; ++c) {
            double s = 0;
            for (int64_t i = 0; i < 6; ++i)
                for (int64_t j = 0; j < 6; ++j) s += bx.at({0, i, j, c});
            rGlobal.push_back(s / 36);
        }
        QVERIFY(maxRelErr(mx[0].data, rMax) < 1e-6);
        QVERIFY(maxRelErr(av[0].data, rAvg) < 1e-6);
        QVERIFY(maxRelErr(avInc[0].data, rInc) < 1e-6);
        QVERIFY(maxRelErr(gp[0].data, rGlobal) < 1e-6);
    }

    void testDenseSoftmaxNumerics() {
        Tensor x = placeholder({2, 5}, "p0"), w = placeholder({3, 5}, "p1"), b = placeholder({3}, "p2");
        Buffer bx = randomBuffer(x.shape(), 9), bw = randomBuffer(w.shape(), 10), bb = randomBuffer(b.shape(), 11);
        auto y = run({nn::softmax(nn::dense(x, w, b))}, {x, w, b}, {bx, bw, bb});
        for (int64_t i = 0; i < 2; ++i) {
            std::vector<double> logits;
            for (int64_t j = 0; j < 3; ++j) {
                double acc = bb.at({j});
                for (int64_t k = 0; k < 5; ++k) acc += double(bx.at({i, k})) * double(bw.at({j, k}));
                logits.push_back(acc);
            }
            double mx = *std::max_element(logits.begin(), logits.end()), s = 0;
            for (double l : logits) s += std::exp(l - mx);
            for (int64_t j = 0; j < 3; ++j) QVERIFY(std::abs(y[0].at({i, j}) - std::exp(logits[size_t(j)] - mx) / s) < 1e-6);
        }
    }

    void testInjectiveNumerics() {
        Tensor x = placeholder({2, 3, 4}, "p0");
        Buffer bx = randomBuffer(x.shape(), 12);
        auto t = run({topi::transpose(x, {2, 0, 1})}, {x}, {bx});
        auto r = run({topi::reshape(x, {4, -1})}, {x}, {bx});
        auto f = run({nn::flatten(x)}, {x}, {bx});
        auto s = run({topi::sum(x, std::vector<int>{1})}, {x}, {bx});
        auto lt = run({topi::layoutTransform(topi::layoutTransform(x, "NCW", "NCW2w"), "NCW2w", "NCW")}, {x}, {bx});
        for (int64_t a = 0; a < 2; ++a)
            for (int64_t b = 0; b < 3; ++b)
                for (int64_t c = 0; c < 4; ++c) {
                    const float v = bx.at({a, b, c});
                    QCOMPARE(t[0].at({c, a, b}), v);
                    int64_t flat = (a * 3 + b) * 4 + c;
                    QCOMPARE(r[0].at({flat / 6, flat % 6}), v);
                    QCOMPARE(f[0].at({a, b * 4 + c}), v);
                    QCOMPARE(lt[0].at({a, b, c}), v);
                }
        for (int64_t a = 0; a < 2; ++a)
            for (int64_t c = 0; c < 4; ++c) {
                double acc = 0;
                for (int64_t b = 0; b < 3; ++b) acc += bx.at({a, b, c});
                QVERIFY(std::abs(s[0].at({a, c}) - acc) < 1e-6);
            }
        // concatenate then split gives the inputs back.
        Tensor y = placeholder({2, 2, 4}, "p1");
        Buffer by = randomBuffer(y.shape(), 13);
        Tensor cat = topi::concatenate({x, y}, 1);
        auto parts = topi::split(cat, {3}, 1);
        auto back = run({parts[0], parts[1]}, {x, y}, {bx, by});
        QCOMPARE(back[0].data, bx.data);
        QCOMPARE(back[1].data, by.data);
    }

    void testElementwiseNumerics() {
        Tensor x = placeholder({1, 3, 1, 4}, "p0"), b = placeholder({3, 1}, "p1");
        Buffer bx = randomBuffer(x.shape(), 14, -3.0f, 3.0f), bb = randomBuffer(b.shape(), 15);
        Tensor sum = topi::add(x, b);  // [1, 3, 1, 4] + [3, 1] -> [1, 3, 3, 4]
        QCOMPARE(sum.shape(), (Shape{1, 3, 3, 4}));
        auto o = run({sum, topi::relu(x), topi::clip(x, -1.0, 1.0), topi::hardSwish(x), topi::leakyRelu(x, 0.1),
                      topi::sigmoid(x)},
                     {x, b}, {bx, bb});
        for (int64_t c = 0; c < 3; ++c)
            for (int64_t h = 0; h < 3; ++h)
                for (int64_t w = 0; w < 4; ++w)
                    QCOMPARE(o[0].at({0, c, h, w}), bx.at({0, c, 0, w}) + bb.at({h, 0}));
        for (size_t i = 0; i < bx.data.size(); ++i) {
            const double v = bx.data[i];
            QCOMPARE(double(o[1].data[i]), std::max(v, 0.0));
            QCOMPARE(double(o[2].data[i]), std::min(std::max(v, -1.0), 1.0));
            const double hs = v * std::min(std::max(v / 6.0 + 0.5, 0.0), 1.0);
            QVERIFY(std::abs(o[3].data[i] - hs) < 1e-6);
            QVERIFY(std::abs(o[4].data[i] - (v > 0 ? v : 0.1 * v)) < 1e-6);
            QVERIFY(std::abs(o[5].data[i] - 1.0 / (1.0 + std::exp(-v))) < 1e-6);
        }
    }

    void testResizeNumerics() {
        Tensor x = placeholder({1, 1, 2, 3}, "p0");
        Buffer bx{{1, 1, 2, 3}, {0, 1, 2, 3, 4, 5}};
        // Nearest, asymmetric + floor: output (y, x) reads (floor(y/2), floor(x/2)).
        auto nearest = run({topi::image::resize2d(x, {4, 6}, "NCHW", "nearest_neighbor", "asymmetric", "floor")}, {x}, {bx});
        for (int64_t y = 0; y < 4; ++y)
            for (int64_t c = 0; c < 6; ++c) QCOMPARE(nearest[0].at({0, 0, y, c}), bx.at({0, 0, y / 2, c / 2}));
        // Bilinear, align_corners: corners are exact, the centre row interpolates the two input rows.
        auto lin = run({topi::image::resize2d(x, {3, 5}, "NCHW", "linear", "align_corners")}, {x}, {bx});
        QCOMPARE(lin[0].at({0, 0, 0, 0}), 0.0f);
        QCOMPARE(lin[0].at({0, 0, 2, 4}), 5.0f);
        QVERIFY(std::abs(lin[0].at({0, 0, 1, 2}) - 2.5f) < 1e-6f);   // mean of 1 and 4
        QVERIFY(std::abs(lin[0].at({0, 0, 0, 1}) - 0.5f) < 1e-6f);   // half-way between 0 and 1
        // Bilinear, half_pixel 2x upsampling: out (0, 1) maps to (-0.25, 0.25) -> clamped rows.
        auto hp = run({topi::image::resize2d(x, {4, 6}, "NCHW", "linear", "half_pixel")}, {x}, {bx});
        QVERIFY(std::abs(hp[0].at({0, 0, 0, 1}) - 0.25f) < 1e-6f);
    }

    void testConvTransposeNumerics() {
        // x86 conv2d_transpose (NCHWc path) == the generic one == naive scatter.
        const int64_t CI = 2, CO = 3, H = 3, KH = 4, S = 2, P = 1;
        Tensor x = placeholder({1, CI, H, H}, "p0"), w = placeholder({CI, CO, KH, KH}, "p1");
        Buffer bx = randomBuffer(x.shape(), 16), bw = randomBuffer(w.shape(), 17);
        auto gen = run({nn::conv2dTransposeNchw(x, w, {S}, {P})}, {x, w}, {bx, bw});
        auto x86 = run({nn::x86::conv2dTransposeNchw(x, w, {S}, {P})}, {x, w}, {bx, bw});
        const int64_t OH = (H - 1) * S - 2 * P + KH;
        QCOMPARE(gen[0].shape, (Shape{1, CO, OH, OH}));
        std::vector<double> ref(size_t(CO * OH * OH), 0.0);
        for (int64_t ci = 0; ci < CI; ++ci)
            for (int64_t iy = 0; iy < H; ++iy)
                for (int64_t ix = 0; ix < H; ++ix)
                    for (int64_t co = 0; co < CO; ++co)
                        for (int64_t ky = 0; ky < KH; ++ky)
                            for (int64_t kx = 0; kx < KH; ++kx) {
                                int64_t oy = iy * S + ky - P, ox = ix * S + kx - P;
                                if (oy < 0 || oy >= OH || ox < 0 || ox >= OH) continue;
                                ref[size_t((co * OH + oy) * OH + ox)] +=
                                    double(bx.at({0, ci, iy, ix})) * double(bw.at({ci, co, ky, kx}));
                            }
        QVERIFY(maxRelErr(gen[0].data, ref) < 1e-5);
        QVERIFY(maxRelErr(x86[0].data, ref) < 1e-5);
    }
};

QTEST_APPLESS_MAIN(TestTopi)
#include "tst_topi.moc"
