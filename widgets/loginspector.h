// SPDX-License-Identifier: Apache-2.0
#pragma once
// The log inspector: open any TVM tuning log (auto_scheduler or AutoTVM, ours too) and see its
// per-workload table (records, valid, best latency, GFLOPS), the costs over records, the errors
// by kind and the lines that could not be read; distill it; compare two logs side by side.

#include <QWidget>

#include "app/session/snapshots.h"

class QCustomPlot;
class QLabel;
class QPushButton;
class QTableWidget;

namespace tb::widgets {

/// One log's view (the inspector shows one, or two when comparing).
class LogPane : public QWidget {
    Q_OBJECT
public:
    explicit LogPane(QWidget* parent = nullptr);
    void setLog(const session::LogSnapshot& log);
    const session::LogSnapshot& log() const { return m_log; }
    QTableWidget* workloadTable() const { return m_workloads; }
    QTableWidget* errorTable() const { return m_errors; }
    int plottedPoints() const;

protected:
    void changeEvent(QEvent* e) override;

private:
    void plotWorkload(int workload);
    void retranslate();
    void fillHeader();

    session::LogSnapshot m_log;
    bool m_hasLog = false;
    QLabel* m_header;
    QTableWidget* m_workloads;
    QTableWidget* m_errors;
    QCustomPlot* m_plot;
};

class LogInspector : public QWidget {
    Q_OBJECT
public:
    explicit LogInspector(QWidget* parent = nullptr);
    /// Loads `path` into the left pane (or the right one when `compare`), in the background.
    void openLog(const QString& path, bool compare = false);
    LogPane* leftPane() const { return m_left; }
    LogPane* rightPane() const { return m_right; }
    QString statusText() const;

Q_SIGNALS:
    void logLoaded(const QString& path);

protected:
    void changeEvent(QEvent* e) override;

private:
    void retranslate();

    LogPane* m_left;
    LogPane* m_right;
    QLabel* m_status;
    QPushButton* m_open;
    QPushButton* m_compare;
    QPushButton* m_distill;
};

}  // namespace tb::widgets
