// SPDX-License-Identifier: Apache-2.0
#pragma once
// The device tracker's queue (key, total, free, pending), refreshed from SUMMARY snapshots by a
// keyed merge so that selections and scroll positions survive refreshes.

#include <QAbstractTableModel>
#include <QList>

#include "app/session/snapshots.h"

namespace tb::models {

class DeviceQueueModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { KeyColumn, TotalColumn, FreeColumn, PendingColumn, ColumnCount };

    explicit DeviceQueueModel(QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const final;
    int columnCount(const QModelIndex& parent = {}) const final;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const final;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const final;
    /// After a language change: headers (and translated cells) are fetched again.
    void retranslate();

    /// Merges a snapshot: rows sorted by key; removed keys removed, changed rows updated, new keys
    /// inserted, each as its own minimal model change.
    void setSnapshot(const session::DeviceQueueSnapshot& snapshot);
    const QList<session::DeviceKeyRow>& rows() const { return m_rows; }
    const QList<session::ServerRow>& servers() const { return m_servers; }

private:
    QList<session::DeviceKeyRow> m_rows;
    QList<session::ServerRow> m_servers;
};

}  // namespace tb::models
