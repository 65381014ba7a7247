// SPDX-License-Identifier: Apache-2.0
#include "widgets/models/fleetmodel.h"

#include <algorithm>

namespace tb::models {

namespace {
constexpr int kRunTimeout = 7;  // TVM MeasureErrorNO RUN_TIMEOUT
constexpr double kRateWindowS = 60;
}  // namespace

FleetModel::FleetModel(QObject* parent) : QObject(parent) {}

void FleetModel::clear() {
    m_devices.clear();
    m_index.clear();
    m_latestS = 0;
    Q_EMIT changed();
}

FleetModel::Device& FleetModel::device(const QString& name, const QString& key) {
    int i = m_index.value(name, -1);
    if (i < 0) {
        Device d;
        d.name = name;
        d.key = key;
        // The host builders (one per session of the window) stay on top; devices follow in the
        // order they first measured.
        i = int(m_devices.size());
        if (key == builderKey()) {
            i = 0;
            while (i < m_devices.size() && m_devices[i].key == builderKey()) ++i;
        }
        m_devices.insert(i, d);
        for (auto it = m_index.begin(); it != m_index.end(); ++it)
            if (it.value() >= i) ++it.value();
        m_index.insert(name, i);
    }
    Device& d = m_devices[i];
    if (d.key.isEmpty()) d.key = key;
    return d;
}

void FleetModel::addEvents(const QList<session::FleetEvent>& events) {
    using E = session::FleetEvent;
    bool any = false;
    for (const E& e : events) {
        if (m_jobId != 0 && e.jobId != m_jobId) continue;  // a late event of an older job
        if (e.device.isEmpty()) continue;
        any = true;
        Device& d = device(e.device, e.deviceKey);
        m_latestS = std::max({m_latestS, e.startS, e.endS});
        if (e.kind == E::DeviceLost) {
            d.lost = true;
            d.lostAtS = e.endS >= 0 ? e.endS : e.startS;
            d.lostWhy = e.message;
            continue;
        }
        if (e.kind == E::Started) {
            d.lost = d.goneFromTracker = false;  // measuring again: it came back (or another took its address)
            Bar b;
            b.phase = e.phase;
            b.taskId = e.taskId;
            b.batch = e.batch;
            b.candidate = e.candidate;
            b.startS = e.startS;
            d.bars.append(b);
            continue;
        }
        // Finished: close the open bar of this step, or add a closed one (builds report only this).
        Bar* open = nullptr;
        for (qsizetype i = d.bars.size() - 1; i >= 0 && i >= d.bars.size() - 8; --i) {
            Bar& b = d.bars[i];
            if (b.endS < 0 && b.phase == e.phase && b.batch == e.batch && b.candidate == e.candidate) {
                open = &b;
                break;
            }
        }
        if (!open) {
            d.bars.append(Bar{e.phase, e.taskId, e.batch, e.candidate, e.startS, -1, 0, {}});
            open = &d.bars.last();
        }
        open->endS = std::max(e.endS, open->startS);
        open->errorNo = e.errorNo;
        open->message = e.message;
        if (e.phase == E::Run) ++d.runs;
        if (e.errorNo != 0) ++d.errors;
        if (e.phase == E::Run && e.errorNo == kRunTimeout) ++d.timeouts;
    }
    if (any) Q_EMIT changed();
}

void FleetModel::setQueue(const session::DeviceQueueSnapshot& snapshot) {
    bool any = snapshot.keys != m_queue;
    m_queue = snapshot.keys;
    if (!m_jobTracker.isEmpty() && snapshot.tracker == m_jobTracker) {
        for (Device& d : m_devices) {
            if (!d.name.contains(QLatin1Char(':'))) continue;  // the host builder, the local sandbox
            bool listed = false;
            for (const auto& srv : snapshot.servers) listed |= srv.address == d.name;
            d.missing = listed ? 0 : d.missing + 1;
            if (!listed && d.missing >= 2 && !d.lost) {
                d.lost = d.goneFromTracker = true;
                d.lostAtS = m_latestS;
                d.lostWhy = tr("no longer registered with the tracker %1").arg(m_jobTracker);
                any = true;
            } else if (listed && d.goneFromTracker) {
                d.lost = d.goneFromTracker = false;
                any = true;
            }
        }
    }
    if (any) Q_EMIT changed();
}

QStringList FleetModel::keys() const {
    QStringList out;
    for (const Device& d : m_devices)
        if (!out.contains(d.key) && d.key != builderKey()) out.append(d.key);  // builds are not a device key
    for (const auto& q : m_queue)
        if (!out.contains(q.key)) out.append(q.key);
    return out;
}

session::DeviceKeyRow FleetModel::queueRow(const QString& key) const {
    for (const auto& q : m_queue)
        if (q.key == key) return q;
    session::DeviceKeyRow r;
    r.key = key;
    return r;
}

double FleetModel::runsPerMinute(const QString& key) const {
    if (m_latestS <= 0) return 0;
    const double from = m_latestS - kRateWindowS;
    int n = 0;
    for (const Device& d : m_devices) {
        if (d.key != key) continue;
        for (const Bar& b : d.bars)
            if (b.phase == session::FleetEvent::Run && b.endS >= 0 && b.endS > from) ++n;
    }
    return n * 60.0 / std::min(kRateWindowS, m_latestS);
}

int FleetModel::runs(const QString& key) const {
    int n = 0;
    for (const Device& d : m_devices)
        if (d.key == key) n += d.runs;
    return n;
}

int FleetModel::errors(const QString& key) const {
    int n = 0;
    for (const Device& d : m_devices)
        if (d.key == key) n += d.errors;
    return n;
}

int FleetModel::lostDevices(const QString& key) const {
    int n = 0;
    for (const Device& d : m_devices)
        if (d.key == key && d.lost) ++n;
    return n;
}

// ---- FleetKeyStatsModel ----------------------------------------------------------------------

FleetKeyStatsModel::FleetKeyStatsModel(FleetModel* fleet, QObject* parent) : QAbstractTableModel(parent), m_fleet(fleet) {
    connect(m_fleet, &FleetModel::changed, this, &FleetKeyStatsModel::refresh);
    refresh();
}

void FleetKeyStatsModel::refresh() {
    const QStringList keys = m_fleet->keys();
    if (keys != m_keys) {
        // A new key is rare (a new device kind); the table has a handful of rows.
        beginResetModel();
        m_keys = keys;
        endResetModel();
    } else if (!m_keys.isEmpty()) {
        Q_EMIT dataChanged(index(0, 0), index(int(m_keys.size()) - 1, ColumnCount - 1), {Qt::DisplayRole});
    }
}

int FleetKeyStatsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_keys.size()); }
int FleetKeyStatsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant FleetKeyStatsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_keys.size()) return {};
    const QString& key = m_keys[index.row()];
    if (role == Qt::TextAlignmentRole && index.column() != KeyColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
    const session::DeviceKeyRow q = m_fleet->queueRow(key);
    switch (index.column()) {
        case KeyColumn: return key;
        case DevicesColumn: {
            int n = 0;
            for (const auto& d : m_fleet->devices())
                if (d.key == key && !d.lost) ++n;
            return std::max(n, q.total);
        }
        case FreeColumn: return q.free;
        case BusyColumn: return std::max(0, q.total - q.free);
        case PendingColumn: return q.pending;
        case RunsColumn: return m_fleet->runs(key);
        case ErrorsColumn: return m_fleet->errors(key);
        case PerMinuteColumn: {
            const double r = m_fleet->runsPerMinute(key);
            return role == Qt::UserRole ? QVariant(r) : QVariant(QString::number(r, 'f', 1));
        }
        case LostColumn: return m_fleet->lostDevices(key);
    }
    return {};
}

QVariant FleetKeyStatsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case KeyColumn: return tr("Key");
        case DevicesColumn: return tr("Devices");
        case FreeColumn: return tr("Free");
        case BusyColumn: return tr("Busy");
        case PendingColumn: return tr("Pending");
        case RunsColumn: return tr("Runs");
        case ErrorsColumn: return tr("Errors");
        case PerMinuteColumn: return tr("Runs/min");
        case LostColumn: return tr("Lost");
    }
    return {};
}

void FleetKeyStatsModel::retranslate() { Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1); }

}  // namespace tb::models
