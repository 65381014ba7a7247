// SPDX-License-Identifier: Apache-2.0
// Whole networks compiled for GPU targets (runtime/build_module.h, GPU path) and run on this
// machine's OpenCL device (PoCL): every fused group scheduled by the GPU default schedule
// (search/default_schedule_gpu.h) or by a record, lowered for the GPU, emitted as OpenCL C and
// launched in order over the memory plan's buffers; the logits equal the graph interpreter's.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/codegen/gpu_module.h"
#include "engine/graph/zoo.h"
#include "engine/measure/gpu_device.h"
#include "engine/runtime/build_module.h"
#include "engine/support/error.h"
#include "runtime_test_util.h"

using namespace tb;
using namespace tb::runtime;
using tb::test::compareWithInterpreter;
using tb::test::randomInput;
using tb::test::withLogits;

class TestGpuNetwork : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        // PoCL is installed by scripts/setup; without an OpenCL device these tests cannot run.
        QVERIFY2(gpu::gpuDeviceCount(gpu::GpuApi::OpenCL) > 0, "no OpenCL device (scripts/setup installs PoCL)");
    }

    void testZooNetworksOnOpenCL_data() {
        QTest::addColumn<QString>("network");
        QTest::addColumn<QString>("target");
        QTest::addRow("mlp opencl") << "mlp" << "opencl";
        QTest::addRow("mobilenet NHWC opencl -device=mali") << "mobilenet" << "opencl -device=mali";
        QTest::addRow("resnet-18 NHWC cuda-source shape, opencl") << "resnet-18" << "opencl";
    }
    void testZooNetworksOnOpenCL() {
        QFETCH(QString, network);
        QFETCH(QString, target);
        graph::Graph g = withLogits(graph::makeNetwork(network.toStdString(), 1, "NHWC"));
        BuildOptions o;
        o.target = target.toStdString();
        CompiledModule mod = build(g, o);
        const BuildReport& rep = mod.report();
        qInfo("%s", rep.text().substr(0, 400).c_str());
        QVERIFY(mod.gpuModule() != nullptr);
        const codegen::GpuModule& m = *mod.gpuModule();
        QCOMPARE(m.language, codegen::GpuLanguage::OpenCL);
        QCOMPARE(rep.defaultCalls, rep.groups);  // no log: every group has the GPU default schedule
        QVERIFY(int(m.launches.size()) >= rep.groups);  // at least one kernel per group
        // Arguments: the input, every param, the output.
        int params = 0;
        for (const auto& n : mod.graph().nodes) params += n.kind == ExecNode::Kind::Param;
        QCOMPARE(m.numArgs, 1 + params + 1);
        // The wire form round-trips (what a GPU device server receives).
        QCOMPARE(codegen::gpuModuleFromJson(codegen::toJson(m)), m);
        const double err = compareWithInterpreter(mod, g);
        qInfo("%s on %s: OpenCL vs interpreter: relative max error %.3g, %zu launches", qPrintable(network),
              qPrintable(target), err, m.launches.size());
        QVERIFY2(err <= 1e-4, qPrintable(QString::number(err)));
        // A second run on other inputs is not polluted by the first (buffers reused by the plan).
        te::Buffer in = randomInput(g.node(g.inputs()[0]).type.shape, 11);
        auto a = mod.run({in});
        auto b = mod.run({in});
        QCOMPARE(a[0].data, b[0].data);
        const BenchmarkResult br = mod.benchmark(2, 1, 0);
        QCOMPARE(int(br.results.size()), 2);
        QVERIFY(br.min > 0);
    }

    void testCudaNetworkSource() {
        // No CUDA device here: the CUDA network is built (emitted) and its module is well formed;
        // it runs on the GPU machine (tools/gpu). run() names the missing runtime.
        graph::Graph g = graph::makeNetwork("mlp", 1, "NHWC");
        BuildOptions o;
        o.target = "cuda -arch=sm_90";
        CompiledModule mod = build(g, o);
        QVERIFY(mod.gpuModule() != nullptr);
        QCOMPARE(mod.gpuModule()->language, codegen::GpuLanguage::CUDA);
        QVERIFY(mod.gpuModule()->source.find("__global__") != std::string::npos);
        // One prelude for the whole network, however many kernels it has.
        const std::string& src = mod.gpuModule()->source;
        const size_t first = src.find("tb_floordiv(");
        QVERIFY(first != std::string::npos);
        QVERIFY(src.find("int tb_floordiv(", first + 1) == std::string::npos);
    }

    void testAutotvmLogOnGpuIsRefused() {
        graph::Graph g = graph::makeNetwork("mlp", 1, "NHWC");
        BuildOptions o;
        o.target = "opencl";
        o.logPath = "../shared/data/logs/autotvm/tophub_mali_v0.06.log";
        try {
            build(g, o);
            QFAIL("an AutoTVM log on a GPU target was accepted");
        } catch (const UserError& e) {
            // A plain opencl target has no AutoTVM templates (a Mali one does: tst_autotvm_mali_board).
            QVERIFY2(std::string(e.what()).find("AutoTVM logs are applied to CPU and Mali targets only") !=
                         std::string::npos,
                     e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestGpuNetwork)
#include "tst_gpu_network.moc"
