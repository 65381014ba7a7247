// SPDX-License-Identifier: Apache-2.0
#include "app/session/trackermonitor.h"

#include <QDateTime>
#include <QHash>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <utility>
#include <vector>

#include "app/session/devicefleet.h"
#include "app/session/engineadapter.h"
#include "engine/measure/sandbox_executor.h"
#include "engine/rpc/rpc_server.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"

namespace tb::session {

// Lives on the monitor's thread: every engine call (which may block on the network) happens here.
class TrackerPoller : public QObject {
    Q_OBJECT
public:
    TrackerMonitor::ExecutorFactory factory;
    std::atomic<int> localPort{0};

    void connectTo(const QString& host, int port) {
        m_host = host;
        m_port = port;
        m_session.reset();
        m_gpu.clear();  // another tracker: its keys are other devices
        if (!m_timer) {
            m_timer = new QTimer(this);
            connect(m_timer, &QTimer::timeout, this, &TrackerPoller::poll);
        }
        m_timer->start(1000);
        poll();
    }

    void startFleet(const QString& key, int servers) {
        try {
            if (!m_tracker) {
                rpc::TrackerOptions to;
                to.host = "127.0.0.1";
                to.port = 0;
                m_tracker = std::make_unique<rpc::Tracker>(to);
                m_tracker->start();
                localPort = m_tracker->port();
                Q_EMIT localTrackerStarted(QStringLiteral("127.0.0.1"), m_tracker->port());
            }
            // Servers measure in the sandbox unless the caller wired another executor.
            std::shared_ptr<rpc::MeasureExecutor> exec = factory ? factory() : std::make_shared<measure::SandboxExecutor>();
            for (int i = 0; i < servers; ++i) {
                rpc::RpcServerOptions so;
                so.host = "127.0.0.1";
                so.port = 0;
                so.key = key.toStdString();
                so.trackerHost = "127.0.0.1";
                so.trackerPort = m_tracker->port();
                auto s = std::make_unique<rpc::RpcServer>(so, exec);
                s->start();
                m_servers.push_back(std::move(s));
            }
            connectTo(QStringLiteral("127.0.0.1"), m_tracker->port());
        } catch (const std::exception& e) {
            Q_EMIT statusChanged(tr("Could not start the local fleet: %1").arg(QString::fromUtf8(e.what())));
        }
    }

    FleetPaths fleetPaths = FleetPaths::defaults();

    void startDeviceFleet(int hostServers, int armBoards, int maliBoards, int vtaDevices) {
        for (int i = 0; i < hostServers; ++i) addDevice(DeviceFleet::Kind::Local);
        for (int i = 0; i < armBoards; ++i) addDevice(DeviceFleet::Kind::Arm);
        for (int i = 0; i < maliBoards; ++i) addDevice(DeviceFleet::Kind::Mali);
        for (int i = 0; i < vtaDevices; ++i) addDevice(DeviceFleet::Kind::Vta);
    }

    void addDevice(DeviceFleet::Kind kind) {
        try {
            if (m_port <= 0) startFleet(TrackerMonitor::hostKey(), 0);  // a tracker to register with
            if (m_port <= 0) return;  // it could not start (statusChanged said why)
            // Devices register with the tracker watched now; a fleet of another tracker is stopped.
            const std::string tracker = QStringLiteral("%1:%2").arg(m_host).arg(m_port).toStdString();
            if (m_fleet && m_fleet->trackerAddress() != tracker) m_fleet.reset();
            if (!m_fleet) m_fleet = std::make_unique<DeviceFleet>(fleetPaths, tracker);
            const QString key = kind == DeviceFleet::Kind::Arm    ? TrackerMonitor::armKey()
                                : kind == DeviceFleet::Kind::Mali ? TrackerMonitor::maliKey()
                                : kind == DeviceFleet::Kind::Vta  ? TrackerMonitor::vtaKey()
                                                                  : TrackerMonitor::hostKey();
            m_fleet->add(kind, key.toStdString());
        } catch (const std::exception& e) {
            Q_EMIT statusChanged(tr("Could not start a device: %1").arg(QString::fromUtf8(e.what())));
        }
        emitFleet();
    }

    void stopDevice(int id) {
        if (m_fleet && m_fleet->stop(id)) emitFleet();
    }

    void emitFleet() {
        QList<FleetDeviceRow> rows;
        if (m_fleet)
            for (const auto& d : m_fleet->devices()) {
                FleetDeviceRow r;
                r.id = d.id;
                r.name = QString::fromStdString(d.name);
                r.arm = d.kind == DeviceFleet::Kind::Arm;
                r.mali = d.kind == DeviceFleet::Kind::Mali;
                r.vta = d.kind == DeviceFleet::Kind::Vta;
                r.key = QString::fromStdString(d.key);
                r.pid = d.pid;
                r.ended = QString::fromStdString(d.ended);
                r.log = QString::fromStdString(d.log);
                rows.append(r);
            }
        Q_EMIT fleetChanged(rows);
    }

    void stopAll() {
        waitForGpuProbe();
        if (m_fleet) {
            m_fleet->stopAll();
            emitFleet();  // the listing says how each device ended
            m_fleet.reset();
        }
        if (m_timer) m_timer->stop();
        m_session.reset();
        for (auto& s : m_servers) s->stop();
        m_servers.clear();
        if (m_tracker) m_tracker->stop();
        m_tracker.reset();
        localPort = 0;
    }

Q_SIGNALS:
    void queueChanged(const tb::session::DeviceQueueSnapshot& snapshot);
    void statusChanged(const QString& status);
    void localTrackerStarted(const QString& host, int port);
    void fleetChanged(const QList<tb::session::FleetDeviceRow>& devices);

private:
    void poll() {
        if (m_fleet && !m_fleet->reap().empty()) emitFleet();  // a device ended by itself
        try {
            if (!m_session || !m_session->connected()) {
                rpc::ConnectOptions co;
                co.retryTimeoutMs = 0;
                co.connectTimeoutMs = 800;
                co.ioTimeoutMs = 2000;
                m_session = std::make_unique<rpc::TrackerSession>(
                    rpc::TrackerSession::connect(m_host.toStdString(), m_port, co));
            }
            rpc::TrackerSummary s = m_session->summary();
            DeviceQueueSnapshot snap;
            snap.tracker = QStringLiteral("%1:%2").arg(m_host).arg(m_port);
            for (const auto& srv : s.servers) {
                ServerRow r;
                r.address = QString::fromStdString(srv.addr.size() > 0 ? srv.addr[0] : std::string()) +
                            QLatin1Char(':') + QString::fromStdString(srv.addr.size() > 1 ? srv.addr[1] : std::string());
                r.key = QString::fromStdString(srv.key);
                snap.servers.append(r);
            }
            for (const auto& q : s.queues) {
                DeviceKeyRow row;
                row.key = QString::fromStdString(q.key);
                row.free = int(q.free);
                row.pending = int(q.pending);
                const QString serverKey = QStringLiteral("server:") + row.key;
                for (const auto& srv : snap.servers)
                    if (srv.key == serverKey) ++row.total;
                snap.keys.append(row);
            }
            probeGpuKeys(snap);
            Q_EMIT queueChanged(snap);
        } catch (const std::exception& e) {
            m_session.reset();
            Q_EMIT statusChanged(tr("Tracker %1:%2 unreachable: %3").arg(m_host).arg(m_port).arg(QString::fromUtf8(e.what())));
        }
    }

    // What is known of one key's servers: a GPU device server's attributes, or that they are not
    // GPU servers (never asked again while the key stays), or when a query last failed.
    struct GpuKeyState {
        enum Kind { Unknown, Gpu, NotGpu } kind = Unknown;
        GpuDeviceRow row;
        qint64 lastTryMs = 0;
    };
    struct GpuProbeResult {
        QString key;
        GpuKeyState state;
    };

    // Adds the known GPU keys to `snap` and asks the keys not known yet, one query thread at a time.
    void probeGpuKeys(DeviceQueueSnapshot& snap) {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        QStringList ask;
        QHash<QString, GpuKeyState> present;
        for (const DeviceKeyRow& k : snap.keys) {
            GpuKeyState st = m_gpu.value(k.key);
            if (st.kind == GpuKeyState::Gpu) snap.gpuDevices.append(st.row);
            // A query takes a server of the key for a moment: ask only when one is free, and retry
            // a failed query after a while (the server may have been busy or still starting).
            if (st.kind == GpuKeyState::Unknown && k.free > 0 && now - st.lastTryMs >= kGpuRetryMs) ask.append(k.key);
            present.insert(k.key, st);
        }
        m_gpu = present;  // keys that left the tracker are forgotten (a new server may be another device)
        if (ask.isEmpty() || m_probe) return;
        for (const QString& k : ask) m_gpu[k].lastTryMs = now;
        auto results = std::make_shared<QList<GpuProbeResult>>();
        const std::string host = m_host.toStdString();
        const int port = m_port;
        const QString tracker = snap.tracker;
        m_probe = QThread::create([results, host, port, ask] {
            for (const QString& key : ask) {
                GpuProbeResult r;
                r.key = key;
                r.state.lastTryMs = QDateTime::currentMSecsSinceEpoch();
                try {
                    const measure::RemoteGpuDevice d = measure::queryRemoteGpuDevice(host, port, key.toStdString(), 2.0);
                    r.state.kind = GpuKeyState::Gpu;
                    r.state.row = adapter::gpuDeviceRow(key.toStdString(), d);
                } catch (const std::exception& e) {
                    // The server answered, and it is not a GPU server (queryRemoteGpuDevice's words);
                    // any other failure (no free server, a timeout) is asked again later.
                    if (std::string(e.what()).find("is not a GPU device server") != std::string::npos)
                        r.state.kind = GpuKeyState::NotGpu;
                }
                results->append(r);
            }
        });
        m_probe->setObjectName(QStringLiteral("TrackerMonitor GPU query"));
        connect(m_probe, &QThread::finished, this, [this, results, tracker] {
            waitForGpuProbe();
            if (tracker != QStringLiteral("%1:%2").arg(m_host).arg(m_port)) return;  // answers of another tracker
            bool found = false;
            for (const GpuProbeResult& r : *results) {
                if (!m_gpu.contains(r.key)) continue;  // the key left meanwhile
                m_gpu[r.key] = r.state;
                found = found || r.state.kind == GpuKeyState::Gpu;
            }
            if (found && m_timer && m_timer->isActive()) poll();  // show them now, not at the next tick
        });
        m_probe->start();
    }

    void waitForGpuProbe() {
        if (!m_probe) return;
        m_probe->wait();
        delete std::exchange(m_probe, nullptr);
    }

    static constexpr qint64 kGpuRetryMs = 15000;
    QHash<QString, GpuKeyState> m_gpu;
    QThread* m_probe = nullptr;
    QString m_host;
    int m_port = 0;
    QTimer* m_timer = nullptr;
    std::unique_ptr<rpc::TrackerSession> m_session;
    std::unique_ptr<rpc::Tracker> m_tracker;
    std::vector<std::unique_ptr<rpc::RpcServer>> m_servers;
    std::unique_ptr<DeviceFleet> m_fleet;
};

TrackerMonitor::TrackerMonitor(QObject* parent) : QObject(parent), m_thread(std::make_unique<QThread>()) {
    qRegisterMetaType<DeviceQueueSnapshot>();
    qRegisterMetaType<QList<FleetDeviceRow>>();
    m_thread->setObjectName(QStringLiteral("TrackerMonitor"));
    m_poller = new TrackerPoller;
    m_poller->moveToThread(m_thread.get());
    connect(m_thread.get(), &QThread::finished, m_poller, &QObject::deleteLater);
    connect(m_poller, &TrackerPoller::queueChanged, this, &TrackerMonitor::queueChanged);
    connect(m_poller, &TrackerPoller::statusChanged, this, &TrackerMonitor::statusChanged);
    connect(m_poller, &TrackerPoller::localTrackerStarted, this, &TrackerMonitor::localTrackerStarted);
    connect(m_poller, &TrackerPoller::fleetChanged, this, &TrackerMonitor::fleetChanged);
    m_thread->start();
}

TrackerMonitor::~TrackerMonitor() {
    QMetaObject::invokeMethod(m_poller, [p = m_poller] { p->stopAll(); }, Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
}

void TrackerMonitor::setExecutorFactory(ExecutorFactory f) {
    QMetaObject::invokeMethod(m_poller, [p = m_poller, f = std::move(f)] { p->factory = f; }, Qt::BlockingQueuedConnection);
}
QString TrackerMonitor::localTrackerHost() const { return QStringLiteral("127.0.0.1"); }
int TrackerMonitor::localTrackerPort() const { return m_poller->localPort.load(); }

void TrackerMonitor::connectTo(const QString& host, int port) {
    QMetaObject::invokeMethod(m_poller, [p = m_poller, host, port] { p->connectTo(host, port); });
}
void TrackerMonitor::startLocalFleet() { startFleet(QStringLiteral("local"), 1); }
void TrackerMonitor::startFleet(const QString& key, int servers) {
    QMetaObject::invokeMethod(m_poller, [p = m_poller, key, servers] { p->startFleet(key, servers); });
}
void TrackerMonitor::setFleetPaths(const QString& cli, const QString& armScript, const QString& armBuildDir,
                                   const QString& logDir) {
    FleetPaths f{cli.toStdString(), armScript.toStdString(), armBuildDir.toStdString(), logDir.toStdString()};
    QMetaObject::invokeMethod(m_poller, [p = m_poller, f] { p->fleetPaths = f; }, Qt::BlockingQueuedConnection);
}
void TrackerMonitor::startDeviceFleet(int hostServers, int armBoards, int maliBoards, int vtaDevices) {
    QMetaObject::invokeMethod(m_poller, [p = m_poller, hostServers, armBoards, maliBoards, vtaDevices] {
        p->startDeviceFleet(hostServers, armBoards, maliBoards, vtaDevices);
    });
}
void TrackerMonitor::addDevice(bool arm) {
    QMetaObject::invokeMethod(m_poller, [p = m_poller, arm] { p->addDevice(arm ? DeviceFleet::Kind::Arm : DeviceFleet::Kind::Local); });
}
void TrackerMonitor::addMaliBoard() {
    QMetaObject::invokeMethod(m_poller, [p = m_poller] { p->addDevice(DeviceFleet::Kind::Mali); });
}

void TrackerMonitor::addVtaDevice() {
    QMetaObject::invokeMethod(m_poller, [p = m_poller] { p->addDevice(DeviceFleet::Kind::Vta); });
}
void TrackerMonitor::stopDevice(int id) {
    QMetaObject::invokeMethod(m_poller, [p = m_poller, id] { p->stopDevice(id); });
}
void TrackerMonitor::stopAll() {
    QMetaObject::invokeMethod(m_poller, [p = m_poller] { p->stopAll(); }, Qt::BlockingQueuedConnection);
}

}  // namespace tb::session

#include "trackermonitor.moc"
