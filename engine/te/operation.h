// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file operation.h
/// \brief Operations and tensors: `PlaceholderOp` (an input) and `ComputeOp` (an output defined
/// element-wise by an expression over named axes), as TVM's `te.placeholder` / `te.compute`.
///
/// A `Tensor` is one output of an operation; indexing it (`t({i, j})`) makes a load expression.
/// Operations form a DAG through the loads in their bodies (producers never point at consumers).
/// Stage names, axis names and attributes are exactly what TVM prints and hashes, so topi/ gives
/// them the names TVM's topi uses. All shapes are static (int64 extents).

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/te/expr.h"

namespace tb::te {

/// An attribute value of an operation (TVM keeps a Map<String, ObjectRef>).
using AttrValue = std::variant<int64_t, double, std::string, std::vector<std::string>>;

enum class OpType : uint8_t { Placeholder = 0, Compute = 1 };

struct OperationNode {
    OpType type;
    std::string name;
    std::string tag;
    std::map<std::string, AttrValue> attrs;
    /// ComputeOp attr `layout_free_placeholders`: input operations whose layout may be rewritten.
    std::vector<std::shared_ptr<const OperationNode>> layoutFreePlaceholders;

    // Placeholder fields.
    std::vector<int64_t> shape;  ///< also the output shape of a compute (= axis extents)
    DType dtype = DType::Float32;

    // Compute fields.
    std::vector<IterVar> axis;        ///< spatial axes, in order (the output dimensions)
    std::vector<IterVar> reduceAxis;  ///< reduce axes of the body (empty if not a reduction)
    std::vector<Expr> body;           ///< one expression per output (one in practice)

    bool isPlaceholder() const { return type == OpType::Placeholder; }
    bool isCompute() const { return type == OpType::Compute; }
    /// The tensors this op reads, deduplicated, in first-occurrence order of loads in the body
    /// (TVM's ComputeOpNode::InputTensors). Empty for placeholders.
    std::vector<Tensor> inputTensors() const;
    /// Attribute lookup helpers; nullptr / nullopt when absent.
    const AttrValue* attr(const std::string& key) const;
};

using Operation = std::shared_ptr<const OperationNode>;

/// One output of an operation.
class Tensor {
public:
    Tensor() = default;
    Tensor(Operation op, int valueIndex = 0) : m_op(std::move(op)), m_valueIndex(valueIndex) {}  // NOLINT

    const Operation& op() const { return m_op; }
    int valueIndex() const { return m_valueIndex; }
    const std::vector<int64_t>& shape() const { return m_op->shape; }
    size_t ndim() const { return m_op->shape.size(); }
    DType dtype() const { return m_op->dtype; }
    const std::string& name() const { return m_op->name; }
    int64_t numElements() const;
    explicit operator bool() const { return bool(m_op); }
    bool operator==(const Tensor& o) const { return m_op == o.m_op && m_valueIndex == o.m_valueIndex; }

    /// A load `name[indices...]` (TVM's ProducerLoad); the index count must equal ndim().
    Expr operator()(std::vector<Expr> indices) const;
    template <class... A>
    Expr operator()(A... idx) const {
        return (*this)(std::vector<Expr>{Expr(idx)...});
    }

private:
    Operation m_op;
    int m_valueIndex = 0;
};

/// TVM `te.placeholder(shape, dtype, name)`.
Tensor placeholder(std::vector<int64_t> shape, const std::string& name, DType dtype = DType::Float32);

/// Options of a compute op beyond shape and body.
struct ComputeOptions {
    std::string tag;
    std::map<std::string, AttrValue> attrs;
    std::vector<Tensor> layoutFreePlaceholders;
};

/// TVM `te.compute(shape, fcompute, name, tag, attrs)`: the spatial axes are named `axisNames`
/// (TVM uses the lambda's parameter names, `i0, i1, ...` for varargs lambdas and `ax0, ...` in C++
/// topi). The body's reduce axes (if it is a Reduce) become the op's reduce axes.
Tensor compute(const std::vector<int64_t>& shape, const std::vector<std::string>& axisNames,
               const std::function<Expr(const std::vector<Var>&)>& fcompute, const std::string& name,
               const ComputeOptions& options = {});

/// Axis names `prefix0, prefix1, ...` for n dims ("i" gives TVM's Python varargs names, "ax" C++'s).
std::vector<std::string> axisNames(size_t n, const std::string& prefix);

/// Attribute keys TVM uses (auto_scheduler + FLOP override).
namespace attr {
inline constexpr const char* kFlop = "FLOP";
inline constexpr const char* kSimplifyConstTensorIndices = "auto_scheduler_simplify_const_tensor_indices";
inline constexpr const char* kTaskSchedulerTag = "auto_scheduler_task_scheduler_tag";
inline constexpr const char* kAlwaysUnrollInner = "auto_scheduler_always_unroll_inner";
inline constexpr const char* kNoSplitAtInner = "auto_scheduler_no_split_at_inner";
inline constexpr const char* kConstMatrix = "const_matrix";
}  // namespace attr

}  // namespace tb::te
