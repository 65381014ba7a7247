// SPDX-License-Identifier: Apache-2.0
#include "app/session/logloader.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QHash>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <map>
#include <optional>
#include <unordered_map>

#include "engine/record/history_best.h"
#include "engine/record/log_summary.h"
#include "engine/record/record_io.h"

namespace tb::session {

namespace {

// Runs `work` on a short-lived thread and hands its result to `done` in `context`'s thread.
template <class Result>
void runAsync(QObject* context, std::function<Result()> work, std::function<void(const Result&)> done) {
    QPointer<QObject> ctx(context);
    QThread* t = QThread::create([ctx, work = std::move(work), done = std::move(done)] {
        Result r = work();
        if (ctx) QMetaObject::invokeMethod(ctx, [r, done] { done(r); }, Qt::QueuedConnection);
    });
    t->setObjectName(QStringLiteral("LogLoader"));
    QObject::connect(t, &QThread::finished, t, &QObject::deleteLater);
    t->start();
}

// Why `path` is no log at all, or empty when it can be read; said before the engine says less.
QString fileProblem(const QString& path) {
    const QFileInfo fi(path);
    if (!fi.exists()) return QCoreApplication::translate("tb::session::LogLoader", "the file does not exist");
    if (fi.isDir()) return QCoreApplication::translate("tb::session::LogLoader", "it is a folder, not a log file");
    if (!fi.isReadable()) return QCoreApplication::translate("tb::session::LogLoader", "the file cannot be read (permission denied)");
    return {};
}

LogSnapshot errorSnapshot(const QString& path, const QString& message) {
    LogSnapshot s;
    s.path = path;
    s.format = QStringLiteral("error");
    s.badLines.append({0, message});
    return s;
}

}  // namespace

LogSnapshot loadLog(const QString& path) {
    if (const QString problem = fileProblem(path); !problem.isEmpty()) return errorSnapshot(path, problem);
    LogSnapshot s;
    s.path = path;
    try {
        const std::string text = record::readTextFile(path.toStdString());
        const record::LogFormat format = record::detectLogFormat(text);
        // Parsed once; an undecidable file is read as auto_scheduler (summarizeFile does the same).
        std::optional<record::LogContents<record::MeasureRecord>> ansor;
        std::optional<record::LogContents<record::AutoTvmRecord>> autotvm;
        record::LogSummary sum;
        if (format == record::LogFormat::AutoTvm) {
            autotvm = record::parseAutoTvmRecords(text);
            sum = record::summarize(*autotvm);
        } else {
            ansor = record::parseMeasureRecords(text);
            sum = record::summarize(*ansor);
        }
        if (sum.records == 0) {
            // "auto_scheduler format, 0 records" would hide what is wrong with the file.
            if (text.find_first_not_of(" \t\r\n") == std::string::npos) return errorSnapshot(path, QCoreApplication::translate("tb::session::LogLoader", "the file is empty"));
            if (!sum.badLines.empty())
                return errorSnapshot(path, QCoreApplication::translate("tb::session::LogLoader",
                                                                       "it is not a TVM tuning log: none of its %n line(s) "
                                                                       "is an auto_scheduler or AutoTVM record (line %1: %2)",
                                                                       nullptr, sum.totalLines)
                                               .arg(sum.badLines.front().line)
                                               .arg(QString::fromStdString(sum.badLines.front().reason)));
            return errorSnapshot(path, QCoreApplication::translate("tb::session::LogLoader",
                                                                "the log holds no records, only %n comment line(s)",
                                                                nullptr, sum.commentLines));
        }
        s.format = QString::fromLatin1(record::logFormatName(sum.format));
        s.totalLines = sum.totalLines;
        s.records = sum.records;
        s.valid = sum.valid;
        s.commentLines = sum.commentLines;
        for (const auto& [e, n] : sum.errorCounts) s.errorCounts.append({e, n});
        std::map<std::string, int> indexOf;
        for (const auto& w : sum.workloads) {
            LogWorkloadRow r;
            r.key = QString::fromStdString(w.key);
            r.name = QString::fromStdString(w.name);
            r.records = w.records;
            r.valid = w.valid;
            r.bestMs = w.valid > 0 ? w.bestCost * 1e3 : -1;
            r.gflops = w.gflops;
            r.target = QString::fromStdString(w.bestTarget);
            indexOf[w.key] = int(s.workloads.size());
            s.workloads.append(r);
        }
        for (const auto& b : sum.badLines) s.badLines.append({b.line, QString::fromStdString(b.reason)});
        const auto addPoint = [&s](int i, int errorNo, double costMs, int workload) {
            LogPoint pt;
            pt.record = i;
            pt.errorNo = errorNo;
            pt.costMs = costMs;
            pt.workload = workload;
            s.points.append(pt);
        };
        if (ansor) {
            // Workload rows carry the first-seen spelling; match records by the decoded key.
            std::map<std::string, int> byCanon;
            for (const auto& [k, i] : indexOf) byCanon[record::WorkloadKey::parse(k).canonical()] = i;
            for (size_t i = 0; i < ansor->records.size(); ++i) {
                const auto& rec = ansor->records[i];
                auto it = byCanon.find(rec.workload().canonical());
                addPoint(int(i), rec.errorNo, rec.valid() ? rec.meanCost() * 1e3 : -1, it == byCanon.end() ? 0 : it->second);
            }
        } else {
            for (size_t i = 0; i < autotvm->records.size(); ++i) {
                const auto& rec = autotvm->records[i];
                auto it = indexOf.find(rec.workloadKey());
                addPoint(int(i), rec.errorNo, rec.valid() ? rec.meanCost() * 1e3 : -1, it == indexOf.end() ? 0 : it->second);
            }
        }
    } catch (const std::exception& e) {
        return errorSnapshot(path, QString::fromUtf8(e.what()));
    }
    return s;
}

void loadLogAsync(const QString& path, QObject* context, std::function<void(const LogSnapshot&)> done) {
    runAsync<LogSnapshot>(context, [path] { return loadLog(path); }, std::move(done));
}

QString distillLog(const QString& inPath, const QString& outPath) {
    try {
        const std::string in = inPath.toStdString(), out = outPath.toStdString();
        auto fmt = record::detectLogFormat(record::readTextFile(in));
        record::DistillReport r = fmt == record::LogFormat::AutoTvm ? record::pickBestFile(in, out)
                                                                     : record::distillRecordFile(in, out);
        return QCoreApplication::translate("tb::session::LogLoader", "%1 records read, %2 kept in %3")
            .arg(r.inputRecords).arg(r.written).arg(outPath);
    } catch (const std::exception& e) {
        return QStringLiteral("error: ") + QString::fromUtf8(e.what());
    }
}

QList<LogMatch> matchWorkloads(const LogSnapshot& a, const LogSnapshot& b) {
    const auto canon = [](const LogSnapshot& log, const QString& key) {
        return log.format == QLatin1String("autotvm") ? key.toStdString()
                                                       : record::WorkloadKey::parse(key.toStdString()).canonical();
    };
    QList<LogMatch> out;
    std::unordered_map<std::string, qsizetype> rowOf;
    for (int i = 0; i < a.workloads.size(); ++i) {
        rowOf.emplace(canon(a, a.workloads[i].key), out.size());
        out.append({a.workloads[i].key, i, -1});
    }
    for (int j = 0; j < b.workloads.size(); ++j) {
        auto it = rowOf.find(canon(b, b.workloads[j].key));
        if (it != rowOf.end() && out[it->second].b < 0)
            out[it->second].b = j;
        else
            out.append({b.workloads[j].key, -1, j});
    }
    return out;
}

TuningHistory loadTuningHistory(const QString& path, const QList<TaskRow>& tasks, int perRound, qint64 maxBytes) {
    TuningHistory h;
    h.path = path;
    try {
        std::string text = record::readTextFile(path.toStdString());
        if (maxBytes >= 0 && qint64(text.size()) > maxBytes) {
            // Whole lines only: a line the job was appending when the file was measured is not history yet.
            const size_t end = maxBytes > 0 ? text.rfind('\n', size_t(maxBytes) - 1) : std::string::npos;
            text.resize(end == std::string::npos ? 0 : end + 1);
        }
        const auto log = record::parseMeasureRecords(text);
        std::unordered_map<std::string, int> taskOf;
        for (int i = 0; i < tasks.size(); ++i) taskOf.emplace(tasks[i].workloadKey.toStdString(), i);
        std::vector<double> best(size_t(tasks.size()), -1);  // ms; < 0: none yet
        double lastTimestamp = 0;
        for (const auto& rec : log.records)
            if (taskOf.count(rec.task.workloadKey)) lastTimestamp = rec.timestamp;
        int previousTask = -1, inRound = 0;
        const auto closeRound = [&] {
            LatencyPoint p;
            p.trials = int(h.measurements.size());
            p.elapsedS = h.measurements.last().elapsedS;
            p.tasks = int(tasks.size());
            double partial = 0;
            for (int i = 0; i < tasks.size(); ++i) {
                if (best[size_t(i)] < 0) continue;
                partial += tasks[i].weight * best[size_t(i)];
                ++p.tasksWithCost;
            }
            p.partialMs = p.tasksWithCost > 0 ? partial : -1;
            p.estimatedMs = p.tasksWithCost == p.tasks ? partial : -1;
            h.points.append(p);
        };
        for (const auto& rec : log.records) {
            auto it = taskOf.find(rec.task.workloadKey);
            if (it == taskOf.end()) continue;
            const int t = it->second;
            if (!h.measurements.isEmpty() && (t != previousTask || inRound >= std::max(1, perRound))) {
                closeRound();
                inRound = 0;
            }
            MeasureRow r;
            r.taskId = tasks[t].id;
            r.trial = int(h.measurements.size());
            r.errorNo = rec.errorNo;
            if (rec.valid()) {
                const double c = rec.meanCost();
                r.costMs = c * 1e3;
                r.gflops = c > 0 ? tasks[t].flop / c / 1e9 : 0;
                if (best[size_t(t)] < 0 || r.costMs < best[size_t(t)]) best[size_t(t)] = r.costMs;
            }
            r.elapsedS = rec.timestamp > 0 && lastTimestamp > 0 ? rec.timestamp - lastTimestamp : 0;
            r.allCostS = rec.allCost;
            r.fromLog = true;
            h.measurements.append(r);
            previousTask = t;
            ++inRound;
        }
        if (!h.measurements.isEmpty()) closeRound();
    } catch (const std::exception& e) {
        h.measurements.clear();
        h.points.clear();
        h.error = QString::fromUtf8(e.what());
    }
    return h;
}

void loadTuningHistoryAsync(const QString& path, const QList<TaskRow>& tasks, int perRound, qint64 maxBytes,
                            QObject* context, std::function<void(const TuningHistory&)> done) {
    runAsync<TuningHistory>(
        context, [path, tasks, perRound, maxBytes] { return loadTuningHistory(path, tasks, perRound, maxBytes); },
        std::move(done));
}

}  // namespace tb::session
