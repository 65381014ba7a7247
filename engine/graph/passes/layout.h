// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file layout.h
/// \brief Data layouts as TVM writes them (`NCHW`, `NHWC`, `NCHW8c`, `OIHW8i8o`, `HWOI`, ...).
///
/// Relay ops carry their layouts as strings, and several passes (FoldScaleAxis, AlterOpLayout,
/// ConvertLayout) and type relations must find "the C axis" or "the input-channel axis of the
/// kernel" in them, or convert a shape or an index between two layouts (layout_transform). This is
/// TVM's `tir::Layout` / `tir::BijectiveLayout` (include/tvm/tir/data_layout.h) reduced to what
/// static shapes need: an upper-case letter is a primal axis, `<factor><lower-case letter>` is a
/// sub-axis of the primal axis with the same letter, split off with that factor.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/te/expr.h"

namespace tb::graph {

class Layout {
public:
    struct Axis {
        char name;       ///< 'N', 'C', ... (primal) or 'c', 'o', ... (sub-axis)
        int64_t factor;  ///< sub-axis block size; 0 for a primal axis
    };

    Layout() = default;
    /// Parses `s` ("NCHW8c"). Throws UserError for a malformed layout (a sub-axis without factor or
    /// without its primal axis, a repeated axis, a non-letter).
    explicit Layout(const std::string& s);

    const std::string& name() const { return m_name; }
    bool defined() const { return !m_name.empty(); }
    size_t ndim() const { return m_axes.size(); }
    const std::vector<Axis>& axes() const { return m_axes; }
    /// Index of axis `c` (upper case: primal, lower case: sub-axis), -1 if absent.
    int indexOf(char c) const;
    bool contains(char c) const { return indexOf(c) >= 0; }
    /// The block factor of sub-axis `lower`, 0 if absent.
    int64_t factorOf(char lower) const;
    /// Primal axes in order ("NCHW" for "NCHW8c").
    std::string primal() const;

    /// The shape of a tensor of this layout expressed in `dst` (same primal axes). Throws UserError
    /// when the primal axes differ, a shape has the wrong rank, or a split does not divide.
    std::vector<int64_t> convertShape(const std::vector<int64_t>& shape, const Layout& dst) const;

    /// For a tensor in this layout read through `dst` indices: the source index expressions of
    /// an element addressed by `dstIndex` (TVM BijectiveLayout::BackwardIndex from dst to this),
    /// built with floordiv / floormod / mul / add exactly as TVM's layout_transform compute.
    /// `srcShape` is this layout's shape.
    std::vector<te::Expr> sourceIndex(const std::vector<te::Expr>& dstIndex, const Layout& dst,
                                      const std::vector<int64_t>& srcShape) const;

    bool operator==(const Layout& o) const { return m_name == o.m_name; }

private:
    std::string m_name;
    std::vector<Axis> m_axes;
};

}  // namespace tb::graph
