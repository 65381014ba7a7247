// SPDX-License-Identifier: Apache-2.0
#pragma once
// One more tuning session of the window (issue 21: one network tuned for several targets or
// device keys at once, e.g. mobilenet on `rasp4b-64` boards and on the host CPU side by side).
// A page owns its own TuningSession (and with it its own worker thread and record log) and shows
// that job's task table, latency chart, selected task's DAG and engine log; the window lays pages
// out beside its first session and feeds their build and device steps to the one fleet timeline.

#include <QWidget>

#include "app/session/snapshots.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace tb::models {
class TaskTableModel;
}
namespace tb::session {
class TuningSession;
}

namespace tb::widgets {

class DagView;
class LatencyChart;

/// The task table's look, shared by the window's first session and every page: sortable by the
/// proxy's SortRole, one row selected, descriptions elided in the middle with their shapes.
void setUpTaskView(QTableView* view, QSortFilterProxyModel* proxy);

/// Makes the row of task `taskId` the view's current one (when a selection comes from code).
void setCurrentTaskRow(QTableView* view, QSortFilterProxyModel* proxy, int taskId);

/// What a session tunes, in one line: "mobilenet · rasp4b-64 (rpc) · llvm -mtriple=…".
QString sessionTitle(const session::TuningJob& job);

/// `job`'s log path made distinct from `taken`: the device key (or "host") goes into the name
/// ("tunebench_mobilenet.json" -> "tunebench_mobilenet_rasp4b-64.json"), then a counter if needed.
QString distinctLogPath(const session::TuningJob& job, const QStringList& taken);

class SessionPage : public QWidget {
    Q_OBJECT
public:
    explicit SessionPage(const session::TuningJob& job, QWidget* parent = nullptr);
    ~SessionPage() override;

    /// Starts the page's job (again); a no-op while it runs.
    void start();
    const session::TuningJob& job() const { return m_job; }
    /// The job the next start() runs (e.g. once the local tracker's port is known).
    void setJob(const session::TuningJob& job);
    session::TuningSession* session() const { return m_session; }
    bool isIdle() const;

    // For tests and screenshots.
    models::TaskTableModel* taskModel() const { return m_taskModel; }
    QTableView* taskView() const { return m_taskView; }
    LatencyChart* chart() const { return m_chart; }
    DagView* dagView() const { return m_dagView; }
    QPlainTextEdit* engineLog() const { return m_log; }
    QPushButton* stopButton() const { return m_stop; }
    QString statusText() const;
    int totalTrials() const { return m_totalTrials; }

protected:
    void changeEvent(QEvent* e) override;

private:
    void retranslate();
    void updateStatus();
    void selectTask(int taskId);

    session::TuningJob m_job;
    session::TuningSession* m_session;
    models::TaskTableModel* m_taskModel;
    QSortFilterProxyModel* m_taskProxy;
    QTableView* m_taskView;
    LatencyChart* m_chart;
    DagView* m_dagView;
    QPlainTextEdit* m_log;
    QLabel* m_title;
    QLabel* m_status;
    QProgressBar* m_progress;
    QPushButton* m_start;
    QPushButton* m_stop;
    int m_selectedTask = -1;
    double m_selectedBestMs = -1;
    int m_totalTrials = 0;
    double m_estimatedMs = -1;
    QString m_finishedText;
};

}  // namespace tb::widgets
