// SPDX-License-Identifier: Apache-2.0
// Benchmark (not a test): TopHub's own best configs for `llvm -mcpu=skylake-avx512`
// (tophub_llvm_v0.04.log, tuned by the TVM developers in 2019) measured here against ours for the
// same workloads.
//
// What it measures. Every TopHub record whose config index still decodes to the config it wrote in
// TVM v0.14's space (autotvm/log_check.h; `tunebench-cli log check` reports 7 of 35, the space of
// conv2d_NCHWc changed since) gives a workload (template + args) and TopHub's config for it. Ours
// is the best record of that workload in --log (an AutoTVM log of ours, e.g. written by
// `tunebench-cli autotvm tune --log`), or, with --tune N, the best of N trials of --tuner (default
// xgb) tuned here now (appended to --log when given). Both configs are then measured here in one
// batch per workload (this CPU, the CLI's runner: number 10, repeat 3 by default), so the
// comparison does not depend on when either was tuned. A workload without a record of ours is
// listed with TopHub's number alone.
//
// The table: per workload, TopHub's config in GFLOPS here, ours here, ours / TopHub, and what our
// log recorded for our best (its own measurement). TopHub's configs were tuned for a Skylake-AVX512
// server; ours for this CPU, so a ratio > 1 is expected where the machines differ.
//
// How long: 2 measurements per workload plus the tuning asked for (--tune 16: about a minute).
//
//   tophub_vs_ours [--tophub ../shared/data/logs/autotvm/tophub_llvm_v0.04.log] [--log OURS]
//                  [--tune N] [--tuner xgb] [--seed 0] [--n-parallel N] [--number 10] [--repeat 3]
//                  [--min-repeat-ms 0] [--timeout 10]
#include <fstream>
#include <set>

#include "autotvm_bench.h"
#include "engine/autotvm/log_check.h"
#include "engine/record/record_io.h"

using namespace tb;

namespace {

const char* kUsage =
    "Usage: tophub_vs_ours [--tophub LOG] [--log OURS] [--tune N] [--tuner xgb] [--seed 0]\n"
    "                      [--n-parallel N] [--number 10] [--repeat 3] [--min-repeat-ms 0] [--timeout 10]\n"
    "Measures TopHub's decodable x86 configs and our best configs of the same workloads here.\n";

// "64x56x56 -> 64 k3 s1 p1" for conv args, the args JSON otherwise.
std::string describe(const nlohmann::ordered_json& args) {
    try {
        const auto& d = args.at(0).at(1);
        const auto& k = args.at(1).at(1);
        char buf[96];
        std::snprintf(buf, sizeof buf, "%dx%dx%d -> %d k%d s%d p%d", d.at(1).get<int>(), d.at(2).get<int>(),
                      d.at(3).get<int>(), k.at(0).get<int>(), k.at(2).get<int>(), args.at(2).at(0).get<int>(),
                      args.at(3).at(0).get<int>());
        return buf;
    } catch (const std::exception&) {
        return args.dump();
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const bench::BenchArgs a(argc, argv, kUsage);
        const std::string tophubPath = a.str("tophub", "../shared/data/logs/autotvm/tophub_llvm_v0.04.log");
        const std::string logPath = a.str("log", "");
        const int tuneTrials = a.num("tune", 0);
        const std::string tunerName = a.str("tuner", "xgb");
        const std::uint64_t seed = std::uint64_t(a.num("seed", 0));
        if (logPath.empty() && tuneTrials <= 0) a.fail("give --log OURS and/or --tune N");
        bench::Measurer m(a, 3);
        const auto tophub = record::readAutoTvmRecords(tophubPath);
        record::LogContents<record::AutoTvmRecord> ours;
        if (!logPath.empty() && std::ifstream(logPath).good()) ours = record::readAutoTvmRecords(logPath);
        std::unique_ptr<record::RecordWriter> writer;
        if (!logPath.empty() && tuneTrials > 0) writer = std::make_unique<record::RecordWriter>(logPath);

        std::printf("%-32s %-18s %10s %10s %8s %12s\n", "workload", "template", "TopHub", "ours", "ratio", "ours (log)");
        int decoded = 0;
        std::set<std::string> seen;
        for (const auto& r : tophub.records) {
            const autotvm::RecordCheck check = autotvm::checkRecord(r);
            if (check.outcome != autotvm::RecordCheck::Outcome::Agree) continue;
            ++decoded;
            if (!seen.insert(r.taskName + r.args.dump()).second) continue;
            const autotvm::Task task = m.task(r.taskName, r.args);
            // our best: in the log, or tuned now
            std::optional<autotvm::ConfigEntity> mine;
            double logged = 0;
            for (const auto& o : ours.records)
                if (o.taskName == r.taskName && o.args == r.args && o.errorNo == 0 && o.meanCost() > 0 &&
                    task.flop / o.meanCost() > logged) {
                    logged = task.flop / o.meanCost();
                    mine = autotvm::ConfigEntity::fromJson(o.config);
                }
            if (tuneTrials > 0) {
                auto t = autotvm::makeTuner(tunerName, task, seed);
                const bench::TuneRun run = bench::tune(*t, task, tuneTrials, m);
                if (writer)
                    for (const auto& rec : run.records) writer->append(rec);
                if (t->bestConfig() && t->bestFlops() > logged) {
                    logged = t->bestFlops();
                    mine = t->bestConfig();
                }
            }
            std::vector<autotvm::ConfigEntity> configs{*check.decoded};
            if (mine) configs.push_back(*mine);
            const auto results = autotvm::measureConfigs(task, configs, m.option());
            autotvm::RandomTuner speed(task);  // Tuner::flops
            const double th = speed.flops(results[0]) / 1e9;
            const double us = mine ? speed.flops(results[1]) / 1e9 : 0;
            char ratio[16] = "-", oursText[16] = "-", loggedText[16] = "-";
            if (mine) {
                std::snprintf(oursText, sizeof oursText, "%.2f", us);
                std::snprintf(loggedText, sizeof loggedText, "%.2f", logged / 1e9);
                if (th > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", us / th);
            }
            std::printf("%-32s %-18s %10.2f %10s %8s %12s\n", describe(r.args).c_str(), r.taskName.c_str(), th, oursText,
                        ratio, loggedText);
            std::fflush(stdout);
        }
        std::printf("%d of %zu TopHub records decode in TVM v0.14's spaces (log check); GFLOPS measured here, %s\n",
                    decoded, tophub.records.size(), m.target.recordString.c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
