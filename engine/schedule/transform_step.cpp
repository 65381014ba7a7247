// SPDX-License-Identifier: Apache-2.0
#include "engine/schedule/transform_step.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/schedule/dataflow_rewrite.h"
#include "engine/support/error.h"
#include "engine/support/int_math.h"

namespace tb {

using nlohmann::json;

// ---- Step ---------------------------------------------------------------------------------

int Step::stageId() const {
    return std::visit([](const auto& s) { return s.stageId; }, *m_data);
}

const char* Step::prefix() const {
    return std::visit([](const auto& s) { return std::decay_t<decltype(s)>::kRecordPrefix; }, *m_data);
}

bool Step::changesStageCount() const {
    return is<CacheReadStep>() || is<CacheWriteStep>() || is<RfactorStep>();
}

// ---- records ------------------------------------------------------------------------------

namespace {

template <class... T>
struct Overload : T... {
    using T::operator()...;
};
template <class... T>
Overload(T...) -> Overload<T...>;

json intList(const std::vector<int>& v) { return json(v); }

}  // namespace

json stepToJson(const Step& step) {
    TB_CHECK(step.defined()) << "stepToJson of a null step";
    return std::visit(
        Overload{
            [](const AnnotationStep& s) { return json::array({"AN", s.stageId, s.iterId, int(s.annotation)}); },
            [](const FuseStep& s) { return json::array({"FU", s.stageId, intList(s.fusedIds)}); },
            [](const PragmaStep& s) { return json::array({"PR", s.stageId, s.iterId, s.pragmaType}); },
            [](const ReorderStep& s) { return json::array({"RE", s.stageId, intList(s.afterIds)}); },
            [](const SplitStep& s) {
                for (int64_t l : s.lengths)
                    TB_CHECK(l > 0) << "cannot write a split step with an undefined length";
                return json::array({"SP", s.stageId, s.iterId, s.extent, json(s.lengths), int(s.innerToOuter)});
            },
            [](const FollowSplitStep& s) { return json::array({"FSP", s.stageId, s.iterId, s.srcStepId, s.nSplit}); },
            [](const FollowFusedSplitStep& s) {
                return json::array({"FFSP", s.stageId, s.iterId, intList(s.srcStepIds), s.level, int(s.factorOrNparts)});
            },
            [](const StorageAlignStep& s) { return json::array({"SA", s.stageId, s.iterId, s.factor, s.offset}); },
            [](const ComputeAtStep& s) { return json::array({"CA", s.stageId, s.targetStageId, s.targetIterId}); },
            [](const ComputeInlineStep& s) { return json::array({"CI", s.stageId}); },
            [](const ComputeRootStep& s) { return json::array({"CR", s.stageId}); },
            [](const CacheReadStep& s) {
                return json::array({"CHR", s.stageId, s.scopeName, intList(s.readerStageIds)});
            },
            [](const CacheWriteStep& s) { return json::array({"CHW", s.stageId, s.scopeName}); },
            [](const RfactorStep& s) { return json::array({"RF", s.stageId, s.iterId, s.factorIterId}); },
        },
        step.data());
}

namespace {

void writeCompact(std::ostringstream& os, const json& j) {
    if (j.is_array()) {
        os << "[";
        for (size_t i = 0; i < j.size(); ++i) {
            if (i) os << ", ";
            writeCompact(os, j[i]);
        }
        os << "]";
    } else {
        os << j.dump();
    }
}

std::string compact(const json& j) {
    std::ostringstream os;
    writeCompact(os, j);
    return os.str();
}

// Reads the fields of one record in order, naming the record in every error.
class FieldReader {
public:
    explicit FieldReader(const json& rec) : m_rec(rec) {}
    [[noreturn]] void fail(const std::string& what) const {
        TB_USER_ERROR() << "malformed transform step " << compact(m_rec) << ": " << what;
    }
    const json& next(const char* field) {
        if (m_pos >= m_rec.size()) fail(std::string("missing field '") + field + "'");
        return m_rec[m_pos++];
    }
    int integer(const char* field) {
        const json& v = next(field);
        if (!v.is_number_integer()) fail(std::string("field '") + field + "' is not an integer");
        int64_t x = v.get<int64_t>();
        if (x < INT32_MIN || x > INT32_MAX) fail(std::string("field '") + field + "' is out of range");
        return int(x);
    }
    int64_t integer64(const char* field) {
        const json& v = next(field);
        if (!v.is_number_integer()) fail(std::string("field '") + field + "' is not an integer");
        return v.get<int64_t>();
    }
    bool flag(const char* field) {
        const json& v = next(field);
        if (v.is_boolean()) return v.get<bool>();
        if (!v.is_number_integer()) fail(std::string("field '") + field + "' is not 0 or 1");
        return v.get<int64_t>() != 0;
    }
    std::string string(const char* field) {
        const json& v = next(field);
        if (!v.is_string()) fail(std::string("field '") + field + "' is not a string");
        return v.get<std::string>();
    }
    std::vector<int> intList(const char* field) {
        std::vector<int> r;
        for (int64_t x : intList64(field)) r.push_back(int(x));
        return r;
    }
    std::vector<int64_t> intList64(const char* field) {
        const json& v = next(field);
        if (!v.is_array()) fail(std::string("field '") + field + "' is not a list");
        std::vector<int64_t> r;
        for (const auto& x : v) {
            if (!x.is_number_integer()) fail(std::string("field '") + field + "' has a non-integer entry");
            r.push_back(x.get<int64_t>());
        }
        return r;
    }
    void done() const {
        if (m_pos != m_rec.size()) fail("unexpected extra fields");
    }

private:
    const json& m_rec;
    size_t m_pos = 1;
};

}  // namespace

std::string stepToString(const Step& step) { return compact(stepToJson(step)); }

Step stepFromJson(const json& rec) {
    if (!rec.is_array() || rec.empty() || !rec[0].is_string())
        TB_USER_ERROR() << "malformed transform step " << compact(rec) << ": expected [\"<prefix>\", ...]";
    const std::string prefix = rec[0].get<std::string>();
    FieldReader r(rec);
    Step out;
    if (prefix == "AN") {
        AnnotationStep s;
        s.stageId = r.integer("stage_id");
        s.iterId = r.integer("iter_id");
        int a = r.integer("annotation");
        if (a < 0 || a >= kNumIteratorAnnotations) r.fail("unknown annotation " + std::to_string(a));
        s.annotation = IteratorAnnotation(a);
        out = s;
    } else if (prefix == "FU") {
        FuseStep s;
        s.stageId = r.integer("stage_id");
        s.fusedIds = r.intList("fused_ids");
        out = s;
    } else if (prefix == "PR") {
        PragmaStep s;
        s.stageId = r.integer("stage_id");
        s.iterId = r.integer("iter_id");
        s.pragmaType = r.string("pragma_type");
        out = s;
    } else if (prefix == "RE") {
        ReorderStep s;
        s.stageId = r.integer("stage_id");
        s.afterIds = r.intList("after_ids");
        out = s;
    } else if (prefix == "SP") {
        SplitStep s;
        s.stageId = r.integer("stage_id");
        s.iterId = r.integer("iter_id");
        s.extent = r.integer64("extent");
        s.lengths = r.intList64("lengths");
        for (int64_t l : s.lengths)
            if (l <= 0) r.fail("split length " + std::to_string(l) + " is not positive");
        s.innerToOuter = r.flag("inner_to_outer");
        out = s;
    } else if (prefix == "FSP") {
        FollowSplitStep s;
        s.stageId = r.integer("stage_id");
        s.iterId = r.integer("iter_id");
        s.srcStepId = r.integer("src_step_id");
        s.nSplit = r.integer("n_split");
        out = s;
    } else if (prefix == "FFSP") {
        FollowFusedSplitStep s;
        s.stageId = r.integer("stage_id");
        s.iterId = r.integer("iter_id");
        s.srcStepIds = r.intList("src_step_ids");
        s.level = r.integer("level");
        s.factorOrNparts = r.flag("factor_or_nparts");
        out = s;
    } else if (prefix == "SA") {
        StorageAlignStep s;
        s.stageId = r.integer("stage_id");
        s.iterId = r.integer("iter_id");
        s.factor = r.integer("factor");
        s.offset = r.integer("offset");
        out = s;
    } else if (prefix == "CA") {
        ComputeAtStep s;
        s.stageId = r.integer("stage_id");
        s.targetStageId = r.integer("target_stage_id");
        s.targetIterId = r.integer("target_iter_id");
        out = s;
    } else if (prefix == "CI") {
        out = ComputeInlineStep{r.integer("stage_id")};
    } else if (prefix == "CR") {
        out = ComputeRootStep{r.integer("stage_id")};
    } else if (prefix == "CHR") {
        CacheReadStep s;
        s.stageId = r.integer("stage_id");
        s.scopeName = r.string("scope_name");
        s.readerStageIds = r.intList("reader_stage_ids");
        out = s;
    } else if (prefix == "CHW") {
        CacheWriteStep s;
        s.stageId = r.integer("stage_id");
        s.scopeName = r.string("scope_name");
        out = s;
    } else if (prefix == "RF") {
        RfactorStep s;
        s.stageId = r.integer("stage_id");
        s.iterId = r.integer("iter_id");
        s.factorIterId = r.integer("factor_iter_id");
        out = s;
    } else {
        r.fail("unknown step prefix \"" + prefix + "\"");
    }
    r.done();
    return out;
}

std::vector<Step> stepsFromJson(const json& records) {
    if (!records.is_array()) TB_USER_ERROR() << "transform steps must be a JSON list, got " << compact(records);
    std::vector<Step> out;
    out.reserve(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
        try {
            out.push_back(stepFromJson(records[i]));
        } catch (const UserError& e) {
            TB_USER_ERROR() << "step " << i << ": " << e.what();
        }
    }
    return out;
}

json stepsToJson(const std::vector<Step>& steps) {
    json a = json::array();
    for (const auto& s : steps) a.push_back(stepToJson(s));
    return a;
}

// ---- applying -----------------------------------------------------------------------------

namespace {

const Stage& checkedStage(const State& state, int stageId, const char* what) {
    TB_USER_CHECK(stageId >= 0 && size_t(stageId) < state.stages().size())
        << what << ": stage " << stageId << " does not exist (the state has " << state.stages().size() << " stages)";
    return state.stage(stageId);
}

void checkIter(const Stage& stage, int iterId, const char* what) {
    TB_USER_CHECK(iterId >= 0 && size_t(iterId) < stage.iters.size())
        << what << ": loop " << iterId << " of stage " << stage.op->name << " does not exist (it has "
        << stage.iters.size() << " loops)";
}

// TVM ApplySplitToState, plus the te relations (ApplySplitToSchedule's split chain).
void applySplit(State* state, int stageId, int iterId, const std::vector<int64_t>& lengths, bool innerToOuter) {
    const Stage& stage = checkedStage(*state, stageId, "split");
    checkIter(stage, iterId, "split");
    TB_USER_CHECK(!lengths.empty()) << "split: no lengths for loop " << iterId << " of " << stage.op->name;
    const Iterator& it = stage.iters[size_t(iterId)];
    const size_t n = lengths.size();
    bool concrete = true;

    auto graph = std::make_shared<IterVarGraph>(*stage.graph);
    auto newVar = [&](const std::string& teName) {
        graph->vars.push_back(IterVarInfo{teName, it.kind});
        return int(graph->vars.size()) - 1;
    };
    // varIds[k] is the te variable of new loop `.k`.
    std::vector<int> varIds(n + 1, -1);
    if (innerToOuter) {
        int outer = it.var;
        for (size_t k = n; k-- > 0;) {
            const std::string base = graph->vars[size_t(outer)].teName;
            int o = newVar(base + ".outer"), in = newVar(base + ".inner");
            graph->relations.push_back(IterRelation{IterRelation::Kind::Split, outer, o, in, lengths[k], false});
            varIds[k + 1] = in;
            outer = o;
        }
        varIds[0] = outer;
    } else {
        int inner = it.var;
        for (size_t k = 0; k < n; ++k) {
            const std::string base = graph->vars[size_t(inner)].teName;
            int o = newVar(base + ".outer"), in = newVar(base + ".inner");
            graph->relations.push_back(IterRelation{IterRelation::Kind::Split, inner, o, in, lengths[k], true});
            varIds[k] = o;
            inner = in;
        }
        varIds[n] = inner;
    }

    std::optional<int64_t> tmin, text;
    if (it.range) {
        tmin = it.range->min;
        text = it.range->extent;
    }
    std::vector<Iterator> outs;
    for (size_t i = 0; i < n; ++i) {
        const int64_t l = innerToOuter ? lengths[n - i - 1] : lengths[i];
        const size_t idx = innerToOuter ? n - i : i;
        Iterator res;
        res.name = it.name + "." + std::to_string(idx);
        res.kind = it.kind;
        res.var = varIds[idx];
        if (l > 0 && tmin && text) {
            res.range = Range{*tmin, l};
            tmin = 0;
            text = ceilDiv(*text, l);
        } else {
            tmin.reset();
            text.reset();
            if (l <= 0) concrete = false;
        }
        outs.push_back(std::move(res));
    }
    Iterator last;
    last.kind = it.kind;
    if (tmin && text) last.range = Range{*tmin, *text};
    if (innerToOuter) {
        last.name = it.name + ".0";
        last.var = varIds[0];
        outs.push_back(std::move(last));
        std::reverse(outs.begin(), outs.end());
    } else {
        last.name = it.name + "." + std::to_string(n);
        last.var = varIds[n];
        outs.push_back(std::move(last));
    }

    Stage ns = stage;
    const size_t oldSize = stage.iters.size();
    ns.iters.clear();
    ns.iters.insert(ns.iters.end(), stage.iters.begin(), stage.iters.begin() + iterId);
    ns.iters.insert(ns.iters.end(), outs.begin(), outs.end());
    ns.iters.insert(ns.iters.end(), stage.iters.begin() + iterId + 1, stage.iters.end());
    ns.graph = std::move(graph);
    state->setStage(stageId, std::move(ns));
    StateNode* p = state->copyOnWrite();
    p->concrete = p->concrete && concrete;
    std::vector<IterKey> from, to;
    for (size_t i = size_t(iterId); i < oldSize; ++i) {
        from.emplace_back(stageId, int(i));
        to.emplace_back(stageId, int(i + n));
    }
    p->attachMap.updateIters(from, to);
}

void applyAnnotation(State* state, const AnnotationStep& s) {
    const Stage& stage = checkedStage(*state, s.stageId, "annotation");
    checkIter(stage, s.iterId, "annotation");
    const Iterator& it = stage.iters[size_t(s.iterId)];
    TB_USER_CHECK(it.annotation == IteratorAnnotation::None)
        << "annotation: loop " << it.name << " of " << stage.op->name << " is already annotated "
        << annotationString(it.annotation);
    Stage ns = stage;
    ns.iters[size_t(s.iterId)].annotation = s.annotation;
    state->setStage(s.stageId, std::move(ns));
}

void applyFuse(State* state, const FuseStep& s) {
    const Stage& stage = checkedStage(*state, s.stageId, "fuse");
    TB_USER_CHECK(!s.fusedIds.empty()) << "fuse: no loops to fuse in stage " << stage.op->name;
    for (int id : s.fusedIds) checkIter(stage, id, "fuse");
    const AttachMap& am = state->attachMap();
    std::string name;
    std::optional<int64_t> extent = int64_t(1);
    IteratorKind kind = IteratorKind::Special;
    std::vector<Iterator> orig;
    auto graph = std::make_shared<IterVarGraph>(*stage.graph);
    int fusedVar = -1;
    for (size_t i = 0; i < s.fusedIds.size(); ++i) {
        if (i > 0) {
            TB_USER_CHECK(s.fusedIds[i] == s.fusedIds[i - 1] + 1)
                << "fuse: loops " << s.fusedIds[i - 1] << " and " << s.fusedIds[i] << " of " << stage.op->name
                << " are not consecutive";
        }
        if (i + 1 != s.fusedIds.size()) {
            TB_USER_CHECK(!am.hasAttached(IterKey(s.stageId, s.fusedIds[i])))
                << "fuse: loop " << stage.iters[size_t(s.fusedIds[i])].name << " of " << stage.op->name
                << " has stages attached to it";
        }
        const Iterator& it = stage.iters[size_t(s.fusedIds[i])];
        orig.push_back(it);
        name += it.name + "@";
        if (it.range && extent) extent = *extent * it.range->extent;
        else extent.reset();
        if (i == 0) kind = it.kind;
        else if (kind != it.kind) kind = IteratorKind::Mixed;
        if (i == 0) {
            fusedVar = it.var;
        } else {
            const IterVarInfo& a = graph->vars[size_t(fusedVar)];
            const IterVarInfo& b = graph->vars[size_t(it.var)];
            IteratorKind fk = a.kind == b.kind ? a.kind : IteratorKind::Mixed;
            graph->vars.push_back(IterVarInfo{a.teName + "." + b.teName + ".fused", fk});
            int f = int(graph->vars.size()) - 1;
            graph->relations.push_back(IterRelation{IterRelation::Kind::Fuse, f, fusedVar, it.var, 0, false});
            fusedVar = f;
        }
    }
    Iterator nit;
    nit.name = name;
    if (extent) nit.range = Range{0, *extent};
    nit.kind = kind;
    nit.origIters = std::move(orig);
    nit.var = fusedVar;
    const size_t begin = size_t(s.fusedIds.front()), end = size_t(s.fusedIds.back());
    const size_t oldSize = stage.iters.size();
    Stage ns = stage;
    ns.iters.clear();
    ns.iters.insert(ns.iters.end(), stage.iters.begin(), stage.iters.begin() + long(begin));
    ns.iters.push_back(std::move(nit));
    ns.iters.insert(ns.iters.end(), stage.iters.begin() + long(end) + 1, stage.iters.end());
    ns.graph = std::move(graph);
    state->setStage(s.stageId, std::move(ns));
    std::vector<IterKey> from, to;
    for (size_t i = begin + 1; i < oldSize; ++i) {
        from.emplace_back(s.stageId, int(i));
        to.emplace_back(s.stageId, int(i > end ? i - end + begin : begin));
    }
    state->copyOnWrite()->attachMap.updateIters(from, to);
}

void applyPragma(State* state, const PragmaStep& s) {
    const Stage& stage = checkedStage(*state, s.stageId, "pragma");
    if (s.pragmaType == "debug_skip_region") {
        state->copyOnWrite()->attachMap.deleteStage(s.stageId);
    } else if (s.pragmaType.rfind("auto_unroll_max_step", 0) == 0) {
        size_t pos = s.pragmaType.find('$');
        TB_USER_CHECK(pos != std::string::npos) << "pragma \"" << s.pragmaType << "\": max step value not found";
        Stage ns = stage;
        ns.attrs.autoUnrollMaxStep = std::atoi(s.pragmaType.c_str() + pos + 1);
        state->setStage(s.stageId, std::move(ns));
    } else {
        TB_USER_ERROR() << "unsupported pragma \"" << s.pragmaType << "\"";
    }
}

void applyReorder(State* state, const ReorderStep& s) {
    const Stage& stage = checkedStage(*state, s.stageId, "reorder");
    TB_USER_CHECK(s.afterIds.size() == stage.iters.size())
        << "reorder: " << s.afterIds.size() << " ids for the " << stage.iters.size() << " loops of " << stage.op->name;
    std::vector<char> seen(stage.iters.size(), 0);
    Stage ns = stage;
    ns.iters.clear();
    for (int id : s.afterIds) {
        checkIter(stage, id, "reorder");
        TB_USER_CHECK(!seen[size_t(id)]) << "reorder: loop " << id << " of " << stage.op->name << " appears twice";
        seen[size_t(id)] = 1;
        ns.iters.push_back(stage.iters[size_t(id)]);
    }
    state->setStage(s.stageId, std::move(ns));  // TVM leaves the attach map keyed by position
}

void applyStorageAlign(State* state, const StorageAlignStep& s) {
    const Stage& stage = checkedStage(*state, s.stageId, "storage_align");
    checkIter(stage, s.iterId, "storage_align");
    Stage ns = stage;
    ns.attrs.storageOffset = s.offset;
    state->setStage(s.stageId, std::move(ns));
}

Stage withoutRanges(const Stage& stage, ComputeAtKind kind) {
    Stage ns = stage;
    for (auto& it : ns.iters) it.range.reset();
    ns.computeAt = kind;
    return ns;
}

void applyComputeAt(State* state, const ComputeAtStep& s) {
    const Stage& stage = checkedStage(*state, s.stageId, "compute_at");
    const Stage& target = checkedStage(*state, s.targetStageId, "compute_at target");
    checkIter(target, s.targetIterId, "compute_at target");
    TB_USER_CHECK(s.stageId != s.targetStageId) << "compute_at: stage " << stage.op->name << " into itself";
    TB_USER_CHECK(stage.opType == StageKind::Compute) << "compute_at: " << stage.op->name << " is a placeholder";
    state->setStage(s.stageId, withoutRanges(stage, ComputeAtKind::Iter));
    state->copyOnWrite()->attachMap.setComputeAtIter(s.stageId, s.targetStageId, s.targetIterId);
}

void applyComputeInline(State* state, const ComputeInlineStep& s) {
    const Stage& stage = checkedStage(*state, s.stageId, "compute_inline");
    TB_USER_CHECK(stage.opType == StageKind::Compute) << "compute_inline: " << stage.op->name << " is a placeholder";
    for (size_t i = 0; i < stage.iters.size(); ++i)
        TB_USER_CHECK(!state->attachMap().hasAttached(IterKey(s.stageId, int(i))))
            << "compute_inline: other stages are attached to " << stage.op->name;
    Stage ns = stage;
    ns.computeAt = ComputeAtKind::Inlined;
    state->setStage(s.stageId, std::move(ns));
    state->copyOnWrite()->attachMap.deleteStage(s.stageId);
}

void applyComputeRoot(State* state, const ComputeRootStep& s) {
    const Stage& stage = checkedStage(*state, s.stageId, "compute_root");
    TB_USER_CHECK(stage.opType == StageKind::Compute) << "compute_root: " << stage.op->name << " is a placeholder";
    state->setStage(s.stageId, withoutRanges(stage, ComputeAtKind::Root));
    state->copyOnWrite()->attachMap.deleteStage(s.stageId);
}

std::vector<te::Operation> currentOps(const State& state) {
    std::vector<te::Operation> ops;
    for (const auto& s : state.stages()) ops.push_back(s->op);
    return ops;
}

// Stages after a rewrite: keep loops, point at the rewritten op (its axes are the same variables).
void retargetStages(StateNode* p, const std::vector<te::Operation>& ops, size_t from) {
    for (size_t i = from; i < p->stages.size(); ++i) {
        if (p->stages[i]->op == ops[i]) continue;
        auto s = std::make_shared<Stage>(*p->stages[i]);
        s->op = ops[i];
        p->stages[i] = std::move(s);
    }
}

void applyCacheRead(State* state, const CacheReadStep& s) {
    checkedStage(*state, s.stageId, "cache_read");
    auto ops = cacheReadOps(currentOps(*state), s.stageId, s.scopeName, s.readerStageIds);
    StateNode* p = state->copyOnWrite();
    const size_t added = size_t(s.stageId) + 1;
    p->stages.insert(p->stages.begin() + long(added), std::make_shared<const Stage>(ops[added]));
    retargetStages(p, ops, 0);
    p->attachMap = p->attachMap.applyStageIdOffset(int(added));
    p->currentComputeDag = makeDagFromOps(ops);
}

void applyCacheWrite(State* state, const CacheWriteStep& s) {
    checkedStage(*state, s.stageId, "cache_write");
    auto ops = cacheWriteOps(currentOps(*state), s.stageId, s.scopeName);
    StateNode* p = state->copyOnWrite();
    const size_t id = size_t(s.stageId);
    p->stages.insert(p->stages.begin() + long(id), std::make_shared<const Stage>(ops[id]));
    p->stages[id + 1] = std::make_shared<const Stage>(ops[id + 1]);
    retargetStages(p, ops, id + 2);
    p->attachMap = p->attachMap.applyStageIdOffset(s.stageId, 1);
    p->currentComputeDag = makeDagFromOps(ops);
}

void applyRfactor(State* state, const RfactorStep& s) {
    const Stage& stage = checkedStage(*state, s.stageId, "rfactor");
    checkIter(stage, s.iterId, "rfactor");
    const ComputeAtKind kind = stage.computeAt;
    auto ops = rfactorOps(currentOps(*state), s.stageId, stage, s.iterId, s.factorIterId);
    StateNode* p = state->copyOnWrite();
    const size_t id = size_t(s.stageId);
    p->stages.insert(p->stages.begin() + long(id), std::make_shared<const Stage>(ops[id]));
    auto target = std::make_shared<Stage>(ops[id + 1]);
    target->computeAt = kind;
    p->stages[id + 1] = std::move(target);
    retargetStages(p, ops, id + 2);
    p->attachMap = p->attachMap.applyStageIdOffset(s.stageId);
    p->currentComputeDag = makeDagFromOps(ops);
}

}  // namespace

std::vector<int64_t> followSplitLengths(const FollowSplitStep& step, const std::vector<Step>& history) {
    TB_USER_CHECK(step.srcStepId >= 0 && size_t(step.srcStepId) < history.size())
        << "follow_split: source step " << step.srcStepId << " does not exist";
    const SplitStep* src = history[size_t(step.srcStepId)].as<SplitStep>();
    TB_USER_CHECK(src) << "follow_split: source step " << step.srcStepId << " is not a split ("
                       << history[size_t(step.srcStepId)].prefix() << ")";
    TB_USER_CHECK(step.nSplit >= 1 && size_t(step.nSplit) <= src->lengths.size() + 1)
        << "follow_split: n_split " << step.nSplit << " does not fit the " << src->lengths.size()
        << " lengths of step " << step.srcStepId;
    std::vector<int64_t> lengths(src->lengths.begin(), src->lengths.begin() + (step.nSplit - 1));
    int64_t last = 1;
    for (size_t j = size_t(step.nSplit - 1); j < src->lengths.size(); ++j) {
        if (src->lengths[j] <= 0) {
            last = 0;
            break;
        }
        last *= src->lengths[j];
    }
    lengths.push_back(last);
    return lengths;
}

int64_t followFusedSplitLength(const FollowFusedSplitStep& step, const std::vector<Step>& history) {
    int64_t r = 1;
    for (int id : step.srcStepIds) {
        TB_USER_CHECK(id >= 0 && size_t(id) < history.size()) << "follow_fused_split: source step " << id
                                                                 << " does not exist";
        const SplitStep* src = history[size_t(id)].as<SplitStep>();
        TB_USER_CHECK(src) << "follow_fused_split: source step " << id << " is not a split";
        TB_USER_CHECK(step.level >= 0 && size_t(step.level) < src->lengths.size())
            << "follow_fused_split: level " << step.level << " does not exist in step " << id;
        int64_t l = src->lengths[size_t(step.level)];
        if (l <= 0) return 0;
        r *= l;
    }
    return r;
}

void applyStep(State* state, const Step& step, const te::ComputeDAG& dag) {
    TB_CHECK(state && state->defined() && step.defined()) << "applyStep on a null state or step";
    (void)dag;  // the current ops live in the state's stages; dag is kept for TVM's signature
    std::visit(Overload{
                   [&](const AnnotationStep& s) { applyAnnotation(state, s); },
                   [&](const FuseStep& s) { applyFuse(state, s); },
                   [&](const PragmaStep& s) { applyPragma(state, s); },
                   [&](const ReorderStep& s) { applyReorder(state, s); },
                   [&](const SplitStep& s) { applySplit(state, s.stageId, s.iterId, s.lengths, s.innerToOuter); },
                   [&](const FollowSplitStep& s) {
                       applySplit(state, s.stageId, s.iterId, followSplitLengths(s, state->transformSteps()), true);
                   },
                   [&](const FollowFusedSplitStep& s) {
                       applySplit(state, s.stageId, s.iterId, {followFusedSplitLength(s, state->transformSteps())},
                                  s.factorOrNparts);
                   },
                   [&](const StorageAlignStep& s) { applyStorageAlign(state, s); },
                   [&](const ComputeAtStep& s) { applyComputeAt(state, s); },
                   [&](const ComputeInlineStep& s) { applyComputeInline(state, s); },
                   [&](const ComputeRootStep& s) { applyComputeRoot(state, s); },
                   [&](const CacheReadStep& s) { applyCacheRead(state, s); },
                   [&](const CacheWriteStep& s) { applyCacheWrite(state, s); },
                   [&](const RfactorStep& s) { applyRfactor(state, s); },
               },
               step.data());
}

void addStep(State* state, const Step& step, const te::ComputeDAG& dag) {
    state->copyOnWrite()->transformSteps.push_back(step);
    applyStep(state, step, dag);
}

State replaySteps(const te::ComputeDAG& dag, const std::vector<Step>& steps) {
    State state(dag);
    state.copyOnWrite()->transformSteps = steps;
    for (size_t i = 0; i < steps.size(); ++i) {
        try {
            applyStep(&state, steps[i], dag);
        } catch (const UserError& e) {
            TB_USER_ERROR() << "replay of step " << i << " " << stepToString(steps[i]) << " failed: " << e.what();
        }
    }
    return state;
}

}  // namespace tb
