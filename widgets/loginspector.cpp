// SPDX-License-Identifier: Apache-2.0
#include "widgets/loginspector.h"

#include <QDir>
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
#include <cmath>

#include "widgets/chartaxes.h"

#include "app/session/logloader.h"
#include "widgets/models/measurementmodel.h"
#include "widgets/models/workloadtext.h"
#include "widgets/windowsize.h"
#include "widgets/workloaddelegate.h"

namespace tb::widgets {

namespace {

constexpr int kValueRole = Qt::UserRole + 1;
constexpr int kNameRole = Qt::UserRole + 2;    // workload cells: the hash or name part
constexpr int kShapesRole = Qt::UserRole + 3;  // workload cells: the shapes part

// Sorts by the value behind the text ("12.000" after "2.000").
class NumberItem : public QTableWidgetItem {
public:
    bool operator<(const QTableWidgetItem& other) const override {
        return data(kValueRole).toDouble() < other.data(kValueRole).toDouble();
    }
};

QTableWidgetItem* item(const QString& s) { return new QTableWidgetItem(s); }
QTableWidgetItem* number(double v, int prec) {
    auto* it = new NumberItem;
    it->setData(Qt::DisplayRole, prec < 0 ? QString::number(qint64(v)) : QString::number(v, 'f', prec));
    it->setData(kValueRole, v);
    it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return it;
}
// A missing value ("-"), sorted after every number.
QTableWidgetItem* none() {
    auto* it = new NumberItem;
    it->setData(Qt::DisplayRole, QStringLiteral("-"));
    it->setData(kValueRole, 1e300);
    it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return it;
}
QTableWidgetItem* workloadItem(const QString& key) {
    auto* k = item(models::workloadLabel(QString(), key));
    k->setToolTip(key);
    k->setData(kNameRole, models::workloadNameText(key));
    k->setData(kShapesRole, models::workloadArgsText(key));
    return k;
}

QTableWidget* makeTable(int columns, QWidget* parent) {
    auto* t = new QTableWidget(0, columns, parent);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setTextElideMode(Qt::ElideMiddle);
    t->setWordWrap(false);
    t->verticalHeader()->hide();
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    t->setItemDelegateForColumn(0, new WorkloadDelegate(kNameRole, kShapesRole, true, t));
    return t;
}

// A wrapped, selectable line of text over a pane (file, counts, or what is wrong).
QLabel* makeHeader(QVBoxLayout* layout, QWidget* parent) {
    auto* label = new QLabel(parent);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(label);
    return label;
}

QCustomPlot* makeCostPlot(QWidget* parent) {
    auto* plot = new QCustomPlot(parent);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->setMinimumHeight(180);
    plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new LogAxisTicker));
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new IntegerAxisTicker));
    return plot;
}

// Fits both axes of a cost plot (log y) to its graphs, with margins.
void fitCostPlot(QCustomPlot* plot) {
    bool any = false;
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    for (int i = 0; i < plot->graphCount(); ++i)
        for (auto it = plot->graph(i)->data()->constBegin(); it != plot->graph(i)->data()->constEnd(); ++it) {
            x0 = any ? std::min(x0, it->key) : it->key;
            x1 = any ? std::max(x1, it->key) : it->key;
            y0 = any ? std::min(y0, it->value) : it->value;
            y1 = any ? std::max(y1, it->value) : it->value;
            any = true;
        }
    if (!any) return;
    setPaddedRange(plot->xAxis, x0, x1, 0.03, 2.0);
    setPaddedRange(plot->yAxis, y0, y1, 0.05);
    if (plot->isVisible()) plot->replot(QCustomPlot::rpQueuedReplot);  // hidden: replotted on resize
}

int plotted(const QCustomPlot* plot) {
    int n = 0;
    for (int i = 0; i < plot->graphCount(); ++i) n += plot->graph(i)->data()->size();
    return n;
}

}  // namespace

// ---- LogPane -------------------------------------------------------------------------------

LogPane::LogPane(QWidget* parent) : QWidget(parent) {
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    m_header = makeHeader(l, this);
    m_workloads = makeTable(6, this);
    l->addWidget(m_workloads, 2);
    m_plot = makeCostPlot(this);
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

void LogPane::setLabel(const QString& label) {
    m_label = label;
    fillHeader();
}

QString LogPane::headerText() const { return m_header->text(); }

void LogPane::fillHeader() {
    if (!m_hasLog) {
        m_header->setText(tr("No log open"));
        return;
    }
    const session::LogSnapshot& log = m_log;
    const QString prefix = m_label.isEmpty() ? QString() : m_label + QStringLiteral(": ");
    m_header->setToolTip(log.path);
    QPalette pal = palette();
    if (log.format == QLatin1String("error")) pal.setColor(QPalette::WindowText, QColor(192, 57, 43));
    m_header->setPalette(pal);
    if (log.format == QLatin1String("error")) {
        m_header->setText(prefix + tr("%1 cannot be shown: %2").arg(log.path, log.badLines.value(0).second));
        return;
    }
    m_header->setText(prefix + tr("%1 — %2 format, %3 lines, %4 records (%5 valid), %6 workloads, %7 unreadable lines")
                                   .arg(QFileInfo(log.path).fileName(), log.format)
                                   .arg(log.totalLines)
                                   .arg(log.records)
                                   .arg(log.valid)
                                   .arg(log.workloads.size())
                                   .arg(log.badLines.size()));
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
        auto* k = workloadItem(w.key);
        k->setData(Qt::UserRole, i);
        m_workloads->setItem(i, 0, k);
        m_workloads->setItem(i, 1, number(w.records, -1));
        m_workloads->setItem(i, 2, number(w.valid, -1));
        m_workloads->setItem(i, 3, w.bestMs >= 0 ? number(w.bestMs, 4) : none());
        m_workloads->setItem(i, 4, w.gflops >= 0 ? number(w.gflops, 2) : none());
        m_workloads->setItem(i, 5, item(w.target));
    }
    // Logs carry no DAGs, so FLOPs (and GFLOPS) are known only for some workloads, often none.
    m_workloads->setColumnHidden(4, std::none_of(log.workloads.cbegin(), log.workloads.cend(),
                                                 [](const session::LogWorkloadRow& w) { return w.gflops >= 0; }));
    m_errors->clearContents();
    // A log that could not be read has one message (in the header), not an unreadable line.
    const bool unreadable = log.format == QLatin1String("error");
    m_errors->setRowCount(int(log.errorCounts.size() + (log.badLines.isEmpty() || unreadable ? 0 : 1)));
    int r = 0;
    for (const auto& [e, n] : log.errorCounts) {
        m_errors->setItem(r, 0, item(models::MeasurementModel::errorName(e)));
        m_errors->setItem(r, 1, number(n, -1));
        ++r;
    }
    if (!log.badLines.isEmpty() && !unreadable) {
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
    fitCostPlot(m_plot);
}

int LogPane::plottedPoints() const { return plotted(m_plot); }

// ---- LogComparison -------------------------------------------------------------------------

LogComparison::LogComparison(QWidget* parent) : QWidget(parent) {
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    m_summary = makeHeader(l, this);
    auto* split = m_split = new QSplitter(Qt::Horizontal, this);
    m_table = makeTable(ColumnCount, split);
    m_plot = makeCostPlot(split);
    // The legend under the axes: inside, it would hide the first measurements or the best so far.
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foRowsFirst);  // one per line: side by side, they would set the width
    m_plot->legend->setBorderPen(Qt::NoPen);
    split->addWidget(m_table);
    split->addWidget(m_plot);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 1);
    l->addWidget(split, 1);
    connect(m_table, &QTableWidget::currentCellChanged, this, [this](int row) {
        const QTableWidgetItem* it = row >= 0 ? m_table->item(row, WorkloadColumn) : nullptr;
        plotMatch(it ? it->data(Qt::UserRole).toInt() : -1);
    });
    retranslate();
}

void LogComparison::retranslate() {
    m_table->setHorizontalHeaderLabels({tr("Workload"), tr("Records A"), tr("Best A (ms)"), tr("Records B"),
                                        tr("Best B (ms)"), tr("Speedup B/A")});
    if (QTableWidgetItem* h = m_table->horizontalHeaderItem(SpeedupColumn))
        h->setToolTip(tr("Best latency in A divided by best latency in B: above 1, log B found the faster schedule"));
    m_plot->xAxis->setLabel(tr("Record of the workload"));
    m_plot->yAxis->setLabel(tr("Cost (ms)"));
    fill();
}

void LogComparison::showEvent(QShowEvent* e) {
    // The table (shapes, two logs' numbers) gets two thirds of the width, once it is known.
    if (!m_sized) {
        m_sized = true;
        m_split->setSizes({2 * m_split->width() / 3, m_split->width() - 2 * m_split->width() / 3});
    }
    QWidget::showEvent(e);
}

void LogComparison::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

QString LogComparison::summaryText() const { return m_summary->text(); }
int LogComparison::plottedPoints() const { return plotted(m_plot); }

void LogComparison::setLogs(const session::LogSnapshot& a, const session::LogSnapshot& b) {
    m_a = a;
    m_b = b;
    m_matches = session::matchWorkloads(a, b);
    fill();
}

void LogComparison::fill() {
    const int current = m_table->currentRow();
    m_table->setSortingEnabled(false);
    m_table->clearContents();
    m_table->setRowCount(int(m_matches.size()));
    int both = 0, onlyA = 0, onlyB = 0, compared = 0;
    double logSum = 0;
    for (int i = 0; i < m_matches.size(); ++i) {
        const session::LogMatch& m = m_matches[i];
        const session::LogWorkloadRow* wa = m.a >= 0 ? &m_a.workloads[m.a] : nullptr;
        const session::LogWorkloadRow* wb = m.b >= 0 ? &m_b.workloads[m.b] : nullptr;
        both += wa && wb;
        onlyA += wa && !wb;
        onlyB += wb && !wa;
        auto* k = workloadItem(m.key);
        k->setData(Qt::UserRole, i);
        m_table->setItem(i, WorkloadColumn, k);
        m_table->setItem(i, RecordsAColumn, wa ? number(wa->records, -1) : none());
        m_table->setItem(i, BestAColumn, wa && wa->bestMs >= 0 ? number(wa->bestMs, 4) : none());
        m_table->setItem(i, RecordsBColumn, wb ? number(wb->records, -1) : none());
        m_table->setItem(i, BestBColumn, wb && wb->bestMs >= 0 ? number(wb->bestMs, 4) : none());
        if (wa && wb && wa->bestMs > 0 && wb->bestMs > 0) {
            const double speedup = wa->bestMs / wb->bestMs;
            auto* s = number(speedup, 2);
            s->setText(QString::number(speedup, 'f', 2) + QChar(0x00D7));
            if (speedup > 1.005) s->setForeground(QColor(20, 140, 60));
            if (speedup < 0.995) s->setForeground(QColor(200, 40, 40));
            m_table->setItem(i, SpeedupColumn, s);
            logSum += std::log(speedup);
            ++compared;
        } else {
            m_table->setItem(i, SpeedupColumn, none());
        }
    }
    // Sortable by any column, but first in the logs' order (A's workloads, then B's own).
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_table->setSortingEnabled(true);
    QString summary = tr("A: %1 — B: %2. %3 workloads in both logs, %4 only in A, %5 only in B")
                          .arg(QFileInfo(m_a.path).fileName(), QFileInfo(m_b.path).fileName())
                          .arg(both)
                          .arg(onlyA)
                          .arg(onlyB);
    if (compared > 0)
        summary += tr("; over the %n workload(s) with a valid record in both, B is %1× as fast as A (geometric mean)",
                      nullptr, compared)
                       .arg(std::exp(logSum / compared), 0, 'f', 3);
    m_summary->setText(summary + QLatin1Char('.'));
    if (!m_matches.isEmpty())
        m_table->setCurrentCell(std::clamp(current, 0, int(m_matches.size()) - 1), 0);  // plots through currentCellChanged
    else
        plotMatch(-1);
}

void LogComparison::plotMatch(int match) {
    m_plot->clearGraphs();
    const session::LogMatch m = match >= 0 && match < m_matches.size() ? m_matches[match] : session::LogMatch{};
    // Each log's measurements of the workload, in the order it measured them, and its best so far:
    // the two searches side by side on one axis.
    // A's points filled, B's hollow and its best dashed: where the logs hold the same records, both show.
    const auto add = [this](const session::LogSnapshot& log, int workload, const QColor& colour, const QString& name,
                            bool hollow) {
        auto* pts = m_plot->addGraph();
        pts->setLineStyle(QCPGraph::lsNone);
        pts->setScatterStyle(QCPScatterStyle(hollow ? QCPScatterStyle::ssCircle : QCPScatterStyle::ssDisc,
                                             colour.lighter(hollow ? 100 : 150), hollow ? 6 : 4));
        pts->removeFromLegend();
        auto* best = m_plot->addGraph();
        best->setPen(QPen(colour, 2, hollow ? Qt::DashLine : Qt::SolidLine));
        best->setLineStyle(QCPGraph::lsStepLeft);
        best->setName(name);
        if (workload < 0) return;
        int n = 0;
        double bestSoFar = -1;
        for (const auto& p : log.points) {
            if (p.workload != workload) continue;
            ++n;
            if (p.costMs <= 0) continue;
            pts->addData(n, p.costMs);
            bestSoFar = bestSoFar < 0 ? p.costMs : std::min(bestSoFar, p.costMs);
            best->addData(n, bestSoFar);
        }
    };
    add(m_a, m.a, QColor(30, 110, 200), tr("A: %1").arg(QFileInfo(m_a.path).fileName()), false);
    add(m_b, m.b, QColor(220, 120, 20), tr("B: %1").arg(QFileInfo(m_b.path).fileName()), true);
    fitCostPlot(m_plot);
}

// ---- LogInspector --------------------------------------------------------------------------

LogInspector::LogInspector(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("LogInspector"));
    resize(fittedWindowSize(this, QSize(1300, 800)));
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
    // The comparison on top when there is one, the two logs below it.
    auto* vsplit = new QSplitter(Qt::Vertical, this);
    m_comparison = new LogComparison(vsplit);
    m_comparison->hide();
    auto* split = new QSplitter(Qt::Horizontal, vsplit);
    m_left = new LogPane(split);
    m_right = new LogPane(split);
    m_right->hide();
    vsplit->addWidget(m_comparison);
    vsplit->addWidget(split);
    vsplit->setStretchFactor(0, 3);
    vsplit->setStretchFactor(1, 2);
    vsplit->setSizes({3000, 2000});
    l->addWidget(vsplit, 1);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
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
        QString out = QFileDialog::getSaveFileName(this, tr("Distill into"), suggestedDistillPath());
        if (out.isEmpty()) return;
        m_status->setText(session::distillLog(in, out));
    });
    retranslate();
}

void LogInspector::retranslate() {
    setWindowTitle(tr("TuneBench — Log Inspector"));
    m_open->setText(tr("Open log…"));
    m_compare->setText(tr("Compare with…"));
    m_compare->setToolTip(tr("Open a second log and compare the two workload by workload"));
    m_distill->setText(tr("Distill…"));
    m_distill->setToolTip(tr("Keep the best record of every workload (TVM's distill / pick_best)"));
}

void LogInspector::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

QString LogInspector::statusText() const { return m_status->text(); }

QString LogInspector::suggestedDistillPath() const {
    const QString name = QFileInfo(m_left->log().path).completeBaseName() + QStringLiteral(".best.json");
    for (const QString& dir : {m_outputFolder, QDir::currentPath(), QDir::homePath()}) {
        const QFileInfo fi(dir);
        if (!dir.isEmpty() && fi.isDir() && fi.isWritable()) return QDir(fi.absoluteFilePath()).filePath(name);
    }
    return name;
}

void LogInspector::updateComparison() {
    const bool both = m_rightLoaded && m_left->log().format != QLatin1String("error") &&
                      m_right->log().format != QLatin1String("error") && !m_left->log().path.isEmpty();
    m_left->setLabel(m_rightLoaded ? QStringLiteral("A") : QString());
    m_right->setLabel(m_rightLoaded ? QStringLiteral("B") : QString());
    if (both) m_comparison->setLogs(m_left->log(), m_right->log());
    m_comparison->setVisible(both);
}

void LogInspector::openLog(const QString& path, bool compare) {
    m_status->setText(tr("Reading %1…").arg(path));
    session::loadLogAsync(path, this, [this, compare](const session::LogSnapshot& s) {
        LogPane* pane = compare ? m_right : m_left;
        pane->setLog(s);
        pane->show();
        if (compare) m_rightLoaded = true;
        updateComparison();
        m_status->setText(s.format == QLatin1String("error") ? tr("%1: %2").arg(s.path, s.badLines.value(0).second)
                                                             : tr("Read %1").arg(s.path));
        Q_EMIT logLoaded(s.path);
    });
}

}  // namespace tb::widgets
