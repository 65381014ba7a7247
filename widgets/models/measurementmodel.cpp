// SPDX-License-Identifier: Apache-2.0
#include "widgets/models/measurementmodel.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <algorithm>

namespace tb::models {

MeasurementModel::MeasurementModel(QObject* parent, int capacity) : QAbstractTableModel(parent), m_capacity(capacity) {}

int MeasurementModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int MeasurementModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString MeasurementModel::errorName(int errorNo) {
    static const char* names[] = {"NO_ERROR",       "INSTANTIATION_ERROR", "COMPILE_HOST",
                                  "COMPILE_DEVICE", "RUNTIME_DEVICE",      "WRONG_ANSWER",
                                  "BUILD_TIMEOUT",  "RUN_TIMEOUT",         "UNKNOWN_ERROR"};
    if (errorNo >= 0 && errorNo <= 8) return QString::fromLatin1(names[errorNo]);
    return QStringLiteral("ERROR_%1").arg(errorNo);
}

QVariant MeasurementModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_rows.size()) return {};
    const auto& r = m_rows[index.row()];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case TrialColumn: return r.trial;
            case TaskColumn: return r.taskId;
            case LatencyColumn: return r.errorNo == 0 ? QString::number(r.costMs, 'f', 4) : QStringLiteral("-");
            case GflopsColumn: return r.errorNo == 0 ? QString::number(r.gflops, 'f', 2) : QStringLiteral("-");
            case ErrorColumn: return errorName(r.errorNo);
            case TimeColumn: return QString::number(r.elapsedS, 'f', 1);
        }
    } else if (role == Qt::ToolTipRole && r.errorNo != 0) {
        return r.errorMessage;
    } else if (role == Qt::ToolTipRole && r.fromLog) {
        return tr("Read back from the log of an earlier run (times are seconds before this run started)");
    } else if (role == Qt::FontRole && r.fromLog) {
        QFont f;
        f.setItalic(true);
        return f;
    } else if (role == Qt::ForegroundRole && r.errorNo != 0) {
        return QBrush(QColor(200, 40, 40));
    }
    return {};
}

QVariant MeasurementModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case TrialColumn: return tr("Trial");
        case TaskColumn: return tr("Task");
        case LatencyColumn: return tr("Latency (ms)");
        case GflopsColumn: return tr("GFLOPS");
        case ErrorColumn: return tr("Result");
        case TimeColumn: return tr("Time (s)");
    }
    return {};
}

void MeasurementModel::append(const QList<session::MeasureRow>& rows) {
    if (rows.isEmpty()) return;
    QList<session::MeasureRow> batch = rows;
    if (batch.size() > m_capacity) batch = batch.mid(batch.size() - m_capacity);
    int overflow = int(m_rows.size() + batch.size()) - m_capacity;
    if (overflow > 0) {
        beginRemoveRows(QModelIndex(), 0, overflow - 1);
        m_rows.remove(0, overflow);
        endRemoveRows();
    }
    int first = int(m_rows.size());
    beginInsertRows(QModelIndex(), first, first + int(batch.size()) - 1);
    m_rows.append(batch);
    endInsertRows();
}

void MeasurementModel::prepend(const QList<session::MeasureRow>& rows) {
    const int room = m_capacity - int(m_rows.size());
    if (rows.isEmpty() || room <= 0) return;
    const QList<session::MeasureRow> batch = rows.size() > room ? rows.mid(rows.size() - room) : rows;
    beginInsertRows(QModelIndex(), 0, int(batch.size()) - 1);
    m_rows = batch + m_rows;
    endInsertRows();
}

void MeasurementModel::spreadRoundTimes(QList<session::MeasureRow>& rows, double notBefore) {
    for (qsizetype first = 0; first < rows.size();) {
        // One run of trials stamped with one time: a round.
        const double end = rows[first].elapsedS;
        qsizetype last = first;
        while (last + 1 < rows.size() && rows[last + 1].elapsedS == end) ++last;
        double later = 0;  // build + run time of the trials after the run's first
        for (qsizetype i = first + 1; i <= last; ++i) later += std::max(0.0, rows[i].allCostS);
        const double room = std::max(0.0, end - notBefore);
        const double scale = later > room && later > 0 ? room / later : 1.0;
        double t = end;
        for (qsizetype i = last; i > first; --i) {
            rows[i].elapsedS = t;
            t -= scale * std::max(0.0, rows[i].allCostS);
        }
        rows[first].elapsedS = std::max(notBefore, t);
        notBefore = end;
        first = last + 1;
    }
}

void MeasurementModel::clear() {
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

void MeasurementModel::retranslate() {
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1), {Qt::DisplayRole});
}

}  // namespace tb::models
