// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/state_builder.h"

#include <algorithm>

#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"

namespace tb::autotvm::detail {

StateBuilder::StateBuilder(std::shared_ptr<const te::ComputeDAG> dag) : m_dag(std::move(dag)), m_state(*m_dag) {}

int StateBuilder::stageId(const StageRefName& stage) const {
    int seen = 0;
    for (size_t i = 0; i < m_state.stages().size(); ++i)
        if (m_state.stages()[i]->op->name == stage.name && seen++ == stage.occurrence) return int(i);
    throw UserError("template schedule: no stage '" + stage.name + "' #" + std::to_string(stage.occurrence));
}

int StateBuilder::iterId(int sid, const std::string& iter) const {
    const auto& its = m_state.stage(sid).iters;
    for (size_t i = 0; i < its.size(); ++i)
        if (its[i].name == iter) return int(i);
    throw UserError("template schedule: stage '" + m_state.stage(sid).op->name + "' has no loop '" + iter + "'");
}

std::vector<std::string> StateBuilder::iters(const StageRefName& stage) const {
    std::vector<std::string> out;
    for (const auto& it : m_state.stage(stageId(stage)).iters) out.push_back(it.name);
    return out;
}

std::vector<std::string> StateBuilder::applySplit(const StageRefName& stage, const std::string& iter,
                                                  const SplitEntity& entity) {
    TB_USER_CHECK(entity.size.size() >= 2) << "template schedule: split of '" << iter << "' into "
                                           << entity.size.size() << " parts";
    const int sid = stageId(stage);
    const int iid = iterId(sid, iter);
    const auto& it = m_state.stage(sid).iters[size_t(iid)];
    SplitStep step;
    step.stageId = sid;
    step.iterId = iid;
    step.extent = it.range ? it.range->extent : 0;
    step.lengths.assign(entity.size.begin() + 1, entity.size.end());
    for (auto l : step.lengths)
        TB_USER_CHECK(l >= 1) << "template schedule: split length " << l << " of '" << iter << "'";
    step.innerToOuter = true;
    addStep(&m_state, Step(step), *m_dag);
    std::vector<std::string> names;
    for (size_t k = 0; k < entity.size.size(); ++k) names.push_back(m_state.stage(sid).iters[size_t(iid) + k].name);
    return names;
}

std::vector<std::string> StateBuilder::split(const StageRefName& stage, const std::string& iter, std::int64_t factor) {
    return applySplit(stage, iter, SplitEntity{{-1, factor}});
}

void StateBuilder::reorder(const StageRefName& stage, const std::vector<std::string>& order) {
    const int sid = stageId(stage);
    const int n = int(m_state.stage(sid).iters.size());
    std::vector<int> ids;
    for (const auto& name : order) ids.push_back(iterId(sid, name));
    std::vector<int> positions = ids;
    std::sort(positions.begin(), positions.end());
    std::vector<int> after(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) after[size_t(i)] = i;
    for (size_t k = 0; k < ids.size(); ++k) after[size_t(positions[k])] = ids[k];
    addStep(&m_state, Step(ReorderStep{sid, after}), *m_dag);
}

std::string StateBuilder::fuse(const StageRefName& stage, const std::vector<std::string>& iters) {
    const int sid = stageId(stage);
    std::vector<int> ids;
    for (const auto& name : iters) ids.push_back(iterId(sid, name));
    addStep(&m_state, Step(FuseStep{sid, ids}), *m_dag);
    return m_state.stage(sid).iters[size_t(ids.front())].name;
}

void StateBuilder::annotate(const StageRefName& stage, const std::string& iter, IteratorAnnotation ann) {
    const int sid = stageId(stage);
    addStep(&m_state, Step(AnnotationStep{sid, iterId(sid, iter), ann}), *m_dag);
}

void StateBuilder::computeAt(const StageRefName& stage, const StageRefName& target, const std::string& iter) {
    const int sid = stageId(stage), tid = stageId(target);
    addStep(&m_state, Step(ComputeAtStep{sid, tid, iterId(tid, iter)}), *m_dag);
}

StageRefName StateBuilder::cacheRead(const StageRefName& stage, const std::string& scope,
                                     const std::vector<StageRefName>& readers) {
    CacheReadStep step;
    step.stageId = stageId(stage);
    step.scopeName = scope;
    for (const auto& r : readers) step.readerStageIds.push_back(stageId(r));
    addStep(&m_state, Step(step), *m_dag);
    return {m_state.stage(step.stageId + 1).op->name, 0};
}

void StateBuilder::applyAnnotate(const StageRefName& stage, const std::vector<std::string>& iters,
                                 const AnnotateEntity& entity, const std::vector<std::int64_t>& axisLens,
                                 std::int64_t maxUnroll, const std::vector<std::int64_t>& vecSizes) {
    TB_USER_CHECK(entity.anns.size() == iters.size()) << "template schedule: annotation of " << entity.anns.size()
                                                       << " axes applied to " << iters.size();
    for (size_t i = 0; i < iters.size(); ++i) {
        const std::string& ann = entity.anns[i];
        if (ann == "none") continue;
        if (ann == "unroll") {
            TB_USER_CHECK(!m_strict || !maxUnroll || axisLens.at(i) <= maxUnroll) << "Too large factor for unrolling";
            annotate(stage, iters[i], IteratorAnnotation::Unroll);
        } else if (ann == "vec") {
            TB_USER_CHECK(!m_strict || vecSizes.empty() ||
                          std::find(vecSizes.begin(), vecSizes.end(), axisLens.at(i)) != vecSizes.end())
                << "Wrong size of lanes in vectorization";
            annotate(stage, iters[i], IteratorAnnotation::Vectorize);
        } else {
            throw UserError("template schedule: annotation '" + ann + "' is not supported on CPU");
        }
    }
}

void StateBuilder::applyReorder(const StageRefName& stage, const std::vector<std::string>& iters,
                                const ReorderEntity& entity) {
    std::vector<std::string> order;
    for (int p : entity.perm) order.push_back(iters.at(size_t(p)));
    reorder(stage, order);
}

void StateBuilder::computeInline(const StageRefName& stage) {
    addStep(&m_state, Step(ComputeInlineStep{stageId(stage)}), *m_dag);
}

std::vector<StageRefName> StateBuilder::computeStagesAfter(const StageRefName& stage) const {
    const auto& stages = m_state.stages();
    std::vector<StageRefName> out;
    for (size_t i = size_t(stageId(stage)) + 1; i < stages.size(); ++i) {
        if (!stages[i]->op->isCompute()) continue;
        int occurrence = 0;
        for (size_t j = 0; j < i; ++j) occurrence += stages[j]->op->name == stages[i]->op->name;
        out.push_back({stages[i]->op->name, occurrence});
    }
    return out;
}

std::vector<StageRefName> StateBuilder::inlineFusedAfter(const StageRefName& stage) {
    const auto after = computeStagesAfter(stage);
    for (size_t i = 0; i + 1 < after.size(); ++i) computeInline(after[i]);
    return after;
}

std::string StateBuilder::inputName(const StageRefName& stage, std::size_t i) const {
    const auto inputs = m_state.stage(stageId(stage)).op->inputTensors();
    TB_USER_CHECK(i < inputs.size()) << "template schedule: stage '" << stage.name << "' reads " << inputs.size()
                                     << " tensors, not " << i + 1;
    return inputs[i].name();
}

bool StateBuilder::hasStage(const StageRefName& stage) const {
    int seen = 0;
    for (const auto& st : m_state.stages())
        if (st->op->name == stage.name && seen++ == stage.occurrence) return true;
    return false;
}

void StateBuilder::cacheWrite(const StageRefName& stage, const std::string& scope) {
    addStep(&m_state, Step(CacheWriteStep{stageId(stage), scope}), *m_dag);
}

TemplateInstance StateBuilder::finish() const { return TemplateInstance{m_dag, inferBound(m_state)}; }

}  // namespace tb::autotvm::detail
