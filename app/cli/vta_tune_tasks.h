// SPDX-License-Identifier: Apache-2.0
#pragma once
// The tuning loop of `autotvm vta-tune` over a given list of AutoTVM tasks (seed 004's tune_tasks),
// so that any source of VTA tasks (the built-in workload sets, later tasks extracted from a
// graph-packed network) is tuned, logged and reported the same way.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/autotvm/task.h"
#include "engine/autotvm/tuner.h"
#include "engine/vta/vta_config.h"

namespace tb::cli {

/// One task to tune and the name its table row shows ("C2", "add_64x56x56"; empty: "T<n>").
struct NamedVtaTask {
    std::string name;
    autotvm::Task task;
    std::string workload;  ///< the workload column ("conv2d_packed 1x64x56x56 -> 64, ..."); empty: name + args
};

struct VtaTuneSettings {
    vta::VtaConfig cfg;              ///< the VTA the tasks target (peak in the table)
    autotvm::MeasureOption measure;  ///< measureFunction: vtaSimMeasureFunction or vtaRpcMeasureFunction
    std::string measuredOn;          ///< "in-process simulator" or "RPC key 'intelfocl' at host:port"
    std::string tuner = "xgb";       ///< seed 004's names (autotvm::vtaTunerName)
    autotvm::TuneOptions options;    ///< nTrial (capped per task at its space), earlyStopping, nParallel
    std::uint64_t seed = 1;
    int planSize = 64;
    bool transferLearning = true;    ///< seed's use_transfer_learning: load FILE.tmp into each tuner
    /// Seed 004's flow: records (with log_to_file's scalar-rhs duplicates) go to FILE.tmp, removed
    /// first; after the last task pick_best writes FILE and FILE.tmp is removed. Empty: no log.
    std::string logPath;
};

/// Tunes `tasks` in seed 004's order (reversed, "[Task i/n]" counting the tuning order), printing
/// TVM's progress line per task and then one table row per task (fallback config, best simulated
/// time, GOPS, % of peak, best config). Returns 0 when every task has a valid config and no
/// measurement was a wrong answer, else 1. Throws tb::UserError for a bad tuner name or an
/// unwritable log.
int tuneVtaTasks(const std::vector<NamedVtaTask>& tasks, const VtaTuneSettings& settings);

}  // namespace tb::cli
