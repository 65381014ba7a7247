// SPDX-License-Identifier: Apache-2.0
#include "widgets/latencychart.h"

#include <QComboBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTextStream>
#include <QVBoxLayout>

#include "widgets/chartaxes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tb::widgets {

namespace {

QList<double> ranks(const QList<double>& v) {
    QList<int> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&v](int a, int b) { return v[a] < v[b]; });
    QList<double> r(v.size());
    for (qsizetype i = 0; i < order.size();) {
        qsizetype j = i;
        while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
        const double avg = (double(i) + double(j)) / 2 + 1;  // ties share their average rank
        for (qsizetype k = i; k <= j; ++k) r[order[k]] = avg;
        i = j + 1;
    }
    return r;
}

// A value that does not exist (yet) is an empty CSV field, not a sentinel number.
QString csvNumber(double v, bool exists) { return exists ? QString::number(v, 'g', 10) : QString(); }

}  // namespace

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
    m_stats = new QLabel(this);
    m_stats->setWordWrap(true);
    m_stats->setContentsMargins(4, 0, 4, 0);
    m_stats->hide();
    layout->addWidget(m_stats);
    m_plot = new QCustomPlot(this);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->setMinimumHeight(200);
    // The legend under the axes, one entry per line: inside them it hid the first points.
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foRowsFirst);
    layout->addWidget(m_plot, 1);
    // Latencies and throughputs are never negative: dragging or zooming stops at zero.
    connect(m_plot->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& r) {
        if (r.lower >= 0) return;
        const QSignalBlocker block(m_plot->yAxis);
        m_plot->yAxis->setRange(0, std::max(r.upper - r.lower, 1e-9));
    });
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
    m_roundOf.clear();
    m_rounds = 0;
    m_measuresOfTask.clear();
    m_resumedAtTrial = -1;
    rebuild();
}

void LatencyChart::addLatencyPoint(const session::LatencyPoint& p) {
    m_latency.append(p);
    if (m_view == View::TotalVsTrials || m_view == View::TotalVsTime) rebuild();
}

void LatencyChart::addMeasurements(const QList<session::MeasureRow>& rows) {
    if (rows.isEmpty()) return;
    const int round = m_rounds++;
    for (const auto& r : rows) {
        m_measuresOfTask[r.taskId].append(int(m_measures.size()));
        m_measures.append(r);
        m_roundOf.append(round);
    }
    if (m_view != View::TotalVsTrials && m_view != View::TotalVsTime) rebuild();
}

void LatencyChart::addHistory(const QList<session::MeasureRow>& rows, const QList<session::LatencyPoint>& points) {
    m_measures = rows + m_measures;
    // The earlier run's rounds carry no predictions: one round id for all of them is enough.
    QList<int> rounds(rows.size(), -1);
    m_roundOf = rounds + m_roundOf;
    m_latency = points + m_latency;
    m_resumedAtTrial = points.isEmpty() ? int(rows.size()) : points.last().trials;
    reindex();
    rebuild();
}

void LatencyChart::reindex() {
    m_measuresOfTask.clear();
    for (int i = 0; i < m_measures.size(); ++i) m_measuresOfTask[m_measures[i].taskId].append(i);
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

double LatencyChart::spearman(const QList<double>& x, const QList<double>& y) {
    const qsizetype n = std::min(x.size(), y.size());
    if (n < 2) return std::numeric_limits<double>::quiet_NaN();
    const QList<double> rx = ranks(x.mid(0, n)), ry = ranks(y.mid(0, n));
    const double mean = (double(n) + 1) / 2;
    double sxy = 0, sxx = 0, syy = 0;
    for (qsizetype i = 0; i < n; ++i) {
        sxy += (rx[i] - mean) * (ry[i] - mean);
        sxx += (rx[i] - mean) * (rx[i] - mean);
        syy += (ry[i] - mean) * (ry[i] - mean);
    }
    if (sxx <= 0 || syy <= 0) return std::numeric_limits<double>::quiet_NaN();
    return sxy / std::sqrt(sxx * syy);
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

void LatencyChart::applyPalette() { applyChartPalette(m_plot, palette()); }

void LatencyChart::rebuild() {
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_plot->legend->setVisible(false);
    m_statsText.clear();
    auto* g = m_plot->addGraph();
    const QColor accent(30, 110, 200), gray(150, 150, 150);
    g->setPen(QPen(accent, 2));
    const bool timeAxis = m_view == View::TotalVsTime;
    m_plot->xAxis->setTicker(timeAxis || m_view == View::PredictedVsMeasured
                                 ? QSharedPointer<QCPAxisTicker>(new QCPAxisTicker)
                                 : QSharedPointer<QCPAxisTicker>(new IntegerAxisTicker));
    switch (m_view) {
        case View::TotalVsTrials:
        case View::TotalVsTime: {
            m_plot->xAxis->setLabel(timeAxis ? tr("Wall time (s)") : tr("Trials"));
            m_plot->yAxis->setLabel(tr("Estimated total latency (ms)"));
            g->setLineStyle(QCPGraph::lsStepLeft);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
            g->setName(tr("Estimated total latency"));
            // Until every task has a cost TVM's estimate does not exist: show the sum over the
            // tasks measured so far, dashed, so the warm-up rounds are not a blank chart.
            auto* partial = m_plot->addGraph();
            partial->setPen(QPen(gray, 1.5, Qt::DashLine));
            partial->setLineStyle(QCPGraph::lsStepLeft);
            partial->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, gray, 5));
            int lastTasks = 0, total = 0;
            for (const auto& p : m_latency) {
                const double x = timeAxis ? p.elapsedS : p.trials;
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
                if (g->data()->isEmpty()) m_plot->legend->removeItem(m_plot->legend->itemWithPlottable(g));
            }
            if (m_resumedAtTrial >= 0) {
                // Where this run took over from the log it resumed (time 0 = this run's start).
                auto* line = new QCPItemStraightLine(m_plot);
                line->setPen(QPen(QColor(110, 110, 110), 1, Qt::DashDotLine));
                const double x = timeAxis ? 0.0 : double(m_resumedAtTrial);
                line->point1->setCoords(x, 0);
                line->point2->setCoords(x, 1);
                auto* label = new QCPItemText(m_plot);
                label->position->setTypeX(QCPItemPosition::ptPlotCoords);
                label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
                label->position->setCoords(x, 0.02);
                label->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
                label->setPadding(QMargins(4, 0, 0, 0));
                label->setText(tr("resumed"));
                label->setColor(gray);
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
            // Earlier rounds in gray, the last round (the model's latest ranking) in colour. A score
            // of exactly 0 is a candidate picked without one (TVM's ε-greedy random picks, the
            // seeded default schedule): it has no place on the score axis and no rank.
            g->setLineStyle(QCPGraph::lsNone);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, gray, 4));
            auto* last = m_plot->addGraph();
            last->setLineStyle(QCPGraph::lsNone);
            last->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, accent, 6));
            const QList<int>& idxs = m_measuresOfTask.value(m_selectedTask);
            int lastRound = -1;
            for (int idx : idxs)
                if (!m_measures[idx].fromLog) lastRound = std::max(lastRound, m_roundOf[idx]);
            QList<double> lastXs, lastYs;
            QHash<int, QPair<QList<double>, QList<double>>> byRound;  // scores and throughputs per round
            int unscored = 0;
            for (int idx : idxs) {
                const auto& r = m_measures[idx];
                if (r.errorNo != 0 || r.fromLog) continue;  // read back from a log: no prediction
                if (r.predicted == 0) {
                    unscored += m_roundOf[idx] == lastRound;
                    continue;
                }
                byRound[m_roundOf[idx]].first.append(r.predicted);
                byRound[m_roundOf[idx]].second.append(r.gflops);
                if (m_roundOf[idx] == lastRound) {
                    lastXs.append(r.predicted);
                    lastYs.append(r.gflops);
                } else {
                    g->addData(r.predicted, r.gflops);
                }
            }
            last->setData(QVector<double>(lastXs.begin(), lastXs.end()), QVector<double>(lastYs.begin(), lastYs.end()));
            if (lastRound >= 0) {
                const int n = int(lastXs.size());
                const double rho = spearman(lastXs, lastYs);
                const bool sameScore = n > 1 && std::all_of(lastXs.cbegin(), lastXs.cend(), [&](double v) { return v == lastXs.first(); });
                if (n == 0)
                    m_statsText = tr("Last round: no candidate has a cost model score");
                else if (n < 2)
                    m_statsText = tr("Last round: %n scored candidate(s), too few to rank", nullptr, n);
                else if (sameScore)
                    m_statsText = tr("Last round: the cost model gave all %n candidate(s) the same score (it has not "
                                     "learned yet), so there is no ranking to compare",
                                     nullptr, n);
                else if (std::isnan(rho))
                    m_statsText = tr("Last round: all %n candidate(s) measured the same: no ranking to compare", nullptr, n);
                else
                    m_statsText = tr("Last round: Spearman ρ = %1 over %n candidate(s)", nullptr, n).arg(rho, 0, 'f', 2);
                // Scores of different rounds come from different models: average the rounds' ρ.
                double sum = 0;
                int rounds = 0;
                for (auto it = byRound.cbegin(); it != byRound.cend(); ++it) {
                    const double r = spearman(it->first, it->second);
                    if (std::isnan(r)) continue;
                    sum += r;
                    ++rounds;
                }
                if (rounds > 1) m_statsText += tr("; mean over %n round(s): ρ = %1", nullptr, rounds).arg(sum / rounds, 0, 'f', 2);
                if (unscored > 0)
                    m_statsText += tr("; %n picked without a score (ε-greedy random pick or seed), not shown", nullptr, unscored);
            }
            break;
        }
    }

    // Ranges from the data: a margin so the first and last points are not cut by the axes, whole
    // numbers of trials, and no negative latency or throughput.
    bool any = false;
    double xmin = 0, xmax = 0, ymax = 0;
    // Scores are only comparable within a round (the model is retrained after each): the score
    // axis spans the last round; earlier rounds are there when zoomed out.
    const int firstRangeGraph = m_view == View::PredictedVsMeasured && !m_plot->graph(1)->data()->isEmpty() ? 1 : 0;
    double yAll = 0;
    for (int i = 0; i < m_plot->graphCount(); ++i)
        for (auto it = m_plot->graph(i)->data()->constBegin(); it != m_plot->graph(i)->data()->constEnd(); ++it)
            yAll = std::max(yAll, it->value);
    for (int i = firstRangeGraph; i < m_plot->graphCount(); ++i) {
        for (auto it = m_plot->graph(i)->data()->constBegin(); it != m_plot->graph(i)->data()->constEnd(); ++it) {
            xmin = any ? std::min(xmin, it->key) : it->key;
            xmax = any ? std::max(xmax, it->key) : it->key;
            ymax = any ? std::max(ymax, it->value) : it->value;
            any = true;
        }
    }
    if (!any) {
        m_plot->xAxis->setRange(0, 1);
        m_plot->yAxis->setRange(0, 1);
        auto* note = new QCPItemText(m_plot);
        note->position->setType(QCPItemPosition::ptAxisRectRatio);
        note->position->setCoords(0.5, 0.5);
        note->setText(m_view == View::TotalVsTrials || m_view == View::TotalVsTime || m_selectedTask >= 0
                          ? tr("Waiting for measurements…")
                          : tr("Select a task in the table"));
        note->setColor(palette().color(QPalette::PlaceholderText));
    } else {
        const bool scores = m_view == View::PredictedVsMeasured;
        // Scores in one round may all be 0, or all within 1e-4 of 0.9999: zoom to what is there.
        const double minSpan = scores ? std::max(1e-6, 1e-3 * std::abs(xmax)) : timeAxis ? 2.0 : 1.0;
        setPaddedRange(m_plot->xAxis, xmin, xmax, 0.04, minSpan);
        ymax = std::max(ymax, yAll);
        m_plot->yAxis->setRange(0, ymax > 0 ? ymax * 1.1 : 1.0);
    }
    m_stats->setText(m_statsText);
    m_stats->setVisible(!m_statsText.isEmpty());
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
                out << p.trials << ',' << p.elapsedS << ',' << csvNumber(p.estimatedMs, p.estimatedMs >= 0) << ','
                    << csvNumber(p.partialMs, p.partialMs >= 0) << ',' << p.tasksWithCost << ',' << p.tasks << '\n';
            break;
        default:
            out << "task,trial,cost_ms,gflops,error_no,predicted\n";
            for (int idx : m_measuresOfTask.value(m_selectedTask)) {
                const auto& r = m_measures[idx];
                out << r.taskId << ',' << r.trial << ',' << csvNumber(r.costMs, r.errorNo == 0) << ','
                    << csvNumber(r.gflops, r.errorNo == 0) << ',' << r.errorNo << ','
                    << csvNumber(r.predicted, !r.fromLog) << '\n';
            }
    }
    return out.status() == QTextStream::Ok;
}

bool LatencyChart::exportPng(const QString& path, int width, int height) {
    m_plot->replot(QCustomPlot::rpImmediateRefresh);
    return m_plot->savePng(path, width, height);
}

}  // namespace tb::widgets
