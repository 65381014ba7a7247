// SPDX-License-Identifier: Apache-2.0
#include "engine/record/log_summary.h"

#include <cmath>
#include <limits>
#include <unordered_map>

#include "engine/record/json_format.h"

namespace tb::record {

namespace {

template <class Record, class KeyOf, class NameOf, class TargetOf, class VersionOf>
LogSummary summarizeImpl(const LogContents<Record>& log, KeyOf keyOf, NameOf nameOf, TargetOf targetOf,
                         VersionOf versionOf, const std::map<std::string, double>& flopsByKey) {
    LogSummary s;
    s.totalLines = log.totalLines;
    s.records = int(log.records.size());
    s.commentLines = log.commentLines;
    s.blankLines = log.blankLines;
    s.badLines = log.badLines;
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < log.records.size(); ++i) {
        const Record& r = log.records[i];
        ++s.errorCounts[r.errorNo];
        ++s.versions[versionOf(r)];
        auto [canon, text] = keyOf(r);
        auto [it, inserted] = index.emplace(canon, s.workloads.size());
        if (inserted) {
            WorkloadSummary w;
            w.key = text;
            w.name = nameOf(r);
            w.bestCost = std::numeric_limits<double>::infinity();
            if (auto f = flopsByKey.find(canon); f != flopsByKey.end()) w.flop = f->second;
            s.workloads.push_back(std::move(w));
        }
        WorkloadSummary& w = s.workloads[it->second];
        ++w.records;
        if (!r.valid()) continue;
        ++s.valid;
        ++w.valid;
        const double c = r.meanCost();
        if (c < w.bestCost) {
            w.bestCost = c;
            w.bestLine = log.recordLines[i];
            w.bestTarget = targetOf(r);
        }
    }
    for (auto& w : s.workloads)
        if (w.flop >= 0 && w.valid > 0 && w.bestCost > 0) w.gflops = w.flop / w.bestCost / 1e9;
    return s;
}

}  // namespace

LogSummary summarize(const LogContents<MeasureRecord>& log, const FlopMap& flops) {
    FlopMap canonFlops;
    for (const auto& [k, f] : flops) canonFlops[WorkloadKey::parse(k).canonical()] = f;
    LogSummary s = summarizeImpl(
        log,
        [](const MeasureRecord& r) {
            const WorkloadKey wk = r.workload();
            return std::pair<std::string, std::string>(wk.canonical(), r.task.workloadKey);
        },
        [](const MeasureRecord& r) { return r.workload().name(); },
        [](const MeasureRecord& r) { return r.task.target; },
        [](const MeasureRecord& r) { return r.hasVersion ? r.version : std::string("(none)"); }, canonFlops);
    s.format = LogFormat::AutoScheduler;
    return s;
}

LogSummary summarize(const LogContents<AutoTvmRecord>& log, const FlopMap& flops) {
    LogSummary s = summarizeImpl(
        log,
        [](const AutoTvmRecord& r) {
            std::string k = r.workloadKey();
            return std::pair<std::string, std::string>(k, k);
        },
        [](const AutoTvmRecord& r) { return r.taskName; }, [](const AutoTvmRecord& r) { return r.target; },
        [](const AutoTvmRecord& r) {
            return r.version ? dumpJson(*r.version, JsonStyle::Python) : std::string("(none)");
        },
        flops);
    s.format = LogFormat::AutoTvm;
    for (const auto& r : log.records) s.v01Records += r.isV01() ? 1 : 0;
    return s;
}

LogSummary summarizeFile(const std::string& path, const FlopMap& flops) {
    const std::string text = readTextFile(path);
    const LogFormat format = detectLogFormat(text);
    if (format == LogFormat::AutoTvm) return summarize(parseAutoTvmRecords(text), flops);
    auto ansor = parseMeasureRecords(text);
    if (format == LogFormat::Unknown) {
        auto autotvm = parseAutoTvmRecords(text);
        if (autotvm.records.size() > ansor.records.size()) return summarize(autotvm, flops);
    }
    return summarize(ansor, flops);
}

}  // namespace tb::record
