// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file tensor_io.h
/// \brief Reading and writing tensors as ONNX `TensorProto` files (`.pb`).
///
/// ONNX's conformance cases, the PP-OCR reference data and ONNX Runtime dumps all store one tensor
/// per file as a serialized `onnx.TensorProto` (`test_data_set_0/input_0.pb`, `output_0.pb`). This
/// is the format the engine reads inputs and expected outputs in, and writes outputs to, so a
/// network run by TuneBench can be compared with any ONNX tool. The ONNX importer uses the same
/// decoder for initializers and `Constant` nodes, so every element type is converted in one place.
///
/// Element types: float32, float64 and float16 decode to float values (`ConstantData::f`);
/// int8/16/32/64, uint8/16/32/64 and bool decode to integer values (`ConstantData::i`). Strings,
/// complex and bfloat16 tensors, and external data, are rejected with a UserError.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace onnx {
class TensorProto;
}

namespace tb::graph {

/// One tensor read from a TensorProto: its name (may be empty) and its values.
/// `data.type.dtype` is Float32 for float data, Int64 for int64/uint32/uint64, Int32 for narrower
/// integer types and Bool for bool; `onnxType` keeps the file's exact element type (ONNX enum
/// `TensorProto.DataType`: 1 = FLOAT, 7 = INT64, ...).
struct NamedTensor {
    std::string name;
    ConstantData data;
    int onnxType = 0;
};

/// Decodes a TensorProto message. `context` names the tensor in error messages (a file path,
/// "initializer 'w'", ...). Throws UserError when the element type is unsupported, the data is
/// stored externally, or the number of values does not match the dims.
NamedTensor tensorFromProto(const onnx::TensorProto& proto, const std::string& context);

/// Reads a `.pb` file holding one serialized TensorProto. Throws UserError naming `path` when the
/// file cannot be read, is empty, is not a TensorProto, or is truncated (its values do not fill
/// the dims).
NamedTensor readTensorFile(const std::string& path);

/// Writes float32 `values` of `shape` (row-major; values.size() must equal the product of the
/// extents) as a TensorProto named `name`, values stored little-endian in `raw_data` as ONNX tools
/// write them. Throws UserError when the file cannot be written, InternalError on a size mismatch.
void writeTensorFile(const std::string& path, const std::string& name, const std::vector<int64_t>& shape,
                     const std::vector<float>& values);

/// Name of an ONNX element type ("float", "int64", ...), "type <n>" for unknown values.
std::string onnxTypeName(int onnxType);

}  // namespace tb::graph
