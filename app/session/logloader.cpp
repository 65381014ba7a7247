// SPDX-License-Identifier: Apache-2.0
#include "app/session/logloader.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <map>

#include "engine/record/history_best.h"
#include "engine/record/log_summary.h"
#include "engine/record/record_io.h"

namespace tb::session {

LogSnapshot loadLog(const QString& path) {
    LogSnapshot s;
    s.path = path;
    try {
        const std::string p = path.toStdString();
        record::LogSummary sum = record::summarizeFile(p);
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
        if (sum.format == record::LogFormat::AutoScheduler) {
            auto log = record::readMeasureRecords(p);
            // Workload rows carry the first-seen spelling; match records by the decoded key.
            std::map<std::string, int> byCanon;
            for (const auto& [k, i] : indexOf) byCanon[record::WorkloadKey::parse(k).canonical()] = i;
            for (size_t i = 0; i < log.records.size(); ++i) {
                const auto& rec = log.records[i];
                LogPoint pt;
                pt.record = int(i);
                pt.errorNo = rec.errorNo;
                pt.costMs = rec.valid() ? rec.meanCost() * 1e3 : -1;
                auto it = byCanon.find(rec.workload().canonical());
                pt.workload = it == byCanon.end() ? 0 : it->second;
                s.points.append(pt);
            }
        } else if (sum.format == record::LogFormat::AutoTvm) {
            auto log = record::readAutoTvmRecords(p);
            for (size_t i = 0; i < log.records.size(); ++i) {
                const auto& rec = log.records[i];
                LogPoint pt;
                pt.record = int(i);
                pt.errorNo = rec.errorNo;
                pt.costMs = rec.valid() ? rec.meanCost() * 1e3 : -1;
                auto it = indexOf.find(rec.workloadKey());
                pt.workload = it == indexOf.end() ? 0 : it->second;
                s.points.append(pt);
            }
        }
    } catch (const std::exception& e) {
        s.format = QStringLiteral("error");
        s.badLines.append({0, QString::fromUtf8(e.what())});
    }
    return s;
}

void loadLogAsync(const QString& path, QObject* context, std::function<void(const LogSnapshot&)> done) {
    QPointer<QObject> ctx(context);
    QThread* t = QThread::create([path, ctx, done] {
        LogSnapshot s = loadLog(path);
        if (ctx) QMetaObject::invokeMethod(ctx, [s, done] { done(s); }, Qt::QueuedConnection);
    });
    t->setObjectName(QStringLiteral("LogLoader"));
    QObject::connect(t, &QThread::finished, t, &QObject::deleteLater);
    t->start();
}

QString distillLog(const QString& inPath, const QString& outPath) {
    try {
        const std::string in = inPath.toStdString(), out = outPath.toStdString();
        auto fmt = record::detectLogFormat(record::readTextFile(in));
        record::DistillReport r = fmt == record::LogFormat::AutoTvm ? record::pickBestFile(in, out)
                                                                     : record::distillRecordFile(in, out);
        return QCoreApplication::translate("tb::session::LogLoader", "%1 records read, %2 kept in %3")
            .arg(r.inputRecords)
            .arg(r.written)
            .arg(outPath);
    } catch (const std::exception& e) {
        return QStringLiteral("error: ") + QString::fromUtf8(e.what());
    }
}

}  // namespace tb::session
