// SPDX-License-Identifier: Apache-2.0
// GPU targets: TVM's target strings for cuda and opencl (keys, defaults, canonical print, host),
// their default hardware parameters, and task extraction with TVM's cuda / mali strategies,
// checked against what TVM printed: seed 003 (mobilenet NHWC on `opencl -device=mali`) and TVM's
// CI log gallery/how_to/tune_with_autoscheduler/ci_logs/resnet-18-NHWC-B1-cuda.json.
#include <QRegularExpression>
#include <QTest>

#include <set>
#include <utility>

#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/support/error.h"
#include "tests/engine/test_task_util.h"

using namespace tb;
using namespace tb::graph;
using tb::test::findTask;
using tb::test::parseSeed;
using tb::test::totalWeight;
using codegen::Target;

namespace {

std::set<std::string> keySet(const std::vector<ExtractedTask>& tasks) {
    std::set<std::string> s;
    for (const auto& t : tasks) s.insert(t.workloadKey);
    return s;
}

/// The 24 distinct workload keys of TVM's CI log for resnet-18 NHWC batch 1 on cuda
/// (gallery/how_to/tune_with_autoscheduler/ci_logs/resnet-18-NHWC-B1-cuda.json, one record per
/// task; target "cuda -keys=cuda,gpu -arch=sm_86 -max_num_threads=1024 -thread_warp_size=32").
const char* const kResnet18CudaKeys[] = {
    R"(["1097323f3970e5c881ad3a0028ca79cb", [1, 14, 14, 256], [4, 4, 256, 256], [1, 1, 1, 256], [1, 14, 14, 256]])",
    R"(["2d10de6646307f0e3e5cf4b31c20e69b", [1, 56, 56, 64], [1, 1, 64, 64], [1, 56, 56, 64]])",
    R"(["07f9fcad27bdd3233f86fe35a5185d33", [1, 56, 56, 64], [3, 3, 64, 128], [1, 1, 1, 128], [1, 28, 28, 128]])",
    R"(["00a059b856ac30ac172b6252254479a6", [1, 512], [1000, 512], [1, 1000], [1, 1000]])",
    R"(["8c53ca2904398da2889aa7508082d7bb", [1, 7, 7, 512], [1, 1, 1, 512]])",
    R"(["d78e8eb6021c4cdda0ad7775d10f751a", [1, 7, 7, 512], [4, 4, 512, 512], [1, 7, 7, 512], [1, 7, 7, 512]])",
    R"(["0fad1b42d0d33418e0a8d15d3bbad3c9", [1, 14, 14, 256], [1, 1, 256, 512], [1, 7, 7, 512]])",
    R"(["25577781e50c611c2e45e73c1cb3a6ca", [1, 28, 28, 128], [4, 4, 128, 128], [1, 28, 28, 128], [1, 28, 28, 128]])",
    R"(["40b1cf1fd37b0ef111b3cc0247302508", [1, 7, 7, 512], [4, 4, 512, 512], [1, 1, 1, 512], [1, 7, 7, 512]])",
    R"(["f19692ed81d032b1697c08adee62f9a5", [1, 28, 28, 128], [4, 4, 128, 128], [1, 28, 28, 128], [1, 1, 1, 128], [1, 28, 28, 128]])",
    R"(["07f9fcad27bdd3233f86fe35a5185d33", [1, 224, 224, 3], [7, 7, 3, 64], [1, 1, 1, 64], [1, 112, 112, 64]])",
    R"(["0fad1b42d0d33418e0a8d15d3bbad3c9", [1, 56, 56, 64], [1, 1, 64, 128], [1, 28, 28, 128]])",
    R"(["6d012ba18a086c11ee2b85c7324e16f2", [1, 112, 112, 64], [1, 1, 1, 64], [1, 56, 56, 64]])",
    R"(["0bcf718c0e6566bcd6c3b1437a3b6291", [1, 28, 28, 128], [4, 4, 128, 128], [1, 1, 1, 128], [1, 28, 28, 128]])",
    R"(["07f9fcad27bdd3233f86fe35a5185d33", [1, 14, 14, 256], [3, 3, 256, 512], [1, 1, 1, 512], [1, 7, 7, 512]])",
    R"(["7d79c516e212fe1d73f5dbb90eaca2cf", [1, 1000], [1, 1000]])",
    R"(["64b7ce5264a64cb340d78b444b0325e6", [1, 14, 14, 256], [4, 4, 256, 256], [1, 14, 14, 256], [1, 1, 1, 256], [1, 14, 14, 256]])",
    R"(["10b8215aaf2e14d47d40b4093e6f41a0", [1, 56, 56, 64], [6, 6, 64, 64], [1, 56, 56, 64], [1, 56, 56, 64]])",
    R"(["0fad1b42d0d33418e0a8d15d3bbad3c9", [1, 28, 28, 128], [1, 1, 128, 256], [1, 14, 14, 256]])",
    R"(["7f3fee61bc3c2604395f5d343b840b7c", [1, 14, 14, 256], [4, 4, 256, 256], [1, 14, 14, 256], [1, 14, 14, 256]])",
    R"(["07f9fcad27bdd3233f86fe35a5185d33", [1, 28, 28, 128], [3, 3, 128, 256], [1, 1, 1, 256], [1, 14, 14, 256]])",
    R"(["6c4f6234946e16bcf9e48bdf289f9200", [1, 56, 56, 64], [6, 6, 64, 64], [1, 56, 56, 64], [1, 1, 1, 64], [1, 56, 56, 64]])",
    R"(["7c2a4f1f432f81c44985590780dfb52d", [1, 56, 56, 64], [6, 6, 64, 64], [1, 1, 1, 64], [1, 56, 56, 64]])",
    R"(["a3df19e5b88592ef5a9ce584a1ca3010", [1, 7, 7, 512], [4, 4, 512, 512], [1, 7, 7, 512], [1, 1, 1, 512], [1, 1, 1, 512], [1, 7, 7, 512]])",
};

/// The input height and alpha (tile size + 2) of a winograd task's key `["md5", [1, H, W, CI],
/// [alpha, alpha, CO, CI], ...]`, or {0, 0} when the key does not have that form.
std::pair<int, int> winogradHeightAlpha(const std::string& key) {
    static const QRegularExpression shapes(QStringLiteral("^\\[\"[0-9a-f]{32}\", \\[1, (\\d+), \\d+, \\d+\\], \\[(\\d+), (\\d+), "));
    const auto m = shapes.match(QString::fromStdString(key));
    return m.hasMatch() ? std::pair<int, int>{m.captured(1).toInt(), m.captured(2).toInt()} : std::pair<int, int>{0, 0};
}

bool isWinograd(const ExtractedTask& t) { return t.dag.print(true).find("bgemm") != std::string::npos; }

const char* const kMaliTarget = "opencl -device=mali";
const char* const kArmHost = "llvm -mtriple=aarch64-linux-gnu";

}  // namespace

class TestGpuTasks : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // ---- targets -----------------------------------------------------------------------------

    void testTargetParse_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("canonical");
        QTest::addColumn<QString>("keys");
        // TVM's defaults for the kind are filled in and printed (TargetNode::str: keys, then the
        // attributes sorted by name); -arch is not invented.
        QTest::addRow("cuda") << "cuda" << "cuda -keys=cuda,gpu -max_num_threads=1024 -thread_warp_size=32" << "cuda,gpu";
        QTest::addRow("cuda sm_90") << "cuda -arch=sm_90"
                                    << "cuda -keys=cuda,gpu -arch=sm_90 -max_num_threads=1024 -thread_warp_size=32"
                                    << "cuda,gpu";
        // The strings TVM wrote into its own records print back unchanged.
        QTest::addRow("ci log") << "cuda -keys=cuda,gpu -arch=sm_86 -max_num_threads=1024 -thread_warp_size=32"
                                << "cuda -keys=cuda,gpu -arch=sm_86 -max_num_threads=1024 -thread_warp_size=32"
                                << "cuda,gpu";
        QTest::addRow("tvm_ci_conv2d") << "cuda -keys=cuda,gpu -max_num_threads=1024 -thread_warp_size=32"
                                       << "cuda -keys=cuda,gpu -max_num_threads=1024 -thread_warp_size=32" << "cuda,gpu";
        QTest::addRow("cuda attrs") << "cuda -thread_warp_size=32 -max_threads_per_block=1024 -model=h100 "
                                       "-max_shared_memory_per_block=49152 -arch=sm_90 -libs=cudnn,cublas"
                                    << "cuda -keys=cuda,gpu -arch=sm_90 -libs=cudnn,cublas -max_num_threads=1024 "
                                       "-max_shared_memory_per_block=49152 -max_threads_per_block=1024 -model=h100 "
                                       "-thread_warp_size=32"
                                    << "cuda,gpu";
        QTest::addRow("mali") << "opencl -device=mali"
                              << "opencl -keys=mali,opencl,gpu -device=mali -max_function_args=128 -max_num_threads=256 "
                                 "-max_shared_memory_per_block=16384 -max_threads_per_block=256 "
                                 "-texture_spatial_limit=16384 -thread_warp_size=1"
                              << "mali,opencl,gpu";
        QTest::addRow("opencl") << "opencl"
                                << "opencl -keys=opencl,gpu -max_function_args=128 -max_num_threads=256 "
                                   "-max_shared_memory_per_block=16384 -max_threads_per_block=256 "
                                   "-texture_spatial_limit=16384 -thread_warp_size=1"
                                << "opencl,gpu";
        // User keys replace the defaults; the device name follows them (target.cc FromConfig).
        QTest::addRow("user keys") << "opencl -keys=rk3399 -device=mali -model=rk3399"
                                   << "opencl -keys=rk3399,mali -device=mali -max_function_args=128 -max_num_threads=256 "
                                      "-max_shared_memory_per_block=16384 -max_threads_per_block=256 -model=rk3399 "
                                      "-texture_spatial_limit=16384 -thread_warp_size=1"
                                   << "rk3399,mali";
    }
    void testTargetParse() {
        QFETCH(QString, text);
        QFETCH(QString, canonical);
        QFETCH(QString, keys);
        const Target t = Target::parse(text.toStdString());
        QCOMPARE(QString::fromStdString(t.str()), canonical);
        QStringList k;
        for (const auto& s : t.keys) k << QString::fromStdString(s);
        QCOMPARE(k.join(QLatin1Char(',')), keys);
        QCOMPARE(Target::parse(t.str()), t);
        QVERIFY(t.isGpu());
        QVERIFY(!t.isCpu());
        QVERIFY(!t.runsOnHost());
        QVERIFY(t.targetHost.empty());
    }

    void testTargetHost() {
        const std::string armHost = Target::parse(kArmHost).str();
        QCOMPARE(armHost, std::string("llvm -keys=arm_cpu,cpu -mcpu=generic -mtriple=aarch64-linux-gnu"));
        // TVM's Target(target, host=...), the -host option quoted, and unquoted as the last option.
        const Target a = Target::parse(kMaliTarget, kArmHost);
        const Target b = Target::parse("opencl -device=mali -host=\"llvm -mtriple=aarch64-linux-gnu\"");
        const Target c = Target::parse("opencl -device=mali -host='llvm -mtriple=aarch64-linux-gnu'");
        const Target d = Target::parse("opencl -device=mali -host=llvm -mtriple=aarch64-linux-gnu");
        QCOMPARE(a.targetHost, armHost);
        QCOMPARE(b, a);
        QCOMPARE(c, a);
        QCOMPARE(d, a);
        // The same host given twice is fine.
        QCOMPARE(Target::parse("opencl -device=mali -host=llvm -mtriple=aarch64-linux-gnu", kArmHost), a);
        // str() leaves the host out, as TVM's records do.
        QCOMPARE(a.str(), Target::parse(kMaliTarget).str());
        QVERIFY(a.hostTarget().has_value());
        QCOMPARE(a.hostTarget()->mtriple, std::string("aarch64-linux-gnu"));
        QVERIFY(!Target::parse(kMaliTarget).hostTarget().has_value());
        QVERIFY(a.isMali() && a.isOpenCL() && a.isGpu() && !a.isCuda());
        const Target cuda = Target::parse("cuda -arch=sm_90", "llvm");
        QVERIFY(cuda.isCuda() && !cuda.isMali() && !cuda.isOpenCL());
        QCOMPARE(cuda.targetHost, Target::host().str());
        QVERIFY(!Target::parse("opencl").isMali());
        // llvm targets: unchanged, no GPU predicate.
        const Target cpu = Target::parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
        QVERIFY(cpu.isCpu() && !cpu.isGpu() && !cpu.isMali());
    }

    void testTargetErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("host");
        QTest::addColumn<QString>("mentions");
        QTest::addRow("kind") << "vulkan" << "" << "unsupported target kind 'vulkan' (supported: llvm, cuda, opencl)";
        QTest::addRow("arch number") << "cuda -arch=90" << "" << "invalid CUDA arch -arch=90";
        QTest::addRow("arch suffix") << "cuda -arch=sm_9x" << "" << "invalid CUDA arch";
        QTest::addRow("no value") << "cuda -arch" << "" << "has no '=value'";
        QTest::addRow("llvm option on cuda") << "cuda -mtriple=nvptx64" << "" << "unknown option -mtriple for kind cuda";
        QTest::addRow("cuda option on opencl") << "opencl -arch=sm_90" << "" << "unknown option -arch for kind opencl";
        QTest::addRow("opencl option on cuda") << "cuda -texture_spatial_limit=4" << "" << "unknown option -texture_spatial_limit";
        QTest::addRow("bad number") << "cuda -max_num_threads=many" << "" << "non-negative integer";
        QTest::addRow("zero") << "opencl -thread_warp_size=0" << "" << "must be positive";
        QTest::addRow("gpu host") << "opencl -device=mali -host=cuda" << "" << "host target must be an llvm target";
        QTest::addRow("bad host") << "opencl" << "llvm -mtriple=nonsense-unknown-none" << "bad host target";
        QTest::addRow("quote") << "opencl -host=\"llvm -mtriple=aarch64-linux-gnu" << "" << "unterminated quote";
        QTest::addRow("two hosts") << "opencl -host=\"llvm\" -host=\"llvm\"" << "" << "-host is given twice";
        QTest::addRow("conflicting host") << "opencl -host=llvm -mtriple=aarch64-linux-gnu" << "llvm -mtriple=x86_64-linux-gnu"
                                          << "differs from the host given beside it";
    }
    void testTargetErrors() {
        QFETCH(QString, text);
        QFETCH(QString, host);
        try {
            Target::parse(text.toStdString(), host.toStdString());
            QFAIL("no error");
        } catch (const UserError& e) {
            QFETCH(QString, mentions);
            QVERIFY2(QString::fromUtf8(e.what()).contains(mentions), e.what());
        }
    }

    // CPU-only code answers GPU targets with an error, not a crash; GPU targets get TVM's default
    // hardware parameters (search_task.cc GetDefaultHardwareParams) without a device.
    void testHardwareParamsAndCpuOnlyCode() {
        QCOMPARE(Target::parse(kMaliTarget).gpuHardwareParams(), HardwareParams::mali());
        QCOMPARE(Target::parse("cuda -arch=sm_90").gpuHardwareParams(), HardwareParams::gpu(49152, 1024, 32));
        QCOMPARE(Target::parse("cuda -max_threads_per_block=512 -max_shared_memory_per_block=65536").gpuHardwareParams(),
                 HardwareParams::gpu(65536, 512, 32));
        QCOMPARE(Target::parse("opencl").gpuHardwareParams(), HardwareParams::gpu(16384, 256, 1));
        QCOMPARE(Target::parse("opencl").gpuHardwareParams().maxVthreadExtent, 1);
        QVERIFY_THROWS_EXCEPTION(UserError, Target::parse("llvm").gpuHardwareParams());
        QVERIFY_THROWS_EXCEPTION(UserError, Target::parse("cuda").vectorBits());
        QVERIFY(!Target::parse("cuda").hasFeature("avx2"));
        QCOMPARE(Target::parse("cuda").featureString(), std::string());
    }

    void testStrategyFamilies() {
        QCOMPARE(alterOptionsForTarget("llvm -mcpu=core-avx2").strategy, OpStrategy::X86);
        QCOMPARE(alterOptionsForTarget("cuda").strategy, OpStrategy::Cuda);
        QCOMPARE(alterOptionsForTarget("cuda -keys=cuda,gpu -arch=sm_86").strategy, OpStrategy::Cuda);
        QCOMPARE(alterOptionsForTarget(kMaliTarget).strategy, OpStrategy::Mali);
        QCOMPARE(alterOptionsForTarget(Target::parse(kMaliTarget).str()).strategy, OpStrategy::Mali);
        QCOMPARE(alterOptionsForTarget("opencl -device=mali -host=\"llvm -mtriple=aarch64-linux-gnu\"").strategy,
                 OpStrategy::Mali);
        QCOMPARE(alterOptionsForTarget("opencl").strategy, OpStrategy::GpuGeneric);
        QVERIFY_THROWS_EXCEPTION(UserError, alterOptionsForTarget("vulkan"));
        QVERIFY_THROWS_EXCEPTION(UserError, alterOptionsForTarget("opencl -keys=rk3399"));
    }

    // ---- tasks -------------------------------------------------------------------------------

    // Seed 003: mobilenet NHWC batch 1 on opencl -device=mali with an AArch64 host gives TVM's 22
    // tasks, key for key and DAG for DAG. The seed prints them in TVM's hash-map order (REFERENCE-ZOO
    // §2.1), ours are in network order, so the lists are compared as sets; weights are §5.1's.
    void testMobilenetMali() {
        const auto seed = parseSeed(QStringLiteral("../shared/seeds/003_07f7492ab20a7ba4.txt"));
        QCOMPARE(int(seed.size()), 22);
        TaskExtractionOptions o;
        o.target = Target::parse(kMaliTarget, kArmHost).str();
        const auto tasks = extractTasks(makeNetwork("mobilenet", 1, "NHWC"), o);
        QCOMPARE(int(tasks.size()), 22);
        std::set<std::string> seedKeys;
        for (const auto& s : seed) seedKeys.insert(s.key);
        QCOMPARE(seedKeys.size(), size_t(22));
        QVERIFY(seedKeys == keySet(tasks));
        for (const auto& s : seed) {
            const ExtractedTask* t = findTask(tasks, s.key);
            QVERIFY2(t, s.key.c_str());
            QCOMPARE(QString::fromStdString(t->dag.print(false)), QString::fromStdString(s.dag));
            const bool five = s.key.find("[1, 14, 14, 512], [3, 3, 512, 1], [1, 1, 1, 512], [1, 14, 14, 512]") != std::string::npos ||
                              s.key.find("[1, 14, 14, 512], [1, 1, 512, 512], [1, 1, 1, 512], [1, 14, 14, 512]") != std::string::npos;
            QCOMPARE(t->weight, five ? 5 : 1);
        }
        QCOMPARE(totalWeight(tasks), 30);
        // The same through TVM's -host= form inside the target string.
        o.target = "opencl -device=mali -host=\"llvm -mtriple=aarch64-linux-gnu\"";
        QVERIFY(keySet(extractTasks(makeNetwork("mobilenet", 1, "NHWC"), o)) == seedKeys);
    }

    // resnet-18 NHWC batch 1 on cuda: TVM's CI log. Every 3x3 stride-1 conv is winograd on cuda
    // (strategy/cuda.py judge_winograd: no channel bound, unlike x86), with tile 4 at 56x56 (H % 8
    // == 0: [6, 6, CO, CI] weights) and tile 2 elsewhere ([4, 4, CO, CI]).
    void testResnet18Cuda() {
        TaskExtractionOptions o;
        o.target = Target::parse("cuda -arch=sm_90").str();
        const auto tasks = extractTasks(makeNetwork("resnet-18", 1, "NHWC"), o);
        std::set<std::string> expected(std::begin(kResnet18CudaKeys), std::end(kResnet18CudaKeys));
        QCOMPARE(expected.size(), size_t(24));
        QCOMPARE(int(tasks.size()), 24);
        for (const auto& t : tasks) QVERIFY2(expected.count(t.workloadKey), t.workloadKey.c_str());
        QVERIFY(keySet(tasks) == expected);
        // Weights (REFERENCE-ZOO §5.2's structure): the two identical first-stage conv+add+relu, now
        // winograd, count 2; every other task 1.
        for (const auto& t : tasks) {
            const bool two = t.workloadKey ==
                             R"(["7c2a4f1f432f81c44985590780dfb52d", [1, 56, 56, 64], [6, 6, 64, 64], [1, 1, 1, 64], [1, 56, 56, 64]])";
            QCOMPARE(t.weight, two ? 2 : 1);
            QVERIFY(t.flop > 0);
        }
        QCOMPARE(totalWeight(tasks), 25);
    }

    // resnet-50 NHWC on cuda: no TVM log to compare with, so its structure: the same fused groups as
    // on x86 (same count and weights), the tasks without a 3x3 stride-1 conv keep their x86 keys, and
    // every 3x3 stride-1 conv is a winograd task with the tile cuda picks from the input height.
    void testResnet50Cuda() {
        const Graph net = makeNetwork("resnet-50", 1, "NHWC");
        TaskExtractionOptions o;
        o.target = "cuda";
        const auto cuda = extractTasks(net, o);
        const auto x86 = extractTasks(net);
        QCOMPARE(totalWeight(cuda), totalWeight(x86));
        const std::set<std::string> x86Keys = keySet(x86);
        int winograd = 0;
        for (const auto& t : cuda) {
            if (!isWinograd(t)) {
                QVERIFY2(x86Keys.count(t.workloadKey), t.workloadKey.c_str());
                // A direct 3x3 conv left on cuda is a strided one.
                QVERIFY2(t.workloadKey.find(", [3, 3, ") == std::string::npos || t.dag.print(true).find("(yy*2)") != std::string::npos,
                         t.workloadKey.c_str());
                continue;
            }
            ++winograd;
            // alpha 6 (tile 4) when H % 8 == 0, else 4 (tile 2).
            const auto [h, alpha] = winogradHeightAlpha(t.workloadKey);
            QVERIFY2(h > 0, t.workloadKey.c_str());
            QCOMPARE(alpha, h % 8 == 0 ? 6 : 4);
        }
        // x86 makes winograd tasks only for 64 < CO < 512 (the 28x28 and 14x14 stages); cuda also for
        // the 56x56 and 7x7 stages.
        int x86Winograd = 0;
        for (const auto& t : x86) x86Winograd += isWinograd(t);
        qInfo("resnet-50 NHWC cuda: %d tasks (%d winograd; x86: %d tasks, %d winograd)", int(cuda.size()), winograd,
              int(x86.size()), x86Winograd);
        QVERIFY(winograd > x86Winograd);
        QCOMPARE(int(cuda.size()), int(x86.size()));
    }

    // resnet-18 NHWC on Mali: every 3x3 stride-1 conv is winograd (strategy/mali.py), tile 4 where
    // H % 4 == 0 (topi/mali/conv2d.py _pick_tile_size: the 56x56 and 28x28 stages), else 2. The
    // 28x28 tile-4 tasks are the very computes x86 makes (same tile), so they have x86's keys.
    void testResnet18Mali() {
        const Graph net = makeNetwork("resnet-18", 1, "NHWC");
        TaskExtractionOptions o;
        o.target = kMaliTarget;
        const auto mali = extractTasks(net, o);
        const std::set<std::string> x86Keys = keySet(extractTasks(net));
        QCOMPARE(int(mali.size()), 24);
        QCOMPARE(totalWeight(mali), 25);
        int winograd = 0;
        for (const auto& t : mali) {
            if (!isWinograd(t)) continue;
            ++winograd;
            const auto [h, alpha] = winogradHeightAlpha(t.workloadKey);
            QVERIFY2(h > 0, t.workloadKey.c_str());
            QCOMPARE(alpha, h % 4 == 0 ? 6 : 4);
            if (h == 28) QVERIFY2(x86Keys.count(t.workloadKey), t.workloadKey.c_str());
        }
        QCOMPARE(winograd, 12);  // 3 fused forms x 4 stages, as on cuda
    }

    // A generic OpenCL target takes the cuda strategies (key gpu) but no weight pre-transform: the
    // winograd tasks read the HWIO weight and transform it in a kernel_pack stage.
    void testResnet18GenericOpenCL() {
        TaskExtractionOptions o;
        o.target = "opencl";
        const auto tasks = extractTasks(makeNetwork("resnet-18", 1, "NHWC"), o);
        QCOMPARE(totalWeight(tasks), 25);
        int packed = 0;
        for (const auto& t : tasks) {
            const std::string dag = t.dag.print(true);
            if (dag.find("bgemm") == std::string::npos) continue;
            ++packed;
            QVERIFY2(dag.find("kernel_pack") != std::string::npos, t.workloadKey.c_str());
            QVERIFY2(t.workloadKey.find(", [3, 3, ") != std::string::npos, t.workloadKey.c_str());
        }
        QVERIFY(packed > 0);
    }

    // Mali's NCHW convolution is an AutoTVM spatial-pack template TVM lowers even with the
    // auto-scheduler; it is not implemented, and says so.
    void testMaliNchwRejected() {
        TaskExtractionOptions o;
        o.target = kMaliTarget;
        try {
            extractTasks(makeNetwork("resnet-18", 1, "NCHW"), o);
            QFAIL("no error");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("spatial-pack")), e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestGpuTasks)
#include "tst_gpu_tasks.moc"
