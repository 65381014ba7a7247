// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/passes/layout.h"

#include <cctype>

#include "engine/support/error.h"

namespace tb::graph {

Layout::Layout(const std::string& s) : m_name(s) {
    int64_t factor = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (std::isdigit(static_cast<unsigned char>(c))) {
            factor = factor * 10 + (c - '0');
            continue;
        }
        TB_USER_CHECK(std::isalpha(static_cast<unsigned char>(c))) << "layout '" << s << "': unexpected character '"
                                                                    << c << "'";
        if (std::isupper(static_cast<unsigned char>(c))) {
            TB_USER_CHECK(factor == 0) << "layout '" << s << "': a factor before the primal axis '" << c << "'";
        } else {
            TB_USER_CHECK(factor > 0) << "layout '" << s << "': sub-axis '" << c << "' has no factor";
        }
        TB_USER_CHECK(indexOf(c) < 0) << "layout '" << s << "': axis '" << c << "' appears twice";
        m_axes.push_back(Axis{c, factor});
        factor = 0;
    }
    TB_USER_CHECK(factor == 0) << "layout '" << s << "' ends with a number";
    for (const auto& a : m_axes) {
        if (std::islower(static_cast<unsigned char>(a.name))) {
            TB_USER_CHECK(indexOf(char(std::toupper(static_cast<unsigned char>(a.name)))) >= 0)
                << "layout '" << s << "': sub-axis '" << a.name << "' without its primal axis";
        }
    }
}

int Layout::indexOf(char c) const {
    for (size_t i = 0; i < m_axes.size(); ++i)
        if (m_axes[i].name == c) return int(i);
    return -1;
}

int64_t Layout::factorOf(char lower) const {
    int i = indexOf(char(std::tolower(static_cast<unsigned char>(lower))));
    return i < 0 ? 0 : m_axes[size_t(i)].factor;
}

std::string Layout::primal() const {
    std::string p;
    for (const auto& a : m_axes)
        if (std::isupper(static_cast<unsigned char>(a.name))) p += a.name;
    return p;
}

std::vector<int64_t> Layout::convertShape(const std::vector<int64_t>& shape, const Layout& dst) const {
    TB_USER_CHECK(shape.size() == ndim()) << "shape of rank " << shape.size() << " does not fit layout " << m_name;
    std::string p = primal();
    TB_USER_CHECK(p.size() == dst.primal().size()) << "layouts " << m_name << " and " << dst.name()
                                                   << " have different axes";
    // Primal extents.
    std::vector<int64_t> primalExt(128, 0);
    for (size_t i = 0; i < m_axes.size(); ++i) {
        char c = m_axes[i].name;
        if (std::isupper(static_cast<unsigned char>(c))) {
            int64_t f = factorOf(char(std::tolower(static_cast<unsigned char>(c))));
            primalExt[size_t(c)] = shape[i] * (f > 0 ? f : 1);
        }
    }
    std::vector<int64_t> out;
    for (const auto& a : dst.axes()) {
        char up = char(std::toupper(static_cast<unsigned char>(a.name)));
        TB_USER_CHECK(indexOf(up) >= 0) << "layouts " << m_name << " and " << dst.name() << " have different axes";
        int64_t ext = primalExt[size_t(up)];
        if (a.factor > 0) {
            out.push_back(a.factor);
        } else {
            int64_t f = dst.factorOf(char(std::tolower(static_cast<unsigned char>(a.name))));
            if (f > 0) {
                TB_USER_CHECK(ext % f == 0) << "layout_transform " << m_name << " -> " << dst.name() << ": extent "
                                            << ext << " of axis " << up << " is not divisible by " << f;
                out.push_back(ext / f);
            } else {
                out.push_back(ext);
            }
        }
    }
    return out;
}

std::vector<te::Expr> Layout::sourceIndex(const std::vector<te::Expr>& dstIndex, const Layout& dst,
                                          const std::vector<int64_t>& srcShape) const {
    TB_CHECK(dstIndex.size() == dst.ndim()) << "index rank";
    // Primal index of every axis letter, from the destination indices.
    std::vector<te::Expr> primalIdx(128);
    for (size_t i = 0; i < dst.axes().size(); ++i) {
        char c = dst.axes()[i].name;
        if (!std::isupper(static_cast<unsigned char>(c))) continue;
        int64_t f = dst.factorOf(char(std::tolower(static_cast<unsigned char>(c))));
        te::Expr e = dstIndex[i];
        if (f > 0) {
            int sub = dst.indexOf(char(std::tolower(static_cast<unsigned char>(c))));
            e = te::add(te::mul(e, te::intImm(f)), dstIndex[size_t(sub)]);
        }
        primalIdx[size_t(c)] = e;
    }
    std::vector<te::Expr> out;
    for (size_t i = 0; i < m_axes.size(); ++i) {
        char c = m_axes[i].name;
        char up = char(std::toupper(static_cast<unsigned char>(c)));
        te::Expr p = primalIdx[size_t(up)];
        TB_CHECK(p.get()) << "layout " << m_name << " vs " << dst.name();
        if (m_axes[i].factor > 0) {
            out.push_back(te::floormod(p, te::intImm(m_axes[i].factor)));
        } else {
            int64_t f = factorOf(char(std::tolower(static_cast<unsigned char>(c))));
            out.push_back(f > 0 ? te::floordiv(p, te::intImm(f)) : p);
        }
    }
    (void)srcShape;
    return out;
}

}  // namespace tb::graph
