// SPDX-License-Identifier: Apache-2.0
#include "widgets/workloaddelegate.h"

#include <QApplication>
#include <QStyle>

namespace tb::widgets {

WorkloadDelegate::WorkloadDelegate(int nameRole, int shapesRole, bool dropName, QObject* parent)
    : QStyledItemDelegate(parent), m_nameRole(nameRole), m_shapesRole(shapesRole), m_dropName(dropName) {}

void WorkloadDelegate::initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const {
    QStyledItemDelegate::initStyleOption(option, index);
    const QString name = index.data(m_nameRole).toString();
    const QString shapes = index.data(m_shapesRole).toString();
    if (name.isEmpty() || shapes.isEmpty()) return;
    const QStyle* style = option->widget ? option->widget->style() : QApplication::style();
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, option->widget) + 1;
    const int width = option->rect.width() - 2 * margin - 4;
    const QFontMetrics& fm = option->fontMetrics;
    if (fm.horizontalAdvance(option->text) <= width) return;
    const QString gap = QStringLiteral("  ");
    const int forName = width - fm.horizontalAdvance(gap + shapes);
    if (forName >= fm.horizontalAdvance(name.left(6)) + fm.horizontalAdvance(QChar(0x2026)))
        option->text = fm.elidedText(name, Qt::ElideMiddle, forName) + gap + shapes;
    else if (m_dropName)
        option->text = fm.elidedText(shapes, Qt::ElideMiddle, width);
}

}  // namespace tb::widgets
