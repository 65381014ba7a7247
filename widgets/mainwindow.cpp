// SPDX-License-Identifier: Apache-2.0
#include "widgets/mainwindow.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLibraryInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QThread>
#include <QTranslator>
#include <QVBoxLayout>

#include <limits>
#include <memory>

#include "app/session/logloader.h"
#include "app/session/trackermonitor.h"
#include "app/session/tuningsession.h"
#include "widgets/autotvmpanel.h"
#include "widgets/dagview.h"
#include "widgets/fleettimeline.h"
#include "widgets/latencychart.h"
#include "widgets/loginspector.h"
#include "widgets/models/fleetmodel.h"
#include "widgets/models/autotvmtaskmodel.h"
#include "widgets/models/measurementmodel.h"
#include "widgets/models/tasktablemodel.h"
#include "widgets/rooflineview.h"
#include "widgets/sessionpage.h"
#include "widgets/setupwidget.h"
#include "widgets/trackerpanel.h"
#include "widgets/windowsize.h"
#include "widgets/workloaddelegate.h"

namespace tb::widgets {

namespace {

// TVM's table ends with tab-separated fields ("Trials: 128\tUsed time : 60 s"). A text view may
// draw a tab that falls on a tab stop as nothing at all: expand tabs as a terminal does.
QString expandTabs(const QString& text) {
    QString out;
    out.reserve(text.size() + 16);
    int column = 0;
    for (const QChar c : text) {
        if (c == QLatin1Char('\t')) {
            const int n = 8 - column % 8;
            out += QString(n, QLatin1Char(' '));
            column += n;
        } else {
            out += c;
            column = c == QLatin1Char('\n') ? 0 : column + 1;
        }
    }
    return out;
}

}  // namespace

MainWindow::MainWindow(session::TuningSession* session, session::TrackerMonitor* tracker, QWidget* parent)
    : QMainWindow(parent), m_session(session), m_trackerMonitor(tracker) {
    setObjectName(QStringLiteral("TuneBenchMainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/tunebench.svg")));
    resize(fittedWindowSize(this, QSize(1600, 1000)));

    m_taskModel = new models::TaskTableModel(this);
    m_measureModel = new models::MeasurementModel(this);
    m_taskProxy = new QSortFilterProxyModel(this);
    m_taskProxy->setSourceModel(m_taskModel);
    m_taskProxy->setSortRole(models::TaskTableModel::SortRole);

    // Setup dock: the job on top, the run buttons pinned below it.
    m_setup = new SetupWidget(session::TuningSession::networkNames(), &session::TuningSession::validateTarget, this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_setup);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* setupPane = new QWidget(this);
    auto* sl = new QVBoxLayout(setupPane);
    sl->setContentsMargins(4, 4, 4, 4);
    sl->addWidget(scroll, 1);
    auto* buttons = new QHBoxLayout;
    m_start = new QPushButton(QIcon(QStringLiteral(":/icons/start.svg")), QString(), this);
    m_pause = new QPushButton(QIcon(QStringLiteral(":/icons/pause.svg")), QString(), this);
    m_stop = new QPushButton(QIcon(QStringLiteral(":/icons/stop.svg")), QString(), this);
    m_bench = new QPushButton(this);
    m_start->setDefault(true);
    buttons->addWidget(m_start);
    buttons->addWidget(m_pause);
    buttons->addWidget(m_stop);
    buttons->addWidget(m_bench);
    sl->addLayout(buttons);
    m_dock = new QDockWidget(this);
    m_dock->setObjectName(QStringLiteral("SessionDock"));
    m_dock->setWidget(setupPane);
    m_dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, m_dock);

    // Centre: table + DAG | charts + tracker; log and measurements below.
    m_taskView = new QTableView(this);
    setUpTaskView(m_taskView, m_taskProxy);
    m_chart = new LatencyChart(this);
    m_roofline = new RooflineView(this);
    m_chartTabs = new QTabWidget(this);
    m_chartTabs->setDocumentMode(true);
    m_chartTabs->addTab(m_chart, QString());
    m_chartTabs->addTab(m_roofline, QString());
    m_dagView = new DagView(this);
    m_autotvm = new AutotvmPanel(this);
    m_autotvm->hide();
    m_tracker = new TrackerPanel(this);
    m_fleet = new FleetPanel(this);
    m_measureView = new QTableView(this);
    m_measureView->setModel(m_measureModel);
    m_measureView->verticalHeader()->hide();
    m_measureView->verticalHeader()->setDefaultSectionSize(m_measureView->fontMetrics().height() + 6);
    m_measureView->horizontalHeader()->setStretchLastSection(true);
    m_log = new QPlainTextEdit(this);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(20000);
    m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_log->setLineWrapMode(QPlainTextEdit::NoWrap);

    // Where candidates run (the tracker's queue) under the session setup, so that the task table
    // has the whole width for its descriptions and shapes.
    m_trackerDock = new QDockWidget(this);
    m_trackerDock->setObjectName(QStringLiteral("TrackerDock"));
    m_trackerDock->setWidget(m_tracker);
    m_trackerDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    m_tracker->setTitleVisible(false);  // the dock's title says it
    addDockWidget(Qt::LeftDockWidgetArea, m_trackerDock);
    resizeDocks({m_dock, m_trackerDock}, {3, 1}, Qt::Vertical);
    resizeDocks({m_dock}, {360}, Qt::Horizontal);

    // Rows of the centre: what the scheduler does (task table); the selected task (DAG, code) and
    // the latency curves; the running commentary (log, history).
    auto* midRow = new QSplitter(Qt::Horizontal, this);
    midRow->addWidget(m_dagView);
    midRow->addWidget(m_chartTabs);
    midRow->setStretchFactor(0, 1);
    midRow->setStretchFactor(1, 1);
    m_bottomTabs = new QTabWidget(this);
    m_bottomTabs->addTab(m_log, QString());
    m_bottomTabs->addTab(m_measureView, QString());
    m_bottomTabs->addTab(m_fleet, QString());
    m_midRow = midRow;
    auto* central = m_central = new QSplitter(Qt::Vertical, this);
    central->addWidget(m_autotvm);  // AutoTVM mode: in place of the next two
    central->addWidget(m_taskView);
    central->addWidget(midRow);
    central->addWidget(m_bottomTabs);
    central->setStretchFactor(0, 8);
    central->setStretchFactor(1, 4);
    central->setStretchFactor(2, 4);
    central->setStretchFactor(3, 2);
    central->setSizes({760, 340, 420, 170});
    midRow->setSizes({650, 650});
    setCentralWidget(central);

    m_status = new QLabel(this);
    m_latencyLabel = new QLabel(this);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progress->setMaximumWidth(220);
    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_latencyLabel);
    statusBar()->addPermanentWidget(m_progress);

    buildMenus();

    // Wiring: every session signal lands in a model or view (queued from the worker thread).
    connect(m_start, &QPushButton::clicked, this, &MainWindow::startTuning);
    connect(m_pause, &QPushButton::clicked, this, [this] {
        if (m_session->state() == session::TuningSession::State::Paused)
            m_session->resume();
        else
            m_session->pause();
    });
    connect(m_stop, &QPushButton::clicked, m_session, &session::TuningSession::stop);
    connect(m_bench, &QPushButton::clicked, this, [this] { m_session->compileAndBenchmark(m_setup->job()); });
    connect(m_session, &session::TuningSession::benchmarkStarted, this, [this] {
        m_finishedText = tr("Compiling and benchmarking…");
        onSessionState(int(m_session->state()));
    });
    connect(m_session, &session::TuningSession::rooflineAvailable, this, [this](const session::RooflineSnapshot& r) {
        m_roofline->setRoofline(r);
        m_chartTabs->setCurrentWidget(m_roofline);
    });
    connect(m_session, &session::TuningSession::benchmarkFinished, this, [this](const QString& status, bool) {
        m_finishedText = status;
        onSessionState(int(m_session->state()));
    });
    connect(m_setup, &SetupWidget::validityChanged, this, [this](bool ok) {
        const bool free = m_session->state() == session::TuningSession::State::Idle && !m_session->benchmarking();
        m_start->setEnabled(ok && free);
        m_bench->setEnabled(ok && free);
    });
    connect(m_session, &session::TuningSession::stateChanged, this,
            [this](session::TuningSession::State s) { onSessionState(int(s)); });
    connect(m_session, &session::TuningSession::tasksAdded, this, [this](const QList<session::TaskRow>& rows) {
        Q_ASSERT(QThread::currentThread() == thread());
        m_taskModel->setTasks(rows);
        m_chart->clear();
        m_measureModel->clear();
        m_selectedTask = -1;
        if (!rows.isEmpty()) selectTask(rows.first().id);
        if (m_runningJob.resume) loadResumedHistory(rows);
        updateStatus();
    });
    connect(m_session, &session::TuningSession::tasksUpdated, this, [this](const QList<session::TaskRow>& rows) {
        m_taskModel->updateTasks(rows);
        // Refresh the DAG view when the selected task found a better schedule (new loop nest).
        if (const session::TaskRow* t = m_taskModel->task(m_selectedTask); t && t->bestMs >= 0 && t->bestMs != m_selectedBestMs) {
            m_selectedBestMs = t->bestMs;
            m_session->requestDag(m_selectedTask);
        }
    });
    connect(m_session, &session::TuningSession::measurementsAvailable, this, [this](const QList<session::MeasureRow>& batch) {
        const bool atEnd = m_measureView->verticalScrollBar() == nullptr ||
                           m_measureView->verticalScrollBar()->value() == m_measureView->verticalScrollBar()->maximum();
        // Tuning time, not wall time: the job's clock runs on while it is paused.
        QList<session::MeasureRow> rows = batch;
        for (auto& r : rows) r.elapsedS -= m_pausedS;
        models::MeasurementModel::spreadRoundTimes(rows, m_lastRoundEndS);
        if (!rows.isEmpty()) m_lastRoundEndS = rows.last().elapsedS;
        m_measureModel->append(rows);
        if (atEnd) m_measureView->scrollToBottom();
        m_chart->addMeasurements(rows);
        m_totalTrials += int(rows.size());
        for (const auto& r : rows)
            if (r.errorNo != 0) ++m_failedTrials;
        updateStatus();
    });
    connect(m_session, &session::TuningSession::latencyPointAdded, this, [this](session::LatencyPoint p) {
        p.elapsedS -= m_pausedS;
        m_chart->addLatencyPoint(p);
        m_estimatedMs = p.estimatedMs;
        m_tasksWithCost = p.tasksWithCost;
        updateStatus();
    });
    connect(m_session, &session::TuningSession::progressChanged, m_progress, &QProgressBar::setValue);
    connect(m_session, &session::TuningSession::fleetEventsAvailable, m_fleet->model(), &models::FleetModel::addEvents);
    connect(m_session, &session::TuningSession::dagAvailable, this, [this](const session::DagSnapshot& d) {
        if (m_runningJob.autotvm) m_autotvm->setDag(d);
        else if (d.taskId == m_selectedTask) m_dagView->setDag(d);
    });
    // AutoTVM mode: its panel shows the tasks, their curves and the best config's program.
    connect(m_setup, &SetupWidget::autotvmModeChanged, this, &MainWindow::setAutotvmMode);
    connect(m_autotvm, &AutotvmPanel::dagRequested, m_session, &session::TuningSession::requestDag);
    connect(m_session, &session::TuningSession::autotvmTasksAdded, this, [this](const QList<session::AutotvmTaskRow>& rows) {
        m_autotvm->setTasks(rows);
        updateStatus();
    });
    connect(m_session, &session::TuningSession::autotvmTasksUpdated, m_autotvm, &AutotvmPanel::updateTasks);
    connect(m_session, &session::TuningSession::autotvmTrialsAvailable, this, [this](const QList<session::AutotvmTrial>& trials) {
        m_autotvm->addTrials(trials);
        m_totalTrials += int(trials.size());
        for (const auto& t : trials)
            if (t.errorNo != 0) ++m_failedTrials;
        updateStatus();
    });
    connect(m_session, &session::TuningSession::logMessage, this,
            [this](const QString& line) { m_log->appendPlainText(logText(line)); });
    connect(m_session, &session::TuningSession::paused, this, [this] {
        // The round that was running when Pause was pressed has ended: now nothing runs.
        m_parked = true;
        m_parkedClock.start();
        updateStatus();
    });
    connect(m_session, &session::TuningSession::tuningFinished, this, [this](const QString& s) {
        m_log->appendPlainText(logText(s));
        m_finishedText = s.section(QLatin1Char('\n'), 0, 0);
        if (m_pausedS >= 1) m_finishedText += tr(" (%1 s of that paused)").arg(qRound(m_pausedS));
        updateStatus();
        if (m_closeRequested) close();
    });
    connect(m_session, &session::TuningSession::tuningFailed, this, [this](const QString& msg) {
        m_log->appendPlainText(tr("Tuning failed: %1").arg(msg));
        m_finishedText = tr("Tuning failed");
        updateStatus();
        if (m_closeRequested) {
            close();
            return;
        }
        // Not modal: the window (and a test driving it) goes on while the message is up.
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Tuning failed"), msg, QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("TuningFailedBox"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
    connect(m_taskView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
        if (!cur.isValid()) return;
        const int id = m_taskProxy->data(cur, models::TaskTableModel::TaskIdRole).toInt();
        if (id != m_selectedTask) selectTask(id);
    });
    if (m_trackerMonitor) {
        connect(m_tracker, &TrackerPanel::connectRequested, m_trackerMonitor, &session::TrackerMonitor::connectTo);
        connect(m_tracker, &TrackerPanel::startLocalFleetRequested, m_trackerMonitor,
                &session::TrackerMonitor::startLocalFleet);
        connect(m_trackerMonitor, &session::TrackerMonitor::queueChanged, m_tracker, &TrackerPanel::showSnapshot);
        connect(m_trackerMonitor, &session::TrackerMonitor::statusChanged, m_tracker, &TrackerPanel::showStatus);
        connect(m_trackerMonitor, &session::TrackerMonitor::queueChanged, m_fleet->model(), &models::FleetModel::setQueue);
        connect(m_trackerMonitor, &session::TrackerMonitor::fleetChanged, m_fleet, &FleetPanel::showFleet);
        connect(m_fleet, &FleetPanel::startFleetRequested, m_trackerMonitor,
                [m = m_trackerMonitor](int hostServers, int armBoards) { m->startDeviceFleet(hostServers, armBoards); });
        connect(m_fleet, &FleetPanel::addDeviceRequested, m_trackerMonitor, &session::TrackerMonitor::addDevice);
        connect(m_fleet, &FleetPanel::addMaliBoardRequested, m_trackerMonitor, &session::TrackerMonitor::addMaliBoard);
        connect(m_fleet, &FleetPanel::addVtaDeviceRequested, m_trackerMonitor, &session::TrackerMonitor::addVtaDevice);
        connect(m_fleet, &FleetPanel::stopDeviceRequested, m_trackerMonitor, &session::TrackerMonitor::stopDevice);
        connect(m_trackerMonitor, &session::TrackerMonitor::localTrackerStarted, this, [this](const QString& host, int port) {
            m_tracker->setTrackerAddress(QStringLiteral("%1:%2").arg(host).arg(port));
        });
    }
    retranslate();
    onSessionState(int(m_session->state()));
    m_windowClock.start();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
    m_fileMenu = menuBar()->addMenu(QString());
    m_inspectorAction = m_fileMenu->addAction(QIcon(QStringLiteral(":/icons/log.svg")), QString());
    m_inspectorAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    m_addSessionAction = m_fileMenu->addAction(QIcon(QStringLiteral(":/icons/start.svg")), QString());
    connect(m_addSessionAction, &QAction::triggered, this, &MainWindow::addSessionFromDialog);
    connect(m_inspectorAction, &QAction::triggered, this, [this] { openLogInspector(); });
    m_fileMenu->addSeparator();
    m_quitAction = m_fileMenu->addAction(QString());
    m_quitAction->setShortcut(QKeySequence::Quit);
    connect(m_quitAction, &QAction::triggered, this, &QWidget::close);

    m_langMenu = menuBar()->addMenu(QString());
    m_langGroup = new QActionGroup(this);
    // Language names are shown in their own language, untranslated.
    m_langEn = m_langMenu->addAction(QStringLiteral("English"));
    m_langZh = m_langMenu->addAction(QStringLiteral("简体中文"));
    for (QAction* a : {m_langEn, m_langZh}) {
        a->setCheckable(true);
        m_langGroup->addAction(a);
    }
    m_langEn->setChecked(true);
    connect(m_langEn, &QAction::triggered, this, [this] { setLanguage(QStringLiteral("en")); });
    connect(m_langZh, &QAction::triggered, this, [this] { setLanguage(QStringLiteral("zh_CN")); });

    m_helpMenu = menuBar()->addMenu(QString());
    m_aboutAction = m_helpMenu->addAction(QString());
    connect(m_aboutAction, &QAction::triggered, this, [this] {
        QMessageBox::about(this, tr("About TuneBench"),
                           tr("TuneBench %1\nAuto-tuning of tensor programs, in the line of TVM's auto-scheduler.")
                               .arg(QCoreApplication::applicationVersion()));
    });
}

void MainWindow::retranslate() {
    setWindowTitle(tr("TuneBench — auto-tuning workbench"));
    m_dock->setWindowTitle(tr("Session"));
    m_trackerDock->setWindowTitle(tr("Device tracker"));
    m_start->setText(tr("Start"));
    m_start->setToolTip(tr("Extract the tasks of the network and tune them"));
    m_pause->setText(m_session->state() == session::TuningSession::State::Paused ? tr("Resume") : tr("Pause"));
    m_pause->setToolTip(tr("Pause or resume between two search rounds"));
    m_stop->setText(tr("Stop"));
    m_stop->setToolTip(tr("Stop after the current round (every measured record is kept)"));
    m_bench->setText(tr("Compile && benchmark"));
    m_bench->setToolTip(tr("Compile the network with the best records of the log and time it: on a device of the "
                           "key with the rpc runner (outputs checked against the interpreter), else here"));
    m_chartTabs->setTabText(0, tr("Tuning"));
    m_chartTabs->setTabText(1, tr("Roofline"));
    m_bottomTabs->setTabText(0, tr("Engine log"));
    m_bottomTabs->setTabText(1, tr("Measurements"));
    m_bottomTabs->setTabText(2, tr("Device fleet"));
    m_fileMenu->setTitle(tr("&File"));
    m_inspectorAction->setText(tr("Open &Log Inspector…"));
    m_addSessionAction->setText(tr("Add &Session…"));
    m_addSessionAction->setToolTip(tr("Tune a network for another target or device key beside this session"));
    m_quitAction->setText(tr("&Quit"));
    m_langMenu->setTitle(tr("&Language"));
    m_helpMenu->setTitle(tr("&Help"));
    m_aboutAction->setText(tr("&About TuneBench"));
    m_taskModel->retranslate();
    m_measureModel->retranslate();
    updateStatus();
}

bool MainWindow::setLanguage(const QString& locale) {
    for (QTranslator** t : {&m_translator, &m_qtTranslator}) {
        if (*t) {
            qApp->removeTranslator(*t);
            delete *t;
            *t = nullptr;
        }
    }
    bool ok = true;
    if (locale != QLatin1String("en")) {
        m_qtTranslator = new QTranslator(this);
        if (m_qtTranslator->load(QStringLiteral("qtbase_") + locale, QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
            qApp->installTranslator(m_qtTranslator);
        m_translator = new QTranslator(this);
        ok = m_translator->load(QStringLiteral(":/i18n/tunebench_") + locale);
        if (ok) qApp->installTranslator(m_translator);
    }
    m_language = ok ? locale : QStringLiteral("en");
    (m_language == QLatin1String("zh_CN") ? m_langZh : m_langEn)->setChecked(true);
    // Installing a translator sends LanguageChange to every widget; removing the last one may not.
    retranslate();
    return ok;
}

void MainWindow::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QMainWindow::changeEvent(e);
}

void MainWindow::setJob(const session::TuningJob& job) { m_setup->setJob(job); }
session::TuningJob MainWindow::job() const { return m_setup->job(); }

void MainWindow::startTuning() {
    if (!m_setup->isValid() || m_session->state() != session::TuningSession::State::Idle) return;
    if (!m_setup->confirmStart()) return;  // a log of records without Resume: append, resume or cancel
    m_totalTrials = 0;
    m_failedTrials = 0;
    m_estimatedMs = -1;
    m_tasksWithCost = 0;
    m_selectedBestMs = -1;
    m_finishedText.clear();
    m_progress->setValue(0);
    m_log->clear();
    // Nothing of the previous job stays on screen: if this one fails before it has tasks, the
    // table, charts and DAG agree that there is nothing to show.
    m_taskModel->clear();
    m_measureModel->clear();
    m_chart->clear();
    m_dagView->clear();
    m_autotvm->clear();
    m_selectedTask = -1;
    m_parked = false;
    m_pausedS = 0;
    m_lastRoundEndS = 0;
    const session::TuningJob j = m_setup->job();
    ++m_jobSerial;
    m_runningJob = j;
    // The job appends to the log it resumes: its history is what the file holds now.
    m_resumeBytes = j.resume ? QFileInfo(j.logPath).size() : -1;
    m_lastLogPath = j.logPath;
    setAutotvmMode(j.autotvm);
    m_session->start(j);
    m_primaryStartMs = m_windowClock.elapsed();
    if (m_primaryTitle) m_primaryTitle->setText(sessionTitle(j));
    m_fleet->model()->setJobId(m_session->jobId());
    m_fleet->model()->setJobTracker(j.runner == QLatin1String("rpc") ? QStringLiteral("%1:%2").arg(j.trackerHost).arg(j.trackerPort)
                                                                     : QString());
    m_fleet->model()->clear();
}

void MainWindow::showFleetPanel() {
    m_bottomTabs->setCurrentWidget(m_fleet);
    // The strip needs a row per device: give the bottom row of the centre more height.
    if (m_outer) {  // several sessions: the timeline is a row of its own under them
        const int total = m_outer->height();
        m_outer->setSizes({total * 70 / 100, total * 30 / 100});
        return;
    }
    if (auto* central = m_central) {
        // Rows: the AutoTVM panel, the task table, the DAG/chart row, the bottom tabs (hidden rows keep their size).
        QList<int> sizes = central->sizes();
        if (sizes.size() != 4) return;
        if (m_autotvm->isVisible()) {
            const int total = sizes[0] + sizes[3];
            if (total > 0) central->setSizes({total * 65 / 100, sizes[1], sizes[2], total * 35 / 100});
        } else {
            const int total = sizes[1] + sizes[2] + sizes[3];
            if (total > 0) central->setSizes({sizes[0], total * 30 / 100, total * 35 / 100, total * 35 / 100});
        }
    }
}

void MainWindow::setAutotvmMode(bool on) {
    m_autotvm->setVisible(on);
    m_taskView->setVisible(!on);
    m_midRow->setVisible(!on);
}

void MainWindow::loadResumedHistory(const QList<session::TaskRow>& tasks) {
    const quint64 serial = m_jobSerial;
    session::loadTuningHistoryAsync(
        m_runningJob.logPath, tasks, m_runningJob.perRound, m_resumeBytes, this, [this, serial](const session::TuningHistory& h) {
            if (serial != m_jobSerial) return;  // another job started meanwhile
            if (!h.error.isEmpty()) {
                m_log->appendPlainText(tr("The history of %1 could not be read back: %2").arg(h.path, h.error));
                return;
            }
            if (h.measurements.isEmpty()) return;
            // Before the rows and points of this run, which may have arrived already.
            QList<session::MeasureRow> rows = h.measurements;
            models::MeasurementModel::spreadRoundTimes(rows, -std::numeric_limits<double>::infinity());
            m_measureModel->prepend(rows);
            m_chart->addHistory(rows, h.points);
            m_totalTrials += int(h.measurements.size());
            for (const auto& r : h.measurements)
                if (r.errorNo != 0) ++m_failedTrials;
            m_log->appendPlainText(tr("%n earlier measurement(s) read back from %1", nullptr, int(h.measurements.size())).arg(h.path));
            updateStatus();
        });
}

QString MainWindow::logText(const QString& engineText) const {
    QString text = expandTabs(engineText);
    if (m_pausedS >= 0.5) {
        // TVM's "Used time" is the time since tuning started; time spent paused was not used.
        static const QRegularExpression usedTime(QStringLiteral("Used time : (\\d+) s"));
        QString out;
        qsizetype last = 0;
        for (auto it = usedTime.globalMatch(text); it.hasNext();) {
            const QRegularExpressionMatch m = it.next();
            const int used = std::max(0, m.captured(1).toInt() - qRound(m_pausedS));
            out += QStringView(text).mid(last, m.capturedStart() - last) + QStringLiteral("Used time : %1 s").arg(used);
            last = m.capturedEnd();
        }
        text = out + QStringView(text).mid(last);
    }
    return text;
}

void MainWindow::onSessionState(int s) {
    const auto st = session::TuningSession::State(s);
    const bool idle = st == session::TuningSession::State::Idle;
    if (m_lastState == int(session::TuningSession::State::Paused) && st != session::TuningSession::State::Paused) {
        if (m_parked) m_pausedS += m_parkedClock.elapsed() / 1000.0;
        m_parked = false;
    }
    m_lastState = s;
    if (idle) m_taskModel->clearNext();  // stopped or failed: the scheduler picks nothing next
    if (idle) m_setup->refreshResumeOffer();  // the job just written can be continued
    m_start->setEnabled(idle && m_setup->isValid() && !m_session->benchmarking());
    m_bench->setEnabled(idle && m_setup->isValid() && !m_session->benchmarking());
    m_setup->setEnabled(idle && !m_session->benchmarking());
    m_pause->setEnabled(st == session::TuningSession::State::Running || st == session::TuningSession::State::Paused);
    m_stop->setEnabled(!idle && st != session::TuningSession::State::Stopping);
    m_pause->setText(st == session::TuningSession::State::Paused ? tr("Resume") : tr("Pause"));
    m_pause->setIcon(QIcon(st == session::TuningSession::State::Paused ? QStringLiteral(":/icons/start.svg")
                                                                        : QStringLiteral(":/icons/pause.svg")));
    updateStatus();
}

void MainWindow::updateStatus() {
    using State = session::TuningSession::State;
    QString text;
    switch (m_session->state()) {
        case State::Idle: text = m_finishedText.isEmpty() ? tr("Ready") : m_finishedText; break;
        case State::Running:
            text = (m_runningJob.autotvm ? m_autotvm->model()->rowCount() : m_taskModel->rowCount()) == 0
                       ? tr("Extracting tasks…")
                                                : tr("Tuning: %n trial(s) measured", nullptr, m_totalTrials);
            break;
        case State::Paused:
            // The session is Paused at once, but the round that was running goes on to its end.
            text = m_parked ? tr("Paused: %n trial(s) measured", nullptr, m_totalTrials)
                            : tr("Pausing after this round: %n trial(s) measured", nullptr, m_totalTrials);
            break;
        case State::Stopping: text = tr("Stopping after the current round…"); break;
    }
    if (m_failedTrials > 0 && m_session->state() != State::Idle) text += tr(" (%n failed)", nullptr, m_failedTrials);
    m_status->setText(text);
    if (m_estimatedMs >= 0)
        m_latencyLabel->setText(tr("Estimated total latency: %1 ms").arg(m_estimatedMs, 0, 'f', 3));
    else if (m_tasksWithCost > 0)
        m_latencyLabel->setText(tr("Warm-up: %1 of %2 tasks measured").arg(m_tasksWithCost).arg(m_taskModel->rowCount()));
    else
        m_latencyLabel->clear();
}

void MainWindow::selectTask(int taskId) {
    m_selectedTask = taskId;
    const session::TaskRow* t = m_taskModel->task(taskId);
    m_selectedBestMs = t ? t->bestMs : -1;
    m_chart->setSelectedTask(taskId);
    // Keep the table's current row in step when the selection comes from code.
    setCurrentTaskRow(m_taskView, m_taskProxy, taskId);
    m_session->requestDag(taskId);
}

LogInspector* MainWindow::openLogInspector(const QString& logPath) {
    // A separate window that closes with ours.
    auto* w = new LogInspector(this);
    w->setWindowFlag(Qt::Window);
    w->setAttribute(Qt::WA_DeleteOnClose);
    w->setWindowIcon(windowIcon());
    const QString jobLog = m_lastLogPath.isEmpty() ? m_setup->job().logPath : m_lastLogPath;
    // Distilled logs go to the session's folder (where its log is written), not beside the source.
    if (!jobLog.isEmpty()) w->setOutputFolder(QFileInfo(jobLog).absolutePath());
    w->show();
    // A log asked for by name is opened even when it is not there, so the inspector says so; the
    // job's own log only when it exists.
    if (!logPath.isEmpty())
        w->openLog(logPath);
    else if (!jobLog.isEmpty() && QFileInfo(jobLog).isFile())
        w->openLog(jobLog);
    return w;
}

QString MainWindow::statusText() const { return m_status->text(); }

void MainWindow::closeEvent(QCloseEvent* e) {
    for (SessionPage* page : m_pages) page->session()->stop();  // each page waits for its round when deleted
    if (m_session->state() != session::TuningSession::State::Idle) {
        // Stop cleanly and stay responsive meanwhile: the worker finishes its round (its records
        // are on disk), then tuningFinished closes the window.
        m_closeRequested = true;
        m_session->stop();
        m_status->setText(tr("Stopping after the current round, then closing…"));
        e->ignore();
        return;
    }
    m_session->shutdown();
    e->accept();
}

// ---- Several sessions (issue 21): pages beside the first session, one fleet timeline for all.

QStringList MainWindow::sessionLogPaths() const {
    QStringList out{m_setup->job().logPath};
    for (const SessionPage* page : m_pages) out.append(page->job().logPath);
    return out;
}

void MainWindow::ensureSessionRow() {
    if (m_sessionRow) return;
    // [first session | pages…] over the fleet timeline, which leaves the first session's tabs.
    m_outer = new QSplitter(Qt::Vertical, this);
    m_sessionRow = new QSplitter(Qt::Horizontal, m_outer);
    auto* first = new QWidget(m_sessionRow);
    auto* fl = new QVBoxLayout(first);
    fl->setContentsMargins(0, 0, 4, 0);
    m_primaryTitle = new QLabel(sessionTitle(m_session->state() == session::TuningSession::State::Idle ? m_setup->job() : m_runningJob), first);
    m_primaryTitle->setObjectName(QStringLiteral("SessionTitle"));
    QFont bold = m_primaryTitle->font();
    bold.setBold(true);
    m_primaryTitle->setFont(bold);
    fl->addWidget(m_primaryTitle);
    takeCentralWidget();
    fl->addWidget(m_central, 1);
    m_sessionRow->addWidget(first);
    m_outer->addWidget(m_sessionRow);
    m_outer->addWidget(m_fleet);  // out of the bottom tabs, where it may have been a hidden page
    m_fleet->show();
    m_outer->setStretchFactor(0, 3);
    m_outer->setStretchFactor(1, 2);
    setCentralWidget(m_outer);
}

SessionPage* MainWindow::addSession(session::TuningJob job) {
    const QStringList taken = sessionLogPaths();
    if (job.logPath.isEmpty() || taken.contains(job.logPath)) job.logPath = distinctLogPath(job, taken);
    ensureSessionRow();
    auto* page = new SessionPage(job, m_sessionRow);
    m_sessionRow->addWidget(page);
    QList<int> sizes(m_sessionRow->count(), 1000);
    m_sessionRow->setSizes(sizes);
    m_pages.append(page);
    // The page's steps on the first session's clock and job, its builds on a host row of its own.
    auto startedMs = std::make_shared<qint64>(-1);
    connect(page->session(), &session::TuningSession::stateChanged, this, [this, startedMs](session::TuningSession::State st) {
        if (st == session::TuningSession::State::Running && *startedMs < 0) *startedMs = m_windowClock.elapsed();
        if (st == session::TuningSession::State::Idle) *startedMs = -1;
    });
    // Named like the engine's "host" row of the first session (English, as device names are).
    const QString builder = QStringLiteral("host (session %1)").arg(m_pages.size() + 1);
    connect(page->session(), &session::TuningSession::fleetEventsAvailable, this,
            [this, startedMs, builder](QList<session::FleetEvent> events) {
                const double shiftS = m_primaryStartMs >= 0 && *startedMs >= 0 ? (*startedMs - m_primaryStartMs) / 1000.0 : 0;
                for (auto& e : events) {
                    e.jobId = m_fleet->model()->jobId();
                    e.startS += shiftS;
                    if (e.endS >= 0) e.endS += shiftS;
                    if (e.deviceKey == models::FleetModel::builderKey()) e.device = builder;
                }
                m_fleet->model()->addEvents(events);
            });
    return page;
}

void MainWindow::addSessionFromDialog() {
    // The job of the setup panel, for another target or device key, in a log of its own.
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Add session"));
    auto* setup = new SetupWidget(session::TuningSession::networkNames(), &session::TuningSession::validateTarget, &dialog);
    session::TuningJob job = m_setup->job();
    job.logPath = distinctLogPath(job, sessionLogPaths());
    setup->setJob(job);
    auto* box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    connect(box, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(box, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    connect(setup, &SetupWidget::validityChanged, box->button(QDialogButtonBox::Ok), &QWidget::setEnabled);
    auto* scroll = new QScrollArea(&dialog);
    scroll->setWidget(setup);
    scroll->setWidgetResizable(true);
    auto* l = new QVBoxLayout(&dialog);
    l->addWidget(scroll, 1);
    l->addWidget(box);
    dialog.resize(420, 640);
    if (dialog.exec() != QDialog::Accepted || !setup->isValid() || !setup->confirmStart()) return;
    addSession(setup->job())->start();
}

}  // namespace tb::widgets
