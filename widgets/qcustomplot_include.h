// SPDX-License-Identifier: Apache-2.0
#pragma once
// Includes <qcustomplot.h> under our project-wide QT_NO_KEYWORDS and QT_NO_FOREACH (STYLE.md
// §3.8): its header declares `signals:` sections and iterates with `foreach`, so both are given a
// meaning for the length of the include only (hotspot's QT_NO_FOREACH workaround, extended).

#include <QtGlobal>

#define signals Q_SIGNALS
#define foreach(variable, container) for (variable : container)
#include <qcustomplot.h>
#undef foreach
#undef signals
