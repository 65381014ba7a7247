// SPDX-License-Identifier: Apache-2.0
#pragma once
// The session bridge (DESIGN.md §2, STYLE.md §3.3): the GUI-thread facade of a tuning job. The
// engine runs in a TuningWorker moved to a named QThread; the facade forwards commands with
// queued invocations and re-emits the worker's batched value-type signals. This is the only
// place that touches both Qt and the engine.

#include <QObject>
#include <QStringList>
#include <memory>

#include "app/session/autotvmrows.h"
#include "app/session/snapshots.h"

class QThread;

namespace tb::session {

class AutotvmWorker;
class DagSource;
class TuningWorker;

class TuningSession : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Paused, Stopping };
    Q_ENUM(State)

    explicit TuningSession(QObject* parent = nullptr);
    ~TuningSession() override;

    /// Zoo network names the engine knows.
    static QStringList networkNames();
    /// Empty for a valid TVM target string that can be tuned (CPU or GPU) with the host target
    /// `host` (TVM's host=; empty: none), else the engine's parser's message naming the problem.
    static QString validateTarget(const QString& target, const QString& host = QString());
    /// True when `target` parses as a GPU target (cuda, opencl): it takes a target host and its
    /// tasks show kernel source.
    static bool isGpuTarget(const QString& target);
    /// True for TVM's VTA target form ("ext_dev -keys=vta,cpu -device=vta -model=..."): tuned in
    /// AutoTVM mode (seed 004's tasks of the quantized, graph-packed network, simulated time).
    static bool isVtaTarget(const QString& target);
    /// The VTA targets the window offers: TVM's target strings of the default configs of the
    /// simulator, intelfocl (seed 004's ALU tasks exist for these two) and pynq.
    static QStringList vtaTargetPresets();
    /// The AutoTVM tuners the window offers (TVM's tutorial names: "xgb", "ga", "random", ...).
    static QStringList autotvmTunerNames();

    State state() const { return m_state; }
    /// A compileAndBenchmark is running.
    bool benchmarking() const { return m_benchThread != nullptr; }
    /// Id of the last job started (0 before the first); DAG snapshots carry it.
    quint64 jobId() const { return m_jobId; }

public Q_SLOTS:
    /// Tunes the job: with the auto-scheduler, or (job.autotvm) the network's AutoTVM tasks one
    /// after another (the autotvm* signals instead of tasksAdded/measurementsAvailable/...).
    void start(const tb::session::TuningJob& job);
    void pause();
    void resume();
    /// Asks the worker to stop after the current round; tuningFinished follows.
    void stop();
    /// Asks for the DAG snapshot of a task of the running (or last) job; dagAvailable follows.
    void requestDag(int taskId);
    /// Compiles the job's network with the best records of its log and benchmarks it: with the rpc
    /// runner cross-compiled for its target and run and checked on a device of its key, else here
    /// (`tunebench-cli compile --bench [--runner rpc ...]`, app/session/benchworker.h). Runs on its
    /// own thread; lines arrive as logMessage, then (run here, on a CPU) rooflineAvailable, then
    /// benchmarkFinished. Refused (a log line) while a
    /// tuning job runs (it would be timed against the tuning) or a benchmark is running.
    void compileAndBenchmark(const tb::session::TuningJob& job);
    /// Blocks until the worker has stopped (used on window close): no record is lost.
    void shutdown();

Q_SIGNALS:
    void stateChanged(tb::session::TuningSession::State state);
    void tasksAdded(const QList<tb::session::TaskRow>& tasks);
    void tasksUpdated(const QList<tb::session::TaskRow>& tasks);
    void measurementsAvailable(const QList<tb::session::MeasureRow>& rows);
    void latencyPointAdded(const tb::session::LatencyPoint& point);
    /// Build and device steps as they happen (several per candidate; coalesced in bursts).
    void fleetEventsAvailable(const QList<tb::session::FleetEvent>& events);
    void progressChanged(int permille);  ///< trials spent / budget, 0..1000
    void dagAvailable(const tb::session::DagSnapshot& dag);
    void autotvmTasksAdded(const QList<tb::session::AutotvmTaskRow>& tasks);
    void autotvmTasksUpdated(const QList<tb::session::AutotvmTaskRow>& tasks);
    void autotvmTrialsAvailable(const QList<tb::session::AutotvmTrial>& trials);
    void logMessage(const QString& line);
    /// The worker has parked between two rounds after pause().
    void paused();
    void tuningFinished(const QString& summary);
    void tuningFailed(const QString& message);
    /// compileAndBenchmark started (benchmarking() is true).
    void benchmarkStarted();
    /// compileAndBenchmark ended: `status` is one line (where it ran, median ms, max error, ok or
    /// FAILED, or why it failed); ok: it ran and the outputs match the interpreter's.
    void benchmarkFinished(const QString& status, bool ok);
    /// After a benchmark on this machine's CPU, before benchmarkFinished: every kernel of the
    /// network profiled against the measured peak and bandwidth (the roofline view's data).
    void rooflineAvailable(const tb::session::RooflineSnapshot& roofline);

private:
    void setState(State s);
    void ensureWorker();
    void launchDagJob(int taskId);
    /// Sets the stop and pause flags of both workers and wakes the one that runs.
    void setWorkerFlags(bool stop, bool pause, bool wake);

    std::unique_ptr<QThread> m_thread;
    TuningWorker* m_worker = nullptr;
    AutotvmWorker* m_autotvm = nullptr;  // on the same thread; runs the AutoTVM mode's jobs
    std::shared_ptr<DagSource> m_dags;
    State m_state = State::Idle;
    quint64 m_jobId = 0;
    QThread* m_dagThread = nullptr;  // at most one DAG snapshot is built at a time
    int m_pendingDagTask = -1;       // the latest request that arrived while one was being built
    QThread* m_benchThread = nullptr;  // the running compileAndBenchmark
};

}  // namespace tb::session
