// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file onnx_import.h
/// \brief Importing an ONNX model file into the graph IR (the role of TVM's `relay.frontend.from_onnx`).
///
/// Users bring their own networks as `.onnx` files (PP-OCR, exported PyTorch models). The importer
/// turns the ONNX graph into our Relay-named graph (graph.h), so every later stage (passes, fusion,
/// task extraction, the reference interpreter, the compiler) sees one vocabulary:
///
/// - Conv → `nn.conv2d` (NCHW / OIHW, plus `add` of the bias as a [C, 1, 1] constant, which is what
///   Relay's CanonicalizeOps makes of `nn.bias_add`), ConvTranspose → `nn.conv2d_transpose` (IOHW),
///   Gemm/MatMul → `nn.dense` (constant right operand) or `nn.batch_matmul` (batched operands),
///   BatchNormalization → `nn.batch_norm`, the activations → `nn.relu`, `clip`, `nn.leaky_relu`,
///   `sigmoid`, HardSigmoid/HardSwish → `multiply`/`add`/`clip` chains as TVM's frontend builds
///   them, pools → `nn.max_pool2d` / `nn.avg_pool2d` / `nn.global_avg_pool2d`, Resize →
///   `image.resize2d`, Pad → `nn.pad`, ReduceMean → `mean`, and the shape ops → `reshape`,
///   `transpose`, `concatenate`, `squeeze`, `expand_dims`, `strided_slice`.
/// - Shape computations are folded at import: `Shape`, `Constant`, `ConstantOfShape`, `Gather`,
///   `Slice`, `Concat`, `Cast`, `Unsqueeze`, ... on constant or shape tensors become constants
///   (constant propagation on int tensors), so a `Reshape` whose target shape is computed from
///   `Shape(x)` gets a static `newshape`. Every tensor of the result has a static shape.
/// - Dynamic input dimensions (`dim_param`, e.g. "p2o.DynamicDimension.0") must be bound at
///   import, through `OnnxImportOptions::inputShapes` (see parseShapeMap for the `x=1,3,640,640`
///   syntax used by the CLI) or from the shape of a tensor that will be fed (shapeMapFromTensors).
/// - Graph inputs can be frozen into constants (`constantInputs`), e.g. the int64 `shape` input of
///   an ONNX conformance case, which then folds like an initializer.
///
/// Only float32 tensors flow through the resulting graph; integer tensors exist only as folded
/// constants. An unsupported operator type is reported once, in one UserError that lists every
/// unsupported type with the names of its nodes.

#include <map>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/tensor_io.h"

namespace tb::graph {

/// Options of one import.
struct OnnxImportOptions {
    /// Full shapes of graph inputs, by input name. Required for every input with a dynamic or
    /// unknown dimension; when given for an input with static dims, they must agree.
    std::map<std::string, std::vector<int64_t>> inputShapes;
    /// Graph inputs replaced by constants of the given value (their shape must match the
    /// declared dims). Such inputs disappear from Graph::inputs().
    std::map<std::string, ConstantData> constantInputs;
};

/// Imports the ONNX model at `path`. Graph inputs (ONNX inputs that are not initializers) keep
/// their ONNX names and order; graph outputs are the ONNX outputs in order.
/// Throws UserError naming the file when it cannot be read, is empty, is not a valid ONNX model
/// (truncated or malformed protobuf, a node reading a tensor nobody defines), uses unsupported
/// operators (one message listing them all), leaves an input dimension unbound, or has inputs
/// whose shapes do not fit its operators.
Graph importOnnx(const std::string& path, const OnnxImportOptions& options = {});

/// Same as importOnnx on the bytes of a model file; `sourceName` names it in error messages.
Graph importOnnxBytes(const std::string& bytes, const std::string& sourceName, const OnnxImportOptions& options = {});

/// What a model declares about one graph input, before any binding: dynamic dims are -1, with
/// their symbolic names in `dimParams` (empty strings for static dims).
struct OnnxInputInfo {
    std::string name;
    int onnxType = 0;  ///< ONNX element type (1 = float, 7 = int64, ...), see onnxTypeName()
    std::vector<int64_t> shape;
    std::vector<std::string> dimParams;
};

/// A summary of a model file, read without importing it (for tools, tests and error hints).
struct OnnxModelInfo {
    int64_t irVersion = 0;
    int64_t opset = 0;                    ///< version of the default ("ai.onnx") operator set
    std::string producer;                 ///< producer_name + " " + producer_version
    std::vector<OnnxInputInfo> inputs;    ///< non-initializer graph inputs, in order
    std::vector<std::string> outputs;     ///< graph output names, in order
    std::map<std::string, int> opTypes;   ///< node count per operator type ("Conv" -> 53)
};

/// Reads the summary of the model at `path` (UserError as importOnnx for an unreadable, empty or
/// malformed file).
OnnxModelInfo inspectOnnx(const std::string& path);
/// Same as inspectOnnx on the bytes of a model file; `sourceName` names it in error messages.
OnnxModelInfo inspectOnnxBytes(const std::string& bytes, const std::string& sourceName);

/// A binding to suggest for an input whose declared shape has dynamic dims (-1): batch 1, 3
/// channels for a rank-4 image, a square 640 image when both spatial dims are dynamic, 320 for the
/// width of a text-line image (one spatial dim static and under 100, as PP-OCR rec's height 48),
/// 128 for other dims; static dims are kept. E.g. [-1, 3, -1, -1] -> [1, 3, 640, 640], [-1, 3, 48,
/// -1] -> [1, 3, 48, 320]. Used in error hints and by the window to prefill its input shapes.
std::vector<int64_t> suggestInputShape(const std::vector<int64_t>& dims);

/// Parses `name=d0,d1,...[;name2=...]` (also accepting `x:1x3x640x640` style separators `:` and
/// `x`) into a shape map. Throws UserError naming the text when it is malformed or an extent is
/// not a positive integer.
std::map<std::string, std::vector<int64_t>> parseShapeMap(const std::string& spec);

/// A shape map binding each named tensor's name to its shape (tensors read from `.pb` files).
std::map<std::string, std::vector<int64_t>> shapeMapFromTensors(const std::vector<NamedTensor>& tensors);

}  // namespace tb::graph
