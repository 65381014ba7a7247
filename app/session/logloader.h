// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads TVM tuning logs for the log inspector through engine/record, off the GUI thread, and
// converts them into LogSnapshot value types. Part of the session bridge.

#include <QString>

#include <functional>

#include "app/session/snapshots.h"

class QObject;

namespace tb::session {

/// Reads and summarizes a log (format detected). Throws nothing: an unreadable file gives a
/// snapshot with format "error" and the message in badLines. Blocking: call it from a worker
/// thread (loadLogAsync) for big files.
LogSnapshot loadLog(const QString& path);

/// Runs loadLog on a background thread and calls `done` in `context`'s thread with the result;
/// dropped if the context is destroyed first.
void loadLogAsync(const QString& path, QObject* context, std::function<void(const LogSnapshot&)> done);

/// TVM's distill (auto_scheduler) or pick_best (AutoTVM) into `outPath`. Returns a one-line report,
/// or an error message starting with "error:".
QString distillLog(const QString& inPath, const QString& outPath);

}  // namespace tb::session
