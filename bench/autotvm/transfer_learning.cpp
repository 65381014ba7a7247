// SPDX-License-Identifier: Apache-2.0
// Benchmark (not a test): does transfer learning (TVM `tuner.load_history`, the tutorials'
// use_transfer_learning) help the XGB tuner on a new task?
//
// What it measures. Task A (default: resnet-18 conv 3x3 64x56x56, conv2d_NCHWc.x86) is tuned once
// with the XGB tuner for --source-trials trials; its records are the history. --source takes a
// list (A1,A2,...): each is tuned in turn and the history holds all their records, as the tmp log
// of TVM's tutorials does when use_transfer_learning tunes a network's tasks in sequence. Then, per seed, task
// B (default: the similar conv 3x3 128x28x28 of layer 2, the same template and schedule) is tuned
// for --trials trials twice, interleaved: without history, and with the XGB tuner's
// loadHistory(records of A, min_seed_records) before the first trial (a base model fitted on A's
// configs with their features computed on A; its maximums are B's first plan, its margins the prior
// of B's model). Tuners: xgb = itervar features (knob features do not carry over between shapes);
// --tuner picks another xgb variant. TVM needs 500 records of the template before it uses a
// history (min_seed_records); --min-seed-records lowers that for short runs.
//
// The table: per seed and mode, the best GFLOPS after 8, 16, 32, ... trials and at the end, and
// the trials to reach --goal (default 0.9) x the best GFLOPS any run of B found (">N" when never),
// with the medians over seeds. Transfer helps when the "with history" rows get there in fewer
// trials: without history the first plan_size (64) trials of an XGB tuner are random.
//
// How long: (source-trials + 2 x seeds x trials) measurements at 0.2-0.3 s each on a 2-core
// machine; the defaults (128 + 2 x 3 x 64) take about 3 minutes.
//
//   transfer_learning [--source r18_3x3_56[,r18_3x3_14...]] [--target r18_3x3_28] [--source-trials 128]
//                     [--trials 64] [--seeds 0,1,2] [--tuner xgb] [--min-seed-records 100]
//                     [--goal 0.9] [--n-parallel N] [--number 10] [--repeat 1]
//                     [--min-repeat-ms 0] [--timeout 10]
#include "autotvm_bench.h"

using namespace tb;

namespace {

const char* kUsage =
    "Usage: transfer_learning [--source T[,T...]] [--target T] [--source-trials 128] [--trials 64]\n"
    "                         [--seeds 0,1,2] [--tuner xgb] [--min-seed-records 100] [--goal 0.9]\n"
    "                         [--n-parallel N] [--number 10] [--repeat 1] [--min-repeat-ms 0] [--timeout 10]\n"
    "Tunes --source, then --target with and without the source's records as history, and prints the\n"
    "best GFLOPS over the trials and the trials to reach --goal x the target's best.\n";

}  // namespace

int main(int argc, char** argv) {
    try {
        const bench::BenchArgs a(argc, argv, kUsage);
        auto convTask = [&](const std::string& name) {
            auto it = bench::resnet18Convs().find(name);
            if (it == bench::resnet18Convs().end())
                a.fail(("unknown task " + name + " (" + bench::knownConvs() + ")").c_str());
            return it->second;
        };
        const std::string srcName = a.str("source", "r18_3x3_56"), dstName = a.str("target", "r18_3x3_28");
        const std::string tunerName = a.str("tuner", "xgb");
        if (tunerName.rfind("xgb", 0) != 0) a.fail("--tuner must be an xgb tuner (only they load history)");
        const int srcTrials = a.num("source-trials", 128), nTrial = a.num("trials", 64);
        const int minSeed = a.num("min-seed-records", 100);
        const double goal = a.real("goal", 0.9);
        const auto seeds = a.list("seeds", "0,1,2");
        bench::Measurer m(a);
        const auto t0 = std::chrono::steady_clock::now();

        // The history: every source task's records, as in TVM's tutorials, where the tmp log of the
        // tasks tuned so far is the transfer-learning history of the next one.
        bench::TuneRun history;
        std::vector<autotvm::Task> srcTasks;
        const auto srcNames = a.list("source", "r18_3x3_56");
        srcTasks.reserve(srcNames.size());
        for (const std::string& name : srcNames) {
            srcTasks.push_back(m.task("conv2d_NCHWc.x86", convTask(name)));
            auto srcTuner = autotvm::makeTuner(tunerName, srcTasks.back(), 1000);
            const bench::TuneRun run = bench::tune(*srcTuner, srcTasks.back(), srcTrials, m);
            std::printf("Source %s: %zu records, best %.2f GFLOPS, %d failed (%.0f s)\n", name.c_str(),
                        run.records.size(), run.best(), run.failed, run.seconds);
            history.records.insert(history.records.end(), run.records.begin(), run.records.end());
        }
        const autotvm::Task dst = m.task("conv2d_NCHWc.x86", convTask(dstName));

        struct Row {
            std::string seed;
            bool transfer;
            bench::TuneRun run;
        };
        std::vector<Row> rows;
        for (const std::string& seed : seeds)
            for (bool transfer : {false, true}) {
                auto t = autotvm::makeTuner(tunerName, dst, std::stoull(seed));
                if (transfer && !t->loadHistory(history.records, minSeed))
                    std::printf("  seed %s: the history was not used (fewer than %d usable records)\n", seed.c_str(), minSeed);
                rows.push_back({seed, transfer, bench::tune(*t, dst, nTrial, m)});
                std::printf("  seed %s %-17s best %8.2f GFLOPS, %d failed (%.0f s)\n", seed.c_str(),
                            transfer ? "with history:" : "without history:", rows.back().run.best(),
                            rows.back().run.failed, rows.back().run.seconds);
                std::fflush(stdout);
            }
        double bestOverall = 0;
        for (const auto& r : rows) bestOverall = std::max(bestOverall, r.run.best());
        std::vector<int> marks;
        for (int k = 8; k < nTrial; k *= 2) marks.push_back(k);
        marks.push_back(nTrial);

        std::printf("\nTarget %s after source %s (%zu records), tuner %s; best GFLOPS after n trials:\n",
                    dstName.c_str(), srcName.c_str(), history.records.size(), tunerName.c_str());
        std::printf("  %-6s %-9s", "seed", "history");
        for (int k : marks) std::printf(" %8s", ("n=" + std::to_string(k)).c_str());
        std::printf("   trials to %.0f%% of %.2f\n", 100 * goal, bestOverall);
        for (bool transfer : {false, true}) {
            std::vector<double> to;
            std::map<int, std::vector<double>> at;
            for (const auto& r : rows) {
                if (r.transfer != transfer) continue;
                std::printf("  %-6s %-9s", r.seed.c_str(), transfer ? "yes" : "no");
                for (int k : marks) {
                    const double v = r.run.bestSoFar.empty() ? 0 : r.run.bestSoFar[size_t(std::min<int>(k, int(r.run.bestSoFar.size())) - 1)];
                    at[k].push_back(v);
                    std::printf(" %8.2f", v);
                }
                const auto t = r.run.trialsTo(goal * bestOverall);
                to.push_back(t ? double(*t) : std::numeric_limits<double>::infinity());
                std::printf("   %s\n", t ? std::to_string(*t).c_str() : (">" + std::to_string(nTrial)).c_str());
            }
            std::printf("  %-6s %-9s", "median", transfer ? "yes" : "no");
            for (int k : marks) std::printf(" %8.2f", bench::median(at[k]));
            const double mt = bench::median(to);
            std::printf("   %s\n", std::isinf(mt) ? (">" + std::to_string(nTrial)).c_str() : std::to_string(int(mt)).c_str());
        }
        std::printf("Wall time %.0f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
