// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/graph_json.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/support/error.h"

namespace tb::runtime {

namespace {
constexpr uint64_t kListMagic = 0xF7E58D4F05049CB7ULL;
constexpr uint64_t kArrayMagic = 0xDD5E40F096B4A13FULL;

template <class T>
void put(std::string& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}

class Reader {
public:
    Reader(const std::string& bytes, const std::string& source) : m_b(bytes), m_src(source) {}
    template <class T>
    T get() {
        TB_USER_CHECK(m_pos + sizeof(T) <= m_b.size()) << m_src << ": truncated param file";
        T v;
        std::memcpy(&v, m_b.data() + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }
    std::string bytes(uint64_t n) {
        TB_USER_CHECK(n <= m_b.size() - m_pos) << m_src << ": truncated param file";
        std::string s = m_b.substr(m_pos, size_t(n));
        m_pos += size_t(n);
        return s;
    }

private:
    const std::string& m_b;
    const std::string& m_src;
    size_t m_pos = 0;
};
}  // namespace

std::string graphToJson(const ExecGraph& g) {
    using nlohmann::ordered_json;
    ordered_json nodes = ordered_json::array(), argNodes = ordered_json::array();
    ordered_json storage = ordered_json::array(), shapes = ordered_json::array(), dtypes = ordered_json::array();
    ordered_json rowPtr = ordered_json::array();
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const ExecNode& n = g.nodes[i];
        ordered_json j;
        if (n.kind == ExecNode::Kind::Op) {
            j["op"] = "tvm_op";
            j["name"] = n.name;
            ordered_json attrs;
            attrs["num_outputs"] = "1";
            attrs["num_inputs"] = std::to_string(n.inputs.size());
            attrs["flatten_data"] = "0";
            attrs["func_name"] = n.func;
            if (n.flop > 0) attrs["flop"] = std::to_string(int64_t(n.flop));
            j["attrs"] = attrs;
            ordered_json ins = ordered_json::array();
            for (int in : n.inputs) ins.push_back({in, 0, 0});
            j["inputs"] = ins;
        } else {
            j["op"] = "null";
            j["name"] = n.name;
            j["inputs"] = ordered_json::array();
            argNodes.push_back(i);
        }
        nodes.push_back(j);
        rowPtr.push_back(i);
        storage.push_back(n.storage);
        shapes.push_back(n.shape);
        dtypes.push_back("float32");
    }
    rowPtr.push_back(g.nodes.size());
    ordered_json heads = ordered_json::array();
    for (int o : g.outputs) heads.push_back({o, 0, 0});
    ordered_json root;
    root["nodes"] = nodes;
    root["arg_nodes"] = argNodes;
    root["heads"] = heads;
    root["attrs"] = {{"dltype", {"list_str", dtypes}},
                     {"storage_id", {"list_int", storage}},
                     {"shape", {"list_shape", shapes}}};
    root["node_row_ptr"] = rowPtr;
    return root.dump(2);
}

ExecGraph graphFromJson(const std::string& text, const std::vector<std::string>& paramNames,
                        const std::string& source) {
    nlohmann::json root;
    try {
        root = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
        TB_USER_ERROR() << source << ": not JSON (" << e.what() << ")";
    }
    const std::set<std::string> params(paramNames.begin(), paramNames.end());
    ExecGraph g;
    try {
        const auto& nodes = root.at("nodes");
        const auto& attrs = root.at("attrs");
        const auto& storage = attrs.at("storage_id").at(1);
        const auto& shapes = attrs.at("shape").at(1);
        const auto& dtypes = attrs.at("dltype").at(1);
        if (root.contains("node_row_ptr")) {
            const auto& rp = root.at("node_row_ptr");
            for (size_t i = 0; i + 1 < rp.size(); ++i)
                TB_USER_CHECK(rp[i + 1].get<int64_t>() - rp[i].get<int64_t>() == 1)
                    << source << ": node " << i << " has several outputs (not supported)";
        }
        TB_USER_CHECK(storage.size() == nodes.size() && shapes.size() == nodes.size() &&
                      dtypes.size() == nodes.size())
            << source << ": attrs do not have one entry per node";
        for (size_t i = 0; i < nodes.size(); ++i) {
            const auto& j = nodes[i];
            ExecNode n;
            n.name = j.at("name").get<std::string>();
            const std::string op = j.at("op").get<std::string>();
            TB_USER_CHECK(dtypes[i].get<std::string>() == "float32")
                << source << ": node '" << n.name << "' has dtype " << dtypes[i].get<std::string>()
                << " (only float32 is supported)";
            n.storage = storage[i].get<int>();
            n.shape = shapes[i].get<std::vector<int64_t>>();
            if (op == "null") {
                n.kind = params.count(n.name) ? ExecNode::Kind::Param : ExecNode::Kind::Input;
                if (n.kind == ExecNode::Kind::Input) g.inputs.push_back(int(i));
            } else {
                TB_USER_CHECK(op == "tvm_op") << source << ": node '" << n.name << "' has op '" << op << "'";
                n.kind = ExecNode::Kind::Op;
                const auto& a = j.at("attrs");
                n.func = a.at("func_name").get<std::string>();
                if (a.contains("flop")) n.flop = std::stod(a.at("flop").get<std::string>());
                for (const auto& e : j.at("inputs")) {
                    const int id = e.at(0).get<int>();
                    TB_USER_CHECK(id >= 0 && size_t(id) < i && e.at(1).get<int>() == 0)
                        << source << ": node '" << n.name << "' reads entry " << e.dump();
                    n.inputs.push_back(id);
                }
            }
            g.nodes.push_back(std::move(n));
        }
        for (const auto& h : root.at("heads")) {
            const int id = h.at(0).get<int>();
            TB_USER_CHECK(id >= 0 && size_t(id) < g.nodes.size()) << source << ": head " << h.dump();
            g.outputs.push_back(id);
        }
    } catch (const nlohmann::json::exception& e) {
        TB_USER_ERROR() << source << ": not a graph JSON (" << e.what() << ")";
    }
    int maxStorage = -1;
    for (const auto& n : g.nodes) {
        TB_USER_CHECK(n.storage >= 0) << source << ": node '" << n.name << "' has storage id " << n.storage;
        maxStorage = std::max(maxStorage, n.storage);
    }
    g.storageBytes.assign(size_t(maxStorage + 1), 4);
    for (const auto& n : g.nodes)
        g.storageBytes[size_t(n.storage)] = std::max(g.storageBytes[size_t(n.storage)], n.numElements() * 4);
    try {
        g.validate();
    } catch (const InternalError& e) {
        TB_USER_ERROR() << source << ": inconsistent graph (" << e.what() << ")";
    }
    return g;
}

std::string saveParams(const std::map<std::string, NamedArray>& params) {
    std::string out;
    put<uint64_t>(out, kListMagic);
    put<uint64_t>(out, 0);
    put<uint64_t>(out, params.size());
    for (const auto& [name, a] : params) {
        put<uint64_t>(out, name.size());
        out += name;
    }
    put<uint64_t>(out, params.size());
    for (const auto& [name, a] : params) {
        put<uint64_t>(out, kArrayMagic);
        put<uint64_t>(out, 0);
        put<int32_t>(out, 1);  // kDLCPU
        put<int32_t>(out, 0);
        put<int32_t>(out, int32_t(a.shape.size()));
        put<uint8_t>(out, 2);  // kDLFloat
        put<uint8_t>(out, 32);
        put<uint16_t>(out, 1);
        for (int64_t d : a.shape) put<int64_t>(out, d);
        put<int64_t>(out, int64_t(a.data.size() * sizeof(float)));
        out.append(reinterpret_cast<const char*>(a.data.data()), a.data.size() * sizeof(float));
    }
    return out;
}

std::map<std::string, NamedArray> loadParams(const std::string& bytes, const std::string& source) {
    Reader r(bytes, source);
    TB_USER_CHECK(r.get<uint64_t>() == kListMagic) << source << ": not a TVM param dictionary (bad magic)";
    r.get<uint64_t>();
    const uint64_t numNames = r.get<uint64_t>();
    TB_USER_CHECK(numNames <= bytes.size()) << source << ": corrupt name count";
    std::vector<std::string> names;
    for (uint64_t i = 0; i < numNames; ++i) names.push_back(r.bytes(r.get<uint64_t>()));
    TB_USER_CHECK(r.get<uint64_t>() == numNames) << source << ": name and array counts differ";
    std::map<std::string, NamedArray> out;
    for (uint64_t i = 0; i < numNames; ++i) {
        TB_USER_CHECK(r.get<uint64_t>() == kArrayMagic) << source << ": array '" << names[i] << "' has a bad magic";
        r.get<uint64_t>();
        const int32_t devType = r.get<int32_t>();
        r.get<int32_t>();
        TB_USER_CHECK(devType == 1) << source << ": array '" << names[i] << "' is not on the CPU";
        const int32_t ndim = r.get<int32_t>();
        TB_USER_CHECK(ndim >= 0 && ndim <= 32) << source << ": array '" << names[i] << "' has ndim " << ndim;
        const uint8_t code = r.get<uint8_t>(), bits = r.get<uint8_t>();
        const uint16_t lanes = r.get<uint16_t>();
        TB_USER_CHECK(code == 2 && bits == 32 && lanes == 1)
            << source << ": array '" << names[i] << "' is not float32";
        NamedArray a;
        int64_t n = 1;
        for (int32_t d = 0; d < ndim; ++d) {
            a.shape.push_back(r.get<int64_t>());
            n *= a.shape.back();
        }
        const int64_t nbytes = r.get<int64_t>();
        TB_USER_CHECK(nbytes == n * 4) << source << ": array '" << names[i] << "' has " << nbytes
                                       << " bytes for " << n << " elements";
        const std::string data = r.bytes(uint64_t(nbytes));
        a.data.resize(size_t(n));
        if (!data.empty()) std::memcpy(a.data.data(), data.data(), data.size());  // data() of empty: null
        out[names[i]] = std::move(a);
    }
    return out;
}

}  // namespace tb::runtime
