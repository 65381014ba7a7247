// SPDX-License-Identifier: Apache-2.0
#include "engine/te/compute_dag.h"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_set>

#include "engine/support/error.h"
#include "engine/support/md5.h"
#include "engine/te/printer.h"

namespace tb::te {

namespace {

// Post-order DFS from the output ops, visiting inputs in InputTensors order (te::create_schedule).
void postDfs(const Operation& op, std::unordered_set<const OperationNode*>& seen, std::vector<Operation>& out) {
    if (!seen.insert(op.get()).second) return;
    for (const auto& t : op->inputTensors()) postDfs(t.op(), seen, out);
    out.push_back(op);
}

// TVM IsSimpleAccess: every index is 0 or one of op's own axis vars.
bool isSimpleAccess(const OperationNode* op, const std::vector<Expr>& indices, bool* missing, bool* duplicated,
                    bool* sameOrder) {
    if (!op->isCompute()) return false;
    std::vector<int> index;
    for (const auto& e : indices) {
        if (isConstInt(e, int64_t(0))) continue;
        auto* v = e.as<VarNode>();
        if (!v) return false;
        int ct = 0;
        for (size_t i = 0; i < op->axis.size(); ++i) {
            if (op->axis[i].var.get() == v) {
                index.push_back(int(i));
                ++ct;
            }
        }
        if (ct == 0) return false;
    }
    *missing = false;
    *duplicated = false;
    *sameOrder = true;
    std::vector<int> count(op->axis.size(), 0);
    for (int i : index) count[size_t(i)]++;
    for (int c : count) {
        if (c == 0) *missing = true;
        if (c > 1) *duplicated = true;
    }
    for (size_t i = 1; i < index.size(); ++i)
        if (index[i] <= index[i - 1]) *sameOrder = false;
    return true;
}

bool hasCall(const Expr& e, const char* name) {
    bool found = false;
    postOrderVisit(e, [&](const Expr& x) {
        if (auto* c = x.as<CallNode>(); c && c->op == name) found = true;
    });
    return found;
}

void gatherVars(const Expr& e, std::unordered_set<const ExprNode*>& vars) {
    postOrderVisit(e, [&](const Expr& x) {
        if (x.kind() == ExprKind::Var) vars.insert(x.get());
    });
}

// TVM FlopEstimator (compute_dag.cc): binary ops count 1 unless neither operand has the op's
// output type code; Select = cond + max(branches); Reduce = iters * (combiner + source).
class FlopEstimator {
public:
    double estimate(const std::vector<Operation>& ops) {
        double total = 0;
        for (const auto& op : ops) {
            if (!op->isCompute()) continue;
            if (auto* a = op->attr(attr::kFlop)) {
                if (auto* d = std::get_if<double>(a)) total += *d;
                else if (auto* i = std::get_if<int64_t>(a)) total += double(*i);
                continue;
            }
            m_code = codeOf(op->dtype);
            double elems = 1;
            for (const auto& ax : op->axis) elems *= double(ax.extent);
            double per = 0;
            for (const auto& b : op->body) per += visit(b);
            if (m_fail) return -1;
            total += elems * per;
        }
        return total;
    }

private:
    enum Code { kInt, kUInt, kFloat };
    static Code codeOf(DType t) {
        return t == DType::Bool ? kUInt : isFloat(t) ? kFloat : kInt;
    }
    double visit(const Expr& e) {
        if (!e.get()) return 0;
        switch (e.kind()) {
            case ExprKind::IntImm: case ExprKind::FloatImm: case ExprKind::Var: case ExprKind::Load:
                return 0;
            case ExprKind::Not: {
                auto* n = e.as<NotNode>();
                return (codeOf(n->dtype) == m_code ? 1.0 : 0.0) + visit(n->a);
            }
            case ExprKind::Select: {
                auto* n = e.as<SelectNode>();
                return visit(n->cond) + std::max(visit(n->t), visit(n->f));
            }
            case ExprKind::Cast:
                return visit(e.as<CastNode>()->value);
            case ExprKind::Call: {
                double s = 0;
                for (auto& a : e.as<CallNode>()->args) s += visit(a);
                return s;
            }
            case ExprKind::Reduce: {
                auto* n = e.as<ReduceNode>();
                double iters = 1;
                for (auto& ax : n->axis) iters *= double(ax.extent);
                // The combiner (x + y, max(x, y), min(x, y)) is one op on the source type.
                double combiner = codeOf(n->dtype) == m_code ? 1.0 : 0.0;
                return iters * (combiner + visit(n->source));
            }
            default: {
                auto* n = e.as<BinaryNode>();
                double base = 1.0;
                if (codeOf(n->a.dtype()) != m_code && codeOf(n->b.dtype()) != m_code) base = 0.0;
                return base + visit(n->a) + visit(n->b);
            }
        }
    }
    Code m_code = kFloat;
    bool m_fail = false;
};

}  // namespace

double estimateFlop(const std::vector<Operation>& ops) { return FlopEstimator().estimate(ops); }

std::string makeWorkloadKey(const std::string& hash, const std::vector<std::vector<int64_t>>& shapes) {
    std::string s = "[\"" + hash + "\"";
    for (const auto& sh : shapes) s += ", " + shapeToString(sh);
    return s + "]";
}

ComputeDAG::ComputeDAG(std::vector<Tensor> tensors) : m_tensors(std::move(tensors)) {
    TB_CHECK(!m_tensors.empty()) << "a compute DAG needs tensors";
    // Outputs: io tensors read by no other op reachable from the io tensors.
    std::unordered_set<const OperationNode*> seen;
    std::vector<Operation> all;
    for (const auto& t : m_tensors) postDfs(t.op(), seen, all);
    std::unordered_set<const OperationNode*> consumed;
    for (const auto& op : all)
        for (const auto& t : op->inputTensors()) consumed.insert(t.op().get());
    std::vector<Operation> outOps;
    for (const auto& op : all)  // topological order of `all` keeps TVM's out_ops order
        if (!consumed.count(op.get())) outOps.push_back(op);
    seen.clear();
    for (const auto& op : outOps) postDfs(op, seen, m_ops);
    // Every placeholder reached must be an io tensor (TVM fails later in lowering otherwise).
    for (const auto& op : m_ops) {
        if (!op->isPlaceholder()) continue;
        bool listed = std::any_of(m_tensors.begin(), m_tensors.end(), [&](const Tensor& t) { return t.op() == op; });
        TB_CHECK(listed) << "placeholder " << op->name << " is read but is not among the DAG's tensors";
    }
    m_flop = estimateFlop(m_ops);
    analyze();
}

ComputeDAG ComputeDAG::fromOutputs(const std::vector<Tensor>& outputs) {
    std::vector<Tensor> inputs;
    std::unordered_set<const OperationNode*> visited;
    std::function<void(const Tensor&)> dfs = [&](const Tensor& t) {
        if (!visited.insert(t.op().get()).second) return;
        if (t.op()->isPlaceholder()) {
            inputs.push_back(t);
            return;
        }
        for (const auto& in : t.op()->inputTensors()) dfs(in);
    };
    for (const auto& o : outputs) dfs(o);
    std::vector<Tensor> io = inputs;
    io.insert(io.end(), outputs.begin(), outputs.end());
    return ComputeDAG(std::move(io));
}

std::vector<Tensor> ComputeDAG::inputs() const {
    std::vector<Tensor> r;
    for (const auto& t : m_tensors)
        if (t.op()->isPlaceholder()) r.push_back(t);
    return r;
}
std::vector<Tensor> ComputeDAG::outputs() const {
    std::vector<Tensor> r;
    for (const auto& t : m_tensors)
        if (!t.op()->isPlaceholder()) r.push_back(t);
    return r;
}

std::string ComputeDAG::print(bool simpleMode) const {
    std::ostringstream ss;
    for (const auto& op : m_ops) {
        if (op->isPlaceholder()) {
            ss << op->name << " = PLACEHOLDER ";
            if (!simpleMode) ss << shapeToString(op->shape);
            ss << "\n";
            continue;
        }
        for (size_t k = 0; k < op->body.size(); ++k) {
            ss << op->name << "(";
            for (size_t i = 0; i < op->axis.size(); ++i) {
                if (i) ss << ", ";
                ss << op->axis[i].name();
            }
            ss << ")";
            if (op->body.size() > 1) ss << ".v" << k;
            const Expr& b = op->body[k];
            if (auto* r = b.as<ReduceNode>()) {
                switch (r->combiner) {
                    case ReduceKind::Sum: ss << " += "; break;
                    case ReduceKind::Max: ss << " max= "; break;
                    case ReduceKind::Min: ss << " min= "; break;
                }
                ss << toString(r->source) << "\n";
            } else if (auto* c = b.as<CallNode>(); c && simpleMode) {
                ss << " = Op(" << c->op << ")\n";
            } else {
                ss << " = " << toString(b) << "\n";
            }
        }
    }
    return ss.str();
}

std::string ComputeDAG::hash() const { return md5Hex(print(true)); }

std::string ComputeDAG::workloadKey() const {
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& t : m_tensors) shapes.push_back(t.shape());
    return makeWorkloadKey(hash(), shapes);
}

void ComputeDAG::analyze() {
    for (const auto& op : m_ops) m_access[op.get()];
    for (const auto& op : m_ops) {
        if (!op->isCompute()) continue;
        OpAccessInfo& info = m_access[op.get()];
        // Gather every load, grouped by producer in first-occurrence order.
        for (const auto& b : op->body) {
            postOrderVisit(b, [&](const Expr& e) {
                auto* l = e.as<LoadNode>();
                if (!l) return;
                auto it = std::find_if(info.readFrom.begin(), info.readFrom.end(),
                                       [&](const auto& p) { return p.first == l->op; });
                if (it == info.readFrom.end()) {
                    info.readFrom.emplace_back(l->op, std::vector<std::vector<Expr>>{});
                    it = std::prev(info.readFrom.end());
                }
                it->second.push_back(l->indices);
            });
        }
        for (const auto& [prod, accesses] : info.readFrom) {
            auto& rb = m_access[prod.get()].readBy;
            rb.emplace_back(op, accesses);
        }

        bool simple = true, strict = true;
        for (const auto& [prod, accesses] : info.readFrom) {
            for (const auto& acc : accesses) {
                bool missing, dup, same;
                if (!isSimpleAccess(op.get(), acc, &missing, &dup, &same)) {
                    simple = false;
                    strict = false;
                } else if (dup || !same) {
                    strict = false;
                }
            }
        }
        bool expensive = false, branch = false;
        for (const auto& b : op->body) {
            expensive |= hasCall(b, "tir.exp");
            branch |= hasCall(b, "tir.if_then_else");
        }
        info.isSimpleAccess = simple;
        info.isStrictlyInlineable = simple && strict && !expensive && !branch;
        if (info.readFrom.empty()) info.isStrictlyInlineable = true;  // const tensors (e.g. winograd B, A)

        // needs multi-level tiling (TVM "HasDataReuse"): count producers whose reads miss a
        // spatial axis of extent > 1; >= 2, or >= 1 with a reduce axis.
        int nMissing = 0;
        bool mlt = false;
        for (const auto& [prod, accesses] : info.readFrom) {
            std::unordered_set<const ExprNode*> vars;
            for (const auto& acc : accesses)
                for (const auto& e : acc) gatherVars(e, vars);
            for (const auto& ax : op->axis) {
                if (ax.extent > 1 && !vars.count(ax.var.get())) {
                    ++nMissing;
                    break;
                }
            }
            if (nMissing >= 2 || (nMissing >= 1 && !op->reduceAxis.empty())) {
                mlt = true;
                break;
            }
        }
        if (op->attr(attr::kSimplifyConstTensorIndices)) mlt = false;
        info.needsMultiLevelTiling = mlt;
    }
    for (const auto& op : m_ops) m_access[op.get()].isOutput = m_access[op.get()].readBy.empty();
}

const OpAccessInfo& ComputeDAG::access(const Operation& op) const { return access(op.get()); }
const OpAccessInfo& ComputeDAG::access(const OperationNode* op) const {
    auto it = m_access.find(op);
    TB_CHECK(it != m_access.end()) << "op " << (op ? op->name : "<null>") << " is not in this DAG";
    return it->second;
}

int ComputeDAG::opIndex(const OperationNode* op) const {
    for (size_t i = 0; i < m_ops.size(); ++i)
        if (m_ops[i].get() == op) return int(i);
    return -1;
}

bool ComputeDAG::elementWiseMatch(const Operation& op, const Operation& target) const {
    // Walk the consumer chain from op to target; every hop must be a same-shape, same-order,
    // full-axis read (TVM AccessAnalyzer::ElementWiseMatch).
    Operation cur = op;
    while (cur != target) {
        const auto& info = access(cur);
        if (info.readBy.size() != 1) return false;
        const auto& [next, accesses] = info.readBy[0];
        if (!cur->isCompute() || !next->isCompute() || next->shape != cur->shape) return false;
        for (const auto& acc : accesses) {
            bool missing, dup, same;
            if (!isSimpleAccess(next.get(), acc, &missing, &dup, &same) || missing || dup || !same) return false;
        }
        cur = next;
    }
    return true;
}

std::vector<Operation> ComputeDAG::consumers(const Operation& op) const {
    std::vector<Operation> r;
    for (const auto& [c, _] : access(op).readBy) r.push_back(c);
    return r;
}

}  // namespace tb::te
