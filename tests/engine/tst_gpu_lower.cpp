// SPDX-License-Identifier: Apache-2.0
// GPU lowering and source emission (lower_gpu.h, codegen_gpu_source.h): TVM's own CUDA record of
// conv2d_layer (tvm_ci_conv2d.json) and hand-made GPU states of a matmul and of padded convs are
// lowered, emitted as OpenCL C, compiled and run on the OpenCL device (PoCL) and compared with the
// reference interpreter; the IR's barriers and scopes and the CUDA C constructs are checked.
#include <QtTest>

#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/codegen/codegen_gpu_source.h"
#include "engine/lower/lower_gpu.h"
#include "engine/lower/lower_state.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/te/interpreter.h"
#include "engine/topi/broadcast.h"
#include "engine/topi/nn.h"
#include "engine/topi/nn/conv2d.h"
#include "test_opencl_util.h"
#include "test_util.h"

using namespace tb;
using json = nlohmann::json;
using te::Tensor;

namespace {

// TVM's tutorial workload conv2d_layer (tune_conv2d_layer_cuda.py): NCHW conv2d + bias + relu.
// Stages: data pad_temp kernel conv2d_nchw bias T_add T_relu.
std::shared_ptr<const te::ComputeDAG> conv2dLayer(int64_t n, int64_t h, int64_t w, int64_t co, int64_t ci, int64_t k,
                                                  int64_t stride, int64_t pad) {
    auto data = te::placeholder({n, ci, h, w}, "data");
    auto kernel = te::placeholder({co, ci, k, k}, "kernel");
    auto bias = te::placeholder({1, co, 1, 1}, "bias");
    Tensor conv = topi::nn::conv2dNchw(data, kernel, {stride, stride}, {pad, pad});
    Tensor out = topi::relu(topi::add(conv, bias));
    return std::make_shared<te::ComputeDAG>(std::vector<Tensor>{data, kernel, bias, out});
}

// C[i, j] = sum_k A[i, k] * B[k, j]. Stages: A B C.
std::shared_ptr<const te::ComputeDAG> matmul(int64_t m, int64_t n, int64_t kk) {
    auto A = te::placeholder({m, kk}, "A");
    auto B = te::placeholder({kk, n}, "B");
    auto k = te::reduceAxis(kk, "k");
    auto C = te::compute({m, n}, {"i", "j"}, [&](const std::vector<te::Var>& v) {
        return te::sum(A(v[0], k.var) * B(k.var, v[1]), {k});
    }, "C");
    return std::make_shared<te::ComputeDAG>(std::vector<Tensor>{A, B, C});
}

// The steps of TVM's CUDA record of conv2d_layer (1x512x7x7, 512 filters 3x3, pad 1).
json conv2dRecordSteps() {
    std::ifstream in("../shared/data/logs/ansor/tvm_ci_conv2d.json");
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        return json::parse(line).at("i").at(1).at(1);
    }
    return json();
}

// Ansor's GPU multi-level tiling of a matmul, written as TVM records it ("SSSRRSRS", C.local at
// the thread level, A.shared / B.shared at k.0 with cooperative fetching, vectorized by `vec`).
// i and j: [vthread, threads, inner, innermost] lengths; k: [k1, k2].
json matmulSteps(int64_t m, int64_t n, int64_t kk, std::array<int64_t, 4> i, std::array<int64_t, 4> j,
                 std::array<int64_t, 2> k, int64_t vec, int unroll) {
    const int64_t ti = i[0] * i[1] * i[2] * i[3], tj = j[0] * j[1] * j[2] * j[3], tk = k[0] * k[1];
    json s = json::array();
    s.push_back({"CHW", 2, "local"});
    s.push_back({"SP", 2, 0, m, {i[0], i[1], i[2], i[3]}, 1});
    s.push_back({"SP", 2, 5, n, {j[0], j[1], j[2], j[3]}, 1});
    s.push_back({"SP", 2, 10, kk, {k[0], k[1]}, 1});
    s.push_back({"RE", 2, {0, 5, 1, 6, 2, 7, 10, 11, 3, 8, 12, 4, 9}});
    s.push_back({"FSP", 3, 0, 1, 3});
    s.push_back({"FSP", 3, 4, 2, 3});
    s.push_back({"RE", 3, {0, 4, 1, 5, 2, 6, 3, 7}});
    s.push_back({"CA", 2, 3, 5});
    s.push_back({"CHR", 1, "shared", {2}});
    s.push_back({"CA", 2, 3, 6});
    s.push_back({"CHR", 0, "shared", {3}});
    s.push_back({"CA", 1, 4, 6});
    s.push_back({"FU", 5, {0, 1}});
    s.push_back({"AN", 5, 0, 5});
    s.push_back({"FU", 5, {1, 2}});
    s.push_back({"AN", 5, 1, 4});
    s.push_back({"FU", 5, {2, 3}});
    s.push_back({"AN", 5, 2, 6});
    for (auto [stage, ext] : {std::pair<int, int64_t>{3, tk * tj}, {1, ti * tk}}) {
        s.push_back({"FU", stage, {0, 1}});
        s.push_back({"SP", stage, 0, ext, {vec}, 1});
        s.push_back({"AN", stage, 1, 2});
        s.push_back({"FFSP", stage, 0, {2, 1}, 1, 1});
        s.push_back({"AN", stage, 1, 6});
    }
    if (unroll > 0) s.push_back({"PR", 4, 0, "auto_unroll_max_step$" + std::to_string(unroll)});
    return s;
}

State gpuState(const te::ComputeDAG& dag, const json& steps) { return inferBound(replaySteps(dag, stepsFromJson(steps))); }

// TB_GPU_DUMP=1 prints the IR and sources the tests make (to read what the emitter writes).
void dump(const std::string& text) {
    if (qEnvironmentVariableIsSet("TB_GPU_DUMP")) qInfo("%s", text.c_str());
}

// TB_GPU_EXPORT=<dir> writes the CUDA module of a test case with its inputs and the interpreter's
// outputs (<dir>/<name>/module.json, in<i>.bin, out<i>.bin: raw float32) for a run on a CUDA GPU.
void exportCuda(const te::ComputeDAG& dag, const codegen::GpuModule& cu, const std::string& name, unsigned seed) {
    const QByteArray root = qgetenv("TB_GPU_EXPORT");
    if (root.isEmpty()) return;
    const std::string dir = root.toStdString() + "/" + name;
    QDir().mkpath(QString::fromStdString(dir));
    std::ofstream(dir + "/module.json") << codegen::toJson(cu).dump();
    const auto inputs = test::randomInputs(dag, seed);
    const auto want = te::evaluate(dag, inputs);
    auto write = [](const std::string& path, const std::vector<float>& v) {
        std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
    };
    for (size_t i = 0; i < inputs.size(); ++i) write(dir + "/in" + std::to_string(i) + ".bin", inputs[i].data);
    for (size_t o = 0; o < want.size(); ++o) write(dir + "/out" + std::to_string(inputs.size() + o) + ".bin", want[o].data);
}

int count(const std::string& s, const std::string& what) {
    int n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
    return n;
}

}  // namespace

class TestGpuLower : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        if (!test::openClAvailable()) QSKIP("no OpenCL device (install pocl-opencl-icd: scripts/setup)");
    }

    // TVM's CUDA record of conv2d_layer: replays, lowers to one kernel of 28 blocks x 64 threads with
    // two shared tiles, and computes on PoCL what the interpreter computes.
    void testConv2dLayerCudaRecord() {
        auto dag = conv2dLayer(1, 7, 7, 512, 512, 3, 1, 1);
        const json steps = conv2dRecordSteps();
        QVERIFY(steps.is_array() && steps.size() == 37);
        const State s = gpuState(*dag, steps);
        const lower::GpuLoweredFunc f = lower::lowerStateGpu(*dag, s, "conv2d_layer");
        QCOMPARE(int(f.kernels.size()), 1);
        const lower::GpuKernel& k = f.kernels[0];
        QCOMPARE(k.grid, (std::array<int64_t, 3>{28, 1, 1}));
        QCOMPARE(k.block, (std::array<int64_t, 3>{64, 1, 1}));
        QCOMPARE(int(f.workspaces.size()), 0);
        QCOMPARE(k.params, (std::vector<int>{0, 1, 2, 3}));  // data kernel bias T_relu
        const std::string ir = f.print();
        // pad_temp.shared (4 x 9 x 3 = 108... as bound inference gives) and kernel.shared tiles.
        QVERIFY2(ir.find("allocate pad_temp.shared[") != std::string::npos, ir.c_str());
        QVERIFY2(ir.find("allocate kernel.shared[") != std::string::npos, ir.c_str());
        QVERIFY2(ir.find("], shared") != std::string::npos, ir.c_str());
        QVERIFY2(ir.find("], local") != std::string::npos, ir.c_str());  // conv2d_nchw under threadIdx
        QCOMPARE(count(ir, "barrier"), 2);
        QVERIFY(k.sharedBytes > 0 && k.sharedBytes <= 48 * 1024);

        const codegen::GpuModule cl = codegen::buildGpuModule(*dag, s, codegen::GpuLanguage::OpenCL, "conv2d_layer");
        QCOMPARE(count(cl.source, "barrier(CLK_LOCAL_MEM_FENCE);"), 2);
        QCOMPARE(count(cl.source, "__kernel void "), 1);
        const QString diff = test::runAndCompare(*dag, cl, 3);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));

        const codegen::GpuModule cu = codegen::buildGpuModule(*dag, s, codegen::GpuLanguage::CUDA, "conv2d_layer");
        QCOMPARE(count(cu.source, "extern \"C\" __global__ void __launch_bounds__(64) conv2d_layer_kernel0("), 1);
        QCOMPARE(count(cu.source, "__syncthreads();"), 2);
        QCOMPARE(count(cu.source, "__shared__ __align__(16) float "), 2);
        QVERIFY(cu.source.find("(int)blockIdx.x") != std::string::npos);
        QVERIFY(cu.source.find("(int)threadIdx.x") != std::string::npos);
        QVERIFY(cu.source.find("#pragma unroll") != std::string::npos);  // auto_unroll_max_step$512
        QVERIFY(cu.source.find("#include") == std::string::npos);
        QCOMPARE(cu.launches, cl.launches);
        exportCuda(*dag, cu, "conv2d_layer_record", 3);
        // The wire form round-trips.
        QCOMPARE(codegen::gpuModuleFromJson(codegen::toJson(cu)), cu);
    }

    void testMatmulStates_data() {
        QTest::addColumn<std::vector<int64_t>>("mnk");
        QTest::addColumn<std::vector<int64_t>>("tiles");  // i[4], j[4], k[2], vec, unroll
        QTest::addColumn<int>("vthreads");
        QTest::addRow("64x48x40 vthread 2, vec 4") << std::vector<int64_t>{64, 48, 40}
                                                  << std::vector<int64_t>{2, 4, 2, 1, 1, 8, 2, 1, 4, 2, 4, 16} << 2;
        QTest::addRow("64x64x32 vthread 4 (2x2), vec 2, no unroll")
            << std::vector<int64_t>{64, 64, 32} << std::vector<int64_t>{2, 4, 1, 2, 2, 4, 2, 1, 8, 1, 2, 0} << 4;
        QTest::addRow("60x44x36 non-dividing tiles, vec 4") << std::vector<int64_t>{60, 44, 36}
                                                           << std::vector<int64_t>{1, 8, 2, 1, 2, 4, 1, 1, 4, 2, 4, 64} << 2;
        QTest::addRow("32x32x16 vec 3 (fetch not divisible)")
            << std::vector<int64_t>{32, 32, 16} << std::vector<int64_t>{1, 4, 2, 1, 1, 8, 1, 1, 2, 3, 3, 0} << 1;
        // The tiles cover the whole matrix: blockIdx.x has extent 1 (a launch of one block), right
        // above the vthread loop (TVM keeps the loop: thread_extent 1).
        QTest::addRow("16x16x16 one block, vthread 4") << std::vector<int64_t>{16, 16, 16}
                                                      << std::vector<int64_t>{2, 4, 2, 1, 2, 4, 2, 1, 4, 2, 2, 0} << 4;
    }
    // Hand-made Ansor-style GPU states of a matmul, several tilings: lower, run on PoCL, compare.
    void testMatmulStates() {
        QFETCH(std::vector<int64_t>, mnk);
        QFETCH(std::vector<int64_t>, tiles);
        QFETCH(int, vthreads);
        const auto& t = tiles;
        auto dag = matmul(mnk[0], mnk[1], mnk[2]);
        const State s = gpuState(*dag, matmulSteps(mnk[0], mnk[1], mnk[2], {t[0], t[1], t[2], t[3]},
                                                   {t[4], t[5], t[6], t[7]}, {t[8], t[9]}, t[10], int(t[11])));
        const lower::GpuLoweredFunc f = lower::lowerStateGpu(*dag, s, "matmul");
        QCOMPARE(int(f.kernels.size()), 1);
        QCOMPARE(f.kernels[0].block[0], t[1] * t[5]);
        const auto blocks = [](int64_t extent, int64_t tile) { return (extent + tile - 1) / tile; };
        QCOMPARE(f.kernels[0].grid[0], blocks(mnk[0], t[0] * t[1] * t[2] * t[3]) * blocks(mnk[1], t[4] * t[5] * t[6] * t[7]));
        const std::string ir = f.print();
        dump(ir);
        // Virtual threads are injected (no vthread loop is left): C.local has one copy per vthread.
        QCOMPARE(count(ir, "\"vthread\""), 0);
        if (vthreads > 1)
            QVERIFY2(ir.find("allocate C.local[float32[" + std::to_string(vthreads) + ", ") != std::string::npos, ir.c_str());
        QCOMPARE(count(ir, "barrier"), 2);
        const codegen::GpuModule cl = codegen::makeGpuModule(f, codegen::GpuLanguage::OpenCL);
        exportCuda(*dag, codegen::makeGpuModule(f, codegen::GpuLanguage::CUDA),
                   "matmul_" + std::string(QTest::currentDataTag()).substr(0, 8), 11);
        const QString diff = test::runAndCompare(*dag, cl, 11);
        QVERIFY2(diff.isEmpty(), qPrintable(diff + QStringLiteral("\n") + QString::fromStdString(ir)));
    }

    // Barriers sit where TVM's ThreadSync puts them: in the k.0 loop, first before the cooperative
    // writes (the previous iteration's reads), then between the writes and the reads.
    void testBarrierPlacement() {
        auto dag = matmul(64, 48, 40);
        const State s = gpuState(*dag, matmulSteps(64, 48, 40, {2, 4, 2, 1}, {1, 8, 2, 1}, {4, 2}, 4, 0));
        const std::string ir = lower::lowerStateGpu(*dag, s, "matmul").print();
        const size_t loop = ir.find("for (k.0, 0, 5)");
        QVERIFY2(loop != std::string::npos, ir.c_str());
        const size_t b1 = ir.find("barrier", loop), aW = ir.find("A.shared[", b1), bW = ir.find("B.shared[", b1);
        const size_t b2 = ir.find("barrier", b1 + 1), read = ir.find("(A.shared[", loop);
        QVERIFY2(ir.find("allocate B.shared[", loop) < b1 && b1 < aW && aW < bW && bW < b2 && b2 < read, ir.c_str());
        QVERIFY(read != std::string::npos);
        QCOMPARE(count(ir, "barrier"), 2);
        // The vthread loop was pushed down to the stores that use it: the fetch runs once per k.0
        // iteration, the update of C.local twice (vthread 2), unrolled.
        QCOMPARE(count(ir, "\"vthread\""), 0);
        QCOMPARE(count(ir, "A.shared[floordiv("), 1);
        QCOMPARE(count(ir, "C.local[0, "), count(ir, "C.local[1, "));
    }

    // Padded convs from the same record structure, other sizes and tilings: pad_temp inlined into the
    // shared fetch, or computed at the root by its own kernel (a global workspace), and vectorized
    // fetches of 2 and 4.
    void testConvStates_data() {
        QTest::addColumn<std::vector<int64_t>>("shape");  // h, co, ci
        QTest::addColumn<std::vector<int64_t>>("lengths");  // ff[4] yy[4] xx[4] rc[2] rx[2] vecPad vecKernel
        QTest::addColumn<bool>("padAtRoot");
        QTest::addColumn<int>("kernels");
        QTest::addColumn<int>("vstores");
        QTest::addRow("8x8 16->32, vthread 4, vec 2/4")
            << std::vector<int64_t>{8, 32, 16} << std::vector<int64_t>{2, 4, 2, 1, 1, 2, 2, 1, 2, 2, 1, 1, 4, 2, 3, 1, 2, 4}
            << false << 1 << 2;
        QTest::addRow("7x7 8->24, non-dividing, vec 4") << std::vector<int64_t>{7, 24, 8}
                                                       << std::vector<int64_t>{1, 8, 1, 1, 1, 1, 7, 1, 1, 7, 1, 1, 2, 2, 1, 3, 4, 4}
                                                       << false << 1 << 0;
        QTest::addRow("8x8 16->16, pad_temp at root (2 kernels)")
            << std::vector<int64_t>{8, 16, 16} << std::vector<int64_t>{1, 4, 2, 1, 2, 2, 1, 1, 1, 4, 2, 1, 4, 1, 3, 1, 1, 2}
            << true << 2 << 0;
    }
    void testConvStates() {
        QFETCH(std::vector<int64_t>, shape);
        QFETCH(std::vector<int64_t>, lengths);
        QFETCH(bool, padAtRoot);
        QFETCH(int, kernels);
        QFETCH(int, vstores);
        auto dag = conv2dLayer(1, shape[0], shape[0], shape[1], shape[2], 3, 1, 1);
        json steps = conv2dRecordSteps();
        const auto& l = lengths;
        // SP steps 1..7 of the record: n, ff, yy, xx, rc, ry, rx.
        steps[1][3] = 1;
        steps[2][3] = shape[1];
        steps[2][4] = {l[0], l[1], l[2], l[3]};
        steps[3][3] = shape[0];
        steps[3][4] = {l[4], l[5], l[6], l[7]};
        steps[4][3] = shape[0];
        steps[4][4] = {l[8], l[9], l[10], l[11]};
        steps[5][3] = shape[2];
        steps[5][4] = {l[12], l[13]};
        steps[6][4] = {1, 1};
        steps[7][4] = {l[14], l[15]};
        for (auto& st : steps) {
            if (st[0] == "SP" && st[1] == 4) st[4] = {l[17]};  // kernel.shared fetch
            if (st[0] == "SP" && st[1] == 2) st[4] = {l[16]};  // pad_temp.shared fetch
        }
        if (padAtRoot) {
            json out = json::array();
            for (auto& st : steps)
                if (!(st[0] == "CI" && st[1] == 1)) out.push_back(st);
            json pr = out.back();
            out.erase(out.end() - 1);
            out.push_back({"FU", 1, {0, 1, 2, 3}});
            out.push_back({"SP", 1, 0, shape[2] * (shape[0] + 2) * (shape[0] + 2), {64}, 1});
            out.push_back({"AN", 1, 0, 5});
            out.push_back({"AN", 1, 1, 6});
            out.push_back(pr);
            steps = out;
        }
        const State s = gpuState(*dag, steps);
        const lower::GpuLoweredFunc f = lower::lowerStateGpu(*dag, s, "conv");
        QCOMPARE(int(f.kernels.size()), kernels);
        QCOMPARE(int(f.workspaces.size()), padAtRoot ? 1 : 0);
        const codegen::GpuModule cl = codegen::makeGpuModule(f, codegen::GpuLanguage::OpenCL);
        dump(f.print() + cl.source);
        exportCuda(*dag, codegen::makeGpuModule(f, codegen::GpuLanguage::CUDA),
                   "conv_" + std::to_string(kernels) + "_" + std::to_string(shape[0]) + "_" + std::to_string(shape[1]), 5);
        // Vector stores into the shared tiles where the fetch divides (a guard keeps it scalar).
        QCOMPARE(count(cl.source, "vstore"), vstores);
        const QString diff = test::runAndCompare(*dag, cl, 5);
        QVERIFY2(diff.isEmpty(), qPrintable(diff + QStringLiteral("\n") + QString::fromStdString(f.print())));
    }

    // CUDA: aligned vectorized copies become float4 moves; others stay scalar; no headers.
    void testCudaConstructs() {
        auto dag = matmul(64, 48, 40);
        const State s = gpuState(*dag, matmulSteps(64, 48, 40, {2, 4, 2, 1}, {1, 8, 2, 1}, {4, 2}, 4, 16));
        const codegen::GpuModule cu = codegen::buildGpuModule(*dag, s, codegen::GpuLanguage::CUDA, "mm");
        const std::string& src = cu.source;
        dump(src);
        QVERIFY2(src.find("*(float4*)(A_shared + ") != std::string::npos, src.c_str());
        QVERIFY2(src.find("*(float4*)(B_shared + ") != std::string::npos, src.c_str());
        QCOMPARE(count(src, "__syncthreads();"), 2);
        QVERIFY(src.find("float C_local[") != std::string::npos);
        QCOMPARE(int(cu.launches.size()), 1);
        QCOMPARE(cu.launches[0].block, (std::array<int64_t, 3>{32, 1, 1}));
        QCOMPARE(cu.launches[0].grid, (std::array<int64_t, 3>{12, 1, 1}));
        QCOMPARE(cu.launches[0].args, (std::vector<int>{0, 1, 2}));
        QCOMPARE(cu.launches[0].sharedBytes, int64_t((16 * 8 + 8 * 16) * 4));
        const codegen::GpuModule cl = codegen::buildGpuModule(*dag, s, codegen::GpuLanguage::OpenCL, "mm");
        QVERIFY(cl.source.find("vstore4(vload4(0, A + ") != std::string::npos);
        QVERIFY(cl.source.find("__local float A_shared[") != std::string::npos);
    }

    // Errors: a root stage without thread bindings (TVM: "Did you forget to bind?"); the CPU
    // lowering still refuses GPU bindings.
    void testErrors() {
        auto dag = conv2dLayer(1, 8, 8, 16, 16, 3, 1, 1);
        json steps = json::array();
        for (auto& st : conv2dRecordSteps())
            if (!(st[0] == "CI" && st[1] == 1)) steps.push_back(st);
        // Any lengths that divide: only the structure matters.
        steps[2][4] = {1, 4, 2, 1};
        steps[3][4] = {1, 2, 2, 1};
        steps[4][4] = {1, 2, 2, 1};
        steps[5][4] = {2, 2};
        const State s = gpuState(*dag, steps);
        const QString e = test::userError([&] { lower::lowerStateGpu(*dag, s); });
        QVERIFY2(e.contains(QStringLiteral("Did you forget to bind?")) && e.contains(QStringLiteral("pad_temp")), qPrintable(e));
        const QString cpu = test::userError([&] { lower::lowerState(*dag, s); });
        QVERIFY2(cpu.contains(QStringLiteral("which the CPU lowering does not support")), qPrintable(cpu));

        // A reduce loop bound to a vthread (or blockIdx) would race: refused.
        auto mm = matmul(16, 16, 64);
        const State r = gpuState(*mm, json::parse(R"([["SP", 2, 2, 64, [32], 1], ["FU", 2, [0, 1]],
                                                        ["AN", 2, 0, 5], ["AN", 2, 1, 4], ["AN", 2, 2, 6]])"));
        const QString ar = test::userError([&] { lower::lowerStateGpu(*mm, r); });
        QVERIFY2(ar.contains(QStringLiteral("only threadIdx bindings of a reduction")), qPrintable(ar));

        // A cross-thread reduction over 32 threads inside a kernel of 64 threads: the other 32
        // would skip its barriers (the loop runs guarded), so it is refused.
        auto rows = te::placeholder({16, 256}, "A");
        auto kk = te::reduceAxis(256, "k");
        auto sum = te::compute({16}, {"i"}, [&](const std::vector<te::Var>& v) { return te::sum(rows(v[0], kk.var), {kk}); }, "B");
        auto half = te::compute({16}, {"i"}, [&](const std::vector<te::Var>& v) { return sum(v[0]) * te::floatImm(0.5); }, "C");
        auto rm = std::make_shared<te::ComputeDAG>(std::vector<Tensor>{rows, half});
        const State narrow = gpuState(*rm, json::parse(R"([["SP", 1, 1, 256, [32], 1], ["AN", 1, 2, 6],
            ["SP", 2, 0, 16, [64], 1], ["AN", 2, 0, 5], ["AN", 2, 1, 6], ["CA", 1, 2, 0]])"));
        const QString ne = test::userError([&] { lower::lowerStateGpu(*rm, narrow); });
        QVERIFY2(ne.contains(QStringLiteral("the others would never reach the barrier")), qPrintable(ne));
    }

    // Cross-thread reductions (Ansor's CrossThreadReduction sketch; TVM LowerThreadAllreduce): the
    // reduce loop split by the thread count, its inner part bound to threadIdx.x. A row sum (rows on
    // blockIdx.x), a scalar sum (one block: the thread loop is the kernel's outermost) and a matmul
    // (blockIdx over i*j), with power-of-two and other thread counts and reduce lengths that the
    // split does not divide. Each lowers to a tree in shared memory with log2 barrier steps and runs
    // on PoCL equal to the interpreter.
    void testCrossThreadReduction_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int64_t>("length");   // reduce length
        QTest::addColumn<int64_t>("threads");  // threadIdx.x extent
        QTest::addColumn<int>("barriers");     // 1 + ceil(log2(threads))
        for (const char* kind : {"rows", "scalar"}) {
            for (auto [len, threads, barriers] : {std::tuple<int64_t, int64_t, int>{300, 32, 6}, {256, 64, 7}, {300, 100, 8},
                                                  {70, 100, 8}}) {
                QTest::addRow("%s %lld by %lld threads", kind, (long long)len, (long long)threads)
                    << QString::fromLatin1(kind) << len << threads << barriers;
            }
        }
        QTest::addRow("matmul 12x10x96 by 32 threads") << QStringLiteral("matmul") << int64_t(96) << int64_t(32) << 6;
    }
    void testCrossThreadReduction() {
        QFETCH(QString, kind);
        QFETCH(int64_t, length);
        QFETCH(int64_t, threads);
        QFETCH(int, barriers);
        std::shared_ptr<const te::ComputeDAG> dag;
        json steps;
        const std::string t = std::to_string(threads), len = std::to_string(length);
        if (kind == QStringLiteral("matmul")) {
            dag = matmul(12, 10, length);
            steps = json::parse(R"([["SP", 2, 2, )" + len + ", [" + t + R"(], 1], ["FU", 2, [0, 1]],
                                    ["AN", 2, 0, 5], ["AN", 2, 2, 6]])");
        } else {
            const bool rows = kind == QStringLiteral("rows");
            auto a = rows ? te::placeholder({7, length}, "A") : te::placeholder({length}, "A");
            auto k = te::reduceAxis(length, "k");
            auto b = te::compute(rows ? std::vector<int64_t>{7} : std::vector<int64_t>{}, rows ? std::vector<std::string>{"i"} : std::vector<std::string>{},
                                 [&](const std::vector<te::Var>& v) { return te::sum(rows ? a(v[0], k.var) : a(k.var), {k}); }, "B");
            dag = std::make_shared<te::ComputeDAG>(std::vector<Tensor>{a, b});
            steps = rows ? json::parse(R"([["SP", 1, 1, )" + len + ", [" + t + R"(], 1], ["AN", 1, 0, 5], ["AN", 1, 2, 6]])")
                         : json::parse(R"([["SP", 1, 0, )" + len + ", [" + t + R"(], 1], ["AN", 1, 1, 6]])");
        }
        const State s = gpuState(*dag, steps);
        const lower::GpuLoweredFunc f = lower::lowerStateGpu(*dag, s, "red");
        QCOMPARE(int(f.kernels.size()), 1);
        const lower::GpuKernel& k = f.kernels[0];
        QCOMPARE(k.block, (std::array<int64_t, 3>{threads, 1, 1}));
        QCOMPARE(k.grid[0], kind == QStringLiteral("rows") ? 7 : kind == QStringLiteral("matmul") ? 120 : 1);
        QCOMPARE(k.sharedBytes, threads * 4);
        const std::string ir = f.print();
        dump(ir);
        QCOMPARE(count(ir, "barrier"), barriers);
        const codegen::GpuModule cl = codegen::makeGpuModule(f, codegen::GpuLanguage::OpenCL);
        dump(cl.source);
        QCOMPARE(count(cl.source, "barrier(CLK_LOCAL_MEM_FENCE);"), barriers);
        const codegen::GpuModule cu = codegen::makeGpuModule(f, codegen::GpuLanguage::CUDA);
        QCOMPARE(count(cu.source, "__syncthreads();"), barriers);
        exportCuda(*dag, cu, "allreduce_" + kind.toStdString() + "_" + len + "_" + t, 7);
        const QString diff = test::runAndCompare(*dag, cl, 7);
        QVERIFY2(diff.isEmpty(), qPrintable(diff + QStringLiteral("\n") + QString::fromStdString(ir)));
    }
};

QTEST_APPLESS_MAIN(TestGpuLower)
#include "tst_gpu_lower.moc"
