// SPDX-License-Identifier: Apache-2.0
// Weight prefetch (lower/prefetch.h): where the prefetches of the next parallel block go and what
// they address, on a nest built by hand; which weights are left alone; and on the best records of
// TVM's resnet-18 log (weights rewritten to the schedule's layout, as the tuner and compile build
// them): the rewritten weight is still known as a weight, codegen emits llvm.prefetch for it, the
// kernel cache tells the builds apart, and the kernels compute bit for bit what they compute
// without prefetches.
#include <QtTest>
#include <cstring>
#include <limits>
#include <map>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_dag.h"
#include "engine/lower/lower_state.h"
#include "engine/lower/prefetch.h"
#include "engine/lower/simplify.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/layout_rewrite.h"
#include "test_util.h"

using namespace tb;
using namespace tb::lower;

namespace {

const char* kTvmLog = "../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json";

std::vector<const PrefetchNode*> prefetches(const Stmt& s) {
    std::vector<const PrefetchNode*> out;
    preOrderVisit(s, [&](const Stmt& x) {
        if (x->kind == StmtKind::Prefetch) out.push_back(as<PrefetchNode>(x));
    });
    return out;
}

// parallel (p, 0, blocks) { for (k, 0, kExtent) { vectorized (j, 0, 16) {
//   C[p, j] = C[p, j] + A[k] * W[<index>] } } }
struct Nest {
    te::Var p{"p"}, k{"k"}, j{"j"};
    Buffer a, w, c;
    Stmt body;
};

Nest makeNest(int64_t blocks, int64_t kExtent, bool weightFollowsP) {
    Nest n;
    n.a = makeBuffer("A", {kExtent});
    n.w = makeBuffer("W", weightFollowsP ? std::vector<int64_t>{blocks, kExtent, 16} : std::vector<int64_t>{kExtent, 16});
    n.c = makeBuffer("C", {blocks, 16});
    const te::Expr wLoad = weightFollowsP ? bufferLoad(n.w, {n.p, n.k, n.j}) : bufferLoad(n.w, {n.k, n.j});
    Stmt store = makeStore(n.c, {n.p, n.j}, bufferLoad(n.c, {n.p, n.j}) + bufferLoad(n.a, {n.k}) * wLoad);
    n.body = makeFor(n.p, blocks, ForKind::Parallel,
                     makeFor(n.k, kExtent, ForKind::Serial, makeFor(n.j, 16, ForKind::Vectorized, store)));
    return n;
}

int64_t evalAt(const te::Expr& e, const std::vector<std::pair<te::Var, te::Expr>>& at) {
    int64_t v = -1;
    const te::Expr c = simplify(te::substitute(e, at));
    if (!te::isConstInt(c, &v)) return std::numeric_limits<int64_t>::min();
    return v;
}

std::vector<float> run(const codegen::CompiledKernel& k, const LoweredFunc& f, unsigned seed) {
    auto loaded = codegen::LoadedKernel::load(k.object, k.name);
    std::vector<std::vector<float>> args;
    for (size_t i = 0; i < f.args.size(); ++i) {
        const size_t n = size_t(f.args[i]->spanElements());
        args.push_back(i + 1 < f.args.size() ? test::randomData(n, seed + unsigned(i))
                                              : std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()));
    }
    std::vector<float*> ptrs;
    for (auto& a : args) ptrs.push_back(a.data());
    if (loaded->run(ptrs) != 0) return {};
    return args.back();
}

}  // namespace

class TestPrefetch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // W[8, 256, 16]: a 16 KiB block per p, 256 lines, one per iteration of k: one prefetch at the
    // start of k's body, of line k of block p + 1.
    void testNextBlockSpreadOverTheLoop() {
        Nest n = makeNest(8, 256, true);
        int inserted = -1;
        const Stmt out = insertWeightPrefetch(n.body, {n.w}, {}, &inserted);
        QCOMPARE(inserted, 1);
        const auto pf = prefetches(out);
        QCOMPARE(int(pf.size()), 1);
        QCOMPARE(pf[0]->buffer, n.w);
        // It opens k's body (before the vector loop).
        auto* par = as<ForNode>(out);
        QVERIFY(par && par->forKind == ForKind::Parallel);
        auto* kLoop = as<ForNode>(par->body);
        QVERIFY(kLoop && kLoop->var.same(n.k));
        auto* seq = as<SeqNode>(kLoop->body);
        QVERIFY(seq && seq->seq.size() == 2);
        QCOMPARE(seq->seq[0]->kind, StmtKind::Prefetch);
        for (int64_t p : {0, 3, 7})
            for (int64_t k : {0, 5, 255})
                QCOMPARE(evalAt(pf[0]->offset, {{n.p, te::intImm(p)}, {n.k, te::intImm(k)}}), (p + 1) * 4096 + k * 16);
    }

    // How many lines each iteration prefetches: one where the loop has as many iterations as the
    // block has lines (64 KiB under k = 1024, 4 KiB under k = 64), four where the block has four
    // times more lines (16 KiB under k = 64), consecutive.
    void testLinesPerIteration() {
        Nest big = makeNest(4, 1024, true);
        Stmt out = insertWeightPrefetch(big.body, {big.w}, {});
        // 1024 lines over k = 1024 iterations: one each.
        QCOMPARE(int(prefetches(out).size()), 1);

        PrefetchOptions o;
        o.minBlockBytes = 1024;
        Nest small = makeNest(8, 64, true);  // 4 KiB blocks, 64 lines, k = 64 iterations
        out = insertWeightPrefetch(small.body, {small.w}, o);
        auto pf = prefetches(out);
        QCOMPARE(int(pf.size()), 1);
        QCOMPARE(evalAt(pf[0]->offset, {{small.p, te::intImm(2)}, {small.k, te::intImm(63)}}), 3 * 1024 + 63 * 16);

        // A nest whose inner loop has fewer iterations than the block has lines: m lines each.
        te::Var p("p"), k("k"), j("j");
        Buffer a = makeBuffer("A", {64}), w = makeBuffer("W", {4, 64, 64}), c = makeBuffer("C", {4, 64});
        Stmt st = makeStore(c, {p, j}, bufferLoad(c, {p, j}) + bufferLoad(a, {k}) * bufferLoad(w, {p, k, j}));
        Stmt body = makeFor(p, 4, ForKind::Parallel, makeFor(k, 64, ForKind::Serial, makeFor(j, 64, ForKind::Vectorized, st)));
        int inserted = 0;
        out = insertWeightPrefetch(body, {w}, {}, &inserted);
        QCOMPARE(inserted, 4);  // 16 KiB = 256 lines over 64 iterations of k
        pf = prefetches(out);
        for (int l = 0; l < 4; ++l)
            QCOMPARE(evalAt(pf[size_t(l)]->offset, {{p, te::intImm(1)}, {k, te::intImm(10)}}), 2 * 4096 + (10 * 4 + l) * 16);
    }

    // Lines that do not divide evenly over the iterations: a 13-line block (W[p] = 200 floats) over
    // k's 5 iterations, 3 lines each. The last iteration's lines run past the block into the one
    // after it, consecutive and unclamped (a clamp cost a compare and a select per prefetch).
    void testUnevenLinesRunPastTheBlock() {
        te::Var p("p"), k("k"), q("q");
        Buffer a = makeBuffer("A", {40}), w = makeBuffer("W", {4, 5, 40}), c = makeBuffer("C", {4});
        Stmt st = makeStore(c, {p}, bufferLoad(c, {p}) + bufferLoad(a, {q}) * bufferLoad(w, {p, k, q}));
        Stmt body = makeFor(p, 4, ForKind::Parallel, makeFor(k, 5, ForKind::Serial, makeFor(q, 40, ForKind::Serial, st)));
        PrefetchOptions o;
        o.minBlockBytes = 512;
        int inserted = 0;
        const Stmt out = insertWeightPrefetch(body, {w}, o, &inserted);
        QCOMPARE(inserted, 3);
        const auto pf = prefetches(out);
        for (int64_t pv : {0, 2})
            for (int64_t kv : {0, 4})
                for (int64_t l = 0; l < 3; ++l)
                    QCOMPARE(evalAt(pf[size_t(l)]->offset, {{p, te::intImm(pv)}, {k, te::intImm(kv)}}),
                             (pv + 1) * 200 + (kv * 3 + l) * 16);
        // k = 4 asks for lines 12 (the block's last), 13 and 14 (the next block's first two).
        QCOMPARE(evalAt(pf[2]->offset, {{p, te::intImm(0)}, {k, te::intImm(4)}}), 200 + 14 * 16);
        auto* kLoop = as<ForNode>(as<ForNode>(out)->body);
        QVERIFY(kLoop && kLoop->var.same(k));
        QCOMPARE(as<SeqNode>(kLoop->body)->seq[0]->kind, StmtKind::Prefetch);
    }

    // A parallel loop of two iterations (one per thread) over 4 MiB blocks: the 256 KiB block of
    // one iteration of its inner serial loop b is prefetched instead, one line per k.
    void testInnerLoopBlock() {
        te::Var p("p"), b("b"), k("k"), j("j");
        Buffer a = makeBuffer("A", {4096}), w = makeBuffer("W", {2, 16, 4096, 16}), c = makeBuffer("C", {2, 16, 16});
        Stmt st = makeStore(c, {p, b, j}, bufferLoad(c, {p, b, j}) + bufferLoad(a, {k}) * bufferLoad(w, {p, b, k, j}));
        Stmt body = makeFor(p, 2, ForKind::Parallel,
                            makeFor(b, 16, ForKind::Serial,
                                    makeFor(k, 4096, ForKind::Serial, makeFor(j, 16, ForKind::Vectorized, st))));
        int inserted = 0;
        const Stmt out = insertWeightPrefetch(body, {w}, {}, &inserted);
        QCOMPARE(inserted, 1);
        const auto pf = prefetches(out);
        for (int64_t pv : {0, 1})
            for (int64_t bv : {0, 7, 15})
                QCOMPARE(evalAt(pf[0]->offset, {{p, te::intImm(pv)}, {b, te::intImm(bv)}, {k, te::intImm(100)}}),
                         pv * 16 * 65536 + (bv + 1) * 65536 + 100 * 16);
        // It opens k's body.
        auto* kLoop = as<ForNode>(as<ForNode>(as<ForNode>(out)->body)->body);
        QVERIFY(kLoop && kLoop->var.same(k));
        QCOMPARE(as<SeqNode>(kLoop->body)->seq[0]->kind, StmtKind::Prefetch);
    }

    // What is left alone: a weight every iteration reads whole (no next block), a block under
    // 4 KiB, a block over 1 MiB, a buffer that is not a weight, a function without weights.
    void testLeftAlone() {
        int inserted = -1;
        Nest shared = makeNest(8, 256, false);
        QVERIFY(insertWeightPrefetch(shared.body, {shared.w}, {}, &inserted) == shared.body);
        QCOMPARE(inserted, 0);
        Nest tiny = makeNest(8, 32, true);  // 2 KiB per block
        QVERIFY(insertWeightPrefetch(tiny.body, {tiny.w}, {}, &inserted) == tiny.body);
        QCOMPARE(inserted, 0);
        Nest huge = makeNest(2, 32768, true);  // 2 MiB per block
        QVERIFY(insertWeightPrefetch(huge.body, {huge.w}, {}, &inserted) == huge.body);
        QCOMPARE(inserted, 0);
        Nest notWeight = makeNest(8, 256, true);
        QVERIFY(insertWeightPrefetch(notWeight.body, {notWeight.a}, {}, &inserted) == notWeight.body);
        QVERIFY(insertWeightPrefetch(notWeight.body, {}, {}, &inserted) == notWeight.body);
        QCOMPARE(inserted, 0);
    }

    // The best record of every workload of TVM's resnet-18 log, lowered as the tuner and compile
    // lower it (weights rewritten to the schedule's layout): the rewritten weight is still a weight;
    // the kernels that get prefetches carry llvm.prefetch in their LLVM IR, have another cache key
    // than without, and compute the same bits.
    void testTvmLogKernels() {
        auto log = record::readMeasureRecords(kTvmLog);
        QVERIFY(log.records.size() > 0);
        auto tasks = graph::extractTasks(graph::makeNetwork("resnet-18", 1, "NHWC"));
        std::map<std::string, const record::MeasureRecord*> best;
        for (const auto& r : log.records)
            if (r.valid() && (!best.count(r.task.workloadKey) || r.meanCost() < best[r.task.workloadKey]->meanCost()))
                best[r.task.workloadKey] = &r;
        int withPrefetch = 0, checked = 0;
        for (const auto& t : tasks) {
            auto it = best.find(graph::legacyTvmWorkloadKey(t.dag));
            if (it == best.end()) continue;
            const State s = inferBound(replaySteps(t.dag, stepsFromJson(it->second->steps)));
            const LayoutRewrite rw = rewriteLayout(t.dag, s, LayoutRewriteOption::RewriteForPreTransformed);
            const std::vector<int> weightsBefore = weightArgIndices(t.dag);
            LoweredFunc f = lowerState(rw.dag, rw.state);
            QCOMPARE(f.weightArgs, weightsBefore);  // rewritten or not, the same arguments
            if (rw.layouts.empty()) continue;
            QCOMPARE(f.weightArgs, std::vector<int>{rw.layouts[0].tensorIndex});
            std::vector<Buffer> weights;
            for (int i : f.weightArgs) weights.push_back(f.args[size_t(i)]);
            int inserted = 0;
            insertWeightPrefetch(expandUnrolled(unrollLoops(f.body)), weights, {}, &inserted);
            if (inserted == 0) continue;
            ++withPrefetch;
            if (checked >= 3) continue;  // compile and run a few (time)
            ++checked;
            const codegen::CompileOptions co{true, false, {}};
            const codegen::CompiledKernel with = codegen::compile(f, codegen::Target::host(), co);
            LoweredFunc plain = f;
            plain.weightArgs.clear();
            const codegen::CompiledKernel without = codegen::compile(plain, codegen::Target::host(), co);
            QVERIFY(with.llvmIr.find("@llvm.prefetch") != std::string::npos);
            QVERIFY(without.llvmIr.find("@llvm.prefetch") == std::string::npos);
            QVERIFY(with.key != without.key);
            const std::vector<float> a = run(with, f, 11), b = run(without, plain, 11);
            QVERIFY(!a.empty());
            QCOMPARE(a.size(), b.size());
            QVERIFY2(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0, t.desc.c_str());
        }
        // Most of resnet-18's convolutions (direct and winograd) stream their weights block by block.
        qInfo("%d of the log's kernels prefetch their weights", withPrefetch);
        QVERIFY2(withPrefetch >= 8, std::to_string(withPrefetch).c_str());
        QCOMPARE(checked, 3);
    }
};

QTEST_APPLESS_MAIN(TestPrefetch)
#include "tst_prefetch.moc"
