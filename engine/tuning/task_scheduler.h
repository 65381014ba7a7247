// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file task_scheduler.h
/// \brief The task scheduler: splits a trial budget over the search tasks of a network so that
/// the estimated end-to-end latency falls fastest (Ansor §6, TVM auto_scheduler/task_scheduler.py).
///
/// A network has many tasks of very different weight and difficulty; tuning them round-robin
/// wastes trials on tasks that no longer matter. The gradient strategy estimates, for every task,
/// how much one more round would reduce the objective `sum(weight_i * best_cost_i)` and tunes the
/// task with the steepest descent (REFERENCE-TVM §3): a backward difference over the last
/// `backwardWindow` rounds, an optimistic forward guess (latency falls like 1/rounds) and, for tasks
/// in a similarity group (same op kind, similar FLOPs), the speed its best group-mate reaches.
///
/// The scheduler is engine-synchronous: `tune()` runs the whole loop, `step()` advances one round, so
/// a GUI worker can pause or stop between rounds (DESIGN.md §3.3). The per-task search is abstract
/// (`TaskTuner`): the sketch policy + measurer implement it; tests use fakes.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tb::tuning {

/// What one search round of one task produced: the mean measured cost (seconds) of each measured
/// candidate, 1e10 for a failed one (TVM's MAX_FLOAT convention). Empty = the search space is exhausted.
struct RoundOutcome {
    std::vector<double> costs;
};

/// The per-task search: runs one round of `numMeasures` measurements (TVM SearchPolicy::
/// ContinueSearchOneRound + ProgramMeasurer).
class TaskTuner {
public:
    virtual ~TaskTuner() = default;
    virtual RoundOutcome tuneOneRound(int numMeasures) = 0;
};

/// A task as the scheduler sees it.
struct SchedulerTask {
    std::string workloadKey;
    std::string desc;          ///< e.g. "vm_mod_fused_nn_conv2d_add_nn_relu" (the table's Task Description)
    double flop = 0;           ///< FLOPs of one run of the task
    double weight = 1;         ///< occurrences in the network
    std::string similarityTag; ///< op-kind tag (TVM attr auto_scheduler_task_scheduler_tag); empty = none
    /// -1, or the index of the task this one is an alternative implementation of (a direct conv2d
    /// beside its winograd task, graph::ExtractedTask::alternativeOf): the network runs the faster
    /// of the two, so the pair counts once in the objective, as `weight_of_that_task *
    /// min(best_cost)`. For the gradient, d min / d best_cost_i becomes a share of that weight:
    /// each member's gap to the best other member at equal effort (that member's best after as many
    /// rounds as this one has had), gap = max(0, c_i / c_other - 1), weighs exp(-gap / 0.1), and
    /// the shares are these weights normalised. A member a few percent behind keeps drawing rounds
    /// (it may overtake), one 1.5x behind almost none. Not in TVM (its task list fixes winograd).
    /// The referenced task must have alternativeOf -1.
    int alternativeOf = -1;
};

struct TaskSchedulerOptions {
    enum class Strategy { Gradient, RoundRobin };
    Strategy strategy = Strategy::Gradient;
    double alpha = 0.2;           ///< weight of the backward gradient
    double beta = 2.0;            ///< similarity-group speed ratio
    int backwardWindow = 3;       ///< rounds in the backward difference
    int numMeasureTrials = 0;     ///< total budget (trials)
    int numMeasuresPerRound = 64; ///< capped at numMeasureTrials / #tasks as TVM does
    int earlyStopping = -1;       ///< global: stop after this many trials without improvement (<0: off)
    int perTaskEarlyStopping = -1;///< a task dies after this many trials without improvement (<0: off)
    uint64_t seed = 0;            ///< for the random pick when all gradients are equal
};

class TaskScheduler;

/// Observers of the loop (TVM TaskSchedulerCallback): PrintTableInfo, LogEstimatedLatency, the GUI.
class TaskSchedulerCallback {
public:
    virtual ~TaskSchedulerCallback() = default;
    virtual void preTune(const TaskScheduler& ts, int taskId) {}
    virtual void postTune(const TaskScheduler& ts, int taskId) {}
};

class TaskScheduler {
public:
    /// `tuners[i]` tunes `tasks[i]`. Throws InternalError on a size mismatch.
    TaskScheduler(std::vector<SchedulerTask> tasks, std::vector<std::unique_ptr<TaskTuner>> tuners,
                  TaskSchedulerOptions options);

    void addCallback(TaskSchedulerCallback* cb) { m_callbacks.push_back(cb); }

    /// Restores a task's progress from a log (resume): `trials` measured records and the best mean
    /// cost (s) among the valid ones (1e10 if none). Rounds = int(trials / perRound + 0.5) as TVM.
    void restore(int taskId, int trials, double bestCost);

    /// Runs rounds until the budget is spent, every task is dead, or early stopping triggers.
    void tune();
    /// Runs one round (warm-up rounds first). Returns false when tuning is over.
    bool step();
    bool finished() const { return m_finished; }

    // State, read by callbacks and the GUI.
    const std::vector<SchedulerTask>& tasks() const { return m_tasks; }
    const std::vector<double>& bestCosts() const { return m_bestCosts; }
    const std::vector<int>& taskRounds() const { return m_taskCts; }
    int numMeasuresPerRound() const { return m_perRound; }
    int totalTrials() const { return m_ct; }
    /// sum(weight_i * best_cost_i) in seconds (the estimated total latency).
    double currentScore() const { return m_curScore; }
    bool allTasksHaveCost() const;
    bool isDead(int taskId) const { return m_dead[size_t(taskId)]; }
    /// The task the next step() will tune, or -1 when finished / not yet decided.
    int nextTask() const { return m_next; }
    /// Seconds since construction.
    double elapsedSeconds() const;
    /// Gradients of the last decision (for display; 0 for dead tasks).
    const std::vector<double>& lastGradients() const { return m_lastGradients; }
    const std::vector<std::vector<double>>& costHistory() const { return m_history; }

private:
    double score(const std::vector<double>& costs) const;
    /// d score / d costs[i]: the task's weight, or for a member of an alternative pair its share
    /// of the pair's weight (SchedulerTask::alternativeOf).
    double chainGradient(size_t i, const std::vector<double>& costs) const;
    int pickNext();
    void tuneTask(int idx);
    void adjustSimilarityGroup(int idx);

    std::vector<SchedulerTask> m_tasks;
    std::vector<std::unique_ptr<TaskTuner>> m_tuners;
    TaskSchedulerOptions m_opt;
    std::vector<TaskSchedulerCallback*> m_callbacks;
    std::vector<double> m_bestCosts;
    std::vector<int> m_taskCts, m_taskBestCts;
    std::vector<std::vector<double>> m_history;
    std::vector<char> m_dead;
    std::vector<std::vector<int>> m_alternatives; // per task: the tasks whose alternativeOf it is
    std::vector<int> m_groupOf;                 // -1 = no group
    std::vector<std::vector<int>> m_groups;
    std::vector<double> m_lastGradients;
    int m_perRound = 64;
    int m_ct = 0, m_bestCt = 0;
    double m_curScore = 0, m_bestScore = 0;
    double m_earlyAll = 1e20, m_earlyTask = 1e20;
    int m_warmupNext = 0;
    int m_rrIdx = -1;
    int m_next = -1;
    bool m_warmupDone = false, m_finished = false;
    std::mt19937_64 m_rng;
    std::chrono::steady_clock::time_point m_tic;
};

/// Prints TVM's `[ Task Scheduler ]` table before each round (PrintTableInfo) to a stream function.
class PrintTableInfo : public TaskSchedulerCallback {
public:
    explicit PrintTableInfo(std::function<void(const std::string&)> out) : m_out(std::move(out)) {}
    void preTune(const TaskScheduler& ts, int taskId) override;
    /// The table text TVM prints (title block, header, rows, rule, estimated-latency line).
    static std::string tableText(const TaskScheduler& ts, int nextTaskId);

private:
    std::function<void(const std::string&)> m_out;
};

/// Appends `ElapsedTime(s)\t%.0f\tEstimatedLatency(ms)\t%s\tTrials\t%d` lines to a file after each
/// round (TVM LogEstimatedLatency, total_latency.tsv).
class LogEstimatedLatency : public TaskSchedulerCallback {
public:
    explicit LogEstimatedLatency(std::string path);
    void postTune(const TaskScheduler& ts, int taskId) override;

private:
    std::string m_path;
};

}  // namespace tb::tuning
