// SPDX-License-Identifier: Apache-2.0
// The GPU runtime (engine/measure/gpu_device.h) on this machine's OpenCL device (PoCL through the
// ICD loader): attributes under TVM's names, hand-written OpenCL C modules (vector add; a tiled
// matmul through __local memory with barriers, then bias + ReLU from a workspace buffer) giving
// the CPU's answers with positive device times, and every failure as its TVM error number: a
// source that does not compile (with the build log), a missing entry, an out-of-bounds write, a
// refused work-group size, a wrong answer, a hang (killed: RUN_TIMEOUT), a malformed module JSON.
// Every test runs the runtime in forked children only (see testTiledMatmulTwoLaunches).
// CUDA: only "the library is not present" here (this machine has no NVIDIA driver); the device
// side of CUDA is exercised on the H100 by tools/gpu's tunebench-gpu-selftest.
#include <QtTest>

#include <dlfcn.h>

#include <nlohmann/json.hpp>

#include "engine/measure/child_run.h"
#include "engine/measure/gpu_device.h"
#include "engine/measure/timer.h"
#include "engine/support/process.h"
#include "tools/gpu/sample_modules.h"

using namespace tb;
using namespace tb::gpu;
using codegen::GpuLanguage;

class TestGpuDevice : public QObject {
    Q_OBJECT

private:
    // Runs `body` in a forked child (see the comment above testTiledMatmulTwoLaunches) and returns
    // the JSON it produced, or {"exception": what} when it threw or the child died.
    static nlohmann::json inChild(const std::function<nlohmann::json()>& body) {
        const measure::ChildOutcome c = measure::runInChild(120, [&] {
            try {
                return body().dump();
            } catch (const std::exception& e) {
                return nlohmann::json{{"exception", e.what()}}.dump();
            }
        });
        if (!c.ok()) return {{"exception", "the child process failed: " + describeWaitStatus(c.status)}};
        return nlohmann::json::parse(c.out);
    }

    static GpuMeasureOptions fast() {
        GpuMeasureOptions o;
        o.number = 2;
        o.repeat = 3;
        o.minRepeatMs = 5;
        return o;
    }

private Q_SLOTS:
    void initTestCase() {
        const GpuDeviceAttributes a = queryGpuAttributesIsolated(GpuApi::OpenCL, 0, 60);
        QVERIFY2(a.exist, "no OpenCL device: install pocl-opencl-icd (scripts/setup)");
    }

    void testAttributes() {
        const GpuDeviceAttributes a = queryGpuAttributesIsolated(GpuApi::OpenCL, 0, 60);
        QVERIFY(a.maxThreadsPerBlock >= 64);
        QCOMPARE(a.warpSize, 1);  // TVM's OpenCL answer
        QVERIFY(a.maxSharedMemoryPerBlock >= 16 * 1024);
        QVERIFY(!a.deviceName.empty());
        QVERIFY(a.computeVersion.find('.') != std::string::npos);
        QVERIFY(a.multiProcessorCount >= 1);
        QVERIFY(a.maxThreadDimensions[0] >= 64);
        QVERIFY(a.totalGlobalMemory > 0);
        QCOMPARE(QString::fromStdString(a.platformName), QStringLiteral("Portable Computing Language"));
        // The wire form keeps TVM's names and round-trips.
        const nlohmann::json j = toJson(a);
        for (const char* key : {"max_shared_memory_per_block", "max_threads_per_block", "warp_size", "compute_version",
                                "device_name", "multi_processor_count", "max_clock_rate", "max_thread_dimensions"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["max_threads_per_block"].get<int>(), a.maxThreadsPerBlock);
        QVERIFY(gpuDeviceAttributesFromJson(j) == a);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 gpuDeviceAttributesFromJson(nlohmann::json{{"warp_size", "thirty-two"}}));
    }

    void testVectorAdd() {
        const samples::SampleCase s = samples::vectorAdd(GpuLanguage::OpenCL);
        GpuMeasureOptions o = fast();
        o.returnOutputs = true;
        const GpuMeasureResult r = measureGpuModuleIsolated(GpuApi::OpenCL, 0, s.module, o, &s.check, 120);
        QVERIFY2(r.ok(), r.errorMsg.c_str());
        QCOMPARE(int(r.costs.size()), 3);
        for (double c : r.costs) QVERIFY2(c > 0 && c < 1, std::to_string(c).c_str());
        QCOMPARE(int(r.outputs.size()), 3);
        QCOMPARE(r.outputs[2], s.check.expected[2]);  // exact: one float add per element
    }

    void testCompileError() {
        const GpuMeasureResult r =
            measureGpuModuleIsolated(GpuApi::OpenCL, 0, samples::brokenSource(GpuLanguage::OpenCL), fast(), nullptr, 120);
        QCOMPARE(r.errorNo, kErrorCompileDevice);
        QVERIFY2(r.errorMsg.find("clBuildProgram") != std::string::npos, r.errorMsg.c_str());
        QVERIFY2(r.errorMsg.find("undeclared_value") != std::string::npos, r.errorMsg.c_str());  // the build log
        QCOMPARE(r.costs.size(), size_t(0));
    }

    void testRuntimeErrors() {
        // Out of bounds: caught by the guard words after the output buffer.
        GpuMeasureResult r = measureGpuModuleIsolated(GpuApi::OpenCL, 0, samples::outOfBoundsWrite(GpuLanguage::OpenCL),
                                                      fast(), nullptr, 120);
        QCOMPARE(r.errorNo, kErrorRuntimeDevice);
        QVERIFY2(r.errorMsg.find("out-of-bounds write detected after buffer 2") != std::string::npos, r.errorMsg.c_str());
        // A work-group larger than the device allows: the launch is refused.
        codegen::GpuModule big = samples::vectorAdd(GpuLanguage::OpenCL, 1 << 17).module;
        big.launches[0].grid = {1, 1, 1};
        big.launches[0].block = {1 << 17, 1, 1};
        r = measureGpuModuleIsolated(GpuApi::OpenCL, 0, big, fast(), nullptr, 120);
        QCOMPARE(r.errorNo, kErrorRuntimeDevice);
        QVERIFY2(r.errorMsg.find("CL_INVALID_WORK_GROUP_SIZE") != std::string::npos, r.errorMsg.c_str());
    }

    void testWrongAnswer() {
        samples::SampleCase s = samples::vectorAdd(GpuLanguage::OpenCL);
        s.check.expected[2][17] += 1.0f;
        const GpuMeasureResult r = measureGpuModuleIsolated(GpuApi::OpenCL, 0, s.module, fast(), &s.check, 120);
        QCOMPARE(r.errorNo, kErrorWrongAnswer);
        QVERIFY2(r.errorMsg.find("argument 2 element 17") != std::string::npos, r.errorMsg.c_str());
    }

    void testHangIsKilled() {
        QElapsedTimer t;
        t.start();
        const GpuMeasureResult r =
            measureGpuModuleIsolated(GpuApi::OpenCL, 0, samples::endlessLoop(GpuLanguage::OpenCL), fast(), nullptr, 4);
        QCOMPARE(r.errorNo, kErrorRunTimeout);
        QVERIFY(t.elapsed() < 30000);
        // The next candidate is unaffected.
        const samples::SampleCase s = samples::vectorAdd(GpuLanguage::OpenCL);
        QVERIFY(measureGpuModuleIsolated(GpuApi::OpenCL, 0, s.module, fast(), &s.check, 120).ok());
    }

    void testMalformedModuleJson() {
        nlohmann::json j = codegen::toJson(samples::vectorAdd(GpuLanguage::OpenCL).module);
        QVERIFY(codegen::gpuModuleFromJson(j) == samples::vectorAdd(GpuLanguage::OpenCL).module);
        j["launches"][0]["args"] = {0, 1, 9};
        try {
            codegen::gpuModuleFromJson(j);
            QFAIL("no error for an argument index outside the buffers");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(std::string(e.what()).find("buffer 9") != std::string::npos, e.what());
        }
        j.erase("source");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, codegen::gpuModuleFromJson(j));
    }

    void testCudaAbsentIsAClearError() {
        if (void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
            dlclose(h);
            QSKIP("this machine has a CUDA driver: the absent-library path cannot be tested here");
        }
        try {
            gpuDeviceCount(GpuApi::CUDA);
            QFAIL("a CUDA device count without libcuda");
        } catch (const GpuError& e) {
            QCOMPARE(e.errorNo(), kErrorCompileDevice);
            QVERIFY2(std::string(e.what()).find("libcuda.so.1") != std::string::npos, e.what());
        }
        const samples::SampleCase s = samples::vectorAdd(GpuLanguage::CUDA);
        const GpuMeasureResult r = measureGpuModuleIsolated(GpuApi::CUDA, 0, s.module, fast(), &s.check, 60);
        QCOMPARE(r.errorNo, kErrorCompileDevice);
        QVERIFY2(r.errorMsg.find("CUDA driver library is not present") != std::string::npos, r.errorMsg.c_str());
        QVERIFY_THROWS_EXCEPTION(GpuError, queryGpuAttributesIsolated(GpuApi::CUDA, 0, 60));
    }

    // The in-process API (what a measuring child runs), called in a forked child all the same:
    // the test process never starts the OpenCL runtime, because PoCL does not free its global
    // state at exit (LeakSanitizer, scripts/test --sanitize, would report it) and a child forked
    // after it started could not use it (PoCL's worker threads do not survive fork).

    void testTiledMatmulTwoLaunches() {
        const nlohmann::json j = inChild([] {
            const samples::SampleCase s = samples::tiledMatmulBiasRelu(GpuLanguage::OpenCL);
            const std::unique_ptr<GpuDevice> dev = openGpuDevice(GpuApi::OpenCL, 0);
            GpuMeasureOptions o = fast();
            o.returnOutputs = true;
            const GpuMeasureResult r = measureGpuModule(*dev, s.module, o, &s.check);
            GpuMeasureOptions random = o;
            random.seed = 7;
            const GpuMeasureResult r2 = measureGpuModule(*dev, s.module, random);
            const std::vector<float>& out = r.outputs.at(3);
            return nlohmann::json{
                {"opencl", dev->api() == GpuApi::OpenCL},
                {"checked", toJson(r)},
                {"zeros", std::count(out.begin(), out.end(), 0.0f)},
                {"positive", std::count_if(out.begin(), out.end(), [](float v) { return v > 0.1f; })},
                {"random_ok", r2.ok()},
                {"random_differs", r2.outputs.at(3) != out}};
        });
        QVERIFY2(!j.contains("exception"), j.dump().c_str());
        QVERIFY(j["opencl"].get<bool>());
        const GpuMeasureResult r = gpuMeasureResultFromJson(j["checked"]);
        QVERIFY2(r.ok(), r.errorMsg.c_str());
        QCOMPARE(int(r.costs.size()), 3);
        for (double c : r.costs) QVERIFY(c > 0);
        // Some outputs are clamped by the ReLU, some are not: both paths of the epilogue ran.
        QVERIFY(j["zeros"].get<int>() > 0);
        QVERIFY(j["positive"].get<int>() > 0);
        // Random inputs (no check): still runs, and the answer is not the checked one.
        QVERIFY(j["random_ok"].get<bool>());
        QVERIFY(j["random_differs"].get<bool>());
    }

    void testTimerRoundsGrowToMinRepeat() {
        // The device clock drives TVM's growth rule: every round lasts at least min_repeat_ms of
        // device time, so costs are per module run, not per round.
        const nlohmann::json j = inChild([] {
            const samples::SampleCase s = samples::vectorAdd(GpuLanguage::OpenCL, 4096);
            const std::unique_ptr<GpuDevice> dev = openGpuDevice(GpuApi::OpenCL, 0);
            const std::unique_ptr<GpuProgram> p = dev->load(s.module);
            const double once = p->runTimed(1);
            measure::TimerOptions t;
            t.number = 1;
            t.repeat = 2;
            t.minRepeatMs = 20;
            int calls = 0, largest = 0;
            const std::vector<double> costs = measure::timeEvaluateRounds(
                [&](int number) {
                    ++calls;
                    largest = std::max(largest, number);
                    return p->runTimed(number);
                },
                t);
            return nlohmann::json{{"once", once}, {"calls", calls}, {"largest", largest}, {"costs", costs}};
        });
        QVERIFY2(!j.contains("exception"), j.dump().c_str());
        QVERIFY(j["once"].get<double>() > 0);
        const auto costs = j["costs"].get<std::vector<double>>();
        QCOMPARE(int(costs.size()), 2);
        QVERIFY(j["calls"].get<int>() >= 3);                             // at least one growth, then round 2
        QVERIFY(j["largest"].get<int>() * costs[0] * 1e3 >= 20 * 0.5);  // the last round reached ~min_repeat_ms
    }

    void testMissingEntryAndWrongLanguage() {
        const nlohmann::json j = inChild([] {
            const std::unique_ptr<GpuDevice> dev = openGpuDevice(GpuApi::OpenCL, 0);
            codegen::GpuModule m = samples::vectorAdd(GpuLanguage::OpenCL).module;
            m.launches[0].entry = "no_such_kernel";
            return nlohmann::json{{"missing", toJson(measureGpuModule(*dev, m, fast()))},
                                  {"cuda", toJson(measureGpuModule(*dev, samples::vectorAdd(GpuLanguage::CUDA).module, fast()))}};
        });
        QVERIFY2(!j.contains("exception"), j.dump().c_str());
        GpuMeasureResult r = gpuMeasureResultFromJson(j["missing"]);
        QCOMPARE(r.errorNo, kErrorCompileDevice);
        QVERIFY2(r.errorMsg.find("no_such_kernel") != std::string::npos, r.errorMsg.c_str());
        r = gpuMeasureResultFromJson(j["cuda"]);
        QCOMPARE(r.errorNo, kErrorCompileDevice);
        QVERIFY2(r.errorMsg.find("cuda module") != std::string::npos, r.errorMsg.c_str());
    }

    void testBadDeviceIndexAndApiNames() {
        const nlohmann::json j = inChild([] {
            try {
                openGpuDevice(GpuApi::OpenCL, 99);
                return nlohmann::json{{"opened", true}};
            } catch (const GpuError& e) {
                return nlohmann::json{{"error_no", e.errorNo()}, {"error_msg", e.what()}};
            }
        });
        QVERIFY2(!j.contains("opened") && !j.contains("exception"), j.dump().c_str());
        QCOMPARE(j["error_no"].get<int>(), kErrorCompileDevice);
        QVERIFY2(j["error_msg"].get<std::string>().find("no OpenCL device 99") != std::string::npos, j.dump().c_str());
        QVERIFY(parseGpuApi("cuda") == GpuApi::CUDA);
        QVERIFY(parseGpuApi("opencl") == GpuApi::OpenCL);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseGpuApi("metal"));
    }
};

QTEST_GUILESS_MAIN(TestGpuDevice)
#include "tst_gpu_device.moc"
