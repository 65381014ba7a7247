// SPDX-License-Identifier: Apache-2.0
#include "widgets/sessionpage.h"

#include <QEvent>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "app/session/tuningsession.h"
#include "widgets/dagview.h"
#include "widgets/latencychart.h"
#include "widgets/models/tasktablemodel.h"
#include "widgets/workloaddelegate.h"

namespace tb::widgets {

void setUpTaskView(QTableView* view, QSortFilterProxyModel* proxy) {
    view->setObjectName(QStringLiteral("TaskTable"));
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->sortByColumn(models::TaskTableModel::IdColumn, Qt::AscendingOrder);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setAlternatingRowColors(true);
    view->verticalHeader()->hide();
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->horizontalHeader()->setSectionResizeMode(models::TaskTableModel::DescriptionColumn, QHeaderView::Stretch);
    view->setWordWrap(false);
    // "vm_mod_fused_nn_conv2d_add_nn_relu  1×56×56×64, 3×3×64×64 → 1×56×56×64": the delegate
    // shortens the middle of the name first; the shapes tell the tasks apart.
    view->setTextElideMode(Qt::ElideMiddle);
    view->setItemDelegateForColumn(
        models::TaskTableModel::DescriptionColumn,
        new WorkloadDelegate(models::TaskTableModel::DescriptionRole, models::TaskTableModel::ShapesRole, false, view));
}

void setCurrentTaskRow(QTableView* view, QSortFilterProxyModel* proxy, int taskId) {
    for (int r = 0; r < proxy->rowCount(); ++r) {
        const QModelIndex i = proxy->index(r, 0);
        if (proxy->data(i, models::TaskTableModel::TaskIdRole).toInt() != taskId) continue;
        if (view->currentIndex().row() != r)
            view->selectionModel()->setCurrentIndex(i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        return;
    }
}

namespace {
// Where a job measures, as a name part and a title part: the device key behind a tracker, or the host.
QString placeOf(const session::TuningJob& job) {
    return job.runner == QLatin1String("rpc") && !job.deviceKey.isEmpty() ? job.deviceKey : QStringLiteral("host");
}
}  // namespace

QString sessionTitle(const session::TuningJob& job) {
    const QString what = job.onnxPath.isEmpty() ? job.network : QFileInfo(job.onnxPath).fileName();
    const QString target = job.target.isEmpty() ? SessionPage::tr("this CPU") : job.target;
    return QStringLiteral("%1 · %2 · %3").arg(what, placeOf(job), target);
}

QString distinctLogPath(const session::TuningJob& job, const QStringList& taken) {
    const QFileInfo fi(job.logPath.isEmpty() ? QStringLiteral("tunebench_%1.json").arg(job.network) : job.logPath);
    const QString dir = fi.path() == QLatin1String(".") ? QString() : fi.path() + QLatin1Char('/');
    const QString suffix = fi.completeSuffix().isEmpty() ? QStringLiteral("json") : fi.completeSuffix();
    const QString place = placeOf(job);
    QString stem = fi.baseName();
    if (!stem.endsWith(QLatin1Char('_') + place)) stem += QLatin1Char('_') + place;
    QString path = dir + stem + QLatin1Char('.') + suffix;
    for (int n = 2; taken.contains(path); ++n) path = QStringLiteral("%1%2_%3.%4").arg(dir, stem).arg(n).arg(suffix);
    return path;
}

SessionPage::SessionPage(const session::TuningJob& job, QWidget* parent)
    : QWidget(parent), m_job(job), m_session(new session::TuningSession(this)) {
    setObjectName(QStringLiteral("SessionPage"));
    m_taskModel = new models::TaskTableModel(this);
    m_taskProxy = new QSortFilterProxyModel(this);
    m_taskProxy->setSourceModel(m_taskModel);
    m_taskProxy->setSortRole(models::TaskTableModel::SortRole);
    m_taskView = new QTableView(this);
    setUpTaskView(m_taskView, m_taskProxy);
    m_chart = new LatencyChart(this);
    m_dagView = new DagView(this);
    m_log = new QPlainTextEdit(this);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(20000);
    m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_log->setLineWrapMode(QPlainTextEdit::NoWrap);

    // Header: what this session tunes and where, how far it is, its own Start and Stop.
    m_title = new QLabel(sessionTitle(job), this);
    m_title->setObjectName(QStringLiteral("SessionTitle"));
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_title->setToolTip(tr("Log: %1").arg(job.logPath));
    m_status = new QLabel(this);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progress->setMaximumWidth(120);
    m_start = new QPushButton(QIcon(QStringLiteral(":/icons/start.svg")), QString(), this);
    m_stop = new QPushButton(QIcon(QStringLiteral(":/icons/stop.svg")), QString(), this);
    auto* header = new QHBoxLayout;
    header->addWidget(m_title, 1);
    header->addWidget(m_start);
    header->addWidget(m_stop);
    auto* statusRow = new QHBoxLayout;
    statusRow->addWidget(m_status, 1);
    statusRow->addWidget(m_progress);

    // The selected task's DAG behind the latency chart: a page is half a window wide.
    auto* views = new QTabWidget(this);
    views->setObjectName(QStringLiteral("SessionViews"));
    views->addTab(m_chart, QString());
    views->addTab(m_dagView, QString());
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_taskView);
    split->addWidget(views);
    split->addWidget(m_log);
    split->setSizes({300, 420, 160});
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(4, 0, 0, 0);
    l->addLayout(header);
    l->addLayout(statusRow);
    l->addWidget(split, 1);

    using S = session::TuningSession;
    connect(m_start, &QPushButton::clicked, this, &SessionPage::start);
    connect(m_stop, &QPushButton::clicked, m_session, &S::stop);
    connect(m_session, &S::stateChanged, this, [this](S::State st) {
        if (st == S::State::Idle) m_taskModel->clearNext();
        m_start->setEnabled(st == S::State::Idle);
        m_stop->setEnabled(st == S::State::Running || st == S::State::Paused);
        updateStatus();
    });
    connect(m_session, &S::tasksAdded, this, [this](const QList<session::TaskRow>& rows) {
        m_taskModel->setTasks(rows);
        if (!rows.isEmpty()) selectTask(rows.first().id);
        updateStatus();
    });
    connect(m_session, &S::tasksUpdated, this, [this](const QList<session::TaskRow>& rows) {
        m_taskModel->updateTasks(rows);
        if (const session::TaskRow* t = m_taskModel->task(m_selectedTask); t && t->bestMs >= 0 && t->bestMs != m_selectedBestMs) {
            m_selectedBestMs = t->bestMs;
            m_session->requestDag(m_selectedTask);
        }
    });
    connect(m_session, &S::measurementsAvailable, this, [this](const QList<session::MeasureRow>& rows) {
        m_chart->addMeasurements(rows);
        m_totalTrials += int(rows.size());
        updateStatus();
    });
    connect(m_session, &S::latencyPointAdded, this, [this](const session::LatencyPoint& p) {
        m_chart->addLatencyPoint(p);
        m_estimatedMs = p.estimatedMs;
        updateStatus();
    });
    connect(m_session, &S::progressChanged, m_progress, &QProgressBar::setValue);
    connect(m_session, &S::dagAvailable, this, [this](const session::DagSnapshot& d) {
        if (d.taskId == m_selectedTask) m_dagView->setDag(d);
    });
    connect(m_session, &S::logMessage, m_log, &QPlainTextEdit::appendPlainText);
    connect(m_session, &S::tuningFinished, this, [this](const QString& s) {
        m_log->appendPlainText(s);
        m_finishedText = s.section(QLatin1Char('\n'), 0, 0);
        updateStatus();
    });
    connect(m_session, &S::tuningFailed, this, [this](const QString& msg) {
        m_log->appendPlainText(tr("Tuning failed: %1").arg(msg));
        m_finishedText = tr("Tuning failed: %1").arg(msg);
        updateStatus();
    });
    connect(m_taskView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
        if (!cur.isValid()) return;
        const int id = m_taskProxy->data(cur, models::TaskTableModel::TaskIdRole).toInt();
        if (id != m_selectedTask) selectTask(id);
    });
    m_stop->setEnabled(false);
    retranslate();
}

SessionPage::~SessionPage() { m_session->shutdown(); }

bool SessionPage::isIdle() const { return m_session->state() == session::TuningSession::State::Idle; }

void SessionPage::start() {
    if (!isIdle()) return;
    m_totalTrials = 0;
    m_estimatedMs = -1;
    m_selectedTask = -1;
    m_selectedBestMs = -1;
    m_finishedText.clear();
    m_progress->setValue(0);
    m_log->clear();
    m_taskModel->clear();
    m_chart->clear();
    m_dagView->clear();
    m_session->start(m_job);
}

void SessionPage::selectTask(int taskId) {
    m_selectedTask = taskId;
    const session::TaskRow* t = m_taskModel->task(taskId);
    m_selectedBestMs = t ? t->bestMs : -1;
    m_chart->setSelectedTask(taskId);
    setCurrentTaskRow(m_taskView, m_taskProxy, taskId);
    m_session->requestDag(taskId);
}

void SessionPage::setJob(const session::TuningJob& job) {
    m_job = job;
    m_title->setText(sessionTitle(job));
    m_title->setToolTip(tr("Log: %1").arg(job.logPath));
}

QString SessionPage::statusText() const { return m_status->text(); }

void SessionPage::updateStatus() {
    using State = session::TuningSession::State;
    QString text;
    switch (m_session->state()) {
        case State::Idle: text = m_finishedText.isEmpty() ? tr("Ready") : m_finishedText; break;
        case State::Running:
        case State::Paused:
            text = m_taskModel->rowCount() == 0 ? tr("Extracting tasks…")
                                                : tr("Tuning: %n trial(s) measured", nullptr, m_totalTrials);
            break;
        case State::Stopping: text = tr("Stopping after the current round…"); break;
    }
    if (m_estimatedMs >= 0) text += tr(" · estimated total latency %1 ms").arg(m_estimatedMs, 0, 'f', 3);
    m_status->setText(text);
}

void SessionPage::retranslate() {
    m_title->setText(sessionTitle(m_job));
    m_start->setText(tr("Start"));
    m_stop->setText(tr("Stop"));
    m_stop->setToolTip(tr("Stop this session after its current round (the others go on)"));
    if (auto* views = findChild<QTabWidget*>(QStringLiteral("SessionViews"))) {
        views->setTabText(0, tr("Latency"));
        views->setTabText(1, tr("Compute DAG"));
    }
    m_taskModel->retranslate();
    updateStatus();
}

void SessionPage::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

}  // namespace tb::widgets
