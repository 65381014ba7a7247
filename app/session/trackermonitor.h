// SPDX-License-Identifier: Apache-2.0
#pragma once
// Watches a device tracker (ours or TVM's) from the GUI: polls SUMMARY on a worker thread once a
// second and emits flattened snapshots; can also start an in-process tracker with a fleet of local
// RPC servers (the embedded default of DESIGN.md §4). Part of the session bridge: the only Qt
// code that talks to engine/rpc.

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

public Q_SLOTS:
    void connectTo(const QString& host, int port);
    /// Starts a tracker on a free loopback port and `servers` RPC servers under key `key`,
    /// then watches it.
    void startLocalFleet();
    void startFleet(const QString& key, int servers);
    void stopAll();

Q_SIGNALS:
    void queueChanged(const tb::session::DeviceQueueSnapshot& snapshot);
    void statusChanged(const QString& status);
    void localTrackerStarted(const QString& host, int port);

private:
    std::unique_ptr<QThread> m_thread;
    TrackerPoller* m_poller = nullptr;
};

}  // namespace tb::session
