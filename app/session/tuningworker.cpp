// SPDX-License-Identifier: Apache-2.0
#include "app/session/tuningworker.h"

#include <QFileInfo>
#include <QMetaObject>
#include <QThread>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "app/session/engineadapter.h"
#include "engine/codegen/target.h"
#include "engine/measure/measure.h"
#include "engine/tuning/network_tuner.h"
#include "engine/tuning/tuning_job.h"

namespace tb::session {

// ---- DagSource ----------------------------------------------------------------------------

struct DagSource::Impl {
    struct Entry {
        std::shared_ptr<const te::ComputeDAG> dag;
        std::string desc;
        State best;
        double bestCost = 1e10;
    };
    mutable std::mutex mutex;
    quint64 jobId = 0;
    codegen::Target target;
    std::vector<Entry> entries;
};

DagSource::DagSource() : d(std::make_unique<Impl>()) {}
DagSource::~DagSource() = default;

std::optional<DagSnapshot> DagSource::snapshot(int taskId) const {
    Impl::Entry e;
    codegen::Target target;
    quint64 jobId = 0;
    {
        // Copy out under the lock (DAGs are immutable and shared, States copy-on-write), then do
        // the slow lowering and compiling without holding it: the worker updates bests meanwhile.
        std::lock_guard<std::mutex> lock(d->mutex);
        if (taskId < 0 || size_t(taskId) >= d->entries.size() || !d->entries[size_t(taskId)].dag) return std::nullopt;
        e = d->entries[size_t(taskId)];
        target = d->target;
        jobId = d->jobId;
    }
    DagSnapshot s = adapter::dagSnapshot(*e.dag, e.best, e.bestCost, target);
    s.jobId = jobId;
    s.taskId = taskId;
    s.description = adapter::qstr(e.desc);
    return s;
}

void DagSource::resetJob(quint64 jobId, const codegen::Target& target, int tasks) {
    std::lock_guard<std::mutex> lock(d->mutex);
    d->jobId = jobId;
    d->target = target;
    d->entries.assign(size_t(std::max(0, tasks)), Impl::Entry{});
}

void DagSource::setTask(int taskId, std::shared_ptr<const te::ComputeDAG> dag, const std::string& desc, const State& best,
                        double bestCostS) {
    std::lock_guard<std::mutex> lock(d->mutex);
    if (taskId < 0 || size_t(taskId) >= d->entries.size()) return;
    d->entries[size_t(taskId)] = {std::move(dag), desc, best, bestCostS};
}

// ---- the engine objects of one job ------------------------------------------------------------

struct TuningWorker::Engine : tuning::TuneObserver, tuning::TaskSchedulerCallback {
    TuningWorker* owner = nullptr;
    TuningJob job;
    std::vector<double> flops;
    int totalTrials = 0;
    // Every engine object of the job (builder, sandboxed runner, log writer, measurer, tuner).
    std::unique_ptr<tuning::Tuner> engine;
    tuning::NetworkTuner* tuner = nullptr;  // engine->network()
    QList<MeasureRow> pending;  // this round's trials, flushed once after the round

    void onTrials(const std::vector<tuning::MeasuredTrial>& trials) override {
        const double elapsed = tuner->scheduler().elapsedSeconds();
        std::vector<int> touched;
        for (const auto& t : trials) {
            pending.append(adapter::measureRow(t, flops[size_t(t.taskId)], elapsed));
            if (std::find(touched.begin(), touched.end(), t.taskId) == touched.end()) touched.push_back(t.taskId);
        }
        std::lock_guard<std::mutex> lock(owner->m_dags->d->mutex);
        for (int id : touched) {
            auto& e = owner->m_dags->d->entries[size_t(id)];
            e.best = tuner->bestState(id);
            e.bestCost = tuner->bestCost(id);
        }
    }

    void preTune(const tuning::TaskScheduler& ts, int taskId) override {
        // Show which task the (possibly long) round works on, and TVM's table in the log.
        Q_EMIT owner->tasksUpdated(adapter::taskRows(*tuner, taskId));
        std::string table = tuning::PrintTableInfo::tableText(ts, taskId);
        while (!table.empty() && table.back() == '\n') table.pop_back();
        Q_EMIT owner->logMessage(adapter::qstr(table));
    }
};

// ---- TuningWorker ------------------------------------------------------------------------------

TuningWorker::TuningWorker(std::shared_ptr<DagSource> dags) : m_dags(std::move(dags)) {}

TuningWorker::~TuningWorker() {
    // Runs in the worker thread (deleteLater on QThread::finished): engine objects never die in
    // the GUI thread.
    m_engine.reset();
}

void TuningWorker::start(const TuningJob& job, quint64 jobId) {
    Q_ASSERT(QThread::currentThread() == thread());
    m_engine.reset();
    m_running = true;
    m_lastPermille = -1;
    try {
        auto e = std::make_unique<Engine>();
        e->owner = this;
        e->job = job;
        const tuning::TuningJob engineJob = adapter::engineJob(job);
        Q_EMIT logMessage(tr("Extracting the tasks of %1 (%2, batch %3) for %4…")
                              .arg(job.onnxPath.isEmpty() ? job.network : QFileInfo(job.onnxPath).fileName(), job.layout)
                              .arg(job.batch)
                              .arg(adapter::qstr(tuning::resolveTarget(engineJob.target).recordString)));
        e->engine = tuning::buildTuner(engineJob);
        e->tuner = &e->engine->network();
        {
            std::lock_guard<std::mutex> lock(m_dags->d->mutex);
            m_dags->d->jobId = jobId;
            m_dags->d->target = e->engine->target().target;
            m_dags->d->entries.clear();
            for (const auto& t : e->tuner->tasks()) {
                e->flops.push_back(t.task.flop());
                m_dags->d->entries.push_back({t.task.dag, t.task.desc, State(), 1e10});
            }
        }
        e->tuner->addObserver(e.get());
        e->tuner->addSchedulerCallback(e.get());
        {
            // Every build and device step, live, for the fleet timeline (called on the engine's
            // measuring threads: the map is read-only from here on).
            auto taskOfKey = std::make_shared<std::unordered_map<std::string, int>>();
            for (size_t i = 0; i < e->tuner->tasks().size(); ++i)
                taskOfKey->emplace(e->tuner->tasks()[i].task.workloadKey, int(i));
            const double t0 = measure::nowTimestamp();
            auto sink = [this, taskOfKey, t0, jobId](const measure::MeasureEvent& me) {
                pushFleetEvent(adapter::fleetEvent(me, *taskOfKey, t0, jobId));
            };
            e->engine->builder().setEventSink(sink);
            e->engine->runner().setEventSink(sink);
        }
        const int n = int(e->tuner->tasks().size());
        e->totalTrials = job.trials > 0 ? job.trials : 64 * n;
        m_engine = std::move(e);

        Q_EMIT logMessage(tr("Runner: %1").arg(adapter::qstr(m_engine->engine->runnerSummary())));
        Q_EMIT logMessage(tr("%n task(s) extracted; budget %1 trials, log %2", nullptr, n)
                              .arg(m_engine->totalTrials)
                              .arg(job.logPath));
        if (const auto& resumed = m_engine->engine->resumeStats()) {
            const tuning::ResumeStats& rs = *resumed;
            Q_EMIT logMessage(tr("Resumed from %1: %2 records, %3 of this network, %4 replayed, %5 unreadable lines")
                                  .arg(job.logPath)
                                  .arg(rs.records)
                                  .arg(rs.matched)
                                  .arg(rs.replayed)
                                  .arg(rs.badLines));
            std::lock_guard<std::mutex> lock(m_dags->d->mutex);
            for (int i = 0; i < n; ++i) {
                m_dags->d->entries[size_t(i)].best = m_engine->tuner->bestState(i);
                m_dags->d->entries[size_t(i)].bestCost = m_engine->tuner->bestCost(i);
            }
        }
        Q_EMIT tasksAdded(adapter::taskRows(*m_engine->tuner, -1));
        if (job.resume) {
            Q_EMIT latencyPointAdded(adapter::latencyPoint(m_engine->tuner->scheduler()));
        }
    } catch (const std::exception& ex) {
        fail(tr("Could not start tuning: %1").arg(QString::fromUtf8(ex.what())));
        return;
    }
    scheduleRound();
}

void TuningWorker::pushFleetEvent(const FleetEvent& e) {
    bool first = false;
    {
        std::lock_guard<std::mutex> lock(m_fleetMutex);
        first = m_fleetEvents.isEmpty();
        m_fleetEvents.append(e);
    }
    if (first) Q_EMIT fleetEventsPending();
}

QList<FleetEvent> TuningWorker::takeFleetEvents() {
    std::lock_guard<std::mutex> lock(m_fleetMutex);
    return std::exchange(m_fleetEvents, {});
}

void TuningWorker::wake() {
    if (m_running && !m_roundScheduled) scheduleRound();
}

void TuningWorker::scheduleRound() {
    m_roundScheduled = true;
    // Queued, not a loop: commands posted to this thread run between two rounds.
    QMetaObject::invokeMethod(this, &TuningWorker::runRound, Qt::QueuedConnection);
}

void TuningWorker::runRound() {
    m_roundScheduled = false;
    if (!m_running || !m_engine) return;
    if (stopRequested.load()) {
        finish();
        return;
    }
    if (pauseRequested.load()) {
        Q_EMIT logMessage(tr("Paused after %n trial(s).", nullptr, m_engine->tuner->scheduler().totalTrials()));
        Q_EMIT parked();
        return;  // wake() continues
    }
    bool more = false;
    try {
        more = m_engine->tuner->step();
    } catch (const std::exception& ex) {
        // Records measured so far are on disk already (one write per record).
        emitRoundUpdates(-1);
        fail(tr("Tuning stopped by an error: %1").arg(QString::fromUtf8(ex.what())));
        return;
    }
    emitRoundUpdates(-1);
    if (more)
        scheduleRound();
    else
        finish();
}

void TuningWorker::emitRoundUpdates(int tuningTask) {
    Engine& e = *m_engine;
    // One batch of each kind per round (STYLE.md §3.3 "coalesce before emitting").
    if (!e.pending.isEmpty()) {
        const QList<MeasureRow> rows = std::exchange(e.pending, {});
        int ok = 0;
        double best = -1;
        for (const auto& r : rows)
            if (r.errorNo == 0) {
                ++ok;
                best = best < 0 ? r.costMs : std::min(best, r.costMs);
            }
        Q_EMIT measurementsAvailable(rows);
        Q_EMIT logMessage(tr("Measured task %1: %2 trials, %3 valid, best %4 ms")
                              .arg(rows.first().taskId)
                              .arg(rows.size())
                              .arg(ok)
                              .arg(best < 0 ? QStringLiteral("-") : QString::number(best, 'f', 4)));
        Q_EMIT latencyPointAdded(adapter::latencyPoint(e.tuner->scheduler()));
    }
    Q_EMIT tasksUpdated(adapter::taskRows(*e.tuner, tuningTask));
    const int permille = std::clamp(int(1000.0 * e.tuner->scheduler().totalTrials() / std::max(1, e.totalTrials)), 0, 1000);
    if (permille != m_lastPermille) {
        m_lastPermille = permille;
        Q_EMIT progressChanged(permille);
    }
}

void TuningWorker::finish() {
    m_running = false;
    Engine& e = *m_engine;
    const auto& ts = e.tuner->scheduler();
    std::string table = tuning::PrintTableInfo::tableText(ts, -1);
    while (!table.empty() && table.back() == '\n') table.pop_back();
    const QString headline = stopRequested.load()
                                 ? tr("Tuning stopped: %1 trials (%2 failed) in %3 s, log %4")
                                 : tr("Tuning finished: %1 trials (%2 failed) in %3 s, log %4");
    Q_EMIT finished(headline.arg(ts.totalTrials())
                        .arg(e.engine->measurer().failed())
                        .arg(ts.elapsedSeconds(), 0, 'f', 0)
                        .arg(e.job.logPath) +
                    QLatin1Char('\n') + adapter::qstr(table));
}

void TuningWorker::fail(const QString& message) {
    m_running = false;
    Q_EMIT failed(message);
}

}  // namespace tb::session
