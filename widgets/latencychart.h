// SPDX-License-Identifier: Apache-2.0
#pragma once
// Live charts of a tuning job (QCustomPlot): the estimated total latency against trials or wall
// time, the selected task's best GFLOPS against its trials, every measured candidate as a point
// (errors marked), and the cost model's prediction against the measurement with the rank
// correlation of the last round. Zoom and pan with the mouse; export PNG and CSV.

#include <QHash>
#include <QList>
#include <QWidget>

#include "app/session/snapshots.h"

class QCustomPlot;
class QCPGraph;
class QComboBox;
class QLabel;
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
    /// One batch of measurements = one round (the predicted-vs-measured view ranks per round).
    void addMeasurements(const QList<session::MeasureRow>& rows);
    /// Puts an earlier run (read back from the log of a resumed job) before everything added so
    /// far, and marks where this run resumed.
    void addHistory(const QList<session::MeasureRow>& rows, const QList<session::LatencyPoint>& points);
    void setSelectedTask(int taskId);

    /// Writes the current view's data as CSV (header + one line per point); values that do not
    /// exist yet (no estimate before every task has a cost, no latency for a failed candidate)
    /// are left empty. Returns false on I/O error.
    bool exportCsv(const QString& path) const;
    bool exportPng(const QString& path, int width = 1200, int height = 700);
    QCustomPlot* plot() const { return m_plot; }
    int pointCount() const;  ///< points drawn in the current view
    /// The statistics line of the current view (the rank correlation in predicted vs measured).
    QString statsText() const { return m_statsText; }

    /// Spearman's rank correlation of x and y (average ranks for ties); NaN when fewer than two
    /// pairs or when either side is constant (no ranking to compare).
    static double spearman(const QList<double>& x, const QList<double>& y);

protected:
    void changeEvent(QEvent* e) override;

private:
    void rebuild();
    void applyPalette();
    void retranslate();
    void reindex();

    QCustomPlot* m_plot = nullptr;
    QComboBox* m_viewBox = nullptr;
    QLabel* m_stats = nullptr;
    QPushButton* m_pngButton = nullptr;
    QPushButton* m_csvButton = nullptr;
    View m_view = View::TotalVsTrials;
    int m_selectedTask = -1;
    QList<session::LatencyPoint> m_latency;
    QList<session::MeasureRow> m_measures;
    QList<int> m_roundOf;                      // per measure: the batch (round) it arrived in
    int m_rounds = 0;
    QHash<int, QList<int>> m_measuresOfTask;  // task id -> indexes into m_measures
    int m_resumedAtTrial = -1;                 // >= 0: this run resumed a log with that many trials
    QString m_statsText;
};

}  // namespace tb::widgets
