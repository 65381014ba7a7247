// SPDX-License-Identifier: Apache-2.0
#pragma once
// Live charts of a tuning job (QCustomPlot): the estimated total latency against trials or wall
// time, the selected task's best GFLOPS against its trials, every measured candidate as a point
// (errors marked), and the cost model's prediction against the measurement. Zoom and pan with the
// mouse; export PNG and CSV.

#include <QHash>
#include <QList>
#include <QWidget>

#include "app/session/snapshots.h"

class QCustomPlot;
class QCPGraph;
class QComboBox;
class QPushButton;

namespace tb::widgets {

class LatencyChart : public QWidget {
    Q_OBJECT
public:
    enum class View { TotalVsTrials, TotalVsTime, TaskGflops, Candidates, PredictedVsMeasured };

    explicit LatencyChart(QWidget* parent = nullptr);

    void setView(View v);
    View view() const { return m_view; }
    void clear();
    void addLatencyPoint(const session::LatencyPoint& p);
    void addMeasurements(const QList<session::MeasureRow>& rows);
    void setSelectedTask(int taskId);

    /// Writes the current view's data as CSV (header + one line per point). Returns false on I/O error.
    bool exportCsv(const QString& path) const;
    bool exportPng(const QString& path, int width = 1200, int height = 700);
    QCustomPlot* plot() const { return m_plot; }
    int pointCount() const;  ///< points drawn in the current view

protected:
    void changeEvent(QEvent* e) override;

private:
    void rebuild();
    void applyPalette();
    void retranslate();

    QCustomPlot* m_plot = nullptr;
    QComboBox* m_viewBox = nullptr;
    QPushButton* m_pngButton = nullptr;
    QPushButton* m_csvButton = nullptr;
    View m_view = View::TotalVsTrials;
    int m_selectedTask = -1;
    QList<session::LatencyPoint> m_latency;
    QList<session::MeasureRow> m_measures;
    QHash<int, QList<int>> m_measuresOfTask;  // task id -> indexes into m_measures
};

}  // namespace tb::widgets
