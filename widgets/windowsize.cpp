// SPDX-License-Identifier: Apache-2.0
#include "widgets/windowsize.h"

#include <QGuiApplication>
#include <QScreen>
#include <QWidget>

namespace tb::widgets {

QSize fittedWindowSize(const QWidget* window, QSize preferred) {
    const QScreen* screen = window->screen() ? window->screen() : QGuiApplication::primaryScreen();
    if (!screen) return preferred;
    const QRect avail = screen->availableGeometry();
    return preferred.boundedTo(QSize(avail.width() * 92 / 100, avail.height() * 9 / 10));
}

}  // namespace tb::widgets
