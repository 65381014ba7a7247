// SPDX-License-Identifier: Apache-2.0
#pragma once
// Axis helpers shared by the charts (QCustomPlot): tickers for trial counts (integers only) and for
// latencies on a log scale (labelled 1-2-5 steps when the data spans less than a few decades, where
// QCPAxisTickerLog labels only powers of ten and so nothing at all inside 0.2–0.8 ms), and ranges
// with a margin so the first and last points are not cut by the axis rect.

#include <limits>

#include "widgets/qcustomplot_include.h"

namespace tb::widgets {

/// Ticks on whole numbers only (trial counts): steps of 1, 2, 5, 10, ... never 0.5 or 2.5.
class IntegerAxisTicker : public QCPAxisTicker {
protected:
    double getTickStep(const QCPRange& range) override;
    int getSubTickCount(double tickStep) override;
};

/// Ticks for a logarithmic axis: powers of ten, or 1-2-5 or 1..9 times them when that gives too
/// few labels; linear steps when even those leave fewer than two labels in the range.
class LogAxisTicker : public QCPAxisTicker {
protected:
    int getSubTickCount(double tickStep) override;
    QVector<double> createTickVector(double tickStep, const QCPRange& range) override;
};

/// Sets `axis` to [lower, upper] widened by `margin` of its span on both sides (for a log axis, of
/// its span in decades); a zero span is widened to `minSpan` around the value. `floor` clamps the
/// lower end (e.g. 0 for latencies, which are never negative) unless the data lie below it.
void setPaddedRange(QCPAxis* axis, double lower, double upper, double margin = 0.04, double minSpan = 1.0,
                    double floor = -std::numeric_limits<double>::infinity());

/// Colours `plot`'s background, axes, labels and legend from `palette` (Base, Text, Mid), so a
/// chart follows a dark theme; call again on QEvent::PaletteChange.
void applyChartPalette(QCustomPlot* plot, const QPalette& palette);

}  // namespace tb::widgets
