// SPDX-License-Identifier: Apache-2.0
// The CUDA backend of gpu_device.h: the driver API (libcuda.so.1) and NVRTC (libnvrtc.so), both
// dlopen()ed at run time. The few prototypes used are declared here (CUDA's ABI is stable: the _v2
// entry points are the ones cuda.h has mapped its names to since CUDA 4), so no CUDA header or
// toolkit is needed to build. Attribute answers follow TVM's src/runtime/cuda/cuda_device_api.cc
// (CUDADeviceAPI::GetAttr). The context is the device's primary context (what the CUDA runtime and
// TVM use); launches go to the default stream.
#include <dlfcn.h>
#include <glob.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <thread>
#include <mutex>
#include <vector>

#include "engine/measure/gpu_device.h"

namespace tb::gpu::detail {

namespace {

// ---- the driver API subset (cuda.h) ----
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUevent_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUevent = CUevent_st*;
using CUstream = CUstream_st*;
struct CUgraph_st;
struct CUgraphExec_st;
using CUgraph = CUgraph_st*;
using CUgraphExec = CUgraphExec_st*;
constexpr int kStreamCaptureModeThreadLocal = 1;  // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
constexpr CUresult CUDA_SUCCESS = 0;
// CUdevice_attribute values (cuda.h).
constexpr int kAttrMaxThreadsPerBlock = 1, kAttrMaxBlockDimX = 2, kAttrMaxBlockDimY = 3, kAttrMaxBlockDimZ = 4,
              kAttrMaxSharedMemoryPerBlock = 8, kAttrWarpSize = 10, kAttrMaxRegistersPerBlock = 12,
              kAttrClockRate = 13, kAttrMultiprocessorCount = 16, kAttrL2CacheSize = 38,
              kAttrComputeCapabilityMajor = 75, kAttrComputeCapabilityMinor = 76;

// ---- NVRTC (nvrtc.h) ----
using nvrtcResult = int;
struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;

struct Cuda {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int*);
    CUresult (*cuDeviceGetCount)(int*);
    CUresult (*cuDeviceGet)(CUdevice*, int);
    CUresult (*cuDeviceGetName)(char*, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
    CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)();
    CUresult (*cuModuleLoadData)(CUmodule*, const void*);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
    CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
    CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
    CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream, void**, void**);
    CUresult (*cuEventCreate)(CUevent*, unsigned);
    CUresult (*cuEventDestroy)(CUevent);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
    CUresult (*cuGetErrorName)(CUresult, const char**);
    // CUDA graphs (optional: nullptr when the driver lacks them; launches then go one by one).
    CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
    CUresult (*cuStreamDestroy)(CUstream) = nullptr;
    CUresult (*cuStreamBeginCapture)(CUstream, int) = nullptr;
    CUresult (*cuStreamEndCapture)(CUstream, CUgraph*) = nullptr;
    CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
    CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
    CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
    CUresult (*cuGraphDestroy)(CUgraph) = nullptr;
    CUresult (*cuGetErrorString)(CUresult, const char**);

    nvrtcResult (*nvrtcVersion)(int*, int*);
    nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                      const char* const*);
    nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
    nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
    nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
    nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
    nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
    nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
    const char* (*nvrtcGetErrorString)(nvrtcResult);

    std::string loadError;  // non-empty: the driver library or a symbol is missing
    std::string nvrtcError;  // non-empty: NVRTC is missing (attributes still work)
};

// Library names tried, in order: the plain SONAME first (the loader's search path, LD_LIBRARY_PATH),
// then the toolkit's usual homes.
void* openFirst(const std::vector<std::string>& names, std::string* tried) {
    for (const std::string& n : names) {
        if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
        *tried += (tried->empty() ? "" : ", ") + n;
    }
    return nullptr;
}

// NVRTC dlopen()s its builtins library (libnvrtc-builtins.so.<version>) by plain name: when NVRTC
// itself came from a directory outside the loader's path (/usr/local/cuda/lib64), load the builtins
// from that same directory first (RTLD_GLOBAL), so the later lookup finds them already loaded.
void preloadNvrtcBuiltins(void* nvrtc) {
    Dl_info info{};
    void* sym = dlsym(nvrtc, "nvrtcVersion");
    if (!sym || !dladdr(sym, &info) || !info.dli_fname) return;
    const std::string path = info.dli_fname;
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return;
    glob_t g{};
    if (glob((path.substr(0, slash) + "/libnvrtc-builtins.so*").c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i)
            if (dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_GLOBAL)) break;
    globfree(&g);
}

template <class F>
bool bind(void* lib, F*& fn, std::initializer_list<const char*> names, std::string* missing) {
    for (const char* n : names)
        if (void* s = dlsym(lib, n)) {
            fn = reinterpret_cast<F*>(s);
            return true;
        }
    *missing += (missing->empty() ? "" : ", ") + std::string(*names.begin());
    return false;
}

const Cuda& cuda() {
    static Cuda c;
    static std::once_flag once;
    std::call_once(once, [] {
        std::string tried;
        void* lib = openFirst({"libcuda.so.1", "libcuda.so"}, &tried);
        if (!lib) {
            c.loadError = "the CUDA driver library is not present (tried " + tried +
                          "): this machine has no NVIDIA driver";
            return;
        }
        std::string missing;
        bind(lib, c.cuInit, {"cuInit"}, &missing);
        bind(lib, c.cuDriverGetVersion, {"cuDriverGetVersion"}, &missing);
        bind(lib, c.cuDeviceGetCount, {"cuDeviceGetCount"}, &missing);
        bind(lib, c.cuDeviceGet, {"cuDeviceGet"}, &missing);
        bind(lib, c.cuDeviceGetName, {"cuDeviceGetName"}, &missing);
        bind(lib, c.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, &missing);
        bind(lib, c.cuDeviceTotalMem, {"cuDeviceTotalMem_v2"}, &missing);
        bind(lib, c.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, &missing);
        bind(lib, c.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, &missing);
        bind(lib, c.cuCtxSetCurrent, {"cuCtxSetCurrent"}, &missing);
        bind(lib, c.cuCtxSynchronize, {"cuCtxSynchronize"}, &missing);
        bind(lib, c.cuModuleLoadData, {"cuModuleLoadData"}, &missing);
        bind(lib, c.cuModuleUnload, {"cuModuleUnload"}, &missing);
        bind(lib, c.cuModuleGetFunction, {"cuModuleGetFunction"}, &missing);
        bind(lib, c.cuMemAlloc, {"cuMemAlloc_v2"}, &missing);
        bind(lib, c.cuMemFree, {"cuMemFree_v2"}, &missing);
        bind(lib, c.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, &missing);
        bind(lib, c.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, &missing);
        bind(lib, c.cuMemsetD32, {"cuMemsetD32_v2"}, &missing);
        bind(lib, c.cuLaunchKernel, {"cuLaunchKernel"}, &missing);
        bind(lib, c.cuEventCreate, {"cuEventCreate"}, &missing);
        bind(lib, c.cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"}, &missing);
        bind(lib, c.cuEventRecord, {"cuEventRecord"}, &missing);
        bind(lib, c.cuEventSynchronize, {"cuEventSynchronize"}, &missing);
        bind(lib, c.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, &missing);
        bind(lib, c.cuGetErrorName, {"cuGetErrorName"}, &missing);
        bind(lib, c.cuGetErrorString, {"cuGetErrorString"}, &missing);
        if (!missing.empty()) {
            c.loadError = "the CUDA driver library lacks " + missing;
            return;
        }
        std::string noGraphs;  // CUDA graphs are optional (CUDA 11.4+)
        const bool graphs = bind(lib, c.cuStreamCreate, {"cuStreamCreate"}, &noGraphs) &&
                            bind(lib, c.cuStreamDestroy, {"cuStreamDestroy_v2", "cuStreamDestroy"}, &noGraphs) &&
                            bind(lib, c.cuStreamBeginCapture, {"cuStreamBeginCapture_v2"}, &noGraphs) &&
                            bind(lib, c.cuStreamEndCapture, {"cuStreamEndCapture"}, &noGraphs) &&
                            bind(lib, c.cuGraphInstantiateWithFlags, {"cuGraphInstantiateWithFlags"}, &noGraphs) &&
                            bind(lib, c.cuGraphLaunch, {"cuGraphLaunch"}, &noGraphs) &&
                            bind(lib, c.cuGraphExecDestroy, {"cuGraphExecDestroy"}, &noGraphs) &&
                            bind(lib, c.cuGraphDestroy, {"cuGraphDestroy"}, &noGraphs);
        if (!graphs) c.cuGraphLaunch = nullptr;
        std::string nvTried;
        std::vector<std::string> nvNames = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
        for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
            if (const char* home = std::getenv(env)) nvNames.push_back(std::string(home) + "/lib64/libnvrtc.so");
        nvNames.push_back("/usr/local/cuda/lib64/libnvrtc.so");
        void* nv = openFirst(nvNames, &nvTried);
        if (nv) preloadNvrtcBuiltins(nv);
        if (!nv) {
            c.nvrtcError = "NVRTC is not present (tried " + nvTried + "); install the CUDA toolkit or set CUDA_HOME";
        } else {
            std::string nvMissing;
            bind(nv, c.nvrtcVersion, {"nvrtcVersion"}, &nvMissing);
            bind(nv, c.nvrtcCreateProgram, {"nvrtcCreateProgram"}, &nvMissing);
            bind(nv, c.nvrtcDestroyProgram, {"nvrtcDestroyProgram"}, &nvMissing);
            bind(nv, c.nvrtcCompileProgram, {"nvrtcCompileProgram"}, &nvMissing);
            bind(nv, c.nvrtcGetProgramLogSize, {"nvrtcGetProgramLogSize"}, &nvMissing);
            bind(nv, c.nvrtcGetProgramLog, {"nvrtcGetProgramLog"}, &nvMissing);
            bind(nv, c.nvrtcGetCUBINSize, {"nvrtcGetCUBINSize"}, &nvMissing);
            bind(nv, c.nvrtcGetCUBIN, {"nvrtcGetCUBIN"}, &nvMissing);
            bind(nv, c.nvrtcGetErrorString, {"nvrtcGetErrorString"}, &nvMissing);
            if (!nvMissing.empty()) c.nvrtcError = "NVRTC lacks " + nvMissing + " (CUDA 11.1 or newer is needed)";
        }
        const CUresult rc = c.cuInit(0);
        if (rc != CUDA_SUCCESS) c.loadError = "cuInit failed with CUDA error " + std::to_string(rc);
    });
    return c;
}

const Cuda& driver() {
    const Cuda& c = cuda();
    if (!c.loadError.empty()) throw GpuError(kErrorCompileDevice, c.loadError);
    return c;
}

std::string cuError(const char* what, CUresult rc) {
    const Cuda& c = cuda();
    const char* name = nullptr;
    const char* text = nullptr;
    if (c.cuGetErrorName) c.cuGetErrorName(rc, &name);
    if (c.cuGetErrorString) c.cuGetErrorString(rc, &text);
    return std::string(what) + " failed: " + (name ? name : "CUDA error") + " (" + std::to_string(rc) + ")" +
           (text ? std::string(": ") + text : std::string());
}

void check(CUresult rc, const char* what, int errorNo = kErrorRuntimeDevice) {
    if (rc != CUDA_SUCCESS) throw GpuError(errorNo, cuError(what, rc));
}

/// NVRTC: `source` -> a CUBIN for sm_<ccMajor><ccMinor>. Throws GpuError(COMPILE_DEVICE) with the
/// compiler's log. NVRTC is thread-safe (each call has its own nvrtcProgram), so CudaDevice::
/// precompile runs this on several threads.
std::vector<char> compileCubin(const Cuda& c, const std::string& source, int ccMajor, int ccMinor) {
    if (!c.nvrtcError.empty()) throw GpuError(kErrorCompileDevice, c.nvrtcError);
    nvrtcProgram prog = nullptr;
    nvrtcResult nr = c.nvrtcCreateProgram(&prog, source.c_str(), "tunebench_module.cu", 0, nullptr, nullptr);
    if (nr != 0) throw GpuError(kErrorCompileDevice, std::string("nvrtcCreateProgram: ") + c.nvrtcGetErrorString(nr));
    const std::string arch = "--gpu-architecture=sm_" + std::to_string(ccMajor) + std::to_string(ccMinor);
    const char* opts[] = {arch.c_str(), "--std=c++17"};
    nr = c.nvrtcCompileProgram(prog, 2, opts);
    std::string log;
    size_t logSize = 0;
    if (c.nvrtcGetProgramLogSize(prog, &logSize) == 0 && logSize > 1) {
        log.resize(logSize);
        c.nvrtcGetProgramLog(prog, log.data());
        while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    if (nr != 0) {
        c.nvrtcDestroyProgram(&prog);
        throw GpuError(kErrorCompileDevice, std::string("NVRTC compilation (") + arch + ") failed: " +
                                                c.nvrtcGetErrorString(nr) + (log.empty() ? "" : ":\n" + log));
    }
    size_t n = 0;
    c.nvrtcGetCUBINSize(prog, &n);
    std::vector<char> cubin(n);
    c.nvrtcGetCUBIN(prog, cubin.data());
    c.nvrtcDestroyProgram(&prog);
    return cubin;
}

class CudaProgram final : public GpuProgram {
public:
    /// `cubin`: compileCubin of m.source.
    CudaProgram(const Cuda& c, const codegen::GpuModule& m, const std::vector<char>& cubin) : m_c(c), m_module(m) {
        check(c.cuModuleLoadData(&m_cuModule, cubin.data()), "cuModuleLoadData", kErrorCompileDevice);
        for (const codegen::GpuLaunch& l : m.launches) {
            if (m_functions.count(l.entry)) continue;
            CUfunction f = nullptr;
            const CUresult rc = c.cuModuleGetFunction(&f, m_cuModule, l.entry.c_str());
            if (rc != CUDA_SUCCESS)
                throw GpuError(kErrorCompileDevice, cuError(("cuModuleGetFunction('" + l.entry + "')").c_str(), rc) +
                                                        " (kernels must be declared extern \"C\")");
            m_functions[l.entry] = f;
        }
        for (int64_t elems : m.bufferElements) {
            CUdeviceptr p = 0;
            const size_t words = size_t(elems + kGuardElements);
            check(c.cuMemAlloc(&p, words * 4), "cuMemAlloc");
            m_buffers.push_back(p);
            check(c.cuMemsetD32(p, 0, words), "cuMemsetD32");
        }
        check(c.cuEventCreate(&m_start, 0), "cuEventCreate");
        check(c.cuEventCreate(&m_stop, 0), "cuEventCreate");
    }

    ~CudaProgram() override {
        if (m_graphExec) m_c.cuGraphExecDestroy(m_graphExec);
        if (m_graph) m_c.cuGraphDestroy(m_graph);
        if (m_stream) m_c.cuStreamDestroy(m_stream);
        if (m_start) m_c.cuEventDestroy(m_start);
        if (m_stop) m_c.cuEventDestroy(m_stop);
        for (CUdeviceptr p : m_buffers) m_c.cuMemFree(p);
        if (m_cuModule) m_c.cuModuleUnload(m_cuModule);
    }

    void write(int buffer, int64_t offset, const float* data, int64_t n) override {
        check(m_c.cuMemcpyHtoD(m_buffers.at(size_t(buffer)) + CUdeviceptr(offset) * 4, data, size_t(n) * 4),
              "cuMemcpyHtoD");
    }

    void read(int buffer, int64_t offset, float* data, int64_t n) override {
        check(m_c.cuMemcpyDtoH(data, m_buffers.at(size_t(buffer)) + CUdeviceptr(offset) * 4, size_t(n) * 4),
              "cuMemcpyDtoH");
    }

    double runTimed(int times) override {
        if (m_params.empty()) bindParams();
        // A module of several kernels (a network) replays them as one CUDA graph: the launches of
        // one pass are captured once and each pass is then one cuGraphLaunch, so the GPU runs the
        // kernels back to back instead of waiting on the host's launch rate (~3-5 us a kernel).
        if (m_module.launches.size() > 1 && m_c.cuGraphLaunch && !m_graphFailed && !m_graphExec) captureGraph();
        check(m_c.cuEventRecord(m_start, m_stream), "cuEventRecord");
        for (int t = 0; t < times; ++t) {
            if (m_graphExec)
                check(m_c.cuGraphLaunch(m_graphExec, m_stream), "cuGraphLaunch");
            else
                launchAll();
        }
        check(m_c.cuEventRecord(m_stop, m_stream), "cuEventRecord");
        check(m_c.cuEventSynchronize(m_stop), "kernel execution (cuEventSynchronize)");
        float ms = 0;
        check(m_c.cuEventElapsedTime(&ms, m_start, m_stop), "cuEventElapsedTime");
        return double(ms);
    }

private:
    /// Kernel parameters: one pointer per argument, each pointing at the device address.
    void bindParams() {
        for (const codegen::GpuLaunch& l : m_module.launches) {
            m_ptrs.emplace_back();
            for (int a : l.args) m_ptrs.back().push_back(m_buffers.at(size_t(a)));
        }
        for (auto& p : m_ptrs) {
            m_params.emplace_back();
            for (CUdeviceptr& d : p) m_params.back().push_back(&d);
        }
    }

    /// One pass over the module's launches, in order, on m_stream.
    void launchAll() {
        for (size_t i = 0; i < m_module.launches.size(); ++i) {
            const codegen::GpuLaunch& l = m_module.launches[i];
            const CUresult rc = m_c.cuLaunchKernel(m_functions.at(l.entry), unsigned(l.grid[0]), unsigned(l.grid[1]),
                                                   unsigned(l.grid[2]), unsigned(l.block[0]), unsigned(l.block[1]),
                                                   unsigned(l.block[2]), 0, m_stream, m_params[i].data(), nullptr);
            if (rc != CUDA_SUCCESS)
                throw GpuError(kErrorRuntimeDevice,
                               cuError(("launch of '" + l.entry + "' (block " + std::to_string(l.block[0]) + "x" +
                                        std::to_string(l.block[1]) + "x" + std::to_string(l.block[2]) + ")")
                                           .c_str(),
                                       rc));
        }
    }

    /// Captures launchAll() into m_graphExec on a stream of its own (the legacy default stream
    /// cannot be captured; a blocking stream still orders after the synchronous copies). Any
    /// failure leaves m_graphExec null and the launches go one by one, as before.
    void captureGraph() {
        m_graphFailed = true;
        if (!m_stream && m_c.cuStreamCreate(&m_stream, 0) != CUDA_SUCCESS) {
            m_stream = nullptr;
            return;
        }
        if (m_c.cuStreamBeginCapture(m_stream, kStreamCaptureModeThreadLocal) != CUDA_SUCCESS) return;
        bool launched = true;
        try {
            launchAll();
        } catch (const GpuError&) {
            launched = false;
        }
        CUgraph g = nullptr;
        if (m_c.cuStreamEndCapture(m_stream, &g) != CUDA_SUCCESS || !launched || !g) {
            if (g) m_c.cuGraphDestroy(g);
            return;
        }
        m_graph = g;
        if (m_c.cuGraphInstantiateWithFlags(&m_graphExec, m_graph, 0) != CUDA_SUCCESS) {
            m_graphExec = nullptr;
            return;
        }
        m_graphFailed = false;
    }

    const Cuda& m_c;
    codegen::GpuModule m_module;
    CUmodule m_cuModule = nullptr;
    std::map<std::string, CUfunction> m_functions;
    std::vector<CUdeviceptr> m_buffers;
    CUevent m_start = nullptr, m_stop = nullptr;
    std::vector<std::vector<CUdeviceptr>> m_ptrs;
    std::vector<std::vector<void*>> m_params;
    CUstream m_stream = nullptr;  // null: the legacy default stream (no graph)
    CUgraph m_graph = nullptr;
    CUgraphExec m_graphExec = nullptr;
    bool m_graphFailed = false;
};

class CudaDevice final : public GpuDevice {
public:
    CudaDevice(const Cuda& c, int index) : m_c(c) {
        check(c.cuDeviceGet(&m_device, index), "cuDeviceGet", kErrorCompileDevice);
        auto attr = [&](int which) {
            int v = 0;
            c.cuDeviceGetAttribute(&v, which, m_device);
            return v;
        };
        GpuDeviceAttributes& a = m_attributes;
        a.exist = true;
        a.maxThreadsPerBlock = attr(kAttrMaxThreadsPerBlock);
        a.warpSize = attr(kAttrWarpSize);
        a.maxSharedMemoryPerBlock = attr(kAttrMaxSharedMemoryPerBlock);
        m_ccMajor = attr(kAttrComputeCapabilityMajor);
        m_ccMinor = attr(kAttrComputeCapabilityMinor);
        a.computeVersion = std::to_string(m_ccMajor) + "." + std::to_string(m_ccMinor);
        char name[256] = {0};
        c.cuDeviceGetName(name, int(sizeof name) - 1, m_device);
        a.deviceName = name;
        a.maxClockRate = attr(kAttrClockRate);
        a.multiProcessorCount = attr(kAttrMultiprocessorCount);
        a.maxThreadDimensions = {attr(kAttrMaxBlockDimX), attr(kAttrMaxBlockDimY), attr(kAttrMaxBlockDimZ)};
        a.maxRegistersPerBlock = attr(kAttrMaxRegistersPerBlock);
        int version = 0;
        c.cuDriverGetVersion(&version);
        a.apiVersion = version;
        a.driverVersion = std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
        a.l2CacheSizeBytes = attr(kAttrL2CacheSize);
        size_t total = 0;
        c.cuDeviceTotalMem(&total, m_device);
        a.totalGlobalMemory = int64_t(total);
        a.platformName = "CUDA";
        check(c.cuDevicePrimaryCtxRetain(&m_context, m_device), "cuDevicePrimaryCtxRetain", kErrorCompileDevice);
        check(c.cuCtxSetCurrent(m_context), "cuCtxSetCurrent", kErrorCompileDevice);
    }
    ~CudaDevice() override {
        if (m_context) m_c.cuDevicePrimaryCtxRelease(m_device);
    }

    GpuApi api() const override { return GpuApi::CUDA; }
    const GpuDeviceAttributes& attributes() const override { return m_attributes; }

    std::unique_ptr<GpuProgram> load(const codegen::GpuModule& m) override {
        if (m.language != codegen::GpuLanguage::CUDA)
            throw GpuError(kErrorCompileDevice, std::string("a CUDA device cannot run an ") +
                                                    codegen::gpuLanguageName(m.language) + " module");
        std::vector<char> cubin;
        {
            std::unique_lock lock(m_mutex);
            auto it = m_precompiled.find(m.source);
            if (it != m_precompiled.end()) {
                Compiled done = std::move(it->second);
                m_precompiled.erase(it);
                lock.unlock();
                if (!done.error.empty()) throw GpuError(kErrorCompileDevice, done.error);
                cubin = std::move(done.cubin);
            }
        }
        if (cubin.empty()) cubin = compileCubin(m_c, m.source, m_ccMajor, m_ccMinor);
        check(m_c.cuCtxSetCurrent(m_context), "cuCtxSetCurrent");
        return std::make_unique<CudaProgram>(m_c, m, cubin);
    }

    void precompile(const std::vector<const codegen::GpuModule*>& modules, int threads) override {
        std::vector<const std::string*> todo;
        {
            std::lock_guard lock(m_mutex);
            for (const codegen::GpuModule* m : modules)
                if (m && m->language == codegen::GpuLanguage::CUDA && m_precompiled.emplace(m->source, Compiled{}).second)
                    todo.push_back(&m->source);
        }
        std::atomic<size_t> next{0};
        auto work = [&] {
            for (size_t i; (i = next.fetch_add(1)) < todo.size();) {
                Compiled out;
                try {
                    out.cubin = compileCubin(m_c, *todo[i], m_ccMajor, m_ccMinor);
                } catch (const std::exception& e) {
                    out.error = e.what();
                }
                std::lock_guard lock(m_mutex);
                m_precompiled[*todo[i]] = std::move(out);
            }
        };
        std::vector<std::thread> pool;
        const size_t n = std::min<size_t>(todo.size(), size_t(std::max(1, threads)));
        for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
        work();
        for (std::thread& t : pool) t.join();
    }

private:
    const Cuda& m_c;
    CUdevice m_device = 0;
    CUcontext m_context = nullptr;
    int m_ccMajor = 0, m_ccMinor = 0;
    GpuDeviceAttributes m_attributes;
    /// precompile's results by source, each taken (and dropped) by the load() of its module.
    struct Compiled {
        std::vector<char> cubin;
        std::string error;
    };
    std::mutex m_mutex;
    std::map<std::string, Compiled> m_precompiled;
};

}  // namespace

int cudaDeviceCount() {
    const Cuda& c = driver();
    int n = 0;
    check(c.cuDeviceGetCount(&n), "cuDeviceGetCount", kErrorCompileDevice);
    return n;
}

std::unique_ptr<GpuDevice> openCudaDevice(int index) {
    const int n = cudaDeviceCount();
    if (index < 0 || index >= n)
        throw GpuError(kErrorCompileDevice, "no CUDA device " + std::to_string(index) + " (" + std::to_string(n) + " found)");
    return std::make_unique<CudaDevice>(driver(), index);
}

}  // namespace tb::gpu::detail
