// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/vta_schedule.h"

#include <sstream>

#include "engine/support/error.h"

namespace tb::vta {

namespace {

void checkPositive(const std::string& what, const char* field, int v) {
    TB_USER_CHECK(v > 0) << what << ": " << field << " must be positive, got " << v;
}

void checkMultiple(const std::string& what, const char* field, int v, int block, const char* blockName) {
    TB_USER_CHECK(v % block == 0) << what << ": " << field << " " << v << " is not a multiple of " << blockName << " "
                                  << block << " (the packed layout needs whole blocks)";
}

autotvm::SplitOptions split2() {
    autotvm::SplitOptions o;
    o.policy = "factors";
    o.numOutputs = 2;
    return o;
}

int innerFactor(const autotvm::ConfigEntity& config, const char* name) {
    const auto& sizes = config.split(name).size;
    TB_USER_CHECK(sizes.size() == 2) << "VTA config: knob '" << name << "' splits into " << sizes.size()
                                     << " parts, the VTA templates split into 2";
    return int(sizes.back());
}

int threadKnob(const autotvm::ConfigEntity& config, const char* name) {
    const auto& v = config.knobValue(name);
    TB_USER_CHECK(v.is_number_integer() && (v.get<int>() == 1 || v.get<int>() == 2))
        << "VTA config: knob '" << name << "' must be 1 or 2, got " << v.dump();
    return v.get<int>();
}

// conv2d_packed.vta's and group_conv2d_packed.vta's knobs; `ciBlocks`: the reduction's channel blocks.
autotvm::ConfigSpace convSpace(const Conv2dWorkload& wl, const VtaConfig& cfg, int ciBlocks) {
    autotvm::ConfigSpace space;
    space.defineSplit("tile_b", wl.batch / cfg.batch(), split2());
    space.defineSplit("tile_h", wl.outHeight(), split2());
    space.defineSplit("tile_w", wl.outWidth(), split2());
    space.defineSplit("tile_ci", ciBlocks, split2());
    space.defineSplit("tile_co", wl.outFilter / cfg.blockOut(), split2());
    space.defineKnob("oc_nthread", {1, 2});
    space.defineKnob("h_nthread", {1, 2});
    return space;
}

}  // namespace

int64_t Conv2dWorkload::macs() const {
    return int64_t(batch) * outFilter * outHeight() * outWidth() * inFilter * hkernel * wkernel;
}

void Conv2dWorkload::validate(const VtaConfig& cfg) const {
    const std::string what = "VTA " + str();
    for (auto [field, v] : {std::pair{"batch", batch}, {"height", height}, {"width", width}, {"in_filter", inFilter},
                            {"out_filter", outFilter}, {"hkernel", hkernel}, {"wkernel", wkernel}, {"hstride", hstride},
                            {"wstride", wstride}})
        checkPositive(what, field, v);
    checkMultiple(what, "batch", batch, cfg.batch(), "BATCH");
    checkMultiple(what, "in_filter", inFilter, cfg.blockIn(), "BLOCK_IN");
    checkMultiple(what, "out_filter", outFilter, cfg.blockOut(), "BLOCK_OUT");
    TB_USER_CHECK(hpad >= 0 && wpad >= 0) << what << ": padding must not be negative";
    TB_USER_CHECK(hpad < hkernel && wpad < wkernel)
        << what << ": padding (" << hpad << ", " << wpad << ") must be smaller than the kernel (" << hkernel << "x"
        << wkernel << "), or a window could hold padding only";
    TB_USER_CHECK(height + 2 * hpad >= hkernel && width + 2 * wpad >= wkernel)
        << what << ": the kernel is larger than the padded input, the output would be empty";
}

std::string Conv2dWorkload::str() const {
    std::ostringstream s;
    s << "conv2d_packed " << batch << "x" << inFilter << "x" << height << "x" << width << " -> " << outFilter << ", "
      << hkernel << "x" << wkernel << " pad " << hpad;
    if (wpad != hpad) s << "," << wpad;
    s << " stride " << hstride;
    if (wstride != hstride) s << "," << wstride;
    return s.str();
}

int64_t GroupConv2dWorkload::macs() const { return Conv2dWorkload::macs() / groups; }

void GroupConv2dWorkload::validate(const VtaConfig& cfg) const {
    const std::string what = "VTA " + str();
    checkPositive(what, "groups", groups);
    try {
        Conv2dWorkload::validate(cfg);
    } catch (const UserError& e) {
        // Name the grouped workload, not its conv2d shape.
        const std::string msg = e.what(), base = "VTA " + Conv2dWorkload::str();
        TB_USER_ERROR() << what << (msg.rfind(base, 0) == 0 ? msg.substr(base.size()) : ": " + msg);
    }
    TB_USER_CHECK(inFilter % groups == 0 && outFilter % groups == 0)
        << what << ": groups " << groups << " does not divide in_filter " << inFilter << " and out_filter " << outFilter;
    checkMultiple(what, "in_filter / groups", inFilter / groups, cfg.blockIn(), "BLOCK_IN");
    checkMultiple(what, "out_filter / groups", outFilter / groups, cfg.blockOut(), "BLOCK_OUT");
}

std::string GroupConv2dWorkload::str() const {
    std::string s = Conv2dWorkload::str();
    const auto comma = s.find(',');
    return "group_" + s.substr(0, comma) + " groups " + std::to_string(groups) + s.substr(comma);
}

void DenseWorkload::validate(const VtaConfig& cfg) const {
    const std::string what = "VTA " + str();
    checkPositive(what, "batch", batch);
    checkPositive(what, "in_feat", inFeat);
    checkPositive(what, "out_feat", outFeat);
    checkMultiple(what, "batch", batch, cfg.batch(), "BATCH");
    checkMultiple(what, "in_feat", inFeat, cfg.blockIn(), "BLOCK_IN");
    checkMultiple(what, "out_feat", outFeat, cfg.blockOut(), "BLOCK_OUT");
}

std::string DenseWorkload::str() const {
    std::ostringstream s;
    s << "dense_packed " << batch << "x" << inFeat << " -> " << outFeat;
    return s.str();
}

const char* aluTemplateName(AluOpKind kind) { return kind == AluOpKind::Add ? "add.vta" : "multiply.vta"; }

void AluWorkload::validate(const VtaConfig& cfg) const {
    const std::string what = "VTA " + str();
    for (auto [field, v] : {std::pair{"batch", batch}, {"channels", channels}, {"height", height}, {"width", width}})
        checkPositive(what, field, v);
    checkMultiple(what, "batch", batch, cfg.batch(), "BATCH");
    checkMultiple(what, "channels", channels, cfg.blockOut(), "BLOCK_OUT");
}

std::string AluWorkload::str() const {
    std::ostringstream s;
    s << aluTemplateName(op) << " " << batch << "x" << channels << "x" << height << "x" << width << " ("
      << (lhsInt8 ? "int8" : "int32") << ", " << (rhsInt8 ? "int8" : "int32") << (rhsBroadcast ? " per-channel" : "")
      << ")";
    return s.str();
}

Conv2dSchedule Conv2dSchedule::fromConfig(const autotvm::ConfigEntity& config) {
    Conv2dSchedule s;
    s.tileB = innerFactor(config, "tile_b");
    s.tileH = innerFactor(config, "tile_h");
    s.tileW = innerFactor(config, "tile_w");
    s.tileCi = innerFactor(config, "tile_ci");
    s.tileCo = innerFactor(config, "tile_co");
    s.ocNthread = threadKnob(config, "oc_nthread");
    s.hNthread = threadKnob(config, "h_nthread");
    return s;
}

std::string Conv2dSchedule::str() const {
    std::ostringstream s;
    s << "tile_b=" << tileB << " tile_h=" << tileH << " tile_w=" << tileW << " tile_ci=" << tileCi
      << " tile_co=" << tileCo << " oc_nthread=" << ocNthread << " h_nthread=" << hNthread;
    return s.str();
}

DenseSchedule DenseSchedule::fromConfig(const autotvm::ConfigEntity& config) {
    DenseSchedule s;
    s.tileB = innerFactor(config, "tile_b");
    s.tileCi = innerFactor(config, "tile_ci");
    s.tileCo = innerFactor(config, "tile_co");
    s.ocNthread = threadKnob(config, "oc_nthread");
    return s;
}

std::string DenseSchedule::str() const {
    std::ostringstream s;
    s << "tile_b=" << tileB << " tile_ci=" << tileCi << " tile_co=" << tileCo << " oc_nthread=" << ocNthread;
    return s.str();
}

AluSchedule AluSchedule::fromConfig(const autotvm::ConfigEntity& config) {
    AluSchedule s;
    s.tileCo = innerFactor(config, "tile_co");
    s.tileH = innerFactor(config, "tile_h");
    s.tileW = innerFactor(config, "tile_w");
    return s;
}

std::string AluSchedule::str() const {
    std::ostringstream s;
    s << "tile_co=" << tileCo << " tile_h=" << tileH << " tile_w=" << tileW;
    return s.str();
}

autotvm::ConfigSpace conv2dConfigSpace(const Conv2dWorkload& wl, const VtaConfig& cfg) {
    wl.validate(cfg);
    return convSpace(wl, cfg, wl.inFilter / cfg.blockIn());
}

autotvm::ConfigSpace groupConv2dConfigSpace(const GroupConv2dWorkload& wl, const VtaConfig& cfg) {
    wl.validate(cfg);
    return convSpace(wl, cfg, wl.inFilter / wl.groups / cfg.blockIn());
}

autotvm::ConfigSpace denseConfigSpace(const DenseWorkload& wl, const VtaConfig& cfg) {
    wl.validate(cfg);
    autotvm::ConfigSpace space;
    space.defineSplit("tile_b", wl.batch / cfg.batch(), split2());
    space.defineSplit("tile_ci", wl.inFeat / cfg.blockIn(), split2());
    space.defineSplit("tile_co", wl.outFeat / cfg.blockOut(), split2());
    space.defineKnob("oc_nthread", {1, 2});
    return space;
}

autotvm::ConfigSpace aluConfigSpace(const AluWorkload& wl, const VtaConfig& cfg) {
    wl.validate(cfg);
    autotvm::ConfigSpace space;
    space.defineSplit("tile_co", wl.channels / cfg.blockOut(), split2());
    space.defineSplit("tile_h", wl.height, split2());
    space.defineSplit("tile_w", wl.width, split2());
    return space;
}

}  // namespace tb::vta
