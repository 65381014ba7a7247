// SPDX-License-Identifier: Apache-2.0
#pragma once
// The device tracker queue: connect to any tracker (ours or TVM's) by host:port and watch its
// SUMMARY live (keys with total/free/pending, the server list, and for each key served by GPU
// device servers the device attributes the search tunes for: max_threads_per_block, warp_size,
// max_shared_memory_per_block, ...); start a local tracker and a demo fleet of servers from here.

#include <QWidget>

#include "app/session/snapshots.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSplitter;
class QTableView;
class QTreeWidget;

namespace tb::models {
class DeviceQueueModel;
}

namespace tb::widgets {

class TrackerPanel : public QWidget {
    Q_OBJECT
public:
    explicit TrackerPanel(QWidget* parent = nullptr);
    models::DeviceQueueModel* model() const { return m_model; }
    QTreeWidget* serverList() const { return m_servers; }
    /// One top-level item per GPU key (its text in column 0 is the key), one child per attribute
    /// (name in column 0, value in column 1).
    QTreeWidget* gpuDeviceList() const { return m_gpu; }
    QString statusText() const;
    /// True while the tables show the last queue of a tracker that no longer answers.
    bool isStale() const { return m_stale; }
    /// The tracker whose queue this panel shows (snapshots of any other are dropped).
    void setTrackerAddress(const QString& hostPort);
    /// Shows or hides the panel's own title (hidden in a dock, whose title bar says it).
    void setTitleVisible(bool visible);

public Q_SLOTS:
    void showSnapshot(const tb::session::DeviceQueueSnapshot& snapshot);
    void showStatus(const QString& status);

Q_SIGNALS:
    void connectRequested(const QString& host, int port);
    void startLocalFleetRequested();

protected:
    void changeEvent(QEvent* e) override;

private:
    void retranslate();
    void updateSummary();
    void clearQueue();
    void fillGpuDevices();
    void setStale(bool stale);

    models::DeviceQueueModel* m_model;
    QLabel* m_title;
    QLabel* m_addressLabel;
    QLineEdit* m_address;
    QPushButton* m_connect;
    QPushButton* m_fleet;
    QLabel* m_status;
    QTableView* m_keys;
    QTreeWidget* m_servers;
    QTreeWidget* m_gpu;
    QSplitter* m_split;
    session::DeviceQueueSnapshot m_snapshot;
    bool m_hasSnapshot = false;
    bool m_stale = false;
    QString m_expectedTracker;  // "host:port" asked for; empty: any
};

}  // namespace tb::widgets
