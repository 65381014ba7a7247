// SPDX-License-Identifier: Apache-2.0
// Benchmark (not a test): the four AutoTVM tuners at equal trials. Acceptance question of the
// AutoTVM issue: "The four tuners compared at equal trials (best GFLOPS after 200 trials, median of
// 3 seeds) on three conv tasks".
//
// What it measures. For each task (default: three resnet-18 NCHW B1 convs of conv2d_NCHWc.x86,
// 3x3 64x56x56, 3x3 256x14x14 and 1x1 stride 2 64->128), each seed and each tuner (default: xgb =
// XGBTuner with itervar features and reg loss, ga = GATuner(pop 50), random, gridsearch; any name of
// autotvm::tunerNames()), the task is tuned for N trials (default 200) as `tunebench-cli autotvm
// tune` tunes it (this CPU, LocalBuilder + LocalRunner, number 10, repeat 1, batches of the
// hardware thread count). The tuners of one seed run back to back, so load drift on this shared
// machine hits them alike. Per run: the best GFLOPS after N trials and the best-so-far curve.
//
// The table (one per task, then a summary): per tuner the best GFLOPS of each seed and their
// median, and the trials each seed needed to reach 90% of the best GFLOPS any run found on that
// task (">N" when it did not), with their median. Gridsearch ignores the seed (it is
// deterministic), so its seeds differ only by timing noise.
//
// How long: 3 tasks x 4 tuners x 3 seeds x 200 trials = 7200 measurements, about 0.2-0.3 s each
// for these convs on a 2-core machine (the xgb tuner adds its model fits): about 40 minutes.
// --trials 16 --seeds 0 checks the wiring in about half a minute.
//
//   compare_tuners [--tasks r18_3x3_56,r18_3x3_14,r18_1x1_s2] [--tuners xgb,ga,random,gridsearch]
//                  [--seeds 0,1,2] [--trials 200] [--goal 0.9] [--n-parallel N] [--number 10]
//                  [--repeat 1] [--min-repeat-ms 0] [--timeout 10] [--log-dir DIR]
// --log-dir writes every run's records to DIR/<task>_<tuner>_s<seed>.log (AutoTVM v0.2 lines).
#include <filesystem>

#include "autotvm_bench.h"
#include "engine/record/record_io.h"

using namespace tb;

namespace {

const char* kUsage =
    "Usage: compare_tuners [--tasks T,...] [--tuners xgb,ga,random,gridsearch] [--seeds 0,1,2]\n"
    "                      [--trials 200] [--goal 0.9] [--n-parallel N] [--number 10] [--repeat 1]\n"
    "                      [--min-repeat-ms 0] [--timeout 10] [--log-dir DIR]\n"
    "Tunes each task with each tuner and seed for --trials trials and prints, per task and tuner, the\n"
    "best GFLOPS per seed and their median, and the trials to reach --goal x the task's best.\n";

std::string trialsText(const std::optional<int>& t, int nTrial) {
    return t ? std::to_string(*t) : ">" + std::to_string(nTrial);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const bench::BenchArgs a(argc, argv, kUsage);
        const auto taskNames = a.list("tasks", "r18_3x3_56,r18_3x3_14,r18_1x1_s2");
        const auto tuners = a.list("tuners", "xgb,ga,random,gridsearch");
        const auto seeds = a.list("seeds", "0,1,2");
        const int nTrial = a.num("trials", 200);
        const double goal = a.real("goal", 0.9);
        const std::string logDir = a.str("log-dir", "");
        bench::Measurer m(a);
        if (!logDir.empty()) std::filesystem::create_directories(logDir);
        const auto t0 = std::chrono::steady_clock::now();

        // summary[tuner][task] = (median best, median trials to goal)
        std::map<std::string, std::map<std::string, std::pair<double, double>>> summary;
        for (const std::string& tn : taskNames) {
            auto it = bench::resnet18Convs().find(tn);
            if (it == bench::resnet18Convs().end()) a.fail(("unknown task " + tn + " (" + bench::knownConvs() + ")").c_str());
            const autotvm::Task task = m.task("conv2d_NCHWc.x86", it->second);
            std::printf("== %s: conv2d_NCHWc.x86 %s, %lld configs, %.1f MFLOP\n", tn.c_str(), it->second.dump().c_str(),
                        static_cast<long long>(task.space.size()), task.flop / 1e6);
            std::map<std::string, std::vector<bench::TuneRun>> runs;
            for (const std::string& seed : seeds)
                for (const std::string& tuner : tuners) {
                    auto t = autotvm::makeTuner(tuner, task, std::stoull(seed));
                    bench::TuneRun run = bench::tune(*t, task, nTrial, m);
                    std::printf("  %-12s seed %s: best %8.2f GFLOPS after %zu trials, %d failed (%.0f s)\n",
                                tuner.c_str(), seed.c_str(), run.best(), run.bestSoFar.size(), run.failed, run.seconds);
                    std::fflush(stdout);
                    if (!logDir.empty()) {
                        record::RecordWriter w(logDir + "/" + tn + "_" + tuner + "_s" + seed + ".log",
                                               record::RecordWriter::Mode::Truncate);
                        for (const auto& r : run.records) w.append(r);
                    }
                    runs[tuner].push_back(std::move(run));
                }
            double bestOverall = 0;
            for (const auto& [tuner, rs] : runs)
                for (const auto& r : rs) bestOverall = std::max(bestOverall, r.best());
            std::printf("\n  %-12s %-28s %8s   trials to %.0f%% of %.2f GFLOPS (median)\n", "tuner", "best GFLOPS per seed",
                        "median", 100 * goal, bestOverall);
            for (const std::string& tuner : tuners) {
                std::string bests, trials;
                std::vector<double> b, tr;
                for (const auto& r : runs[tuner]) {
                    char buf[32];
                    std::snprintf(buf, sizeof buf, "%8.2f", r.best());
                    bests += buf;
                    b.push_back(r.best());
                    const auto to = r.trialsTo(goal * bestOverall);
                    trials += " " + trialsText(to, nTrial);
                    tr.push_back(to ? double(*to) : std::numeric_limits<double>::infinity());
                }
                const double mb = bench::median(b), mt = bench::median(tr);
                summary[tuner][tn] = {mb, mt};
                std::printf("  %-12s %-28s %8.2f  %s (%s)\n", tuner.c_str(), bests.c_str(), mb, trials.c_str(),
                            std::isinf(mt) ? (">" + std::to_string(nTrial)).c_str() : std::to_string(int(mt)).c_str());
            }
            std::printf("\n");
        }
        std::printf("Summary: median best GFLOPS after %d trials / median trials to %.0f%% of the task's best, %zu seed(s)\n",
                    nTrial, 100 * goal, seeds.size());
        std::printf("  %-12s", "tuner");
        for (const auto& tn : taskNames) std::printf(" %22s", tn.c_str());
        std::printf("\n");
        for (const std::string& tuner : tuners) {
            std::printf("  %-12s", tuner.c_str());
            for (const auto& tn : taskNames) {
                const auto [mb, mt] = summary[tuner][tn];
                const std::string t = std::isinf(mt) ? ">" + std::to_string(nTrial) : std::to_string(int(mt));
                std::printf(" %13.2f / %6s", mb, t.c_str());
            }
            std::printf("\n");
        }
        std::printf("Wall time %.0f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
