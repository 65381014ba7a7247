// SPDX-License-Identifier: Apache-2.0
// The relay.testing networks (python/tvm/relay/testing/{resnet,mobilenet,squeezenet,inception_v3,
// vgg,mlp,dcgan}.py), node for node. Comments name the Python function each builder mirrors.
#include "engine/graph/zoo.h"

#include <cmath>
#include <memory>

#include "engine/support/error.h"

namespace tb::graph {

namespace {

using Shape = std::vector<int64_t>;

/// Builds a graph the way relay.testing.layers does, creating each parameter as a constant with
/// relay.testing.init's values.
class Builder {
public:
    explicit Builder(uint64_t seed) : m_state(seed) {}

    Graph g;

    NodeId input(const Shape& s) { return g.addInput("data", TensorType{s, te::DType::Float32}); }

    /// init.Xavier(rnd_type="uniform", factor_type="avg", magnitude=3) for "*_weight" params.
    NodeId weight(const std::string& name, const Shape& s) {
        auto d = std::make_shared<ConstantData>();
        d->type = TensorType{s, te::DType::Float32};
        double hw = 1;
        for (size_t i = 2; i < s.size(); ++i) hw *= double(s[i]);
        double fanIn = double(s.size() > 1 ? s[1] : 1) * hw, fanOut = double(s[0]) * hw;
        float scale = float(std::sqrt(3.0 / ((fanIn + fanOut) / 2.0)));
        d->f.resize(size_t(d->type.numElements()));
        for (auto& v : d->f) v = (uniform() * 2.0f - 1.0f) * scale;
        return g.addConstant(name, d);
    }
    NodeId fill(const std::string& name, const Shape& s, float value) {
        auto d = std::make_shared<ConstantData>();
        d->type = TensorType{s, te::DType::Float32};
        d->f.assign(size_t(d->type.numElements()), value);
        return g.addConstant(name, d);
    }

    NodeId op(const std::string& o, std::vector<NodeId> in, Attrs a = {}, const std::string& name = {}) {
        return g.addOp(o, std::move(in), std::move(a), name);
    }
    const Shape& shape(NodeId n) const { return g.node(n).type.shape; }

    /// layers.conv2d: nn.conv2d with a "<name>_weight" param whose shape the type relation implies.
    NodeId conv2d(NodeId x, int64_t channels, Shape kernel, Shape strides, Shape padding, const std::string& name,
                  const std::string& layout, int64_t groups = 1, std::string kernelLayout = {}) {
        const Shape& xs = shape(x);
        bool nhwc = layout == "NHWC";
        int64_t cin = nhwc ? xs[3] : xs[1];
        if (kernelLayout.empty()) kernelLayout = nhwc ? "HWIO" : "OIHW";
        int64_t iPerGroup = cin / groups;
        Shape ws;
        if (kernelLayout == "OIHW") ws = {channels, iPerGroup, kernel[0], kernel[1]};
        else if (kernelLayout == "HWIO") ws = {kernel[0], kernel[1], iPerGroup, channels};
        else if (kernelLayout == "HWOI") ws = {kernel[0], kernel[1], channels, iPerGroup};
        else TB_CHECK(false) << "kernel layout " << kernelLayout;
        NodeId w = weight(name + "_weight", ws);
        Attrs a;
        a.set("channels", channels);
        a.set("kernel_size", kernel);
        a.set("strides", strides);
        a.set("padding", pad4(padding));
        a.set("dilation", Shape{1, 1});
        a.set("groups", groups);
        a.set("data_layout", layout);
        a.set("kernel_layout", kernelLayout);
        return op("nn.conv2d", {x, w}, a, name);
    }

    /// layers.batch_norm_infer: nn.batch_norm(...)[0] with "<name>_gamma/_beta/_moving_mean/_moving_var".
    NodeId batchNorm(NodeId x, const std::string& name, int axis, double eps, bool scale = true) {
        int64_t c = shape(x)[size_t(axis)];
        NodeId gamma = fill(name + "_gamma", {c}, 1.0f);
        NodeId beta = fill(name + "_beta", {c}, 0.0f);
        NodeId mean = fill(name + "_moving_mean", {c}, 0.0f);
        NodeId var = fill(name + "_moving_var", {c}, 1.0f);
        Attrs a;
        a.set("axis", int64_t(axis));
        a.set("epsilon", eps);
        a.set("center", int64_t(1));
        a.set("scale", int64_t(scale ? 1 : 0));
        return op("nn.batch_norm", {x, gamma, beta, mean, var}, a, name);
    }
    NodeId relu(NodeId x) { return op("nn.relu", {x}); }
    NodeId biasAdd(NodeId x, const std::string& biasName, int64_t axis) {
        int64_t n = int64_t(shape(x).size());
        int64_t c = shape(x)[size_t(axis < 0 ? axis + n : axis)];
        NodeId b = fill(biasName, {c}, 0.0f);
        Attrs a;
        a.set("axis", axis);
        return op("nn.bias_add", {x, b}, a);
    }
    NodeId dense(NodeId x, int64_t units, const std::string& weightName) {
        NodeId w = weight(weightName, {units, shape(x).back()});
        Attrs a;
        a.set("units", units);
        return op("nn.dense", {x, w}, a);
    }
    /// layers.dense_add_bias: dense + bias_add(axis=-1).
    NodeId denseAddBias(NodeId x, int64_t units, const std::string& name) {
        NodeId d = dense(x, units, name + "_weight");
        return biasAdd(d, name + "_bias", -1);
    }
    NodeId maxPool(NodeId x, Shape size, Shape strides, Shape padding, const std::string& layout) {
        Attrs a;
        a.set("pool_size", size);
        a.set("strides", strides);
        a.set("padding", pad4(padding));
        a.set("dilation", Shape{1, 1});
        a.set("layout", layout);
        a.set("ceil_mode", int64_t(0));
        return op("nn.max_pool2d", {x}, a);
    }
    NodeId avgPool(NodeId x, Shape size, Shape strides, Shape padding, const std::string& layout,
                   bool countIncludePad) {
        Attrs a;
        a.set("pool_size", size);
        a.set("strides", strides);
        a.set("padding", pad4(padding));
        a.set("dilation", Shape{1, 1});
        a.set("layout", layout);
        a.set("ceil_mode", int64_t(0));
        a.set("count_include_pad", int64_t(countIncludePad ? 1 : 0));
        return op("nn.avg_pool2d", {x}, a);
    }
    NodeId globalAvgPool(NodeId x, const std::string& layout) {
        Attrs a;
        a.set("layout", layout);
        return op("nn.global_avg_pool2d", {x}, a);
    }
    NodeId flatten(NodeId x) { return op("nn.batch_flatten", {x}); }
    NodeId softmax(NodeId x) {
        Attrs a;
        a.set("axis", int64_t(-1));
        return op("nn.softmax", {x}, a);
    }
    NodeId dropout(NodeId x) {
        Attrs a;
        a.set("rate", 0.5);
        return op("nn.dropout", {x}, a);
    }
    NodeId concat(std::vector<NodeId> xs, int64_t axis) {
        Attrs a;
        a.set("axis", axis);
        return op("concatenate", std::move(xs), a);
    }

    static Shape pad4(const Shape& p) {
        if (p.size() == 2) return {p[0], p[1], p[0], p[1]};
        return p;
    }

private:
    // splitmix64: fast, fixed, platform-independent.
    float uniform() {
        uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return float(double(z >> 40) / double(1ull << 24));  // [0, 1) with 24 bits
    }
    uint64_t m_state;
};

constexpr uint64_t kSeed = 0x7475'6e65'6265'6e63ull;  // "tunebenc"

int64_t parseDepth(const std::string& name, const std::string& prefix) {
    std::string digits = name.substr(prefix.size());
    TB_USER_CHECK(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos)
        << "bad network name '" << name << "'";
    return std::stoll(digits);
}

// ---- resnet.py ---------------------------------------------------------------------------

NodeId residualUnit(Builder& b, NodeId data, int64_t numFilter, int64_t stride, bool dimMatch,
                    const std::string& name, bool bottleNeck, const std::string& layout) {
    int axis = int(layout.find('C'));
    NodeId bn1 = b.batchNorm(data, name + "_bn1", axis, 2e-5);
    NodeId act1 = b.relu(bn1);
    NodeId out;
    if (bottleNeck) {
        int64_t mid = numFilter / 4;
        NodeId conv1 = b.conv2d(act1, mid, {1, 1}, {stride, stride}, {0, 0}, name + "_conv1", layout);
        NodeId act2 = b.relu(b.batchNorm(conv1, name + "_bn2", axis, 2e-5));
        NodeId conv2 = b.conv2d(act2, mid, {3, 3}, {1, 1}, {1, 1}, name + "_conv2", layout);
        NodeId act3 = b.relu(b.batchNorm(conv2, name + "_bn3", axis, 2e-5));
        out = b.conv2d(act3, numFilter, {1, 1}, {1, 1}, {0, 0}, name + "_conv3", layout);
    } else {
        NodeId conv1 = b.conv2d(act1, numFilter, {3, 3}, {stride, stride}, {1, 1}, name + "_conv1", layout);
        NodeId act2 = b.relu(b.batchNorm(conv1, name + "_bn2", axis, 2e-5));
        out = b.conv2d(act2, numFilter, {3, 3}, {1, 1}, {1, 1}, name + "_conv2", layout);
    }
    NodeId shortcut = dimMatch ? data : b.conv2d(act1, numFilter, {1, 1}, {stride, stride}, {0, 0}, name + "_sc", layout);
    return b.op("add", {out, shortcut});
}

Graph resnet(int64_t depth, int64_t batch, const std::string& layout) {
    std::vector<int64_t> units;
    switch (depth) {
        case 18: units = {2, 2, 2, 2}; break;
        case 34: units = {3, 4, 6, 3}; break;
        case 50: units = {3, 4, 6, 3}; break;
        case 101: units = {3, 4, 23, 3}; break;
        case 152: units = {3, 8, 36, 3}; break;
        case 200: units = {3, 24, 36, 3}; break;
        case 269: units = {3, 30, 48, 8}; break;
        default: TB_USER_ERROR() << "resnet depth " << depth << " is not one of 18, 34, 50, 101, 152, 200, 269";
    }
    bool bottleNeck = depth >= 50;
    std::vector<int64_t> filters = bottleNeck ? std::vector<int64_t>{64, 256, 512, 1024, 2048}
                                              : std::vector<int64_t>{64, 64, 128, 256, 512};
    Builder b(kSeed + uint64_t(depth));
    int axis = int(layout.find('C'));
    NodeId data = b.input(layout == "NHWC" ? Shape{batch, 224, 224, 3} : Shape{batch, 3, 224, 224});
    NodeId body = b.batchNorm(data, "bn_data", axis, 2e-5, /*scale=*/false);
    body = b.conv2d(body, filters[0], {7, 7}, {2, 2}, {3, 3}, "conv0", layout);
    body = b.relu(b.batchNorm(body, "bn0", axis, 2e-5));
    body = b.maxPool(body, {3, 3}, {2, 2}, {1, 1}, layout);
    for (size_t i = 0; i < 4; ++i) {
        int64_t s = i == 0 ? 1 : 2;
        body = residualUnit(b, body, filters[i + 1], s, false, "stage" + std::to_string(i + 1) + "_unit1", bottleNeck,
                            layout);
        for (int64_t j = 0; j < units[i] - 1; ++j)
            body = residualUnit(b, body, filters[i + 1], 1, true,
                                "stage" + std::to_string(i + 1) + "_unit" + std::to_string(j + 2), bottleNeck, layout);
    }
    NodeId relu1 = b.relu(b.batchNorm(body, "bn1", axis, 2e-5));
    NodeId pool = b.globalAvgPool(relu1, layout);
    NodeId fc = b.denseAddBias(b.flatten(pool), 1000, "fc1");
    b.g.addOutput(b.softmax(fc));
    return std::move(b.g);
}

// ---- mobilenet.py --------------------------------------------------------------------------

Graph mobilenet(int64_t batch, const std::string& layout) {
    Builder b(kSeed + 1000);
    bool nhwc = layout == "NHWC";
    int cAxis = int(layout.find('C'));
    NodeId data = b.input(nhwc ? Shape{batch, 224, 224, 3} : Shape{batch, 3, 224, 224});
    // conv_block: batch_norm_infer without axis -> axis 1 (H in NHWC; kept as TVM has it).
    NodeId body = b.conv2d(data, 32, {3, 3}, {2, 2}, {1, 1}, "conv_block_1_conv", layout);
    body = b.relu(b.batchNorm(body, "conv_block_1_bn", 1, 1e-5));
    auto sep = [&](NodeId x, const std::string& name, int64_t dw, int64_t pw, bool down) {
        int64_t s = down ? 2 : 1;
        NodeId c1 = b.conv2d(x, dw, {3, 3}, {s, s}, {1, 1}, name + "_depthwise_conv1", layout, dw,
                             nhwc ? "HWOI" : "OIHW");
        NodeId a1 = b.relu(b.batchNorm(c1, name + "_bn1", cAxis, 1e-5));
        NodeId c2 = b.conv2d(a1, pw, {1, 1}, {1, 1}, {0, 0}, name + "_conv2", layout);
        return b.relu(b.batchNorm(c2, name + "_bn2", cAxis, 1e-5));
    };
    body = sep(body, "separable_conv_block_1", 32, 64, false);
    body = sep(body, "separable_conv_block_2", 64, 128, true);
    body = sep(body, "separable_conv_block_3", 128, 128, false);
    body = sep(body, "separable_conv_block_4", 128, 256, true);
    body = sep(body, "separable_conv_block_5", 256, 256, false);
    body = sep(body, "separable_conv_block_6", 256, 512, true);
    for (int i = 7; i < 12; ++i) body = sep(body, "separable_conv_block_" + std::to_string(i), 512, 512, false);
    body = sep(body, "separable_conv_block_12", 512, 1024, true);
    body = sep(body, "separable_conv_block_13", 1024, 1024, false);
    NodeId pool = b.globalAvgPool(body, layout);
    NodeId fc = b.dense(b.flatten(pool), 1000, "fc_weight");
    fc = b.biasAdd(fc, "fc_bias", 1);
    b.g.addOutput(b.softmax(fc));
    return std::move(b.g);
}

// ---- squeezenet.py (NCHW only) -----------------------------------------------------------------

NodeId fireConv(Builder& b, NodeId x, int64_t channels, int64_t k, int64_t pad, const std::string& prefix) {
    NodeId c = b.conv2d(x, channels, {k, k}, {1, 1}, {pad, pad}, prefix + "_conv", "NCHW");
    return b.relu(b.biasAdd(c, prefix + "_conv_bias", 1));
}

NodeId fire(Builder& b, NodeId x, int64_t s, int64_t e1, int64_t e3, const std::string& prefix) {
    NodeId sq = fireConv(b, x, s, 1, 0, prefix + "_input");
    NodeId left = fireConv(b, sq, e1, 1, 0, prefix + "_left");
    NodeId right = fireConv(b, sq, e3, 3, 1, prefix + "_right");
    return b.concat({left, right}, 1);
}

Graph squeezenet(const std::string& version, int64_t batch) {
    Builder b(kSeed + 2000 + (version == "1.0" ? 0 : 1));
    NodeId net = b.input({batch, 3, 224, 224});
    auto pool = [&](NodeId x) { return b.maxPool(x, {3, 3}, {2, 2}, {0, 0}, "NCHW"); };
    if (version == "1.0") {
        net = b.relu(b.biasAdd(b.conv2d(net, 96, {7, 7}, {2, 2}, {3, 3}, "conv1", "NCHW"), "conv1_bias", 1));
        net = pool(net);
        net = fire(b, net, 16, 64, 64, "fire1");
        net = fire(b, net, 16, 64, 64, "fire2");
        net = fire(b, net, 32, 128, 128, "fire3");
        net = pool(net);
        net = fire(b, net, 32, 128, 128, "fire4");
        net = fire(b, net, 48, 192, 192, "fire5");
        net = fire(b, net, 48, 192, 192, "fire6");
        net = fire(b, net, 64, 256, 256, "fire7");
        net = pool(net);
        net = fire(b, net, 64, 256, 256, "fire8");
    } else {
        net = b.relu(b.biasAdd(b.conv2d(net, 64, {3, 3}, {2, 2}, {1, 1}, "conv1", "NCHW"), "conv1_bias", 1));
        net = pool(net);
        net = fire(b, net, 16, 64, 64, "fire1");
        net = fire(b, net, 16, 64, 64, "fire2");
        net = pool(net);
        net = fire(b, net, 32, 128, 128, "fire3");
        net = fire(b, net, 32, 128, 128, "fire4");
        net = pool(net);
        net = fire(b, net, 48, 192, 192, "fire5");
        net = fire(b, net, 48, 192, 192, "fire6");
        net = fire(b, net, 64, 256, 256, "fire7");
        net = fire(b, net, 64, 256, 256, "fire8");
    }
    net = b.dropout(net);
    net = b.conv2d(net, 1000, {1, 1}, {1, 1}, {0, 0}, "conv_final", "NCHW");
    net = b.relu(b.biasAdd(net, "conv_final_bias", 1));
    net = b.flatten(b.globalAvgPool(net, "NCHW"));
    b.g.addOutput(b.softmax(net));
    return std::move(b.g);
}

// ---- inception_v3.py (NCHW only) ---------------------------------------------------------------

struct Inception {
    Builder& b;
    NodeId conv(NodeId x, int64_t filters, Shape k, Shape s, Shape p, const std::string& name,
                const std::string& suffix = "") {
        NodeId c = b.conv2d(x, filters, k, s, p, name + suffix + "_conv1", "NCHW");
        return b.relu(b.batchNorm(c, name + suffix + "_bn", 1, 2e-5, /*scale=*/false));
    }
    NodeId conv(NodeId x, int64_t f, const std::string& name, const std::string& suffix = "") {
        return conv(x, f, {1, 1}, {1, 1}, {0, 0}, name, suffix);
    }
    NodeId pool(NodeId x, Shape k, Shape s, Shape p, const std::string& type) {
        return type == "max" ? b.maxPool(x, k, s, p, "NCHW") : b.avgPool(x, k, s, p, "NCHW", true);
    }
    NodeId a7(NodeId d, int64_t n1, int64_t n3r, int64_t n31, int64_t n32, int64_t n5r, int64_t n5,
              const std::string& pt, int64_t proj, const std::string& name) {
        NodeId t1 = conv(d, n1, name + "_conv");
        NodeId t5 = conv(d, n5r, name + "_tower", "_conv");
        t5 = conv(t5, n5, {5, 5}, {1, 1}, {2, 2}, name + "_tower", "_conv_1");
        NodeId t3 = conv(d, n3r, name + "_tower_1", "_conv");
        t3 = conv(t3, n31, {3, 3}, {1, 1}, {1, 1}, name + "_tower_1", "_conv_1");
        t3 = conv(t3, n32, {3, 3}, {1, 1}, {1, 1}, name + "_tower_1", "_conv_2");
        NodeId p = pool(d, {3, 3}, {1, 1}, {1, 1}, pt);
        NodeId cp = conv(p, proj, name + "_tower_2", "_conv");
        return b.concat({t1, t5, t3, cp}, 1);
    }
    NodeId b7(NodeId d, int64_t n3, int64_t nd3r, int64_t nd31, int64_t nd32, const std::string& name) {
        NodeId t3 = conv(d, n3, {3, 3}, {2, 2}, {0, 0}, name + "_conv");
        NodeId td = conv(d, nd3r, name + "_tower", "_conv");
        td = conv(td, nd31, {3, 3}, {1, 1}, {1, 1}, name + "_tower", "_conv_1");
        td = conv(td, nd32, {3, 3}, {2, 2}, {0, 0}, name + "_tower", "_conv_2");
        NodeId p = pool(d, {3, 3}, {2, 2}, {0, 0}, "max");
        return b.concat({t3, td, p}, 1);
    }
    NodeId c7(NodeId d, int64_t n1, int64_t d7r, int64_t d71, int64_t d72, int64_t q7r, int64_t q71, int64_t q72,
              int64_t q73, int64_t q74, const std::string& pt, int64_t proj, const std::string& name) {
        NodeId t1 = conv(d, n1, name + "_conv");
        NodeId td = conv(d, d7r, name + "_tower", "_conv");
        td = conv(td, d71, {1, 7}, {1, 1}, {0, 3}, name + "_tower", "_conv_1");
        td = conv(td, d72, {7, 1}, {1, 1}, {3, 0}, name + "_tower", "_conv_2");
        NodeId tq = conv(d, q7r, name + "_tower_1", "_conv");
        tq = conv(tq, q71, {7, 1}, {1, 1}, {3, 0}, name + "_tower_1", "_conv_1");
        tq = conv(tq, q72, {1, 7}, {1, 1}, {0, 3}, name + "_tower_1", "_conv_2");
        tq = conv(tq, q73, {7, 1}, {1, 1}, {3, 0}, name + "_tower_1", "_conv_3");
        tq = conv(tq, q74, {1, 7}, {1, 1}, {0, 3}, name + "_tower_1", "_conv_4");
        NodeId p = pool(d, {3, 3}, {1, 1}, {1, 1}, pt);
        NodeId cp = conv(p, proj, name + "_tower_2", "_conv");
        return b.concat({t1, td, tq, cp}, 1);
    }
    NodeId d7(NodeId d, int64_t n3r, int64_t n3, int64_t d7r, int64_t d71, int64_t d72, int64_t d73,
              const std::string& name) {
        NodeId t3 = conv(d, n3r, name + "_tower", "_conv");
        t3 = conv(t3, n3, {3, 3}, {2, 2}, {0, 0}, name + "_tower", "_conv_1");
        NodeId td = conv(d, d7r, name + "_tower_1", "_conv");
        td = conv(td, d71, {1, 7}, {1, 1}, {0, 3}, name + "_tower_1", "_conv_1");
        td = conv(td, d72, {7, 1}, {1, 1}, {3, 0}, name + "_tower_1", "_conv_2");
        td = conv(td, d73, {3, 3}, {2, 2}, {0, 0}, name + "_tower_1", "_conv_3");
        NodeId p = pool(d, {3, 3}, {2, 2}, {0, 0}, "max");
        return b.concat({t3, td, p}, 1);
    }
    NodeId e7(NodeId d, int64_t n1, int64_t d3r, int64_t d31, int64_t d32, int64_t t3r, int64_t n3, int64_t t31,
              int64_t t32, const std::string& pt, int64_t proj, const std::string& name) {
        NodeId t1 = conv(d, n1, name + "_conv");
        NodeId td = conv(d, d3r, name + "_tower", "_conv");
        NodeId tda = conv(td, d31, {1, 3}, {1, 1}, {0, 1}, name + "_tower", "_mixed_conv");
        NodeId tdb = conv(td, d32, {3, 1}, {1, 1}, {1, 0}, name + "_tower", "_mixed_conv_1");
        NodeId t3 = conv(d, t3r, name + "_tower_1", "_conv");
        t3 = conv(t3, n3, {3, 3}, {1, 1}, {1, 1}, name + "_tower_1", "_conv_1");
        NodeId t3a = conv(t3, t31, {1, 3}, {1, 1}, {0, 1}, name + "_tower_1", "_mixed_conv");
        NodeId t3b = conv(t3, t32, {3, 1}, {1, 1}, {1, 0}, name + "_tower_1", "_mixed_conv_1");
        NodeId p = pool(d, {3, 3}, {1, 1}, {1, 1}, pt);
        NodeId cp = conv(p, proj, name + "_tower_2", "_conv");
        return b.concat({t1, tda, tdb, t3a, t3b, cp}, 1);
    }
};

Graph inceptionV3(int64_t batch) {
    Builder b(kSeed + 3000);
    Inception n{b};
    NodeId data = b.input({batch, 3, 299, 299});
    NodeId c = n.conv(data, 32, {3, 3}, {2, 2}, {0, 0}, "conv");
    c = n.conv(c, 32, {3, 3}, {1, 1}, {0, 0}, "conv_1");
    c = n.conv(c, 64, {3, 3}, {1, 1}, {1, 1}, "conv_2");
    c = n.pool(c, {3, 3}, {2, 2}, {0, 0}, "max");
    c = n.conv(c, 80, {1, 1}, {1, 1}, {0, 0}, "conv_3");
    c = n.conv(c, 192, {3, 3}, {1, 1}, {0, 0}, "conv_4");
    c = n.pool(c, {3, 3}, {2, 2}, {0, 0}, "max");
    c = n.a7(c, 64, 64, 96, 96, 48, 64, "avg", 32, "mixed");
    c = n.a7(c, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_1");
    c = n.a7(c, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_2");
    c = n.b7(c, 384, 64, 96, 96, "mixed_3");
    c = n.c7(c, 192, 128, 128, 192, 128, 128, 128, 128, 192, "avg", 192, "mixed_4");
    c = n.c7(c, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_5");
    c = n.c7(c, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_6");
    c = n.c7(c, 192, 192, 192, 192, 192, 192, 192, 192, 192, "avg", 192, "mixed_7");
    c = n.d7(c, 192, 320, 192, 192, 192, 192, "mixed_8");
    c = n.e7(c, 320, 384, 384, 384, 448, 384, 384, 384, "avg", 192, "mixed_9");
    c = n.e7(c, 320, 384, 384, 384, 448, 384, 384, 384, "max", 192, "mixed_10");
    c = n.pool(c, {8, 8}, {1, 1}, {0, 0}, "avg");
    NodeId fc = b.dense(b.flatten(c), 1000, "fc1_weight");
    fc = b.biasAdd(fc, "fc2_bias", -1);
    b.g.addOutput(b.softmax(fc));
    return std::move(b.g);
}

// ---- vgg.py (NCHW only, batch_norm=False) --------------------------------------------------------

Graph vgg(int64_t depth, int64_t batch) {
    std::vector<int64_t> layers;
    switch (depth) {
        case 11: layers = {1, 1, 2, 2, 2}; break;
        case 13: layers = {2, 2, 2, 2, 2}; break;
        case 16: layers = {2, 2, 3, 3, 3}; break;
        case 19: layers = {2, 2, 4, 4, 4}; break;
        default: TB_USER_ERROR() << "vgg depth " << depth << " is not one of 11, 13, 16, 19";
    }
    const int64_t filters[] = {64, 128, 256, 512, 512};
    Builder b(kSeed + 4000 + uint64_t(depth));
    NodeId x = b.input({batch, 3, 224, 224});
    for (size_t i = 0; i < layers.size(); ++i) {
        for (int64_t j = 0; j < layers[i]; ++j) {
            std::string name = "conv" + std::to_string(i + 1) + "_" + std::to_string(j + 1);
            x = b.conv2d(x, filters[i], {3, 3}, {1, 1}, {1, 1}, name, "NCHW");
            x = b.relu(b.biasAdd(x, name + "_bias", 1));
        }
        x = b.maxPool(x, {2, 2}, {2, 2}, {0, 0}, "NCHW");
    }
    x = b.flatten(x);
    x = b.dropout(b.relu(b.denseAddBias(x, 4096, "fc6")));
    x = b.dropout(b.relu(b.denseAddBias(x, 4096, "fc7")));
    x = b.denseAddBias(x, 1000, "fc8");
    b.g.addOutput(b.softmax(x));
    return std::move(b.g);
}

// ---- mlp.py (the tutorial passes the 224x224x3 image and 1000 classes) ---------------------------

Graph mlp(int64_t batch, const std::string& layout) {
    Builder b(kSeed + 5000);
    NodeId x = b.input(layout == "NHWC" ? Shape{batch, 224, 224, 3} : Shape{batch, 3, 224, 224});
    x = b.flatten(x);
    x = b.relu(b.denseAddBias(x, 128, "fc1"));
    x = b.relu(b.denseAddBias(x, 64, "fc2"));
    x = b.denseAddBias(x, 1000, "fc3");
    b.g.addOutput(b.softmax(x));
    return std::move(b.g);
}

// ---- dcgan.py (generator, ngf 128, 100-d code, 3x64x64 image) ------------------------------------

Graph dcgan(int64_t batch, const std::string& layout) {
    Builder b(kSeed + 6000);
    const int64_t ngf = 128;
    bool nhwc = layout == "NHWC";
    NodeId code = b.input({batch, 100});
    NodeId x = b.relu(b.dense(code, 4 * 4 * ngf * 8, "dense_weight"));
    Attrs ra;
    ra.set("newshape", nhwc ? Shape{-1, 4, 4, ngf * 8} : Shape{-1, ngf * 8, 4, 4});
    x = b.op("reshape", {x}, ra);
    auto deconv = [&](NodeId in, int64_t cin, int64_t cout, const std::string& name) {
        // deconv2d: kernel 4x4, stride 2, pad (k-1)//2 = 1, output_padding (8+2-4)%2 = 0.
        std::string kl = nhwc ? "HWOI" : "IOHW";
        NodeId w = b.weight(name + "_weight", nhwc ? Shape{4, 4, cout, cin} : Shape{cin, cout, 4, 4});
        Attrs a;
        a.set("channels", cout);
        a.set("kernel_size", Shape{4, 4});
        a.set("strides", Shape{2, 2});
        a.set("padding", Shape{1, 1, 1, 1});
        a.set("output_padding", Shape{0, 0});
        a.set("dilation", Shape{1, 1});
        a.set("groups", int64_t(1));
        a.set("data_layout", layout);
        a.set("kernel_layout", kl);
        return b.op("nn.conv2d_transpose", {in, w}, a, name);
    };
    int axis = int(layout.find('C'));
    auto block = [&](NodeId in, int64_t cin, int64_t cout, const std::string& prefix) {
        NodeId d = deconv(in, cin, cout, prefix + "_deconv");
        return b.relu(b.batchNorm(d, prefix + "_batch_norm", axis, 1e-5 + 1e-12, /*scale=*/false));
    };
    x = block(x, ngf * 8, ngf * 4, "g2");
    x = block(x, ngf * 4, ngf * 2, "g3");
    x = block(x, ngf * 2, ngf, "g4");
    x = deconv(x, ngf, 3, "g5_deconv");
    b.g.addOutput(b.op("tanh", {x}));
    return std::move(b.g);
}

}  // namespace

std::vector<std::string> networkNames() {
    return {"resnet-18",   "resnet-34",       "resnet-50",       "resnet-101",   "resnet-152",
            "resnet3d-18", "resnet3d-34",     "resnet3d-50",     "resnet3d-101", "resnet3d-152",
            "mobilenet",   "squeezenet_v1.0", "squeezenet_v1.1", "inception_v3", "vgg-11",
            "vgg-13",      "vgg-16",          "vgg-19",          "mlp",          "dcgan"};
}

Graph makeNetwork(const std::string& name, int64_t batch, const std::string& layout) {
    TB_USER_CHECK(batch >= 1) << "batch size must be >= 1, got " << batch;
    TB_USER_CHECK(layout == "NHWC" || layout == "NCHW") << "layout must be NHWC or NCHW, got '" << layout << "'";
    auto nchwOnly = [&](const char* what) {
        TB_USER_CHECK(layout == "NCHW") << what << " exists only in NCHW layout (as in relay.testing); use layout "
                                        << "NCHW";
    };
    if (name.rfind("resnet3d-", 0) == 0) return resnet(parseDepth(name, "resnet3d-"), batch, layout);
    if (name.rfind("resnet-", 0) == 0) return resnet(parseDepth(name, "resnet-"), batch, layout);
    if (name == "mobilenet") return mobilenet(batch, layout);
    if (name == "squeezenet_v1.0" || name == "squeezenet_v1.1") {
        nchwOnly(name.c_str());
        return squeezenet(name.substr(12), batch);
    }
    if (name == "inception_v3") return inceptionV3(batch);  // the tutorial ignores the layout here
    if (name.rfind("vgg-", 0) == 0) {
        int64_t depth = parseDepth(name, "vgg-");
        nchwOnly("vgg");
        return vgg(depth, batch);
    }
    if (name == "mlp") return mlp(batch, layout);
    if (name == "dcgan") return dcgan(batch, layout);
    std::string known;
    for (const auto& n : networkNames()) known += (known.empty() ? "" : ", ") + n;
    TB_USER_ERROR() << "unknown network '" << name << "'; known networks: " << known;
}

}  // namespace tb::graph
