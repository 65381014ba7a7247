// SPDX-License-Identifier: Apache-2.0
#pragma once
// The roofline of a compiled network (QCustomPlot, log-log): attainable GFLOP/s against arithmetic
// intensity (FLOP/byte), with the machine's two measured roofs (the bandwidth slope up to the ridge,
// then the FMA peak) and one point per kernel (= task), coloured by the roof it is under and sized
// by its share of the network's time. The kernels that take the most time are numbered, with a key
// of their names in a corner; every point has a tooltip (name, ms, GFLOP/s, GB/s, FLOP/byte, "memory-bound at 83% of bandwidth"). Fed by
// TuningSession::rooflineAvailable after "Compile && benchmark" (engine/runtime/kernel_roofline.h).

#include <QList>
#include <QPointF>
#include <QStringList>
#include <QWidget>

#include "app/session/snapshots.h"

class QCustomPlot;
class QCPGraph;
class QLabel;
class QMouseEvent;

namespace tb::widgets {

class RooflineView : public QWidget {
    Q_OBJECT
public:
    explicit RooflineView(QWidget* parent = nullptr);

    void setRoofline(const session::RooflineSnapshot& roofline);
    const session::RooflineSnapshot& roofline() const { return m_data; }

    QCustomPlot* plot() const { return m_plot; }
    /// The roof as drawn: (FLOP/byte, GFLOP/s) vertices, the bandwidth slope then the peak.
    QList<QPointF> roofPoints() const;
    /// The kernels as drawn, in the snapshot's order: (FLOP/byte, GFLOP/s); kernels without FLOPs or
    /// bytes are not drawn.
    QList<QPointF> kernelPoints() const;
    /// The key of the numbered points (the kernels that take the most time), one line each:
    /// "1  conv2d_add_relu 1x14x14x512 (47% of the time)".
    QStringList labels() const;
    /// The tooltip of kernel `index` of the snapshot.
    QString kernelText(int index) const;
    /// The summary line above the plot.
    QString summaryText() const;
    bool exportPng(const QString& path, int width = 1200, int height = 800);

protected:
    void changeEvent(QEvent* e) override;

private:
    void rebuild();
    void retranslate();
    void showTip(QMouseEvent* e);
    /// Numbers the `labelled` kernels (snapshot indices, most time first) on the plot.
    void placeNumbers(const QList<int>& labelled);

    QCustomPlot* m_plot = nullptr;
    QLabel* m_summary = nullptr;
    QCPGraph* m_roof = nullptr;
    QList<QCPGraph*> m_pointGraphs;  // one per drawn kernel (its own marker size)
    QList<int> m_kernelOfGraph;      // snapshot index of each
    QStringList m_labels;            // the key of the numbered points
    session::RooflineSnapshot m_data;
};

}  // namespace tb::widgets
