// SPDX-License-Identifier: Apache-2.0
#pragma once
// The value types of the window's AutoTVM mode (DESIGN.md §3.5): what the AutoTVM worker reports
// of each task (TVM's `tune_relay_x86` progress line, per task) and of each measured config. Like
// snapshots.h, plain Qt values copied into queued signals; widgets never see engine types.

#include <QList>
#include <QMetaType>
#include <QMap>
#include <QString>
#include <QStringList>

namespace tb::session {

/// One AutoTVM task of the job, as the AutoTVM panel shows it.
struct AutotvmTaskRow {
    int id = -1;                 ///< extraction order, 0-based ("[Task  1/12]" is id 0)
    QString taskName;            ///< the template, e.g. "conv2d_NCHWc.x86"
    QString args;                ///< the task args as a record writes them (JSON)
    QString argsSummary;         ///< the tensor shapes of the args, e.g. "1×64×56×56, 64×64×3×3"
    qint64 spaceSize = 0;        ///< configs in the task's space (len(task.config_space))
    double flop = 0;             ///< FLOPs of one run (task.flop)
    int trials = 0;              ///< configs measured so far
    int nTrial = 0;              ///< this task's budget: min(n_trial, space size)
    double currentGflops = 0;    ///< the last measured batch's speed (TVM's "Current")
    double bestGflops = 0;       ///< TVM's "Best"; 0 = none valid yet
    int bestTrial = -1;          ///< the trial (0-based) that found the best
    qint64 bestIndex = -1;       ///< the best config's index in the space
    QString bestConfig;          ///< the best ConfigEntity as TVM prints it ("[('tile_ic', [-1, 2]), ...],None,42")
    QStringList bestKnobs;       ///< the best config, one "knob = value" per knob, in definition order
    int failed = 0;              ///< configs that failed (error_no != 0)
    QString state;               ///< "pending", "tuning", "tuned", "stopped", "dead"
    QString error;               ///< why the task could not be created or tuned ("dead")
    /// A VTA task (target "ext_dev ... -device=vta"): its costs are simulated time on the VTA
    /// simulator (in process or an `rpc-server --device vta`), its speeds simulated GOPS.
    bool simulated = false;
    /// The VTA simulator's counters of the best config (TVM's stats() names: inp_load_nbytes,
    /// wgt_load_nbytes, acc_load_nbytes, uop_load_nbytes, out_store_nbytes, gemm_counter,
    /// alu_counter); empty for other tasks.
    QMap<QString, qulonglong> bestCounters;
    bool operator==(const AutotvmTaskRow&) const = default;
};

/// One measured config of an AutoTVM task.
struct AutotvmTrial {
    int taskId = -1;
    int trial = 0;               ///< 0-based within the task
    qint64 index = -1;           ///< config index in the space
    double gflops = 0;           ///< 0 for a failed config
    double bestGflops = 0;       ///< the task's best after this trial (the best-so-far curve)
    int errorNo = 0;             ///< TVM MeasureErrorNO 0..8
    QMap<QString, qulonglong> counters;  ///< the VTA simulator's counters of this config (VTA tasks)
};

}  // namespace tb::session

Q_DECLARE_METATYPE(tb::session::AutotvmTaskRow)
Q_DECLARE_METATYPE(tb::session::AutotvmTrial)
