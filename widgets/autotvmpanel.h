// SPDX-License-Identifier: Apache-2.0
#pragma once
// The window's AutoTVM mode: the live table of AutoTVM tasks (template, args, configs in the space,
// a progress bar of trials / n_trial, TVM's Current and Best GFLOPS), the selected task's
// best-so-far chart (QCustomPlot: every measured config and the best GFLOPS after each trial), and
// the best record's config entity (knob = value, and TVM's str(ConfigEntity)) beside the loop nest
// of that config's program (a DagView, as the auto-scheduler mode shows a task's best state).

#include <QHash>
#include <QList>
#include <QWidget>

#include "app/session/autotvmrows.h"
#include "app/session/snapshots.h"

class QCustomPlot;
class QLabel;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTableView;

namespace tb::models {
class AutotvmTaskModel;
}

namespace tb::widgets {

class DagView;

class AutotvmPanel : public QWidget {
    Q_OBJECT
public:
    explicit AutotvmPanel(QWidget* parent = nullptr);

    /// A new job: replaces the rows and forgets the curves; selects the first task.
    void setTasks(const QList<session::AutotvmTaskRow>& rows);
    void updateTasks(const QList<session::AutotvmTaskRow>& rows);
    void addTrials(const QList<session::AutotvmTrial>& trials);
    /// The program of a task's best config (shown when it is the selected task's).
    void setDag(const session::DagSnapshot& dag);
    void clear();
    void selectTask(int taskId);
    int selectedTask() const { return m_selected; }

    // For tests and screenshots.
    models::AutotvmTaskModel* model() const { return m_model; }
    QTableView* tableView() const { return m_table; }
    QCustomPlot* plot() const { return m_plot; }
    DagView* dagView() const { return m_dag; }
    QString entityText() const;
    /// What the chart's tooltip says of trial `trial` (0-based) of task `taskId`: the config index,
    /// its speed and, for a VTA task, the simulator's counters of that config (empty: no such trial).
    QString trialDescription(int taskId, int trial) const;
    int chartPointCount() const;

Q_SIGNALS:
    /// The selected task changed, or its best config did: the DAG view needs its program.
    void dagRequested(int taskId);

protected:
    void changeEvent(QEvent* e) override;

private:
    void retranslate();
    void showEntity();
    void replot();

    models::AutotvmTaskModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_table;
    QCustomPlot* m_plot;
    QLabel* m_entityTitle;
    QPlainTextEdit* m_entity;
    DagView* m_dag;
    QHash<int, QList<session::AutotvmTrial>> m_trials;
    int m_selected = -1;
    qint64 m_shownBest = -1;  // the best config index whose program was last requested
};

}  // namespace tb::widgets
