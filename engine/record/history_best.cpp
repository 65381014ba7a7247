// SPDX-License-Identifier: Apache-2.0
#include "engine/record/history_best.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "engine/record/target_info.h"
#include "engine/support/error.h"

namespace tb::record {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

template <class Record>
std::vector<size_t> dedupWinners(const std::vector<Record>& records, std::vector<size_t> winners) {
    std::set<std::string> seen;
    std::vector<size_t> out;
    for (size_t i : winners)
        if (seen.insert(records[i].serializedInput()).second) out.push_back(i);
    return out;
}

template <class Record>
void replaceFile(const std::string& outPath, const std::vector<Record>& all, const std::vector<size_t>& keep) {
    const std::string tmp = outPath + ".tmp";
    {
        RecordWriter w(tmp, RecordWriter::Mode::Truncate);
        for (size_t i : keep) w.append(all[i]);
    }
    std::error_code ec;
    std::filesystem::rename(tmp, outPath, ec);
    TB_USER_CHECK(!ec) << "cannot replace '" << outPath << "': " << ec.message();
}

}  // namespace

// ---- auto_scheduler ------------------------------------------------------------------------

HistoryBest::HistoryBest(const std::vector<MeasureRecord>& records, bool includeCompatible)
    : m_includeCompatible(includeCompatible) {
    for (const auto& r : records) add(r);
}

void HistoryBest::file(std::map<std::string, NameMap>& table, const std::string& key, const WorkloadKey& wk,
                       size_t index, double cost, bool insertIfMissing) {
    ArgsMap& args = table[key][wk.name()];
    auto it = args.find(wk.canonicalArgs());
    if (it == args.end()) {
        if (insertIfMissing) args.emplace(wk.canonicalArgs(), Entry{index, cost});
    } else if (it->second.cost > cost) {
        it->second = Entry{index, cost};
    }
}

void HistoryBest::add(const MeasureRecord& record) {
    const size_t index = m_records.size();
    m_records.push_back(record);
    m_workloads.push_back(record.workload());
    if (!record.valid()) return;
    const double cost = record.meanCost();
    const WorkloadKey& wk = m_workloads.back();
    const TargetInfo target = parseTargetInfo(record.task.target);
    for (const auto& k : target.keys) file(m_byTargetKey, k, wk, index, cost, true);
    // TVM inserts by model only for a known model, but always lets a cheaper record replace.
    file(m_byModel, target.model, wk, index, cost, target.model != "unknown");
}

std::pair<const HistoryBest::Entry*, double> HistoryBest::match(const std::map<std::string, NameMap>& table,
                                                                const std::string& key, const WorkloadKey& wk) const {
    auto t = table.find(key);
    if (t == table.end()) return {nullptr, kInf};
    auto n = t->second.find(wk.name());
    if (n == t->second.end()) return {nullptr, kInf};
    const ArgsMap& args = n->second;
    if (auto it = args.find(wk.canonicalArgs()); it != args.end()) return {&it->second, it->second.cost};
    if (!m_includeCompatible) return {nullptr, kInf};
    const Entry* best = nullptr;
    double bestCost = kInf;
    for (const auto& [canon, entry] : args) {
        const double f = calcWorkloadDisFactor(wk, m_workloads[entry.index]);
        if (std::isinf(f)) continue;
        const double c = entry.cost * f;
        if (!best || c < bestCost) {
            best = &entry;
            bestCost = c;
        }
    }
    return {best, bestCost};
}

std::pair<const HistoryBest::Entry*, double> HistoryBest::lookup(std::string_view target,
                                                                 std::string_view workloadKey) const {
    const TargetInfo info = parseTargetInfo(target);
    const WorkloadKey wk = WorkloadKey::parse(workloadKey);
    if (auto m = match(m_byModel, info.model, wk); m.first) return m;
    for (const auto& k : info.keys)
        if (auto m = match(m_byTargetKey, k, wk); m.first) return m;
    return {nullptr, kInf};
}

const MeasureRecord* HistoryBest::query(std::string_view target, std::string_view workloadKey) const {
    const Entry* e = lookup(target, workloadKey).first;
    return e ? &m_records[e->index] : nullptr;
}

double HistoryBest::queryCost(std::string_view target, std::string_view workloadKey) const {
    return lookup(target, workloadKey).second;
}

std::vector<size_t> HistoryBest::winnerIndices() const {
    std::set<size_t> s;
    for (const auto* table : {&m_byModel, &m_byTargetKey})
        for (const auto& [key, names] : *table)
            for (const auto& [name, args] : names)
                for (const auto& [canon, entry] : args) s.insert(entry.index);
    return {s.begin(), s.end()};
}

std::vector<size_t> distillIndices(const std::vector<MeasureRecord>& records) {
    HistoryBest best(records);
    return dedupWinners(records, best.winnerIndices());
}

DistillReport distillRecordFile(const std::string& inPath, const std::string& outPath) {
    DistillReport rep;
    auto in = readMeasureRecords(inPath);
    rep.inputRecords = int(in.records.size());
    rep.inputBadLines = std::move(in.badLines);
    std::vector<MeasureRecord> all = std::move(in.records);
    if (std::filesystem::is_regular_file(outPath)) {
        auto existing = readMeasureRecords(outPath);
        rep.existingRecords = int(existing.records.size());
        rep.existingBadLines = std::move(existing.badLines);
        for (auto& r : existing.records) all.push_back(std::move(r));
    }
    const auto keep = distillIndices(all);
    replaceFile(outPath, all, keep);
    rep.written = int(keep.size());
    return rep;
}

// ---- AutoTVM -------------------------------------------------------------------------------

AutoTvmHistoryBest::AutoTvmHistoryBest(const std::vector<AutoTvmRecord>& records) {
    for (const auto& r : records) add(r);
}

void AutoTvmHistoryBest::add(const AutoTvmRecord& record) {
    const size_t index = m_records.size();
    m_records.push_back(record);
    if (!record.valid()) return;
    const double cost = record.meanCost();
    const std::string workload = record.workloadKey();
    const TargetInfo target = parseTargetInfo(record.target);
    auto file = [&](auto& table, const std::string& key, bool insertIfMissing) {
        auto it = table.find({key, workload});
        if (it == table.end()) {
            if (insertIfMissing) table.emplace(std::make_pair(key, workload), Entry{index, cost});
        } else if (it->second.cost > cost) {
            it->second = Entry{index, cost};
        }
    };
    for (const auto& k : target.keys) file(m_byTargetKey, k, true);
    file(m_byModel, target.model, target.model != "unknown");
}

const AutoTvmRecord* AutoTvmHistoryBest::query(std::string_view target, std::string_view workloadKey) const {
    const TargetInfo info = parseTargetInfo(target);
    const std::string wl(workloadKey);
    if (auto it = m_byModel.find({info.model, wl}); it != m_byModel.end()) return &m_records[it->second.index];
    for (const auto& k : info.keys)
        if (auto it = m_byTargetKey.find({k, wl}); it != m_byTargetKey.end()) return &m_records[it->second.index];
    return nullptr;
}

std::vector<size_t> AutoTvmHistoryBest::winnerIndices() const {
    std::set<size_t> s;
    for (const auto* table : {&m_byModel, &m_byTargetKey})
        for (const auto& [key, entry] : *table) s.insert(entry.index);
    return {s.begin(), s.end()};
}

std::vector<size_t> pickBestIndices(const std::vector<AutoTvmRecord>& records) {
    AutoTvmHistoryBest best(records);
    return dedupWinners(records, best.winnerIndices());
}

DistillReport pickBestFile(const std::string& inPath, const std::string& outPath) {
    DistillReport rep;
    auto in = readAutoTvmRecords(inPath);
    rep.inputRecords = int(in.records.size());
    rep.inputBadLines = std::move(in.badLines);
    const auto keep = pickBestIndices(in.records);
    replaceFile(outPath, in.records, keep);
    rep.written = int(keep.size());
    return rep;
}

}  // namespace tb::record
