// SPDX-License-Identifier: Apache-2.0
#include "app/session/autotvmworker.h"

#include <QElapsedTimer>
#include <QMetaObject>
#include <QThread>

#include <algorithm>
#include <deque>
#include <set>
#include <thread>

#include "app/session/engineadapter.h"
#include "app/session/tuningworker.h"
#include "engine/autotvm/task_extraction.h"
#include "engine/autotvm/tuner.h"
#include "engine/autotvm/vta_tune.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "engine/record/record_io.h"
#include "engine/support/error.h"
#include "engine/tuning/tuning_job.h"
#include "engine/vta/vta_task.h"

namespace tb::session {

namespace {

/// Thrown from the tuner's callback to end a task early on stop (its records are written).
struct StopTuning {};

/// The XGBoost tuners' plan_size for VTA tasks: their spaces are a few hundred configs and the
/// window's n_trial is small, so the model is fitted after 16 measurements instead of TVM's 64
/// (`autotvm vta-tune --plan-size`).
constexpr int kVtaPlanSize = 16;

/// A JSON value as Python's str() prints the same value (TVM prints entities with str()).
std::string pyRepr(const nlohmann::ordered_json& v) {
    if (v.is_array()) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + pyRepr(v[i]);
        return s + "]";
    }
    if (v.is_string()) return "'" + v.get<std::string>() + "'";
    if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
    if (v.is_null()) return "None";
    return v.dump();
}

/// `str(config)` of TVM's ConfigEntity: "[('tile_ic', [-1, 2]), ('unroll_kw', True)],None,42", and
/// one "knob = value" line per knob.
void describeConfig(const autotvm::ConfigEntity& c, QString* tvmText, QStringList* knobs) {
    std::string list = "[";
    knobs->clear();
    for (size_t i = 0; i < c.knobs.size(); ++i) {
        const std::string value = pyRepr(autotvm::entityValueJson(c.knobs[i].second));
        list += (i ? ", ('" : "('") + c.knobs[i].first + "', " + value + ")";
        knobs->append(adapter::qstr(c.knobs[i].first + " = " + value));
    }
    list += "]," + c.codeHash.value_or("None") + "," + std::to_string(c.index);
    *tvmText = adapter::qstr(list);
}

/// The tensor shapes of a task's args: "1×64×56×56, 64×64×3×3".
QString argsSummary(const nlohmann::ordered_json& args) {
    QStringList shapes;
    for (const auto& a : args) {
        if (!a.is_array() || a.size() < 2 || a[0] != "TENSOR" || !a[1].is_array()) continue;
        QStringList dims;
        for (const auto& d : a[1]) dims.append(adapter::qstr(d.dump()));
        shapes.append(dims.join(QChar(0x00D7)));
    }
    return shapes.join(QStringLiteral(", "));
}

}  // namespace

struct AutotvmWorker::Engine {
    TuningJob job;
    quint64 jobId = 0;
    tuning::ResolvedTarget target;
    std::deque<autotvm::Task> tasks;   // tuners keep a reference: stable addresses
    std::vector<int> taskOfRow;        // row -> index into tasks, -1 for a dead row
    std::vector<AutotvmTaskRow> rows;  // a std::vector: references to a row stay valid
    std::unique_ptr<measure::LocalBuilder> builder;
    std::unique_ptr<measure::LocalRunner> runner;
    autotvm::MeasureOption measure;    // builder + runner, or the VTA simulator's measure function
    bool vta = false;                  // a VTA target: seed 004's tasks, simulated time
    std::unique_ptr<record::RecordWriter> writer;
    int nParallel = 1;
    int next = 0;                      // the next row to tune
    int totalTrials = 0, failedTrials = 0;
    QElapsedTimer clock;
};

AutotvmWorker::AutotvmWorker(std::shared_ptr<DagSource> dags) : m_dags(std::move(dags)) {}

AutotvmWorker::~AutotvmWorker() {
    m_engine.reset();  // in the worker thread (deleteLater), as TuningWorker's engine
}

QStringList AutotvmWorker::tunerNames() {
    // The engine's list (TVM's tutorial names), the one autotvm::makeTuner accepts.
    QStringList out;
    for (const auto& n : autotvm::tunerNames()) out.append(QString::fromStdString(n));
    return out;
}

void AutotvmWorker::start(const TuningJob& job, quint64 jobId) {
    Q_ASSERT(QThread::currentThread() == thread());
    m_engine.reset();
    m_running = true;
    m_lastPermille = -1;
    try {
        auto e = std::make_unique<Engine>();
        e->job = job;
        e->jobId = jobId;
        e->vta = vta::isVtaTargetString(job.target.toStdString());
        if (e->vta) {
            startVta(e);
            return;
        }
        e->target = tuning::resolveTarget(job.target.toStdString());
        if (!e->target.target.runsOnHost())
            throw UserError("AutoTVM mode measures on this machine; target '" + e->target.recordString +
                            "' does not run here");
        if (!job.onnxPath.isEmpty()) throw UserError("AutoTVM mode tunes zoo networks only");
        Q_EMIT logMessage(tr("Extracting the AutoTVM tasks of %1 (NCHW, batch %2) for %3…")
                              .arg(job.network)
                              .arg(job.batch)
                              .arg(adapter::qstr(e->target.recordString)));
        tuning::NetworkSource src;
        src.zooName = job.network.toStdString();
        src.batch = job.batch;
        src.layout = "NCHW";
        const autotvm::ExtractedTasks ex = autotvm::extractX86Tasks(tuning::loadNetwork(src));
        for (const autotvm::ExtractedTask& t : ex.tasks) {
            AutotvmTaskRow r;
            r.id = int(e->rows.size());
            r.taskName = adapter::qstr(t.taskName);
            r.args = adapter::qstr(t.args.dump());
            r.argsSummary = argsSummary(t.args);
            try {
                e->tasks.push_back(autotvm::Task::create(t.taskName, t.args, e->target.recordString));
                const autotvm::Task& task = e->tasks.back();
                r.spaceSize = task.space.size();
                r.flop = task.flop;
                r.nTrial = int(std::min<std::int64_t>(std::max(1, job.nTrial), task.space.size()));
                r.state = QStringLiteral("pending");
                e->taskOfRow.push_back(int(e->tasks.size()) - 1);
            } catch (const UserError& err) {
                r.state = QStringLiteral("dead");
                r.error = QString::fromUtf8(err.what());
                e->taskOfRow.push_back(-1);
            }
            e->rows.push_back(r);
        }
        if (e->rows.empty()) throw UserError("network '" + src.zooName + "' has no AutoTVM task that runs here");
        e->builder = std::make_unique<measure::LocalBuilder>(e->target.target);
        measure::RunnerOptions ro;
        ro.number = job.number;
        ro.repeat = job.repeat;
        ro.minRepeatMs = job.minRepeatMs;
        ro.timeoutS = job.timeoutS;
        // AutoTVM tasks share one runner: only "on" flushes (auto keeps TVM's default, warm).
        ro.enableCpuCacheFlush = job.cacheFlush == QLatin1String("on");
        e->runner = std::make_unique<measure::LocalRunner>(ro);
        e->measure = {e->builder.get(), e->runner.get()};
        if (!job.logPath.isEmpty()) e->writer = std::make_unique<record::RecordWriter>(job.logPath.toStdString());
        e->nParallel = int(std::max(1u, std::thread::hardware_concurrency()));
        m_dags->resetJob(jobId, e->target.target, int(e->rows.size()));
        e->clock.start();
        m_engine = std::move(e);
        Q_EMIT logMessage(tr("%n AutoTVM task(s) extracted%1; tuner %2, n_trial %3 per task, log %4", nullptr,
                             int(m_engine->rows.size()))
                              .arg(ex.skippedOps ? tr(" (%n conv2d/dense op(s) without a template that runs here skipped)",
                                                      nullptr, ex.skippedOps)
                                                 : QString())
                              .arg(job.tuner)
                              .arg(job.nTrial)
                              .arg(job.logPath));
        Q_EMIT tasksAdded(QList<AutotvmTaskRow>(m_engine->rows.begin(), m_engine->rows.end()));
        emitProgress();
    } catch (const std::exception& ex) {
        fail(tr("Could not start AutoTVM tuning: %1").arg(QString::fromUtf8(ex.what())));
        return;
    }
    scheduleTask();
}

void AutotvmWorker::startVta(std::unique_ptr<Engine>& e) {
    const TuningJob& job = e->job;
    const vta::VtaConfig cfg = vta::vtaConfigFromTargetString(job.target.toStdString());
    if (!job.onnxPath.isEmpty()) throw UserError("VTA tuning quantizes zoo networks only");
    Q_EMIT logMessage(tr("Quantizing %1 (int8, global scale 8, first conv kept float), packing it for VTA %2 "
                         "(nn.max_pool2d .. nn.global_avg_pool2d) and extracting its VTA tasks…")
                          .arg(job.network, adapter::qstr(cfg.model())));
    tuning::NetworkSource src;
    src.zooName = job.network.toStdString();
    src.batch = job.batch;
    src.layout = "NCHW";
    std::set<std::string> ops{"conv2d"};
    if (vta::vtaTargetHasAluOps(cfg)) ops.insert({"add", "multiply"});
    const autotvm::VtaNetworkTasks ex = autotvm::extractVtaNetworkTasks(cfg, tuning::loadNetwork(src), ops);
    for (const autotvm::VtaNetworkTask& t : ex.tasks) {
        AutotvmTaskRow r;
        r.id = int(e->rows.size());
        r.taskName = adapter::qstr(t.task.taskName);
        r.args = adapter::qstr(t.task.args.dump());
        r.argsSummary = argsSummary(t.task.args);
        r.simulated = true;
        e->tasks.push_back(t.task);
        r.spaceSize = t.task.space.size();
        r.flop = t.task.flop;
        r.nTrial = int(std::min<std::int64_t>(std::max(1, job.nTrial), t.task.space.size()));
        r.state = QStringLiteral("pending");
        e->taskOfRow.push_back(int(e->tasks.size()) - 1);
        e->rows.push_back(r);
    }
    if (e->rows.empty()) throw UserError("network '" + src.zooName + "' has no VTA task");
    QString measuredOn;
    if (job.runner == QLatin1String("rpc")) {
        measure::RpcRunnerOptions ro;
        ro.trackerHost = job.trackerHost.toStdString();
        ro.trackerPort = job.trackerPort;
        ro.key = job.deviceKey.toStdString();
        ro.number = job.number;
        ro.repeat = job.repeat;
        ro.minRepeatMs = job.minRepeatMs;
        ro.timeoutS = job.timeoutS;
        ro.trackerRetryTimeoutS = job.trackerRetryTimeoutS;
        e->measure.measureFunction = autotvm::vtaRpcMeasureFunction(cfg, ro, std::uint32_t(job.seed));
        measuredOn = tr("the VTA device '%1' of tracker %2:%3").arg(job.deviceKey, job.trackerHost).arg(job.trackerPort);
    } else {
        e->measure.measureFunction = autotvm::vtaSimMeasureFunction(cfg, std::uint32_t(job.seed));
        measuredOn = tr("the VTA simulator in this process");
    }
    if (!job.logPath.isEmpty()) e->writer = std::make_unique<record::RecordWriter>(job.logPath.toStdString());
    e->nParallel = 8;  // TVM's n_parallel for the seed's RPCRunner batches; the simulator is deterministic
    m_dags->resetJob(e->jobId, codegen::Target::host(), int(e->rows.size()));
    e->clock.start();
    m_engine = std::move(e);
    Q_EMIT logMessage(tr("%1 VTA task(s) (%2 extracted, %3 packed and not float, merged as seed 004); tuner %4, "
                         "n_trial %5 per task, measured on %6 (costs are simulated time), log %7")
                          .arg(m_engine->rows.size())
                          .arg(ex.extracted)
                          .arg(ex.filtered)
                          .arg(job.tuner)
                          .arg(job.nTrial)
                          .arg(measuredOn, job.logPath));
    Q_EMIT tasksAdded(QList<AutotvmTaskRow>(m_engine->rows.begin(), m_engine->rows.end()));
    emitProgress();
    scheduleTask();
}

void AutotvmWorker::wake() {
    if (m_running && !m_scheduled) scheduleTask();
}

void AutotvmWorker::scheduleTask() {
    m_scheduled = true;
    QMetaObject::invokeMethod(this, &AutotvmWorker::runTask, Qt::QueuedConnection);
}

void AutotvmWorker::emitProgress() {
    const Engine& e = *m_engine;
    int done = 0, budget = 0;
    for (const auto& r : e.rows) {
        done += std::min(r.trials, r.nTrial);
        budget += r.nTrial;
    }
    const int permille = std::clamp(int(1000.0 * done / std::max(1, budget)), 0, 1000);
    if (permille == m_lastPermille) return;
    m_lastPermille = permille;
    Q_EMIT progressChanged(permille);
}

void AutotvmWorker::runTask() {
    m_scheduled = false;
    if (!m_running || !m_engine) return;
    Engine& e = *m_engine;
    if (stopRequested.load()) {
        finish();
        return;
    }
    if (pauseRequested.load()) {
        Q_EMIT logMessage(tr("Paused after %n trial(s).", nullptr, e.totalTrials));
        Q_EMIT parked();
        return;  // wake() continues
    }
    while (e.next < int(e.rows.size()) && e.taskOfRow[size_t(e.next)] < 0) ++e.next;
    if (e.next >= int(e.rows.size())) {
        finish();
        return;
    }
    const int rowId = e.next++;
    AutotvmTaskRow& row = e.rows[size_t(rowId)];
    const autotvm::Task& task = e.tasks[size_t(e.taskOfRow[size_t(rowId)])];
    row.state = QStringLiteral("tuning");
    Q_EMIT tasksUpdated({row});
    Q_EMIT logMessage(tr("[Task %1/%2] %3 %4: %5 configs, %6 GFLOP, tuner %7, n_trial %8")
                          .arg(rowId + 1, 2)
                          .arg(e.rows.size(), 2)
                          .arg(row.taskName, row.argsSummary)
                          .arg(row.spaceSize)
                          .arg(row.flop / 1e9, 0, 'f', 3)
                          .arg(e.job.tuner)
                          .arg(row.nTrial));
    bool stopped = false;
    try {
        std::unique_ptr<autotvm::Tuner> tuner =
            e.vta ? autotvm::makeVtaTuner(e.job.tuner.toStdString(), task, e.job.seed, kVtaPlanSize)
                  : autotvm::makeTuner(e.job.tuner.toStdString(), task, e.job.seed);
        autotvm::TuneOptions to;
        to.nTrial = row.nTrial;
        to.earlyStopping = std::max(0, e.job.earlyStopping);
        to.nParallel = e.nParallel;
        autotvm::TuneCallback onBatch = [&](const autotvm::Tuner& t, const std::vector<autotvm::ConfigEntity>& configs,
                                            const std::vector<measure::MeasureResult>& results) {
            QList<AutotvmTrial> trials;
            for (size_t i = 0; i < configs.size(); ++i) {
                if (e.writer) {
                    if (e.vta)  // seed 004's log_to_file: also the scalar-rhs form of an lhs == rhs task
                        for (const auto& rec : autotvm::logToFileRecords(task, configs[i], results[i])) e.writer->append(rec);
                    else
                        e.writer->append(autotvm::makeRecord(task, configs[i], results[i]));
                }
                AutotvmTrial m;
                m.taskId = rowId;
                m.trial = row.trials + int(i);
                m.index = configs[i].index;
                m.gflops = t.flops(results[i]) / 1e9;
                m.errorNo = int(results[i].errorNo);
                for (const auto& [name, value] : results[i].deviceCounters) m.counters.insert(adapter::qstr(name), value);
                if (m.errorNo != 0) ++row.failed;
                trials.append(m);
            }
            // The best after each trial of the batch (Tuner::tune updates its best per config).
            double best = row.bestGflops;
            for (auto& m : trials) m.bestGflops = best = std::max(best, m.gflops);
            row.trials += int(configs.size());
            e.totalTrials += int(configs.size());
            e.failedTrials = 0;
            for (const auto& r : e.rows) e.failedTrials += r.failed;
            if (!trials.isEmpty()) row.currentGflops = trials.last().gflops;  // TVM shows the batch's last
            if (t.bestConfig() && t.bestConfig()->index != row.bestIndex) {
                const autotvm::ConfigEntity& b = *t.bestConfig();
                row.bestIndex = b.index;
                row.bestTrial = t.bestIter();
                describeConfig(b, &row.bestConfig, &row.bestKnobs);
                for (const auto& m : trials)
                    if (m.index == b.index) row.bestCounters = m.counters;
                try {
                    const autotvm::TemplateInstance inst = task.instantiate(b);
                    m_dags->setTask(rowId, inst.dag, task.taskName + " " + row.argsSummary.toStdString(), inst.state,
                                    task.flop / std::max(1.0, t.bestFlops()));
                } catch (const std::exception&) {
                    // It was measured, so it instantiates; the loop nest just stays the last one.
                }
            }
            row.bestGflops = t.bestFlops() / 1e9;
            Q_EMIT trialsAvailable(trials);
            Q_EMIT tasksUpdated({row});
            emitProgress();
            if (pauseRequested.load() && !stopRequested.load()) {
                Q_EMIT logMessage(tr("Paused after %n trial(s).", nullptr, e.totalTrials));
                Q_EMIT parked();
                // Parked inside the task: the flags are atomics the GUI thread sets directly.
                while (pauseRequested.load() && !stopRequested.load()) QThread::msleep(50);
            }
            if (stopRequested.load()) throw StopTuning{};
        };
        tuner->tune(to, e.measure, {onBatch});
    } catch (const StopTuning&) {
        stopped = true;
    } catch (const std::exception& ex) {
        row.state = QStringLiteral("dead");
        row.error = QString::fromUtf8(ex.what());
        Q_EMIT tasksUpdated({row});
        fail(tr("AutoTVM tuning stopped by an error in task %1: %2").arg(rowId).arg(row.error));
        return;
    }
    row.state = stopped ? QStringLiteral("stopped") : QStringLiteral("tuned");
    Q_EMIT tasksUpdated({row});
    Q_EMIT logMessage(tr("[Task %1/%2] Current/Best: %3/%4 GFLOPS | Progress: (%5/%6) | %7 s Done.")
                          .arg(rowId + 1, 2)
                          .arg(e.rows.size(), 2)
                          .arg(row.currentGflops, 7, 'f', 2)
                          .arg(row.bestGflops, 7, 'f', 2)
                          .arg(row.trials)
                          .arg(row.nTrial)
                          .arg(e.clock.elapsed() / 1000.0, 0, 'f', 2));
    if (!row.bestConfig.isEmpty()) Q_EMIT logMessage(tr("Best config: %1").arg(row.bestConfig));
    scheduleTask();  // the next task, or finish (a stop is seen there)
}

void AutotvmWorker::finish() {
    m_running = false;
    const Engine& e = *m_engine;
    const QString headline = stopRequested.load() ? tr("AutoTVM tuning stopped: %1 trials (%2 failed) in %3 s, log %4")
                                                  : tr("AutoTVM tuning finished: %1 trials (%2 failed) in %3 s, log %4");
    QStringList lines{headline.arg(e.totalTrials)
                          .arg(e.failedTrials)
                          .arg(e.clock.elapsed() / 1000.0, 0, 'f', 0)
                          .arg(e.job.logPath)};
    for (const auto& r : e.rows)
        lines.append(QStringLiteral("%1  %2  %3  %4/%5  %6 GFLOPS")
                         .arg(r.id, 3)
                         .arg(r.taskName, -28)
                         .arg(r.argsSummary, -36)
                         .arg(r.trials)
                         .arg(r.nTrial)
                         .arg(r.bestGflops, 0, 'f', 2));
    Q_EMIT finished(lines.join(QLatin1Char('\n')));
}

void AutotvmWorker::fail(const QString& message) {
    m_running = false;
    Q_EMIT failed(message);
}

}  // namespace tb::session
