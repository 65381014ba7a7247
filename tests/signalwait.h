// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test helper: wait for a signal spy to count `count` emissions (QSignalSpy::wait returns at the
// first one), up to `timeoutMs` in all. Runs of the real engine on a shared machine are slow.

#include <QDeadlineTimer>
#include <QSignalSpy>

#include <algorithm>

namespace tb::test {

inline bool waitFor(QSignalSpy& spy, int count = 1, int timeoutMs = 300000) {
    QDeadlineTimer deadline(timeoutMs);
    while (spy.size() < count && !deadline.hasExpired())
        if (!spy.wait(int(std::max<qint64>(1, deadline.remainingTime())))) break;
    return spy.size() >= count;
}

}  // namespace tb::test
