// SPDX-License-Identifier: Apache-2.0
#include "widgets/chartaxes.h"

#include <algorithm>
#include <cmath>

namespace tb::widgets {

double IntegerAxisTicker::getTickStep(const QCPRange& range) {
    // The base picks "nice" steps (0.5, 2.5, ...); trials come in whole numbers.
    return std::max(1.0, std::floor(QCPAxisTicker::getTickStep(range)));
}

int IntegerAxisTicker::getSubTickCount(double tickStep) {
    if (tickStep <= 5) return std::max(0, int(std::lround(tickStep)) - 1);  // one sub tick per trial
    return QCPAxisTicker::getSubTickCount(tickStep);
}

int LogAxisTicker::getSubTickCount(double) { return 0; }

QVector<double> LogAxisTicker::createTickVector(double tickStep, const QCPRange& range) {
    if (range.lower <= 0 || range.upper <= range.lower) return QCPAxisTicker::createTickVector(tickStep, range);
    const int first = int(std::floor(std::log10(range.lower)));
    const int last = int(std::ceil(std::log10(range.upper)));
    const int decadeStride = std::max(1, (last - first) / 8);
    const QVector<QVector<double>> mantissas = {{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
    QVector<double> ticks;
    for (const auto& ms : mantissas) {
        ticks.clear();
        for (int e = first; e <= last; e += (ms.size() == 1 ? decadeStride : 1))
            for (double m : ms) {
                const double v = m * std::pow(10.0, e);
                if (v >= range.lower && v <= range.upper) ticks.append(v);
            }
        if (ticks.size() >= 3) return ticks;
    }
    if (ticks.size() >= 2) return ticks;
    return QCPAxisTicker::createTickVector(tickStep, range);  // less than a factor of 2: linear steps
}

void setPaddedRange(QCPAxis* axis, double lower, double upper, double margin, double minSpan, double floor) {
    if (axis->scaleType() == QCPAxis::stLogarithmic && lower > 0 && upper > 0) {
        const double lo = std::log10(lower), hi = std::log10(upper);
        const double pad = hi > lo ? margin * (hi - lo) : 0.1;
        axis->setRange(std::pow(10.0, lo - pad), std::pow(10.0, hi + pad));
        return;
    }
    double lo = lower, hi = upper;
    if (hi - lo <= 0) {
        lo -= minSpan / 2;
        hi += minSpan / 2;
    } else {
        const double pad = margin * (hi - lo);
        lo -= pad;
        hi += pad;
    }
    if (lower >= floor) lo = std::max(lo, floor);
    axis->setRange(lo, hi);
}

void applyChartPalette(QCustomPlot* plot, const QPalette& p) {
    plot->setBackground(p.color(QPalette::Base));
    for (QCPAxis* a : {plot->xAxis, plot->yAxis}) {
        a->setBasePen(QPen(p.color(QPalette::Text)));
        a->setTickPen(QPen(p.color(QPalette::Text)));
        a->setSubTickPen(QPen(p.color(QPalette::Text)));
        a->setTickLabelColor(p.color(QPalette::Text));
        a->setLabelColor(p.color(QPalette::Text));
    }
    QColor legendBack = p.color(QPalette::Base);
    legendBack.setAlpha(220);
    plot->legend->setBrush(legendBack);
    plot->legend->setTextColor(p.color(QPalette::Text));
    plot->legend->setBorderPen(QPen(p.color(QPalette::Mid)));
}

}  // namespace tb::widgets
