// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file space.h
/// \brief AutoTVM configuration spaces: knobs, their entities, and index <-> config decoding
/// (TVM python/tvm/autotvm/task/space.py, v0.14).
///
/// An AutoTVM template is hand-written schedule code with tunable choices ("knobs"): how to split
/// an axis, how to order loops, what to unroll or vectorize, plus free options. Running the
/// template with a ConfigSpace *declares* the knobs, in the order the template reaches them; the
/// space is the Cartesian product of the knobs' candidate lists. A config (ConfigEntity) is one
/// point of that product, named by a single integer index, and a tuning log stores the index
/// together with the decoded knob values (the "entity").
///
/// Decoding must be bit-for-bit TVM's, or a TVM log means a different schedule here:
/// * knobs keep definition order; the index is mixed radix with the **first-defined knob as the
///   least significant digit**: `index = sum_j k_j * prod_{i<j} len(knob_i)` (ConfigSpace.get,
///   point2knob / knob2point);
/// * each knob's candidate list is enumerated in TVM's order: split factors by TVM's depth-first
///   search, in which the *innermost* factor varies slowest; for policy `verbose` the factor list
///   is `list(set(divisors) | set(powers of two))`, i.e. in CPython's set iteration order, which
///   is not sorted (space.cpp reproduces CPython's set table);
/// * an entity is written as TVM's `ConfigEntity.to_json_dict` writes it:
///   `["tile_y", "sp", [-1, 1, 1]]`, `["re", "re", [0, 2, 1]]`, `["ann", "an", ["none", "vec"]]`,
///   `["ot", "ot", value]`.
///
/// Knob kinds: SplitSpace (`define_split`), ReorderSpace (`define_reorder`), AnnotateSpace
/// (`define_annotate`), OtherOptionSpace (`define_knob`). Like TVM, each space materializes its
/// candidate list (entities) when defined.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace tb::autotvm {

/// A split of one axis into `size.size()` nested axes, outermost first. TVM >= 0.8 writes the
/// outermost extent as -1 ("the rest"); older logs write it explicitly. SplitEntity in space.py.
struct SplitEntity {
    std::vector<std::int64_t> size;
    bool operator==(const SplitEntity&) const = default;
};

/// A loop order: position i runs axis perm[i] of the axes given to define_reorder.
struct ReorderEntity {
    std::vector<int> perm;
    bool operator==(const ReorderEntity&) const = default;
};

/// Per-axis annotations ("none", "unroll", "vec", "blockIdx.x", ..., "vthread", "fuse"), or, for
/// policy `locate_cache`, the chosen anchor axes (indices; `anns` is then empty).
struct AnnotateEntity {
    std::vector<std::string> anns;
    std::vector<int> anchors;
    bool operator==(const AnnotateEntity&) const = default;
};

/// A `define_knob` value as TVM writes it (int, bool, float or string).
struct OtherOptionEntity {
    nlohmann::ordered_json val;
    bool operator==(const OtherOptionEntity&) const = default;
};

using Entity = std::variant<SplitEntity, ReorderEntity, AnnotateEntity, OtherOptionEntity>;

/// The knob kinds, with their record codes "sp", "re", "an", "ot".
enum class KnobKind { Split, Reorder, Annotate, Other };

/// "sp", "re", "an" or "ot".
const char* knobKindCode(KnobKind kind);

/// The JSON value of an entity as TVM's to_json_dict writes it (the third element of
/// [name, kind, value]).
nlohmann::ordered_json entityValueJson(const Entity& entity);

/// One knob's candidate list (TVM's TransformSpace). Built by the subclasses below, which only
/// add constructors, so spaces are stored and copied by value as TransformSpace.
class TransformSpace {
public:
    KnobKind kind() const { return m_kind; }
    /// The define_* policy ("factors", "all", "try_unroll_vec", ...; "candidate" for define_knob).
    const std::string& policy() const { return m_policy; }
    /// Number of candidates (TVM `len(space)`); may be 0 if a filter rejects everything.
    std::size_t size() const { return m_entities.size(); }
    const Entity& operator[](std::size_t i) const { return m_entities.at(i); }
    const std::vector<Entity>& entities() const { return m_entities; }
    /// Split only: the length of the split axis (TVM `SplitSpace.product`); 0 otherwise.
    std::int64_t product() const { return m_product; }
    /// Number of axes the knob yields (splits: num_outputs; reorder/annotate: the axes; knob: 0).
    int numOutputs() const { return m_numOutputs; }

protected:
    TransformSpace(KnobKind kind, std::string policy) : m_kind(kind), m_policy(std::move(policy)) {}
    KnobKind m_kind;
    std::string m_policy;
    std::vector<Entity> m_entities;
    std::int64_t m_product = 0;
    int m_numOutputs = 0;
};

/// Options of `define_split(name, axis, policy="factors", **kwargs)`.
struct SplitOptions {
    /// "factors" (divisors: no tail), "power2" (powers of two <= length), "verbose" (both), or
    /// "candidate" (the `candidate` lists as given).
    std::string policy = "factors";
    int numOutputs = 0;                              ///< num_outputs, > 0
    std::int64_t maxFactor = std::int64_t(1) << 31;  ///< candidate factors above it are dropped
    /// no_tail: only splits whose factors divide the length; default: policy == "factors".
    std::optional<bool> noTail;
    std::function<bool(const SplitEntity&)> filter;  ///< keeps an entity when it returns true
    std::vector<std::vector<std::int64_t>> candidate;  ///< policy "candidate" only
};

/// `define_split`: the ways to split an axis of `length` into `numOutputs` axes. Entities are
/// `[-1, f_{n-1}, ..., f_1]`, enumerated by TVM's DFS (f_1, the innermost factor, slowest),
/// skipping products above the length and, with no_tail, products that do not divide it; then
/// `filter` is applied. Throws tb::UserError for numOutputs < 1, length < 1 or an unknown policy.
class SplitSpace : public TransformSpace {
public:
    SplitSpace(std::int64_t length, const SplitOptions& options);
};

/// Options of `define_reorder` that depend on the policy.
struct ReorderOptions {
    std::pair<int, int> interval{0, 0};           ///< interval_all: permute axes [begin, end)
    std::vector<std::vector<int>> candidate;      ///< candidate: orders, as axis indices
};

/// `define_reorder` over `numAxes` axes: "identity" (one order), "all" (every permutation, in
/// itertools.permutations order), "interval_all" (permutations of an interval, the rest fixed),
/// "candidate" (the given orders). ("interleave"/"interleave_cuda" are not implemented yet and
/// throw tb::UserError, as does any other policy.)
class ReorderSpace : public TransformSpace {
public:
    ReorderSpace(int numAxes, const std::string& policy, const ReorderOptions& options = {});
};

/// `define_annotate` over `numAxes` axes. Policies made of "none"/"unroll"/"vec" joined by "_",
/// with "try" meaning "none" ("try_unroll" = {none, unroll}, "try_unroll_vec" =
/// {none, unroll, vec}, "unroll", "vec", ...): every per-axis combination by DFS (axis 0 slowest)
/// with at most one "vec". "bind_gpu" / "bind_gpu_virtual": the one binding TVM picks for the
/// axis count. "locate_cache": the combinations of `numAnchor` axes. Throws tb::UserError for an
/// unknown policy or too few axes for bind_gpu.
class AnnotateSpace : public TransformSpace {
public:
    AnnotateSpace(int numAxes, const std::string& policy, int numAnchor = 0);
};

/// `define_knob(name, candidate)`: the candidate values in order.
class OtherOptionSpace : public TransformSpace {
public:
    explicit OtherOptionSpace(std::vector<nlohmann::ordered_json> candidate);
};

/// One point of a ConfigSpace: its index and the entity of every knob, in definition order.
struct ConfigEntity {
    std::int64_t index = 0;
    std::optional<std::string> codeHash;  ///< TVM's code_hash (null in every log we know)
    std::vector<std::pair<std::string, Entity>> knobs;

    /// The entity of knob `name`; throws tb::UserError if there is none or it is of another kind.
    const SplitEntity& split(const std::string& name) const;
    const ReorderEntity& reorder(const std::string& name) const;
    const AnnotateEntity& annotate(const std::string& name) const;
    const nlohmann::ordered_json& knobValue(const std::string& name) const;
    const Entity* find(const std::string& name) const;

    /// `[[name, kind, value], ...]` as TVM writes config.entity.
    nlohmann::ordered_json entityJson() const;
    /// `{"index": i, "code_hash": null, "entity": [...]}` (TVM ConfigEntity.to_json_dict).
    nlohmann::ordered_json toJson() const;
    /// Reads TVM's config object (keys index, code_hash, entity; kinds sp/re/an/ot). Throws
    /// tb::UserError naming the problem.
    static ConfigEntity fromJson(const nlohmann::ordered_json& config);
};

/// The knobs of one task's template, in definition order (TVM ConfigSpace).
class ConfigSpace {
public:
    /// `cfg.define_split(name, axis_of_length, ...)`. Returns the new knob's space.
    const TransformSpace& defineSplit(const std::string& name, std::int64_t length, const SplitOptions& options);
    /// `cfg.define_reorder(name, axes, policy, ...)` for `numAxes` axes.
    const TransformSpace& defineReorder(const std::string& name, int numAxes, const std::string& policy,
                                        const ReorderOptions& options = {});
    /// `cfg.define_annotate(name, axes, policy, num_anchor=...)` for `numAxes` axes.
    const TransformSpace& defineAnnotate(const std::string& name, int numAxes, const std::string& policy,
                                         int numAnchor = 0);
    /// `cfg.define_knob(name, candidate)`.
    const TransformSpace& defineKnob(const std::string& name, std::vector<nlohmann::ordered_json> candidate);
    /// `cfg.multi_filter(filter)`: indices whose config fails the filter are not valid.
    void multiFilter(std::function<bool(const ConfigEntity&)> filter);

    std::size_t numKnobs() const { return m_knobs.size(); }
    const std::string& knobName(std::size_t i) const { return m_knobs.at(i).first; }
    const TransformSpace& knob(std::size_t i) const { return m_knobs.at(i).second; }
    /// The knob called `name`, or nullptr.
    const TransformSpace* find(const std::string& name) const;

    /// Per-knob candidate counts in definition order (TVM `dims`).
    std::vector<std::int64_t> dims() const;
    /// Product of dims (TVM `range_length`): indices are 0 .. rangeLength()-1. Throws
    /// tb::UserError if it does not fit in 63 bits.
    std::int64_t rangeLength() const;
    /// Number of valid indices (TVM `len(space)`): rangeLength() without a multi filter.
    std::int64_t size() const;
    /// TVM `is_index_valid`: in range and accepted by the multi filter.
    bool isIndexValid(std::int64_t index) const;

    /// TVM `point2knob`: per-knob candidate indices of `index` (first knob = least significant).
    std::vector<std::int64_t> pointToKnob(std::int64_t index) const;
    /// TVM `knob2point`, the inverse of pointToKnob.
    std::int64_t knobToPoint(const std::vector<std::int64_t>& knob) const;

    /// TVM `ConfigSpace.get(index)`. Throws tb::UserError if the index is out of range or rejected
    /// by the multi filter.
    ConfigEntity get(std::int64_t index) const;
    /// The index of `entity` (matched knob by knob; see decodeAgrees in log_check.h for the
    /// tolerant comparison of old logs), or nullopt if some knob value is not a candidate.
    std::optional<std::int64_t> indexOf(const ConfigEntity& entity) const;

private:
    const TransformSpace& add(const std::string& name, TransformSpace space);
    ConfigEntity decode(std::int64_t index) const;
    std::vector<std::pair<std::string, TransformSpace>> m_knobs;
    std::function<bool(const ConfigEntity&)> m_multiFilter;
};

/// TVM `get_factors(n)`: the divisors of n, ascending.
std::vector<std::int64_t> getFactors(std::int64_t n);
/// TVM `get_pow2s(n)`: 1, 2, 4, ... up to n.
std::vector<std::int64_t> getPow2s(std::int64_t n);
/// The factor list of split policy "verbose": `list(set(get_factors(n)) | set(get_pow2s(n)))` in
/// CPython's (3.7+) set iteration order, which TVM's DFS then follows.
std::vector<std::int64_t> verboseFactors(std::int64_t n);

}  // namespace tb::autotvm
