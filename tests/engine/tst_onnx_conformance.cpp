// SPDX-License-Identifier: Apache-2.0
// ONNX's own operator conformance cases (Debian libonnx-testdata, ONNX 1.12): every case of the
// operators the importer supports is imported, run in the graph reference interpreter and compared
// with the expected output_N.pb. Cases of those operators that we do not support are listed in
// kExcluded with the reason, so nothing is skipped silently; testCoverage() pins the counts.
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "engine/graph/interpreter.h"
#include "engine/graph/onnx_import.h"
#include "engine/graph/tensor_io.h"
#include "engine/support/error.h"

using namespace tb;
using namespace tb::graph;
namespace fs = std::filesystem;

namespace {

const char* kNodeDir = "/usr/share/libonnx-testdata/data/node";

// Case-name prefixes of the operators under test (a case belongs to the first prefix it starts with).
const std::vector<std::string> kPrefixes = {
    "test_conv_", "test_basic_conv_", "test_convtranspose", "test_maxpool_", "test_averagepool_",
    "test_globalaveragepool", "test_globalmaxpool", "test_gemm_", "test_matmul_", "test_softmax_", "test_logsoftmax_",
    "test_relu", "test_leakyrelu", "test_sigmoid", "test_hardsigmoid", "test_hardswish", "test_clip", "test_tanh",
    "test_exp", "test_log", "test_sqrt", "test_erf", "test_abs", "test_neg", "test_floor", "test_ceil",
    "test_reciprocal", "test_add", "test_sub", "test_mul", "test_div", "test_pow", "test_sum_", "test_mean_",
    "test_max_", "test_min_", "test_batchnorm_", "test_flatten_", "test_reshape_", "test_transpose_", "test_concat_",
    "test_squeeze", "test_unsqueeze_", "test_constant_pad", "test_reflect_pad", "test_edge_pad", "test_resize_",
    "test_upsample_nearest", "test_reduce_mean_", "test_reduce_sum_", "test_reduce_max_", "test_reduce_min_",
    "test_slice", "test_split_", "test_gather_", "test_shape", "test_size", "test_constant", "test_identity",
    "test_dropout_", "test_expand_", "test_range_", "test_where_",
};

// Cases of the operators above that the importer does not support, with the reason.
const std::map<std::string, std::string> kExcluded = {
    {"test_convtranspose_1d", "only 2-D (NCHW) transposed convolutions"},
    {"test_convtranspose_3d", "only 2-D (NCHW) transposed convolutions"},
    {"test_maxpool_1d_default", "only 2-D pooling"},
    {"test_maxpool_3d_default", "only 2-D pooling"},
    {"test_averagepool_1d_default", "only 2-D pooling"},
    {"test_averagepool_3d_default", "only 2-D pooling"},
    {"test_maxpool_with_argmax_2d_precomputed_pads", "the Indices output of MaxPool"},
    {"test_maxpool_with_argmax_2d_precomputed_strides", "the Indices output of MaxPool"},
    {"test_maxpool_2d_uint8", "integer tensors flow only as import-time constants"},
    {"test_batchnorm_epsilon_training_mode", "training-mode BatchNormalization (running statistics outputs)"},
    {"test_batchnorm_example_training_mode", "training-mode BatchNormalization (running statistics outputs)"},
    {"test_edge_pad", "Pad mode 'edge' (nn.pad lowers constant mode only; reflect goes to nn.mirror_pad)"},
    {"test_convtranspose_dilations", "dilated nn.conv2d_transpose (its lowering in ops/nn.cpp has no dilation)"},
    {"test_gather_elements_1", "GatherElements is another operator (not supported)"},
    {"test_gather_elements_negative_indices", "GatherElements is another operator (not supported)"},
    {"test_range_float_type_positive_delta_expanded", "Loop (control flow) is not supported"},
    {"test_range_int32_type_negative_delta_expanded", "Loop (control flow) is not supported"},
    {"test_reshape_allowzero_reordered", "zero-size tensors (an input with a 0 extent)"},
    {"test_split_zero_size_splits", "zero-size tensors (an input with a 0 extent)"},
    {"test_slice_start_out_of_bounds", "zero-size tensors (an empty slice)"},
    {"test_identity_opt", "optional types"},
    {"test_identity_sequence", "sequence types"},
    {"test_dropout_default_mask", "the mask output of Dropout"},
    {"test_dropout_default_mask_ratio", "the mask output of Dropout"},
    {"test_gather_elements_0", "GatherElements is another operator (not supported)"},
};

struct Case {
    std::string name;
    fs::path dir;
};

bool matchesPrefix(const std::string& name) {
    for (const auto& p : kPrefixes)
        if (name.rfind(p, 0) == 0) return true;
    return false;
}

std::vector<std::string> allCaseNames() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(kNodeDir))
        if (e.is_directory() && matchesPrefix(e.path().filename().string())) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

constexpr double kAtol = 1e-4;
constexpr double kRtol = 1e-4;

// Float inputs the importer needs as constants (parameters of these ops, from this input index on).
const std::map<std::string, size_t> kFloatParameterOps = {
    {"Clip", 1}, {"Resize", 1}, {"Pad", 1}, {"Upsample", 1}, {"Range", 0}};

std::vector<NamedTensor> readAll(const fs::path& dir, const char* prefix) {
    std::vector<NamedTensor> out;
    for (int k = 0;; ++k) {
        fs::path p = dir / ("test_data_set_0/" + std::string(prefix) + std::to_string(k) + ".pb");
        if (!fs::exists(p)) break;
        out.push_back(readTensorFile(p.string()));
    }
    return out;
}

}  // namespace

class TestOnnxConformance : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testCoverage() {
        QVERIFY2(fs::is_directory(kNodeDir), "libonnx-testdata is not installed");
        auto names = allCaseNames();
        std::set<std::string> present(names.begin(), names.end());
        for (const auto& [name, why] : kExcluded)
            QVERIFY2(present.count(name), qPrintable(QStringLiteral("excluded case %1 does not exist")
                                                          .arg(QString::fromStdString(name))));
        const size_t covered = names.size() - kExcluded.size();
        qInfo("ONNX conformance: %zu cases match the supported operators, %zu excluded, %zu run", names.size(),
              kExcluded.size(), covered);
        for (const auto& [name, why] : kExcluded) qInfo("  excluded %s: %s", name.c_str(), why.c_str());
        // Pinned: a change of the importer's coverage (or of the test data) must be deliberate.
        QCOMPARE(int(names.size()), 369);
        QCOMPARE(int(covered), 344);
    }

    void testCase_data() {
        QTest::addColumn<QString>("dir");
        for (const auto& name : allCaseNames()) {
            if (kExcluded.count(name)) continue;
            QTest::addRow("%s", name.c_str()) << QString::fromStdString((fs::path(kNodeDir) / name).string());
        }
    }

    void testCase() {
        QFETCH(QString, dir);
        try {
            runCase(dir.toStdString());
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

private:
    static void runCase(const fs::path& d) {
        const std::string model = (d / "model.onnx").string();
        auto inputs = readAll(d, "input_");
        auto expected = readAll(d, "output_");
        QVERIFY(!expected.empty());

        // Pair input_k.pb with the k-th graph input. Integer inputs (shapes, axes, pads, indices)
        // and the float parameters of Clip/Resize/Pad/Upsample are frozen into constants, as the
        // importer needs them at import; every other input is fed at run time.
        const OnnxModelInfo info = inspectOnnx(model);
        QCOMPARE(info.inputs.size(), inputs.size());
        size_t firstParam = inputs.size();
        for (const auto& [type, count] : info.opTypes)
            if (auto it = kFloatParameterOps.find(type); it != kFloatParameterOps.end())
                firstParam = std::min(firstParam, it->second);
        OnnxImportOptions opts;
        std::vector<te::Buffer> feed;
        std::vector<std::string> fedNames;
        for (size_t k = 0; k < inputs.size(); ++k) {
            const int t = inputs[k].onnxType;
            const bool isFloat = t == 1 || t == 10 || t == 11;
            const std::string& name = info.inputs[k].name;
            if (!isFloat || k >= firstParam) {
                opts.constantInputs[name] = inputs[k].data;
            } else {
                opts.inputShapes[name] = inputs[k].data.type.shape;
                feed.push_back(te::Buffer{inputs[k].data.type.shape, inputs[k].data.f});
                fedNames.push_back(name);
            }
        }
        Graph g = importOnnx(model, opts);
        QCOMPARE(g.inputs().size(), feed.size());
        for (size_t k = 0; k < feed.size(); ++k) QCOMPARE(g.node(g.inputs()[k]).name, fedNames[k]);

        auto out = runGraph(g, feed);
        QCOMPARE(out.size(), expected.size());
        for (size_t k = 0; k < out.size(); ++k) {
            const ConstantData& e = expected[k].data;
            QCOMPARE(out[k].shape, e.type.shape);
            const bool isFloat = te::isFloat(e.type.dtype);
            QCOMPARE(int64_t(out[k].data.size()), e.type.numElements());
            double maxErr = 0;
            for (size_t i = 0; i < out[k].data.size(); ++i) {
                const double want = isFloat ? double(e.f[i]) : double(e.i[i]);
                const double got = out[k].data[i];
                const double err = std::fabs(got - want);
                maxErr = std::max(maxErr, err);
                if (!(err <= kAtol + kRtol * std::fabs(want)))
                    QFAIL(qPrintable(QStringLiteral("output %1 element %2: got %3, expected %4")
                                         .arg(k).arg(i).arg(got, 0, 'g', 9).arg(want, 0, 'g', 9)));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestOnnxConformance)
#include "tst_onnx_conformance.moc"
