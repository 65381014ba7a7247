// SPDX-License-Identifier: Apache-2.0
#include "widgets/latencychart.h"

#include <QComboBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QPushButton>
#include <QTextStream>
#include <QVBoxLayout>

#include "widgets/qcustomplot_include.h"

#include <algorithm>

namespace tb::widgets {

LatencyChart::LatencyChart(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    m_viewBox = new QComboBox(this);
    for (int i = 0; i < 5; ++i) m_viewBox->addItem(QString());
    bar->addWidget(m_viewBox, 1);
    m_pngButton = new QPushButton(this);
    m_csvButton = new QPushButton(this);
    bar->addWidget(m_pngButton);
    bar->addWidget(m_csvButton);
    layout->addLayout(bar);
    m_plot = new QCustomPlot(this);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->setMinimumHeight(200);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    layout->addWidget(m_plot, 1);
    connect(m_viewBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) setView(View(i));
    });
    connect(m_pngButton, &QPushButton::clicked, this, [this] {
        QString f = QFileDialog::getSaveFileName(this, tr("Export chart"), QStringLiteral("chart.png"), tr("PNG images (*.png)"));
        if (!f.isEmpty()) exportPng(f);
    });
    connect(m_csvButton, &QPushButton::clicked, this, [this] {
        QString f = QFileDialog::getSaveFileName(this, tr("Export data"), QStringLiteral("chart.csv"), tr("CSV files (*.csv)"));
        if (!f.isEmpty()) exportCsv(f);
    });
    applyPalette();
    retranslate();
}

void LatencyChart::retranslate() {
    m_viewBox->setItemText(0, tr("Estimated total latency vs trials"));
    m_viewBox->setItemText(1, tr("Estimated total latency vs time"));
    m_viewBox->setItemText(2, tr("Selected task: best GFLOPS vs trials"));
    m_viewBox->setItemText(3, tr("Selected task: every measured candidate"));
    m_viewBox->setItemText(4, tr("Selected task: predicted vs measured"));
    m_pngButton->setText(tr("Export PNG…"));
    m_csvButton->setText(tr("Export CSV…"));
    rebuild();  // axis labels
}

void LatencyChart::setView(View v) {
    m_view = v;
    if (m_viewBox->currentIndex() != int(v)) m_viewBox->setCurrentIndex(int(v));
    rebuild();
}

void LatencyChart::clear() {
    m_latency.clear();
    m_measures.clear();
    m_measuresOfTask.clear();
    rebuild();
}

void LatencyChart::addLatencyPoint(const session::LatencyPoint& p) {
    m_latency.append(p);
    if (m_view == View::TotalVsTrials || m_view == View::TotalVsTime) rebuild();
}

void LatencyChart::addMeasurements(const QList<session::MeasureRow>& rows) {
    for (const auto& r : rows) {
        m_measuresOfTask[r.taskId].append(int(m_measures.size()));
        m_measures.append(r);
    }
    if (m_view != View::TotalVsTrials && m_view != View::TotalVsTime) rebuild();
}

void LatencyChart::setSelectedTask(int taskId) {
    m_selectedTask = taskId;
    rebuild();
}

int LatencyChart::pointCount() const {
    int n = 0;
    for (int i = 0; i < m_plot->graphCount(); ++i) n += m_plot->graph(i)->data()->size();
    return n;
}

void LatencyChart::changeEvent(QEvent* e) {
    if (e->type() == QEvent::PaletteChange) {
        applyPalette();
        rebuild();
    } else if (e->type() == QEvent::LanguageChange) {
        retranslate();
    }
    QWidget::changeEvent(e);
}

void LatencyChart::applyPalette() {
    const QPalette p = palette();
    m_plot->setBackground(p.color(QPalette::Base));
    for (QCPAxis* a : {m_plot->xAxis, m_plot->yAxis}) {
        a->setBasePen(QPen(p.color(QPalette::Text)));
        a->setTickPen(QPen(p.color(QPalette::Text)));
        a->setSubTickPen(QPen(p.color(QPalette::Text)));
        a->setTickLabelColor(p.color(QPalette::Text));
        a->setLabelColor(p.color(QPalette::Text));
    }
    QColor legendBack = p.color(QPalette::Base);
    legendBack.setAlpha(220);
    m_plot->legend->setBrush(legendBack);
    m_plot->legend->setTextColor(p.color(QPalette::Text));
    m_plot->legend->setBorderPen(QPen(p.color(QPalette::Mid)));
}

void LatencyChart::rebuild() {
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_plot->legend->setVisible(false);
    auto* g = m_plot->addGraph();
    const QColor accent(30, 110, 200);
    g->setPen(QPen(accent, 2));
    switch (m_view) {
        case View::TotalVsTrials:
        case View::TotalVsTime: {
            bool time = m_view == View::TotalVsTime;
            m_plot->xAxis->setLabel(time ? tr("Wall time (s)") : tr("Trials"));
            m_plot->yAxis->setLabel(tr("Estimated total latency (ms)"));
            g->setLineStyle(QCPGraph::lsStepLeft);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
            g->setName(tr("Estimated total latency"));
            // Until every task has a cost TVM's estimate does not exist: show the sum over the
            // tasks measured so far, dashed, so the warm-up rounds are not a blank chart.
            auto* partial = m_plot->addGraph();
            partial->setPen(QPen(QColor(140, 140, 140), 1.5, Qt::DashLine));
            partial->setLineStyle(QCPGraph::lsStepLeft);
            partial->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(140, 140, 140), 4));
            int lastTasks = 0, total = 0;
            for (const auto& p : m_latency) {
                const double x = time ? p.elapsedS : p.trials;
                if (p.estimatedMs >= 0)
                    g->addData(x, p.estimatedMs);
                else if (p.partialMs >= 0) {
                    partial->addData(x, p.partialMs);
                    lastTasks = p.tasksWithCost;
                    total = p.tasks;
                }
            }
            const bool warmingUp = g->data()->isEmpty();
            partial->setName(warmingUp ? tr("Tasks measured so far: %1 of %2").arg(lastTasks).arg(total)
                                       : tr("Warm-up: measured tasks only"));
            if (!partial->data()->isEmpty()) {
                m_plot->legend->setVisible(true);
                // The warm-up curve rises from the bottom left, the estimate then falls to the right
                // well above zero: top left while warming up, bottom right afterwards.
                m_plot->axisRect()->insetLayout()->setInsetAlignment(
                    0, warmingUp ? (Qt::AlignTop | Qt::AlignLeft) : (Qt::AlignBottom | Qt::AlignRight));
                if (g->data()->isEmpty()) m_plot->legend->removeItem(m_plot->legend->itemWithPlottable(g));
            }
            break;
        }
        case View::TaskGflops: {
            m_plot->xAxis->setLabel(tr("Trials of the task"));
            m_plot->yAxis->setLabel(tr("Best GFLOPS"));
            g->setLineStyle(QCPGraph::lsStepLeft);
            double best = 0;
            int n = 0;
            for (int idx : m_measuresOfTask.value(m_selectedTask)) {
                const auto& r = m_measures[idx];
                ++n;
                if (r.errorNo == 0) best = std::max(best, r.gflops);
                if (best > 0) g->addData(n, best);
            }
            break;
        }
        case View::Candidates: {
            m_plot->xAxis->setLabel(tr("Trial"));
            m_plot->yAxis->setLabel(tr("GFLOPS"));
            g->setLineStyle(QCPGraph::lsNone);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, accent, 4));
            auto* err = m_plot->addGraph();
            err->setLineStyle(QCPGraph::lsNone);
            err->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QColor(210, 40, 40), 6));
            int n = 0;
            for (int idx : m_measuresOfTask.value(m_selectedTask)) {
                const auto& r = m_measures[idx];
                ++n;
                if (r.errorNo == 0)
                    g->addData(n, r.gflops);
                else
                    err->addData(n, 0);
            }
            break;
        }
        case View::PredictedVsMeasured: {
            m_plot->xAxis->setLabel(tr("Cost model score"));
            m_plot->yAxis->setLabel(tr("Measured GFLOPS"));
            g->setLineStyle(QCPGraph::lsNone);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, accent, 4));
            QVector<double> xs, ys;
            for (int idx : m_measuresOfTask.value(m_selectedTask)) {
                const auto& r = m_measures[idx];
                if (r.errorNo != 0) continue;
                xs.append(r.predicted);
                ys.append(r.gflops);
            }
            g->setData(xs, ys, false);
            break;
        }
    }
    m_plot->rescaleAxes();
    if (pointCount() == 0) {
        auto* note = new QCPItemText(m_plot);
        note->position->setType(QCPItemPosition::ptAxisRectRatio);
        note->position->setCoords(0.5, 0.5);
        note->setText(m_view == View::TotalVsTrials || m_view == View::TotalVsTime || m_selectedTask >= 0
                          ? tr("Waiting for measurements…")
                          : tr("Select a task in the table"));
        note->setColor(palette().color(QPalette::PlaceholderText));
    } else {
        // Some air above the curve, and latencies start at zero.
        const QCPRange y = m_plot->yAxis->range();
        const double lower = std::min(0.0, y.lower);
        m_plot->yAxis->setRange(lower, y.upper + 0.08 * std::max(1e-9, y.upper - lower));
    }
    if (m_plot->isVisible()) m_plot->replot(QCustomPlot::rpQueuedReplot);  // hidden: replotted on resize
}

bool LatencyChart::exportCsv(const QString& path) const {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) return false;
    QTextStream out(&f);
    switch (m_view) {
        case View::TotalVsTrials:
        case View::TotalVsTime:
            out << "trials,elapsed_s,estimated_total_latency_ms,measured_tasks_latency_ms,measured_tasks,tasks\n";
            for (const auto& p : m_latency)
                out << p.trials << ',' << p.elapsedS << ',' << p.estimatedMs << ',' << p.partialMs << ','
                    << p.tasksWithCost << ',' << p.tasks << '\n';
            break;
        default:
            out << "task,trial,cost_ms,gflops,error_no,predicted\n";
            for (int idx : m_measuresOfTask.value(m_selectedTask)) {
                const auto& r = m_measures[idx];
                out << r.taskId << ',' << r.trial << ',' << r.costMs << ',' << r.gflops << ',' << r.errorNo << ','
                    << r.predicted << '\n';
            }
    }
    return out.status() == QTextStream::Ok;
}

bool LatencyChart::exportPng(const QString& path, int width, int height) {
    m_plot->replot(QCustomPlot::rpImmediateRefresh);
    return m_plot->savePng(path, width, height);
}

}  // namespace tb::widgets
