// SPDX-License-Identifier: Apache-2.0
#include "widgets/loginspector.h"

#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/qcustomplot_include.h"

#include "app/session/logloader.h"
#include "widgets/models/measurementmodel.h"

namespace tb::widgets {

namespace {
QTableWidgetItem* item(const QString& s) { return new QTableWidgetItem(s); }
QTableWidgetItem* number(double v, int prec) {
    auto* it = new QTableWidgetItem;
    // Numbers as numbers, so that sorting the column sorts by value.
    it->setData(Qt::DisplayRole, prec < 0 ? QVariant(int(v)) : QVariant(QString::number(v, 'f', prec)));
    if (prec >= 0) it->setData(Qt::UserRole + 1, v);
    it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return it;
}
}  // namespace

LogPane::LogPane(QWidget* parent) : QWidget(parent) {
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    m_header = new QLabel(this);
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    l->addWidget(m_header);
    m_workloads = new QTableWidget(0, 6, this);
    m_workloads->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_workloads->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_workloads->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_workloads->setSelectionMode(QAbstractItemView::SingleSelection);
    m_workloads->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_workloads->setTextElideMode(Qt::ElideMiddle);
    m_workloads->verticalHeader()->hide();
    m_workloads->verticalHeader()->setDefaultSectionSize(m_workloads->fontMetrics().height() + 6);
    l->addWidget(m_workloads, 2);
    m_plot = new QCustomPlot(this);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->setMinimumHeight(180);
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    l->addWidget(m_plot, 2);
    m_errors = new QTableWidget(0, 2, this);
    m_errors->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_errors->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_errors->verticalHeader()->hide();
    m_errors->verticalHeader()->setDefaultSectionSize(m_errors->fontMetrics().height() + 6);
    l->addWidget(m_errors, 1);
    connect(m_workloads, &QTableWidget::currentCellChanged, this, [this](int row) { plotWorkload(row); });
    retranslate();
}

void LogPane::retranslate() {
    m_workloads->setHorizontalHeaderLabels(
        {tr("Workload"), tr("Records"), tr("Valid"), tr("Best (ms)"), tr("GFLOPS"), tr("Target")});
    m_errors->setHorizontalHeaderLabels({tr("Result"), tr("Count")});
    m_plot->xAxis->setLabel(tr("Record"));
    m_plot->yAxis->setLabel(tr("Cost (ms)"));
    if (m_plot->isVisible()) m_plot->replot(QCustomPlot::rpQueuedReplot);  // hidden: replotted on resize
    fillHeader();
}

void LogPane::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

void LogPane::fillHeader() {
    if (!m_hasLog) {
        m_header->setText(tr("No log open"));
        return;
    }
    const session::LogSnapshot& log = m_log;
    if (log.format == QLatin1String("error")) {
        m_header->setText(tr("%1 could not be read: %2").arg(log.path, log.badLines.value(0).second));
        return;
    }
    m_header->setText(tr("%1 — %2 format, %3 lines, %4 records (%5 valid), %6 workloads, %7 unreadable lines")
                          .arg(QFileInfo(log.path).fileName(), log.format)
                          .arg(log.totalLines)
                          .arg(log.records)
                          .arg(log.valid)
                          .arg(log.workloads.size())
                          .arg(log.badLines.size()));
    m_header->setToolTip(log.path);
}

void LogPane::setLog(const session::LogSnapshot& log) {
    m_log = log;
    m_hasLog = true;
    fillHeader();
    m_workloads->setSortingEnabled(false);
    m_workloads->clearContents();
    m_workloads->setRowCount(int(log.workloads.size()));
    for (int i = 0; i < log.workloads.size(); ++i) {
        const auto& w = log.workloads[i];
        auto* k = item(w.key);
        k->setToolTip(w.key);
        k->setData(Qt::UserRole, i);
        m_workloads->setItem(i, 0, k);
        m_workloads->setItem(i, 1, number(w.records, -1));
        m_workloads->setItem(i, 2, number(w.valid, -1));
        m_workloads->setItem(i, 3, w.bestMs >= 0 ? number(w.bestMs, 4) : item(QStringLiteral("-")));
        m_workloads->setItem(i, 4, w.gflops >= 0 ? number(w.gflops, 2) : item(QStringLiteral("-")));
        m_workloads->setItem(i, 5, item(w.target));
    }
    // Logs carry no DAGs, so FLOPs (and GFLOPS) are known only for some workloads, often none.
    m_workloads->setColumnHidden(4, std::none_of(log.workloads.cbegin(), log.workloads.cend(),
                                                 [](const session::LogWorkloadRow& w) { return w.gflops >= 0; }));
    m_errors->clearContents();
    m_errors->setRowCount(int(log.errorCounts.size() + (log.badLines.isEmpty() ? 0 : 1)));
    int r = 0;
    for (const auto& [e, n] : log.errorCounts) {
        m_errors->setItem(r, 0, item(models::MeasurementModel::errorName(e)));
        m_errors->setItem(r, 1, number(n, -1));
        ++r;
    }
    if (!log.badLines.isEmpty()) {
        auto* b = item(tr("unreadable lines"));
        QStringList tips;
        for (const auto& [line, reason] : log.badLines.mid(0, 50)) tips << tr("line %1: %2").arg(line).arg(reason);
        b->setToolTip(tips.join(QLatin1Char('\n')));
        m_errors->setItem(r, 0, b);
        m_errors->setItem(r, 1, number(log.badLines.size(), -1));
    }
    if (!log.workloads.isEmpty())
        m_workloads->setCurrentCell(0, 0);  // plots through currentCellChanged
    else
        plotWorkload(-1);
}

void LogPane::plotWorkload(int row) {
    m_plot->clearGraphs();
    auto* all = m_plot->addGraph();
    all->setLineStyle(QCPGraph::lsNone);
    all->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(170, 170, 170), 3));
    auto* sel = m_plot->addGraph();
    sel->setLineStyle(QCPGraph::lsNone);
    sel->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(30, 110, 200), 5));
    int workload = -1;
    if (row >= 0 && m_workloads->item(row, 0)) workload = m_workloads->item(row, 0)->data(Qt::UserRole).toInt();
    for (const auto& p : m_log.points) {
        if (p.costMs <= 0) continue;  // errors (and zero costs on the log axis)
        (p.workload == workload ? sel : all)->addData(p.record, p.costMs);
    }
    m_plot->rescaleAxes();
    if (m_plot->isVisible()) m_plot->replot(QCustomPlot::rpQueuedReplot);  // hidden: replotted on resize
}

int LogPane::plottedPoints() const {
    int n = 0;
    for (int i = 0; i < m_plot->graphCount(); ++i) n += m_plot->graph(i)->data()->size();
    return n;
}

LogInspector::LogInspector(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("LogInspector"));
    resize(1300, 800);
    auto* l = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_open = new QPushButton(QIcon(QStringLiteral(":/icons/log.svg")), QString(), this);
    m_compare = new QPushButton(this);
    m_distill = new QPushButton(this);
    bar->addWidget(m_open);
    bar->addWidget(m_compare);
    bar->addWidget(m_distill);
    bar->addStretch(1);
    l->addLayout(bar);
    auto* split = new QSplitter(Qt::Horizontal, this);
    m_left = new LogPane(split);
    m_right = new LogPane(split);
    m_right->hide();
    l->addWidget(split, 1);
    m_status = new QLabel(this);
    l->addWidget(m_status);
    connect(m_open, &QPushButton::clicked, this, [this] {
        QString f = QFileDialog::getOpenFileName(this, tr("Open tuning log"), QString(), tr("Tuning logs (*.json *.log);;All files (*)"));
        if (!f.isEmpty()) openLog(f, false);
    });
    connect(m_compare, &QPushButton::clicked, this, [this] {
        QString f = QFileDialog::getOpenFileName(this, tr("Compare with log"), QString(), tr("Tuning logs (*.json *.log);;All files (*)"));
        if (!f.isEmpty()) openLog(f, true);
    });
    connect(m_distill, &QPushButton::clicked, this, [this] {
        const QString in = m_left->log().path;
        if (in.isEmpty()) return;
        QString out = QFileDialog::getSaveFileName(this, tr("Distill into"), in + QStringLiteral(".best.json"));
        if (out.isEmpty()) return;
        m_status->setText(session::distillLog(in, out));
    });
    retranslate();
}

void LogInspector::retranslate() {
    setWindowTitle(tr("TuneBench — Log Inspector"));
    m_open->setText(tr("Open log…"));
    m_compare->setText(tr("Compare with…"));
    m_distill->setText(tr("Distill…"));
    m_distill->setToolTip(tr("Keep the best record of every workload (TVM's distill / pick_best)"));
}

void LogInspector::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

QString LogInspector::statusText() const { return m_status->text(); }

void LogInspector::openLog(const QString& path, bool compare) {
    m_status->setText(tr("Reading %1…").arg(path));
    session::loadLogAsync(path, this, [this, compare](const session::LogSnapshot& s) {
        LogPane* pane = compare ? m_right : m_left;
        pane->setLog(s);
        pane->show();
        m_status->setText(s.format == QLatin1String("error") ? s.badLines.value(0).second : tr("Read %1").arg(s.path));
        Q_EMIT logLoaded(s.path);
    });
}

}  // namespace tb::widgets
