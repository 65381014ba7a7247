// SPDX-License-Identifier: Apache-2.0
#include "widgets/models/devicequeuemodel.h"

#include <algorithm>

namespace tb::models {

DeviceQueueModel::DeviceQueueModel(QObject* parent) : QAbstractTableModel(parent) {}

int DeviceQueueModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int DeviceQueueModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DeviceQueueModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_rows.size()) return {};
    const auto& r = m_rows[index.row()];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case KeyColumn: return r.key;
            case TotalColumn: return r.total;
            case FreeColumn: return r.free;
            case PendingColumn: return r.pending;
        }
    }
    return {};
}

QVariant DeviceQueueModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case KeyColumn: return tr("Key");
        case TotalColumn: return tr("Total");
        case FreeColumn: return tr("Free");
        case PendingColumn: return tr("Pending");
    }
    return {};
}

void DeviceQueueModel::setSnapshot(const session::DeviceQueueSnapshot& snapshot) {
    QList<session::DeviceKeyRow> incoming = snapshot.keys;
    std::sort(incoming.begin(), incoming.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    int i = 0, j = 0;
    while (i < m_rows.size() || j < incoming.size()) {
        if (j >= incoming.size() || (i < m_rows.size() && m_rows[i].key < incoming[j].key)) {
            beginRemoveRows(QModelIndex(), i, i);
            m_rows.removeAt(i);
            endRemoveRows();
        } else if (i >= m_rows.size() || incoming[j].key < m_rows[i].key) {
            beginInsertRows(QModelIndex(), i, i);
            m_rows.insert(i, incoming[j]);
            endInsertRows();
            ++i;
            ++j;
        } else {
            if (!(m_rows[i] == incoming[j])) {
                m_rows[i] = incoming[j];
                Q_EMIT dataChanged(index(i, 0), index(i, ColumnCount - 1));
            }
            ++i;
            ++j;
        }
    }
    Q_ASSERT(m_rows == incoming);
    m_servers = snapshot.servers;
}

void DeviceQueueModel::retranslate() {
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1), {Qt::DisplayRole});
}

}  // namespace tb::models
