// SPDX-License-Identifier: Apache-2.0
#pragma once
// The log inspector: open any TVM tuning log (auto_scheduler or AutoTVM, ours too) and see its
// per-workload table (shapes, records, valid, best latency, GFLOPS), the costs over records, the
// errors by kind and the lines that could not be read; distill it; compare it with a second log,
// workload by workload (best of each, speedup, both on one axis), which no TVM tool does.

#include <QWidget>

#include "app/session/snapshots.h"

class QCustomPlot;
class QLabel;
class QPushButton;
class QSplitter;
class QTableWidget;

namespace tb::widgets {

/// One log's view (the inspector shows one, or two when comparing).
class LogPane : public QWidget {
    Q_OBJECT
public:
    explicit LogPane(QWidget* parent = nullptr);
    void setLog(const session::LogSnapshot& log);
    const session::LogSnapshot& log() const { return m_log; }
    /// "A" or "B" while two logs are compared (shown before the file name); empty otherwise.
    void setLabel(const QString& label);
    QTableWidget* workloadTable() const { return m_workloads; }
    QTableWidget* errorTable() const { return m_errors; }
    QCustomPlot* plot() const { return m_plot; }
    QString headerText() const;
    int plottedPoints() const;

protected:
    void changeEvent(QEvent* e) override;

private:
    void plotWorkload(int workload);
    void retranslate();
    void fillHeader();

    session::LogSnapshot m_log;
    bool m_hasLog = false;
    QString m_label;
    QLabel* m_header;
    QTableWidget* m_workloads;
    QTableWidget* m_errors;
    QCustomPlot* m_plot;
};

/// Two logs aligned by workload: per workload its shapes, records and best latency in each log and
/// the speedup of B over A, a summary (geometric-mean speedup over the workloads both tuned), and
/// the selected workload's costs from both logs on one shared axis.
class LogComparison : public QWidget {
    Q_OBJECT
public:
    enum Column { WorkloadColumn, RecordsAColumn, BestAColumn, RecordsBColumn, BestBColumn, SpeedupColumn, ColumnCount };

    explicit LogComparison(QWidget* parent = nullptr);
    void setLogs(const session::LogSnapshot& a, const session::LogSnapshot& b);
    const QList<session::LogMatch>& matches() const { return m_matches; }
    QTableWidget* table() const { return m_table; }
    QCustomPlot* plot() const { return m_plot; }
    QString summaryText() const;
    int plottedPoints() const;

protected:
    void changeEvent(QEvent* e) override;
    void showEvent(QShowEvent* e) override;

private:
    void retranslate();
    void fill();
    void plotMatch(int match);

    session::LogSnapshot m_a, m_b;
    QList<session::LogMatch> m_matches;
    QLabel* m_summary;
    QSplitter* m_split;
    QTableWidget* m_table;
    QCustomPlot* m_plot;
    bool m_sized = false;
};

class LogInspector : public QWidget {
    Q_OBJECT
public:
    explicit LogInspector(QWidget* parent = nullptr);
    /// Loads `path` into the left pane (or the right one when `compare`), in the background.
    void openLog(const QString& path, bool compare = false);
    LogPane* leftPane() const { return m_left; }
    LogPane* rightPane() const { return m_right; }
    LogComparison* comparison() const { return m_comparison; }
    QString statusText() const;
    /// Where Distill suggests writing: the session's folder (the folder of the job's log), else
    /// the working directory; the log's own folder is often a read-only data folder.
    void setOutputFolder(const QString& folder) { m_outputFolder = folder; }
    /// The file Distill offers for the open log: "<name>.best.json" in the first writable of the
    /// output folder, the working directory and the home folder.
    QString suggestedDistillPath() const;

Q_SIGNALS:
    void logLoaded(const QString& path);

protected:
    void changeEvent(QEvent* e) override;

private:
    void retranslate();
    void updateComparison();

    LogPane* m_left;
    LogPane* m_right;
    LogComparison* m_comparison;
    QLabel* m_status;
    QPushButton* m_open;
    QPushButton* m_compare;
    QPushButton* m_distill;
    QString m_outputFolder;
    bool m_rightLoaded = false;
};

}  // namespace tb::widgets
