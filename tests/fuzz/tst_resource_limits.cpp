// SPDX-License-Identifier: Apache-2.0
// Hostile input that asks for absurd resources gets a clear tb::UserError naming the problem,
// quickly and without the memory it asks for: an ONNX model folding a 10^12-element constant
// (ConstantOfShape [10^6, 10^6]), an ONNX model folding a 10^9-step Range, and a tuning log whose
// first line is 1 GiB long (a sparse file: no disk used). Peak RSS (getrusage) may grow by at most
// 256 MiB during each case, far below what the input asks for (4 TB, 8 GB, 1 GiB).
#include <QtTest>

#include <sys/resource.h>
#include <unistd.h>

#include <fcntl.h>

#include <onnx/onnx_pb.h>

#include "engine/graph/onnx_import.h"
#include "engine/record/record_io.h"
#include "engine/support/error.h"

using namespace tb;

namespace {

long peakRssMiB() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;  // Linux: KiB
}

/// Runs f, which must throw tb::UserError, within `seconds` and 256 MiB of extra peak RSS; returns
/// the message.
template <class F>
QString limitedUserError(F&& f, double seconds = 20) {
    const long rss0 = peakRssMiB();
    QElapsedTimer timer;
    timer.start();
    QString msg = QStringLiteral("<no error>");
    try {
        f();
    } catch (const UserError& e) {
        msg = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
        msg = QStringLiteral("<not a UserError: %1>").arg(QString::fromUtf8(e.what()));
    }
    const long grown = peakRssMiB() - rss0;
    if (grown > 256) msg += QStringLiteral(" <peak RSS grew by %1 MiB>").arg(grown);
    if (timer.elapsed() > seconds * 1000) msg += QStringLiteral(" <took %1 ms>").arg(timer.elapsed());
    return msg;
}

onnx::TensorProto int64Tensor(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    for (auto d : dims) t.add_dims(d);
    for (auto v : values) t.add_int64_data(v);
    return t;
}

/// A model with the given initializers and one node `op` reading them, whose output is the graph's.
std::string oneNodeModel(const std::string& op, const std::vector<onnx::TensorProto>& inits) {
    onnx::ModelProto m;
    m.set_ir_version(7);
    auto* opset = m.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("hostile");
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name("n");
    for (const auto& t : inits) {
        *g->add_initializer() = t;
        n->add_input(t.name());
    }
    const std::string out = "y";
    n->add_output(out);
    g->add_output()->set_name(out);
    return m.SerializeAsString();
}

}  // namespace

class TestResourceLimits : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void tensorOf1e12Elements() {
        const std::string bytes = oneNodeModel("ConstantOfShape", {int64Tensor("shape", {2}, {1000000, 1000000})});
        const QString msg = limitedUserError([&] { graph::importOnnxBytes(bytes, "huge.onnx"); });
        QCOMPARE(msg, QStringLiteral("'huge.onnx': node 'n' (ConstantOfShape): a constant of shape [1000000, 1000000] "
                                     "(1000000000000 elements) would be built at import, more than the 67108864 "
                                     "elements (2^26) a folded constant may have"));
    }

    void shapeOverflowingInt64() {
        const std::string bytes =
            oneNodeModel("ConstantOfShape", {int64Tensor("shape", {3}, {4000000000, 4000000000, 4000000000})});
        const QString msg = limitedUserError([&] { graph::importOnnxBytes(bytes, "overflow.onnx"); });
        QCOMPARE(msg, QStringLiteral("'overflow.onnx': node 'n' (ConstantOfShape): shape [4000000000, 4000000000, "
                                     "4000000000] has more than 2^63 elements"));
    }

    void loopOf1e9Steps() {
        const std::string bytes = oneNodeModel(
            "Range", {int64Tensor("start", {}, {0}), int64Tensor("limit", {}, {1000000000}), int64Tensor("delta", {}, {1})});
        const QString msg = limitedUserError([&] { graph::importOnnxBytes(bytes, "range.onnx"); });
        QCOMPARE(msg, QStringLiteral("'range.onnx': node 'n' (Range): Range(0, 1e+09, 1) has 1e+09 elements, more than "
                                     "the 67108864 (2^26) a constant folded at import may have"));
    }

    void lineOf1GiB() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath(QStringLiteral("huge.json")).toStdString();
        {
            const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            QVERIFY(fd >= 0);
            QCOMPARE(::write(fd, "{\"i\": [", 7), ssize_t(7));
            QCOMPARE(::ftruncate(fd, off_t(1) << 30), 0);  // sparse: 1 GiB of NULs, no newline
            ::close(fd);
        }
        const QString expected = QStringLiteral("line 1 of '%1' is longer than 16 MiB, more than a tuning log line may "
                                                "have (TVM writes a few kB per record): not a tuning log")
                                     .arg(QString::fromStdString(path));
        QCOMPARE(limitedUserError([&] { record::readMeasureRecords(path); }), expected);
        QCOMPARE(limitedUserError([&] { record::readAutoTvmRecords(path); }), expected);
        QCOMPARE(limitedUserError([&] { record::readTextFile(path); }), expected);

        // Text already in memory: the same limit, one line past it.
        std::string text = "{\"i\": [1]}\n";
        text.append(record::kMaxLogLineBytes + 1, 'x');
        QCOMPARE(limitedUserError([&] { record::parseMeasureRecords(text); }),
                 QStringLiteral("line 2 of the log text is longer than 16 MiB, more than a tuning log line may have "
                                "(TVM writes a few kB per record): not a tuning log"));
        // ... and a line of exactly the limit is only a bad line.
        text.pop_back();
        const auto log = record::parseAutoTvmRecords(text);
        QCOMPARE(log.badLines.size(), size_t(2));
    }
};

QTEST_GUILESS_MAIN(TestResourceLimits)
#include "tst_resource_limits.moc"
