// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/transform.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>

#include "engine/topi/detail.h"
#include "engine/topi/nn/flatten.h"
#include "engine/topi/tags.h"

namespace tb::topi {

using namespace te;
using detail::ci;

namespace {

int64_t product(const std::vector<int64_t>& v) {
    return std::accumulate(v.begin(), v.end(), int64_t(1), std::multiplies<int64_t>());
}

// topi::detail::RavelIndex / UnravelIndex.
Expr ravelIndex(const std::vector<Expr>& indices, const std::vector<int64_t>& shape) {
    if (indices.empty()) return ci(0);
    Expr idx = indices[0];
    for (size_t i = 1; i < indices.size(); ++i) idx = idx * ci(shape[i]) + indices[i];
    return idx;
}
std::vector<Expr> unravelIndex(Expr idx, const std::vector<int64_t>& shape) {
    std::vector<Expr> out;
    for (int i = int(shape.size()) - 1; i >= 0; --i) {
        out.push_back(floormod(idx, ci(shape[size_t(i)])));
        idx = floordiv(idx, ci(shape[size_t(i)]));
    }
    std::reverse(out.begin(), out.end());
    return out;
}

ComputeOptions injective() { return ComputeOptions{tag::kInjective, {}, {}}; }

}  // namespace

Tensor reshape(const Tensor& x, std::vector<int64_t> newShape, const std::string& name) {
    const char* op = "topi.reshape";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    int inferred = -1;
    int64_t known = 1;
    for (size_t i = 0; i < newShape.size(); ++i) {
        if (newShape[i] == -1) {
            TB_USER_CHECK(inferred < 0) << op << ": more than one -1 in new shape " << shapeToString(newShape);
            inferred = int(i);
        } else {
            TB_USER_CHECK(newShape[i] > 0) << op << ": invalid new shape " << shapeToString(newShape);
            known *= newShape[i];
        }
    }
    const int64_t total = x.numElements();
    if (inferred >= 0) {
        TB_USER_CHECK(total % known == 0) << op << ": cannot reshape " << shapeToString(x.shape()) << " to "
                                          << shapeToString(newShape);
        newShape[size_t(inferred)] = total / known;
    }
    TB_USER_CHECK(product(newShape) == total)
        << op << ": cannot reshape " << shapeToString(x.shape()) << " (" << total << " elements) to "
        << shapeToString(newShape);
    const std::vector<int64_t> xShape = x.shape();
    return compute(newShape, axisNames(newShape.size(), "ax"), [&](const std::vector<Var>& v) {
        return x(unravelIndex(ravelIndex(detail::asExprs(v), newShape), xShape));
    }, name, injective());
}

Tensor transpose(const Tensor& x, std::vector<int> axes, const std::string& name) {
    const char* op = "topi.transpose";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    const size_t n = x.ndim();
    if (axes.empty())
        for (int i = int(n) - 1; i >= 0; --i) axes.push_back(i);
    TB_USER_CHECK(axes.size() == n) << op << ": " << axes.size() << " axes for a " << n << "-D tensor";
    std::set<int> seen;
    std::vector<int64_t> shape;
    for (int& a : axes) {
        a = detail::normalizeAxis(a, n, op);
        TB_USER_CHECK(seen.insert(a).second) << op << ": repeated axis " << a;
        shape.push_back(x.shape()[size_t(a)]);
    }
    return compute(shape, axisNames(n, "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> idx(n);
        for (size_t i = 0; i < n; ++i) idx[size_t(axes[i])] = v[i];
        return x(idx);
    }, name, injective());
}

Tensor expandDims(const Tensor& x, int axis, int numNewAxis, const std::string& name) {
    const char* op = "topi.expand_dims";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    const int n = int(x.ndim());
    TB_USER_CHECK(axis >= -n - 1 && axis <= n) << op << ": axis " << axis << " is outside [" << -n - 1 << ", "
                                               << n << "]";
    TB_USER_CHECK(numNewAxis >= 0) << op << ": num_newaxis must be >= 0, got " << numNewAxis;
    if (axis < 0) axis = n + axis + 1;
    std::vector<int64_t> shape(x.shape().begin(), x.shape().begin() + axis);
    shape.insert(shape.end(), size_t(numNewAxis), 1);
    shape.insert(shape.end(), x.shape().begin() + axis, x.shape().end());
    return compute(shape, axisNames(shape.size(), "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> idx;
        for (int i = 0; i < axis; ++i) idx.push_back(v[size_t(i)]);
        for (size_t i = size_t(axis + numNewAxis); i < v.size(); ++i) idx.push_back(v[i]);
        return x(idx);
    }, name, ComputeOptions{tag::kBroadcast, {}, {}});
}

Tensor squeeze(const Tensor& x, const std::optional<std::vector<int>>& axis, const std::string& name) {
    const char* op = "topi.squeeze";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    const size_t n = x.ndim();
    std::set<int> axes;
    if (!axis) {
        for (size_t i = 0; i < n; ++i)
            if (x.shape()[i] == 1) axes.insert(int(i));
    } else {
        for (int a : *axis) {
            int r = detail::normalizeAxis(a, n, op);
            TB_USER_CHECK(x.shape()[size_t(r)] == 1)
                << op << ": dimension " << r << " of " << shapeToString(x.shape()) << " must have size 1";
            axes.insert(r);
        }
    }
    std::vector<int64_t> shape;
    for (size_t i = 0; i < n; ++i)
        if (!axes.count(int(i))) shape.push_back(x.shape()[i]);
    return compute(shape, axisNames(shape.size(), "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> idx;
        size_t k = 0;
        for (size_t i = 0; i < n; ++i) idx.push_back(axes.count(int(i)) ? ci(0) : Expr(v[k++]));
        return x(idx);
    }, name, injective());
}

Tensor concatenate(const std::vector<Tensor>& inputs, int axis, const std::string& name) {
    const char* op = "topi.concatenate";
    TB_USER_CHECK(!inputs.empty()) << op << ": needs at least one input";
    for (const auto& t : inputs) TB_USER_CHECK(bool(t)) << op << ": an input is not defined";
    const size_t n = inputs[0].ndim();
    const int ax = detail::normalizeAxis(axis, n, op);
    std::vector<int64_t> axisSizes;
    for (const auto& t : inputs) {
        TB_USER_CHECK(t.ndim() == n) << op << ": inputs have different ranks: " << shapeToString(inputs[0].shape())
                                     << " and " << shapeToString(t.shape());
        for (size_t i = 0; i < n; ++i)
            TB_USER_CHECK(int(i) == ax || t.shape()[i] == inputs[0].shape()[i])
                << op << ": shapes " << shapeToString(inputs[0].shape()) << " and " << shapeToString(t.shape())
                << " differ off the concatenation axis " << ax;
        axisSizes.push_back(t.shape()[size_t(ax)]);
    }
    std::vector<int64_t> shape = inputs[0].shape();
    shape[size_t(ax)] = std::accumulate(axisSizes.begin(), axisSizes.end(), int64_t(0));
    return compute(shape, axisNames(n, "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> first = detail::asExprs(v);
        Expr ret = inputs[0](first);
        Expr ind = v[size_t(ax)];
        for (size_t i = 0; i + 1 < inputs.size(); ++i) {
            ind = ind - ci(axisSizes[i]);
            std::vector<Expr> idx = detail::asExprs(v);
            idx[size_t(ax)] = ind;
            ret = ifThenElse(ind >= ci(0), inputs[i + 1](idx), ret);
        }
        return ret;
    }, name, injective());
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& indices, int axis, const std::string& name) {
    const char* op = "topi.split";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    const int ax = detail::normalizeAxis(axis, x.ndim(), op);
    const int64_t extent = x.shape()[size_t(ax)];
    std::vector<int64_t> begins{0};
    for (int64_t i : indices) {
        TB_USER_CHECK(i > begins.back() && i < extent)
            << op << ": split indices " << shapeToString(indices) << " must increase strictly inside (0, " << extent
            << ")";
        begins.push_back(i);
    }
    std::vector<Tensor> out;
    for (size_t k = 0; k < begins.size(); ++k) {
        int64_t size = (k + 1 < begins.size() ? begins[k + 1] : extent) - begins[k];
        std::vector<int64_t> shape = x.shape();
        shape[size_t(ax)] = size;
        const int64_t begin = begins[k];
        out.push_back(compute(shape, axisNames(shape.size(), "ax"), [&](const std::vector<Var>& v) {
            std::vector<Expr> idx = detail::asExprs(v);
            idx[size_t(ax)] = v[size_t(ax)] + ci(begin);
            return x(idx);
        }, name, injective()));
    }
    return out;
}

std::vector<Tensor> splitSections(const Tensor& x, int sections, int axis, const std::string& name) {
    const char* op = "topi.split";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    const int ax = detail::normalizeAxis(axis, x.ndim(), op);
    const int64_t extent = x.shape()[size_t(ax)];
    TB_USER_CHECK(sections > 0 && extent % sections == 0)
        << op << ": " << sections << " sections do not divide extent " << extent;
    std::vector<int64_t> indices;
    for (int k = 1; k < sections; ++k) indices.push_back(extent / sections * k);
    return split(x, indices, ax, name);
}

Tensor stridedSlice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                    std::vector<int64_t> strides, const std::string& name) {
    const char* op = "topi.strided_slice";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    const size_t n = x.ndim();
    if (strides.empty()) strides.assign(begin.size(), 1);
    TB_USER_CHECK(begin.size() == end.size() && begin.size() == strides.size() && begin.size() <= n)
        << op << ": begin, end and strides need the same length (at most " << n << ")";
    std::vector<int64_t> shape = x.shape();
    for (size_t i = 0; i < begin.size(); ++i) {
        const int64_t d = x.shape()[i];
        TB_USER_CHECK(strides[i] > 0) << op << ": only positive strides are supported, got " << strides[i];
        auto canon = [d](int64_t v) { return std::clamp(v < 0 ? v + d : v, int64_t(0), d); };
        begin[i] = canon(begin[i]);
        end[i] = canon(end[i]);
        TB_USER_CHECK(end[i] > begin[i]) << op << ": empty slice [" << begin[i] << ", " << end[i] << ") on dim " << i;
        shape[i] = (end[i] - begin[i] + strides[i] - 1) / strides[i];
    }
    return compute(shape, axisNames(n, "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> idx = detail::asExprs(v);
        for (size_t i = 0; i < begin.size(); ++i) idx[i] = v[i] * ci(strides[i]) + ci(begin[i]);
        return x(idx);
    }, name, injective());
}

namespace {
struct LayoutAxis {
    char name;       // 'C' (primal) or 'c' (sub-axis)
    int64_t factor;  // sub-axis factor, 0 for primal
};
std::vector<LayoutAxis> parseLayout(const std::string& layout, const char* op) {
    std::vector<LayoutAxis> axes;
    int64_t factor = 0;
    for (char ch : layout) {
        if (std::isdigit(static_cast<unsigned char>(ch))) {
            factor = factor * 10 + (ch - '0');
        } else if (std::isupper(static_cast<unsigned char>(ch))) {
            TB_USER_CHECK(factor == 0) << op << ": invalid layout '" << layout << "' (a factor before a primal axis)";
            axes.push_back({ch, 0});
        } else if (std::islower(static_cast<unsigned char>(ch))) {
            TB_USER_CHECK(factor > 0) << op << ": invalid layout '" << layout << "' (sub-axis '" << ch
                                      << "' without a factor)";
            axes.push_back({ch, factor});
            factor = 0;
        } else {
            TB_USER_ERROR() << op << ": invalid layout '" << layout << "'";
        }
    }
    TB_USER_CHECK(factor == 0 && !axes.empty()) << op << ": invalid layout '" << layout << "'";
    return axes;
}
int findAxis(const std::vector<LayoutAxis>& axes, char name) {
    for (size_t i = 0; i < axes.size(); ++i)
        if (axes[i].name == name) return int(i);
    return -1;
}
}  // namespace

Tensor layoutTransform(const Tensor& src, const std::string& srcLayout, const std::string& dstLayout,
                       const std::string& name) {
    const char* op = "topi.layout_transform";
    TB_USER_CHECK(bool(src)) << op << ": input is not defined";
    if (srcLayout == dstLayout) return src;
    auto sa = parseLayout(srcLayout, op), da = parseLayout(dstLayout, op);
    TB_USER_CHECK(sa.size() == src.ndim()) << op << ": layout '" << srcLayout << "' has " << sa.size()
                                           << " axes but the input is " << shapeToString(src.shape());
    // Primal extents from the source.
    std::map<char, int64_t> primal;
    for (size_t i = 0; i < sa.size(); ++i) {
        if (!std::isupper(static_cast<unsigned char>(sa[i].name))) continue;
        int64_t e = src.shape()[i];
        int sub = findAxis(sa, char(std::tolower(static_cast<unsigned char>(sa[i].name))));
        if (sub >= 0) {
            TB_USER_CHECK(src.shape()[size_t(sub)] == sa[size_t(sub)].factor)
                << op << ": sub-axis extent " << src.shape()[size_t(sub)] << " does not match layout '" << srcLayout
                << "'";
            e *= sa[size_t(sub)].factor;
        }
        primal[sa[i].name] = e;
    }
    std::vector<int64_t> dstShape;
    for (const auto& a : da) {
        char up = char(std::toupper(static_cast<unsigned char>(a.name)));
        TB_USER_CHECK(primal.count(up)) << op << ": layouts '" << srcLayout << "' and '" << dstLayout
                                        << "' do not have the same primal axes";
        if (a.factor) {
            TB_USER_CHECK(findAxis(da, up) >= 0) << op << ": sub-axis '" << a.name << "' without its primal axis";
            TB_USER_CHECK(primal[up] % a.factor == 0)
                << op << ": factor " << a.factor << " does not divide axis " << up << " of extent " << primal[up];
            dstShape.push_back(a.factor);
        } else {
            int sub = findAxis(da, char(std::tolower(static_cast<unsigned char>(a.name))));
            dstShape.push_back(sub >= 0 ? primal[a.name] / da[size_t(sub)].factor : primal[a.name]);
        }
    }
    int primalCount = 0;
    for (const auto& a : da) primalCount += a.factor == 0;
    TB_USER_CHECK(size_t(primalCount) == primal.size())
        << op << ": layouts '" << srcLayout << "' and '" << dstLayout << "' do not have the same primal axes";
    ComputeOptions opts = injective();
    opts.attrs["schedule_rule"] = std::string("None");
    opts.attrs["src_layout"] = srcLayout;
    opts.attrs["dst_layout"] = dstLayout;
    return compute(dstShape, axisNames(dstShape.size(), "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> srcIdx;
        for (size_t i = 0; i < sa.size(); ++i) {
            char up = char(std::toupper(static_cast<unsigned char>(sa[i].name)));
            int dp = findAxis(da, up);
            int ds = findAxis(da, char(std::tolower(static_cast<unsigned char>(up))));
            Expr value = ds >= 0 ? v[size_t(dp)] * ci(da[size_t(ds)].factor) + v[size_t(ds)] : Expr(v[size_t(dp)]);
            if (sa[i].factor) {
                srcIdx.push_back(floormod(value, ci(sa[i].factor)));
            } else {
                int ss = findAxis(sa, char(std::tolower(static_cast<unsigned char>(up))));
                srcIdx.push_back(ss >= 0 ? floordiv(value, ci(sa[size_t(ss)].factor)) : value);
            }
        }
        Expr inRange = boolImm(true);
        for (size_t i = 0; i < sa.size(); ++i) inRange = logicalAnd(inRange, srcIdx[i] < ci(src.shape()[i]));
        return ifThenElse(inRange, src(srcIdx), makeConst(src.dtype(), 0));
    }, name, opts);
}

namespace nn {
Tensor flatten(const Tensor& x, const std::string& name) {
    const char* op = "topi.nn.batch_flatten";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    TB_USER_CHECK(x.ndim() >= 2) << op << ": input must be at least 2-D, got " << shapeToString(x.shape());
    const auto& ishape = x.shape();
    int64_t dim = 1;
    for (size_t i = 1; i < ishape.size(); ++i) dim *= ishape[i];
    std::vector<int64_t> extra(ishape.begin() + 1, ishape.end());
    std::reverse(extra.begin(), extra.end());
    return compute({ishape[0], dim}, axisNames(2, "ax"), [&](const std::vector<Var>& v) {
        Expr idx = v[1];
        std::vector<Expr> index;
        for (int64_t s : extra) {
            index.push_back(floormod(idx, ci(s)));
            idx = floordiv(idx, ci(s));
        }
        index.push_back(v[0]);
        std::reverse(index.begin(), index.end());
        return x(index);
    }, name, injective());
}
}  // namespace nn

}  // namespace tb::topi
