// SPDX-License-Identifier: Apache-2.0
#include "widgets/rooflineview.h"

#include <QEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "widgets/chartaxes.h"

namespace tb::widgets {

namespace {

constexpr int kLabelled = 6;  // kernels numbered on the plot and named in its key; the rest have tooltips only

const QColor kCompute(30, 110, 200), kMemory(220, 120, 20), kUnknown(150, 150, 150);

QColor boundColour(const QString& bound) {
    return bound == QLatin1String("compute") ? kCompute : bound == QLatin1String("memory") ? kMemory : kUnknown;
}

bool drawable(const session::RooflineKernel& k) { return k.intensity > 0 && k.gflops > 0; }

// "fused_nn_conv2d_add_nn_relu" as "conv2d_add_relu": without what every kernel's name has.
QString shortName(QString name) {
    for (const char* prefix : {"tvmgen_default_", "fused_"})
        if (name.startsWith(QLatin1String(prefix))) name.remove(0, qsizetype(qstrlen(prefix)));
    return name.remove(QStringLiteral("nn_"));
}

}  // namespace

RooflineView::RooflineView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setContentsMargins(4, 2, 4, 2);
    layout->addWidget(m_summary);
    m_plot = new QCustomPlot(this);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->setMinimumHeight(200);
    m_plot->setMouseTracking(true);
    m_plot->setAutoAddPlottableToLegend(false);  // only the two colours have an entry
    // The legend in one row under the axes: kernels served from cache sit above the bandwidth roof,
    // so no corner inside the axes is sure to be free.
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    for (QCPAxis* a : {m_plot->xAxis, m_plot->yAxis}) {
        a->setScaleType(QCPAxis::stLogarithmic);
        a->setTicker(QSharedPointer<QCPAxisTicker>(new LogAxisTicker));
    }
    layout->addWidget(m_plot, 1);
    connect(m_plot, &QCustomPlot::mouseMove, this, &RooflineView::showTip);
    applyChartPalette(m_plot, palette());
    retranslate();
}

void RooflineView::setRoofline(const session::RooflineSnapshot& roofline) {
    m_data = roofline;
    rebuild();
}

void RooflineView::retranslate() {
    m_plot->xAxis->setLabel(tr("Arithmetic intensity (FLOP/byte)"));
    m_plot->yAxis->setLabel(tr("GFLOP/s"));
    rebuild();
}

void RooflineView::changeEvent(QEvent* e) {
    if (e->type() == QEvent::PaletteChange) {
        applyChartPalette(m_plot, palette());
        rebuild();
    } else if (e->type() == QEvent::LanguageChange) {
        retranslate();
    }
    QWidget::changeEvent(e);
}

QString RooflineView::summaryText() const {
    if (m_data.kernels.isEmpty() || m_data.peakGflops <= 0 || m_data.bandwidthGBs <= 0)
        return tr("Compile & benchmark a network on this machine's CPU to see every kernel against its roofline.");
    int compute = 0, memory = 0;
    for (const auto& k : m_data.kernels) {
        compute += k.bound == QLatin1String("compute") ? 1 : 0;
        memory += k.bound == QLatin1String("memory") ? 1 : 0;
    }
    const QString busy =
        m_data.quiet ? QString() : QStringLiteral(" ") + tr("The roofs were measured on a busy machine and may be low.");
    return tr("Measured roofs at %1 threads: FP32 FMA peak %2 GFLOP/s, triad bandwidth %3 GB/s (ridge %4 FLOP/byte). "
              "%5 kernels: %6 compute-bound, %7 memory-bound. Bytes: inputs + weights + output once per call.")
        .arg(m_data.threads)
        .arg(m_data.peakGflops, 0, 'f', 1)
        .arg(m_data.bandwidthGBs, 0, 'f', 1)
        .arg(m_data.peakGflops / m_data.bandwidthGBs, 0, 'f', 2)
        .arg(m_data.kernels.size())
        .arg(compute)
        .arg(memory) +
           busy;
}

QString RooflineView::kernelText(int index) const {
    if (index < 0 || index >= m_data.kernels.size()) return {};
    const session::RooflineKernel& k = m_data.kernels[index];
    const QString verdict =
        k.bound == QLatin1String("compute")  ? tr("compute-bound at %1% of peak").arg(100 * k.fraction, 0, 'f', 0)
        : k.bound == QLatin1String("memory")
            ? (k.fraction > 1 ? tr("memory-bound at %1% of bandwidth (in cache)") : tr("memory-bound at %1% of bandwidth"))
                  .arg(100 * k.fraction, 0, 'f', 0)
                                             : tr("bound unknown");
    const double gbs = k.ms > 0 ? k.bytes / (k.ms * 1e-3) / 1e9 : 0;
    return tr("%1 → %10\n%2 call(s), %3 ms each\n%4 GFLOP/s, %5 GB/s, %6 FLOP/byte (%7 MFLOP, %8 MB)\n%9")
        .arg(k.name)
        .arg(k.calls)
        .arg(k.ms, 0, 'f', 4)
        .arg(k.gflops, 0, 'f', 2)
        .arg(gbs, 0, 'f', 2)
        .arg(k.intensity, 0, 'f', 2)
        .arg(k.flop / 1e6, 0, 'f', 2)
        .arg(k.bytes / 1e6, 0, 'f', 3)
        .arg(verdict, k.shape);
}

void RooflineView::rebuild() {
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_roof = nullptr;
    m_pointGraphs.clear();
    m_kernelOfGraph.clear();
    m_labels.clear();
    m_plot->legend->setVisible(false);
    m_summary->setText(summaryText());
    const double peak = m_data.peakGflops, bw = m_data.bandwidthGBs;
    if (peak <= 0 || bw <= 0) {
        m_plot->replot(QCustomPlot::rpQueuedRefresh);
        return;
    }
    const double ridge = peak / bw;
    double xLo = ridge, xHi = ridge, yLo = peak;
    double totalMs = 0;
    for (const auto& k : m_data.kernels) {
        totalMs += k.ms * k.calls;
        if (!drawable(k)) continue;
        xLo = std::min(xLo, k.intensity);
        xHi = std::max(xHi, k.intensity);
        yLo = std::min(yLo, k.gflops);
    }
    xLo /= 3;
    xHi *= 3;
    yLo = std::min(yLo, xLo * bw) / 2;

    const QColor text = palette().color(QPalette::Text);
    m_roof = m_plot->addGraph();
    m_roof->setPen(QPen(text, 2));
    m_roof->setData({xLo, ridge, xHi}, {xLo * bw, peak, peak}, true);
    auto roofLabel = [&](const QString& s, double x, double y, Qt::Alignment align) {
        auto* t = new QCPItemText(m_plot);
        t->setText(s);
        t->setColor(text);
        t->setPositionAlignment(align);
        t->position->setCoords(x, y);
    };
    // Left of the ridge, above the peak: no kernel runs there (the numbers of the compute-bound ones
    // stack up right of the ridge; the y range reaches 6x the peak).
    roofLabel(tr("peak %1 GFLOP/s").arg(peak, 0, 'f', 1), ridge / 1.15, peak * 1.15, Qt::AlignRight | Qt::AlignBottom);
    // Above the slope, a little right of its start (log-log: x * bw is on the line).
    const double xs = xLo * std::pow(ridge / xLo, 0.08);
    roofLabel(tr("%1 GB/s").arg(bw, 0, 'f', 1), xs, xs * bw * 1.3, Qt::AlignLeft | Qt::AlignBottom);

    // What the colours mean.
    for (const auto& [colour, name] : {std::pair{kCompute, tr("compute-bound")}, std::pair{kMemory, tr("memory-bound")}}) {
        QCPGraph* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour.darker(130), colour, 8));
        g->setName(name);
        g->addToLegend();
    }
    m_plot->legend->setVisible(true);

    // Labels for the kernels that take the most time.
    QList<int> order(m_data.kernels.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [this](int a, int b) {
        return m_data.kernels[a].ms * m_data.kernels[a].calls > m_data.kernels[b].ms * m_data.kernels[b].calls;
    });
    QList<int> labelled;
    for (int i : order)
        if (labelled.size() < kLabelled && drawable(m_data.kernels[i])) labelled.append(i);

    for (int i = 0; i < m_data.kernels.size(); ++i) {
        const session::RooflineKernel& k = m_data.kernels[i];
        if (!drawable(k)) continue;
        const QColor c = boundColour(k.bound);
        const double share = totalMs > 0 ? k.ms * k.calls / totalMs : 0;
        QCPGraph* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        QColor fill = c;
        fill.setAlpha(170);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c.darker(130), fill, 6 + 20 * std::sqrt(share)));
        g->setData({k.intensity}, {k.gflops}, true);
        m_pointGraphs.append(g);
        m_kernelOfGraph.append(i);
    }
    // The key of the numbers, in the bottom right corner (high intensity at low speed: rarely a point).
    for (qsizetype r = 0; r < labelled.size(); ++r) {
        const session::RooflineKernel& k = m_data.kernels[labelled[r]];
        m_labels.append(tr("%1  %2 %3 (%4% of the time)")
                            .arg(r + 1)
                            .arg(shortName(k.name), k.shape)
                            .arg(totalMs > 0 ? 100 * k.ms * k.calls / totalMs : 0, 0, 'f', 0));
    }
    if (!m_labels.isEmpty()) {
        auto* key = new QCPItemText(m_plot);
        key->setText(m_labels.join(QLatin1Char('\n')));
        key->setTextAlignment(Qt::AlignLeft);
        QFont small = font();
        small.setPointSizeF(small.pointSizeF() * 0.85);
        key->setFont(small);
        key->setColor(text);
        QColor back = palette().color(QPalette::Base);
        back.setAlpha(220);
        key->setBrush(back);
        key->setPen(QPen(palette().color(QPalette::Mid)));
        key->setPadding(QMargins(4, 2, 4, 2));
        key->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        key->position->setType(QCPItemPosition::ptAxisRectRatio);
        key->position->setCoords(0.99, 0.97);
    }
    setPaddedRange(m_plot->xAxis, xLo, xHi, 0.0);
    setPaddedRange(m_plot->yAxis, yLo, peak * 6, 0.0);
    placeNumbers(labelled);
    m_plot->replot(QCustomPlot::rpQueuedRefresh);
}

void RooflineView::placeNumbers(const QList<int>& labelled) {
    QFont f = font();
    f.setBold(true);
    // In rank order, each number just above its point, raised while its box would cover one already
    // placed (clustered compute-bound kernels); drawn in reverse, so number 1 ends on top. Boxes are
    // measured in fractions of the log axes (the plot's pixel size is not known before it is shown):
    // about right for the 200-400 pixel plots of the window.
    const QCPRange xr = m_plot->xAxis->range(), yr = m_plot->yAxis->range();
    auto frac = [](double v, const QCPRange& r) { return std::log10(v / r.lower) / std::log10(r.upper / r.lower); };
    const double w = 0.045, h = 0.085;
    QList<QPointF> anchors;
    QList<QRectF> placed;
    for (int i : labelled) {
        const session::RooflineKernel& k = m_data.kernels[i];
        QRectF box(frac(k.intensity, xr) - w / 2, frac(k.gflops, yr) + 0.03, w, h);  // y grows upwards here
        for (int tries = 0; tries < 6 && std::any_of(placed.begin(), placed.end(), [&](const QRectF& r) { return r.intersects(box); });
             ++tries)
            box.translate(0, h);
        placed.append(box);
        anchors.append({k.intensity, yr.lower * std::pow(yr.upper / yr.lower, box.top())});
    }
    for (qsizetype r = labelled.size() - 1; r >= 0; --r) {
        const session::RooflineKernel& k = m_data.kernels[labelled[r]];
        const QColor c = boundColour(k.bound);
        auto* t = new QCPItemText(m_plot);
        t->setText(QString::number(r + 1));
        t->setFont(f);
        t->setColor(c.darker(150));
        // A box of its own: clustered points would hide a bare number.
        QColor back = palette().color(QPalette::Base);
        back.setAlpha(230);
        t->setBrush(back);
        t->setPen(QPen(c));
        t->setPadding(QMargins(2, 0, 2, 0));
        t->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        t->position->setCoords(anchors[r].x(), anchors[r].y());
    }
}

QList<QPointF> RooflineView::roofPoints() const {
    QList<QPointF> out;
    if (!m_roof) return out;
    for (auto it = m_roof->data()->constBegin(); it != m_roof->data()->constEnd(); ++it) out.append({it->key, it->value});
    return out;
}

QList<QPointF> RooflineView::kernelPoints() const {
    QList<QPointF> out;
    for (QCPGraph* g : m_pointGraphs) out.append({g->data()->constBegin()->key, g->data()->constBegin()->value});
    return out;
}

QStringList RooflineView::labels() const { return m_labels; }

void RooflineView::showTip(QMouseEvent* e) {
    int best = -1;
    double bestDist = 12;  // pixels
    for (int i = 0; i < m_pointGraphs.size(); ++i) {
        const auto p = m_pointGraphs[i]->data()->constBegin();
        const double dx = m_plot->xAxis->coordToPixel(p->key) - e->position().x();
        const double dy = m_plot->yAxis->coordToPixel(p->value) - e->position().y();
        const double d = std::hypot(dx, dy);
        if (d < bestDist) {
            bestDist = d;
            best = m_kernelOfGraph[i];
        }
    }
    if (best >= 0)
        QToolTip::showText(e->globalPosition().toPoint(), kernelText(best), m_plot);
    else
        QToolTip::hideText();
}

bool RooflineView::exportPng(const QString& path, int width, int height) {
    m_plot->replot(QCustomPlot::rpImmediateRefresh);
    return m_plot->savePng(path, width, height);
}

}  // namespace tb::widgets
