// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file network_tuner.h
/// \brief Tuning a whole network: the search tasks, one sketch policy per task, one shared cost
/// model, the task scheduler and the measurer, wired as TVM's `TaskScheduler.tune` does
/// (python/tvm/auto_scheduler/task_scheduler.py), including resume from a log.
///
/// The CLI (`tunebench-cli tune`) and the GUI's worker both drive this object: `step()` runs one
/// round (one task, `perRound` measurements), observers see every measured trial, and the
/// scheduler's callbacks print TVM's table. Records are written by the measurer (append + flush per
/// record), so an interrupted run loses nothing and `resume()` continues from the log: trial counts,
/// best costs, the cost model's training data and the policies' measured-state sets.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/cost_model/xgb_model.h"
#include "engine/lower/state_lowerer.h"
#include "engine/search/cost_model.h"
#include "engine/search/default_schedule.h"
#include "engine/search/sketch_policy.h"
#include "engine/tuning/task_scheduler.h"

namespace tb::tuning {

struct NetworkTask {
    search::SearchTask task;
    double weight = 1;
    /// -1, or the index (in the tuner's task list) of the winograd task this direct conv2d task is
    /// the alternative of (graph::ExtractedTask::alternativeOf, SchedulerTask::alternativeOf).
    int alternativeOf = -1;
};

struct TuneOptions {
    int trials = 0;                  ///< total measured trials (0: 64 x tasks)
    int perRound = 64;               ///< TVM num_measures_per_round
    int earlyStopping = -1;
    int perTaskEarlyStopping = -1;
    TaskSchedulerOptions::Strategy strategy = TaskSchedulerOptions::Strategy::Gradient;
    uint64_t seed = 0;
    std::string costModel = "xgb";   ///< "xgb", "xgb-rank" (XGBModelParams::Objective::PackSumPairwise), "xgb-tvm" (TVM's features, random warm-up) or "random"
    search::SketchPolicyParams policy;
    /// Measure each task's default schedule (search/default_schedule.h) in its first round, so the
    /// best record is never worse than what the compiler uses without one. Not in TVM.
    bool seedDefaultSchedule = true;
    cost_model::XGBModelParams xgb;  ///< its fmaLanes is replaced by fmaLanes below
    /// Float lanes of one FMA at the full FMA rate of the core the candidates run on
    /// (measure::fullRateFmaLanes; the tuning job sets this machine's for a local runner): the cost
    /// model's register-block estimate and the seeded default schedule's tile use it, as `compile`'s
    /// default schedule does (runtime/build_module.h), so the seed is the schedule compile uses.
    int fmaLanes = cost_model::kDefaultFmaLanes;
};

/// One measured candidate, as observers see it.
struct MeasuredTrial {
    int taskId = -1;
    int trial = 0;            ///< global index, 0-based, in measurement order
    State state;
    float predicted = 0;      ///< cost-model score when picked
    search::MeasureOutcome outcome;
};

class TuneObserver {
public:
    virtual ~TuneObserver() = default;
    virtual void onTrials(const std::vector<MeasuredTrial>& trials) {}
};

/// What resume() found in a log.
struct ResumeStats {
    int records = 0;        ///< lines of the log that parsed
    int matched = 0;        ///< records whose workload key is one of our tasks
    int replayed = 0;       ///< of those, states that replayed on our DAG
    int badLines = 0;       ///< unparsable lines (reported, skipped)
};

class NetworkTuner {
public:
    /// `lowerer` lowers states for the XGBoost model's features; `measurer` builds and times
    /// candidates (and writes records). Both must outlive the tuner.
    NetworkTuner(std::vector<NetworkTask> tasks, TuneOptions options, lower::StateLowerer lowerer,
                 search::Measurer& measurer);
    /// The options as the tuner uses them (trials filled in when 0 was asked).
    const TuneOptions& options() const { return m_options; }
    ~NetworkTuner();

    /// Reads a log (before the first step): restores counts and best costs, preloads measured states
    /// and trains the cost model. Records of other workloads are ignored.
    ResumeStats resume(const std::string& logPath);

    void addObserver(TuneObserver* o) { m_observers.push_back(o); }
    void addSchedulerCallback(TaskSchedulerCallback* cb) { m_scheduler->addCallback(cb); }

    bool step() { return m_scheduler->step(); }
    void tune() { m_scheduler->tune(); }

    const TaskScheduler& scheduler() const { return *m_scheduler; }
    const std::vector<NetworkTask>& tasks() const { return m_tasks; }
    /// Best measured state of a task (undefined if none yet) and its mean cost (s).
    State bestState(int taskId) const;
    double bestCost(int taskId) const;
    cost_model::CostModel& costModel() { return *m_model; }
    int totalTrials() const { return m_trialCounter; }
    /// Time split of the last round of a task's policy.
    const search::RoundStats& lastRoundStats(int taskId) const { return m_policies.at(size_t(taskId))->lastRoundStats(); }

private:
    class PolicyTuner;
    friend class PolicyTuner;
    void onMeasured(int taskId, const std::vector<std::pair<search::PickedState, search::MeasureOutcome>>& res);

    std::vector<NetworkTask> m_tasks;
    TuneOptions m_options;
    std::shared_ptr<cost_model::CostModel> m_model;
    search::Measurer& m_measurer;
    std::vector<search::SketchPolicy*> m_policies;  // owned by the scheduler's tuners
    std::unique_ptr<TaskScheduler> m_scheduler;
    std::vector<TuneObserver*> m_observers;
    std::vector<State> m_best;
    std::vector<double> m_bestCost;
    int m_trialCounter = 0;
};

}  // namespace tb::tuning
