// SPDX-License-Identifier: Apache-2.0
#pragma once
// Top-level windows open at their preferred size only where the screen has room for it and the
// window manager's frame and panels: a 1600×1000 window on a 1000-pixel screen loses its status bar.

#include <QSize>

class QWidget;

namespace tb::widgets {

/// `preferred`, shrunk to 92 % of the width and 90 % of the height of the available area of the
/// screen `window` is on (the primary screen before it is shown).
QSize fittedWindowSize(const QWidget* window, QSize preferred);

}  // namespace tb::widgets
