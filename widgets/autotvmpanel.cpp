// SPDX-License-Identifier: Apache-2.0
#include "widgets/autotvmpanel.h"

#include <QApplication>
#include <QEvent>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/chartaxes.h"
#include "widgets/dagview.h"
#include "widgets/models/autotvmtaskmodel.h"
#include "widgets/qcustomplot_include.h"

namespace tb::widgets {

namespace {

/// Draws the progress column as a progress bar with "trials/n_trial" on it.
class ProgressDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        QStyleOptionViewItem base = option;
        initStyleOption(&base, index);
        base.text.clear();
        QStyle* style = option.widget ? option.widget->style() : QApplication::style();
        style->drawControl(QStyle::CE_ItemViewItem, &base, painter, option.widget);  // selection background
        QStyleOptionProgressBar bar;
        bar.rect = option.rect.adjusted(2, 2, -2, -2);
        bar.minimum = 0;
        bar.maximum = 1000;
        bar.progress = int(1000 * index.data(models::AutotvmTaskModel::ProgressRole).toDouble());
        bar.text = index.data(Qt::DisplayRole).toString();
        bar.textVisible = true;
        bar.textAlignment = Qt::AlignCenter;
        bar.state = option.state | QStyle::State_Horizontal;
        bar.palette = option.palette;
        style->drawControl(QStyle::CE_ProgressBar, &bar, painter, option.widget);
    }
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        // Room for the text on the bar and the bar's frame: "1000/1000" must not be cut.
        const QSize base = QStyledItemDelegate::sizeHint(option, index);
        return {std::max(base.width() + 16, option.fontMetrics.horizontalAdvance(QStringLiteral("0000/0000")) + 16),
                base.height()};
    }
};

}  // namespace

AutotvmPanel::AutotvmPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("AutotvmPanel"));
    m_model = new models::AutotvmTaskModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(models::AutotvmTaskModel::SortRole);

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("AutotvmTaskTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(models::AutotvmTaskModel::IdColumn, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(models::AutotvmTaskModel::ArgsColumn, QHeaderView::Stretch);
    m_table->setItemDelegateForColumn(models::AutotvmTaskModel::ProgressColumn, new ProgressDelegate(m_table));

    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("AutotvmChart"));
    m_plot->setMinimumSize(240, 180);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new IntegerAxisTicker));
    // Hovering a trial tells its config and, on a VTA, the simulator's counters of that candidate.
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* ev) {
        const int trial = int(std::lround(m_plot->xAxis->pixelToCoord(ev->position().x()))) - 1;
        const QString text = trialDescription(m_selected, trial);
        if (text.isEmpty()) QToolTip::hideText();
        else QToolTip::showText(ev->globalPosition().toPoint(), text, m_plot);
    });
    m_plot->legend->setVisible(true);
    // The legend in one row under the axes (as the latency chart's): inside them it hid the last trials.
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setBorderPen(Qt::NoPen);
    QCPGraph* measured = m_plot->addGraph();
    measured->setLineStyle(QCPGraph::lsNone);
    measured->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(150, 150, 150), 5));
    QCPGraph* best = m_plot->addGraph();
    best->setPen(QPen(QColor(30, 110, 200), 2));
    best->setLineStyle(QCPGraph::lsStepLeft);
    QCPGraph* failed = m_plot->addGraph();
    failed->setLineStyle(QCPGraph::lsNone);
    failed->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QColor(210, 40, 40), 6));

    auto* entityPane = new QWidget(this);
    auto* el = new QVBoxLayout(entityPane);
    el->setContentsMargins(0, 0, 0, 0);
    el->setSpacing(2);
    m_entityTitle = new QLabel(entityPane);
    m_entityTitle->setWordWrap(true);
    m_entityTitle->setContentsMargins(4, 2, 4, 2);
    m_entity = new QPlainTextEdit(entityPane);
    m_entity->setObjectName(QStringLiteral("AutotvmEntity"));
    m_entity->setReadOnly(true);
    m_entity->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    el->addWidget(m_entityTitle);
    el->addWidget(m_entity, 1);

    m_dag = new DagView(this);
    m_dag->tabs()->setCurrentIndex(DagView::LoopNestTab);

    auto* bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(m_plot);
    bottom->addWidget(entityPane);
    bottom->addWidget(m_dag);
    bottom->setStretchFactor(0, 3);
    bottom->setStretchFactor(1, 2);
    bottom->setStretchFactor(2, 4);
    bottom->setSizes({450, 300, 600});
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(bottom);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({300, 450});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
        if (!cur.isValid()) return;
        const int id = m_proxy->data(cur, models::AutotvmTaskModel::TaskIdRole).toInt();
        if (id != m_selected) selectTask(id);
    });
    retranslate();
}

void AutotvmPanel::retranslate() {
    m_model->retranslate();
    m_plot->xAxis->setLabel(tr("Trials of the task"));
    m_plot->graph(0)->setName(tr("measured config"));
    m_plot->graph(1)->setName(tr("best so far"));
    m_plot->graph(2)->setName(tr("failed"));
    showEntity();
    replot();
}

void AutotvmPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

void AutotvmPanel::clear() {
    m_model->clear();
    m_trials.clear();
    m_selected = -1;
    m_shownBest = -1;
    m_dag->clear();
    showEntity();
    replot();
}

void AutotvmPanel::setTasks(const QList<session::AutotvmTaskRow>& rows) {
    clear();
    m_model->setTasks(rows);
    if (!rows.isEmpty()) selectTask(rows.first().id);
}

void AutotvmPanel::updateTasks(const QList<session::AutotvmTaskRow>& rows) {
    m_model->updateTasks(rows);
    for (const auto& r : rows) {
        if (r.id != m_selected) continue;
        showEntity();
        if (r.bestIndex >= 0 && r.bestIndex != m_shownBest) {
            m_shownBest = r.bestIndex;
            Q_EMIT dagRequested(r.id);
        }
    }
}

void AutotvmPanel::addTrials(const QList<session::AutotvmTrial>& trials) {
    bool selected = false;
    for (const auto& t : trials) {
        m_trials[t.taskId].append(t);
        selected = selected || t.taskId == m_selected;
    }
    if (selected) replot();
}

void AutotvmPanel::setDag(const session::DagSnapshot& dag) {
    if (dag.taskId != m_selected) return;
    const int tab = m_dag->tabs()->currentIndex();
    m_dag->setDag(dag);
    m_dag->tabs()->setCurrentIndex(tab);
}

void AutotvmPanel::selectTask(int taskId) {
    m_selected = taskId;
    m_shownBest = -1;
    for (int r = 0; r < m_proxy->rowCount(); ++r) {
        const QModelIndex i = m_proxy->index(r, 0);
        if (m_proxy->data(i, models::AutotvmTaskModel::TaskIdRole).toInt() == taskId) {
            if (m_table->currentIndex().row() != r) m_table->setCurrentIndex(i);
            break;
        }
    }
    m_dag->clear();
    showEntity();
    replot();
    if (const session::AutotvmTaskRow* t = m_model->task(taskId); t && t->bestIndex >= 0) {
        m_shownBest = t->bestIndex;
        Q_EMIT dagRequested(taskId);
    }
}

QString AutotvmPanel::entityText() const { return m_entity->toPlainText(); }

void AutotvmPanel::showEntity() {
    const session::AutotvmTaskRow* t = m_model->task(m_selected);
    if (!t) {
        m_entityTitle->setText(tr("Best config"));
        m_entity->clear();
        return;
    }
    if (t->bestIndex < 0) {
        m_entityTitle->setText(tr("Task %1 %2: no valid config yet").arg(t->id).arg(t->taskName));
        m_entity->setPlainText(t->error);
        return;
    }
    m_entityTitle->setText((t->simulated ? tr("Task %1 %2: best config #%3 of %4, trial %5, %6 GOPS (simulated)")
                                         : tr("Task %1 %2: best config #%3 of %4, trial %5, %6 GFLOPS"))
                               .arg(t->id)
                               .arg(t->taskName)
                               .arg(t->bestIndex)
                               .arg(t->spaceSize)
                               .arg(t->bestTrial + 1)
                               .arg(t->bestGflops, 0, 'f', 2));
    QString text = t->bestKnobs.join(QLatin1Char('\n')) + QStringLiteral("\n\n") + t->bestConfig;
    if (!t->bestCounters.isEmpty()) {
        // The VTA simulator's counters of that config, as TVM's vta.testing.simulator.stats() names them.
        text += QStringLiteral("\n\n") + tr("VTA simulator counters (one run):");
        for (auto it = t->bestCounters.cbegin(); it != t->bestCounters.cend(); ++it)
            text += QStringLiteral("\n  %1 = %2").arg(it.key(), -18).arg(QLocale::c().toString(it.value()));
    }
    if (m_entity->toPlainText() != text) m_entity->setPlainText(text);
}

QString AutotvmPanel::trialDescription(int taskId, int trial) const {
    const session::AutotvmTaskRow* t = m_model->task(taskId);
    for (const auto& m : m_trials.value(taskId)) {
        if (m.trial != trial) continue;
        QString text = m.errorNo != 0 ? tr("Trial %1: config #%2 failed (error_no %3)").arg(trial + 1).arg(m.index).arg(m.errorNo)
                       : t && t->simulated
                           ? tr("Trial %1: config #%2, %3 GOPS (simulated)").arg(trial + 1).arg(m.index).arg(m.gflops, 0, 'f', 2)
                           : tr("Trial %1: config #%2, %3 GFLOPS").arg(trial + 1).arg(m.index).arg(m.gflops, 0, 'f', 2);
        for (auto it = m.counters.cbegin(); it != m.counters.cend(); ++it)
            text += QStringLiteral("\n%1 = %2").arg(it.key(), QLocale::c().toString(it.value()));
        return text;
    }
    return {};
}

int AutotvmPanel::chartPointCount() const {
    int n = 0;
    for (int g = 0; g < m_plot->graphCount(); ++g)
        if (g != 1) n += m_plot->graph(g)->dataCount();  // the measured and failed points
    return n;
}

void AutotvmPanel::replot() {
    // VTA tasks are measured on the simulator: their speeds are simulated GOPS.
    const session::AutotvmTaskRow* sel = m_model->task(m_selected);
    m_plot->yAxis->setLabel(sel && sel->simulated ? tr("GOPS (simulated)") : tr("GFLOPS"));
    QVector<double> x, y, bx, by, fx, fy;
    double ymax = 0;
    for (const auto& t : m_trials.value(m_selected)) {
        const double trial = t.trial + 1;
        if (t.errorNo == 0) {
            x.append(trial);
            y.append(t.gflops);
        } else {
            fx.append(trial);
            fy.append(0);
        }
        bx.append(trial);
        by.append(t.bestGflops);
        ymax = std::max(ymax, t.bestGflops);
    }
    m_plot->graph(0)->setData(x, y, true);
    m_plot->graph(1)->setData(bx, by, true);
    m_plot->graph(2)->setData(fx, fy, true);
    const session::AutotvmTaskRow* t = m_model->task(m_selected);
    const double xmax = std::max<double>(t ? t->nTrial : 1, bx.isEmpty() ? 1 : bx.last());
    setPaddedRange(m_plot->xAxis, 1, std::max(2.0, xmax));
    setPaddedRange(m_plot->yAxis, 0, ymax > 0 ? ymax : 1, 0.06, 1.0, 0);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace tb::widgets
