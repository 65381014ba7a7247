// SPDX-License-Identifier: Apache-2.0
#include "widgets/models/tasktablemodel.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QLocale>

#include "widgets/models/workloadtext.h"

namespace tb::models {

TaskTableModel::TaskTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int TaskTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int TaskTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

namespace {
QString formatFlop(double f) {
    if (f >= 1e9) return QStringLiteral("%1 G").arg(f / 1e9, 0, 'f', 3);
    if (f >= 1e6) return QStringLiteral("%1 M").arg(f / 1e6, 0, 'f', 2);
    if (f >= 1e3) return QStringLiteral("%1 K").arg(f / 1e3, 0, 'f', 1);
    return QString::number(f, 'f', 0);
}
}  // namespace

QString TaskTableModel::stateName(const QString& state) {
    if (state == QLatin1String("pending")) return tr("pending");
    if (state == QLatin1String("tuning")) return tr("tuning");
    if (state == QLatin1String("tuned")) return tr("tuned");
    if (state == QLatin1String("dead")) return tr("dead");
    return state;
}

QString TaskTableModel::cacheFlushName(const QString& policy) {
    if (policy == QLatin1String("flush")) return tr("flush");
    if (policy == QLatin1String("warm")) return tr("warm");
    return policy.isEmpty() ? QStringLiteral("-") : policy;
}

QVariant TaskTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_rows.size()) return {};
    const session::TaskRow& r = m_rows[index.row()];
    const bool has = r.bestMs >= 0;
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case IdColumn: return r.next ? QStringLiteral("▶ %1").arg(r.id) : QString::number(r.id);
            case DescriptionColumn:
                return r.alternativeOf >= 0 ? tr("%1 (direct, beside task %2)").arg(workloadLabel(r.description, r.workloadKey)).arg(r.alternativeOf)
                                            : workloadLabel(r.description, r.workloadKey);
            case WeightColumn: return QString::number(r.weight, 'g', 6);
            case FlopColumn: return formatFlop(r.flop);
            case LatencyColumn: return has ? QString::number(r.bestMs, 'f', 3) : QStringLiteral("-");
            case GflopsColumn: return has ? QString::number(r.gflops, 'f', 2) : QStringLiteral("-");
            case TrialsColumn: return r.trials;
            case ShareColumn: return has ? QStringLiteral("%1 %").arg(100.0 * r.share, 0, 'f', 1) : QStringLiteral("-");
            case StateColumn: return stateName(r.state);
            case CacheColumn: return cacheFlushName(r.cacheFlush);
        }
    } else if (role == SortRole) {
        switch (index.column()) {
            case IdColumn: return r.id;
            case DescriptionColumn: return workloadLabel(r.description, r.workloadKey);
            case WeightColumn: return r.weight;
            case FlopColumn: return r.flop;
            case LatencyColumn: return has ? r.bestMs : 1e300;
            case GflopsColumn: return r.gflops;
            case TrialsColumn: return r.trials;
            case ShareColumn: return r.share;
            case StateColumn: return r.state;
            case CacheColumn: return r.cacheFlush;
        }
    } else if (role == TaskIdRole) {
        return r.id;
    } else if (role == WorkloadKeyRole) {
        return r.workloadKey;
    } else if (role == DescriptionRole) {
        return r.alternativeOf >= 0 ? tr("%1 (direct, beside task %2)").arg(r.description).arg(r.alternativeOf) : r.description;
    } else if (role == ShapesRole) {
        return workloadArgsText(r.workloadKey);
    } else if (role == Qt::ToolTipRole) {
        if (index.column() == CacheColumn) return r.cacheFlushReason.isEmpty() ? QVariant() : QVariant(r.cacheFlushReason);
        if (r.alternativeOf >= 0 && index.column() <= DescriptionColumn)
            return tr("The same convolutions as task %1 (winograd), computed directly: the network runs the faster of "
                      "the two, and the estimated latency counts the pair once.\n%2")
                .arg(r.alternativeOf)
                .arg(r.workloadKey);
        return r.workloadKey;
    } else if (role == Qt::TextAlignmentRole) {
        if (index.column() != DescriptionColumn && index.column() != StateColumn && index.column() != CacheColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    } else if (role == Qt::FontRole && r.next) {
        QFont f;
        f.setBold(true);
        return f;
    } else if (role == Qt::ForegroundRole && r.state == QLatin1String("dead")) {
        return QBrush(QColor(Qt::gray));
    }
    return {};
}

QVariant TaskTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case IdColumn: return tr("ID");
        case DescriptionColumn: return tr("Task Description");
        case WeightColumn: return tr("Weight");
        case FlopColumn: return tr("FLOPs");
        case LatencyColumn: return tr("Latency (ms)");
        case GflopsColumn: return tr("Speed (GFLOPS)");
        case TrialsColumn: return tr("Trials");
        case ShareColumn: return tr("Share");
        case StateColumn: return tr("State");
        case CacheColumn: return tr("Cache");
    }
    return {};
}

void TaskTableModel::setTasks(const QList<session::TaskRow>& rows) {
    beginResetModel();
    m_rows = rows;
    m_rowOfTask.clear();
    for (int i = 0; i < m_rows.size(); ++i) m_rowOfTask.insert(m_rows[i].id, i);
    endResetModel();
}

void TaskTableModel::updateTasks(const QList<session::TaskRow>& rows) {
    QList<session::TaskRow> added;
    QList<int> changed;
    for (const auto& r : rows) {
        auto it = m_rowOfTask.constFind(r.id);
        if (it == m_rowOfTask.constEnd()) {
            added.append(r);
            continue;
        }
        if (m_rows[*it] == r) continue;
        m_rows[*it] = r;
        changed.append(*it);
    }
    if (!changed.isEmpty()) {
        if (changed.size() * 2 > m_rows.size()) {
            Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
        } else {
            for (int row : changed) Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
        }
    }
    if (!added.isEmpty()) {
        int first = int(m_rows.size());
        beginInsertRows(QModelIndex(), first, first + int(added.size()) - 1);
        for (const auto& r : added) {
            m_rowOfTask.insert(r.id, int(m_rows.size()));
            m_rows.append(r);
        }
        endInsertRows();
    }
}

void TaskTableModel::clear() { setTasks({}); }

void TaskTableModel::clearNext() {
    for (int i = 0; i < m_rows.size(); ++i) {
        if (!m_rows[i].next) continue;
        m_rows[i].next = false;
        Q_EMIT dataChanged(index(i, 0), index(i, ColumnCount - 1));
    }
}

const session::TaskRow* TaskTableModel::task(int taskId) const {
    auto it = m_rowOfTask.constFind(taskId);
    return it == m_rowOfTask.constEnd() ? nullptr : &m_rows[*it];
}

void TaskTableModel::retranslate() {
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1), {Qt::DisplayRole});
}

}  // namespace tb::models
