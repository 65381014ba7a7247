// SPDX-License-Identifier: Apache-2.0
#pragma once
// The live task-scheduler table: one row per search task, updated in batches from the session.
// Beside TVM's columns: the task's measurement policy (caches flushed or warm, and why in its tooltip).

#include <QAbstractTableModel>
#include <QHash>
#include <QList>

#include "app/session/snapshots.h"

namespace tb::models {

class TaskTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn, DescriptionColumn, WeightColumn, FlopColumn, LatencyColumn, GflopsColumn, TrialsColumn,
        ShareColumn, StateColumn, CacheColumn, ColumnCount
    };
    /// DescriptionRole and ShapesRole: the two parts of the description column's text (TVM's task
    /// description; workloadArgsText of the key), for a delegate that shortens the first.
    enum Role { SortRole = Qt::UserRole, TaskIdRole, WorkloadKeyRole, DescriptionRole, ShapesRole };

    explicit TaskTableModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const final;
    int columnCount(const QModelIndex& parent = {}) const final;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const final;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const final;
    /// After a language change: headers (and translated cells) are fetched again.
    void retranslate();

    /// Replaces every row (a new job).
    void setTasks(const QList<session::TaskRow>& rows);
    /// Updates rows by task id: one dataChanged per changed row, or one for the whole table when
    /// more than half the rows changed. Unknown ids are appended in one insert.
    void updateTasks(const QList<session::TaskRow>& rows);
    void clear();
    /// Removes the scheduler's "next pick" mark (the job is over: nothing is picked next).
    void clearNext();
    const session::TaskRow* task(int taskId) const;
    /// The shown (translated) name of a TaskRow::state.
    static QString stateName(const QString& state);
    /// The shown (translated) name of a TaskRow::cacheFlush ("flush", "warm"; "-" when empty).
    static QString cacheFlushName(const QString& policy);

private:
    QList<session::TaskRow> m_rows;
    QHash<int, int> m_rowOfTask;
};

}  // namespace tb::models
