// SPDX-License-Identifier: Apache-2.0
// Benchmark (not a test): TVM's 2021 resnet-18 tuning log replayed on our tasks.
//
// Default mode: for each of the 24 workloads, the log's best schedule is lowered and compiled by
// TuneBench and timed in the sandbox with TVM's timer semantics; we print our latency beside the
// one TVM measured on its 8-core machine, twice: with the weights in their original layout, and
// as TVM timed them (the records say layout_rewrite_option 2): the weights pre-transformed into
// the layout the schedule's loops read (schedule/layout_rewrite.h; random data in the new shape).
// The CPUs differ, so compare the ratios between workloads, not the absolute numbers.
//
// --all: every record whose workload key (graph::legacyTvmWorkloadKey) matches one of our tasks is
// replayed, lowered, compiled, run once in the sandbox worker and checked against the reference
// interpreter (same random inputs per workload; the output must satisfy tst_replay_tvm_log's
// criterion max|got - want| <= 1e-4 * max(max|want|, 1)). Prints, per workload, the counts
// (records, lowered, compiled, ran, equal) and the LLVM compile-time distribution, then the totals.
// --compile-only: as --all but stops after compiling (compile-time distribution only).
//
// Options (any order): [LOG_PATH] [--all] [--compile-only] [--tasks=i,j,...] [--slow=SECONDS]
//   [--jobs=N] [--dump=RECORD_INDEX:DIR] [--no-rewrite]
//   --no-rewrite  default mode: time only the original layout (the rewrite columns repeat it)
//   --runs    default mode: time each kernel this many times, alternating original and rewritten,
//             and keep each one's fastest (default 1; on a loaded machine)
//   --tasks   restrict to these task indices (the "task" column)
//   --slow    list every record whose compile takes longer (default 5 s)
//   --jobs    lower + compile on this many threads (default 1; compile times are per-thread wall
//             times, so use more only on an otherwise idle machine with that many cores)
//   --dump    write lowered IR, optimised LLVM IR and assembly of one record (0-based index in the
//             log) to DIR/record<N>.{lowered,ll,s,O0.ll} (O0.ll: the module before LLVM's pipeline)
//             and print its compile time; with a layout-free weight also the kernel that reads it
//             rewritten, DIR/record<N>.rewritten.{lowered,s}
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/measure/local_runner.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/layout_rewrite.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"
#include "engine/te/interpreter.h"

using namespace tb;

namespace {

struct Options {
    std::string path = "../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json";
    bool all = false;
    bool compileOnly = false;
    bool noRewrite = false;
    int runs = 1;
    std::set<size_t> tasks;  // empty = all
    double slowS = 5;
    long dumpRecord = -1;
    int jobs = 1;
    std::string dumpDir;
};

Options parseArgs(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--all") {
            o.all = true;
        } else if (a.rfind("--runs=", 0) == 0) {
            o.runs = std::max(1, std::stoi(a.substr(7)));
        } else if (a == "--no-rewrite") {
            o.noRewrite = true;
        } else if (a == "--compile-only") {
            o.all = o.compileOnly = true;
        } else if (a.rfind("--tasks=", 0) == 0) {
            std::stringstream ss(a.substr(8));
            for (std::string t; std::getline(ss, t, ',');) o.tasks.insert(std::stoul(t));
        } else if (a.rfind("--jobs=", 0) == 0) {
            o.jobs = std::max(1, std::stoi(a.substr(7)));
        } else if (a.rfind("--slow=", 0) == 0) {
            o.slowS = std::stod(a.substr(7));
        } else if (a.rfind("--dump=", 0) == 0) {
            const std::string v = a.substr(7);
            const size_t c = v.find(':');
            o.dumpRecord = std::stol(v.substr(0, c));
            o.dumpDir = c == std::string::npos ? "." : v.substr(c + 1);
        } else if (a.rfind("--", 0) == 0) {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            std::exit(2);
        } else {
            o.path = a;
        }
    }
    return o;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const size_t k = size_t(std::ceil(p * double(v.size()))) - (p > 0 ? 1 : 0);
    return v[std::min(k, v.size() - 1)];
}

std::string stats(const std::vector<double>& v) {
    char buf[160];
    double sum = 0;
    for (double x : v) sum += x;
    std::snprintf(buf, sizeof buf, "median %.3f  p99 %.3f  max %.3f  mean %.3f  sum %.1f s", percentile(v, 0.5),
                  percentile(v, 0.99), percentile(v, 1.0), v.empty() ? NAN : sum / double(v.size()), sum);
    return buf;
}

struct Counts {
    int records = 0, lowered = 0, compiled = 0, ran = 0, equal = 0;
    std::vector<double> compileS;
    double bestMs = NAN;
};

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parseArgs(argc, argv);
    auto log = record::readMeasureRecords(opt.path);
    auto tasks = graph::extractTasks(graph::makeNetwork("resnet-18", 1, "NHWC"));
    std::map<std::string, size_t> taskOfKey;
    for (size_t i = 0; i < tasks.size(); ++i) taskOfKey[graph::legacyTvmWorkloadKey(tasks[i].dag)] = i;
    const codegen::Target host = codegen::Target::host();

    if (opt.dumpRecord >= 0) {
        const auto& rec = log.records.at(size_t(opt.dumpRecord));
        const size_t ti = taskOfKey.at(rec.task.workloadKey);
        const auto& dag = tasks[ti].dag;
        lower::LoweredFunc f = lower::lowerState(dag, inferBound(replaySteps(dag, stepsFromJson(rec.steps))));
        auto k = codegen::compile(f, host, codegen::CompileOptions{true, true, {}});
        const std::string base = opt.dumpDir + "/record" + std::to_string(opt.dumpRecord);
        std::ofstream(base + ".lowered") << k.loweredIr;
        std::ofstream(base + ".ll") << k.llvmIr;
        std::ofstream(base + ".s") << k.assembly;
        // The module before LLVM's optimisation pipeline (for `opt -O3 -time-passes` and friends).
        codegen::Target o0 = host;
        o0.optLevel = 0;
        std::ofstream(base + ".O0.ll") << codegen::compile(f, o0, codegen::CompileOptions{true, false, {}}).llvmIr;
        // The same schedule reading its weights in the rewritten layout (as TVM timed it).
        const LayoutRewrite rw = rewriteLayout(dag, inferBound(replaySteps(dag, stepsFromJson(rec.steps))),
                                               LayoutRewriteOption::RewriteForPreTransformed);
        if (rw.rewritten()) {
            auto kr = codegen::compile(lower::lowerState(rw.dag, rw.state), host, codegen::CompileOptions{true, true, {}});
            std::ofstream(base + ".rewritten.lowered") << kr.loweredIr;
            std::ofstream(base + ".rewritten.s") << kr.assembly;
        }
        std::printf("record %ld: task %zu (%s), compile %.3f s (with IR + assembly), lowered %zu B, LLVM IR %zu B, asm %zu B -> %s.*\n",
                    opt.dumpRecord, ti, tasks[ti].desc.c_str(), k.compileSeconds, k.loweredIr.size(), k.llvmIr.size(),
                    k.assembly.size(), base.c_str());
        return 0;
    }

    if (!opt.all) {
        std::map<size_t, size_t> best;
        for (size_t r = 0; r < log.records.size(); ++r) {
            const auto& rec = log.records[r];
            auto it = taskOfKey.find(rec.task.workloadKey);
            if (it == taskOfKey.end() || !rec.valid()) continue;
            if (!opt.tasks.empty() && !opt.tasks.count(it->second)) continue;
            if (!best.count(it->second) || rec.meanCost() < log.records[best[it->second]].meanCost()) best[it->second] = r;
        }
        measure::RunnerOptions ro;
        ro.repeat = 3;
        ro.minRepeatMs = 100;
        measure::LocalRunner runner(ro);
        std::printf("%-4s %-48s %8s %10s %10s %8s %10s %8s %8s %7s %6s  %s\n", "task", "description", "GFLOP", "TVM log ms",
                    "ours ms", "ours/TVM", "rewrite ms", "rw/TVM", "rw GFLOPS", "compile", "record", "rewritten layout");
        double sumLog = 0, sumOurs = 0, sumRw = 0, logSum2 = 0, logSumRw = 0;
        int n = 0;
        for (const auto& [ti, ri] : best) {
            const auto& dag = tasks[ti].dag;
            const auto& rec = log.records[ri];
            State s = inferBound(replaySteps(dag, stepsFromJson(rec.steps)));
            auto k = codegen::compile(lower::lowerState(dag, s), host, codegen::CompileOptions{false, false, {}});
            // As TVM timed the record: with the weights already in the layout its loops read
            // (layout_rewrite_option 2; random weights of the new shape), unless --no-rewrite.
            std::optional<codegen::CompiledKernel> kr;
            std::string layout = "-";
            if (!opt.noRewrite && rec.task.layoutRewriteOption != 0) {
                const LayoutRewrite rw = rewriteLayout(dag, s, LayoutRewriteOption::RewriteForPreTransformed);
                if (rw.rewritten()) {
                    kr = codegen::compile(lower::lowerState(rw.dag, rw.state), host, codegen::CompileOptions{false, false, {}});
                    layout = rw.layouts[0].newLayout();
                }
            }
            // --runs: the two kernels alternate, each keeps its fastest run (a shared machine's
            // load only ever adds time).
            measure::MeasureResult m, mr;
            auto keepFaster = [](measure::MeasureResult& best, measure::MeasureResult r) {
                if (best.costs.empty() || (r.ok() && (!best.ok() || r.meanCost() < best.meanCost()))) best = std::move(r);
            };
            for (int run = 0; run < opt.runs; ++run) {
                keepFaster(m, runner.runOne(k));
                if (kr) keepFaster(mr, runner.runOne(*kr));
            }
            if (!kr) mr = m;
            const double logMs = rec.meanCost() * 1e3, ours = m.ok() ? m.meanCost() * 1e3 : NAN;
            const double rwMs = mr.ok() ? mr.meanCost() * 1e3 : NAN;
            std::printf("%-4zu %-48s %8.4f %10.4f %10.4f %8.2f %10.4f %8.2f %8.1f %7.2f %6zu  %s\n", ti,
                        tasks[ti].desc.c_str(), tasks[ti].flop / 1e9, logMs, ours, ours / logMs, rwMs, rwMs / logMs,
                        tasks[ti].flop / (rwMs * 1e-3) / 1e9, k.compileSeconds, ri, layout.c_str());
            std::fflush(stdout);
            if (m.ok() && mr.ok()) {
                sumLog += logMs * tasks[ti].weight;
                sumOurs += ours * tasks[ti].weight;
                sumRw += rwMs * tasks[ti].weight;
                logSum2 += std::log(ours / logMs);
                logSumRw += std::log(rwMs / logMs);
                ++n;
            }
        }
        std::printf("weighted total: TVM log %.3f ms, ours %.3f ms, ours with the layout rewrite %.3f ms; geometric-mean "
                    "ratio ours/TVM %.2f, with the rewrite %.2f, over %d workloads\n",
                    sumLog, sumOurs, sumRw, std::exp(logSum2 / std::max(n, 1)), std::exp(logSumRw / std::max(n, 1)), n);
        return 0;
    }

    // --all / --compile-only: every matching record, grouped by task.
    std::map<size_t, std::vector<size_t>> recordsOf;
    int unmatched = 0;
    for (size_t r = 0; r < log.records.size(); ++r) {
        auto it = taskOfKey.find(log.records[r].task.workloadKey);
        if (it == taskOfKey.end()) {
            ++unmatched;
            continue;
        }
        if (opt.tasks.empty() || opt.tasks.count(it->second)) recordsOf[it->second].push_back(r);
    }
    // Check-only runs: one warm-up call (checked) plus one timed call.
    measure::RunnerOptions ro;
    ro.number = 1;
    ro.repeat = 1;
    ro.minRepeatMs = 0;
    ro.timeoutS = 60;
    std::unique_ptr<measure::LocalRunner> runner;
    if (!opt.compileOnly) runner = std::make_unique<measure::LocalRunner>(ro);

    std::printf("%-4s %-48s %7s %7s %8s %5s %6s   compile time (s)\n", "task", "description", "records", "lowered", "compiled",
                "ran", "equal");
    Counts total;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& [ti, recs] : recordsOf) {
        const auto& dag = tasks[ti].dag;
        Counts c;
        // Reference output for this workload's inputs (the interpreter runs once per workload).
        auto check = std::make_shared<measure::CheckSpec>();
        if (!opt.compileOnly) {
            std::vector<te::Buffer> inputs;
            for (const auto& t : dag.inputs()) {
                te::Buffer b = te::Buffer::zeros(t.shape());
                for (auto& x : b.data) x = u(rng);
                inputs.push_back(b);
                check->inputs.push_back(b.data);
                check->expected.emplace_back();
            }
            std::vector<te::Buffer> expected = te::evaluate(dag, inputs);
            TB_CHECK(expected.size() == dag.outputs().size()) << "interpreter output count";
            for (size_t o = 0; o < expected.size(); ++o) {
                check->inputs.emplace_back();
                check->expected.emplace_back();
            }
            // As tst_replay_tvm_log: only the last output is compared, with a tolerance relative to
            // the largest magnitude of the reference.
            const auto& want = expected.back().data;
            double maxAbs = 0;
            for (float x : want) maxAbs = std::max(maxAbs, double(std::fabs(x)));
            check->expected.back() = want;
            check->rtol = 0;
            check->atol = 1e-4 * std::max(maxAbs, 1.0);
        }
        // Phase 1: lower and compile every record of the task (on opt.jobs threads).
        struct Built {
            bool lowered = false;
            std::unique_ptr<codegen::CompiledKernel> kernel;
            std::string error;
        };
        std::vector<Built> built(recs.size());
        std::atomic<size_t> next{0};
        auto worker = [&] {
            for (size_t i; (i = next++) < recs.size();) {
                const auto& rec = log.records[recs[i]];
                lower::LoweredFunc f;
                try {
                    f = lower::lowerState(dag, inferBound(replaySteps(dag, stepsFromJson(rec.steps))));
                    built[i].lowered = true;
                    built[i].kernel = std::make_unique<codegen::CompiledKernel>(
                        codegen::compile(f, host, codegen::CompileOptions{false, false, {}}));
                } catch (const std::exception& e) {
                    built[i].error = e.what();
                }
            }
        };
        std::vector<std::thread> threads;
        for (int j = 1; j < opt.jobs; ++j) threads.emplace_back(worker);
        worker();
        for (auto& t : threads) t.join();
        // Phase 2: count, and run + check one at a time.
        for (size_t i = 0; i < recs.size(); ++i) {
            const size_t r = recs[i];
            ++c.records;
            if (!built[i].lowered) {
                std::printf("  record %zu: lowering failed: %s\n", r, built[i].error.c_str());
                continue;
            }
            ++c.lowered;
            if (!built[i].kernel) {
                std::printf("  record %zu: compile failed: %s\n", r, built[i].error.c_str());
                continue;
            }
            const codegen::CompiledKernel& k = *built[i].kernel;
            ++c.compiled;
            c.compileS.push_back(k.compileSeconds);
            if (k.compileSeconds > opt.slowS)
                std::printf("  record %zu: slow compile %.2f s (%zu B lowered IR)\n", r, k.compileSeconds, k.loweredIr.size());
            if (opt.compileOnly) continue;
            measure::MeasureResult m = runner->runOne(k, check.get());
            if (m.errorNo != measure::MeasureErrorNo::RuntimeDevice && m.errorNo != measure::MeasureErrorNo::RunTimeout &&
                m.errorNo != measure::MeasureErrorNo::CompileDevice)
                ++c.ran;
            if (m.ok()) {
                ++c.equal;
                c.bestMs = std::isnan(c.bestMs) ? m.meanCost() * 1e3 : std::min(c.bestMs, m.meanCost() * 1e3);
            } else {
                std::printf("  record %zu: %s %s\n", r, measure::errorName(m.errorNo), m.errorMsg.substr(0, 200).c_str());
            }
        }
        std::printf("%-4zu %-48s %7d %7d %8d %5d %6d   %s\n", ti, tasks[ti].desc.c_str(), c.records, c.lowered, c.compiled, c.ran,
                    c.equal, stats(c.compileS).c_str());
        std::fflush(stdout);
        total.records += c.records;
        total.lowered += c.lowered;
        total.compiled += c.compiled;
        total.ran += c.ran;
        total.equal += c.equal;
        total.compileS.insert(total.compileS.end(), c.compileS.begin(), c.compileS.end());
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-4s %-48s %7d %7d %8d %5d %6d   %s\n", "all", "total", total.records, total.lowered, total.compiled, total.ran,
                total.equal, stats(total.compileS).c_str());
    std::printf("records of other workloads (skipped): %d; wall time %.0f s\n", unmatched, wall);
    const bool ok = total.records == total.lowered && total.lowered == total.compiled &&
                    (opt.compileOnly || (total.compiled == total.ran && total.ran == total.equal));
    return ok ? 0 : 1;
}
