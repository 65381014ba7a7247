// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/vta_config.h"

#include <array>
#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/support/error.h"
#include "engine/vta/isa.h"

namespace tb::vta {

namespace {

constexpr std::array<const char*, 7> kTargets = {"sim", "tsim", "pynq", "de10nano", "ultra96", "zcu104", "intelfocl"};

// The integer keys in TVM's order, with the member each one fills.
using IntField = int VtaConfig::*;
const std::array<std::pair<const char*, IntField>, 9>& intFields() {
    static const std::array<std::pair<const char*, IntField>, 9> fields = {{
        {"LOG_INP_WIDTH", &VtaConfig::logInpWidth},
        {"LOG_WGT_WIDTH", &VtaConfig::logWgtWidth},
        {"LOG_ACC_WIDTH", &VtaConfig::logAccWidth},
        {"LOG_BATCH", &VtaConfig::logBatch},
        {"LOG_BLOCK", &VtaConfig::logBlock},
        {"LOG_UOP_BUFF_SIZE", &VtaConfig::logUopBuffSize},
        {"LOG_INP_BUFF_SIZE", &VtaConfig::logInpBuffSize},
        {"LOG_WGT_BUFF_SIZE", &VtaConfig::logWgtBuffSize},
        {"LOG_ACC_BUFF_SIZE", &VtaConfig::logAccBuffSize},
    }};
    return fields;
}

void checkRange(const char* key, int value, int lo, int hi, const char* why) {
    TB_USER_CHECK(value >= lo && value <= hi)
        << "VTA config: " << key << " = " << value << " is out of range [" << lo << ", " << hi << "] (" << why << ")";
}

void checkTarget(const std::string& target, const std::string& source) {
    if (isKnownVtaTarget(target)) return;
    std::string known;
    for (const char* t : kTargets) known += std::string(known.empty() ? "" : ", ") + t;
    TB_USER_ERROR() << source << ": unknown VTA TARGET '" << target << "' (known: " << known << ")";
}

}  // namespace

bool isKnownVtaTarget(const std::string& target) {
    for (const char* t : kTargets)
        if (target == t) return true;
    return false;
}

VtaConfig VtaConfig::fromJson(const std::string& text, const std::string& source) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        TB_USER_ERROR() << source << ": not valid JSON (" << e.what() << ")";
    }
    TB_USER_CHECK(j.is_object()) << source << ": a VTA config must be a JSON object of TVM's keys (TARGET, LOG_*)";
    VtaConfig cfg;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        bool known = key == "TARGET" || key == "HW_VER";
        for (const auto& [name, member] : intFields()) known = known || key == name;
        TB_USER_CHECK(known) << source << ": unknown key '" << key << "' in a VTA config";
    }
    TB_USER_CHECK(j.contains("TARGET")) << source << ": missing key 'TARGET'";
    TB_USER_CHECK(j["TARGET"].is_string()) << source << ": 'TARGET' must be a string, got " << j["TARGET"].dump();
    cfg.target = j["TARGET"].get<std::string>();
    checkTarget(cfg.target, source);
    if (j.contains("HW_VER")) {
        TB_USER_CHECK(j["HW_VER"].is_string()) << source << ": 'HW_VER' must be a string, got " << j["HW_VER"].dump();
        cfg.hwVer = j["HW_VER"].get<std::string>();
    }
    for (const auto& [name, member] : intFields()) {
        TB_USER_CHECK(j.contains(name)) << source << ": missing key '" << name << "'";
        const auto& v = j[name];
        TB_USER_CHECK(v.is_number_integer()) << source << ": '" << name << "' must be an integer, got " << v.dump();
        const auto value = v.get<int64_t>();
        TB_USER_CHECK(value >= -1000 && value <= 1000) << source << ": '" << name << "' = " << value << " is out of range";
        cfg.*member = int(value);
    }
    try {
        cfg.validate();
    } catch (const UserError& e) {
        TB_USER_ERROR() << source << ": " << e.what();
    }
    return cfg;
}

VtaConfig VtaConfig::fromFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    TB_USER_CHECK(in.good()) << "cannot read VTA config file '" << path << "'";
    std::ostringstream ss;
    ss << in.rdbuf();
    return fromJson(ss.str(), path);
}

VtaConfig VtaConfig::forTarget(const std::string& target) {
    checkTarget(target, "VTA config");
    VtaConfig cfg;
    cfg.target = target;
    return cfg;
}

std::string VtaConfig::toJson() const {
    nlohmann::ordered_json j;
    j["TARGET"] = target;
    j["HW_VER"] = hwVer;
    for (const auto& [name, member] : intFields()) j[name] = this->*member;
    return j.dump(2);
}

void VtaConfig::validate() const {
    checkTarget(target, "VTA config");
    // Inputs and weights may be narrower than a byte (TVM packs them), the accumulator holds
    // at most 32 bits (the simulator computes in int32 as TVM's does).
    checkRange("LOG_INP_WIDTH", logInpWidth, 0, 5, "input bits 1..32");
    checkRange("LOG_WGT_WIDTH", logWgtWidth, 0, 5, "weight bits 1..32");
    checkRange("LOG_ACC_WIDTH", logAccWidth, 3, 5, "accumulator bits 8..32");
    TB_USER_CHECK(logAccWidth >= logInpWidth)
        << "VTA config: LOG_ACC_WIDTH = " << logAccWidth << " must be at least LOG_INP_WIDTH = " << logInpWidth
        << " (stores narrow accumulators to the input width)";
    checkRange("LOG_BATCH", logBatch, 0, 4, "BATCH 1..16");
    checkRange("LOG_BLOCK", logBlock, 0, 7, "BLOCK 1..128");
    checkRange("LOG_UOP_BUFF_SIZE", logUopBuffSize, 2, 24, "bytes");
    checkRange("LOG_INP_BUFF_SIZE", logInpBuffSize, 0, 26, "bytes");
    checkRange("LOG_WGT_BUFF_SIZE", logWgtBuffSize, 0, 26, "bytes");
    checkRange("LOG_ACC_BUFF_SIZE", logAccBuffSize, 0, 26, "bytes");
    TB_USER_CHECK(batch() * blockIn() * inpWidth() % 8 == 0)
        << "VTA config: an input vector of BATCH*BLOCK_IN*INP_WIDTH = " << batch() * blockIn() * inpWidth()
        << " bits is not a whole number of bytes";
    TB_USER_CHECK(blockOut() * blockIn() * wgtWidth() % 8 == 0)
        << "VTA config: a weight matrix of BLOCK_OUT*BLOCK_IN*WGT_WIDTH = " << blockOut() * blockIn() * wgtWidth()
        << " bits is not a whole number of bytes";
    TB_USER_CHECK(batch() * blockOut() * outWidth() % 8 == 0)
        << "VTA config: an output vector of BATCH*BLOCK_OUT*OUT_WIDTH = " << batch() * blockOut() * outWidth()
        << " bits is not a whole number of bytes";
    const std::pair<const char*, int> depths[] = {{"LOG_UOP_BUFF_SIZE", logUopBuffDepth()},
                                                  {"LOG_INP_BUFF_SIZE", logInpBuffDepth()},
                                                  {"LOG_WGT_BUFF_SIZE", logWgtBuffDepth()},
                                                  {"LOG_ACC_BUFF_SIZE", logAccBuffDepth()}};
    for (const auto& [key, logDepth] : depths)
        TB_USER_CHECK(logDepth >= 0 && logDepth <= 16)
            << "VTA config: " << key << " gives a buffer of 2^" << logDepth
            << " elements; it must hold 1 to 2^16 elements (the 16-bit SRAM address of LOAD/STORE)";
    // The index fields must fit TVM's fixed 128-bit instruction and 32-bit micro-op.
    checkIsaFits(*this);
}

int VtaConfig::fpgaFreqMhz() const { return target == "ultra96" || target == "zcu104" ? 333 : 100; }

int VtaConfig::logBusWidth() const { return target == "ultra96" || target == "zcu104" ? 7 : 6; }

std::string VtaConfig::targetHost() const {
    if (target == "pynq" || target == "de10nano") return "llvm -mtriple=armv7-none-linux-gnueabihf";
    if (target == "ultra96") return "llvm -mtriple=aarch64-linux-gnu";
    if (target == "sim" || target == "tsim" || target == "intelfocl") return "llvm";
    TB_USER_ERROR() << "VTA target '" << target << "' has no host target in TVM (environment.py: Unknown target)";
}

std::string VtaConfig::bitstream() const {
    std::ostringstream s;
    s << batch() << "x" << blockIn() << "_i" << inpWidth() << "w" << wgtWidth() << "a" << accWidth() << "_"
      << logUopBuffSize << "_" << logInpBuffSize << "_" << logWgtBuffSize << "_" << logAccBuffSize;
    return s.str();
}

}  // namespace tb::vta
