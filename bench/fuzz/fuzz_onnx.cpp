// SPDX-License-Identifier: Apache-2.0
// Fuzz harness: ONNX model bytes -> importOnnxBytes, all the way to a graph::Graph (protobuf
// parsing, initializer decoding, shape inference, constant folding, operator conversion).
// Dynamic input dims are bound as the CLI suggests (suggestInputShape); small integer inputs are
// frozen into constants (as tst_onnx_conformance does with their input_k.pb) so that the shape
// computations they drive fold. Seeds: the ONNX conformance models and the PP-OCR models.
#include <numeric>

#include "bench/fuzz/fuzz_common.h"
#include "engine/graph/onnx_import.h"

using namespace tb::graph;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string model = tb::fuzz::bytes(data, size);
    tb::fuzz::expectUserError([&] {
        const OnnxModelInfo info = inspectOnnxBytes(model, "fuzz.onnx");
        OnnxImportOptions opt;
        for (const auto& in : info.inputs) {
            std::vector<int64_t> shape = suggestInputShape(in.shape);
            if (in.onnxType == 7 || in.onnxType == 6) {  // int64 / int32: freeze small ones as ones
                const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t(1),
                                                  [](int64_t a, int64_t b) { return b > 0 && a <= 64 ? a * b : 1 << 20; });
                if (n > 64) continue;
                ConstantData c;
                c.type = TensorType{shape, in.onnxType == 7 ? DType::Int64 : DType::Int32};
                c.i.assign(size_t(n), 1);
                opt.constantInputs[in.name] = std::move(c);
            } else {
                opt.inputShapes[in.name] = std::move(shape);
            }
        }
        const Graph g = importOnnxBytes(model, "fuzz.onnx", opt);
        (void)g;
    });
    return 0;
}
