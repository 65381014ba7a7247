// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/tensor_io.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "engine/support/error.h"

namespace tb::graph {

static_assert(std::endian::native == std::endian::little, "raw_data decoding assumes a little-endian host");

namespace {

using TP = onnx::TensorProto;

float halfToFloat(uint16_t h) {
    const uint32_t sign = uint32_t(h >> 15) << 31;
    const int exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    float v;
    if (exp == 0)
        v = std::ldexp(float(mant), -24);
    else if (exp == 31)
        v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else
        v = std::ldexp(float(mant | 0x400), exp - 25);
    return sign ? -v : v;
}

size_t elementSize(int t) {
    switch (t) {
    case TP::FLOAT: case TP::INT32: case TP::UINT32: return 4;
    case TP::DOUBLE: case TP::INT64: case TP::UINT64: return 8;
    case TP::FLOAT16: case TP::INT16: case TP::UINT16: return 2;
    case TP::INT8: case TP::UINT8: case TP::BOOL: return 1;
    default: return 0;
    }
}

template <class T>
T rawAt(const std::string& raw, size_t i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    return v;
}

}  // namespace

std::string onnxTypeName(int t) {
    switch (t) {
    case TP::FLOAT: return "float";
    case TP::UINT8: return "uint8";
    case TP::INT8: return "int8";
    case TP::UINT16: return "uint16";
    case TP::INT16: return "int16";
    case TP::INT32: return "int32";
    case TP::INT64: return "int64";
    case TP::STRING: return "string";
    case TP::BOOL: return "bool";
    case TP::FLOAT16: return "float16";
    case TP::DOUBLE: return "double";
    case TP::UINT32: return "uint32";
    case TP::UINT64: return "uint64";
    case TP::COMPLEX64: return "complex64";
    case TP::COMPLEX128: return "complex128";
    case TP::BFLOAT16: return "bfloat16";
    default: return "type " + std::to_string(t);
    }
}

NamedTensor tensorFromProto(const onnx::TensorProto& p, const std::string& context) {
    NamedTensor out;
    out.name = p.name();
    out.onnxType = p.data_type();
    const int t = p.data_type();
    TB_USER_CHECK(p.data_location() != TP::EXTERNAL)
        << context << ": tensor data stored in an external file is not supported";
    TB_USER_CHECK(!p.has_segment()) << context << ": segmented tensors are not supported";
    const size_t esize = elementSize(t);
    TB_USER_CHECK(esize != 0) << context << ": unsupported tensor element type " << onnxTypeName(t);

    int64_t n = 1;
    for (int64_t d : p.dims()) {
        TB_USER_CHECK(d >= 0) << context << ": negative dimension " << d;
        TB_USER_CHECK(d == 0 || n <= std::numeric_limits<int32_t>::max() / d)
            << context << ": tensor too large";
        n *= d;
        out.data.type.shape.push_back(d);
    }
    const bool isFloat = t == TP::FLOAT || t == TP::DOUBLE || t == TP::FLOAT16;
    out.data.type.dtype = isFloat                               ? DType::Float32
                          : t == TP::BOOL                       ? DType::Bool
                          : (t == TP::INT64 || t == TP::UINT32 || t == TP::UINT64) ? DType::Int64
                                                                : DType::Int32;

    const std::string& raw = p.raw_data();
    const bool useRaw = p.has_raw_data();
    int64_t have = 0;
    if (useRaw) {
        TB_USER_CHECK(raw.size() % esize == 0)
            << context << ": raw data of " << raw.size() << " bytes is not a whole number of " << onnxTypeName(t)
            << " values";
        have = int64_t(raw.size() / esize);
    } else {
        switch (t) {
        case TP::FLOAT: have = p.float_data_size(); break;
        case TP::DOUBLE: have = p.double_data_size(); break;
        case TP::INT64: have = p.int64_data_size(); break;
        case TP::UINT32: case TP::UINT64: have = p.uint64_data_size(); break;
        default: have = p.int32_data_size(); break;  // int8..int32, uint8, uint16, bool, float16
        }
    }
    TB_USER_CHECK(have == n) << context << ": holds " << have << " " << onnxTypeName(t) << " values but its shape needs "
                             << n << " (truncated or malformed tensor)";

    if (isFloat) {
        out.data.f.resize(size_t(n));
        for (int64_t i = 0; i < n; ++i) {
            const size_t k = size_t(i);
            float v = 0;
            if (t == TP::FLOAT)
                v = useRaw ? rawAt<float>(raw, k) : p.float_data(int(i));
            else if (t == TP::DOUBLE)
                v = float(useRaw ? rawAt<double>(raw, k) : p.double_data(int(i)));
            else
                v = halfToFloat(useRaw ? rawAt<uint16_t>(raw, k) : uint16_t(p.int32_data(int(i))));
            out.data.f[k] = v;
        }
    } else {
        out.data.i.resize(size_t(n));
        for (int64_t i = 0; i < n; ++i) {
            const size_t k = size_t(i);
            int64_t v = 0;
            if (!useRaw) {
                if (t == TP::INT64)
                    v = p.int64_data(int(i));
                else if (t == TP::UINT32 || t == TP::UINT64)
                    v = int64_t(p.uint64_data(int(i)));
                else
                    v = p.int32_data(int(i));
            } else {
                switch (t) {
                case TP::INT64: v = rawAt<int64_t>(raw, k); break;
                case TP::UINT64: v = int64_t(rawAt<uint64_t>(raw, k)); break;
                case TP::INT32: v = rawAt<int32_t>(raw, k); break;
                case TP::UINT32: v = rawAt<uint32_t>(raw, k); break;
                case TP::INT16: v = rawAt<int16_t>(raw, k); break;
                case TP::UINT16: v = rawAt<uint16_t>(raw, k); break;
                case TP::INT8: v = rawAt<int8_t>(raw, k); break;
                case TP::UINT8: v = rawAt<uint8_t>(raw, k); break;
                case TP::BOOL: v = rawAt<uint8_t>(raw, k) ? 1 : 0; break;
                default: TB_CHECK(false) << "unhandled type " << t;
                }
            }
            out.data.i[k] = v;
        }
    }
    return out;
}

NamedTensor readTensorFile(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    TB_USER_CHECK(f) << "cannot open tensor file '" << path << "'";
    std::ostringstream ss;
    ss << f.rdbuf();
    const std::string bytes = ss.str();
    TB_USER_CHECK(!bytes.empty()) << "tensor file '" << path << "' is empty";
    TB_USER_CHECK(bytes.size() < size_t(std::numeric_limits<int>::max()))
        << "tensor file '" << path << "' is larger than 2 GiB, which protobuf cannot parse";
    onnx::TensorProto p;
    TB_USER_CHECK(p.ParseFromString(bytes))
        << "'" << path << "' is not a valid ONNX TensorProto file (" << bytes.size()
        << " bytes; truncated or not a tensor)";
    return tensorFromProto(p, "tensor file '" + path + "'");
}

void writeTensorFile(const std::string& path, const std::string& name, const std::vector<int64_t>& shape,
                     const std::vector<float>& values) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    TB_CHECK(n == int64_t(values.size())) << "writeTensorFile: " << values.size() << " values for " << n << " elements";
    onnx::TensorProto p;
    p.set_name(name);
    p.set_data_type(TP::FLOAT);
    for (int64_t d : shape) p.add_dims(d);
    p.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    TB_USER_CHECK(f) << "cannot write tensor file '" << path << "'";
    TB_USER_CHECK(p.SerializeToOstream(&f)) << "cannot write tensor file '" << path << "'";
    f.close();
    TB_USER_CHECK(f) << "cannot write tensor file '" << path << "'";
}

}  // namespace tb::graph
