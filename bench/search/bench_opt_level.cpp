// SPDX-License-Identifier: Apache-2.0
// Benchmark (not a test): does a cheaper LLVM pipeline build candidates as fast as -O3 does?
//
// For the measured states of a tuning log (`tunebench-cli tune --log`), it takes the `--top` fastest
// and `--spread` more spread evenly over the rest (slow candidates matter to the search as well),
// lowers each one (weights in the layout the schedule reads, when its record says layout_rewrite_option
// 2, as the tuner measures it), compiles it at -opt-level 3 and at `--level` (LLVM's pipeline and codegen level
// both follow Target::optLevel), and prints per level the compile time split into LLVM's
// optimisation pipeline and machine code emission. Then it times both kernels of every state in the
// sandbox worker (TVM's timer: number 3, min_repeat_ms 100), alternating A B A B for `--rounds`, and
// prints each state's median latencies and their ratio, beside the ratio of two O3 runs (the noise).
//
// Usage: bench_opt_level LOG [--network=resnet-18 | --onnx=FILE] [--level=1 | --pipeline=TEXT] [--top=8 | --per-task=K] [--spread=8]
//                        [--rounds=3] [--cold]
// --pipeline=TEXT: the second build is -opt-level 3 (the same machine code emission) with LLVM pipeline
// TEXT (`opt -passes=` syntax, e.g. 'default<O3>'); the first is the kernel pipeline, or
// TB_LLVM_PIPELINE when set. TB_LLVM_PASS_TIMES=1 prints the time of every pass at exit.
// --dump-dir=DIR writes state i's lowered IR and both optimised LLVM modules to DIR/i.*.
// --per-task=K takes each task's K fastest states instead of the log's --top fastest (a network's
// log: the fastest states overall are its tiny tasks).
// --rounds=0 compiles only (compile-time sums, no timing).
// --cold: the "low" column times the O3 kernel itself with TVM's CPU cache flush (every argument but
// the first flushed before each call: number 1, repeat 40), the O3 column warm with the same
// counts. It shows how much each state loses when its weights arrive from DRAM, as a network's
// kernels see them (issue 15).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/lower/lower_state.h"
#include "engine/measure/local_runner.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/layout_rewrite.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"
#include "engine/tuning/tuning_job.h"

using namespace tb;

namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct Built {
    std::shared_ptr<const codegen::CompiledKernel> o3, o3b, low;
    std::vector<double> tO3, tO3b, tLow;  // per-round mean latencies (s)
};

}  // namespace

int main(int argc, char** argv) {
    try {
        std::string log, network = "resnet-18", onnx;
        int level = 1, top = 8, spread = 8, rounds = 3, perTask = 0;
        std::string pipeline, dumpDir;
        bool cold = false;
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto val = [&](const char* p) { return a.substr(std::string(p).size()); };
            if (a.rfind("--network=", 0) == 0) network = val("--network=");
            else if (a.rfind("--onnx=", 0) == 0) onnx = val("--onnx=");
            else if (a.rfind("--level=", 0) == 0) level = std::stoi(val("--level="));
            else if (a.rfind("--pipeline=", 0) == 0) pipeline = val("--pipeline="), level = 3;
            else if (a.rfind("--top=", 0) == 0) top = std::stoi(val("--top="));
            else if (a.rfind("--spread=", 0) == 0) spread = std::stoi(val("--spread="));
            else if (a.rfind("--rounds=", 0) == 0) rounds = std::max(0, std::stoi(val("--rounds=")));
            else if (a.rfind("--per-task=", 0) == 0) perTask = std::stoi(val("--per-task="));
            else if (a.rfind("--dump-dir=", 0) == 0) dumpDir = val("--dump-dir=");
            else if (a == "--cold") cold = true;
            else if (a.rfind("--", 0) != 0) log = a;
            else TB_USER_ERROR() << "unknown option '" << a << "'";
        }
        TB_USER_CHECK(!log.empty()) << "usage: bench_opt_level LOG [--network=resnet-18 | --onnx=FILE] [--level=1 | --pipeline=TEXT] [--top=8 | --per-task=K] [--spread=8] [--rounds=3] [--cold]";
        TB_USER_CHECK(level >= 0 && level <= 3) << "--level must be 0..3";
        auto contents = record::readMeasureRecords(log);
        std::vector<record::MeasureRecord> ok;
        for (auto& r : contents.records)
            if (r.errorNo == 0) ok.push_back(r);
        TB_USER_CHECK(!ok.empty()) << "no successful record in " << log;
        std::sort(ok.begin(), ok.end(), [](const auto& a, const auto& b) { return a.meanCost() < b.meanCost(); });
        std::vector<record::MeasureRecord> pick(ok.begin(), ok.begin() + std::min<ptrdiff_t>(top, ptrdiff_t(ok.size())));
        if (perTask > 0) {  // each task's perTask fastest instead of the log's fastest
            pick.clear();
            std::map<std::string, int> taken;
            std::vector<record::MeasureRecord> others;
            for (auto& r : ok) (taken[r.task.workloadKey]++ < perTask ? pick : others).push_back(r);
            ok = pick;
            ok.insert(ok.end(), others.begin(), others.end());
        }
        const size_t first = pick.size(), rest = ok.size() - first;
        for (int k = 0; k < spread && size_t(k) < rest; ++k)
            pick.push_back(ok[first + size_t((double(k) + 0.5) / double(spread) * double(rest))]);

        tuning::NetworkSource src;
        src.zooName = network;
        src.onnxPath = onnx;
        graph::TaskExtractionOptions eo;
        eo.target = ok.front().task.target;
        std::map<std::string, te::ComputeDAG> dagOf;
        for (auto& e : graph::extractTasks(tuning::loadNetwork(src), eo)) dagOf.emplace(e.workloadKey, e.dag);

        codegen::Target t3 = codegen::Target::host(), tl = codegen::Target::host();
        t3.optLevel = 3;
        tl.optLevel = level;
        codegen::CompileOptions coL{!dumpDir.empty(), false, {}};
        coL.llvmPipeline = pipeline;
        const std::string nameL = pipeline.empty() ? "O" + std::to_string(level) : "B";
        const codegen::CompileOptions co{!dumpDir.empty(), false, {}};
        // The "O3" column is -opt-level 3 as the tuner builds it: say which LLVM pipeline that is.
        std::printf("O3: -opt-level 3, pipeline %s\n", codegen::llvmPipeline(t3, co).c_str());
        if (!pipeline.empty()) std::printf("B: -opt-level 3, pipeline %s\n", pipeline.c_str());
        if (!dumpDir.empty()) std::filesystem::create_directories(dumpDir);
        std::vector<Built> built;
        std::vector<double> opt3, emit3, tot3, optL, emitL, totL;
        for (const auto& r : pick) {
            auto it = dagOf.find(r.task.workloadKey);
            TB_USER_CHECK(it != dagOf.end()) << "a record's workload is not a task of " << (onnx.empty() ? network : onnx);
            // As the tuner's measurer builds it: weights in the layout the schedule reads them when the
            // record's task says layout_rewrite_option 2 (tuning_job.cpp), else strided reads of a dense
            // weight compile to gathers the tuner never builds.
            const State st = inferBound(replaySteps(it->second, stepsFromJson(r.steps)));
            const LayoutRewrite rw = rewriteLayout(it->second, st, LayoutRewriteOption(r.task.layoutRewriteOption));
            const auto f = lower::lowerState(rw.dag, rw.state);
            Built b;
            b.o3 = std::make_shared<codegen::CompiledKernel>(codegen::compile(f, t3, co));
            b.o3b = b.o3;
            b.low = std::make_shared<codegen::CompiledKernel>(codegen::compile(f, tl, coL));
            opt3.push_back(b.o3->optimizeSeconds), emit3.push_back(b.o3->emitSeconds), tot3.push_back(b.o3->compileSeconds);
            optL.push_back(b.low->optimizeSeconds), emitL.push_back(b.low->emitSeconds), totL.push_back(b.low->compileSeconds);
            if (!dumpDir.empty()) {  // state i: its lowered IR and both LLVM modules, optimised
                const std::string base = dumpDir + "/" + std::to_string(built.size());
                std::ofstream(base + ".lowered.txt") << r.task.workloadKey << "\n" << b.o3->loweredIr;
                std::ofstream(base + ".O3.ll") << b.o3->llvmIr;
                std::ofstream(base + "." + nameL + ".ll") << b.low->llvmIr;
            }
            built.push_back(std::move(b));
        }
        std::printf("%zu states of %zu successful records; compile (median s): total / LLVM pipeline / emission\n",
                    built.size(), ok.size());
        std::printf("  O3: %.3f / %.3f / %.3f\n  %s: %.3f / %.3f / %.3f\n", median(tot3), median(opt3), median(emit3),
                    nameL.c_str(), median(totL), median(optL), median(emitL));
        auto sum = [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return s; };
        auto slowShare = [](std::vector<double> v, double above) {
            double all = 0, slow = 0;
            for (double x : v) all += x, slow += x > above ? x : 0;
            return all > 0 ? slow / all : 0;
        };
        std::printf("compile sum (s): O3 %.2f, %s %.2f; share of the sum in compiles over 0.5 s: O3 %.0f%%, %s %.0f%%\n",
                    sum(tot3), nameL.c_str(), sum(totL), 100 * slowShare(tot3, 0.5), nameL.c_str(), 100 * slowShare(totL, 0.5));
        std::printf("  of which LLVM pipeline / emission (s): O3 %.2f / %.2f, %s %.2f / %.2f\n", sum(opt3), sum(emit3), nameL.c_str(),
                    sum(optL), sum(emitL));
        if (rounds == 0) return 0;
        measure::RunnerOptions ro;  // tunebench-cli tune's defaults
        if (cold) ro.number = 1, ro.repeat = 40, ro.minRepeatMs = 0;
        measure::LocalRunner runner(ro);
        measure::RunnerOptions rf = ro;
        rf.enableCpuCacheFlush = true;
        measure::LocalRunner flushRunner(rf);
        for (int round = 0; round < rounds; ++round)
            for (auto& b : built) {
                auto a = runner.runOne(*b.o3);
                auto l = cold ? flushRunner.runOne(*b.o3) : runner.runOne(*b.low);
                auto a2 = runner.runOne(*b.o3b);
                b.tO3.push_back(a.ok() ? a.meanCost() : NAN);
                b.tLow.push_back(l.ok() ? l.meanCost() : NAN);
                b.tO3b.push_back(a2.ok() ? a2.meanCost() : NAN);
            }
        std::printf("%-4s %12s %12s %9s %9s\n", "#", cold ? "warm (ms)" : "O3 (ms)", cold ? "cold (ms)" : "low (ms)",
                    cold ? "cold/warm" : "low/O3", "O3/O3");
        double logRatio = 0, logNoise = 0, worst = 0;
        for (size_t i = 0; i < built.size(); ++i) {
            const double a = median(built[i].tO3), l = median(built[i].tLow), a2 = median(built[i].tO3b);
            std::printf("%-4zu %12.4f %12.4f %9.3f %9.3f\n", i, a * 1e3, l * 1e3, l / a, a2 / a);
            logRatio += std::log(l / a);
            logNoise += std::abs(std::log(a2 / a));
            worst = std::max(worst, l / a);
        }
        std::printf("geomean low/O3 %.3f, worst %.3f; mean |log O3/O3| noise %.3f\n", std::exp(logRatio / double(built.size())),
                    worst, logNoise / double(built.size()));
        // What a tuner keeps: each task's best state under either build. The sum is a network's
        // latency if every task ran once (the log's weights, not the network's call counts).
        std::map<std::string, std::pair<double, double>> best;
        for (size_t i = 0; i < built.size(); ++i) {
            auto [it, fresh] = best.try_emplace(pick[i].task.workloadKey, INFINITY, INFINITY);
            it->second.first = std::min(it->second.first, median(built[i].tO3));
            it->second.second = std::min(it->second.second, median(built[i].tLow));
        }
        double sumA = 0, sumL = 0, logBest = 0;
        for (auto& [key, v] : best) sumA += v.first, sumL += v.second, logBest += std::log(v.second / v.first);
        std::printf("each task's best state (%zu tasks): sum %.4f ms (O3) vs %.4f ms (%s), ratio %.3f; geomean %.3f\n",
                    best.size(), sumA * 1e3, sumL * 1e3, cold ? "cold" : "low", sumL / sumA,
                    std::exp(logBest / double(best.size())));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_opt_level: %s\n", e.what());
        return 1;
    }
}
