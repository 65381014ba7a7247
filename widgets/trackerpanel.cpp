// SPDX-License-Identifier: Apache-2.0
#include "widgets/trackerpanel.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "widgets/models/devicequeuemodel.h"

namespace tb::widgets {

TrackerPanel::TrackerPanel(QWidget* parent) : QWidget(parent), m_model(new models::DeviceQueueModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_title = new QLabel(this);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    layout->addWidget(m_title);
    auto* bar = new QHBoxLayout;
    m_addressLabel = new QLabel(this);
    m_address = new QLineEdit(QStringLiteral("127.0.0.1:9190"), this);
    m_connect = new QPushButton(this);
    m_fleet = new QPushButton(QIcon(QStringLiteral(":/icons/tracker.svg")), QString(), this);
    bar->addWidget(m_addressLabel);
    bar->addWidget(m_address, 1);
    bar->addWidget(m_connect);
    layout->addLayout(bar);
    auto* fleetBar = new QHBoxLayout;
    fleetBar->addWidget(m_fleet);
    fleetBar->addStretch(1);
    layout->addLayout(fleetBar);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    auto* split = m_split = new QSplitter(Qt::Vertical, this);
    m_keys = new QTableView(split);
    m_keys->setModel(m_model);
    m_keys->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_keys->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_keys->verticalHeader()->hide();
    m_servers = new QTreeWidget(split);
    m_servers->setRootIsDecorated(false);
    m_servers->setColumnCount(2);
    m_servers->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_gpu = new QTreeWidget(split);
    m_gpu->setObjectName(QStringLiteral("GpuDeviceList"));
    m_gpu->setColumnCount(2);
    m_gpu->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    split->addWidget(m_keys);
    split->addWidget(m_servers);
    split->addWidget(m_gpu);
    m_gpu->hide();  // until a key with GPU servers shows up
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setStretchFactor(2, 3);  // a dozen attributes per GPU key
    layout->addWidget(split, 1);
    connect(m_connect, &QPushButton::clicked, this, [this] {
        const QStringList hp = m_address->text().trimmed().split(QLatin1Char(':'));
        bool ok = false;
        int port = hp.value(1).toInt(&ok);
        if (hp.size() != 2 || hp[0].isEmpty() || !ok || port <= 0 || port > 65535) {
            // Says what is wrong with the field; the queue shown is still the current tracker's.
            m_status->setText(tr("Invalid tracker address '%1': expected host:port").arg(m_address->text()));
            return;
        }
        // Another tracker's queue must not stay on screen as if it were this one's.
        m_expectedTracker = QStringLiteral("%1:%2").arg(hp[0]).arg(port);
        clearQueue();
        m_status->setText(tr("Connecting to %1…").arg(m_expectedTracker));
        Q_EMIT connectRequested(hp[0], port);
    });
    connect(m_address, &QLineEdit::returnPressed, m_connect, &QPushButton::click);
    connect(m_fleet, &QPushButton::clicked, this, &TrackerPanel::startLocalFleetRequested);
    retranslate();
}

void TrackerPanel::retranslate() {
    m_title->setText(tr("Device tracker"));
    m_addressLabel->setText(tr("Tracker"));
    m_connect->setText(tr("Connect"));
    m_fleet->setText(tr("Start local tracker + fleet"));
    m_fleet->setToolTip(tr("Start a tracker on a free loopback port with one sandboxed RPC server of key \"local\""));
    m_servers->setHeaderLabels({tr("Server address"), tr("Key")});
    m_gpu->setHeaderLabels({tr("GPU device (key / attribute)"), tr("Value")});
    m_gpu->setToolTip(tr("What the GPU device servers of each key report through the tracker; the search takes its "
                         "hardware parameters from these when tuning for the key"));
    m_model->retranslate();
    if (m_hasSnapshot)
        updateSummary();
    else
        m_status->setText(tr("Not connected"));
}

void TrackerPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

void TrackerPanel::setTrackerAddress(const QString& hostPort) {
    m_address->setText(hostPort);
    m_expectedTracker = hostPort;
}

void TrackerPanel::clearQueue() {
    m_snapshot = {};
    m_hasSnapshot = false;
    m_model->setSnapshot({});
    m_servers->clear();
    m_gpu->clear();
    m_gpu->hide();
    setStale(false);
}

void TrackerPanel::setStale(bool stale) {
    m_stale = stale;
    m_keys->setEnabled(!stale);
    m_servers->setEnabled(!stale);
    m_gpu->setEnabled(!stale);
}

void TrackerPanel::setTitleVisible(bool visible) { m_title->setVisible(visible); }
QString TrackerPanel::statusText() const { return m_status->text(); }

void TrackerPanel::showSnapshot(const session::DeviceQueueSnapshot& snapshot) {
    // A poll of the previous tracker that was under way when another one was asked for.
    if (!m_expectedTracker.isEmpty() && snapshot.tracker != m_expectedTracker) return;
    setStale(false);
    m_snapshot = snapshot;
    m_hasSnapshot = true;
    m_model->setSnapshot(snapshot);
    // The server list is short and has no selection to keep: refill it.
    m_servers->clear();
    for (const auto& s : snapshot.servers) m_servers->addTopLevelItem(new QTreeWidgetItem({s.address, s.key}));
    fillGpuDevices();
    updateSummary();
}

void TrackerPanel::fillGpuDevices() {
    // Attributes change only when a key's servers do: refill only then, keeping the reader's scroll.
    QList<session::GpuDeviceRow> shown;
    for (int i = 0; i < m_gpu->topLevelItemCount(); ++i)
        shown.append(m_gpu->topLevelItem(i)->data(0, Qt::UserRole).value<session::GpuDeviceRow>());
    if (shown == m_snapshot.gpuDevices) return;
    m_gpu->clear();
    for (const session::GpuDeviceRow& d : m_snapshot.gpuDevices) {
        auto* top = new QTreeWidgetItem({d.key, QStringLiteral("%1: %2").arg(d.deviceApi, d.value(QStringLiteral("device_name")))});
        top->setData(0, Qt::UserRole, QVariant::fromValue(d));
        for (const auto& [name, value] : d.attributes) top->addChild(new QTreeWidgetItem({name, value}));
        m_gpu->addTopLevelItem(top);
        top->setExpanded(true);
    }
    if (m_gpu->isHidden() && !m_snapshot.gpuDevices.isEmpty()) {
        // A dozen attributes per key: the list takes three fifths of the height when it appears.
        m_gpu->show();
        const int h = m_split->height();
        m_split->setSizes({h / 5, h / 5, h - 2 * (h / 5)});
    }
    m_gpu->setVisible(!m_snapshot.gpuDevices.isEmpty());
}

void TrackerPanel::updateSummary() {
    int free = 0, total = 0;
    for (const auto& k : m_snapshot.keys) {
        free += k.free;
        total += k.total;
    }
    m_status->setText(tr("Tracker %1: %n key(s)", nullptr, int(m_snapshot.keys.size())).arg(m_snapshot.tracker) +
                      tr(", %1 of %2 servers free").arg(free).arg(total));
}

void TrackerPanel::showStatus(const QString& status) {
    // The tracker did not answer: what the tables show is its last known queue, greyed out.
    m_hasSnapshot = false;
    setStale(m_model->rowCount() > 0 || m_servers->topLevelItemCount() > 0);
    m_status->setText(m_stale ? status + QLatin1Char('\n') + tr("The queue below is the last one seen, not the current one.")
                              : status);
}

}  // namespace tb::widgets
