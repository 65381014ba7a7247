// SPDX-License-Identifier: Apache-2.0
#pragma once
// The TuneBench window: session setup on the left; the live task-scheduler table, latency charts,
// the selected task's compute DAG and the device tracker queue in the middle; the engine log and
// the measurement history below. It talks only to the session bridge (value types), never to
// engine objects.

#include <QElapsedTimer>
#include <QMainWindow>

#include "app/session/snapshots.h"

class QAction;
class QActionGroup;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
class QTabWidget;
class QTableView;
class QTranslator;

namespace tb::models {
class MeasurementModel;
class TaskTableModel;
}  // namespace tb::models
namespace tb::session {
class TuningSession;
class TrackerMonitor;
}  // namespace tb::session

namespace tb::widgets {

class AutotvmPanel;
class DagView;
class FleetPanel;
class LatencyChart;
class LogInspector;
class RooflineView;
class SessionPage;
class SetupWidget;
class TrackerPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// `tracker` may be null (no tracker panel wiring).
    MainWindow(session::TuningSession* session, session::TrackerMonitor* tracker, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Starts tuning with the job currently in the setup panel (the Start button, or --autostart).
    void startTuning();
    void setJob(const session::TuningJob& job);
    session::TuningJob job() const;

    /// Installs the translations of `locale` ("en" = none; "zh_CN": Qt's and ours) and
    /// retranslates every view. Returns false when our translation for it cannot be loaded.
    bool setLanguage(const QString& locale);
    QString language() const { return m_language; }

    // For tests and screenshots.
    models::TaskTableModel* taskModel() const { return m_taskModel; }
    models::MeasurementModel* measurementModel() const { return m_measureModel; }
    QTableView* taskView() const { return m_taskView; }
    LatencyChart* chart() const { return m_chart; }
    /// The kernels of the last "Compile && benchmark" on the roofline (a tab beside the chart,
    /// brought to the front when a benchmark delivers its data).
    RooflineView* rooflineView() const { return m_roofline; }
    QTabWidget* chartTabs() const { return m_chartTabs; }
    DagView* dagView() const { return m_dagView; }
    AutotvmPanel* autotvmPanel() const { return m_autotvm; }
    TrackerPanel* trackerPanel() const { return m_tracker; }
    FleetPanel* fleetPanel() const { return m_fleet; }
    /// Brings the device fleet's tab (timeline, per-key table, controls) to the front.
    void showFleetPanel();
    SetupWidget* setupWidget() const { return m_setup; }
    QPushButton* startButton() const { return m_start; }
    QPushButton* pauseButton() const { return m_pause; }
    QPushButton* stopButton() const { return m_stop; }
    /// "Compile && benchmark": the current job's network compiled with its log's best records and
    /// timed on a device of its key (rpc runner) or here (TuningSession::compileAndBenchmark).
    QPushButton* benchButton() const { return m_bench; }
    QString statusText() const;
    QPlainTextEdit* engineLog() const { return m_log; }
    int selectedTask() const { return m_selectedTask; }
    /// Selects a task in the table (and asks the session for its DAG).
    void selectTask(int taskId);
    /// Tunes `job` in a session of its own beside the first one (issue 21: one network for
    /// several targets or device keys at once): its own task table, chart, DAG and engine log, its
    /// own record log (made distinct from the others' when empty or taken), its steps on the
    /// common fleet timeline. The page is not started; SessionPage::start() does.
    SessionPage* addSession(session::TuningJob job);
    QList<SessionPage*> sessionPages() const { return m_pages; }
    /// Opens a log inspector window on `logPath` (empty: the current job's log, if it exists).
    LogInspector* openLogInspector(const QString& logPath = QString());

protected:
    void closeEvent(QCloseEvent* e) override;
    void changeEvent(QEvent* e) override;

private:
    void buildMenus();
    void retranslate();
    void onSessionState(int state);
    void updateStatus();
    /// The engine's text as the log view shows it: tabs expanded, paused time out of "Used time".
    QString logText(const QString& engineText) const;
    void loadResumedHistory(const QList<session::TaskRow>& tasks);
    /// AutoTVM mode: the AutoTVM panel in place of the task table, the DAG view and the charts.
    void setAutotvmMode(bool on);
    // Several sessions.
    void ensureSessionRow();
    void addSessionFromDialog();
    QStringList sessionLogPaths() const;

    session::TuningSession* m_session;
    session::TrackerMonitor* m_trackerMonitor;
    models::TaskTableModel* m_taskModel;
    models::MeasurementModel* m_measureModel;
    QSortFilterProxyModel* m_taskProxy;
    SetupWidget* m_setup;
    QDockWidget* m_dock;
    QDockWidget* m_trackerDock;
    QTableView* m_taskView;
    QTableView* m_measureView;
    LatencyChart* m_chart;
    RooflineView* m_roofline;
    QTabWidget* m_chartTabs;
    DagView* m_dagView;
    AutotvmPanel* m_autotvm;
    QWidget* m_midRow;
    TrackerPanel* m_tracker;
    FleetPanel* m_fleet;
    QTabWidget* m_bottomTabs;
    QSplitter* m_central;
    // Several sessions: [first | pages] over the fleet timeline; null while there is one.
    QSplitter* m_outer = nullptr;
    QSplitter* m_sessionRow = nullptr;
    QLabel* m_primaryTitle = nullptr;
    QList<SessionPage*> m_pages;
    QElapsedTimer m_windowClock;
    qint64 m_primaryStartMs = -1;  // on m_windowClock: the fleet timeline's zero
    QAction* m_addSessionAction = nullptr;
    QPlainTextEdit* m_log;
    QPushButton* m_start;
    QPushButton* m_pause;
    QPushButton* m_stop;
    QPushButton* m_bench;
    QLabel* m_status;
    QLabel* m_latencyLabel;
    QProgressBar* m_progress;
    QMenu* m_fileMenu = nullptr;
    QMenu* m_langMenu = nullptr;
    QMenu* m_helpMenu = nullptr;
    QAction* m_inspectorAction = nullptr;
    QAction* m_quitAction = nullptr;
    QAction* m_aboutAction = nullptr;
    QActionGroup* m_langGroup = nullptr;
    QAction* m_langEn = nullptr;
    QAction* m_langZh = nullptr;
    QTranslator* m_translator = nullptr;
    QTranslator* m_qtTranslator = nullptr;
    QString m_language = QStringLiteral("en");
    QString m_lastLogPath;
    bool m_closeRequested = false;
    int m_selectedTask = -1;
    double m_selectedBestMs = -1;
    int m_totalTrials = 0;
    int m_failedTrials = 0;
    double m_estimatedMs = -1;
    int m_tasksWithCost = 0;
    QString m_finishedText;
    // The job being run: its number (late results of an older job are dropped), whether it
    // resumes a log and how long that log was when it started (the history to read back).
    quint64 m_jobSerial = 0;
    session::TuningJob m_runningJob;
    qint64 m_resumeBytes = -1;
    // Pause: the worker parks only after the running round; paused time is not tuning time.
    int m_lastState = 0;  // TuningSession::State
    bool m_parked = false;
    QElapsedTimer m_parkedClock;
    double m_pausedS = 0;
    double m_lastRoundEndS = 0;  // the previous round's end on the job's clock, for per-trial times
};

}  // namespace tb::widgets
