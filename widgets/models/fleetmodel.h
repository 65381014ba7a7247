// SPDX-License-Identifier: Apache-2.0
#pragma once
// The device fleet as the window watches it while a job measures (issue 21): per device, the
// steps it ran (a Gantt strip of builds, uploads and runs: FleetTimeline draws it) and whether it
// died or timed out; per device key, free/busy/pending from the tracker and measurements per
// minute from the steps (FleetKeyStatsModel). Fed only by session signals (fleet events, tracker
// snapshots).

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QObject>

#include "app/session/snapshots.h"

namespace tb::models {

class FleetModel : public QObject {
    Q_OBJECT
public:
    /// One step of one candidate on a device (a bar of the strip).
    struct Bar {
        int phase = session::FleetEvent::Run;
        int taskId = -1;
        qint64 batch = 0;
        int candidate = -1;
        double startS = 0;
        double endS = -1;  ///< < 0 while it runs
        int errorNo = 0;
        QString message;
    };
    /// A device seen in the events: an RPC device by its address, the local sandbox, the host builder.
    struct Device {
        QString name;  ///< "127.0.0.1:9091", "local sandbox", "host"
        QString key;   ///< "rasp4b-64", "local", "builder"
        QList<Bar> bars;
        int runs = 0;       ///< finished run steps
        int errors = 0;     ///< finished steps with an error
        int timeouts = 0;   ///< runs that timed out (RUN_TIMEOUT)
        bool lost = false;  ///< broke off (the engine recorded its candidate as an error), or left the tracker
        double lostAtS = -1;
        QString lostWhy;
        bool goneFromTracker = false;  ///< lost because the job's tracker no longer lists it
        int missing = 0;               ///< consecutive tracker snapshots without it
    };

    explicit FleetModel(QObject* parent = nullptr);

    /// Forgets every device and step (a new job).
    void clear();
    /// Adds a batch of events of job `jobId` (events of other jobs are dropped); changed() follows.
    void addEvents(const QList<session::FleetEvent>& events);
    /// Per-key free/pending (and busy = total - free) from the tracker; changed() follows. When the
    /// snapshot is of the job's tracker, an RPC device it no longer lists (twice in a row: a device
    /// may re-register between sessions) is marked lost, and unmarked when it is listed again.
    void setQueue(const session::DeviceQueueSnapshot& snapshot);
    void setJobId(quint64 jobId) { m_jobId = jobId; }
    quint64 jobId() const { return m_jobId; }
    /// The device key of the host builder's events ("builder"); every window session has one.
    static QString builderKey() { return QStringLiteral("builder"); }
    /// "host:port" of the tracker the job measures through (empty: it uses none).
    void setJobTracker(const QString& hostPort) { m_jobTracker = hostPort; }

    /// Devices in the order first seen, the host builder first.
    const QList<Device>& devices() const { return m_devices; }
    int deviceIndex(const QString& name) const { return m_index.value(name, -1); }
    /// The latest time any event mentions (s on the job's clock).
    double latestS() const { return m_latestS; }
    /// The device keys measured on or listed by the tracker (not the host builder's), and the
    /// tracker's queue row of a key (total 0 when the tracker has no such key).
    QStringList keys() const;
    session::DeviceKeyRow queueRow(const QString& key) const;
    /// Run steps of `key` finished within the last 60 s of the job's clock, per minute.
    double runsPerMinute(const QString& key) const;
    int runs(const QString& key) const;
    int errors(const QString& key) const;
    int lostDevices(const QString& key) const;

Q_SIGNALS:
    void changed();

private:
    Device& device(const QString& name, const QString& key);

    QList<Device> m_devices;
    QHash<QString, int> m_index;
    QList<session::DeviceKeyRow> m_queue;
    quint64 m_jobId = 0;
    QString m_jobTracker;
    double m_latestS = 0;
};

/// Per device key: devices seen, the tracker's free/busy/pending, runs, errors, runs per minute,
/// lost devices. Rebuilt from FleetModel on every change (a handful of rows).
class FleetKeyStatsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        KeyColumn,
        DevicesColumn,
        FreeColumn,
        BusyColumn,
        PendingColumn,
        RunsColumn,
        ErrorsColumn,
        PerMinuteColumn,
        LostColumn,
        ColumnCount
    };

    explicit FleetKeyStatsModel(FleetModel* fleet, QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const final;
    int columnCount(const QModelIndex& parent = {}) const final;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const final;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const final;
    void retranslate();

private:
    void refresh();

    FleetModel* m_fleet;
    QStringList m_keys;
};

}  // namespace tb::models
