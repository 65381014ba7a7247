// SPDX-License-Identifier: Apache-2.0
#include "app/session/tuningsession.h"

#include <QMetaObject>
#include <QThread>

#include <optional>
#include <utility>

#include "app/session/autotvmworker.h"
#include "app/session/benchworker.h"
#include "app/session/tuningworker.h"
#include "engine/vta/vta_task.h"
#include "engine/codegen/target.h"
#include "engine/graph/zoo.h"

namespace tb::session {

TuningSession::TuningSession(QObject* parent) : QObject(parent), m_dags(std::make_shared<DagSource>()) {
    qRegisterMetaType<TaskRow>();
    qRegisterMetaType<MeasureRow>();
    qRegisterMetaType<LatencyPoint>();
    qRegisterMetaType<DagSnapshot>();
    qRegisterMetaType<TuningJob>();
    qRegisterMetaType<RooflineSnapshot>();
    qRegisterMetaType<QList<TaskRow>>();
    qRegisterMetaType<QList<MeasureRow>>();
    qRegisterMetaType<FleetEvent>();
    qRegisterMetaType<QList<FleetEvent>>();
    qRegisterMetaType<QList<AutotvmTaskRow>>();
    qRegisterMetaType<QList<AutotvmTrial>>();
}

TuningSession::~TuningSession() {
    shutdown();
    delete m_dagThread;  // already joined by shutdown(); its queued finish handler dies with us
    delete m_benchThread;
}

QStringList TuningSession::networkNames() {
    QStringList out;
    for (const auto& n : graph::networkNames()) out.append(QString::fromStdString(n));
    return out;
}

QString TuningSession::validateTarget(const QString& target, const QString& host) {
    try {
        // A VTA target names a VTA config (AutoTVM mode); others are what buildTuner parses
        // (tuning::resolveTarget): the target with its host.
        if (isVtaTarget(target)) vta::vtaConfigFromTargetString(target.toStdString());
        else codegen::Target::parse(target.toStdString(), host.toStdString());
        return {};
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

bool TuningSession::isGpuTarget(const QString& target) {
    try {
        return codegen::Target::parse(target.toStdString()).isGpu();
    } catch (const std::exception&) {
        return false;
    }
}

bool TuningSession::isVtaTarget(const QString& target) { return vta::isVtaTargetString(target.trimmed().toStdString()); }

QStringList TuningSession::vtaTargetPresets() {
    QStringList out;
    for (const char* t : {"sim", "intelfocl", "pynq"})
        out.append(QString::fromStdString(vta::vtaTargetString(vta::VtaConfig::forTarget(t))));
    return out;
}

QStringList TuningSession::autotvmTunerNames() { return AutotvmWorker::tunerNames(); }

void TuningSession::setState(State s) {
    if (s == m_state) return;
    m_state = s;
    Q_EMIT stateChanged(s);
}

void TuningSession::ensureWorker() {
    if (m_worker) return;
    m_thread = std::make_unique<QThread>();
    m_thread->setObjectName(QStringLiteral("TuningSession worker"));
    m_worker = new TuningWorker(m_dags);
    m_worker->moveToThread(m_thread.get());
    // The worker (and with it every engine object) is destroyed in its own thread.
    connect(m_thread.get(), &QThread::finished, m_worker, &QObject::deleteLater);
    // Worker signals arrive queued: the payloads are implicitly shared value types.
    connect(m_worker, &TuningWorker::tasksAdded, this, &TuningSession::tasksAdded);
    connect(m_worker, &TuningWorker::tasksUpdated, this, &TuningSession::tasksUpdated);
    connect(m_worker, &TuningWorker::measurementsAvailable, this, &TuningSession::measurementsAvailable);
    connect(m_worker, &TuningWorker::latencyPointAdded, this, &TuningSession::latencyPointAdded);
    connect(m_worker, &TuningWorker::progressChanged, this, &TuningSession::progressChanged);
    connect(m_worker, &TuningWorker::logMessage, this, &TuningSession::logMessage);
    connect(m_worker, &TuningWorker::parked, this, &TuningSession::paused);
    // Emitted on the engine's measuring threads, so queued here; one drain takes every event posted so far.
    connect(m_worker, &TuningWorker::fleetEventsPending, this, [this] {
        if (!m_worker) return;
        const QList<FleetEvent> events = m_worker->takeFleetEvents();
        if (!events.isEmpty()) Q_EMIT fleetEventsAvailable(events);
    }, Qt::QueuedConnection);
    const auto onFinished = [this](const QString& summary) {
        setState(State::Idle);
        Q_EMIT tuningFinished(summary);
    };
    const auto onFailed = [this](const QString& message) {
        setState(State::Idle);
        Q_EMIT tuningFailed(message);
    };
    connect(m_worker, &TuningWorker::finished, this, onFinished);
    connect(m_worker, &TuningWorker::failed, this, onFailed);
    m_autotvm = new AutotvmWorker(m_dags);
    m_autotvm->moveToThread(m_thread.get());
    connect(m_thread.get(), &QThread::finished, m_autotvm, &QObject::deleteLater);
    connect(m_autotvm, &AutotvmWorker::tasksAdded, this, &TuningSession::autotvmTasksAdded);
    connect(m_autotvm, &AutotvmWorker::tasksUpdated, this, &TuningSession::autotvmTasksUpdated);
    connect(m_autotvm, &AutotvmWorker::trialsAvailable, this, &TuningSession::autotvmTrialsAvailable);
    connect(m_autotvm, &AutotvmWorker::progressChanged, this, &TuningSession::progressChanged);
    connect(m_autotvm, &AutotvmWorker::logMessage, this, &TuningSession::logMessage);
    connect(m_autotvm, &AutotvmWorker::parked, this, &TuningSession::paused);
    connect(m_autotvm, &AutotvmWorker::finished, this, onFinished);
    connect(m_autotvm, &AutotvmWorker::failed, this, onFailed);
    m_thread->start();
}

void TuningSession::setWorkerFlags(bool stop, bool pause, bool wake) {
    m_worker->stopRequested = stop;
    m_worker->pauseRequested = pause;
    m_autotvm->stopRequested = stop;
    m_autotvm->pauseRequested = pause;
    if (!wake) return;
    // Only the worker of the running job has work to continue; the other ignores wake().
    QMetaObject::invokeMethod(m_worker, [w = m_worker] { w->wake(); }, Qt::QueuedConnection);
    QMetaObject::invokeMethod(m_autotvm, [w = m_autotvm] { w->wake(); }, Qt::QueuedConnection);
}

void TuningSession::start(const TuningJob& job) {
    if (m_state != State::Idle) {
        Q_EMIT logMessage(tr("A job is already running: stop it first."));
        return;
    }
    if (m_benchThread) {
        Q_EMIT logMessage(tr("A benchmark is running: tune when it has finished."));
        return;
    }
    ensureWorker();
    const quint64 id = ++m_jobId;
    setWorkerFlags(false, false, false);
    setState(State::Running);
    if (job.autotvm)
        QMetaObject::invokeMethod(m_autotvm, [w = m_autotvm, job, id] { w->start(job, id); }, Qt::QueuedConnection);
    else
        QMetaObject::invokeMethod(m_worker, [w = m_worker, job, id] { w->start(job, id); }, Qt::QueuedConnection);
}

void TuningSession::pause() {
    if (m_state != State::Running) return;
    setWorkerFlags(false, true, false);
    setState(State::Paused);
}

void TuningSession::resume() {
    if (m_state != State::Paused) return;
    setState(State::Running);
    setWorkerFlags(false, false, true);
}

void TuningSession::stop() {
    if (m_state != State::Running && m_state != State::Paused) return;
    // Checked by the worker between rounds: the running round completes and is recorded.
    setState(State::Stopping);
    setWorkerFlags(true, false, true);
}

void TuningSession::shutdown() {
    if (m_thread) {
        setWorkerFlags(true, false, false);
        // The event loop ends after the event it is running (at most the current round, whose
        // records are already appended); queued rounds are dropped; the worker is deleted in its
        // thread before wait() returns.
        m_thread->quit();
        m_thread->wait();
        m_thread.reset();
        m_worker = nullptr;
        m_autotvm = nullptr;
    }
    if (m_dagThread) m_dagThread->wait();
    if (m_benchThread) m_benchThread->wait();  // a device run ends within its timeouts
    setState(State::Idle);
}

void TuningSession::requestDag(int taskId) {
    if (m_dagThread) {
        m_pendingDagTask = taskId;  // only the latest request matters
        return;
    }
    launchDagJob(taskId);
}

void TuningSession::launchDagJob(int taskId) {
    auto result = std::make_shared<std::optional<DagSnapshot>>();
    std::shared_ptr<const DagSource> source = m_dags;
    // Lowering and compiling take tens of milliseconds and a round can take a minute: neither
    // the GUI nor the worker waits for it.
    m_dagThread = QThread::create([source, result, taskId] {
        try {
            *result = source->snapshot(taskId);
        } catch (const std::exception&) {
            result->reset();
        }
    });
    m_dagThread->setObjectName(QStringLiteral("TuningSession DAG"));
    connect(m_dagThread, &QThread::finished, this, [this, result] {
        if (QThread* t = std::exchange(m_dagThread, nullptr)) {
            t->wait();
            t->deleteLater();
        }
        if (*result && (*result)->jobId == m_jobId) Q_EMIT dagAvailable(**result);
        if (m_pendingDagTask >= 0) launchDagJob(std::exchange(m_pendingDagTask, -1));
    });
    m_dagThread->start();
}

void TuningSession::compileAndBenchmark(const TuningJob& job) {
    if (m_benchThread) {
        Q_EMIT logMessage(tr("A benchmark is already running."));
        return;
    }
    if (m_state != State::Idle) {
        Q_EMIT logMessage(tr("Stop the tuning job first: a benchmark beside it would time the tuning too."));
        return;
    }
    auto outcome = std::make_shared<BenchOutcome>();
    // Lines are posted to this object's thread as they come; queued calls die with it (shutdown
    // waits for the thread first).
    m_benchThread = QThread::create([this, job, outcome] {
        *outcome = compileAndBenchmarkJob(job, [this](const QString& line) {
            QMetaObject::invokeMethod(this, [this, line] { Q_EMIT logMessage(line); }, Qt::QueuedConnection);
        });
    });
    m_benchThread->setObjectName(QStringLiteral("TuningSession benchmark"));
    connect(m_benchThread, &QThread::finished, this, [this, outcome] {
        if (QThread* t = std::exchange(m_benchThread, nullptr)) {
            t->wait();
            t->deleteLater();
        }
        if (!outcome->roofline.kernels.isEmpty()) Q_EMIT rooflineAvailable(outcome->roofline);
        Q_EMIT benchmarkFinished(outcome->status, outcome->ok);
    });
    Q_EMIT benchmarkStarted();
    m_benchThread->start();
}

}  // namespace tb::session
