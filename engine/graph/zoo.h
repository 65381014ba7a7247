// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file zoo.h
/// \brief The built-in networks: TVM's `relay.testing` models, as the auto-scheduler tutorials
/// build them (`get_network` in gallery/how_to/tune_with_autoscheduler/tune_network_x86.py).
///
/// TVM users tune "resnet-50", "mobilenet", ... from the tutorials and compare workload keys and
/// logs with ours, so every network here reproduces the exact Relay architecture of
/// python/tvm/relay/testing/*.py (REFERENCE-ZOO §1), quirks included: mobilenet's first
/// batch-norm normalizes axis 1 whatever the layout (H in NHWC), the ResNets are the
/// pre-activation v2 with a `bn_data` (scale=False) on the input and projection shortcuts applied
/// to the pre-activated input, and "resnet3d-N" is the tutorial's name for the *2-D* resnet-N (its
/// helper calls relay.testing.resnet). Weights are float32 constants (the graph is what
/// `extract_tasks` sees after `set_params`): Xavier-uniform (magnitude 3, "avg" fan, as
/// relay.testing.init.Xavier) from a fixed-seed generator, biases and betas 0, gammas 1,
/// moving means 0, moving variances 1.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tb::graph {

/// Every network name makeNetwork accepts, in a stable order:
/// resnet-{18,34,50,101,152}, resnet3d-{18,34,50,101,152}, mobilenet, squeezenet_v1.0,
/// squeezenet_v1.1, inception_v3, vgg-{11,13,16,19}, mlp, dcgan.
std::vector<std::string> networkNames();

/// Builds network `name` for `batch` images in `layout` ("NHWC" or "NCHW"; image 224x224x3 as the
/// tutorial's get_network, inception 299x299). Layout rules follow the tutorial and relay.testing:
/// resnet/resnet3d/mobilenet/dcgan honour it; mlp flattens either; inception_v3 ignores it and is
/// always NCHW (the tutorial's quirk); squeezenet and vgg exist only in NCHW (UserError for NHWC).
/// The graph has one input "data" and one output (softmax probabilities, or dcgan's tanh image).
/// Deterministic: the same arguments give bit-identical weights.
/// Throws UserError for an unknown name (the message lists the known ones), batch < 1, or an
/// unsupported layout.
Graph makeNetwork(const std::string& name, int64_t batch = 1, const std::string& layout = "NHWC");

}  // namespace tb::graph
