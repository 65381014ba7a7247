// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/utils.h"

#include "engine/support/error.h"
#include "engine/te/printer.h"

namespace tb::topi::nn {

PadTuple getPadTuple(const std::vector<int64_t>& padding, const char* op) {
    for (int64_t p : padding)
        TB_USER_CHECK(p >= 0) << op << ": padding must be non-negative, got " << te::shapeToString(padding);
    switch (padding.size()) {
        case 1: return {padding[0], padding[0], padding[0], padding[0]};
        case 2: return {padding[0], padding[1], padding[0], padding[1]};
        case 4: return {padding[0], padding[1], padding[2], padding[3]};
        default:
            TB_USER_ERROR() << op << ": padding needs 1, 2 or 4 values, got " << te::shapeToString(padding);
    }
    return {};  // unreachable: TB_USER_ERROR throws
}

std::vector<int64_t> samePadding(const std::vector<int64_t>& kernel) {
    // get_pad_tuple: pad_h = k - 1; top = (pad_h + 1) // 2; bottom = pad_h - top.
    std::vector<int64_t> begin, end;
    for (int64_t k : kernel) {
        int64_t total = k - 1;
        begin.push_back((total + 1) / 2);
        end.push_back(total - (total + 1) / 2);
    }
    begin.insert(begin.end(), end.begin(), end.end());
    return begin;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> getPadTupleGeneric(const std::vector<int64_t>& padding,
                                                                         size_t dims, const char* op) {
    for (int64_t p : padding)
        TB_USER_CHECK(p >= 0) << op << ": padding must be non-negative, got " << te::shapeToString(padding);
    std::vector<int64_t> begin, end, total;
    if (padding.size() == 1) {
        total.assign(dims, padding[0] * 2);
    } else if (padding.size() == dims) {
        for (int64_t p : padding) total.push_back(p * 2);
    } else if (padding.size() == 2 * dims) {
        begin.assign(padding.begin(), padding.begin() + long(dims));
        end.assign(padding.begin() + long(dims), padding.end());
        return {begin, end};
    } else {
        TB_USER_ERROR() << op << ": padding needs 1, " << dims << " or " << 2 * dims << " values, got "
                        << te::shapeToString(padding);
    }
    for (int64_t t : total) {
        begin.push_back((t + 1) / 2);
        end.push_back(t - (t + 1) / 2);
    }
    return {begin, end};
}

}  // namespace tb::topi::nn
