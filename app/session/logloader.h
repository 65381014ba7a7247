// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads TVM tuning logs for the log inspector and for resumed jobs through engine/record, off the
// GUI thread, and converts them into LogSnapshot / TuningHistory value types. Part of the session
// bridge.

#include <QList>
#include <QString>

#include <functional>

#include "app/session/snapshots.h"

class QObject;

namespace tb::session {

/// Reads and summarizes a log (format detected). Throws nothing: a file that cannot be read, is
/// empty, or holds no auto_scheduler or AutoTVM record gives a snapshot with format "error" and a
/// sentence saying what is wrong in badLines[0]. Blocking: call it from a worker thread
/// (loadLogAsync) for big files.
LogSnapshot loadLog(const QString& path);

/// Runs loadLog on a background thread and calls `done` in `context`'s thread with the result;
/// dropped if the context is destroyed first.
void loadLogAsync(const QString& path, QObject* context, std::function<void(const LogSnapshot&)> done);

/// TVM's distill (auto_scheduler) or pick_best (AutoTVM) into `outPath`. Returns a one-line report,
/// or an error message starting with "error:".
QString distillLog(const QString& inPath, const QString& outPath);

/// The workloads of two logs aligned: A's in A's order, then those only in B. auto_scheduler keys
/// match as TVM's decode_workload_key sees them (hash or name + flattened args), AutoTVM keys by
/// task name + args.
QList<LogMatch> matchWorkloads(const LogSnapshot& a, const LogSnapshot& b);

/// The history of `tasks` in the auto_scheduler log `path`, read up to its first `maxBytes` bytes
/// (< 0: all; the log the job appends to is read as it was when the job started): one MeasureRow
/// per record of a task (matched by the exact workload key, as NetworkTuner::resume matches, so
/// the trial numbers continue where the resumed job's start), trials numbered from 0 in file
/// order, elapsedS = the record's timestamp minus the last one's (<= 0: seconds before the job);
/// and one LatencyPoint after every round (consecutive records of one task, at most `perRound`).
/// Throws nothing: an unreadable log gives an empty history with `error` set.
TuningHistory loadTuningHistory(const QString& path, const QList<TaskRow>& tasks, int perRound, qint64 maxBytes = -1);

/// loadTuningHistory on a background thread; `done` runs in `context`'s thread unless it is gone.
void loadTuningHistoryAsync(const QString& path, const QList<TaskRow>& tasks, int perRound, qint64 maxBytes,
                            QObject* context, std::function<void(const TuningHistory&)> done);

}  // namespace tb::session
