// SPDX-License-Identifier: Apache-2.0
#pragma once
// Draws "<name>  <shapes>" cells (a task's description or a workload's hash, then the shapes of its
// tensors) so that, where the column is too narrow, the middle of the name goes first
// ("vm_mod_fu…add_nn_relu  1×56×56×128, 3×3×128×1, 128 → 1×56×56×128"): the shapes tell the rows
// apart. When even the shapes do not fit, the view's own elision of the whole text, or, for names
// that say little (a DAG hash), the shapes alone, elided in the middle.

#include <QStyledItemDelegate>

namespace tb::widgets {

class WorkloadDelegate : public QStyledItemDelegate {
public:
    /// `nameRole` and `shapesRole`: the item data roles holding the two parts of the cell's text.
    /// `dropName`: where the shapes alone do not fit, show only them (the name is a mere hash).
    WorkloadDelegate(int nameRole, int shapesRole, bool dropName, QObject* parent = nullptr);

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override;

private:
    int m_nameRole;
    int m_shapesRole;
    bool m_dropName;
};

}  // namespace tb::widgets
