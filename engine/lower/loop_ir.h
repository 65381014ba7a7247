// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file loop_ir.h
/// \brief The loop-nest IR a schedule lowers to (TVM's TIR after `tvm.lower`, before codegen).
///
/// Where it sits: schedule/ (an Ansor State: stages, iterators, transform steps) is lowered into a
/// `LoweredFunc` here; simplify.h cleans it up; codegen/ turns it into LLVM IR and machine code;
/// measure/ times the result. The GUI prints it (`LoweredFunc::print`) as its "lowered IR" view.
///
/// The IR, in one paragraph: a kernel is a `LoweredFunc` whose arguments are the ComputeDAG's io
/// tensors in order (inputs, then outputs; `ComputeDAG::tensors()`), each bound to a `Buffer`. The
/// body is a tree of statements:
///   - `For`        a loop `for (var = min; var < min + extent; ++var)` with a kind: Serial,
///                  Parallel (outlined onto the thread pool by codegen), Vectorized (one iteration
///                  of N lanes as explicit LLVM vector instructions) or Unrolled (body copied N times).
///   - `Allocate`   a buffer that lives for the body (Local = stack of the running thread, the cache
///                  stages of `cache_write`/`cache_read`; Global = heap workspace, non-inlined
///                  intermediate stages such as `pad_temp`).
///   - `BufferStore` `buffer[i0, i1, ...] = value`.
///   - `IfThenElse` a guard (non-divisible split tails, padding) with an optional else branch.
///   - `Seq`        statements in order.
///   - `Attr`       a key/value pragma around a body; today `pragma_auto_unroll_max_step` (the Ansor
///                  annotation, consumed by `unrollLoops` in simplify.h) and `pragma_unroll_explicit`.
///   - `Prefetch`   (CPU only) a hint: bring the cache line holding `buffer[offset]` (flat element
///                  offset) into the L2 cache; no effect on values, never faults (llvm.prefetch).
///                  Inserted by prefetch.h at code generation, never by the lowering.
///   - `Barrier`    (GPU only) every thread of the work-group / thread block waits here until all
///                  reached it, and their writes to Shared buffers are visible (TVM's
///                  `tvm_storage_sync("shared")`: OpenCL `barrier(CLK_LOCAL_MEM_FENCE)`, CUDA
///                  `__syncthreads()`). Inserted by lower_gpu.h, never by the CPU lowering.
///
/// GPU extensions (lower_gpu.h makes them; the CPU lowering and codegen_llvm never see them): a
/// `For` of kind ThreadBinding carries a `threadTag` ("blockIdx.x".."blockIdx.z", "threadIdx.x"..
/// "threadIdx.z" or "vthread") and means "this loop's iterations are the GPU's blocks / threads
/// along that axis" (TVM's ForKind::kThreadBinding / `thread_extent` AttrStmt): the variable is the
/// block or thread index, the extent the launch extent. A Shared buffer lives in a thread block's
/// shared memory (`__local` in OpenCL C, `__shared__` in CUDA), one copy per block, visible to all
/// its threads; a Local buffer is private to one thread (registers).
/// Expressions are te::Expr trees (expr.h). A read of a buffer is a te `LoadNode` whose `op` is the
/// buffer's `key` (a placeholder operation created with the buffer; make it with `bufferLoad`), so
/// every te utility (printer, substitute, postOrderVisit) works on lowered expressions unchanged.
/// Lowered expressions never contain `Reduce` nodes (reductions are loops of stores) and never
/// load a te Operation directly: every load names a Buffer bound by the function or an Allocate.
///
/// Buffers are flat arrays of `dtype` (float32 in practice) with a shape and strides in elements:
/// element (i0, ..., in) lives at `sum(ik * strides[k])` (row-major strides by default). Indices
/// are in-bounds by construction; codegen does not check them (the measure sandbox does).
///
/// Semantics worth knowing (as TVM): a Vectorized loop asserts that its iterations are
/// independent; codegen falls back to a serial loop when it cannot vectorize a body. A Parallel loop
/// asserts the same for threads. Loop variables are Int32 te Vars; codegen evaluates all integer
/// arithmetic in 64 bits.
///
/// Construction: the make* functions below; nodes are immutable and shared (`std::shared_ptr<const>`),
/// so passes rebuild only what changes (Halide style).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/te/expr.h"
#include "engine/te/operation.h"

namespace tb::lower {

// ---- buffers ------------------------------------------------------------------------------

enum class BufferScope : uint8_t {
    Global,  ///< a kernel argument, or a heap-allocated intermediate (Allocate of a Global buffer)
    Local,   ///< a per-thread scratch buffer (stack; TVM's "local" scope of cache stages)
    Shared,  ///< GPU only: one copy per thread block, shared by its threads (TVM's "shared" scope)
};
const char* bufferScopeName(BufferScope s);  ///< "global", "local", "shared"

struct BufferNode {
    std::string name;
    std::vector<int64_t> shape;    ///< extents per dimension (elements)
    std::vector<int64_t> strides;  ///< element strides per dimension (same length as shape)
    te::DType dtype = te::DType::Float32;
    BufferScope scope = BufferScope::Global;
    /// Identity of the buffer inside expressions: loads are te LoadNodes whose op is `key`.
    te::Operation key;

    size_t ndim() const { return shape.size(); }
    /// Number of elements the buffer spans: 1 + sum((shape[k] - 1) * strides[k]) (product of the
    /// shape for row-major strides); 0 for an empty shape dimension.
    int64_t spanElements() const;
    /// Bytes of one element of `dtype` (8 for float64 / int64, 1 for bool, else 4).
    int64_t elementBytes() const;
    /// spanElements() * elementBytes().
    int64_t spanBytes() const;
};
using Buffer = std::shared_ptr<const BufferNode>;

/// A new buffer. Empty `strides` = row-major (last dimension contiguous). A scalar buffer has
/// shape {1}. Throws InternalError for non-positive extents or a stride count != shape size.
Buffer makeBuffer(const std::string& name, std::vector<int64_t> shape, BufferScope scope = BufferScope::Global,
                  std::vector<int64_t> strides = {}, te::DType dtype = te::DType::Float32);

/// `buffer[indices...]` as an expression (a te LoadNode on buffer->key); indices.size() == ndim.
te::Expr bufferLoad(const Buffer& buffer, std::vector<te::Expr> indices);

/// The flat element offset `sum(indices[k] * strides[k])` (built with te's folding constructors).
te::Expr flatIndex(const Buffer& buffer, const std::vector<te::Expr>& indices);

// ---- statements ----------------------------------------------------------------------------

enum class StmtKind : uint8_t { For, Allocate, BufferStore, IfThenElse, Seq, Attr, Barrier, Prefetch };

/// How a For loop runs (TVM's ForKind; Unrolled = kUnrolled, Vectorized = kVectorized,
/// ThreadBinding = kThreadBinding: GPU only, the loop is a block / thread axis named by the For's
/// `threadTag`; see the file comment).
enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, ThreadBinding };
const char* forKindName(ForKind k);  ///< "serial", "parallel", "vectorized", "unrolled", "thread_binding"

struct StmtNode {
    StmtKind kind;
    explicit StmtNode(StmtKind k) : kind(k) {}
    virtual ~StmtNode() = default;
};
using Stmt = std::shared_ptr<const StmtNode>;

/// `for (var = min; var < min + extent; ++var) body`. min/extent are Int32 expressions of outer
/// loop variables (constants after bound inference). Vectorized and Unrolled need a constant
/// extent to take effect (codegen runs them serially otherwise).
struct ForNode : StmtNode {
    te::Var var;
    te::Expr min, extent;
    ForKind forKind = ForKind::Serial;
    Stmt body;
    /// ThreadBinding only: "blockIdx.x", ..., "threadIdx.z" or "vthread" (empty otherwise).
    std::string threadTag;
    ForNode(te::Var v, te::Expr mn, te::Expr ext, ForKind k, Stmt b, std::string tag = {})
        : StmtNode(StmtKind::For), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), forKind(k),
          body(std::move(b)), threadTag(std::move(tag)) {}
};

/// `buffer` exists (uninitialised) while `body` runs.
struct AllocateNode : StmtNode {
    Buffer buffer;
    Stmt body;
    AllocateNode(Buffer buf, Stmt b) : StmtNode(StmtKind::Allocate), buffer(std::move(buf)), body(std::move(b)) {}
};

/// `buffer[indices...] = value` (value has the buffer's dtype).
struct BufferStoreNode : StmtNode {
    Buffer buffer;
    std::vector<te::Expr> indices;
    te::Expr value;
    BufferStoreNode(Buffer buf, std::vector<te::Expr> idx, te::Expr v)
        : StmtNode(StmtKind::BufferStore), buffer(std::move(buf)), indices(std::move(idx)), value(std::move(v)) {}
};

/// `if (condition) thenCase else elseCase`; elseCase may be null.
struct IfThenElseNode : StmtNode {
    te::Expr condition;
    Stmt thenCase, elseCase;
    IfThenElseNode(te::Expr c, Stmt t, Stmt e)
        : StmtNode(StmtKind::IfThenElse), condition(std::move(c)), thenCase(std::move(t)), elseCase(std::move(e)) {}
};

/// Statements run in order. An empty Seq is the no-op statement.
struct SeqNode : StmtNode {
    std::vector<Stmt> seq;
    explicit SeqNode(std::vector<Stmt> s) : StmtNode(StmtKind::Seq), seq(std::move(s)) {}
};

/// Attribute keys of AttrNode (TVM's pragma names on the loop they annotate).
namespace attr {
/// Ansor's `auto_unroll_max_step` pragma: loops inside whose unrolled step count stays within the
/// value are unrolled (see unrollLoops in simplify.h).
inline constexpr const char* kAutoUnrollMaxStep = "pragma_auto_unroll_max_step";
/// 1 = unroll explicitly (copies in the IR), 0 = leave the decision to LLVM (TVM's unroll_explicit).
inline constexpr const char* kUnrollExplicit = "pragma_unroll_explicit";
}  // namespace attr

/// A pragma `key = value` that applies to `body`.
struct AttrNode : StmtNode {
    std::string key;
    int64_t value = 0;
    Stmt body;
    AttrNode(std::string k, int64_t v, Stmt b) : StmtNode(StmtKind::Attr), key(std::move(k)), value(v), body(std::move(b)) {}
};

/// GPU only: a work-group / thread-block barrier with shared-memory fence (see the file comment).
struct BarrierNode : StmtNode {
    BarrierNode() : StmtNode(StmtKind::Barrier) {}
};

/// CPU only: a prefetch hint for the cache line of `buffer` that holds flat element `offset` (an
/// Int32/Int64 expression; it may point past the buffer's end: a prefetch never faults).
struct PrefetchNode : StmtNode {
    Buffer buffer;
    te::Expr offset;
    PrefetchNode(Buffer buf, te::Expr off) : StmtNode(StmtKind::Prefetch), buffer(std::move(buf)), offset(std::move(off)) {}
};

template <class T>
const T* as(const Stmt& s) {
    return dynamic_cast<const T*>(s.get());
}

/// `threadTag` must be given exactly for ForKind::ThreadBinding (InternalError otherwise).
Stmt makeFor(te::Var var, te::Expr min, te::Expr extent, ForKind kind, Stmt body, std::string threadTag = {});
/// The loop `f` with other bounds, kind and body, keeping its variable and thread tag (what passes
/// that rebuild a loop use, so a ThreadBinding loop stays bound).
Stmt remakeFor(const ForNode* f, te::Expr min, te::Expr extent, ForKind kind, Stmt body);
/// Shorthand: a loop from 0 to extent.
Stmt makeFor(te::Var var, int64_t extent, ForKind kind, Stmt body);
Stmt makeAllocate(Buffer buffer, Stmt body);
/// Throws InternalError when indices.size() != ndim or value's dtype differs from the buffer's.
Stmt makeStore(Buffer buffer, std::vector<te::Expr> indices, te::Expr value);
Stmt makeIf(te::Expr condition, Stmt thenCase, Stmt elseCase = nullptr);
/// A sequence; nested Seqs are flattened and null / empty statements dropped. One statement is
/// returned as is.
Stmt makeSeq(std::vector<Stmt> stmts);
Stmt makeAttr(std::string key, int64_t value, Stmt body);
Stmt makeBarrier();
Stmt makePrefetch(Buffer buffer, te::Expr offset);
/// The no-op statement (an empty Seq).
Stmt makeNop();
bool isNop(const Stmt& s);

// ---- functions -----------------------------------------------------------------------------

/// A lowered kernel: `name(args...)`, each argument a Global buffer (the DAG's io tensors, in order).
struct LoweredFunc {
    std::string name = "default_function";
    std::vector<Buffer> args;
    Stmt body;
    /// Indices into `args` of the weights: inputs that are layout-free placeholders of the DAG
    /// (conv / dense / winograd kernels). A network reads them once per run, so they arrive from
    /// DRAM; codegen prefetches their next parallel block (prefetch.h). Not part of print().
    std::vector<int> weightArgs;

    /// TVM-like text (the form codegen's kernel cache hashes):
    /// ```
    /// // kernel default_function(A: float32[1024, 1024], B: float32[1024, 1024], C: float32[1024, 1024])
    /// parallel (i.outer, 0, 32) {
    ///   for (k, 0, 1024) {
    ///     vectorized (j.inner, 0, 16) {
    ///       C[i, j] = (C[i, j] + (A[i, k]*B[k, j]))
    /// ...
    /// ```
    std::string print() const;
};

/// Text of one statement, indented by `indent` levels of two spaces.
std::string toString(const Stmt& s, int indent = 0);

// ---- traversal helpers ---------------------------------------------------------------------

/// Replace variables (by identity) in every expression of s (loop bounds, indices, values,
/// conditions); loop variables bound inside s are left alone as binders.
Stmt substitute(const Stmt& s, const std::vector<std::pair<te::Var, te::Expr>>& map);

/// Visit every statement of s in pre order (node, then children in order).
void preOrderVisit(const Stmt& s, const std::function<void(const Stmt&)>& f);

/// True when e mentions the variable v.
bool usesVar(const te::Expr& e, const te::Var& v);

}  // namespace tb::lower
