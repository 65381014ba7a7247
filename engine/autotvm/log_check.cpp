// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/log_check.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "engine/autotvm/template.h"
#include "engine/record/json_format.h"
#include "engine/support/error.h"
#include "engine/vta/vta_task.h"

namespace tb::autotvm {

namespace {

using ojson = nlohmann::ordered_json;
using record::AutoTvmRecord;

std::string knobText(const Entity& e) { return record::dumpJson(entityValueJson(e), record::JsonStyle::Python); }

// Equal, or equal once an outermost -1 is resolved to ceil(length / inner product).
bool splitEquivalent(const SplitEntity& rec, const SplitEntity& dec, std::int64_t length) {
    if (rec.size.size() != dec.size.size() || rec.size.empty()) return false;
    if (!std::equal(rec.size.begin() + 1, rec.size.end(), dec.size.begin() + 1)) return false;
    std::int64_t inner = 1;
    for (std::size_t i = 1; i < dec.size.size(); ++i) inner *= dec.size[i];
    if (inner <= 0) return rec.size[0] == dec.size[0];
    auto resolve = [&](std::int64_t outer) { return outer == -1 ? (length + inner - 1) / inner : outer; };
    return resolve(rec.size[0]) == resolve(dec.size[0]);
}

// A space built for one task (or why it could not be).
struct BuiltSpace {
    std::unique_ptr<ConfigSpace> space;
    std::string error;
};

RecordCheck checkWith(const AutoTvmRecord& r, const BuiltSpace& built) {
    RecordCheck out;
    if (r.isV01()) {
        out.outcome = RecordCheck::Outcome::Unchecked;
        out.reason = "an AutoTVM v0.1 record (template key '" + r.v01->templateKey +
                     "'): its index belongs to the old template scheme";
        return out;
    }
    if (!built.space) {
        out.outcome = RecordCheck::Outcome::Unchecked;
        out.reason = built.error;
        return out;
    }
    const ConfigSpace& space = *built.space;
    const std::int64_t index = r.configIndex();
    if (!space.isIndexValid(index)) {
        out.outcome = RecordCheck::Outcome::Disagree;
        out.reason = "index " + std::to_string(index) + " is outside the space (" + std::to_string(space.rangeLength()) +
                     " configs)";
        return out;
    }
    out.decoded = space.get(index);
    auto mismatch = entityMismatch(r.config["entity"], *out.decoded, space);
    out.outcome = mismatch ? RecordCheck::Outcome::Disagree : RecordCheck::Outcome::Agree;
    if (mismatch) out.reason = std::move(*mismatch);
    return out;
}

// A template of ours: the TIR templates (template.h) and the VTA packed operators (vta_task.h).
bool implemented(const std::string& taskName) { return findTemplate(taskName) || vta::isVtaTaskName(taskName); }

BuiltSpace buildSpace(const AutoTvmRecord& r) {
    BuiltSpace b;
    try {
        const Template* t = findTemplate(r.taskName);
        b.space = std::make_unique<ConfigSpace>(t ? t->space(r.args) : vta::vtaTaskSpace(r.taskName, r.args));
    } catch (const UserError& e) {
        b.error = std::string("cannot build the space: ") + e.what();
    }
    return b;
}

}  // namespace

std::optional<std::string> entityMismatch(const nlohmann::ordered_json& recordedEntity, const ConfigEntity& decoded,
                                          const ConfigSpace& space) {
    ConfigEntity rec;
    try {
        ojson cfg = ojson::object();
        cfg["index"] = decoded.index;
        cfg["entity"] = recordedEntity;
        rec = ConfigEntity::fromJson(cfg);
    } catch (const UserError& e) {
        return std::string("the recorded entity cannot be read: ") + e.what();
    }
    if (rec.knobs.size() != decoded.knobs.size())
        return "the record has " + std::to_string(rec.knobs.size()) + " knobs, the space " +
               std::to_string(decoded.knobs.size());
    for (std::size_t i = 0; i < rec.knobs.size(); ++i) {
        const auto& [rn, re] = rec.knobs[i];
        const auto& [dn, de] = decoded.knobs[i];
        if (rn != dn) return "knob " + std::to_string(i) + " is '" + rn + "' in the record, '" + dn + "' in the space";
        if (re.index() != de.index())
            return "knob '" + rn + "' is of kind '" + knobKindCode(KnobKind(re.index())) + "' in the record, '" +
                   knobKindCode(KnobKind(de.index())) + "' in the space";
        bool same = re == de;
        if (!same && std::holds_alternative<SplitEntity>(re))
            same = splitEquivalent(std::get<SplitEntity>(re), std::get<SplitEntity>(de), space.knob(i).product());
        if (!same) return "knob '" + rn + "': recorded " + knobText(re) + ", decoded " + knobText(de);
    }
    return std::nullopt;
}

RecordCheck checkRecord(const AutoTvmRecord& record) {
    if (!implemented(record.taskName)) return {};
    return checkWith(record, record.isV01() ? BuiltSpace{} : buildSpace(record));
}

LogCheckReport checkLog(const record::LogContents<AutoTvmRecord>& log) {
    LogCheckReport rep;
    rep.badLines = log.badLines;
    std::unordered_map<std::string, BuiltSpace> spaces;  // by workload (task name + args)
    for (std::size_t i = 0; i < log.records.size(); ++i) {
        const AutoTvmRecord& r = log.records[i];
        ++rep.records;
        if (r.isV01()) ++rep.v01Records;
        if (!implemented(r.taskName)) {
            ++rep.unknownTemplates[r.taskName];
            continue;
        }
        TemplateCheckCounts& counts = rep.templates[r.taskName];
        ++counts.records;
        const BuiltSpace* built = nullptr;
        BuiltSpace none;
        if (r.isV01()) {
            built = &none;
        } else {
            const std::string key = r.workloadKey();
            auto it = spaces.find(key);
            if (it == spaces.end()) it = spaces.emplace(key, buildSpace(r)).first;
            built = &it->second;
        }
        const RecordCheck c = checkWith(r, *built);
        CheckNote note{log.recordLines[i], r.taskName, r.configIndex(), c.reason};
        switch (c.outcome) {
        case RecordCheck::Outcome::Agree:
            ++rep.checked;
            ++rep.agree;
            ++counts.checked;
            ++counts.agree;
            break;
        case RecordCheck::Outcome::Disagree:
            ++rep.checked;
            ++rep.disagree;
            ++counts.checked;
            rep.disagreements.push_back(std::move(note));
            break;
        case RecordCheck::Outcome::Unchecked: rep.unchecked.push_back(std::move(note)); break;
        case RecordCheck::Outcome::UnknownTemplate: break;
        }
    }
    return rep;
}

LogCheckReport checkLogFile(const std::string& path) {
    const std::string text = record::readTextFile(path);
    TB_USER_CHECK(record::detectLogFormat(text) != record::LogFormat::AutoScheduler)
        << "'" << path << "' is an auto_scheduler log; log check reads AutoTVM logs";
    return checkLog(record::parseAutoTvmRecords(text));
}

}  // namespace tb::autotvm
