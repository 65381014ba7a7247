// SPDX-License-Identifier: Apache-2.0
// ONNX import: what a bad model file produces (truncated, garbage, empty, missing, unsupported
// operators, unbound dynamic dimensions), shape bindings, TensorProto files, and the structure of
// an imported PP-OCR model.
#include <QtTest>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/graph/interpreter.h"
#include "engine/graph/onnx_import.h"
#include "engine/graph/tensor_io.h"
#include "engine/support/error.h"
#include "tests/engine/test_util.h"

using namespace tb;
using namespace tb::graph;
using test::userError;

namespace {

const std::string kPpocr = "../shared/data/models/ppocr/";
const std::string kCls = kPpocr + "ch_ppocr_mobile_v2.0_cls_infer.onnx";
const std::string kDet = kPpocr + "ch_PP-OCRv4_det_infer.onnx";
const std::string kRec = kPpocr + "ch_PP-OCRv4_rec_infer.onnx";

std::string readBytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void writeBytes(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
}

// A minimal protobuf writer, enough to build small ONNX models in the test without libonnx.
struct Pb {
    std::string out;
    void varint(uint64_t v) {
        while (v >= 0x80) {
            out.push_back(char(v | 0x80));
            v >>= 7;
        }
        out.push_back(char(v));
    }
    Pb& i(int field, uint64_t v) {
        varint(uint64_t(field) << 3);
        varint(v);
        return *this;
    }
    Pb& s(int field, const std::string& bytes) {
        varint(uint64_t(field) << 3 | 2);
        varint(bytes.size());
        out += bytes;
        return *this;
    }
};

std::string node(const std::string& type, const std::string& name, const std::string& in, const std::string& outName) {
    return Pb().s(1, in).s(2, outName).s(3, name).s(4, type).out;  // NodeProto: input, output, name, op_type
}

std::string floatInput(const std::string& name, std::vector<int64_t> dims) {
    Pb shape;
    for (auto d : dims) shape.s(1, Pb().i(1, uint64_t(d)).out);  // TensorShapeProto.dim { dim_value }
    std::string tensorType = Pb().i(1, 1).s(2, shape.out).out;    // elem_type FLOAT, shape
    return Pb().s(1, name).s(2, Pb().s(1, tensorType).out).out;   // ValueInfoProto { name, type { tensor_type } }
}

/// x -> n1:Foo -> n2:Bar -> n3:Foo -> n4:Relu -> y: two unsupported types, three unsupported nodes.
std::string modelWithUnsupportedOps() {
    Pb graph;
    graph.s(1, node("Foo", "n1", "x", "a"));
    graph.s(1, node("Bar", "n2", "a", "b"));
    graph.s(1, node("Foo", "n3", "b", "c"));
    graph.s(1, node("Relu", "n4", "c", "y"));
    graph.s(2, "g");
    graph.s(11, floatInput("x", {1, 4}));
    graph.s(12, floatInput("y", {1, 4}));
    Pb model;
    model.i(1, 7);                                   // ir_version
    model.s(8, Pb().s(1, "").i(2, 13).out);          // opset_import { domain "", version 13 }
    model.s(7, graph.out);                           // graph
    return model.out;
}

}  // namespace

class TestOnnxImport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testTruncatedModel_data() {
        QTest::addColumn<double>("fraction");
        QTest::addRow("1 percent") << 0.01;
        QTest::addRow("25 percent") << 0.25;
        QTest::addRow("50 percent") << 0.5;
        QTest::addRow("90 percent") << 0.9;
        QTest::addRow("all but one byte") << -1.0;
    }
    void testTruncatedModel() {
        QFETCH(double, fraction);
        const std::string bytes = readBytes(kCls);
        QVERIFY(bytes.size() > 100000);
        const size_t keep = fraction < 0 ? bytes.size() - 1 : size_t(double(bytes.size()) * fraction);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath(QStringLiteral("truncated.onnx")).toStdString();
        writeBytes(path, bytes.substr(0, keep));
        OnnxImportOptions opts;
        opts.inputShapes["x"] = {1, 3, 48, 192};
        const QString msg = userError([&] { importOnnx(path, opts); });
        qInfo("%s", qPrintable(msg));
        QVERIFY2(msg.contains(QString::fromStdString(path)), qPrintable(msg));
        QVERIFY2(msg.contains(QStringLiteral("truncated")), qPrintable(msg));
        // The intact file imports with the same options.
        QCOMPARE(importOnnx(kCls, opts).outputs().size(), size_t(1));
    }

    void testMalformedFiles_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("expected");
        QTest::addRow("empty") << QByteArray() << QStringLiteral("is empty");
        QTest::addRow("text") << QByteArray("this is not a model\n") << QStringLiteral("not a valid ONNX model");
        QTest::addRow("binary garbage") << QByteArray(4096, char(0xff)) << QStringLiteral("not a valid ONNX model");
        QTest::addRow("model without graph") << QByteArray::fromStdString(Pb().i(1, 7).out)
                                             << QStringLiteral("no graph");
    }
    void testMalformedFiles() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("bad.onnx")).toStdString();
        writeBytes(path, bytes.toStdString());
        const QString msg = userError([&] { importOnnx(path); });
        QVERIFY2(msg.contains(expected), qPrintable(msg));
        QVERIFY2(msg.contains(QString::fromStdString(path)), qPrintable(msg));
    }

    void testMissingFile() {
        const QString msg = userError([] { importOnnx("../shared/no/such/model.onnx"); });
        QVERIFY2(msg.contains(QStringLiteral("cannot open ONNX model '../shared/no/such/model.onnx'")), qPrintable(msg));
    }

    void testUnsupportedOperatorsListedOnce() {
        const std::string bytes = modelWithUnsupportedOps();
        const QString msg = userError([&] { importOnnxBytes(bytes, "handmade.onnx"); });
        qInfo("%s", qPrintable(msg));
        QCOMPARE(msg, QStringLiteral("'handmade.onnx' uses 2 unsupported ONNX operator types: Bar (1 node: 'n2'); "
                                     "Foo (2 nodes: 'n1', 'n3')."));
        // The same graph with supported operators imports and runs (proves the writer is sound).
        std::string ok = bytes;
        for (auto [from, to] : {std::pair{"Foo", "Exp"}, std::pair{"Bar", "Neg"}}) {
            size_t p;
            while ((p = ok.find(from)) != std::string::npos) ok.replace(p, 3, to);
        }
        Graph g = importOnnxBytes(ok, "handmade.onnx");
        auto out = runGraph(g, {te::Buffer{{1, 4}, {-1.f, 0.f, 0.5f, 2.f}}});
        // relu(exp(-exp(x))) = exp(-exp(x)) > 0
        for (size_t k = 0; k < 4; ++k) {
            const double x = std::vector<double>{-1, 0, 0.5, 2}[k];
            QVERIFY(std::fabs(out[0].data[k] - std::exp(-std::exp(x))) < 1e-6);
        }
    }

    void testDanglingTensorReference() {
        // A parseable model whose node reads a tensor nobody defines (what a file cut at a field
        // boundary, or a broken exporter, gives).
        Pb graph;
        graph.s(1, node("Relu", "r", "nothing", "y"));
        graph.s(11, floatInput("x", {2}));
        graph.s(12, floatInput("y", {2}));
        const std::string bytes = Pb().i(1, 7).s(8, Pb().s(1, "").i(2, 13).out).s(7, graph.out).out;
        const QString msg = userError([&] { importOnnxBytes(bytes, "dangling.onnx"); });
        QCOMPARE(msg, QStringLiteral("'dangling.onnx' is malformed or truncated: node 'r' (Relu) reads tensor "
                                     "'nothing', which no input, initializer or earlier node defines"));
    }

    void testWindowAttributesOfWrongArity() {
        // fuzz_onnx's find: a ConvTranspose with one stride value (and output_shape) read strides[1]
        // past the end (ASan heap-buffer-overflow). Every 2-D window attribute is now checked.
        const std::string path = "tests/fuzz/regressions/onnx/conv-transpose-one-stride-value";
        const QString msg = userError([&] { importOnnx(path); });
        QVERIFY2(msg.contains(QStringLiteral("attribute 'strides' must have 2 values for a 2-D window, got 1")),
                 qPrintable(msg));
    }

    void testUnsupportedOperatorInRealModel() {
        const std::string path = "/usr/share/libonnx-testdata/data/node/test_nllloss_NCd1_expanded/model.onnx";
        const QString msg = userError([&] { importOnnx(path); });
        QVERIFY2(msg.contains(QStringLiteral("uses 1 unsupported ONNX operator type: GatherElements (1 node:")),
                 qPrintable(msg));
    }

    void testDynamicDimensionsMustBeBound() {
        const QString msg = userError([] { importOnnx(kDet); });
        QVERIFY2(msg.contains(QStringLiteral("input 'x' has dynamic dimensions (p2o.DynamicDimension.0, "
                                             "p2o.DynamicDimension.1, p2o.DynamicDimension.2) in its shape "
                                             "[?, 3, ?, ?]")),
                 qPrintable(msg));
        QVERIFY2(msg.contains(QStringLiteral("x=1,3,640,640")), qPrintable(msg));

        OnnxImportOptions wrongStatic;
        wrongStatic.inputShapes["x"] = {1, 3, 32, 320};  // rec's H is a static 48
        const QString msg2 = userError([&] { importOnnx(kRec, wrongStatic); });
        QVERIFY2(msg2.contains(QStringLiteral("static shape [-1, 3, 48, -1] but the binding is [1, 3, 32, 320]")),
                 qPrintable(msg2));

        OnnxImportOptions unknown;
        unknown.inputShapes = {{"x", {1, 3, 48, 320}}, {"image", {1, 3, 48, 320}}};
        const QString msg3 = userError([&] { importOnnx(kRec, unknown); });
        QVERIFY2(msg3.contains(QStringLiteral("names 'image', which is not an input")), qPrintable(msg3));

        // The hint is this model's: rec keeps its static height 48 (a generic 640x640 would be refused).
        const QString msg4 = userError([] { importOnnx(kRec); });
        QVERIFY2(msg4.contains(QStringLiteral("such as 'x=1,3,48,320'")), qPrintable(msg4));
        OnnxImportOptions suggested;
        suggested.inputShapes["x"] = suggestInputShape({-1, 3, 48, -1});
        const Graph g = importOnnx(kRec, suggested);
        QCOMPARE(g.node(g.inputs()[0]).type.shape, (std::vector<int64_t>{1, 3, 48, 320}));
    }

    void testShapeBindingDrivesShapes() {
        // The det model at two sizes: the static shapes of the whole graph follow the binding.
        for (int64_t side : {320, 640}) {
            OnnxImportOptions opts;
            opts.inputShapes = parseShapeMap("x=1,3," + std::to_string(side) + "," + std::to_string(side));
            Graph g = importOnnx(kDet, opts);
            QCOMPARE(g.outputs().size(), size_t(1));
            QCOMPARE(g.node(g.outputs()[0]).type.shape, (std::vector<int64_t>{1, 1, side, side}));
        }
    }

    void testParseShapeMap_data() {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("expected");  // "name:d0,d1|..." or "error:<fragment>"
        QTest::addRow("one") << "x=1,3,640,640" << "x:1,3,640,640";
        QTest::addRow("colon and x") << "x:1x3x48x320" << "x:1,3,48,320";
        QTest::addRow("two with spaces") << " a = 1, 2 ; b=3" << "a:1,2|b:3";
        QTest::addRow("no equals") << "x" << "error:is not of the form name=d0,d1";
        QTest::addRow("zero extent") << "x=1,0,4" << "error:'0' is not a positive integer";
        QTest::addRow("negative") << "x=1,-3" << "error:'-3' is not a positive integer";
        QTest::addRow("trailing comma") << "x=1,3," << "error:'' is not a positive integer";
        QTest::addRow("bound twice") << "x=1;x=2" << "error:is bound twice";
        QTest::addRow("empty") << "" << "error:names no input";
    }
    void testParseShapeMap() {
        QFETCH(QString, spec);
        QFETCH(QString, expected);
        if (expected.startsWith(QStringLiteral("error:"))) {
            const QString msg = userError([&] { parseShapeMap(spec.toStdString()); });
            QVERIFY2(msg.contains(expected.mid(6)), qPrintable(msg));
            return;
        }
        QStringList parts;
        for (const auto& [name, dims] : parseShapeMap(spec.toStdString())) {
            QStringList d;
            for (auto v : dims) d << QString::number(v);
            parts << QString::fromStdString(name) + QLatin1Char(':') + d.join(QLatin1Char(','));
        }
        QCOMPARE(parts.join(QLatin1Char('|')), expected);
    }

    void testTensorFileRoundTrip() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("t.pb")).toStdString();
        std::vector<float> v;
        for (int i = 0; i < 24; ++i) v.push_back(float(i) * 0.25f - 3.0f);
        writeTensorFile(path, "probabilities", {2, 3, 4}, v);
        NamedTensor t = readTensorFile(path);
        QCOMPARE(t.name, std::string("probabilities"));
        QCOMPARE(t.onnxType, 1);
        QCOMPARE(t.data.type.shape, (std::vector<int64_t>{2, 3, 4}));
        QCOMPARE(t.data.f, v);
        QCOMPARE(shapeMapFromTensors({t}).at("probabilities"), (std::vector<int64_t>{2, 3, 4}));

        // Truncating the file cuts into the raw data: a clear error, not a short tensor.
        const std::string bytes = readBytes(path);
        writeBytes(path, bytes.substr(0, bytes.size() - 5));
        const QString msg = userError([&] { readTensorFile(path); });
        QVERIFY2(msg.contains(QStringLiteral("not a valid ONNX TensorProto file")), qPrintable(msg));
    }

    void testReadsReferenceTensors() {
        // int64 and float tensors of the conformance data, raw and typed encodings.
        NamedTensor shape = readTensorFile("/usr/share/libonnx-testdata/data/node/test_reshape_negative_dim/"
                                           "test_data_set_0/input_1.pb");
        QCOMPARE(shape.onnxType, 7);
        QCOMPARE(shape.data.i, (std::vector<int64_t>{2, -1, 2}));
        NamedTensor in = readTensorFile("../shared/data/models/ppocr/reference/cls/test_data_set_0/input_0.pb");
        QCOMPARE(in.name, std::string("x"));
        QCOMPARE(in.data.type.shape, (std::vector<int64_t>{1, 3, 48, 192}));
        // PaddleOCR's normalization maps pixels to [-1, 1].
        float lo = 1e9f, hi = -1e9f;
        for (float f : in.data.f) {
            lo = std::min(lo, f);
            hi = std::max(hi, f);
        }
        QVERIFY(lo >= -1.0f && hi <= 1.0f && hi - lo > 1.0f);
    }

    void testInspectAndImportStructure() {
        OnnxModelInfo info = inspectOnnx(kCls);
        QCOMPARE(info.opset, int64_t(9));
        QCOMPARE(info.inputs.size(), size_t(1));
        QCOMPARE(info.inputs[0].name, std::string("x"));
        QCOMPARE(info.inputs[0].shape, (std::vector<int64_t>{-1, 3, -1, -1}));
        QCOMPARE(info.outputs, std::vector<std::string>{"softmax_0.tmp_0"});
        QCOMPARE(info.opTypes.at("Conv"), 53);
        QCOMPARE(info.opTypes.at("BatchNormalization"), 35);
        QCOMPARE(info.opTypes.at("Constant"), 250);

        OnnxImportOptions opts;
        opts.inputShapes["x"] = {1, 3, 48, 192};
        Graph g = importOnnx(kCls, opts);
        std::map<std::string, int> ops;
        for (const auto& n : g.nodes())
            if (n.kind == NodeKind::Op) ++ops[n.op];
        QCOMPARE(ops["nn.conv2d"], 53);
        QCOMPARE(ops["nn.batch_norm"], 35);
        QCOMPARE(ops["nn.dense"], 1);        // MatMul with a constant 2-D weight
        QCOMPARE(ops["hard_sigmoid"], 9);
        QCOMPARE(ops["nn.max_pool2d"], 1);
        QCOMPARE(ops["nn.softmax"], 1);
        // Shape/Cast/Slice/Concat and all 250 Constants folded away: no int tensor is left.
        for (const auto& n : g.nodes()) QVERIFY(n.type.dtype == te::DType::Float32);
        QCOMPARE(g.inputs().size(), size_t(1));
        QCOMPARE(g.node(g.outputs()[0]).type.shape, (std::vector<int64_t>{1, 2}));
    }
};

QTEST_APPLESS_MAIN(TestOnnxImport)
#include "tst_onnx_import.moc"
