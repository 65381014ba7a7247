// SPDX-License-Identifier: Apache-2.0
#pragma once
// The live table of the window's AutoTVM mode: one row per AutoTVM task (template, args, configs
// in its space, trials / n_trial, TVM's Current and Best GFLOPS), updated in batches from the
// session as the tasks are tuned one after another.

#include <QAbstractTableModel>
#include <QHash>
#include <QList>

#include "app/session/autotvmrows.h"

namespace tb::models {

class AutotvmTaskModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn, TemplateColumn, ArgsColumn, SpaceColumn, ProgressColumn, CurrentColumn, BestColumn, StateColumn,
        ColumnCount
    };
    /// ProgressRole: trials / n_trial in 0..1 (the progress bar's value).
    enum Role { SortRole = Qt::UserRole, TaskIdRole, ProgressRole };

    explicit AutotvmTaskModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const final;
    int columnCount(const QModelIndex& parent = {}) const final;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const final;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const final;
    void retranslate();

    /// Replaces every row (a new job).
    void setTasks(const QList<session::AutotvmTaskRow>& rows);
    /// Updates rows by task id (one dataChanged per row); unknown ids are appended.
    void updateTasks(const QList<session::AutotvmTaskRow>& rows);
    void clear();
    const session::AutotvmTaskRow* task(int taskId) const;
    /// The shown (translated) name of an AutotvmTaskRow::state.
    static QString stateName(const QString& state);

private:
    QList<session::AutotvmTaskRow> m_rows;
    QHash<int, int> m_rowOfTask;
};

}  // namespace tb::models
