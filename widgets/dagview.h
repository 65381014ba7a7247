// SPDX-License-Identifier: Apache-2.0
#pragma once
// The selected task's compute DAG, drawn as a graph (stages as nodes, reads as edges, layered by
// depth), beside its TVM text and the best schedule's loop state, loop nest, LLVM IR and assembly.
// For a GPU target the loop nest tab splits: the kernels' loop nests on the left, and beside them
// the kernel source the device compiles (OpenCL C or CUDA C, from the same lowering the tuner
// measures) with each launch's grid and block, so a schedule can be read as the code it becomes.

#include <QWidget>

#include <array>

#include "app/session/snapshots.h"

class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QPlainTextEdit;
class QSplitter;
class QTabWidget;

namespace tb::widgets {

class DagView : public QWidget {
    Q_OBJECT
public:
    enum Tab { GraphTab, DagTextTab, StateTab, LoopNestTab, LlvmIrTab, AssemblyTab };

    explicit DagView(QWidget* parent = nullptr);
    void setDag(const session::DagSnapshot& dag);
    void clear();
    const session::DagSnapshot& dag() const { return m_dag; }
    /// Number of stage nodes and edges drawn (for tests).
    int nodeCount() const { return m_nodes; }
    int edgeCount() const { return m_edges; }
    QTabWidget* tabs() const { return m_tabs; }
    /// The loop nest text (the left part of the loop nest tab).
    QPlainTextEdit* loopNestView() const { return m_loops; }
    /// The kernel source pane beside the loop nest (shown for GPU tasks only) and its launch list.
    QPlainTextEdit* kernelSourceView() const { return m_kernel; }
    QLabel* kernelLaunchLabel() const { return m_launch; }
    QWidget* kernelPane() const { return m_kernelPane; }
    QGraphicsScene* scene() const { return m_scene; }

protected:
    void changeEvent(QEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

private:
    void retranslate();
    void fillTexts();
    void fillTab(int tab);
    void fillKernelPane();
    QPlainTextEdit* textView(int tab) const;
    void fitGraph();

    session::DagSnapshot m_dag;
    QLabel* m_header;
    QTabWidget* m_tabs;
    QGraphicsScene* m_scene;
    QGraphicsView* m_view;
    QPlainTextEdit* m_text;
    QPlainTextEdit* m_state;
    QPlainTextEdit* m_loops;
    QSplitter* m_loopSplit;
    bool m_loopSplitPlaced = false;  // the kernel pane got its share of the width once
    QWidget* m_kernelPane;
    QLabel* m_launch;
    QPlainTextEdit* m_kernel;
    QPlainTextEdit* m_ir;
    QPlainTextEdit* m_asm;
    std::array<bool, 5> m_stale{};  // text tabs (DagTextTab..AssemblyTab) not filled since the last snapshot
    int m_nodes = 0, m_edges = 0;
};

}  // namespace tb::widgets
