// SPDX-License-Identifier: Apache-2.0
#pragma once
// The device fleet while it measures (issue 21): FleetTimeline draws, per device, a Gantt strip
// of what it did on the job's clock (builds on this machine, uploads and runs on each device; an
// error red, a timeout orange, a step still running hatched) and marks a device that died;
// FleetPanel puts it beside the per-key table (free/busy/pending, runs per minute) and the fleet's
// controls: start a fleet of emulated ARM boards and host servers, add one device (an ARM board, a
// host server, or an emulated Mali board: a GPU device server on PoCL), or stop one.

#include <QWidget>

#include "app/session/snapshots.h"

class QLabel;
class QPushButton;
class QSpinBox;
class QTableView;
class QTreeWidget;

namespace tb::models {
class FleetModel;
class FleetKeyStatsModel;
}  // namespace tb::models

namespace tb::widgets {

class FleetTimeline : public QWidget {
    Q_OBJECT
public:
    explicit FleetTimeline(models::FleetModel* model, QWidget* parent = nullptr);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    /// The strip of device `row` (FleetModel::devices() order), and the bar drawn for its step
    /// `bar`, in widget coordinates (for tests and tooltips).
    QRect rowRect(int row) const;
    QRectF barRect(int row, int bar) const;
    /// The (row, bar) under `pos`, or (-1, -1).
    QPair<int, int> barAt(const QPoint& pos) const;
    /// The tooltip text of a bar: task, candidate, phase, duration, error.
    QString barText(int row, int bar) const;
    /// The time span the strip shows (s on the job's clock).
    double spanS() const;
    /// "build", "upload", "run" (FleetEvent::Phase), translated.
    static QString phaseName(int phase);

protected:
    void paintEvent(QPaintEvent*) override;
    bool event(QEvent* e) override;

private:
    int labelWidth() const;
    int rowHeight() const;
    double xOf(double s) const;

    models::FleetModel* m_model;
};

class FleetPanel : public QWidget {
    Q_OBJECT
public:
    explicit FleetPanel(QWidget* parent = nullptr);
    models::FleetModel* model() const { return m_model; }
    models::FleetKeyStatsModel* statsModel() const { return m_stats; }
    FleetTimeline* timeline() const { return m_timeline; }
    QTreeWidget* deviceList() const { return m_devices; }
    QPushButton* startButton() const { return m_start; }
    QPushButton* addArmButton() const { return m_addArm; }
    QPushButton* addHostButton() const { return m_addHost; }
    QPushButton* addMaliButton() const { return m_addMali; }
    QPushButton* addVtaButton() const { return m_addVta; }
    QPushButton* stopButton() const { return m_stop; }
    QString summaryText() const;

public Q_SLOTS:
    void showFleet(const QList<tb::session::FleetDeviceRow>& devices);

Q_SIGNALS:
    void startFleetRequested(int hostServers, int armBoards);
    void addDeviceRequested(bool arm);
    void addMaliBoardRequested();
    /// "Add VTA": a simulated VTA accelerator (rpc-server --device vta, key intelfocl).
    void addVtaDeviceRequested();
    void stopDeviceRequested(int id);

protected:
    void changeEvent(QEvent* e) override;

private:
    void retranslate();
    void updateSummary();

    models::FleetModel* m_model;
    models::FleetKeyStatsModel* m_stats;
    FleetTimeline* m_timeline;
    QLabel* m_armLabel;
    QSpinBox* m_arm;
    QLabel* m_hostLabel;
    QSpinBox* m_host;
    QPushButton* m_start;
    QPushButton* m_addArm;
    QPushButton* m_addHost;
    QPushButton* m_addMali;
    QPushButton* m_addVta;
    QPushButton* m_stop;
    QLabel* m_summary;
    QTableView* m_keys;
    QTreeWidget* m_devices;
    QList<session::FleetDeviceRow> m_fleet;
};

}  // namespace tb::widgets
