// SPDX-License-Identifier: Apache-2.0
// The learned cost model (engine/cost_model): per-store features of hand-built loop nests against
// values worked out by hand from TVM's definitions (src/auto_scheduler/feature.cc), XGBoost learning
// a known ordering of synthetic states, and held-out ranking accuracy on TVM's own resnet-18 log.
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/cost_model/feature.h"
#include "engine/cost_model/xgb_model.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/loop_ir.h"
#include "engine/lower/lower_state.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/search/search_utils.h"
#include "tests/engine/test_util.h"

using namespace tb;
using te::Expr;
using te::Var;

namespace {

// ---- feature slots ---------------------------------------------------------------------------

// Slot numbers of the 164-float row (TVM GetPerStoreFeatureName).
enum : int {
    kFloatAddSub = 1, kFloatMul = 2, kFloatCmp = 4, kFloatMath = 5, kIntAddSub = 8, kIntMul = 9, kIntCmp = 11,
    kBoolOp = 14, kSelectOp = 15,
    kVecNum = 16, kUnrollNum = 27, kParNum = 38,  // each: number, product, length, 8 position flags
    kGpuLens = 50,                                // 7 slots after is_gpu (49)
    kBuf = 57,                   // + 18 * buffer rank
    kArith = 147, kAllocSize = 157, kAllocProd = 158, kAllocOuter = 159, kAllocInner = 160,
    kOuterProd = 161, kNumLoops = 162, kAutoUnroll = 163,
    kBlock = 164,  // group 6 (ours): 12 slots, see Expect::block
};
// Annotation positions (TVM AnnotationPosType).
constexpr int kNone = 0, kInnerSpatial = 1, kOuterSpatial = 3, kInnerReduce = 4, kOuterReduce = 6;
// Offsets inside a buffer's 18 slots.
constexpr int kAccRead = 0, kAccWrite = 1, kAccReadWrite = 2, kBytes = 3, kUniqueBytes = 4, kLines = 5, kUniqueLines = 6,
              kReuseLoop = 7, kReuseSerial = 8, kNoReuse = 9, kReuseDisIter = 10, kReuseDisBytes = 11, kReuseCt = 12,
              kBytesPerReuse = 13, kUniqueBytesPerReuse = 14, kLinesPerReuse = 15, kUniqueLinesPerReuse = 16, kStride = 17;

double log2p(double x) { return x < 0 ? -std::log2(-x + 1) : std::log2(x + 1); }

// The expected row of one store: every slot not set here must be 0.
struct Expect {
    // A CPU row always holds is_gpu = 0 and the seven thread lengths = 1 (log2p(1) = 1).
    explicit Expect(QString storeName) : name(std::move(storeName)) {
        for (int g = 0; g < 7; ++g) set(kGpuLens + g, 1.0, "GPU thread length");
    }
    std::map<int, double> slots;  // slot -> expected value as stored (log2p applied where TVM applies it)
    QString name;
    // A numeric value (stored as log2p(v)).
    void num(int slot, double v, const char* what) { set(slot, log2p(v), what); }
    // A one-hot flag (stored as is).
    void flag(int slot, const char* what) { set(slot, 1.0, what); }
    void set(int slot, double v, const char* what) {
        QVERIFY2(!slots.count(slot), what);
        slots[slot] = v;
        names[slot] = QString::fromLatin1(what);
    }
    std::map<int, QString> names;

    // A vectorize / unroll / parallel group at `base` (kVecNum, kUnrollNum, kParNum): number of such
    // loops, product and length of their extents (none when count is 0), position one-hot.
    void annotation(int base, double count, double prod, double len, int pos) {
        if (count > 0) {
            num(base, count, "annotated loops");
            num(base + 1, prod, "annotated extent product");
            num(base + 2, len, "innermost annotated extent");
        }
        flag(base + 3 + pos, "annotation position");
    }
    // Group 5: product of the enclosing loop extents, their number, auto_unroll_max_step.
    void outerScope(double prod, double loops, double autoUnroll) {
        num(kOuterProd, prod, "outer_prod");
        num(kNumLoops, loops, "num_loops");
        if (autoUnroll > 0) num(kAutoUnroll, autoUnroll, "auto_unroll_max_step");
    }
    // Group 6 (ours, feature.h), worked out by hand from the block codegen emits: its iterations,
    // vector lanes, accumulator vectors, vector loads per vector FMA, FMA-pipe efficiency, hot-loop
    // extent, accumulator run (iterations of the serial loops from the hot loop outwards that leave
    // the stored element in place), loaded buffers read contiguously / broadcast / strided along the
    // lanes, contiguous store, estimated cycles on the busiest core.
    void block(double size, double lanes, double accumulators, double loadsPerFma, double efficiency, double hot, double run,
               double contiguous, double broadcast, double gathers, bool storeContiguous, double cycles) {
        num(kBlock, size, "block size");
        num(kBlock + 1, lanes, "vector lanes");
        num(kBlock + 2, accumulators, "accumulator vectors");
        set(kBlock + 3, loadsPerFma, "loads per FMA");
        set(kBlock + 4, efficiency, "FMA-pipe efficiency");
        num(kBlock + 5, hot, "hot-loop extent");
        num(kBlock + 6, run, "accumulator run");
        num(kBlock + 7, contiguous, "contiguous loads");
        num(kBlock + 8, broadcast, "broadcast loads");
        num(kBlock + 9, gathers, "strided loads");
        set(kBlock + 10, storeContiguous ? 1 : 0, "contiguous store");
        num(kBlock + 11, cycles, "estimated cycles");
    }
    // Buffer `rank` (after sorting by lines, bytes) with its access type and the 4 size values.
    void buffer(int rank, int acc, double bytes, double unique, double lines, double uniqueLines, double stride) {
        const int b = kBuf + 18 * rank;
        flag(b + acc, "access type");
        num(b + kBytes, bytes, "bytes");
        num(b + kUniqueBytes, unique, "unique_bytes");
        num(b + kLines, lines, "lines");
        num(b + kUniqueLines, uniqueLines, "unique_lines");
        if (stride != 0) num(b + kStride, stride, "stride");
    }
    // Reuse of buffer `rank`: type, distance in iterations and bytes, count; the 4 per-reuse ratios.
    void reuse(int rank, int type, double disIter, double disBytes, double count, double bytes, double unique, double lines,
               double uniqueLines) {
        const int b = kBuf + 18 * rank;
        flag(b + type, "reuse type");
        if (disIter != 0) num(b + kReuseDisIter, disIter, "reuse_dis_iter");
        if (disBytes != 0) num(b + kReuseDisBytes, disBytes, "reuse_dis_bytes");
        if (count != 0) num(b + kReuseCt, count, "reuse_ct");
        const double d = count > 0.5 ? count : 0.5;  // TVM: x 2 when there is no reuse
        num(b + kBytesPerReuse, bytes / d, "bytes_d_reuse_ct");
        num(b + kUniqueBytesPerReuse, unique / d, "unique_bytes_d_reuse_ct");
        num(b + kLinesPerReuse, lines / d, "lines_d_reuse_ct");
        num(b + kUniqueLinesPerReuse, uniqueLines / d, "unique_lines_d_reuse_ct");
    }
    // Arithmetic intensity: `ops[l]` float ops and `bytes[l]` touched bytes of the loops from the
    // innermost outwards (worked out by hand); TVM samples ops/bytes at 10 evenly spaced op counts
    // with linear interpolation between levels.
    void arith(const std::vector<double>& ops, const std::vector<double>& bytes) {
        size_t pt = 0;
        for (int s = 0; s < 10; ++s) {
            double x = ops.back() * (s + 1) / 10.0;
            while (ops[pt] < x - 1e-4) ++pt;
            double y = ops[pt] / bytes[pt];
            if (pt > 0) {
                double y0 = ops[pt - 1] / bytes[pt - 1];
                y = y0 + (y - y0) / (ops[pt] - ops[pt - 1]) * (x - ops[pt - 1]);
            }
            num(kArith + s, y, "arith_intensity_curve");
        }
    }
};

// Every slot of `row` equals the expectation (unlisted slots are 0).
void checkRow(const std::vector<float>& row, const Expect& e) {
    QCOMPARE(int(row.size()), cost_model::kFeatureLength);
    for (int i = 0; i < cost_model::kFeatureLength; ++i) {
        auto it = e.slots.find(i);
        const double want = it == e.slots.end() ? 0.0 : it->second;
        const double got = row[size_t(i)];
        const QString what = it == e.slots.end() ? QStringLiteral("(unlisted)") : e.names.at(i);
        QVERIFY2(std::fabs(got - want) <= 1e-4 * std::max(1.0, std::fabs(want)),
                 qPrintable(QStringLiteral("%1: slot %2 %3 = %4, expected %5").arg(e.name).arg(i).arg(what).arg(got).arg(want)));
    }
}

lower::Stmt loop(const Var& v, int64_t extent, lower::ForKind kind, lower::Stmt body) {
    return lower::makeFor(v, extent, kind, std::move(body));
}

// ---- states of a matmul --------------------------------------------------------------------

// C[i, j] = sum_k A[i, k] * B[k, j], n x n x n.
std::shared_ptr<const te::ComputeDAG> matmul(int64_t n) {
    auto a = te::placeholder({n, n}, "A"), b = te::placeholder({n, n}, "B");
    auto k = te::reduceAxis(n, "k");
    auto c = te::compute({n, n}, {"i", "j"}, [&](const std::vector<Var>& v) { return te::sum(a(v[0], k.var) * b(k.var, v[1]), {k}); },
                         "C");
    return std::make_shared<te::ComputeDAG>(std::vector<te::Tensor>{a, b, c});
}

search::SearchTask makeTask(std::shared_ptr<const te::ComputeDAG> dag, std::string key) {
    search::SearchTask t;
    t.dag = std::move(dag);
    t.workloadKey = std::move(key);
    return t;
}

// TVM's own tuning log of resnet-18 (x86, 2021), and the zoo's resnet-18 tasks keyed by the legacy
// workload keys its records carry.
const char* const kTvmResnet18Log = "../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json";
std::map<std::string, search::SearchTask> resnet18TasksByLegacyKey() {
    std::map<std::string, search::SearchTask> tasks;
    for (const auto& e : graph::extractTasks(graph::makeNetwork("resnet-18", 1, "NHWC")))
        tasks.emplace(graph::legacyTvmWorkloadKey(e.dag), makeTask(std::make_shared<te::ComputeDAG>(e.dag), e.workloadKey));
    return tasks;
}

// i split by ti, j by tj, loops (i.0, j.0, k, i.1, j.1), j.1 vectorized.
State tiledMatmul(const te::ComputeDAG& dag, int64_t n, int64_t ti, int64_t tj) {
    nlohmann::json steps = nlohmann::json::array({
        {"SP", 2, 0, n, {ti}, 1},
        {"SP", 2, 2, n, {tj}, 1},
        {"RE", 2, {0, 2, 4, 1, 3}},
        {"AN", 2, 4, 2},
    });
    return inferBound(replaySteps(dag, stepsFromJson(steps)));
}

lower::StateLowerer cpuLowerer() {
    return [](const search::SearchTask& t, const State& s) { return lower::lowerState(*t.dag, s); };
}

// XGBoost on one thread: its OpenMP workers spin, and on a loaded machine (this one is shared) two
// of them train several times slower than one (26 s against 4 s here); the trees are the same.
cost_model::XGBModelParams oneThread() {
    cost_model::XGBModelParams p;
    p.numThreads = 1;
    return p;
}

// Pairs of states with different costs (those a pairwise accuracy counts).
long long distinctPairs(const std::vector<double>& costs) {
    long long n = 0;
    for (size_t i = 0; i < costs.size(); ++i)
        for (size_t j = i + 1; j < costs.size(); ++j) n += costs[i] != costs[j];
    return n;
}

}  // namespace

class TestCostModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A dense tile: parallel i (8) / k (4) / vectorized j (16), C[i, j] = C[i, j] + A[i, k] * B[j, k]
    // (B transposed, so its stride along j is 4 elements).
    void testFeaturesDenseTile() {
        auto A = lower::makeBuffer("A", {8, 4}), B = lower::makeBuffer("B", {16, 4}), C = lower::makeBuffer("C", {8, 16});
        Var i("i"), k("k"), j("j");
        Expr update = lower::bufferLoad(C, {i, j}) + lower::bufferLoad(A, {i, k}) * lower::bufferLoad(B, {j, k});
        lower::LoweredFunc f;
        f.args = {A, B, C};
        f.body = loop(i, 8, lower::ForKind::Parallel,
                      loop(k, 4, lower::ForKind::Serial, loop(j, 16, lower::ForKind::Vectorized, lower::makeStore(C, {i, j}, update))));
        auto rows = cost_model::extractPerStoreFeatures(f, 64);
        QCOMPARE(int(rows.size()), 1);

        Expect e(QStringLiteral("dense update"));
        // Group 1: one add and one multiply per iteration of 8 x 4 x 16 = 512.
        e.num(kFloatAddSub, 512, "float_addsub");
        e.num(kFloatMul, 512, "float_mul");
        e.annotation(kVecNum, 1, 16, 16, kInnerSpatial);  // j: innermost loop indexing C
        e.annotation(kUnrollNum, 0, 0, 0, kNone);
        e.annotation(kParNum, 1, 8, 8, kOuterSpatial);    // i: outermost loop indexing C
        // Touched elements per level (innermost first): j: C 16, A 1, B 16 -> 132 bytes;
        // k: C 16, A 4, B 64 -> 336 bytes; i: C 128, A 32, B 64 -> 896 bytes.
        // B: stride 4 along j -> lines 512 x min(1, 16/64) = 128; region [16, 4] is all of B, its
        // innermost whole dimension is 4 elements (16 bytes) -> unique lines 256 / 16 = 16. Every
        // loop but i moves it: reuse at i, after 16 x 4 iterations and 336 bytes, 8 times.
        e.buffer(0, kAccRead, 2048, 256, 128, 16, 4);
        e.reuse(0, kReuseLoop, 64, 336, 8, 2048, 256, 128, 16);
        // C (read and written): stride 1 -> 512 x 4/64 = 32 lines; 8 x 16 = all of C, 64-byte rows
        // -> 512 / 64 = 8 unique lines; k does not move it: reused 4 times after 16 iterations / 132 bytes.
        e.buffer(1, kAccReadWrite, 2048, 512, 32, 8, 1);
        e.reuse(1, kReuseLoop, 16, 132, 4, 2048, 512, 32, 8);
        // A: j does not move it (reduce ratio 16), k with stride 1 -> 512 / 16 x 4/64 = 2 lines;
        // the innermost loop does not move it -> stride 0; rows of 16 bytes -> 128 / 16 = 8 unique
        // lines; reused at the innermost loop (16 times, distance 1 iteration, one element of each
        // of the 3 buffers = 12 bytes).
        e.buffer(2, kAccRead, 2048, 128, 2, 8, 0);
        e.reuse(2, kReuseLoop, 1, 12, 16, 2048, 128, 2, 8);
        e.arith({2.0 * 16, 2.0 * 16 * 4, 2.0 * 16 * 4 * 8}, {132, 336, 896});
        e.outerScope(512, 3, 0);
        // Group 6: the block is j (16 lanes = 2 vector FMAs); the hot loop k leaves C[i, j] in place
        // (2 accumulator vectors, loaded and stored once per run of 4 blocks; i is parallel). Loads
        // per block: A broadcast (1), B strided along j (16 scalar loads), C 2 / 4 -> 17.5 loads over
        // 2 load ports = 8.75 cycles against 1 for the FMAs; 8 x 4 blocks on one core.
        // Cache refills: the 896 bytes fit L1, so each level loads them once: 896 / 64 + 896 / 32.
        e.block(16, 16, 2, 17.5 / 2, 1 / 8.75, 4, 4, 0, 1, 1, true, 8.75 * 32 + 896 * 3.0 / 64);
        checkRow(rows[0], e);
    }

    // The register block of a 1x1 convolution, O[x, f] += I[x, rc] * W[rc, f], in the two shapes
    // the search weighs on mobilenet's 14x14x512 pointwise task: 14 rows x 16 lanes (one broadcast
    // of I per 16-lane FMA) and 7 rows x 32 lanes (one broadcast per two FMAs). Both are 224
    // multiply-adds kept in 14 accumulator vectors across rc (64 serial steps):
    //   for rc (64) { unrolled x (R) { vectorized f (F) { acc[x, f] += I[x, rc] * W[rc, f] } } }
    // On an 8-lane core (AVX2, Zen 4) each is 28 FMAs = 14 cycles on two pipes, and the loads (14 or
    // 7 broadcasts + 2 or 4 vectors of W) fit under them: both at full FMA rate. On a 16-lane core
    // (two 512-bit pipes, measure::fullRateFmaLanes) the FMAs take 7 cycles while 14 broadcasts + 1
    // vector of W take 7.5 on two load ports: 14x16 is load-bound, 7x32 is not. This is what the
    // tuner found on this project's Xeon VM (14x16 ran at 64% of the 1-thread peak in mobilenet).
    void testFmaLanesMakeBroadcastBlocksLoadBound() {
        auto block = [](int64_t rows, int64_t lanes, int fmaLanes) {
            auto I = lower::makeBuffer("I", {rows, 64}), W = lower::makeBuffer("W", {64, lanes});
            auto O = lower::makeBuffer("O", {rows, lanes}), acc = lower::makeBuffer("acc", {rows, lanes}, lower::BufferScope::Local);
            Var rc("rc"), x("x"), f("f"), x2("x2"), f2("f2");
            Expr upd = lower::bufferLoad(acc, {x, f}) + lower::bufferLoad(I, {x, rc}) * lower::bufferLoad(W, {rc, f});
            lower::Stmt update = loop(rc, 64, lower::ForKind::Serial,
                                      loop(x, rows, lower::ForKind::Unrolled,
                                           loop(f, lanes, lower::ForKind::Vectorized, lower::makeStore(acc, {x, f}, upd))));
            lower::Stmt out = loop(x2, rows, lower::ForKind::Serial,
                                   loop(f2, lanes, lower::ForKind::Vectorized, lower::makeStore(O, {x2, f2}, lower::bufferLoad(acc, {x2, f2}))));
            lower::LoweredFunc fn;
            fn.args = {I, W, O};
            fn.body = lower::makeAllocate(acc, lower::makeSeq({update, out}));
            const auto r = cost_model::extractPerStoreFeatures(fn, 64, nullptr, 1, fmaLanes);
            TB_CHECK(r.size() == 2) << "two stores expected";
            return r[0];
        };
        struct Case { int64_t rows, lanes; int fmaLanes; double fmas, loads; };
        // loads per block: broadcasts (rows) + vectors of W (lanes / fmaLanes) + the accumulators'
        // load once per run of 64 (fmas / 64); cycles = max(fmas / 2, loads / 2).
        for (const Case c : {Case{14, 16, 8, 28, 14 + 2 + 28.0 / 64}, Case{7, 32, 8, 28, 7 + 4 + 28.0 / 64},
                             Case{14, 16, 16, 14, 14 + 1 + 14.0 / 64}, Case{7, 32, 16, 14, 7 + 2 + 14.0 / 64}}) {
            const auto row = block(c.rows, c.lanes, c.fmaLanes);
            const std::string what = std::to_string(c.rows) + "x" + std::to_string(c.lanes) + " at " + std::to_string(c.fmaLanes) + " lanes";
            const double cycles = std::max(c.fmas / 2, c.loads / 2);
            QVERIFY2(std::abs(row[size_t(kBlock + 2)] - log2p(c.fmas)) < 1e-5, (what + ": accumulator vectors").c_str());
            QVERIFY2(std::abs(row[size_t(kBlock + 3)] - c.loads / c.fmas) < 1e-5, (what + ": loads per FMA").c_str());
            QVERIFY2(std::abs(row[size_t(kBlock + 4)] - c.fmas / 2 / cycles) < 1e-5, (what + ": FMA-pipe efficiency").c_str());
        }
        // The shapes tie at 8 lanes and separate at 16, in the efficiency and in the cycles.
        QCOMPARE(block(14, 16, 8)[size_t(kBlock + 4)], block(7, 32, 8)[size_t(kBlock + 4)]);
        QVERIFY(block(14, 16, 16)[size_t(kBlock + 4)] < 0.95f);
        QCOMPARE(block(7, 32, 16)[size_t(kBlock + 4)], 1.0f);
        // The default is the 8-lane core the features assumed before the width was a parameter.
        auto I = lower::makeBuffer("I", {4}), O = lower::makeBuffer("O", {4});
        Var i("i");
        lower::LoweredFunc g;
        g.args = {I, O};
        g.body = loop(i, 4, lower::ForKind::Serial, lower::makeStore(O, {i}, lower::bufferLoad(I, {i})));
        QCOMPARE(cost_model::extractPerStoreFeatures(g, 64), cost_model::extractPerStoreFeatures(g, 64, nullptr, 1, 8));
        QVERIFY_THROWS_EXCEPTION(std::exception, cost_model::extractPerStoreFeatures(g, 64, nullptr, 1, 0));
    }

    // A 1-D convolution tile with a local accumulator (stride-2 input, output interleaved):
    //   parallel o (2) { allocate acc[8] { pragma auto_unroll_max_step = 16 {
    //     for x1 (8):                     acc[x1] = 0
    //     for r (3) { unrolled x2 (8):    acc[x2] = acc[x2] + X[o*16 + x2*2 + r] * W[r] }
    //     vectorized x3 (8):              Y[x3*2 + o] = max(acc[x3], 0) } } }
    void testFeaturesConvTileWithAccumulator() {
        auto X = lower::makeBuffer("X", {33}), W = lower::makeBuffer("W", {3}), Y = lower::makeBuffer("Y", {16});
        auto acc = lower::makeBuffer("acc", {8}, lower::BufferScope::Local);
        Var o("o"), x1("x1"), r("r"), x2("x2"), x3("x3");
        lower::Stmt init = loop(x1, 8, lower::ForKind::Serial, lower::makeStore(acc, {x1}, te::floatImm(0.0)));
        Expr upd = lower::bufferLoad(acc, {x2}) + lower::bufferLoad(X, {o * 16 + x2 * 2 + r}) * lower::bufferLoad(W, {r});
        lower::Stmt update = loop(r, 3, lower::ForKind::Serial, loop(x2, 8, lower::ForKind::Unrolled, lower::makeStore(acc, {x2}, upd)));
        lower::Stmt epi = loop(x3, 8, lower::ForKind::Vectorized,
                               lower::makeStore(Y, {x3 * 2 + o}, te::max(lower::bufferLoad(acc, {x3}), te::floatImm(0.0))));
        lower::LoweredFunc f;
        f.args = {X, W, Y};
        f.body = loop(o, 2, lower::ForKind::Parallel,
                      lower::makeAllocate(acc, lower::makeAttr(lower::attr::kAutoUnrollMaxStep, 16, lower::makeSeq({init, update, epi}))));
        auto rows = cost_model::extractPerStoreFeatures(f, 64);
        QCOMPARE(int(rows.size()), 3);

        // acc is allocated inside o: 8 floats = 32 bytes, 8 x 2 elements over the loops, outer 2.
        auto alloc = [](Expect& e, double outer) {
            e.num(kAllocSize, 32, "alloc_size");
            e.num(kAllocProd, 16, "alloc_prod");
            e.num(kAllocOuter, 2, "alloc_outer_prod");
            e.num(kAllocInner, outer / 2, "alloc_inner_prod");
        };
        // Parallel o is not a loop indexing acc: among the other loops it is the only (innermost) one
        // for the init store, the outer one for the update.
        auto parallelO = [](Expect& e, int pos) { e.annotation(kParNum, 1, 2, 2, pos); };
        {
            Expect e(QStringLiteral("init"));
            e.annotation(kVecNum, 0, 0, 0, kNone);
            e.annotation(kUnrollNum, 0, 0, 0, kNone);
            parallelO(e, kInnerReduce);
            // acc: 16 stores x 4 bytes, 8 unique elements, 16 x 4/64 = 1 line; reused across o.
            e.buffer(0, kAccWrite, 64, 32, 1, 1, 1);
            e.reuse(0, kReuseLoop, 8, 32, 2, 64, 32, 1, 1);
            alloc(e, 16);
            e.outerScope(16, 2, 16);
            // The auto-unroll pragma (16) unrolls x1 (8 steps): 8 scalar stores per block on one
            // store port = 8 cycles (FMA pipes: 8 ops / 2 = 4), 2 blocks.
            e.block(8, 1, 0, 0, 0.5, 2, 1, 0, 0, 0, false, 16 + 32 * 3.0 / 64);  // + refills of acc's 32 bytes
            checkRow(rows[0], e);
        }
        {
            Expect e(QStringLiteral("update"));
            // 2 x 3 x 8 = 48 iterations; the X index has two int multiplies and two int adds (TVM
            // counts the ops of load indices, not of the store's own indices).
            e.num(kFloatAddSub, 48, "float_addsub");
            e.num(kFloatMul, 48, "float_mul");
            e.num(kIntAddSub, 96, "int_addsub");
            e.num(kIntMul, 96, "int_mul");
            e.annotation(kVecNum, 0, 0, 0, kNone);
            e.annotation(kUnrollNum, 1, 8, 8, kInnerSpatial);
            parallelO(e, kOuterReduce);
            // Levels: x2: acc 8, X 15 (x2*2 in [0, 14]), W 1 -> 96 bytes; r: 8, 17, 3 -> 112;
            // o: 8, 33, 3 -> 176. At o the init store's entry for acc (8) comes first.
            // X: stride 2 -> 48 x 8/64 = 6 lines; all of X (33 floats, 132 bytes) -> 132 / 64 lines;
            // every loop moves it: no reuse.
            e.buffer(0, kAccRead, 192, 132, 6, 132.0 / 64, 2);
            e.reuse(0, kNoReuse, 0, 0, 0, 192, 132, 6, 132.0 / 64);
            // acc: 48 x 4/64 = 3 lines; r does not move it: reused 3 times after 8 iterations and
            // the 96 bytes the x2 loop touches.
            e.buffer(1, kAccReadWrite, 192, 32, 3, 1, 1);
            e.reuse(1, kReuseLoop, 8, 96, 3, 192, 32, 3, 1);
            // W: x2 does not move it (reduce ratio 8) -> 48 / 8 x 4/64 < 1 -> 1 line; stride 0;
            // reused 8 times by the innermost loop (one element of each buffer: 12 bytes).
            e.buffer(2, kAccRead, 192, 12, 1, 1, 0);
            e.reuse(2, kReuseLoop, 1, 12, 8, 192, 12, 1, 1);
            e.arith({16, 48, 96}, {96, 112, 176});
            alloc(e, 48);
            e.outerScope(48, 3, 16);
            // r x x2 = 24 steps > 16 keeps r serial: the block is x2 (8 scalar FMAs, 8 accumulators
            // kept across the run of r's 3 iterations, o being parallel); loads X 8 + W 1 + acc 8 / 3
            // -> 5.83 cycles; 2 x 3 blocks; + the refills of 176 bytes.
            e.block(8, 1, 8, (9 + 8.0 / 3) / 8, 4 / ((9 + 8.0 / 3) / 2), 3, 3, 0, 2, 0, false,
                    (9 + 8.0 / 3) / 2 * 6 + 176 * 3.0 / 64);
            checkRow(rows[1], e);
        }
        {
            Expect e(QStringLiteral("epilogue"));
            e.num(kFloatCmp, 16, "float_cmp");  // max; the store index x3*2 + o is not counted
            e.annotation(kVecNum, 1, 8, 8, kInnerSpatial);
            e.annotation(kUnrollNum, 0, 0, 0, kNone);
            parallelO(e, kOuterSpatial);
            // Levels: x3: Y 15, acc 8 -> 92 bytes; o: Y 16, acc 8 -> 96 bytes. At o, all stores so
            // far: acc 3 x 8, X 33, W 3, Y 16 -> 304 bytes.
            e.buffer(0, kAccWrite, 64, 64, 2, 1, 2);
            e.reuse(0, kNoReuse, 0, 0, 0, 64, 64, 2, 1);
            e.buffer(1, kAccRead, 64, 32, 1, 1, 1);
            e.reuse(1, kReuseLoop, 8, 92, 2, 64, 32, 1, 1);
            e.arith({8, 16}, {92, 96});
            e.outerScope(16, 2, 16);
            // x3 vectorized (8 lanes): acc read contiguously (1 load); Y's stride 2 makes 8 scalar
            // stores -> 8 cycles against 0.5 for the one vector max; 2 blocks.
            e.block(8, 8, 0, 1, 0.5 / 8, 2, 1, 1, 0, 0, false, 16 + 96 * 3.0 / 64);
            checkRow(rows[2], e);
        }
    }

    // Two stores to P in one loop: a guarded (padding) read, then an in-place select.
    //   for x (10) { P[x] = if_then_else(x >= 1 && x < 9, X[x*2 - 2], 0); P[x] = select(P[x] > 0, P[x], P[x]*0.5) }
    void testFeaturesSerialReuseAndSelects() {
        auto X = lower::makeBuffer("X", {15}), P = lower::makeBuffer("P", {10});
        Var x("x");
        Expr pad = te::ifThenElse(te::logicalAnd(x >= 1, x < 9), lower::bufferLoad(X, {x * 2 - 2}), te::floatImm(0.0));
        Expr p = lower::bufferLoad(P, {x});
        Expr sel = te::select(p > te::floatImm(0.0), p, p * te::floatImm(0.5));
        lower::LoweredFunc f;
        f.args = {X, P};
        f.body = loop(x, 10, lower::ForKind::Serial, lower::makeSeq({lower::makeStore(P, {x}, pad), lower::makeStore(P, {x}, sel)}));
        auto rows = cost_model::extractPerStoreFeatures(f, 64);
        QCOMPARE(int(rows.size()), 2);
        auto common = [](Expect& e) {
            e.annotation(kVecNum, 0, 0, 0, kNone);
            e.annotation(kUnrollNum, 0, 0, 0, kNone);
            e.annotation(kParNum, 0, 0, 0, kNone);
            e.outerScope(10, 1, 0);
        };
        {
            Expect e(QStringLiteral("padding"));
            common(e);
            e.num(kFloatMath, 10, "float_math_func");  // tir.if_then_else is a pure call in TVM
            e.num(kIntAddSub, 10, "int_addsub");
            e.num(kIntMul, 10, "int_mul");
            e.num(kIntCmp, 20, "int_cmp");
            e.num(kBoolOp, 10, "bool_op");
            // X: the index x*2 - 2 spans [-2, 16] (the guard is not analysed): 19 elements, not the
            // whole of X -> unique lines = 76 bytes / 4; stride 2 -> 10 x 8/64 = 1.25 lines.
            e.buffer(0, kAccRead, 40, 76, 1.25, 19, 2);
            e.reuse(0, kNoReuse, 0, 0, 0, 40, 76, 1.25, 19);
            e.buffer(1, kAccWrite, 40, 40, 1, 1, 1);
            e.reuse(1, kNoReuse, 0, 0, 0, 40, 40, 1, 1);
            e.arith({10}, {116});
            // No unrolled or vector loop: a block of one iteration of x, one load and one store
            // (1 cycle), 10 of them. Without lanes every load counts as broadcast.
            e.block(1, 1, 0, 1, 0.5, 10, 1, 0, 1, 0, false, 10 + 116 * 3.0 / 64);
            checkRow(rows[0], e);
        }
        {
            Expect e(QStringLiteral("select"));
            common(e);
            e.num(kFloatCmp, 10, "float_cmp");
            e.num(kFloatMul, 10, "float_mul");
            e.num(kSelectOp, 10, "select_op");
            // Both stores touch P inside x: serial reuse, count 1, distance min(10, 10) / 10 = 1
            // iteration and (P 10 + 10, X 19) x 4 / 10 = 15.6 bytes.
            e.buffer(0, kAccReadWrite, 40, 40, 1, 1, 1);
            e.reuse(0, kReuseSerial, 1, 15.6, 1, 40, 40, 1, 1);
            e.arith({20}, {40});
            // Reads and writes P[x] (one 'accumulator' that the hot loop x moves): a load and a
            // store per iteration, 1 cycle each, 10 iterations.
            e.block(1, 1, 1, 1, 0.5, 10, 1, 0, 0, 0, false, 10 + 40 * 3.0 / 64);
            checkRow(rows[1], e);
        }
    }

    // The estimated cycles count cache refills: for i (64) { for j (1024) { B[j] = B[j] + A[i, j] } }.
    // Footprints: loop j 4 KiB of A + 4 KiB of B = 8 KiB; loop i 256 KiB + 4 KiB. Loop i exceeds L1
    // (32 KiB), so each of its 64 iterations refills j's 8 KiB from L2 (512 KiB at 64 B/cycle); no
    // loop exceeds L2 (1 MiB): its 260 KiB come from L3 once (32 B/cycle). Compute: one scalar add
    // with a load of A and a load and store of B per iteration = 1 cycle, 65536 iterations.
    void testCyclesCountCacheRefills() {
        auto A = lower::makeBuffer("A", {64, 1024}), B = lower::makeBuffer("B", {1024});
        Var i("i"), j("j");
        lower::LoweredFunc f;
        f.args = {A, B};
        f.body = loop(i, 64, lower::ForKind::Serial,
                      loop(j, 1024, lower::ForKind::Serial,
                           lower::makeStore(B, {j}, lower::bufferLoad(B, {j}) + lower::bufferLoad(A, {i, j}))));
        const auto rows = cost_model::extractPerStoreFeatures(f, 64);
        QCOMPARE(int(rows.size()), 1);
        const double refills = 64.0 * 8192 / 64 + (262144.0 + 4096) / 32;
        QCOMPARE(rows[0][size_t(kBlock + 11)], float(log2p(65536 + refills)));
        QCOMPARE(cost_model::estimatedCycles(rows), double(std::exp2(double(float(log2p(65536 + refills)))) - 1));
        // With the loops split over 2 cores (i parallel): the busiest core does half of it.
        f.body = loop(i, 64, lower::ForKind::Parallel, lower::as<lower::ForNode>(f.body)->body);
        const auto par = cost_model::extractPerStoreFeatures(f, 64, nullptr, 2);
        QCOMPARE(par[0][size_t(kBlock + 11)], float(log2p((65536 + refills) / 2)));
    }

    // XGBoost learns a known ordering: matmul states whose cost falls with both tile sizes. Trained
    // on half of the 7 x 7 grid of (ti, tj), it must rank the other half.
    // GPU rows (TVM feature.cc): is_gpu = 1 and the thread lengths around every store. TVM's CUDA
    // record of conv2d_layer binds 28 blocks (n.0 ff.0 yy.0 xx.0 = 1 x 4 x 7 x 1) of 64 threads
    // (ff.2), no vthread; the shared-memory copies use the same 64 threads. The loop IR is the GPU
    // lowering's (lowerStateThreaded: thread loops are ThreadBinding loops, counted in outer_prod as
    // TVM's thread_extent attributes are).
    void testGpuFeatures() {
        search::SearchTask t = makeTask(test::conv2dLayer(1, 7, 7, 512, 512, 3, 3, 1, 1), "conv2d_layer");
        t.target = "cuda -keys=cuda,gpu -max_num_threads=1024 -thread_warp_size=32";
        t.hardware = HardwareParams::gpu(49152, 1024, 32);
        QVERIFY(search::isGpuTask(t));
        auto log = record::readMeasureRecords("../shared/data/logs/ansor/tvm_ci_conv2d.json");
        QCOMPARE(int(log.records.size()), 1);
        State s = inferBound(replaySteps(*t.dag, stepsFromJson(log.records[0].steps)));
        lower::StateLowerer threaded = [](const search::SearchTask& task, const State& st) {
            return lower::lowerStateThreaded(*task.dag, st);
        };
        cost_model::XGBModel model(threaded, oneThread());
        const auto rows = model.features(t, s);
        QCOMPARE(int(rows.size()), 5);  // pad_temp.shared, kernel.shared, conv init + update, T_relu
        for (const auto& row : rows) {
            QCOMPARE(row[size_t(kGpuLens - 1)], 1.0f);                     // is_gpu
            QCOMPARE(row[size_t(kGpuLens)], float(log2p(28)));              // blockIdx.x
            QCOMPARE(row[size_t(kGpuLens + 1)], 1.0f);                      // blockIdx.y = 1
            QCOMPARE(row[size_t(kGpuLens + 3)], float(log2p(64)));          // threadIdx.x
            QCOMPARE(row[size_t(kGpuLens + 6)], 1.0f);                      // vthread = 1
        }
        // T_relu's store (the last) runs once per thread of every block: outer_prod counts the
        // 28 x 64 thread loops times its 2 x 7 inner tile (ff.3 x xx.3) = 25088 = 512 x 7 x 7.
        QCOMPARE(rows.back()[size_t(kOuterProd)], float(log2p(25088)));
        // The same loop IR of a CPU task: is_gpu 0, lengths 1.
        search::SearchTask cpu = t;
        cpu.target = "llvm";
        cpu.workloadKey = "conv2d_layer-cpu";  // the model caches rows per workload key and state
        for (const auto& row : model.features(cpu, s)) {
            QCOMPARE(row[size_t(kGpuLens - 1)], 0.0f);
            QCOMPARE(row[size_t(kGpuLens + 3)], 1.0f);
        }
    }

    // The feature cache stays within XGBModelParams::featureCacheMiB however many states the search
    // scores (it held every state before: 850 MB after 96 mobilenet trials), and a state evicted and
    // extracted again, or kept, gets the rows a fresh model computes.
    void testFeatureCacheIsBounded() {
        const int64_t n = 64;
        auto dag = matmul(n);
        std::vector<State> states;
        for (int a = 0; a < 7; ++a)
            for (int b = 0; b < 7; ++b) states.push_back(tiledMatmul(*dag, n, int64_t(1) << a, int64_t(1) << b));
        int failed = 0;
        auto fill = [&](cost_model::XGBModel& model, int keys) -> size_t {
            size_t peak = 0;
            for (int k = 0; k < keys; ++k) {
                search::SearchTask task = makeTask(dag, "matmul-64-key-" + std::to_string(k));
                for (const auto& s : states) {
                    failed += model.features(task, s).empty();
                    peak = std::max(peak, model.cachedFeatureBytes());
                }
            }
            return peak;
        };
        cost_model::XGBModelParams unbounded = oneThread();
        unbounded.featureCacheMiB = 1024;
        cost_model::XGBModel big(cpuLowerer(), unbounded);
        const size_t all = fill(big, 48);
        cost_model::XGBModelParams p = oneThread();
        p.featureCacheMiB = 1;
        cost_model::XGBModel model(cpuLowerer(), p);
        const size_t peak = fill(model, 48);
        QCOMPARE(failed, 0);
        qInfo("feature cache: %zu KiB for 48 x 49 states unbounded, at most %zu KiB with a 1 MiB bound", all >> 10, peak >> 10);
        QVERIFY2(all > (size_t(2) << 20), "the states must overflow the bound for this test to mean anything");
        QVERIFY(peak <= (size_t(1) << 20));
        QVERIFY(peak >= (size_t(1) << 19));  // the young generation fills before it rotates
        // Kept (young), moved from old, or evicted and extracted again: the rows are a fresh model's.
        cost_model::XGBModel fresh(cpuLowerer(), oneThread());
        for (int k : {0, 24, 47}) {
            search::SearchTask task = makeTask(dag, "matmul-64-key-" + std::to_string(k));
            for (const auto& s : states) QCOMPARE(model.features(task, s), fresh.features(task, s));
        }
    }

    // Whether a model scores a state the same in every call (the evolutionary search keeps the score
    // of an unmutated copy only then): the analytic warm-up and a trained model do, random draws
    // (TVM's warm-up, a GPU task before training, RandomModel) do not.
    void testRepeatableScores() {
        auto dag = matmul(64);
        search::SearchTask cpu = makeTask(dag, "matmul-64");
        search::SearchTask gpu = cpu;
        gpu.target = "cuda -keys=cuda,gpu";
        gpu.hardware = HardwareParams::gpu(49152, 1024, 32);
        cost_model::XGBModelParams p = oneThread();
        cost_model::XGBModel analytic(cpuLowerer(), p);
        QVERIFY(analytic.repeatable(cpu));
        QVERIFY(!analytic.repeatable(gpu));
        const State s = tiledMatmul(*dag, 64, 4, 16);
        QCOMPARE(analytic.predict(cpu, {s, s}), analytic.predict(cpu, {s, s}));
        p.warmup = cost_model::XGBModelParams::Warmup::Random;
        cost_model::XGBModel random(cpuLowerer(), p);
        QVERIFY(!random.repeatable(cpu));
        QVERIFY(random.predict(cpu, {s})[0] != random.predict(cpu, {s})[0]);  // a fresh draw per call
        p.numWarmupSamples = 0;
        cost_model::XGBModel trained(cpuLowerer(), p);
        std::vector<cost_model::MeasuredState> train;
        for (int a = 0; a < 5; ++a) train.push_back({tiledMatmul(*dag, 64, int64_t(1) << a, 8), 1e-3 * (1 + a), true});
        trained.update(cpu, train);
        trained.prepare(cpu);  // a lazily trained model (the default) trains when next used
        QVERIFY(trained.trained());
        QVERIFY(trained.repeatable(cpu) && trained.repeatable(gpu));
        QVERIFY(!cost_model::RandomModel(1).repeatable(cpu));
    }

    void testXgbLearnsTileOrdering() {
        const int64_t n = 64;
        auto dag = matmul(n);
        search::SearchTask task = makeTask(dag, "synthetic-matmul-64");
        auto cost = [](int64_t ti, int64_t tj) { return 1e-3 * (1.0 + 8.0 / double(tj)) * (1.0 + 4.0 / double(ti)); };
        std::vector<cost_model::MeasuredState> train;
        std::vector<State> test;
        std::vector<double> testCosts;
        for (int a = 0; a < 7; ++a)
            for (int b = 0; b < 7; ++b) {
                const int64_t ti = int64_t(1) << a, tj = int64_t(1) << b;
                State s = tiledMatmul(*dag, n, ti, tj);
                if ((a + b) % 2 == 0) {
                    train.push_back({s, cost(ti, tj), true});
                } else {
                    test.push_back(s);
                    testCosts.push_back(cost(ti, tj));
                }
            }
        cost_model::XGBModelParams p = oneThread();
        p.numWarmupSamples = 0;
        cost_model::XGBModel model(cpuLowerer(), p);
        model.update(task, train);
        model.prepare(task);  // a lazily trained model (the default) trains when next used
        QVERIFY(model.trained());
        QCOMPARE(int(model.numSamples()), 25);
        std::vector<State> trainStates;
        std::vector<double> trainCosts;
        for (const auto& m : train) {
            trainStates.push_back(m.state);
            trainCosts.push_back(m.meanCost);
        }
        const double fit = model.pairwiseAccuracy(task, trainStates, trainCosts);
        const double held = model.pairwiseAccuracy(task, test, testCosts);
        qInfo("synthetic tile ordering: pairwise accuracy %.3f on the 25 training states, %.3f on %lld held-out pairs",
              fit, held, distinctPairs(testCosts));
        QVERIFY2(fit >= 0.9, qPrintable(QString::number(fit)));
        QVERIFY2(held >= 0.9, qPrintable(QString::number(held)));
    }

    // Lazy training (XGBModelParams::lazyTraining): update() stores records; the model retrains
    // when it next scores a task whose records it has not seen, a task without records, or has no
    // booster. Records of two tasks of TVM's resnet-18 log, in two batches each, as a network's
    // rounds bring them. A model that retrains is the eager (TVM) model trained on the same records:
    // same scores.
    void testLazyTraining() {
        auto log = record::readMeasureRecords(kTvmResnet18Log);
        const std::map<std::string, search::SearchTask> tasks = resnet18TasksByLegacyKey();
        std::map<std::string, std::vector<cost_model::MeasuredState>> byTask;
        for (const auto& rec : log.records) {
            const auto it = tasks.find(rec.task.workloadKey);
            QVERIFY2(it != tasks.end(), rec.task.workloadKey.c_str());
            const bool valid = rec.valid();
            byTask[rec.task.workloadKey].push_back(
                {inferBound(replaySteps(*it->second.dag, stepsFromJson(rec.steps))), valid ? rec.meanCost() : 1e10, valid});
        }
        // The two tasks with the most records, and a third that gets none.
        std::vector<std::pair<size_t, std::string>> bySize;
        for (const auto& [key, v] : byTask) bySize.emplace_back(v.size(), key);
        std::sort(bySize.rbegin(), bySize.rend());
        QVERIFY(bySize.size() >= 3 && bySize[1].first >= 80);
        const search::SearchTask& a = tasks.at(bySize[0].second);
        const search::SearchTask& b = tasks.at(bySize[1].second);
        const search::SearchTask& c = tasks.at(bySize[2].second);
        auto half = [&](const std::string& key, int h) {
            const auto& v = byTask.at(key);
            return std::vector<cost_model::MeasuredState>(v.begin() + ptrdiff_t(h * v.size() / 2),
                                                          v.begin() + ptrdiff_t((h + 1) * v.size() / 2));
        };
        std::vector<State> probe;
        for (const auto& m : half(bySize[1].second, 1)) probe.push_back(m.state);

        cost_model::XGBModelParams p = oneThread();
        p.numWarmupSamples = 0;
        cost_model::XGBModel lazy(cpuLowerer(), p);
        p.lazyTraining = false;
        cost_model::XGBModel eager(cpuLowerer(), p);

        lazy.update(a, half(bySize[0].second, 0));
        eager.update(a, half(bySize[0].second, 0));
        QCOMPARE(lazy.trainings(), 0);
        QCOMPARE(eager.trainings(), 1);
        lazy.prepare(a);  // a's records are new to it
        QCOMPARE(lazy.trainings(), 1);
        lazy.prepare(a);  // nothing new
        QCOMPARE(lazy.trainings(), 1);

        lazy.update(b, half(bySize[1].second, 0));  // b's first batch
        eager.update(b, half(bySize[1].second, 0));
        lazy.prepare(a);  // a's own records are all seen: no retraining for b's batch
        QCOMPARE(lazy.trainings(), 1);
        lazy.update(a, half(bySize[0].second, 1));
        eager.update(a, half(bySize[0].second, 1));
        QCOMPARE(eager.trainings(), 3);
        (void)lazy.predict(b, probe);  // b's records are new: retrain on everything, once
        QCOMPARE(lazy.trainings(), 2);
        QCOMPARE(lazy.predict(b, probe), eager.predict(b, probe));  // the same records: TVM's model
        (void)lazy.predict(a, probe);
        QCOMPARE(lazy.trainings(), 2);  // a's second batch was in that training
        (void)lazy.predict(c, probe);   // c has no records, and nothing is untrained
        QCOMPARE(lazy.trainings(), 2);
        lazy.update(b, half(bySize[1].second, 1));
        (void)lazy.predict(c, probe);  // c has no records: its first round learns from b's new batch
        QCOMPARE(lazy.trainings(), 3);
        QCOMPARE(int(lazy.numSamples()), int(eager.numSamples()) + int(half(bySize[1].second, 1).size()));
    }

    // TVM's own tuning log of resnet-18 (x86, 2021): records carry the measured costs. A model
    // trained on the even records of every task ranks the odd (valid) records of the same task,
    // with TVM's objective and with the pairwise one (XGBModelParams::Objective).
    void testRankingOnResnet18Log_data() {
        QTest::addColumn<int>("objective");
        QTest::addColumn<bool>("tvmModel");
        QTest::addColumn<double>("atLeast");
        // TVM's model (--cost-model xgb-tvm: its 164 features, no analytic prior): 0.656.
        QTest::addRow("TVM's model") << int(cost_model::XGBModelParams::Objective::PackSumSquared) << true << 0.6;
        // Ours: + group 6 and the analytic prior (0.658, xgb), pairwise loss (0.733, xgb-rank).
        QTest::addRow("squared") << int(cost_model::XGBModelParams::Objective::PackSumSquared) << false << 0.6;
        QTest::addRow("pairwise") << int(cost_model::XGBModelParams::Objective::PackSumPairwise) << false << 0.7;
    }
    void testRankingOnResnet18Log() {
        QFETCH(int, objective);
        QFETCH(bool, tvmModel);
        QFETCH(double, atLeast);
        const auto t0 = std::chrono::steady_clock::now();
        auto log = record::readMeasureRecords(kTvmResnet18Log);
        QCOMPARE(int(log.records.size()), 1265);
        const std::map<std::string, search::SearchTask> tasks = resnet18TasksByLegacyKey();
        std::map<std::string, std::vector<cost_model::MeasuredState>> train;
        std::map<std::string, std::pair<std::vector<State>, std::vector<double>>> test;
        std::map<std::string, int> seen;
        for (const auto& rec : log.records) {
            auto it = tasks.find(rec.task.workloadKey);
            QVERIFY2(it != tasks.end(), rec.task.workloadKey.c_str());
            State s = inferBound(replaySteps(*it->second.dag, stepsFromJson(rec.steps)));
            const bool valid = rec.valid();
            if (seen[rec.task.workloadKey]++ % 2 == 0) {
                train[rec.task.workloadKey].push_back({s, valid ? rec.meanCost() : 1e10, valid});
            } else if (valid) {
                test[rec.task.workloadKey].first.push_back(s);
                test[rec.task.workloadKey].second.push_back(rec.meanCost());
            }
        }
        std::vector<const search::SearchTask*> taskList;
        std::vector<std::vector<cost_model::MeasuredState>> batches;
        for (auto& [key, v] : train) {
            taskList.push_back(&tasks.at(key));
            batches.push_back(v);
        }
        cost_model::XGBModelParams params = oneThread();
        params.objective = cost_model::XGBModelParams::Objective(objective);
        params.tvmFeaturesOnly = tvmModel;
        params.analyticPrior = !tvmModel;
        cost_model::XGBModel model(cpuLowerer(), params);
        model.updateMany(taskList, batches);
        QVERIFY(model.trained());
        QVERIFY(model.numSamples() >= 600);

        double ok = 0;
        long long pairs = 0;
        for (auto& [key, v] : test) {
            const long long n = distinctPairs(v.second);
            ok += model.pairwiseAccuracy(tasks.at(key), v.first, v.second) * double(n);
            pairs += n;
        }
        const double accuracy = ok / double(pairs);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        qInfo("resnet-18 log: %zu training records, %lld held-out pairs in %zu tasks, pairwise accuracy %.3f (%.1f s)",
              model.numSamples(), pairs, test.size(), accuracy, seconds);
        QVERIFY(pairs >= 5000);
        QVERIFY2(accuracy >= atLeast, qPrintable(QString::number(accuracy)));
    }

    // Before warm-up the model predicts with the analytic estimate (feature.h estimatedCycles):
    // untrained, it must rank TVM's own resnet-18 log better than chance, and its score is the
    // estimated fraction of the FMA peak. With Warmup::Random (TVM, --cost-model xgb-tvm) the
    // same model ranks at chance.
    void testAnalyticWarmupRanksTvmLog() {
        auto log = record::readMeasureRecords(kTvmResnet18Log);
        const std::map<std::string, search::SearchTask> tasks = resnet18TasksByLegacyKey();
        std::map<std::string, std::pair<std::vector<State>, std::vector<double>>> byTask;
        for (const auto& rec : log.records) {
            if (!rec.valid()) continue;
            const auto& t = tasks.at(rec.task.workloadKey);
            byTask[rec.task.workloadKey].first.push_back(inferBound(replaySteps(*t.dag, stepsFromJson(rec.steps))));
            byTask[rec.task.workloadKey].second.push_back(rec.meanCost());
        }
        cost_model::XGBModelParams analytic = oneThread(), random = oneThread();
        random.warmup = cost_model::XGBModelParams::Warmup::Random;
        cost_model::XGBModel a(cpuLowerer(), analytic), r(cpuLowerer(), random);
        double okA = 0, okR = 0;
        long long pairs = 0;
        for (auto& [key, v] : byTask) {
            const long long n = distinctPairs(v.second);
            okA += a.pairwiseAccuracy(tasks.at(key), v.first, v.second) * double(n);
            okR += r.pairwiseAccuracy(tasks.at(key), v.first, v.second) * double(n);
            pairs += n;
        }
        qInfo("resnet-18 log, untrained: analytic pairwise accuracy %.3f, random %.3f over %lld pairs in %zu tasks",
              okA / double(pairs), okR / double(pairs), pairs, byTask.size());
        QVERIFY(pairs >= 10000);
        QVERIFY2(okA / double(pairs) >= 0.70, qPrintable(QString::number(okA / double(pairs))));
        QVERIFY2(std::fabs(okR / double(pairs) - 0.5) < 0.03, qPrintable(QString::number(okR / double(pairs))));

        // The score of one state: FLOPs / (estimated cycles x 32 FLOP per cycle x cores), at most 1.
        const auto& [key, v] = *byTask.begin();
        const search::SearchTask& t = tasks.at(key);
        const std::vector<float> scores = a.predict(t, {v.first.front()});
        const double cycles = cost_model::estimatedCycles(a.features(t, v.first.front()));
        QVERIFY(cycles > 0);
        QCOMPARE(scores.front(), float(std::min(1.0, t.dag->flopCount() / (cycles * 32 * std::max(1, t.hardware.numCores)))));
        QVERIFY(scores.front() > 0 && scores.front() <= 1);
    }
};

QTEST_APPLESS_MAIN(TestCostModel)
#include "tst_cost_model.moc"
