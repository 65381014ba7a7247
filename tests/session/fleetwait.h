// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test helper: wait until the tracker a TrackerMonitor watches lists `count` servers of a device
// key (its queueChanged snapshots, recorded by `queue`), up to `timeoutMs`. Fleet devices are child
// processes that register when they are up; on a shared machine that takes seconds.

#include <QDeadlineTimer>
#include <QSignalSpy>

#include "app/session/snapshots.h"

namespace tb::test {

/// Servers of `key` ("local", "intelfocl") in the last snapshot `queue` recorded (0 when none yet).
inline int serversOfKey(const QSignalSpy& queue, const QString& key) {
    if (queue.isEmpty()) return 0;
    int n = 0;
    for (const auto& srv : queue.last()[0].value<session::DeviceQueueSnapshot>().servers)
        n += srv.key == QStringLiteral("server:") + key ? 1 : 0;
    return n;
}

inline bool waitForServers(QSignalSpy& queue, const QString& key, int count, int timeoutMs = 60000) {
    QDeadlineTimer deadline(timeoutMs);
    while (serversOfKey(queue, key) < count && !deadline.hasExpired()) queue.wait(2000);
    return serversOfKey(queue, key) == count;
}

}  // namespace tb::test
