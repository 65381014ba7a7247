// SPDX-License-Identifier: Apache-2.0
#include "engine/codegen/gpu_module.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tb::codegen {

const char* gpuLanguageName(GpuLanguage l) { return l == GpuLanguage::CUDA ? "cuda" : "opencl"; }

nlohmann::json toJson(const GpuModule& m) {
    nlohmann::json launches = nlohmann::json::array();
    for (const GpuLaunch& l : m.launches)
        launches.push_back({{"entry", l.entry},
                            {"grid", l.grid},
                            {"block", l.block},
                            {"args", l.args},
                            {"shared_bytes", l.sharedBytes}});
    return {{"language", gpuLanguageName(m.language)},
            {"source", m.source},
            {"launches", std::move(launches)},
            {"buffer_elements", m.bufferElements},
            {"num_args", m.numArgs}};
}

namespace {

const nlohmann::json& field(const nlohmann::json& j, const char* key, nlohmann::json::value_t type,
                            const std::string& where) {
    if (!j.is_object()) throw std::invalid_argument("gpu module: " + where + " is not a JSON object");
    auto it = j.find(key);
    if (it == j.end()) throw std::invalid_argument("gpu module: " + where + " has no \"" + key + "\"");
    bool ok = it->type() == type ||
              (type == nlohmann::json::value_t::number_integer && it->is_number_unsigned());
    if (!ok) throw std::invalid_argument("gpu module: " + where + "." + key + " has the wrong type");
    return *it;
}

template <typename T>
std::vector<T> intList(const nlohmann::json& j, const char* key, const std::string& where) {
    const auto& a = field(j, key, nlohmann::json::value_t::array, where);
    std::vector<T> out;
    for (const auto& v : a) {
        if (!v.is_number_integer()) throw std::invalid_argument("gpu module: " + where + "." + key + " holds a non-integer");
        out.push_back(v.get<T>());
    }
    return out;
}

}  // namespace

GpuModule gpuModuleFromJson(const nlohmann::json& j) {
    using VT = nlohmann::json::value_t;
    GpuModule m;
    std::string lang = field(j, "language", VT::string, "module").get<std::string>();
    if (lang == "opencl") m.language = GpuLanguage::OpenCL;
    else if (lang == "cuda") m.language = GpuLanguage::CUDA;
    else throw std::invalid_argument("gpu module: unknown language '" + lang + "' (opencl or cuda)");
    m.source = field(j, "source", VT::string, "module").get<std::string>();
    m.bufferElements = intList<int64_t>(j, "buffer_elements", "module");
    for (int64_t n : m.bufferElements)
        if (n <= 0) throw std::invalid_argument("gpu module: a buffer has a non-positive size");
    m.numArgs = field(j, "num_args", VT::number_integer, "module").get<int>();
    if (m.numArgs < 0 || m.numArgs > static_cast<int>(m.bufferElements.size()))
        throw std::invalid_argument("gpu module: num_args outside [0, number of buffers]");
    const auto& launches = field(j, "launches", VT::array, "module");
    for (size_t i = 0; i < launches.size(); ++i) {
        std::string where = "launch " + std::to_string(i);
        GpuLaunch l;
        l.entry = field(launches[i], "entry", VT::string, where).get<std::string>();
        std::vector<int64_t> grid = intList<int64_t>(launches[i], "grid", where);
        std::vector<int64_t> block = intList<int64_t>(launches[i], "block", where);
        if (grid.size() != 3 || block.size() != 3)
            throw std::invalid_argument("gpu module: " + where + " grid/block must have 3 extents");
        for (int k = 0; k < 3; ++k) {
            if (grid[k] <= 0 || block[k] <= 0)
                throw std::invalid_argument("gpu module: " + where + " has a non-positive extent");
            l.grid[k] = grid[k];
            l.block[k] = block[k];
        }
        l.args = intList<int>(launches[i], "args", where);
        for (int a : l.args)
            if (a < 0 || a >= static_cast<int>(m.bufferElements.size()))
                throw std::invalid_argument("gpu module: " + where + " names buffer " + std::to_string(a) +
                                            " outside the module's buffers");
        l.sharedBytes = field(launches[i], "shared_bytes", VT::number_integer, where).get<int64_t>();
        if (l.sharedBytes < 0) throw std::invalid_argument("gpu module: " + where + " has negative shared_bytes");
        m.launches.push_back(std::move(l));
    }
    return m;
}

}  // namespace tb::codegen
