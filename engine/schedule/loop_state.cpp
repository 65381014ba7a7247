// SPDX-License-Identifier: Apache-2.0
#include "engine/schedule/loop_state.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"

namespace tb {

namespace {
const char* const kAnnotationStrings[kNumIteratorAnnotations] = {
    "for", "unroll", "vectorize", "parallel", "vthread", "blockIdx.x",
    "threadIdx.x", "blockIdx.y", "threadIdx.y", "blockIdx.z", "threadIdx.z", "tensorize"};

void replaceAll(std::string& s, const std::string& from, const std::string& to) {
    for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
        s.replace(pos, from.size(), to);
}
}  // namespace

const char* annotationString(IteratorAnnotation a) {
    int i = int(a);
    TB_CHECK(i >= 0 && i < kNumIteratorAnnotations) << "annotation " << i;
    return kAnnotationStrings[i];
}

bool isThreadBinding(IteratorAnnotation a) {
    return a >= IteratorAnnotation::VThread && a <= IteratorAnnotation::ThreadZ;
}

std::string cleanName(const std::string& name) {
    std::string r = name;
    replaceAll(r, ".", "_");
    replaceAll(r, "@", "_");
    replaceAll(r, "outer", "o");
    replaceAll(r, "inner", "i");
    return r;
}

std::set<std::string> originalIteratorNames(const std::string& name) {
    std::set<std::string> out;
    size_t last = 0;
    auto take = [&](size_t end) {
        if (last < name.size() && !std::isdigit(static_cast<unsigned char>(name[last])) && name[last] != '@' &&
            name[last] != '.')
            out.insert(name.substr(last, end - last));
    };
    for (size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '@' || name[i] == '.') {
            take(i);
            last = i + 1;
        }
    }
    if (last < name.size()) take(name.size());
    return out;
}

Stage::Stage(te::Operation o) : op(std::move(o)) {
    TB_CHECK(op) << "stage of a null op";
    auto g = std::make_shared<IterVarGraph>();
    if (op->isCompute()) {
        opType = StageKind::Compute;
        auto add = [&](const te::IterVar& ax, IteratorKind kind) {
            Iterator it;
            it.name = cleanName(ax.name());
            it.range = Range{ax.min, ax.extent};
            it.kind = kind;
            it.var = int(g->vars.size());
            g->vars.push_back(IterVarInfo{ax.name(), kind});
            iters.push_back(std::move(it));
        };
        for (const auto& ax : op->axis) add(ax, IteratorKind::Spatial);
        for (const auto& ax : op->reduceAxis) add(ax, IteratorKind::Reduction);
    } else {
        opType = StageKind::Placeholder;
    }
    g->numRoots = int(g->vars.size());
    graph = std::move(g);
}

// ---- AttachMap ----------------------------------------------------------------------------

void AttachMap::deleteEntry(int stageId) {
    auto it = m_stageToIter.find(stageId);
    if (it == m_stageToIter.end()) return;
    auto it2 = m_iterToStages.find(it->second);
    TB_CHECK(it2 != m_iterToStages.end()) << "attach map out of sync for stage " << stageId;
    auto& v = it2->second;
    v.erase(std::remove(v.begin(), v.end(), stageId), v.end());
    if (v.empty()) m_iterToStages.erase(it2);
    m_stageToIter.erase(it);
}

void AttachMap::setComputeAtIter(int stageId, int targetStageId, int targetIterId) {
    deleteEntry(stageId);
    IterKey key(targetStageId, targetIterId);
    m_stageToIter[stageId] = key;
    m_iterToStages[key].push_back(stageId);
}

void AttachMap::deleteStage(int stageId) { deleteEntry(stageId); }

void AttachMap::updateIters(const std::vector<IterKey>& originals, const std::vector<IterKey>& updated) {
    TB_CHECK(originals.size() == updated.size()) << "updateIters size mismatch";
    // Collect first, then re-insert, so a key moved onto another moved key is not clobbered
    // (TVM processes the pairs in order; the sequences it passes never collide in practice).
    std::vector<std::pair<IterKey, std::vector<int>>> moved;
    for (size_t i = 0; i < originals.size(); ++i) {
        auto it = m_iterToStages.find(originals[i]);
        if (it == m_iterToStages.end()) continue;
        for (int s : it->second) m_stageToIter[s] = updated[i];
        moved.emplace_back(updated[i], std::move(it->second));
        m_iterToStages.erase(it);
    }
    for (auto& [key, stages] : moved) {
        auto& dst = m_iterToStages[key];
        dst.insert(dst.end(), stages.begin(), stages.end());
    }
}

AttachMap AttachMap::applyStageIdOffset(int startId, int offset) const {
    AttachMap r;
    auto shift = [&](int id) { return id >= startId ? id + offset : id; };
    for (const auto& [s, key] : m_stageToIter) r.m_stageToIter[shift(s)] = IterKey(shift(key.first), key.second);
    for (const auto& [key, stages] : m_iterToStages) {
        std::vector<int> v;
        for (int s : stages) v.push_back(shift(s));
        r.m_iterToStages[IterKey(shift(key.first), key.second)] = std::move(v);
    }
    return r;
}

std::optional<IterKey> AttachMap::attachedAt(int stageId) const {
    auto it = m_stageToIter.find(stageId);
    if (it == m_stageToIter.end()) return std::nullopt;
    return it->second;
}

const std::vector<int>& AttachMap::attachedStages(const IterKey& key) const {
    static const std::vector<int> kEmpty;
    auto it = m_iterToStages.find(key);
    return it == m_iterToStages.end() ? kEmpty : it->second;
}

// ---- State --------------------------------------------------------------------------------

State::State(const te::ComputeDAG& dag) : State(dag.ops()) {}

State::State(const std::vector<te::Operation>& ops) : m_node(std::make_shared<StateNode>()) {
    for (const auto& op : ops) m_node->stages.push_back(std::make_shared<const Stage>(op));
}

StateNode* State::copyOnWrite() {
    TB_CHECK(m_node) << "copyOnWrite on a null State";
    if (m_node.use_count() > 1) m_node = std::make_shared<StateNode>(*m_node);
    return m_node.get();
}

const Stage& State::stage(int id) const {
    TB_CHECK(id >= 0 && size_t(id) < m_node->stages.size()) << "stage id " << id;
    return *m_node->stages[size_t(id)];
}

int State::stageId(const te::OperationNode* op) const {
    for (size_t i = 0; i < m_node->stages.size(); ++i)
        if (m_node->stages[i]->op.get() == op) return int(i);
    return -1;
}

void State::setStage(int id, Stage s) {
    StateNode* n = copyOnWrite();
    TB_CHECK(id >= 0 && size_t(id) < n->stages.size()) << "stage id " << id;
    n->stages[size_t(id)] = std::make_shared<const Stage>(std::move(s));
}

namespace {

void printStage(std::ostringstream& os, int stageId, const State& state, size_t baseIndent, bool deleteTrivial) {
    const Stage& stage = state.stage(stageId);
    const std::string indent0(baseIndent, ' ');
    if (stage.attrs.autoUnrollMaxStep != 0)
        os << indent0 << stage.op->name << " auto_unroll: " << stage.attrs.autoUnrollMaxStep << "\n";
    if (stage.attrs.storageOffset != 0)
        os << indent0 << stage.op->name << " storage_offset: " << stage.attrs.storageOffset << "\n";
    size_t indent = 0;
    for (size_t i = 0; i < stage.iters.size(); ++i) {
        const Iterator& it = stage.iters[i];
        if (!(deleteTrivial && it.range && it.range->extent == 1)) {
            os << std::string(baseIndent + indent, ' ') << annotationString(it.annotation) << " " << it.name;
            if (it.range) os << " (" << it.range->min << "," << it.range->extent << ")";
            else os << " (None)";
            os << "\n";
            indent += 2;
        }
        for (int attached : state.attachMap().attachedStages(IterKey(stageId, int(i))))
            printStage(os, attached, state, baseIndent + indent, deleteTrivial);
    }
    os << std::string(baseIndent + indent, ' ') << stage.op->name << " = ...\n";
}

}  // namespace

std::string State::toStr(bool deleteTrivialLoop) const {
    TB_CHECK(m_node) << "toStr on a null State";
    std::ostringstream os;
    os << "Placeholder: ";
    bool first = true;
    for (const auto& s : m_node->stages) {
        if (s->opType != StageKind::Placeholder) continue;
        if (!first) os << ", ";
        os << s->op->name;
        first = false;
    }
    os << "\n";
    for (size_t i = 0; i < m_node->stages.size(); ++i) {
        const Stage& s = *m_node->stages[i];
        if (s.opType == StageKind::Compute && s.computeAt == ComputeAtKind::Root)
            printStage(os, int(i), *this, 0, deleteTrivialLoop);
    }
    return os.str();
}

}  // namespace tb
