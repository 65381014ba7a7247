// SPDX-License-Identifier: Apache-2.0
#include "engine/codegen/target.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <sstream>
#include <utility>

#include "engine/codegen/llvm_headers.h"
#include "engine/codegen/llvm_init.h"
#include "engine/support/error.h"

namespace tb::codegen {
namespace {

std::vector<std::string> splitComma(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream is(s);
    while (std::getline(is, cur, ','))
        if (!cur.empty()) out.push_back(cur);
    return out;
}

int parseInt(const std::string& text, const std::string& key, const std::string& v) {
    size_t pos = 0;
    int r = 0;
    try {
        r = std::stoi(v, &pos);
    } catch (...) {
        pos = std::string::npos;
    }
    TB_USER_CHECK(pos == v.size() && r >= 0) << "target '" << text << "': -" << key << " needs a non-negative integer, got '" << v << "'";
    return r;
}

std::vector<std::string> hostFeatures() {
    llvm::StringMap<bool> feats;
    std::vector<std::string> out;
    if (llvm::sys::getHostCPUFeatures(feats)) {
        for (auto& kv : feats)
            if (kv.getValue()) out.push_back("+" + kv.getKey().str());
        std::sort(out.begin(), out.end());
    }
    return out;
}

// Whitespace-separated tokens of a target string; a value may be quoted with ' or " (TVM's
// SplitString), e.g. -host="llvm -mtriple=aarch64-linux-gnu", and the quotes are removed. An
// unquoted -host= takes the rest of the string as its value.
std::vector<std::string> tokenize(const std::string& text) {
    std::vector<std::string> tokens;
    size_t i = 0;
    const size_t n = text.size();
    while (i < n) {
        while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        if (i >= n) break;
        std::string tok;
        if (text.compare(i, 6, "-host=") == 0 && i + 6 < n && text[i + 6] != '"' && text[i + 6] != '\'') {
            std::string rest = text.substr(i);
            while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) rest.pop_back();
            tokens.push_back(rest);
            break;
        }
        while (i < n && !std::isspace(static_cast<unsigned char>(text[i]))) {
            const char c = text[i];
            if (c == '"' || c == '\'') {
                const size_t close = text.find(c, i + 1);
                TB_USER_CHECK(close != std::string::npos) << "target '" << text << "': unterminated quote " << c;
                tok += text.substr(i + 1, close - i - 1);
                i = close + 1;
            } else {
                tok += c;
                ++i;
            }
        }
        tokens.push_back(tok);
    }
    return tokens;
}

// TVM target.cc DeduplicateKeys: the first occurrence of each key, in order.
std::vector<std::string> dedupKeys(const std::vector<std::string>& keys) {
    std::vector<std::string> out;
    for (const auto& k : keys)
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    return out;
}

std::string joinComma(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
    return s;
}

int parsePositive(const std::string& text, const std::string& key, const std::string& v) {
    const int r = parseInt(text, key, v);
    TB_USER_CHECK(r > 0) << "target '" << text << "': -" << key << " must be positive, got " << v;
    return r;
}

// One `-key=value` option of a target string: (key, value), UserError for anything else.
std::pair<std::string, std::string> splitOption(const std::string& text, const std::string& tok) {
    TB_USER_CHECK(tok.size() > 1 && tok[0] == '-') << "target '" << text << "': expected an option '-key=value', got '" << tok << "'";
    const size_t eq = tok.find('=');
    TB_USER_CHECK(eq != std::string::npos) << "target '" << text << "': option '" << tok << "' has no '=value'";
    std::string key = tok.substr(1, eq - 1), value = tok.substr(eq + 1);
    TB_USER_CHECK(!value.empty()) << "target '" << text << "': option -" << key << " has an empty value";
    // A value (quoted or not) is one printable word: str() writes it unquoted, so a space, a quote or
    // a control byte in it would print a string that parses to another target (fuzz_target). The
    // host is a whole target string, parsed (and so checked) on its own.
    if (key != "host") {
        for (const char c : value) {
            const auto uc = static_cast<unsigned char>(c);
            TB_USER_CHECK(uc > 0x20 && uc < 0x7f && c != '"' && c != '\'')
                << "target '" << text << "': the value of -" << key
                << " contains a space, a quote or a non-printable byte";
        }
    }
    return {std::move(key), std::move(value)};
}

// The host given inside a target string (-host=...), parsed and printed canonically.
std::string parseHost(const std::string& text, const std::string& value) {
    Target h;
    try {
        h = Target::parse(value);
    } catch (const UserError& e) {
        TB_USER_ERROR() << "target '" << text << "': bad host target: " << e.what();
    }
    TB_USER_CHECK(h.isCpu()) << "target '" << text << "': the host target must be an llvm target, got '" << value << "'";
    return h.str();
}

// cuda and opencl (TVM target_kind.cc): the options each kind knows, and their defaults.
Target parseGpu(const std::string& text, const std::vector<std::string>& tokens) {
    Target t;
    t.kind = tokens[0];
    const bool cuda = t.isCuda();
    bool userKeys = false;
    std::vector<std::string> keys;
    for (size_t i = 1; i < tokens.size(); ++i) {
        const auto [key, value] = splitOption(text, tokens[i]);
        if (key == "keys") {
            userKeys = true;
            keys = splitComma(value);
        } else if (key == "device") {
            t.device = value;
        } else if (key == "model") {
            t.model = value;
        } else if (key == "libs") {
            t.libs = splitComma(value);
        } else if (key == "host") {
            TB_USER_CHECK(t.targetHost.empty()) << "target '" << text << "': -host is given twice";
            t.targetHost = parseHost(text, value);
        } else if (key == "max_num_threads") {
            t.maxNumThreads = parsePositive(text, key, value);
        } else if (key == "thread_warp_size") {
            t.threadWarpSize = parsePositive(text, key, value);
        } else if (key == "max_threads_per_block") {
            t.maxThreadsPerBlock = parsePositive(text, key, value);
        } else if (key == "max_shared_memory_per_block") {
            t.maxSharedMemoryPerBlock = parsePositive(text, key, value);
        } else if (cuda && key == "arch") {
            // TVM UpdateCUDAAttrs: ExtractIntWithPrefix(arch, "sm_") must give a number.
            const bool ok = value.size() > 3 && value.rfind("sm_", 0) == 0 &&
                            std::all_of(value.begin() + 3, value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
            TB_USER_CHECK(ok) << "target '" << text << "': invalid CUDA arch -arch=" << value << " (expected sm_<number>, e.g. sm_90)";
            t.arch = value;
        } else if (cuda && key == "mcpu") {
            t.mcpu = value;
        } else if (cuda && key == "registers_per_block") {
            t.registersPerBlock = parsePositive(text, key, value);
        } else if (!cuda && key == "max_function_args") {
            t.maxFunctionArgs = parsePositive(text, key, value);
        } else if (!cuda && key == "texture_spatial_limit") {
            t.textureSpatialLimit = parsePositive(text, key, value);
        } else {
            TB_USER_ERROR() << "target '" << text << "': unknown option -" << key << " for kind " << t.kind << " (known: "
                            << (cuda ? "-arch -mcpu -max_num_threads -thread_warp_size -max_threads_per_block "
                                       "-max_shared_memory_per_block -registers_per_block"
                                     : "-device -max_num_threads -thread_warp_size -max_threads_per_block "
                                       "-max_shared_memory_per_block -max_function_args -texture_spatial_limit")
                            << " -keys -device -model -libs -host)";
        }
    }
    // TVM FromConfig: user keys, then the device name, then (without user keys) the kind's defaults.
    if (!t.device.empty()) keys.push_back(t.device);
    if (!userKeys) {
        keys.push_back(t.kind);
        keys.push_back("gpu");
    }
    t.keys = dedupKeys(keys);
    // TVM's attribute defaults for the kind (set_default values of target_kind.cc).
    if (cuda) {
        if (!t.maxNumThreads) t.maxNumThreads = 1024;
        if (!t.threadWarpSize) t.threadWarpSize = 32;
    } else {
        if (!t.maxThreadsPerBlock) t.maxThreadsPerBlock = 256;
        if (!t.maxSharedMemoryPerBlock) t.maxSharedMemoryPerBlock = 16384;
        if (!t.maxNumThreads) t.maxNumThreads = 256;
        if (!t.threadWarpSize) t.threadWarpSize = 1;
        if (!t.textureSpatialLimit) t.textureSpatialLimit = 16384;
        if (!t.maxFunctionArgs) t.maxFunctionArgs = 128;
    }
    return t;
}

std::string archOf(const std::string& triple) { return llvm::Triple(triple).getArchName().str(); }

// The host CPU as LLVM names it. LLVM answers "generic" for an x86 CPU newer than it knows (LLVM 16
// on AMD Zen 5, family 0x1A). That name is written into every record and every target string
// ("llvm -keys=cpu -mcpu=generic"), and parsed again (compile, replay) it means baseline x86-64:
// SSE2 code, 3.8x slower than AVX-512 on mobilenet here. So take instead the newest CPU LLVM knows
// whose instruction set the host has: its name carries its ISA and its scheduling model through
// every re-parse. System features a VM or the OS may mask (protection keys, monitor/wait,
// cache-control, TSX, SGX, ...) never appear in generated kernels and do not disqualify a CPU.
std::string hostCpuName(const llvm::Target& lt, const std::string& triple) {
    const std::string name = llvm::sys::getHostCPUName().str();
    if (name != "generic" || !llvm::Triple(triple).isX86()) return name;
    llvm::StringMap<bool> host;
    if (!llvm::sys::getHostCPUFeatures(host)) return name;
    static const char* const kSystemFeatures[] = {
        "pku", "mwaitx", "monitorx", "wbnoinvd", "rdpru", "clzero", "sgx", "pconfig", "waitpkg", "shstk",
        "ptwrite", "uintr", "enqcmd", "serialize", "tsxldtrk", "cldemote", "movdiri", "movdir64b",
        "invpcid", "rtm", "hreset", "clwb", "clflushopt", "rdpid", "rdseed", "rdrnd", "prfchw", "kl",
        "widekl", "lwp", "xsave", "xsaveopt", "xsavec", "xsaves", "fsgsbase", "sahf"};
    // Newest first, per vendor family; x86-64-v4/v3/v2 are LLVM's ISA levels without a CPU model.
    static const char* const kCandidates[] = {"znver4", "sapphirerapids", "icelake-server", "skylake-avx512",
                                              "x86-64-v4", "znver3", "alderlake", "znver2", "skylake",
                                              "znver1", "haswell", "x86-64-v3", "x86-64-v2"};
    for (const char* cpu : kCandidates) {
        std::unique_ptr<llvm::MCSubtargetInfo> sti(lt.createMCSubtargetInfo(triple, cpu, ""));
        if (!sti || !sti->isCPUStringValid(cpu)) continue;
        bool fits = true;
        for (const auto& kv : host) {
            if (kv.getValue()) continue;
            const std::string f = kv.getKey().str();
            if (std::find(std::begin(kSystemFeatures), std::end(kSystemFeatures), f) != std::end(kSystemFeatures)) continue;
            if (sti->checkFeatures("+" + f)) {
                fits = false;
                break;
            }
        }
        if (fits) return cpu;
    }
    return name;
}

}  // namespace

Target Target::parse(const std::string& text) {
    initializeLlvm();
    const std::vector<std::string> tokens = tokenize(text);
    TB_USER_CHECK(!tokens.empty()) << "empty target string: expected e.g. 'llvm -mcpu=znver4', 'cuda -arch=sm_90' or 'opencl -device=mali'";
    if (tokens[0] == "cuda" || tokens[0] == "opencl") return parseGpu(text, tokens);
    Target t;
    t.kind = tokens[0];
    TB_USER_CHECK(t.kind == "llvm") << "target '" << text << "': unsupported target kind '" << t.kind
                                    << "' (supported: llvm, cuda, opencl)";
    t.keys.clear();
    bool haveMattr = false;
    for (size_t i = 1; i < tokens.size(); ++i) {
        const auto [key, value] = splitOption(text, tokens[i]);
        if (key == "mtriple") {
            t.mtriple = value;
        } else if (key == "mcpu") {
            t.mcpu = value;
        } else if (key == "mattr") {
            haveMattr = true;
            for (auto& f : splitComma(value)) {
                TB_USER_CHECK(f[0] == '+' || f[0] == '-') << "target '" << text << "': -mattr entry '" << f
                                                          << "' must start with '+' or '-'";
                t.mattr.push_back(f);
            }
        } else if (key == "keys") {
            t.keys = splitComma(value);
        } else if (key == "num-cores") {
            t.numCores = parseInt(text, key, value);
        } else if (key == "opt-level") {
            t.optLevel = parseInt(text, key, value);
            TB_USER_CHECK(t.optLevel <= 3) << "target '" << text << "': -opt-level must be 0..3";
        } else if (key == "model") {
            t.model = value;
        } else if (key == "host") {
            TB_USER_CHECK(t.targetHost.empty()) << "target '" << text << "': -host is given twice";
            t.targetHost = parseHost(text, value);
        } else if (key == "mabi" || key == "device") {
            // Accepted for compatibility with TVM strings; no effect on CPU code.
        } else {
            TB_USER_ERROR() << "target '" << text << "': unknown option -" << key
                            << " (known: -mtriple -mcpu -mattr -keys -num-cores -opt-level -model -mabi -device -host)";
        }
    }
    const std::string hostTriple = llvm::sys::getProcessTriple();
    if (t.mtriple.empty()) t.mtriple = hostTriple;
    std::string err;
    const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(t.mtriple, err);
    TB_USER_CHECK(lt) << "target '" << text << "': LLVM does not know the triple '" << t.mtriple << "' (" << err << ")";
    const bool host = archOf(t.mtriple) == archOf(hostTriple);
    if (t.mcpu.empty()) {
        t.mcpu = host ? hostCpuName(*lt, t.mtriple) : "generic";
        if (host && !haveMattr) t.mattr = hostFeatures();
    }
    {
        std::unique_ptr<llvm::MCSubtargetInfo> sti(lt->createMCSubtargetInfo(t.mtriple, "", ""));
        TB_USER_CHECK(t.mcpu == "generic" || (sti && sti->isCPUStringValid(t.mcpu)))
            << "target '" << text << "': LLVM does not know the CPU '" << t.mcpu << "' for " << t.mtriple;
    }
    if (t.keys.empty()) t.keys = host || llvm::Triple(t.mtriple).isX86() ? std::vector<std::string>{"cpu"}
                                                                         : std::vector<std::string>{"arm_cpu", "cpu"};
    return t;
}

Target Target::parse(const std::string& text, const std::string& host) {
    Target t = parse(text);
    if (host.empty()) return t;
    const std::string h = parseHost(text, host);
    TB_USER_CHECK(t.targetHost.empty() || t.targetHost == h) << "target '" << text << "' names the host '" << t.targetHost
                                                 << "', which differs from the host given beside it: '" << h << "'";
    t.targetHost = h;
    return t;
}

Target Target::host() { return parse("llvm"); }

std::string Target::str() const {
    std::ostringstream os;
    os << kind;
    if (!keys.empty()) os << " -keys=" << joinComma(keys);
    if (!isCpu()) {
        // TVM StringifyAttrsToRaw: every attribute, names sorted; these are in that order.
        if (!arch.empty()) os << " -arch=" << arch;
        if (!device.empty()) os << " -device=" << device;
        if (!libs.empty()) os << " -libs=" << joinComma(libs);
        if (maxFunctionArgs) os << " -max_function_args=" << maxFunctionArgs;
        if (maxNumThreads) os << " -max_num_threads=" << maxNumThreads;
        if (maxSharedMemoryPerBlock) os << " -max_shared_memory_per_block=" << maxSharedMemoryPerBlock;
        if (maxThreadsPerBlock) os << " -max_threads_per_block=" << maxThreadsPerBlock;
        if (!mcpu.empty()) os << " -mcpu=" << mcpu;
        if (!model.empty()) os << " -model=" << model;
        if (registersPerBlock) os << " -registers_per_block=" << registersPerBlock;
        if (textureSpatialLimit) os << " -texture_spatial_limit=" << textureSpatialLimit;
        if (threadWarpSize) os << " -thread_warp_size=" << threadWarpSize;
        return os.str();
    }
    if (!mattr.empty()) os << " -mattr=" << featureString();
    if (!mcpu.empty()) os << " -mcpu=" << mcpu;
    if (!model.empty()) os << " -model=" << model;
    if (!mtriple.empty()) os << " -mtriple=" << mtriple;
    if (numCores > 0) os << " -num-cores=" << numCores;
    if (optLevel != 3) os << " -opt-level=" << optLevel;
    return os.str();
}

std::optional<Target> Target::hostTarget() const {
    if (targetHost.empty()) return std::nullopt;
    return parse(targetHost);
}

bool Target::isMali() const { return isOpenCL() && std::find(keys.begin(), keys.end(), "mali") != keys.end(); }

HardwareParams Target::gpuHardwareParams() const {
    TB_USER_CHECK(isGpu()) << "target '" << str() << "' is not a GPU target: no GPU hardware parameters";
    if (isMali()) return HardwareParams::mali();
    if (isCuda())
        return HardwareParams::gpu(maxSharedMemoryPerBlock ? maxSharedMemoryPerBlock : 49152,
                                   maxThreadsPerBlock ? maxThreadsPerBlock : maxNumThreads, threadWarpSize);
    return HardwareParams::gpu(maxSharedMemoryPerBlock, maxThreadsPerBlock, threadWarpSize);
}

std::string Target::featureString() const { return joinComma(mattr); }

bool Target::runsOnHost() const {
    if (!isCpu()) return false;
    initializeLlvm();
    return archOf(mtriple) == archOf(llvm::sys::getProcessTriple());
}

bool Target::hasFeature(const std::string& name) const {
    // An explicit -mattr mention wins (the last one, as in LLVM's feature strings); otherwise the
    // CPU's default feature set decides.
    if (!isCpu()) return false;
    for (size_t i = mattr.size(); i-- > 0;)
        if (mattr[i].substr(1) == name) return mattr[i][0] == '+';
    initializeLlvm();
    std::string err;
    const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(mtriple, err);
    if (!lt) return false;
    std::unique_ptr<llvm::MCSubtargetInfo> sti(lt->createMCSubtargetInfo(mtriple, mcpu, featureString()));
    return sti && sti->checkFeatures("+" + name);
}

int Target::vectorBits() const {
    TB_USER_CHECK(isCpu()) << "target '" << str() << "' is a GPU target: CPU code generation needs an llvm target";
    if (!llvm::Triple(mtriple).isX86()) return 128;  // NEON and the other 128-bit SIMD ISAs
    if (hasFeature("avx512f")) return 512;
    if (hasFeature("avx2") || hasFeature("avx")) return 256;
    return 128;
}

}  // namespace tb::codegen
