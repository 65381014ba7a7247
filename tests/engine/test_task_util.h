// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file test_task_util.h
/// \brief Helpers shared by the task-extraction tests (header only; needs QtCore and tb::graph):
/// the task blocks of a TVM tutorial page (seeds/003) and lookups over extracted task lists.

#include <QFile>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <string>
#include <vector>

#include "engine/graph/task_extraction.h"

namespace tb::test {

/// One "========== Task i  (workload key: ...) ==========" block of a tutorial page.
struct SeedTask {
    std::string key;
    std::string dag;  // full-mode print, each line ending in '\n'
};

/// The task blocks of a tutorial page, each a header line followed by the DAG print and a blank
/// line, in page order; empty when the file cannot be read.
inline std::vector<SeedTask> parseSeed(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
    static const QRegularExpression head(QStringLiteral("^========== Task \\d+  \\(workload key: (.*)\\) ==========$"));
    std::vector<SeedTask> out;
    for (int i = 0; i < lines.size(); ++i) {
        auto m = head.match(lines[i]);
        if (!m.hasMatch()) continue;
        SeedTask t;
        t.key = m.captured(1).toStdString();
        for (++i; i < lines.size() && !lines[i].isEmpty(); ++i) t.dag += lines[i].toStdString() + "\n";
        out.push_back(t);
    }
    return out;
}

/// The task with workload key `key`, or nullptr.
inline const graph::ExtractedTask* findTask(const std::vector<graph::ExtractedTask>& tasks, const std::string& key) {
    for (const auto& t : tasks)
        if (t.workloadKey == key) return &t;
    return nullptr;
}

/// The sum of the tasks' weights (the number of fused groups they stand for).
inline int totalWeight(const std::vector<graph::ExtractedTask>& tasks) {
    int s = 0;
    for (const auto& t : tasks) s += t.weight;
    return s;
}

}  // namespace tb::test
