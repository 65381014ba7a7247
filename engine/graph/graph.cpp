// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/graph.h"

#include <sstream>
#include <type_traits>

#include "engine/graph/op_registry.h"
#include "engine/support/error.h"

namespace tb::graph {

namespace {
template <class T>
const T* getAs(const std::map<std::string, AttrValue>& m, const std::string& key, const char* what) {
    auto it = m.find(key);
    if (it == m.end()) return nullptr;
    const T* v = std::get_if<T>(&it->second);
    TB_USER_CHECK(v) << "attribute '" << key << "' is not " << what;
    return v;
}

std::string attrToString(const AttrValue& v) {
    std::ostringstream os;
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
                os << '"' << x << '"';
            } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
                os << x;
            } else {
                os << '[';
                for (size_t i = 0; i < x.size(); ++i) {
                    if (i) os << ", ";
                    if constexpr (std::is_same_v<T, std::vector<std::string>>)
                        os << '"' << x[i] << '"';
                    else
                        os << x[i];
                }
                os << ']';
            }
        },
        v);
    return os.str();
}
}  // namespace

int64_t Attrs::getInt(const std::string& key) const {
    auto* v = getAs<int64_t>(m_map, key, "an integer");
    TB_USER_CHECK(v) << "missing attribute '" << key << "'";
    return *v;
}
int64_t Attrs::getInt(const std::string& key, int64_t dflt) const {
    auto* v = getAs<int64_t>(m_map, key, "an integer");
    return v ? *v : dflt;
}
double Attrs::getFloat(const std::string& key) const {
    auto it = m_map.find(key);
    TB_USER_CHECK(it != m_map.end()) << "missing attribute '" << key << "'";
    return getFloat(key, 0.0);
}
double Attrs::getFloat(const std::string& key, double dflt) const {
    auto it = m_map.find(key);
    if (it == m_map.end()) return dflt;
    if (auto* i = std::get_if<int64_t>(&it->second)) return double(*i);
    auto* d = std::get_if<double>(&it->second);
    TB_USER_CHECK(d) << "attribute '" << key << "' is not a number";
    return *d;
}
std::string Attrs::getString(const std::string& key) const {
    auto* v = getAs<std::string>(m_map, key, "a string");
    TB_USER_CHECK(v) << "missing attribute '" << key << "'";
    return *v;
}
std::string Attrs::getString(const std::string& key, const std::string& dflt) const {
    auto* v = getAs<std::string>(m_map, key, "a string");
    return v ? *v : dflt;
}
std::vector<int64_t> Attrs::getInts(const std::string& key) const {
    auto* v = getAs<std::vector<int64_t>>(m_map, key, "a list of integers");
    TB_USER_CHECK(v) << "missing attribute '" << key << "'";
    return *v;
}
std::vector<int64_t> Attrs::getInts(const std::string& key, const std::vector<int64_t>& dflt) const {
    auto* v = getAs<std::vector<int64_t>>(m_map, key, "a list of integers");
    return v ? *v : dflt;
}
std::vector<double> Attrs::getFloats(const std::string& key) const {
    auto it = m_map.find(key);
    TB_USER_CHECK(it != m_map.end()) << "missing attribute '" << key << "'";
    if (auto* ints = std::get_if<std::vector<int64_t>>(&it->second)) return {ints->begin(), ints->end()};
    auto* d = std::get_if<std::vector<double>>(&it->second);
    TB_USER_CHECK(d) << "attribute '" << key << "' is not a list of numbers";
    return *d;
}

NodeId Graph::addInput(const std::string& name, TensorType type) {
    Node n;
    n.kind = NodeKind::Input;
    n.name = name;
    n.type = std::move(type);
    m_nodes.push_back(std::move(n));
    m_inputs.push_back(NodeId(m_nodes.size() - 1));
    return m_inputs.back();
}

NodeId Graph::addConstant(const std::string& name, std::shared_ptr<const ConstantData> value) {
    TB_CHECK(value) << "constant " << name << " without data";
    Node n;
    n.kind = NodeKind::Constant;
    n.name = name;
    n.type = value->type;
    n.value = std::move(value);
    m_nodes.push_back(std::move(n));
    return NodeId(m_nodes.size() - 1);
}

NodeId Graph::addOp(const std::string& op, std::vector<NodeId> inputs, Attrs attrs, const std::string& name) {
    const OpDef* def = findOp(op);
    TB_USER_CHECK(def) << "unknown operator '" << op << "'" << (name.empty() ? "" : " at node '" + name + "'");
    std::vector<TensorType> types;
    for (NodeId i : inputs) {
        TB_CHECK(i >= 0 && size_t(i) < m_nodes.size()) << "node input " << i << " out of range";
        types.push_back(m_nodes[size_t(i)].type);
    }
    Node n;
    n.kind = NodeKind::Op;
    n.op = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    try {
        n.type = def->inferType(types, n.attrs);
    } catch (const UserError& e) {
        TB_USER_ERROR() << op << (name.empty() ? "" : " '" + name + "'") << ": " << e.what();
    }
    m_nodes.push_back(std::move(n));
    return NodeId(m_nodes.size() - 1);
}

std::vector<std::vector<NodeId>> Graph::consumers() const {
    std::vector<std::vector<NodeId>> out(m_nodes.size());
    for (size_t i = 0; i < m_nodes.size(); ++i)
        for (NodeId p : m_nodes[i].inputs) out[size_t(p)].push_back(NodeId(i));
    return out;
}

void Graph::inferTypes() {
    for (auto& n : m_nodes) {
        if (n.kind != NodeKind::Op) continue;
        const OpDef* def = findOp(n.op);
        TB_USER_CHECK(def) << "unknown operator '" << n.op << "'";
        std::vector<TensorType> types;
        for (NodeId i : n.inputs) types.push_back(m_nodes[size_t(i)].type);
        try {
            n.type = def->inferType(types, n.attrs);
        } catch (const UserError& e) {
            TB_USER_ERROR() << n.op << (n.name.empty() ? "" : " '" + n.name + "'") << ": " << e.what();
        }
    }
}

Graph Graph::pruned() const {
    std::vector<char> live(m_nodes.size(), 0);
    for (NodeId o : m_outputs) live[size_t(o)] = 1;
    for (size_t i = m_nodes.size(); i-- > 0;)
        if (live[i])
            for (NodeId p : m_nodes[i].inputs) live[size_t(p)] = 1;
    for (NodeId in : m_inputs) live[size_t(in)] = 1;  // inputs stay, even if unused
    Graph g;
    std::vector<NodeId> remap(m_nodes.size(), -1);
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        if (!live[i]) continue;
        Node n = m_nodes[i];
        for (auto& p : n.inputs) p = remap[size_t(p)];
        g.m_nodes.push_back(std::move(n));
        remap[i] = NodeId(g.m_nodes.size() - 1);
        if (m_nodes[i].kind == NodeKind::Input) g.m_inputs.push_back(remap[i]);
    }
    for (NodeId o : m_outputs) g.m_outputs.push_back(remap[size_t(o)]);
    return g;
}

std::string Graph::print() const {
    std::ostringstream os;
    auto shape = [](const TensorType& t) {
        std::string s = "[";
        for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
        return s + "]";
    };
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        const Node& n = m_nodes[i];
        os << '%' << i << " = ";
        if (n.kind == NodeKind::Input) {
            os << "input \"" << n.name << "\"";
        } else if (n.kind == NodeKind::Constant) {
            os << "constant \"" << n.name << "\"";
        } else {
            os << n.op << '(';
            bool first = true;
            for (NodeId p : n.inputs) {
                os << (first ? "" : ", ") << '%' << p;
                first = false;
            }
            for (const auto& [k, v] : n.attrs.map()) {
                os << (first ? "" : ", ") << k << '=' << attrToString(v);
                first = false;
            }
            os << ')';
        }
        os << " : " << shape(n.type) << ' ' << te::dtypeName(n.type.dtype) << '\n';
    }
    os << "outputs:";
    for (NodeId o : m_outputs) os << " %" << o;
    os << '\n';
    return os.str();
}

}  // namespace tb::graph
