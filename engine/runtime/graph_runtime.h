// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file graph_runtime.h
/// \brief The graph executor: runs a compiled network's kernels in order over preallocated
/// buffers (TVM's GraphExecutor, src/runtime/graph_executor/graph_executor.cc).
///
/// A compiled network is, at run time, nothing but a list of kernel calls: each fused group of the
/// network became one kernel (`int32_t f(void* const* args)`, codegen/kernel_abi.h) whose arguments
/// are its input tensors followed by its output tensor. This file holds that list (`ExecGraph`,
/// the content of TVM's graph JSON) and the executor that runs it. It knows nothing about how the
/// kernels were made: the in-process compiler (build_module.h) hands it functions loaded by the
/// JIT, the exported-library runner hands it functions found with dlsym in a shared library. So it
/// links neither LLVM nor the compiler.
///
/// Memory: every tensor lives in a storage chosen by the static memory plan (memory_plan.h); the
/// executor allocates each storage once (64-byte aligned, float32 elements, all in one block of
/// 2 MiB huge pages: support/huge_page_arena.h) when it is created.
/// Constants (weights) are copied into their storages once (`setParam`) and never touched again;
/// inputs are copied in by `setInput` before `run`; outputs are read after `run`.
///
/// Threads: kernels parallelise their outer loops on the engine's thread pool
/// (`tb_rt_parallel_for`, sized by TB_NUM_THREADS); `run` itself is not reentrant.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/support/huge_page_arena.h"

namespace tb::runtime {

/// A compiled kernel's entry point (same ABI as codegen::KernelFunction).
using KernelFn = int32_t (*)(void* const* args);

/// One value of the executable graph: a graph input, a constant (param) or a kernel's output.
/// Mirrors a node of TVM's graph JSON (`"op": "null"` for inputs and params, `"tvm_op"` for calls).
struct ExecNode {
    enum class Kind : uint8_t { Input, Param, Op };
    Kind kind = Kind::Op;
    std::string name;              ///< input name, param name (`p0`, ...) or the kernel's fused name
    std::string func;              ///< Op: the kernel symbol to call
    std::vector<int> inputs;       ///< Op: node ids passed as arguments, in order (output last)
    std::vector<int64_t> shape;    ///< float32 tensor shape
    int storage = -1;              ///< storage id (memory plan)
    double flop = 0;               ///< Op: FLOPs of one call (for profiles), 0 if unknown
    int64_t numElements() const;
};

/// The executable form of a network (TVM's graph JSON content).
struct ExecGraph {
    std::vector<ExecNode> nodes;        ///< topological order: a node only reads earlier nodes
    std::vector<int> inputs;            ///< node ids of the graph inputs, in the network's order
    std::vector<int> outputs;           ///< node ids of the graph outputs, in order
    std::vector<int64_t> storageBytes;  ///< size of every storage (bytes)

    /// Checks the invariants above (ids in range, topological order, every node has a storage large
    /// enough, no Op writes a storage one of its inputs lives in). Throws InternalError naming the node.
    void validate() const;
    /// Node ids of the Op nodes, in execution order.
    std::vector<int> opNodes() const;
};

/// Timing of one kernel (profile()).
struct KernelProfile {
    int node = -1;          ///< Op node id
    std::string name;       ///< the node's name
    std::string func;       ///< kernel symbol
    double meanMs = 0;      ///< mean time of one call (ms), repeated back to back after a warm-up (warm caches)
    double flop = 0;        ///< FLOPs of one call
    /// Mean time of the call in its place in whole-network runs (ms): its inputs and weights as the
    /// kernels before it left the caches. The sum over calls minus the sum of meanMs is the time
    /// the network loses between kernels (cold weights, activations evicted from L2).
    double inNetworkMs = 0;
};

class GraphRuntime {
public:
    /// `funcs[i]` is the kernel of node i (ignored, may be null, for Input/Param nodes). Allocates
    /// every storage. Throws InternalError when the graph is invalid or an Op has no function.
    GraphRuntime(ExecGraph graph, std::vector<KernelFn> funcs);
    ~GraphRuntime();
    GraphRuntime(const GraphRuntime&) = delete;
    GraphRuntime& operator=(const GraphRuntime&) = delete;

    const ExecGraph& graph() const { return m_graph; }

    /// Copies a constant's values into its storage (once; params never change between runs).
    /// Throws UserError when node is not a Param or `count` differs from its element count.
    void setParam(int node, const float* data, size_t count);
    /// Copies graph input `index` (position in graph().inputs). Throws UserError for a bad index or
    /// element count (the message names the input and its shape).
    void setInput(size_t index, const float* data, size_t count);
    /// Index of the graph input named `name`, or -1.
    int inputIndex(const std::string& name) const;
    size_t numInputs() const { return m_graph.inputs.size(); }
    size_t numOutputs() const { return m_graph.outputs.size(); }
    const std::vector<int64_t>& inputShape(size_t index) const;
    const std::vector<int64_t>& outputShape(size_t index) const;

    /// Runs every kernel once, in order. Throws InternalError if a kernel returns non-zero.
    void run();
    /// Output `index` after run() (points into the runtime's storage; valid until the next run).
    const float* outputData(size_t index) const;
    std::vector<float> output(size_t index) const;
    /// The value of any node after run() (TVM debug executor `debug_get_output`): its storage's
    /// first numElements() floats. Only meaningful while no later kernel reused that storage (true
    /// for graph outputs, inputs, params and the inputs of the last kernel). Throws UserError for a
    /// node id out of range.
    std::vector<float> nodeValue(int node) const;

    /// Per-kernel time (TVM debug executor): every kernel is called `number` times after one warm-up
    /// call, over the state the previous run() left (inputs and intermediates in place), and timed
    /// with a steady clock; then the network runs `number` more times with each call timed in place
    /// (KernelProfile::inNetworkMs). Call after at least one run(). One entry per Op node, in order.
    std::vector<KernelProfile> profile(int number = 10);

    /// Bytes held by all storages.
    int64_t allocatedBytes() const;
    /// Bytes of the storages' block on 2 MiB huge pages now (HugePageArena::hugePageBytes; -1 where
    /// unknown).
    int64_t hugePageBytes() const { return m_arena->hugePageBytes(); }

private:
    void callNode(size_t k);

    ExecGraph m_graph;
    std::vector<KernelFn> m_funcs;
    std::unique_ptr<support::HugePageArena> m_arena;  // every storage, on huge pages
    std::vector<void*> m_storage;                 // per storage id, 64-byte aligned, into m_arena
    std::vector<std::vector<void*>> m_args;       // per Op node, the argument pointers
    std::vector<int> m_ops;
};

}  // namespace tb::runtime
