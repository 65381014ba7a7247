// SPDX-License-Identifier: Apache-2.0
#include "widgets/models/autotvmtaskmodel.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <algorithm>

#include "widgets/models/tasktablemodel.h"

namespace tb::models {

AutotvmTaskModel::AutotvmTaskModel(QObject* parent) : QAbstractTableModel(parent) {}

int AutotvmTaskModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int AutotvmTaskModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString AutotvmTaskModel::stateName(const QString& state) {
    if (state == QLatin1String("stopped")) return tr("stopped");
    return TaskTableModel::stateName(state);  // pending, tuning, tuned, dead: the auto-scheduler table's words
}

QVariant AutotvmTaskModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_rows.size()) return {};
    const session::AutotvmTaskRow& r = m_rows[index.row()];
    const bool measured = r.trials > 0;
    const double progress = r.nTrial > 0 ? std::min(1.0, double(r.trials) / r.nTrial) : 0.0;
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case IdColumn: return r.id;
            case TemplateColumn: return r.taskName;
            case ArgsColumn: return r.argsSummary;
            case SpaceColumn: return r.state == QLatin1String("dead") && r.spaceSize == 0 ? QVariant(QStringLiteral("-"))
                                                                                           : QVariant(r.spaceSize);
            case ProgressColumn: return QStringLiteral("%1/%2").arg(r.trials).arg(r.nTrial);
            case CurrentColumn: return measured ? QString::number(r.currentGflops, 'f', 2) : QStringLiteral("-");
            case BestColumn: return measured ? QString::number(r.bestGflops, 'f', 2) : QStringLiteral("-");
            case StateColumn: return stateName(r.state);
        }
    } else if (role == SortRole) {
        switch (index.column()) {
            case IdColumn: return r.id;
            case TemplateColumn: return r.taskName;
            case ArgsColumn: return r.argsSummary;
            case SpaceColumn: return r.spaceSize;
            case ProgressColumn: return progress;
            case CurrentColumn: return r.currentGflops;
            case BestColumn: return r.bestGflops;
            case StateColumn: return r.state;
        }
    } else if (role == TaskIdRole) {
        return r.id;
    } else if (role == ProgressRole) {
        return progress;
    } else if (role == Qt::ToolTipRole) {
        if (!r.error.isEmpty()) return r.error;
        if (index.column() == ArgsColumn) return r.args;
        if (index.column() == BestColumn && !r.bestConfig.isEmpty()) return r.bestConfig;
    } else if (role == Qt::TextAlignmentRole) {
        if (index.column() == SpaceColumn || index.column() == CurrentColumn || index.column() == BestColumn)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    } else if (role == Qt::ForegroundRole) {
        if (r.state == QLatin1String("dead")) return QBrush(QColor(192, 57, 43));
    } else if (role == Qt::FontRole && r.state == QLatin1String("tuning")) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

QVariant AutotvmTaskModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case IdColumn: return tr("ID");
        case TemplateColumn: return tr("Template");
        case ArgsColumn: return tr("Args");
        case SpaceColumn: return tr("Configs");
        case ProgressColumn: return tr("Progress");
        case CurrentColumn: return tr("Current GFLOPS");
        case BestColumn: return tr("Best GFLOPS");
        case StateColumn: return tr("State");
    }
    return {};
}

void AutotvmTaskModel::retranslate() {
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

void AutotvmTaskModel::setTasks(const QList<session::AutotvmTaskRow>& rows) {
    beginResetModel();
    m_rows = rows;
    m_rowOfTask.clear();
    for (int i = 0; i < m_rows.size(); ++i) m_rowOfTask.insert(m_rows[i].id, i);
    endResetModel();
}

void AutotvmTaskModel::updateTasks(const QList<session::AutotvmTaskRow>& rows) {
    QList<session::AutotvmTaskRow> added;
    for (const auto& r : rows) {
        const auto it = m_rowOfTask.constFind(r.id);
        if (it == m_rowOfTask.constEnd()) {
            added.append(r);
            continue;
        }
        if (m_rows[*it] == r) continue;
        m_rows[*it] = r;
        Q_EMIT dataChanged(index(*it, 0), index(*it, ColumnCount - 1));
    }
    if (added.isEmpty()) return;
    beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + added.size()) - 1);
    for (const auto& r : added) {
        m_rowOfTask.insert(r.id, int(m_rows.size()));
        m_rows.append(r);
    }
    endInsertRows();
}

void AutotvmTaskModel::clear() { setTasks({}); }

const session::AutotvmTaskRow* AutotvmTaskModel::task(int taskId) const {
    const auto it = m_rowOfTask.constFind(taskId);
    return it == m_rowOfTask.constEnd() ? nullptr : &m_rows[*it];
}

}  // namespace tb::models
