// SPDX-License-Identifier: Apache-2.0
#include "widgets/dagview.h"

#include <QEvent>
#include <QFontDatabase>
#include <QGraphicsPathItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QHash>
#include <QLabel>
#include <QPainterPath>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QTextCursor>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>
#include <vector>

#include "widgets/models/workloadtext.h"

namespace tb::widgets {

namespace {
QPlainTextEdit* codeView(QWidget* parent) {
    auto* e = new QPlainTextEdit(parent);
    e->setReadOnly(true);
    e->setLineWrapMode(QPlainTextEdit::NoWrap);
    e->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return e;
}
}  // namespace

DagView::DagView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    m_header = new QLabel(this);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setContentsMargins(4, 2, 4, 2);
    // A task's description and shapes run long: wrap them rather than widen the whole window.
    m_header->setWordWrap(true);
    layout->addWidget(m_header);
    m_tabs = new QTabWidget(this);
    m_scene = new QGraphicsScene(this);
    m_view = new QGraphicsView(m_scene, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setDragMode(QGraphicsView::ScrollHandDrag);
    m_text = codeView(this);
    m_state = codeView(this);
    // The loop nest, and for GPU tasks the kernel source beside it.
    auto* loopSplit = m_loopSplit = new QSplitter(Qt::Horizontal, this);
    m_loops = codeView(loopSplit);
    m_kernelPane = new QWidget(loopSplit);
    m_kernelPane->setObjectName(QStringLiteral("KernelPane"));
    auto* kernelLayout = new QVBoxLayout(m_kernelPane);
    kernelLayout->setContentsMargins(0, 0, 0, 0);
    kernelLayout->setSpacing(2);
    m_launch = new QLabel(m_kernelPane);
    m_launch->setObjectName(QStringLiteral("KernelLaunches"));
    m_launch->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_launch->setContentsMargins(4, 2, 4, 2);
    m_launch->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    // Wrapped: one long launch line must not widen the pane and squeeze the loop nest beside it.
    m_launch->setWordWrap(true);
    m_kernel = codeView(m_kernelPane);
    m_kernel->setObjectName(QStringLiteral("KernelSource"));
    kernelLayout->addWidget(m_launch);
    kernelLayout->addWidget(m_kernel, 1);
    loopSplit->addWidget(m_loops);
    loopSplit->addWidget(m_kernelPane);
    loopSplit->setStretchFactor(0, 1);
    loopSplit->setStretchFactor(1, 1);
    m_kernelPane->hide();
    m_ir = codeView(this);
    m_asm = codeView(this);
    for (QWidget* w : std::initializer_list<QWidget*>{m_view, m_text, m_state, loopSplit, m_ir, m_asm}) m_tabs->addTab(w, QString());
    layout->addWidget(m_tabs, 1);
    connect(m_tabs, &QTabWidget::currentChanged, this, &DagView::fillTab);
    retranslate();
}

void DagView::retranslate() {
    m_tabs->setTabText(GraphTab, tr("Graph"));
    m_tabs->setTabText(DagTextTab, tr("Compute DAG"));
    m_tabs->setTabText(StateTab, tr("Loop state"));
    m_tabs->setTabText(LlvmIrTab, tr("LLVM IR"));
    m_tabs->setTabText(AssemblyTab, tr("Assembly"));
    fillTexts();
}

void DagView::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

void DagView::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    fitGraph();
}

void DagView::clear() {
    m_dag = {};
    m_scene->clear();
    m_nodes = m_edges = 0;
    fillTexts();
}

void DagView::fillTexts() {
    if (m_dag.taskId < 0) {
        m_header->setText(tr("No task selected"));
    } else {
        QString head = tr("Task %1: %2").arg(m_dag.taskId).arg(models::workloadLabel(m_dag.description, m_dag.workloadKey));
        if (m_dag.bestMs >= 0) head += tr(" — best %1 ms").arg(m_dag.bestMs, 0, 'f', 4);
        m_header->setText(head);
        m_header->setToolTip(m_dag.workloadKey);
    }
    // LLVM IR and assembly run to hundreds of kilobytes: laying them out costs the GUI thread tens
    // of milliseconds, so a text view is filled only when its tab is shown.
    m_stale = {true, true, true, true, true};
    const bool gpu = !m_dag.kernelLanguage.isEmpty();
    m_tabs->setTabText(LoopNestTab, gpu ? tr("Loop nest + kernel source") : tr("Loop nest"));
    // GPU code is not LLVM's: those tabs have nothing to show.
    m_tabs->setTabVisible(LlvmIrTab, !gpu);
    m_tabs->setTabVisible(AssemblyTab, !gpu);
    m_kernelPane->setVisible(gpu);
    fillTab(m_tabs->currentIndex());
}

void DagView::fillKernelPane() {
    if (m_dag.kernelLanguage.isEmpty()) {
        m_launch->clear();
        m_kernel->clear();
        return;
    }
    QString head = m_dag.kernelFromDefault ? tr("%1 of the GPU default schedule (no measured schedule yet)").arg(m_dag.kernelLanguage)
                                           : tr("%1 of the best schedule").arg(m_dag.kernelLanguage);
    head += QLatin1Char('\n') + tr("%n launch(es), in order:", nullptr, int(m_dag.launches.size()));
    for (const QString& l : m_dag.launches) head += QStringLiteral("\n  ") + l;
    m_launch->setText(head);
    // The pane appears beside a splitter laid out without it: once the tab has its width, give the
    // loop nest two fifths and the (longer-lined) source the rest.
    if (const int w = m_loopSplit->width(); !m_loopSplitPlaced && w > 0) {
        m_loopSplit->setSizes({w * 2 / 5, w - w * 2 / 5});
        m_loopSplitPlaced = true;
    }
    m_kernel->setPlainText(m_dag.kernelSource.isEmpty() ? tr("(the kernels could not be generated: %1)").arg(m_dag.error)
                                                        : m_dag.kernelSource);
    // Open on the first kernel, past the integer helpers every translation unit starts with: from
    // the end back to its line puts that line at the top.
    QTextCursor first = m_kernel->document()->find(m_dag.kernelEntries.value(0));
    if (!m_dag.kernelEntries.isEmpty() && !first.isNull()) {
        first.movePosition(QTextCursor::StartOfBlock);
        m_kernel->moveCursor(QTextCursor::End);
        m_kernel->setTextCursor(first);
        m_kernel->ensureCursorVisible();
    }
}

void DagView::fillTab(int tab) {
    if (tab < DagTextTab || tab > AssemblyTab || !m_stale[size_t(tab - DagTextTab)]) return;
    m_stale[size_t(tab - DagTextTab)] = false;
    QPlainTextEdit* view = textView(tab);
    if (m_dag.taskId < 0) {
        view->clear();
        return;
    }
    const QString none = tr("(no measured schedule yet)");
    const QString failed = m_dag.error.isEmpty() ? QString() : tr("(the best schedule could not be compiled: %1)").arg(m_dag.error);
    const QString& fallback = failed.isEmpty() ? none : failed;
    switch (tab) {
        case DagTextTab: view->setPlainText(m_dag.dagText); break;
        case StateTab: view->setPlainText(m_dag.stateText.isEmpty() ? none : m_dag.stateText); break;
        case LoopNestTab:
            view->setPlainText(m_dag.loopNest.isEmpty() ? fallback : m_dag.loopNest);
            fillKernelPane();
            break;
        case LlvmIrTab: view->setPlainText(m_dag.llvmIr.isEmpty() ? fallback : m_dag.llvmIr); break;
        case AssemblyTab: view->setPlainText(m_dag.assembly.isEmpty() ? fallback : m_dag.assembly); break;
    }
}

QPlainTextEdit* DagView::textView(int tab) const {
    switch (tab) {
        case DagTextTab: return m_text;
        case StateTab: return m_state;
        case LoopNestTab: return m_loops;
        case LlvmIrTab: return m_ir;
        default: return m_asm;
    }
}

void DagView::setDag(const session::DagSnapshot& dag) {
    // Keep the reader's place when the same task is refreshed with a better schedule.
    const bool sameTask = dag.taskId == m_dag.taskId && dag.jobId == m_dag.jobId;
    m_dag = dag;
    fillTexts();
    if (sameTask && m_nodes > 0) return;  // the graph of a task never changes
    m_scene->clear();
    m_nodes = m_edges = 0;
    const int n = int(dag.stages.size());
    if (n <= 0) return;
    // Layer = longest path from a source; stages arrive in topological (stage) order, so one pass.
    std::vector<int> layer(size_t(n), 0);
    for (const auto& [src, dst] : dag.edges)
        if (src >= 0 && dst >= 0 && src < n && dst < n) layer[dst] = std::max(layer[dst], layer[src] + 1);
    // A placeholder sits just above its first reader, not at the very top.
    for (int i = 0; i < n; ++i) {
        if (!dag.isPlaceholder.value(i)) continue;
        int firstReader = -1;
        for (const auto& [src, dst] : dag.edges)
            if (src == i && dst >= 0 && dst < n && (firstReader < 0 || layer[dst] < layer[firstReader])) firstReader = dst;
        if (firstReader >= 0) layer[i] = std::max(0, layer[firstReader] - 1);
    }
    std::vector<int> slot(size_t(n), 0);
    QHash<int, int> used;
    int widest = 1;
    for (int i = 0; i < n; ++i) {
        slot[i] = used[layer[i]]++;
        widest = std::max(widest, used[layer[i]]);
    }
    const QPalette pal = palette();
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    std::vector<QRectF> boxes(static_cast<size_t>(n));
    const double w = 200, h = 40, dx = 230, dy = 80;
    for (int i = 0; i < n; ++i) {
        // Centre each layer over the widest one.
        const double offset = (widest - used[layer[i]]) * dx / 2;
        QRectF r(offset + slot[i] * dx, layer[i] * dy, w, h);
        boxes[i] = r;
        const bool ph = dag.isPlaceholder.value(i);
        auto* box = m_scene->addRect(r, QPen(QColor(90, 90, 90)), QBrush(ph ? QColor(222, 234, 250) : QColor(252, 232, 204)));
        box->setToolTip(dag.stageDetails.value(i));
        box->setData(0, dag.stages[i]);
        QString name = dag.stages[i];
        if (name.size() > 24) name = name.left(22) + QStringLiteral("…");
        auto* label = m_scene->addSimpleText(name, mono);
        label->setBrush(QColor(20, 20, 20));
        label->setToolTip(dag.stageDetails.value(i));
        const QRectF lb = label->boundingRect();
        label->setPos(r.center() - QPointF(lb.width() / 2, lb.height() / 2));
        ++m_nodes;
    }
    const QColor edge = pal.color(QPalette::WindowText);
    for (const auto& [src, dst] : dag.edges) {
        if (src < 0 || dst < 0 || src >= n || dst >= n) continue;
        const QPointF a(boxes[src].center().x(), boxes[src].bottom());
        const QPointF b(boxes[dst].center().x(), boxes[dst].top());
        QPainterPath path(a);
        path.cubicTo(a + QPointF(0, 25), b - QPointF(0, 25), b);
        m_scene->addPath(path, QPen(edge, 1.4));
        QPolygonF head;
        head << b << b + QPointF(-5, -9) << b + QPointF(5, -9);
        m_scene->addPolygon(head, QPen(edge), QBrush(edge));
        ++m_edges;
    }
    m_scene->setSceneRect(m_scene->itemsBoundingRect().adjusted(-20, -20, 20, 20));
    fitGraph();
}

void DagView::fitGraph() {
    if (m_nodes == 0) return;
    // Shrink big DAGs to fit, never magnify small ones.
    m_view->resetTransform();
    const QRectF scene = m_scene->sceneRect();
    const QSize vp = m_view->viewport()->size();
    // Below half size the labels become unreadable: scroll instead.
    const double scale = std::max(0.5, std::min({1.0, vp.width() / scene.width(), vp.height() / scene.height()}));
    if (scale < 1.0) m_view->scale(scale, scale);
    m_view->centerOn(scene.center());
}

}  // namespace tb::widgets
