// SPDX-License-Identifier: Apache-2.0
// ONNX import: the public entry points of onnx_import.h and the op-type -> converter table.
// Model parsing and the Importer live in onnx/importer.{h,cpp}, constant folding in
// onnx/constant_fold.{h,cpp}, the converters in onnx/convert_{nn,elementwise,shape}.cpp.
#include "engine/graph/onnx_import.h"

#include <cmath>
#include <set>
#include <sstream>

#include "engine/graph/onnx/importer.h"
#include "engine/support/error.h"

namespace tb::graph {

namespace onnx_detail {

const std::map<std::string, Converter>& converters() {
    static const std::map<std::string, Converter> table = [] {
        std::map<std::string, Converter> t;
        auto un = [&](const char* onnxOp, const char* relayOp, double (*f)(double)) {
            t[onnxOp] = [relayOp, f](Importer& im, const NP& n) { unary(im, n, relayOp, f); };
        };
        auto bin = [&](const char* onnxOp, const char* relayOp, double (*f)(double, double)) {
            t[onnxOp] = [relayOp, f](Importer& im, const NP& n) { binary(im, n, relayOp, f); };
        };
        t["Conv"] = convertConv;
        t["ConvTranspose"] = convertConvTranspose;
        t["Gemm"] = convertGemm;
        t["MatMul"] = [](Importer& im, const NP& n) { im.setNode(n, 0, matmul(im, n, 0, 1, "")); };
        t["BatchNormalization"] = convertBatchNorm;
        t["MaxPool"] = [](Importer& im, const NP& n) { convertPool(im, n, true); };
        t["AveragePool"] = [](Importer& im, const NP& n) { convertPool(im, n, false); };
        t["GlobalAveragePool"] = [](Importer& im, const NP& n) { convertGlobalPool(im, n, "nn.global_avg_pool2d"); };
        t["GlobalMaxPool"] = [](Importer& im, const NP& n) { convertGlobalPool(im, n, "nn.global_max_pool2d"); };
        t["Softmax"] = [](Importer& im, const NP& n) { convertSoftmax(im, n, "nn.softmax"); };
        t["LogSoftmax"] = [](Importer& im, const NP& n) { convertSoftmax(im, n, "nn.log_softmax"); };
        t["Relu"] = [](Importer& im, const NP& n) {
            unary(im, n, "nn.relu", [](double x) { return x > 0 ? x : 0.0; });
        };
        t["LeakyRelu"] = [](Importer& im, const NP& n) {
            const double alpha = im.attrFloat(n, "alpha", 0.01);
            Attrs a;
            a.set("alpha", alpha);
            unary(im, n, "nn.leaky_relu", [alpha](double x) { return x >= 0 ? x : alpha * x; }, a);
        };
        t["Clip"] = convertClip;
        t["HardSigmoid"] = [](Importer& im, const NP& n) { convertHardSigmoid(im, n, false); };
        t["HardSwish"] = [](Importer& im, const NP& n) { convertHardSigmoid(im, n, true); };
        un("Sigmoid", "sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
        un("Tanh", "tanh", [](double x) { return std::tanh(x); });
        un("Exp", "exp", [](double x) { return std::exp(x); });
        un("Log", "log", [](double x) { return std::log(x); });
        un("Sqrt", "sqrt", [](double x) { return std::sqrt(x); });
        un("Erf", "erf", [](double x) { return std::erf(x); });
        un("Abs", "abs", [](double x) { return std::fabs(x); });
        un("Neg", "negative", [](double x) { return -x; });
        un("Floor", "floor", [](double x) { return std::floor(x); });
        un("Ceil", "ceil", [](double x) { return std::ceil(x); });
        t["Reciprocal"] = [](Importer& im, const NP& n) {
            if (im.allConst(n)) return unary(im, n, "", [](double x) { return 1.0 / x; });
            im.setNode(n, 0, im.op(n, "divide", {im.scalar(n, "_one", 1.0f), im.node(n, 0)}));
        };
        bin("Add", "add", [](double a, double b) { return a + b; });
        bin("Sub", "subtract", [](double a, double b) { return a - b; });
        bin("Mul", "multiply", [](double a, double b) { return a * b; });
        bin("Div", "divide", [](double a, double b) { return a / b; });
        bin("Pow", "power", [](double a, double b) { return std::pow(a, b); });
        t["Sum"] = [](Importer& im, const NP& n) { variadic(im, n, "add", [](double a, double b) { return a + b; }, false); };
        t["Mean"] = [](Importer& im, const NP& n) { variadic(im, n, "add", [](double a, double b) { return a + b; }, true); };
        t["Max"] = [](Importer& im, const NP& n) {
            variadic(im, n, "maximum", [](double a, double b) { return a > b ? a : b; }, false);
        };
        t["Min"] = [](Importer& im, const NP& n) {
            variadic(im, n, "minimum", [](double a, double b) { return a < b ? a : b; }, false);
        };
        t["ReduceMean"] = [](Importer& im, const NP& n) { convertReduce(im, n, "mean", false); };
        t["ReduceSum"] = [](Importer& im, const NP& n) { convertReduce(im, n, "sum", false); };
        t["ReduceMax"] = [](Importer& im, const NP& n) { convertReduce(im, n, "max", false); };
        t["ReduceMin"] = [](Importer& im, const NP& n) { convertReduce(im, n, "min", false); };
        t["ReduceSumSquare"] = [](Importer& im, const NP& n) { convertReduce(im, n, "sum", true); };
        t["Resize"] = [](Importer& im, const NP& n) { convertResize(im, n, false); };
        t["Upsample"] = [](Importer& im, const NP& n) { convertResize(im, n, true); };
        t["Pad"] = convertPad;
        t["Flatten"] = convertFlatten;
        t["Reshape"] = convertReshape;
        t["Squeeze"] = convertSqueeze;
        t["Unsqueeze"] = convertUnsqueeze;
        t["Transpose"] = convertTranspose;
        t["Concat"] = convertConcat;
        t["Slice"] = convertSlice;
        t["Split"] = convertSplit;
        t["Gather"] = convertGather;
        t["Expand"] = convertExpand;
        t["Cast"] = convertCast;
        t["Identity"] = [](Importer& im, const NP& n) { im.alias(n, 0, im.in(n, 0)); };
        t["Dropout"] = [](Importer& im, const NP& n) {
            TB_USER_CHECK(n.output_size() < 2 || n.output(1).empty()) << "the mask output of Dropout is not supported";
            im.alias(n, 0, im.in(n, 0));
        };
        t["Constant"] = convertConstant;
        t["ConstantOfShape"] = convertConstantOfShape;
        t["Shape"] = convertShape;
        t["Size"] = [](Importer& im, const NP& n) { im.setConst(n, 0, makeInts({}, {product(im.shape(n, 0))})); };
        t["Range"] = convertRange;
        t["Where"] = convertWhere;
        t["Equal"] = [](Importer& im, const NP& n) { compareConst(im, n, [](double a, double b) { return a == b; }); };
        t["Less"] = [](Importer& im, const NP& n) { compareConst(im, n, [](double a, double b) { return a < b; }); };
        t["Greater"] = [](Importer& im, const NP& n) { compareConst(im, n, [](double a, double b) { return a > b; }); };
        t["Not"] = [](Importer& im, const NP& n) {
            TB_USER_CHECK(im.allConst(n)) << "Not is supported only on constants (folded at import)";
            im.setConst(n, 0, foldElementwise({im.in(n, 0).constant}, DType::Bool,
                                              [](const std::vector<double>& v) { return v[0] == 0 ? 1.0 : 0.0; }));
        };
        return t;
    }();
    return table;
}

}  // namespace onnx_detail

using onnx_detail::elemTypeOf;
using onnx_detail::Importer;
using onnx_detail::parseModel;
using onnx_detail::readFile;

Graph importOnnxBytes(const std::string& bytes, const std::string& sourceName, const OnnxImportOptions& options) {
    onnx::ModelProto m = parseModel(bytes, sourceName);
    return Importer(m, sourceName, options).run();
}

Graph importOnnx(const std::string& path, const OnnxImportOptions& options) {
    return importOnnxBytes(readFile(path), path, options);
}

OnnxModelInfo inspectOnnx(const std::string& path) { return inspectOnnxBytes(readFile(path), path); }

OnnxModelInfo inspectOnnxBytes(const std::string& bytes, const std::string& sourceName) {
    onnx::ModelProto m = parseModel(bytes, sourceName);
    OnnxModelInfo info;
    info.irVersion = m.ir_version();
    for (const auto& o : m.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") info.opset = o.version();
    info.producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
    std::set<std::string> inits;
    for (const auto& t : m.graph().initializer()) inits.insert(t.name());
    for (const auto& in : m.graph().input()) {
        if (inits.count(in.name())) continue;
        OnnxInputInfo i;
        i.name = in.name();
        i.onnxType = elemTypeOf(in);
        for (const auto& d : in.type().tensor_type().shape().dim()) {
            const bool stat = d.has_dim_value() && d.dim_value() > 0;
            i.shape.push_back(stat ? d.dim_value() : -1);
            i.dimParams.push_back(stat ? std::string() : d.dim_param());
        }
        info.inputs.push_back(std::move(i));
    }
    for (const auto& o : m.graph().output()) info.outputs.push_back(o.name());
    for (const auto& n : m.graph().node())
        ++info.opTypes[n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type()];
    return info;
}

std::vector<int64_t> suggestInputShape(const std::vector<int64_t>& dims) {
    std::vector<int64_t> out = dims;
    const size_t rank = dims.size();
    for (size_t d = 0; d < rank; ++d) {
        if (dims[d] >= 0) continue;
        if (d == 0) {
            out[d] = 1;
        } else if (rank == 4 && d == 1) {
            out[d] = 3;
        } else if (rank == 4) {
            const int64_t other = dims[d == 2 ? 3 : 2];
            out[d] = other < 0 ? 640 : other < 100 ? 320 : other;
        } else {
            out[d] = 128;
        }
    }
    return out;
}

std::map<std::string, std::vector<int64_t>> parseShapeMap(const std::string& spec) {
    std::map<std::string, std::vector<int64_t>> out;
    std::stringstream entries(spec);
    std::string entry;
    while (std::getline(entries, entry, ';')) {
        if (entry.find_first_not_of(' ') == std::string::npos) continue;
        size_t eq = entry.find_first_of("=:");
        TB_USER_CHECK(eq != std::string::npos && eq > 0)
            << "shape binding '" << entry << "' in '" << spec << "' is not of the form name=d0,d1,...";
        std::string name = entry.substr(0, eq);
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        std::string dims = entry.substr(eq + 1);
        std::vector<int64_t> shape;
        size_t pos = 0;
        while (pos <= dims.size()) {
            size_t next = dims.find_first_of(",x", pos);
            if (next == std::string::npos) next = dims.size();
            std::string tok = dims.substr(pos, next - pos);
            tok.erase(0, tok.find_first_not_of(' '));
            tok.erase(tok.find_last_not_of(' ') + 1);
            char* endp = nullptr;
            long long v = tok.empty() ? 0 : std::strtoll(tok.c_str(), &endp, 10);
            TB_USER_CHECK(!tok.empty() && endp && *endp == '\0' && v > 0)
                << "shape binding '" << entry << "' in '" << spec << "': '" << tok << "' is not a positive integer";
            shape.push_back(v);
            pos = next + 1;
        }
        TB_USER_CHECK(!out.count(name)) << "input '" << name << "' is bound twice in '" << spec << "'";
        out[name] = shape;
    }
    TB_USER_CHECK(!out.empty()) << "shape binding '" << spec << "' names no input";
    return out;
}

std::map<std::string, std::vector<int64_t>> shapeMapFromTensors(const std::vector<NamedTensor>& tensors) {
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& t : tensors) {
        TB_USER_CHECK(!t.name.empty()) << "a tensor without a name cannot bind an input shape";
        out[t.name] = t.data.type.shape;
    }
    return out;
}

}  // namespace tb::graph
