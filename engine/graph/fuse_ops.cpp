// SPDX-License-Identifier: Apache-2.0
// A port of Relay's GraphPartitioner (src/relay/analysis/graph_partitioner.cc) and the
// IndexedForwardGraph creator of fuse_ops.cc, over our graph IR.
#include "engine/graph/fuse_ops.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "engine/graph/op_registry.h"
#include "engine/support/error.h"

namespace tb::graph {

namespace {

using P = OpPattern;

P maxPattern(P a, P b) { return int(a) > int(b) ? a : b; }

/// GraphPartitioner's CombinePattern (merging two anchored groups is a bug).
P combineGroupPattern(P a, P b) {
    TB_CHECK(!(int(a) > int(P::Broadcast) && int(b) > int(P::Broadcast))) << "cannot merge two complex groups";
    return maxPattern(a, b);
}

struct FNode {
    NodeId graphId = -1;  // -1 for a virtual tuple node
    P pattern = P::Opaque;
    bool externRef = false;
    struct Edge {
        int node;
        P pattern;
    };
    std::vector<Edge> outputs;
    std::vector<int> args;  // indices of argument nodes (for the param walk)
};

struct DomNode {
    DomNode* parent = nullptr;
    int depth = 0;
    P pattern = P::Opaque;
    int node = -1;
};

struct Group {
    Group* parent = nullptr;
    P pattern = P::Opaque;
    int rootNode = -1;
    bool anchor = false;
    size_t numNodes = 1;
    Group* findRoot() {
        Group* root = this;
        while (root->parent) root = root->parent;
        for (Group* p = this; p != root;) {
            Group* next = p->parent;
            p->parent = root;
            p = next;
        }
        return root;
    }
};

class Partitioner {
public:
    Partitioner(const Graph& g, int maxDepth) : m_g(g), m_maxDepth(size_t(maxDepth)) {}

    std::vector<FusedGroup> run() {
        buildGraph();
        buildPostDom();
        m_groups.resize(m_nodes.size());
        for (size_t i = 0; i < m_nodes.size(); ++i) {
            Group& gr = m_groups[i];
            gr.pattern = m_nodes[i].pattern;
            gr.rootNode = int(i);
            gr.anchor = gr.pattern == P::OutEWiseFusable;
        }
        for (int phase = 0; phase < 3; ++phase) runFuse(phase);
        return collect();
    }

private:
    // ---- indexed forward graph -----------------------------------------------------------
    P nodePattern(NodeId id) const {
        const Node& n = m_g.node(id);
        if (n.kind == NodeKind::Input) return P::Opaque;
        if (n.kind == NodeKind::Constant) return n.type.shape.empty() ? P::ElemWise : P::Opaque;
        const OpDef* d = findOp(n.op);
        TB_CHECK(d) << "unknown op " << n.op;
        return d->pattern;
    }

    void addEdge(int from, int to, P p) { m_nodes[size_t(from)].outputs.push_back({to, p}); }

    int visit(NodeId id) {
        if (auto it = m_index.find(id); it != m_index.end()) return it->second;
        const Node& n = m_g.node(id);
        std::vector<int> args;
        int tuple = -1;
        if (n.kind == NodeKind::Op) {
            if (n.op == "concatenate") {
                std::vector<int> fields;
                for (NodeId p : n.inputs) fields.push_back(visit(p));
                tuple = int(m_nodes.size());
                FNode t;
                t.pattern = P::Tuple;
                t.args = fields;
                m_nodes.push_back(t);
                for (int f : fields) addEdge(f, tuple, P::Injective);
                args = {tuple};
            } else {
                for (NodeId p : n.inputs) args.push_back(visit(p));
            }
        }
        int me = int(m_nodes.size());
        FNode fn;
        fn.graphId = id;
        fn.pattern = nodePattern(id);
        fn.args = args;
        m_nodes.push_back(fn);
        m_index[id] = me;
        if (n.kind == NodeKind::Op) {
            P p = fn.pattern;
            if (tuple >= 0) {
                addEdge(tuple, me, p);
            } else {
                for (NodeId in : n.inputs) {
                    P e = p;
                    if (e == P::Broadcast && m_g.node(in).type.shape == n.type.shape) e = P::ElemWise;
                    addEdge(m_index.at(in), me, e);
                }
            }
        }
        return me;
    }

    void buildGraph() {
        // Relay visits the function parameters first, then the body.
        for (NodeId in : m_g.inputs()) m_nodes[size_t(visit(in))].externRef = true;
        const auto& outs = m_g.outputs();
        TB_CHECK(!outs.empty()) << "graph without outputs";
        if (outs.size() == 1) {
            m_nodes[size_t(visit(outs[0]))].externRef = true;
        } else {
            std::vector<int> fields;
            for (NodeId o : outs) fields.push_back(visit(o));
            int t = int(m_nodes.size());
            FNode tn;
            tn.pattern = P::Tuple;
            tn.externRef = true;
            tn.args = fields;
            m_nodes.push_back(tn);
            for (int f : fields) addEdge(f, t, P::Injective);
        }
    }

    // ---- post-dominator tree ---------------------------------------------------------------
    DomNode* lca(DomNode* a, DomNode* b, P* ep) {
        while (a != b) {
            if (!a || !b) return nullptr;
            if (a->depth < b->depth) {
                *ep = maxPattern(*ep, b->pattern);
                b = b->parent;
            } else if (b->depth < a->depth) {
                *ep = maxPattern(*ep, a->pattern);
                a = a->parent;
            } else {
                *ep = maxPattern(*ep, a->pattern);
                *ep = maxPattern(*ep, b->pattern);
                a = a->parent;
                b = b->parent;
            }
        }
        return a;
    }

    void buildPostDom() {
        m_dom.resize(m_nodes.size());
        for (size_t i = m_nodes.size(); i-- > 0;) {
            DomNode& d = m_dom[i];
            d.node = int(i);
            const FNode& n = m_nodes[i];
            if (n.externRef || n.outputs.empty()) {
                d.depth = 1;
                d.parent = nullptr;
                d.pattern = P::Opaque;
                continue;
            }
            P pattern = P::ElemWise;
            DomNode* parent = &m_dom[size_t(n.outputs[0].node)];
            pattern = maxPattern(pattern, n.outputs[0].pattern);
            for (size_t k = 1; k < n.outputs.size(); ++k) {
                parent = lca(parent, &m_dom[size_t(n.outputs[k].node)], &pattern);
                pattern = maxPattern(pattern, n.outputs[k].pattern);
            }
            d.parent = parent;
            d.depth = parent ? parent->depth + 1 : 1;
            d.pattern = pattern;
        }
    }

    // ---- fusion ------------------------------------------------------------------------------
    template <class F>
    bool checkPath_(int src, int sink, F fcond) {
        if (m_visited.count(src)) return true;
        m_visited.insert(src);
        Group* gn = m_groups[size_t(src)].findRoot();
        if (!fcond(gn->pattern, src == sink)) return false;
        if (src == sink) return true;
        for (const auto& e : m_nodes[size_t(src)].outputs)
            if (!checkPath_(e.node, sink, fcond)) return false;
        return true;
    }
    template <class F>
    bool checkPath(int src, int sink, F fcond) {
        m_visited.clear();
        for (const auto& e : m_nodes[size_t(src)].outputs)
            if (!checkPath_(e.node, sink, fcond)) return false;
        return true;
    }

    void mergeFromTo(Group* child, Group* parent) {
        child = child->findRoot();
        parent = parent->findRoot();
        if (child == parent) return;
        parent->numNodes += child->numNodes;
        child->parent = parent;
        if (child->anchor) {
            TB_CHECK(!parent->anchor) << "two anchors in one group";
            parent->anchor = true;
            parent->pattern = combineGroupPattern(child->pattern, parent->pattern);
        }
    }

    void commitFuse_(int src, int sink, Group* target) {
        if (src == sink) return;
        if (m_visited.count(src)) return;
        m_visited.insert(src);
        mergeFromTo(&m_groups[size_t(src)], target);
        for (const auto& e : m_nodes[size_t(src)].outputs) commitFuse_(e.node, sink, target);
    }
    void commitFuse(int src, int sink) {
        Group* target = &m_groups[size_t(sink)];
        m_visited.clear();
        commitFuse_(src, sink, target);
    }

    size_t countNodesUptoSink_(int src, int sink) {
        if (src == sink || m_visited.count(src)) return 0;
        m_visited.insert(src);
        size_t sum = m_groups[size_t(src)].numNodes;
        for (const auto& e : m_nodes[size_t(src)].outputs) sum += countNodesUptoSink_(e.node, sink);
        return sum;
    }
    size_t countFusedNodesWithNewChild(int child, int domParent) {
        m_visited.clear();
        return m_groups[size_t(domParent)].findRoot()->numNodes + countNodesUptoSink_(child, domParent);
    }

    void runFuse(int phase) {
        for (size_t nid = 0; nid < m_groups.size(); ++nid) {
            DomNode& dom = m_dom[nid];
            Group* gnode = &m_groups[nid];
            if (gnode->pattern == P::Opaque) continue;
            if (!dom.parent) continue;
            int domParent = dom.parent->node;
            if (countFusedNodesWithNewChild(int(nid), domParent) > m_maxDepth) continue;

            if (phase == 2) {
                if (int(gnode->pattern) > int(P::Injective)) continue;
                Group* parentGroup = &m_groups[size_t(domParent)];
                Group* rootGroup = parentGroup->findRoot();
                if (rootGroup->pattern == P::Tuple) continue;
                if (parentGroup->pattern == P::Tuple && int(rootGroup->pattern) <= int(P::Injective)) {
                    auto fcond = [](P k, bool) { return int(k) <= int(P::Injective); };
                    if (checkPath(int(nid), domParent, fcond)) commitFuse(int(nid), domParent);
                }
                continue;
            }
            if (gnode->findRoot() == m_groups[size_t(domParent)].findRoot()) continue;
            if (m_groups[size_t(domParent)].pattern == P::Tuple) continue;
            if (gnode->pattern == P::OutEWiseFusable) {
                if (phase != 0) continue;
                if (dom.pattern == P::ElemWise) {
                    auto fcond = [](P k, bool) { return int(k) <= int(P::Broadcast); };
                    if (checkPath(int(nid), domParent, fcond)) commitFuse(int(nid), domParent);
                }
            } else if (int(gnode->pattern) <= int(P::Broadcast)) {
                if (int(dom.pattern) <= int(P::Injective) || dom.pattern == P::CommReduce) {
                    auto fcond = [](P k, bool isSink) {
                        if (!isSink) return int(k) <= int(P::Injective);
                        return int(k) <= int(P::Broadcast) || k == P::CommReduce || k == P::Injective ||
                               k == P::OutEWiseFusable;
                    };
                    if (checkPath(int(nid), domParent, fcond)) commitFuse(int(nid), domParent);
                }
            } else if (gnode->pattern == P::Injective || gnode->pattern == P::Tuple) {
                if (phase != 1) continue;
                auto fcond = [](P k, bool) { return int(k) <= int(P::Injective); };
                if (checkPath(int(nid), domParent, fcond)) commitFuse(int(nid), domParent);
            }
        }
    }

    // ---- result ------------------------------------------------------------------------------
    std::vector<FusedGroup> collect() {
        // Members per root group; functions exist for groups rooted at an op node.
        std::unordered_map<Group*, std::vector<int>> members;
        for (size_t i = 0; i < m_nodes.size(); ++i) members[m_groups[i].findRoot()].push_back(int(i));
        std::vector<FusedGroup> out;
        std::vector<std::pair<NodeId, FusedGroup>> sorted;
        for (auto& [root, mem] : members) {
            const FNode& rn = m_nodes[size_t(root->rootNode)];
            if (rn.graphId < 0 || m_g.node(rn.graphId).kind != NodeKind::Op) continue;
            std::unordered_set<int> in(mem.begin(), mem.end());
            FusedGroup fg;
            fg.root = rn.graphId;
            std::unordered_set<int> done;
            std::unordered_map<int, bool> paramSeen;
            std::string name = "fused";
            std::function<void(int)> walk = [&](int idx) {
                if (!done.insert(idx).second) return;
                const FNode& fn = m_nodes[size_t(idx)];
                for (int a : fn.args) {
                    if (in.count(a)) {
                        walk(a);
                    } else {
                        // A tuple left outside its concatenate's group passes its fields.
                        std::vector<int> ext = m_nodes[size_t(a)].graphId >= 0 ? std::vector<int>{a}
                                                                                 : m_nodes[size_t(a)].args;
                        for (int e : ext) {
                            if (!paramSeen[e]) {
                                paramSeen[e] = true;
                                fg.params.push_back(m_nodes[size_t(e)].graphId);
                            }
                        }
                    }
                }
                if (fn.graphId >= 0) {
                    fg.nodes.push_back(fn.graphId);
                    const Node& gn = m_g.node(fn.graphId);
                    if (gn.kind == NodeKind::Op) {
                        std::string opn = gn.op;
                        std::replace(opn.begin(), opn.end(), '.', '_');
                        name += "_" + opn;
                    }
                }
            };
            walk(root->rootNode);
            fg.name = name;
            sorted.emplace_back(fg.root, std::move(fg));
        }
        std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& [_, fg] : sorted) out.push_back(std::move(fg));
        return out;
    }

    const Graph& m_g;
    size_t m_maxDepth;
    std::vector<FNode> m_nodes;
    std::unordered_map<NodeId, int> m_index;
    std::vector<DomNode> m_dom;
    std::vector<Group> m_groups;
    std::unordered_set<int> m_visited;
};

}  // namespace

std::vector<FusedGroup> fuseOps(const Graph& g, int maxDepth) { return Partitioner(g, maxDepth).run(); }

}  // namespace tb::graph
