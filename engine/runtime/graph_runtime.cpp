// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/graph_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "engine/support/error.h"

namespace tb::runtime {

namespace {
std::string shapeText(const std::vector<int64_t>& s) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
    os << "]";
    return os.str();
}
}  // namespace

int64_t ExecNode::numElements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

void ExecGraph::validate() const {
    const int n = int(nodes.size());
    for (int i = 0; i < n; ++i) {
        const ExecNode& node = nodes[size_t(i)];
        TB_CHECK(node.storage >= 0 && node.storage < int(storageBytes.size()))
            << "node " << i << " (" << node.name << ") has storage " << node.storage;
        TB_CHECK(storageBytes[size_t(node.storage)] >= node.numElements() * 4)
            << "node " << i << " (" << node.name << ") does not fit its storage";
        if (node.kind != ExecNode::Kind::Op) {
            TB_CHECK(node.inputs.empty()) << "input/param node " << i << " has inputs";
            continue;
        }
        TB_CHECK(!node.func.empty()) << "op node " << i << " (" << node.name << ") has no function";
        for (int in : node.inputs) {
            TB_CHECK(in >= 0 && in < i) << "op node " << i << " (" << node.name << ") reads node " << in;
            TB_CHECK(nodes[size_t(in)].storage != node.storage)
                << "op node " << i << " (" << node.name << ") writes the storage of its input " << in;
        }
    }
    for (int id : inputs) TB_CHECK(id >= 0 && id < n && nodes[size_t(id)].kind == ExecNode::Kind::Input) << id;
    for (int id : outputs) TB_CHECK(id >= 0 && id < n) << "output node " << id;
}

std::vector<int> ExecGraph::opNodes() const {
    std::vector<int> ops;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].kind == ExecNode::Kind::Op) ops.push_back(int(i));
    return ops;
}

GraphRuntime::GraphRuntime(ExecGraph graph, std::vector<KernelFn> funcs)
    : m_graph(std::move(graph)), m_funcs(std::move(funcs)) {
    m_graph.validate();
    TB_CHECK(m_funcs.size() == m_graph.nodes.size()) << m_funcs.size() << " functions for " << m_graph.nodes.size()
                                                     << " nodes";
    // Every storage in one zeroed block on 2 MiB huge pages (support/huge_page_arena.h), each
    // 64-byte aligned: the weights stream from DRAM once per run, and on 4 KiB pages every 4 KiB of
    // them cost a page walk.
    size_t total = 0;
    for (int64_t bytes : m_graph.storageBytes) total += std::max<size_t>(64, (size_t(bytes) + 63) / 64 * 64);
    m_arena = std::make_unique<support::HugePageArena>(total, support::hugePagesEnabled());
    auto* next = static_cast<unsigned char*>(m_arena->data());
    for (int64_t bytes : m_graph.storageBytes) {
        m_storage.push_back(next);
        next += std::max<size_t>(64, (size_t(bytes) + 63) / 64 * 64);
    }
    m_ops = m_graph.opNodes();
    m_args.resize(m_graph.nodes.size());
    for (int id : m_ops) {
        const ExecNode& node = m_graph.nodes[size_t(id)];
        TB_CHECK(m_funcs[size_t(id)]) << "no function for kernel " << node.func;
        auto& args = m_args[size_t(id)];
        for (int in : node.inputs) args.push_back(m_storage[size_t(m_graph.nodes[size_t(in)].storage)]);
        args.push_back(m_storage[size_t(node.storage)]);
    }
}

GraphRuntime::~GraphRuntime() = default;

void GraphRuntime::setParam(int node, const float* data, size_t count) {
    TB_USER_CHECK(node >= 0 && node < int(m_graph.nodes.size()) &&
                  m_graph.nodes[size_t(node)].kind == ExecNode::Kind::Param)
        << "node " << node << " is not a parameter";
    const ExecNode& n = m_graph.nodes[size_t(node)];
    TB_USER_CHECK(int64_t(count) == n.numElements())
        << "parameter '" << n.name << "' of shape " << shapeText(n.shape) << " needs " << n.numElements()
        << " values, got " << count;
    std::memcpy(m_storage[size_t(n.storage)], data, count * sizeof(float));
}

void GraphRuntime::setInput(size_t index, const float* data, size_t count) {
    TB_USER_CHECK(index < m_graph.inputs.size())
        << "input index " << index << " out of range (the network has " << m_graph.inputs.size() << " inputs)";
    const ExecNode& n = m_graph.nodes[size_t(m_graph.inputs[index])];
    TB_USER_CHECK(int64_t(count) == n.numElements())
        << "input '" << n.name << "' of shape " << shapeText(n.shape) << " needs " << n.numElements()
        << " values, got " << count;
    std::memcpy(m_storage[size_t(n.storage)], data, count * sizeof(float));
}

int GraphRuntime::inputIndex(const std::string& name) const {
    for (size_t i = 0; i < m_graph.inputs.size(); ++i)
        if (m_graph.nodes[size_t(m_graph.inputs[i])].name == name) return int(i);
    return -1;
}

const std::vector<int64_t>& GraphRuntime::inputShape(size_t index) const {
    return m_graph.nodes.at(size_t(m_graph.inputs.at(index))).shape;
}

const std::vector<int64_t>& GraphRuntime::outputShape(size_t index) const {
    return m_graph.nodes.at(size_t(m_graph.outputs.at(index))).shape;
}

void GraphRuntime::callNode(size_t k) {
    const int id = m_ops[k];
    const int32_t rc = m_funcs[size_t(id)](m_args[size_t(id)].data());
    TB_CHECK(rc == 0) << "kernel " << m_graph.nodes[size_t(id)].func << " returned " << rc;
}

void GraphRuntime::run() {
    for (size_t k = 0; k < m_ops.size(); ++k) callNode(k);
}

const float* GraphRuntime::outputData(size_t index) const {
    TB_CHECK(index < m_graph.outputs.size()) << "output " << index;
    return static_cast<const float*>(m_storage[size_t(m_graph.nodes[size_t(m_graph.outputs[index])].storage)]);
}

std::vector<float> GraphRuntime::output(size_t index) const {
    const float* p = outputData(index);
    const int64_t n = m_graph.nodes[size_t(m_graph.outputs[index])].numElements();
    return std::vector<float>(p, p + n);
}

std::vector<float> GraphRuntime::nodeValue(int node) const {
    TB_USER_CHECK(node >= 0 && node < int(m_graph.nodes.size()))
        << "node " << node << " out of range (the graph has " << m_graph.nodes.size() << " nodes)";
    const ExecNode& n = m_graph.nodes[size_t(node)];
    const float* p = static_cast<const float*>(m_storage[size_t(n.storage)]);
    return std::vector<float>(p, p + n.numElements());
}

std::vector<KernelProfile> GraphRuntime::profile(int number) {
    std::vector<KernelProfile> out;
    number = std::max(number, 1);
    for (size_t k = 0; k < m_ops.size(); ++k) {
        callNode(k);  // warm-up
        const auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < number; ++r) callNode(k);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        const ExecNode& n = m_graph.nodes[size_t(m_ops[k])];
        out.push_back({m_ops[k], n.name, n.func, ms / number, n.flop, 0.0});
    }
    // Whole-network runs, each call timed where it stands.
    std::vector<double> inNet(m_ops.size(), 0.0);
    for (int r = 0; r < number; ++r) {
        for (size_t k = 0; k < m_ops.size(); ++k) {
            const auto t0 = std::chrono::steady_clock::now();
            callNode(k);
            inNet[k] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        }
    }
    for (size_t k = 0; k < m_ops.size(); ++k) out[k].inNetworkMs = inNet[k] / number;
    return out;
}

int64_t GraphRuntime::allocatedBytes() const {
    int64_t total = 0;
    for (int64_t b : m_graph.storageBytes) total += b;
    return total;
}

}  // namespace tb::runtime
