// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/conv3d.h"

#include "engine/topi/detail.h"
#include "engine/topi/nn/conv2d.h"

namespace tb::topi::nn {

te::Tensor conv3dNcdhw(const te::Tensor& data, const te::Tensor& weight, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
    detail::checkRank(data, 5, "topi.nn.conv3d_ncdhw", "data");
    detail::checkRank(weight, 5, "topi.nn.conv3d_ncdhw", "kernel");
    return conv(data, weight, stride, padding, dilation, groups, "NCDHW", "OIDHW", false);
}

te::Tensor conv3dNdhwc(const te::Tensor& data, const te::Tensor& weight, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
    detail::checkRank(data, 5, "topi.nn.conv3d_ndhwc", "data");
    detail::checkRank(weight, 5, "topi.nn.conv3d_ndhwc", "kernel");
    return conv(data, weight, stride, padding, dilation, groups, "NDHWC", "DHWIO", false);
}

}  // namespace tb::topi::nn
