// SPDX-License-Identifier: Apache-2.0
#pragma once
// The worker half of the session bridge (STYLE.md §3.3): a QObject moved to the thread
// "TuningSession worker" that owns every engine object of a job (tuning::buildTuner: tasks,
// builder, runner, measurer, tuner) and drives NetworkTuner::step() one round per event-loop
// turn, so queued commands (pause, stop, shutdown) are seen between rounds. Internal to the
// session library.

#include <QObject>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "app/session/snapshots.h"

namespace tb {
class State;
namespace codegen { struct Target; }
namespace te { class ComputeDAG; }
}  // namespace tb

namespace tb::session {

/// What the DAG view needs of the running job, shared between the worker (which updates the best
/// states after each round) and the short-lived threads that build DAG snapshots. Thread-safe.
class DagSource {
public:
    DagSource();
    ~DagSource();
    /// Builds the snapshot of task `taskId` of the current job (lowering + LLVM compile: slow, call
    /// it off the GUI thread); nullopt when there is no such task.
    std::optional<DagSnapshot> snapshot(int taskId) const;
    /// For other workers (AutoTVM mode): a new job of `tasks` tasks, none with a program yet.
    void resetJob(quint64 jobId, const codegen::Target& target, int tasks);
    /// Task `taskId`'s program: its DAG, best State and that State's cost (s; >= 1e9: none).
    void setTask(int taskId, std::shared_ptr<const te::ComputeDAG> dag, const std::string& desc, const State& best,
                 double bestCostS);

    struct Impl;
    std::unique_ptr<Impl> d;
};

class TuningWorker : public QObject {
    Q_OBJECT
public:
    explicit TuningWorker(std::shared_ptr<DagSource> dags);
    ~TuningWorker() override;

    // Set from the GUI thread, read by the worker between rounds.
    std::atomic<bool> stopRequested{false};
    std::atomic<bool> pauseRequested{false};

    /// Worker thread: extracts the tasks, builds the engine objects, then schedules rounds.
    void start(const tb::session::TuningJob& job, quint64 jobId);
    /// Worker thread: schedules the next round unless one is already scheduled (after resume or
    /// stop while parked).
    void wake();
    /// Any thread: the fleet events gathered since the last call (fleetEventsPending announced them).
    QList<tb::session::FleetEvent> takeFleetEvents();

Q_SIGNALS:
    void tasksAdded(const QList<tb::session::TaskRow>& tasks);
    void tasksUpdated(const QList<tb::session::TaskRow>& tasks);
    void measurementsAvailable(const QList<tb::session::MeasureRow>& rows);
    void latencyPointAdded(const tb::session::LatencyPoint& point);
    void progressChanged(int permille);
    void logMessage(const QString& line);
    void parked();
    /// Emitted on the builder's / runner's threads when fleet events wait in takeFleetEvents();
    /// once per batch of them (the receiver takes them all), so bursts coalesce.
    void fleetEventsPending();
    void finished(const QString& summary);
    void failed(const QString& message);

private:
    void runRound();
    void scheduleRound();
    void finish();
    void fail(const QString& message);
    void emitRoundUpdates(int tuningTask);
    void pushFleetEvent(const FleetEvent& e);

    struct Engine;
    std::unique_ptr<Engine> m_engine;
    std::shared_ptr<DagSource> m_dags;
    bool m_roundScheduled = false;
    bool m_running = false;
    int m_lastPermille = -1;
    // Fleet events come from the engine's measuring threads while a round runs (the worker's
    // event loop is blocked in it): a mutex-guarded buffer drained by the GUI side.
    std::mutex m_fleetMutex;
    QList<FleetEvent> m_fleetEvents;
};

}  // namespace tb::session
