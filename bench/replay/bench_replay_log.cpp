// SPDX-License-Identifier: Apache-2.0
// Benchmark (not a test): TVM's 2021 resnet-18 tuning log replayed on our tasks. For each of the 24
// workloads, the log's best schedule is lowered and compiled by TuneBench and timed in the sandbox
// with TVM's timer semantics; we print our latency beside the one TVM measured on its 8-core machine.
// The CPUs differ, so compare the ratios between workloads, not the absolute numbers.
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/measure/local_runner.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"

using namespace tb;

int main(int argc, char** argv) {
    std::string path = argc > 1 ? argv[1] : "../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json";
    auto log = record::readMeasureRecords(path);
    auto tasks = graph::extractTasks(graph::makeNetwork("resnet-18", 1, "NHWC"));
    std::map<std::string, size_t> taskOfKey;
    for (size_t i = 0; i < tasks.size(); ++i) taskOfKey[graph::legacyTvmWorkloadKey(tasks[i].dag)] = i;
    std::map<size_t, size_t> best;
    for (size_t r = 0; r < log.records.size(); ++r) {
        const auto& rec = log.records[r];
        auto it = taskOfKey.find(rec.task.workloadKey);
        if (it == taskOfKey.end() || !rec.valid()) continue;
        if (!best.count(it->second) || rec.meanCost() < log.records[best[it->second]].meanCost()) best[it->second] = r;
    }
    measure::RunnerOptions ro;
    ro.repeat = 3;
    ro.minRepeatMs = 100;
    measure::LocalRunner runner(ro);
    const codegen::Target host = codegen::Target::host();
    std::printf("%-4s %-48s %10s %12s %12s %8s %10s\n", "task", "description", "GFLOP", "TVM log ms", "ours ms", "ours/TVM", "our GFLOPS");
    double sumLog = 0, sumOurs = 0, logSum2 = 0;
    int n = 0;
    for (const auto& [ti, ri] : best) {
        const auto& dag = tasks[ti].dag;
        State s = inferBound(replaySteps(dag, stepsFromJson(log.records[ri].steps)));
        auto k = codegen::compile(lower::lowerState(dag, s), host, codegen::CompileOptions{false, false});
        measure::MeasureResult m = runner.runOne(k);
        double logMs = log.records[ri].meanCost() * 1e3, ours = m.ok() ? m.meanCost() * 1e3 : NAN;
        double ratio = ours / logMs;
        std::printf("%-4zu %-48s %10.4f %12.4f %12.4f %8.2f %10.1f\n", ti, tasks[ti].desc.c_str(), tasks[ti].flop / 1e9, logMs,
                    ours, ratio, tasks[ti].flop / (ours * 1e-3) / 1e9);
        if (m.ok()) {
            sumLog += logMs * tasks[ti].weight;
            sumOurs += ours * tasks[ti].weight;
            logSum2 += std::log(ratio);
            ++n;
        }
    }
    std::printf("weighted total: TVM log %.3f ms, ours %.3f ms; geometric-mean ratio ours/TVM %.2f over %d workloads\n",
                sumLog, sumOurs, std::exp(logSum2 / std::max(n, 1)), n);
    return 0;
}
