// SPDX-License-Identifier: Apache-2.0
#include "widgets/fleettimeline.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "widgets/models/fleetmodel.h"

namespace tb::widgets {

namespace {

using E = session::FleetEvent;
constexpr int kRunTimeout = 7;

// Mid-tone hues that read on a light and on a dark background alike.
QColor phaseColor(int phase) {
    switch (phase) {
        case E::Build: return QColor(0x5b, 0x8d, 0xef);
        case E::Upload: return QColor(0xb0, 0x8c, 0xd8);
        default: return QColor(0x3f, 0xae, 0x5a);
    }
}
QColor errorColor() { return QColor(0xd9, 0x53, 0x4f); }
QColor timeoutColor() { return QColor(0xf0, 0x88, 0x3e); }

QColor barColor(const models::FleetModel::Bar& b) {
    if (b.endS >= 0 && b.errorNo == kRunTimeout) return timeoutColor();
    if (b.endS >= 0 && b.errorNo != 0) return errorColor();
    return phaseColor(b.phase);
}

// A tick step (s) that leaves at least `minPx` between ticks.
double tickStep(double span, double widthPx, double minPx) {
    static const double steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600};
    for (double s : steps)
        if (span / s * minPx <= widthPx) return s;
    return 7200;
}

QString swatch(const QColor& c) {
    return QStringLiteral("<span style=\"color:%1\">&#9632;</span>").arg(c.name());
}

}  // namespace

// ---- FleetTimeline -----------------------------------------------------------------------------

FleetTimeline::FleetTimeline(models::FleetModel* model, QWidget* parent) : QWidget(parent), m_model(model) {
    setObjectName(QStringLiteral("FleetTimeline"));
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    // Bursts of events coalesce into one paint (update() is queued).
    connect(m_model, &models::FleetModel::changed, this, [this] {
        updateGeometry();
        update();
    });
}

QSize FleetTimeline::sizeHint() const { return {700, rowHeight() * (int(m_model->devices().size()) + 2)}; }
QSize FleetTimeline::minimumSizeHint() const { return {300, rowHeight() * 3}; }

int FleetTimeline::rowHeight() const { return fontMetrics().height() + 8; }

int FleetTimeline::labelWidth() const {
    const QFontMetrics fm = fontMetrics();
    int w = fm.horizontalAdvance(tr("No device has measured yet")) / 2;
    for (const auto& d : m_model->devices())
        w = std::max(w, fm.horizontalAdvance(d.name + QStringLiteral("  ") + d.key + QStringLiteral("  ✕")));
    return std::min(w + 12, width() / 3);
}

double FleetTimeline::spanS() const { return std::max(10.0, m_model->latestS() * 1.03); }

double FleetTimeline::xOf(double s) const {
    const int left = labelWidth();
    return left + (width() - left - 8) * std::clamp(s / spanS(), 0.0, 1.0);
}

QRect FleetTimeline::rowRect(int row) const {
    const int h = rowHeight();
    return QRect(0, h + row * h, width(), h);
}

QRectF FleetTimeline::barRect(int row, int bar) const {
    const auto& devices = m_model->devices();
    if (row < 0 || row >= devices.size() || bar < 0 || bar >= devices[row].bars.size()) return {};
    const models::FleetModel::Bar& b = devices[row].bars[bar];
    const QRect r = rowRect(row);
    const double x0 = xOf(b.startS);
    const double x1 = std::max(x0 + 2.0, xOf(b.endS >= 0 ? b.endS : m_model->latestS()));
    // Uploads sit lower and thinner than the runs they prepare; builds use the whole row.
    const double top = r.top() + 3, height = r.height() - 6;
    if (b.phase == E::Upload) return QRectF(x0, top + height * 0.35, x1 - x0, height * 0.65);
    return QRectF(x0, top, x1 - x0, height);
}

QPair<int, int> FleetTimeline::barAt(const QPoint& pos) const {
    const auto& devices = m_model->devices();
    for (int row = 0; row < devices.size(); ++row) {
        if (!rowRect(row).contains(pos)) continue;
        // The last drawn bar wins (it is on top); allow a pixel of slack for thin bars.
        for (int i = int(devices[row].bars.size()) - 1; i >= 0; --i)
            if (barRect(row, i).adjusted(-1, 0, 1, 0).contains(pos)) return {row, i};
        return {-1, -1};
    }
    return {-1, -1};
}

QString FleetTimeline::barText(int row, int bar) const {
    const auto& d = m_model->devices().value(row);
    if (bar < 0 || bar >= d.bars.size()) return {};
    const models::FleetModel::Bar& b = d.bars[bar];
    const QString phase = phaseName(b.phase);
    QString text = tr("%1 (%2)").arg(d.name, d.key) + QLatin1Char('\n');
    text += b.taskId >= 0 ? tr("Task %1, candidate %2 of batch %3").arg(b.taskId).arg(b.candidate).arg(b.batch)
                          : tr("Candidate %1 of batch %2").arg(b.candidate).arg(b.batch);
    text += QLatin1Char('\n');
    if (b.endS >= 0)
        text += tr("%1: %2 s, from %3 s to %4 s").arg(phase).arg(b.endS - b.startS, 0, 'f', 3).arg(b.startS, 0, 'f', 1).arg(b.endS, 0, 'f', 1);
    else
        text += tr("%1: running since %2 s").arg(phase).arg(b.startS, 0, 'f', 1);
    if (b.endS >= 0 && b.errorNo != 0)
        text += QLatin1Char('\n') + tr("Error %1: %2").arg(b.errorNo).arg(b.message.left(300));
    return text;
}

QString FleetTimeline::phaseName(int phase) {
    return phase == E::Build ? tr("build") : phase == E::Upload ? tr("upload") : tr("run");
}

bool FleetTimeline::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const auto [row, bar] = barAt(he->pos());
        if (row >= 0) {
            QToolTip::showText(he->globalPos(), barText(row, bar), this);
        } else {
            // Over a label: why the device is marked.
            QString tip;
            const auto& devices = m_model->devices();
            for (int r = 0; r < devices.size(); ++r)
                if (rowRect(r).contains(he->pos()) && devices[r].lost)
                    tip = tr("Lost at %1 s: %2").arg(devices[r].lostAtS, 0, 'f', 1).arg(devices[r].lostWhy);
            if (tip.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(he->globalPos(), tip, this);
        }
        return true;
    }
    return QWidget::event(e);
}

void FleetTimeline::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QPalette pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    const QFontMetrics fm = fontMetrics();
    const int h = rowHeight(), left = labelWidth();
    const auto& devices = m_model->devices();
    QColor grid = pal.color(QPalette::Text);
    grid.setAlpha(40);

    // Time axis on top, with grid lines through the rows.
    const double span = spanS();
    const double step = tickStep(span, width() - left - 8, fm.horizontalAdvance(QStringLiteral("0000 s")) + 16);
    p.setPen(pal.color(QPalette::Text));
    for (double t = 0; t <= span + 1e-9; t += step) {
        const double x = xOf(t);
        const QString label = t >= 120 && std::fmod(t, 60) == 0 ? tr("%1 min").arg(t / 60) : tr("%1 s").arg(t);
        p.setPen(pal.color(QPalette::Text));
        // Centred on its tick, but inside the widget (the last tick sits at the right edge).
        const double lw = fm.horizontalAdvance(label) + 4;
        p.drawText(QRectF(std::min(x - lw / 2, width() - lw - 2), 0, lw, h), Qt::AlignCenter, label);
        p.setPen(grid);
        p.drawLine(QPointF(x, h), QPointF(x, height()));
    }
    if (devices.isEmpty()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(8, h, -8, 0), Qt::AlignCenter, tr("No device has measured yet"));
        return;
    }

    for (int row = 0; row < devices.size(); ++row) {
        const models::FleetModel::Device& d = devices[row];
        const QRect r = rowRect(row);
        if (row % 2) p.fillRect(r, pal.color(QPalette::AlternateBase));
        if (d.lost) {
            QColor tint = errorColor();
            tint.setAlpha(40);
            p.fillRect(r, tint);
        }
        // Label: device, key in a quieter colour, a red cross when it died.
        const QRect lr = r.adjusted(6, 0, -(width() - left) - 4, 0);
        p.setPen(pal.color(QPalette::Text));
        const QString name = fm.elidedText(d.name, Qt::ElideMiddle, lr.width());
        p.drawText(lr, Qt::AlignVCenter | Qt::AlignLeft, name);
        int x = lr.left() + fm.horizontalAdvance(name) + fm.horizontalAdvance(QLatin1Char(' ')) * 2;
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(QRect(x, r.top(), std::max(0, lr.right() - x), r.height()), Qt::AlignVCenter | Qt::AlignLeft, d.key);
        if (d.lost) {
            p.setPen(errorColor());
            p.drawText(lr, Qt::AlignVCenter | Qt::AlignRight, QStringLiteral("✕"));
        } else if (d.timeouts > 0) {
            p.setPen(timeoutColor());
            p.drawText(lr, Qt::AlignVCenter | Qt::AlignRight, QStringLiteral("⏱"));
        }
        // Bars.
        p.setRenderHint(QPainter::Antialiasing, false);
        for (int i = 0; i < d.bars.size(); ++i) {
            const models::FleetModel::Bar& b = d.bars[i];
            const QRectF br = barRect(row, i);
            QColor c = barColor(b);
            if (b.endS < 0) {
                p.fillRect(br, QBrush(c, Qt::BDiagPattern));  // still running
                p.setPen(c);
                p.drawRect(br.adjusted(0, 0, -1, -1));
            } else {
                p.fillRect(br, c);
            }
        }
        if (d.lost) {
            const double lx = xOf(d.lostAtS);
            p.setPen(QPen(errorColor(), 2));
            p.drawLine(QPointF(lx, r.top() + 1), QPointF(lx, r.bottom() - 1));
        }
        p.setPen(grid);
        p.drawLine(r.bottomLeft(), r.bottomRight());
    }
    p.setPen(grid);
    p.drawLine(QPoint(left - 2, h), QPoint(left - 2, rowRect(int(devices.size()) - 1).bottom()));
}

// ---- FleetPanel --------------------------------------------------------------------------------

FleetPanel::FleetPanel(QWidget* parent)
    : QWidget(parent), m_model(new models::FleetModel(this)), m_stats(new models::FleetKeyStatsModel(m_model, this)) {
    setObjectName(QStringLiteral("FleetPanel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    m_armLabel = new QLabel(this);
    m_arm = new QSpinBox(this);
    m_arm->setRange(0, 8);
    m_arm->setValue(2);
    m_hostLabel = new QLabel(this);
    m_host = new QSpinBox(this);
    m_host->setRange(0, 8);
    m_host->setValue(1);
    m_start = new QPushButton(QIcon(QStringLiteral(":/icons/tracker.svg")), QString(), this);
    m_addArm = new QPushButton(this);
    m_addHost = new QPushButton(this);
    m_addMali = new QPushButton(this);
    m_addMali->setObjectName(QStringLiteral("AddMaliBoard"));
    m_addVta = new QPushButton(this);
    m_addVta->setObjectName(QStringLiteral("AddVtaDevice"));
    m_stop = new QPushButton(QIcon(QStringLiteral(":/icons/stop.svg")), QString(), this);
    m_stop->setEnabled(false);
    m_summary = new QLabel(this);
    for (QWidget* w : std::initializer_list<QWidget*>{m_armLabel, m_arm, m_hostLabel, m_host, m_start, m_addArm, m_addHost, m_addMali, m_addVta, m_stop})
        bar->addWidget(w);
    bar->addSpacing(12);
    bar->addWidget(m_summary, 1);
    layout->addLayout(bar);

    // The strip and the device list side by side; the per-key table under them, full width (it
    // has many columns and few rows).
    auto* vertical = new QSplitter(Qt::Vertical, this);
    auto* split = new QSplitter(Qt::Horizontal, vertical);
    m_timeline = new FleetTimeline(m_model, split);
    m_keys = new QTableView(vertical);
    m_keys->setObjectName(QStringLiteral("FleetKeyTable"));
    m_keys->setModel(m_stats);
    m_keys->verticalHeader()->hide();
    m_keys->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_keys->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_devices = new QTreeWidget(split);
    m_devices->setObjectName(QStringLiteral("FleetDeviceList"));
    m_devices->setRootIsDecorated(false);
    m_devices->setColumnCount(3);
    m_devices->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 0);
    split->setSizes({700, m_devices->fontMetrics().horizontalAdvance(QStringLiteral("ARM board 0  rasp4b-64  running (pid 99999)")) + 24});
    vertical->setStretchFactor(0, 1);
    vertical->setStretchFactor(1, 0);
    // Room for the header and three keys (devices, host servers, ...) without a scroll bar.
    const int keyRows = m_keys->verticalHeader()->defaultSectionSize() * 3 + m_keys->horizontalHeader()->sizeHint().height() + 6;
    vertical->setSizes({200, keyRows});
    layout->addWidget(vertical, 1);

    connect(m_start, &QPushButton::clicked, this, [this] { Q_EMIT startFleetRequested(m_host->value(), m_arm->value()); });
    connect(m_addArm, &QPushButton::clicked, this, [this] { Q_EMIT addDeviceRequested(true); });
    connect(m_addHost, &QPushButton::clicked, this, [this] { Q_EMIT addDeviceRequested(false); });
    connect(m_addMali, &QPushButton::clicked, this, &FleetPanel::addMaliBoardRequested);
    connect(m_addVta, &QPushButton::clicked, this, &FleetPanel::addVtaDeviceRequested);
    connect(m_devices, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* cur) {
        m_stop->setEnabled(cur && cur->data(0, Qt::UserRole + 1).toBool());
    });
    connect(m_stop, &QPushButton::clicked, this, [this] {
        if (QTreeWidgetItem* cur = m_devices->currentItem(); cur && cur->data(0, Qt::UserRole + 1).toBool())
            Q_EMIT stopDeviceRequested(cur->data(0, Qt::UserRole).toInt());
    });
    connect(m_model, &models::FleetModel::changed, this, &FleetPanel::updateSummary);
    retranslate();
}

void FleetPanel::retranslate() {
    m_armLabel->setText(tr("ARM boards"));
    m_hostLabel->setText(tr("Host servers"));
    m_start->setText(tr("Start fleet"));
    m_start->setToolTip(tr("Start emulated AArch64 boards (qemu, key %1) and sandboxed host servers (key %2), each a "
                           "separate process registering with the tracker watched in the tracker panel")
                            .arg(QStringLiteral("rasp4b-64"), QStringLiteral("local")));
    m_addArm->setText(tr("Add ARM board"));
    m_addHost->setText(tr("Add host server"));
    m_addMali->setText(tr("Add Mali board"));
    m_addMali->setToolTip(tr("Start an emulated Mali GPU board (scripts/mali-board: a GPU device server on PoCL, key %1) "
                             "registering with the tracker; its device attributes appear in the tracker panel")
                              .arg(QStringLiteral("rk3399")));
    m_addVta->setText(tr("Add VTA"));
    m_addVta->setToolTip(tr("Start a simulated VTA accelerator (rpc-server --device vta: the bit-exact VTA simulator, "
                            "key %1) registering with the tracker; its measurements are simulated time")
                             .arg(QStringLiteral("intelfocl")));
    m_stop->setText(tr("Stop device"));
    m_stop->setToolTip(tr("Stop the device selected in the list (also while tuning runs: its candidate is recorded as an error)"));
    m_devices->setHeaderLabels({tr("Device"), tr("Key"), tr("State")});
    m_stats->retranslate();
    showFleet(m_fleet);
    updateSummary();
}

void FleetPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

void FleetPanel::showFleet(const QList<session::FleetDeviceRow>& devices) {
    m_fleet = devices;
    const int current = m_devices->currentItem() ? m_devices->currentItem()->data(0, Qt::UserRole).toInt() : -1;
    m_devices->clear();
    for (const auto& d : devices) {
        // The engine names devices in English ("ARM board 0"): say it again in the user's language.
        const QString number = d.name.section(QLatin1Char(' '), -1);
        const QString name = d.arm    ? tr("ARM board %1").arg(number)
                             : d.mali ? tr("Mali board %1").arg(number)
                             : d.vta  ? tr("VTA sim %1").arg(number)
                                      : tr("Host server %1").arg(number);
        const QString state = d.pid > 0 ? tr("running (pid %1)").arg(d.pid) : d.ended == QLatin1String("stopped") ? tr("stopped") : d.ended;
        auto* item = new QTreeWidgetItem({name, d.key, state});
        item->setData(0, Qt::UserRole, d.id);
        item->setData(0, Qt::UserRole + 1, d.pid > 0);
        item->setToolTip(0, tr("Log: %1").arg(d.log));
        if (d.pid <= 0) item->setForeground(2, errorColor());
        m_devices->addTopLevelItem(item);
        if (d.id == current) m_devices->setCurrentItem(item);
    }
    m_stop->setEnabled(m_devices->currentItem() && m_devices->currentItem()->data(0, Qt::UserRole + 1).toBool());
}

QString FleetPanel::summaryText() const { return m_summary->text(); }

void FleetPanel::updateSummary() {
    int lost = 0;
    for (const auto& d : m_model->devices()) lost += d.lost ? 1 : 0;
    QString text;
    for (int phase : {E::Build, E::Upload, E::Run})
        text += swatch(phaseColor(phase)) + QLatin1Char(' ') + FleetTimeline::phaseName(phase) + QStringLiteral(" &nbsp; ");
    text += swatch(errorColor()) + QLatin1Char(' ') + tr("error") + QStringLiteral(" &nbsp; ") + swatch(timeoutColor()) +
            QLatin1Char(' ') + tr("timeout");
    if (lost > 0) text += QStringLiteral(" &nbsp; <b style=\"color:%1\">").arg(errorColor().name()) +
                          tr("%n device(s) lost", nullptr, lost).toHtmlEscaped() + QStringLiteral("</b>");
    m_summary->setText(text);
}

}  // namespace tb::widgets
