// SPDX-License-Identifier: Apache-2.0
#pragma once
// The AutoTVM half of the session bridge: a QObject on the session's worker thread (beside
// TuningWorker) that owns the engine objects of an AutoTVM job and tunes the network's AutoTVM
// tasks one after another, as TVM's tune_relay_x86 tutorial does (and `tunebench-cli autotvm tune
// --network`): extract the x86 tasks (autotvm/task_extraction.h), then per task a tuner by name
// (autotvm::makeTuner), n_trial = min(n_trial, space size), one v0.2 record per measured config
// appended to the job's log (record::RecordWriter, on disk per record).
//
// One task per event-loop turn, so stop and pause are seen between tasks; inside a task the
// tuner's callback checks them after every measured batch (a stop ends the task there, a pause
// parks the thread in the callback until resume or stop). Internal to the session library.

#include <QObject>

#include <atomic>
#include <memory>

#include "app/session/autotvmrows.h"
#include "app/session/snapshots.h"

namespace tb::session {

class DagSource;

class AutotvmWorker : public QObject {
    Q_OBJECT
public:
    explicit AutotvmWorker(std::shared_ptr<DagSource> dags);
    ~AutotvmWorker() override;

    /// The tuner names the window offers (autotvm::makeTuner's names, TVM's tutorial names).
    static QStringList tunerNames();

    // Set from the GUI thread, read by the worker after every batch and between tasks.
    std::atomic<bool> stopRequested{false};
    std::atomic<bool> pauseRequested{false};

    /// Worker thread: extracts the AutoTVM tasks of job.network (NCHW) and starts tuning them.
    void start(const tb::session::TuningJob& job, quint64 jobId);
    /// Worker thread: continues after a pause between tasks, or finishes after a stop.
    void wake();

Q_SIGNALS:
    void tasksAdded(const QList<tb::session::AutotvmTaskRow>& tasks);
    void tasksUpdated(const QList<tb::session::AutotvmTaskRow>& tasks);
    void trialsAvailable(const QList<tb::session::AutotvmTrial>& trials);
    void progressChanged(int permille);
    void logMessage(const QString& line);
    void parked();
    void finished(const QString& summary);
    void failed(const QString& message);

private:
    struct Engine;
    /// start() for a VTA target: seed 004's tasks of the quantized, graph-packed network, measured
    /// on the simulator in process (runner "local") or on a VTA device through the tracker ("rpc").
    void startVta(std::unique_ptr<Engine>& e);
    void scheduleTask();
    void runTask();
    void finish();
    void fail(const QString& message);
    void emitProgress();

    std::unique_ptr<Engine> m_engine;
    std::shared_ptr<DagSource> m_dags;
    bool m_scheduled = false;
    bool m_running = false;
    int m_lastPermille = -1;
};

}  // namespace tb::session
