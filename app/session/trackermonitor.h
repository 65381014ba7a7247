// SPDX-License-Identifier: Apache-2.0
#pragma once
// Watches a device tracker (ours or TVM's) from the GUI: polls SUMMARY on a worker thread once a
// second and emits flattened snapshots; can also start an in-process tracker with a fleet of local
// RPC servers (the embedded default of DESIGN.md §4), and a fleet of device processes (sandboxed
// host servers, emulated ARM boards, emulated Mali boards: DeviceFleet) registering with the
// tracker it watches, one device added or stopped at a time. Keys whose servers are GPU device
// servers get their device attributes asked once through the tracker (measure::
// queryRemoteGpuDevice, on a thread of its own so that polling goes on), and every snapshot carries
// them. Part of the session bridge: the only Qt code that talks to engine/rpc.

#include <QObject>
#include <functional>
#include <memory>

#include "app/session/snapshots.h"

class QThread;

namespace tb::rpc {
class MeasureExecutor;
}

namespace tb::session {

class TrackerPoller;

class TrackerMonitor : public QObject {
    Q_OBJECT
public:
    using ExecutorFactory = std::function<std::shared_ptr<rpc::MeasureExecutor>()>;

    explicit TrackerMonitor(QObject* parent = nullptr);
    ~TrackerMonitor() override;

    /// How local fleet servers run candidates; by default the sandboxed runner
    /// (measure::SandboxExecutor, as `tunebench-cli rpc-server`).
    void setExecutorFactory(ExecutorFactory f);
    /// Host and port of the tracker started by startLocalFleet() (port 0 before).
    QString localTrackerHost() const;
    int localTrackerPort() const;
    /// Where fleet devices' programs and logs are (default: session::FleetPaths::defaults()).
    void setFleetPaths(const QString& cli, const QString& armScript, const QString& armBuildDir, const QString& logDir);

    /// Device keys of the fleet's host servers and ARM boards.
    static QString hostKey() { return QStringLiteral("local"); }
    static QString armKey() { return QStringLiteral("rasp4b-64"); }
    /// Device key of the fleet's emulated Mali boards (scripts/mali-board's default, seed 003's RK3399).
    static QString maliKey() { return QStringLiteral("rk3399"); }
    /// Device key of the fleet's simulated VTA accelerators (seed 004's intelfocl target).
    static QString vtaKey() { return QStringLiteral("intelfocl"); }

public Q_SLOTS:
    void connectTo(const QString& host, int port);
    /// Starts a tracker on a free loopback port and `servers` RPC servers under key `key`,
    /// then watches it.
    void startLocalFleet();
    void startFleet(const QString& key, int servers);
    /// Starts `hostServers` sandboxed host servers, `armBoards` emulated ARM boards and
    /// `maliBoards` emulated Mali boards and `vtaDevices` simulated VTAs as child processes registering with the tracker being
    /// watched (a local tracker is started first when none is); fleetChanged follows.
    void startDeviceFleet(int hostServers, int armBoards, int maliBoards = 0, int vtaDevices = 0);
    /// Adds one device to the fleet (also while tuning runs on it).
    void addDevice(bool arm);
    /// Adds one emulated Mali board (scripts/mali-board: a PoCL GPU device server, key maliKey()).
    void addMaliBoard();
    /// Adds one simulated VTA (`rpc-server --device vta`, key vtaKey(): the intelfocl config).
    void addVtaDevice();
    /// Stops fleet device `id` (SIGTERM, then SIGKILL after 10 s): a candidate it was measuring
    /// gets an error record and tuning goes on with the other devices.
    void stopDevice(int id);
    void stopAll();

Q_SIGNALS:
    void queueChanged(const tb::session::DeviceQueueSnapshot& snapshot);
    void statusChanged(const QString& status);
    void localTrackerStarted(const QString& host, int port);
    /// The fleet's devices, after every change (added, stopped, ended by itself).
    void fleetChanged(const QList<tb::session::FleetDeviceRow>& devices);

private:
    std::unique_ptr<QThread> m_thread;
    TrackerPoller* m_poller = nullptr;
};

}  // namespace tb::session
