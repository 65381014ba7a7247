// SPDX-License-Identifier: Apache-2.0
// The OpenCL backend of gpu_device.h: the ICD loader (libOpenCL.so.1), OpenCL 1.2 API, one context
// and one in-order profiling queue per opened device. Attribute answers follow TVM's
// src/runtime/opencl/opencl_device_api.cc (OpenCLWorkspace::GetAttr).
#include "engine/measure/gpu_device.h"

#if TB_HAVE_OPENCL

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001  // cl_khr_icd: the ICD loader found no platform
#endif

#include <algorithm>
#include <map>

namespace tb::gpu::detail {

namespace {

const char* clErrorName(cl_int e) {
    switch (e) {
#define TB_CL_CASE(x) \
    case x:           \
        return #x;
        TB_CL_CASE(CL_SUCCESS)
        TB_CL_CASE(CL_DEVICE_NOT_FOUND)
        TB_CL_CASE(CL_DEVICE_NOT_AVAILABLE)
        TB_CL_CASE(CL_COMPILER_NOT_AVAILABLE)
        TB_CL_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        TB_CL_CASE(CL_OUT_OF_RESOURCES)
        TB_CL_CASE(CL_OUT_OF_HOST_MEMORY)
        TB_CL_CASE(CL_BUILD_PROGRAM_FAILURE)
        TB_CL_CASE(CL_INVALID_VALUE)
        TB_CL_CASE(CL_INVALID_DEVICE)
        TB_CL_CASE(CL_INVALID_CONTEXT)
        TB_CL_CASE(CL_INVALID_COMMAND_QUEUE)
        TB_CL_CASE(CL_INVALID_MEM_OBJECT)
        TB_CL_CASE(CL_INVALID_BUILD_OPTIONS)
        TB_CL_CASE(CL_INVALID_PROGRAM)
        TB_CL_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
        TB_CL_CASE(CL_INVALID_KERNEL_NAME)
        TB_CL_CASE(CL_INVALID_KERNEL)
        TB_CL_CASE(CL_INVALID_ARG_INDEX)
        TB_CL_CASE(CL_INVALID_ARG_VALUE)
        TB_CL_CASE(CL_INVALID_ARG_SIZE)
        TB_CL_CASE(CL_INVALID_KERNEL_ARGS)
        TB_CL_CASE(CL_INVALID_WORK_DIMENSION)
        TB_CL_CASE(CL_INVALID_WORK_GROUP_SIZE)
        TB_CL_CASE(CL_INVALID_WORK_ITEM_SIZE)
        TB_CL_CASE(CL_INVALID_GLOBAL_OFFSET)
        TB_CL_CASE(CL_INVALID_EVENT)
        TB_CL_CASE(CL_INVALID_BUFFER_SIZE)
        TB_CL_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
        TB_CL_CASE(CL_PLATFORM_NOT_FOUND_KHR)
#undef TB_CL_CASE
        default:
            return "CL_ERROR";
    }
}

std::string clError(const char* what, cl_int e) {
    return std::string(what) + " failed: " + clErrorName(e) + " (" + std::to_string(e) + ")";
}

std::string deviceString(cl_device_id d, cl_device_info what) {
    size_t n = 0;
    if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    clGetDeviceInfo(d, what, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
}

template <class T>
T deviceValue(cl_device_id d, cl_device_info what) {
    T v{};
    clGetDeviceInfo(d, what, sizeof v, &v, nullptr);
    return v;
}

struct DeviceEntry {
    cl_platform_id platform;
    cl_device_id device;
};

// Every device of every platform: GPUs first, then the others (TVM's CPU fallback).
std::vector<DeviceEntry> listDevices() {
    cl_uint np = 0;
    const cl_int rc = clGetPlatformIDs(0, nullptr, &np);
    if (rc == CL_PLATFORM_NOT_FOUND_KHR || np == 0) return {};
    if (rc != CL_SUCCESS) throw GpuError(kErrorCompileDevice, clError("clGetPlatformIDs", rc));
    std::vector<cl_platform_id> platforms(np);
    clGetPlatformIDs(np, platforms.data(), nullptr);
    std::vector<DeviceEntry> gpus, others;
    for (cl_platform_id p : platforms) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
        std::vector<cl_device_id> devices(nd);
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
        for (cl_device_id d : devices)
            (deviceValue<cl_device_type>(d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU ? gpus : others).push_back({p, d});
    }
    gpus.insert(gpus.end(), others.begin(), others.end());
    return gpus;
}

GpuDeviceAttributes readAttributes(const DeviceEntry& e) {
    const cl_device_id d = e.device;
    GpuDeviceAttributes a;
    a.exist = true;
    a.maxThreadsPerBlock = int(deviceValue<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));
    a.warpSize = 1;  // TVM: "the warp size of OpenCL device is not always 1 ... we need to figure out a way to query"
    a.maxSharedMemoryPerBlock = int(deviceValue<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE));
    // "OpenCL <major>.<minor> <vendor>" -> "<major>.<minor>" (TVM's kComputeVersion).
    const std::string version = deviceString(d, CL_DEVICE_VERSION);
    if (version.rfind("OpenCL ", 0) == 0) {
        const size_t end = version.find(' ', 7);
        a.computeVersion = version.substr(7, end == std::string::npos ? std::string::npos : end - 7);
    } else {
        a.computeVersion = version;
    }
    a.deviceName = deviceString(d, CL_DEVICE_NAME);
    a.maxClockRate = int(deviceValue<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY)) * 1000;  // MHz -> kHz as TVM
    a.multiProcessorCount = int(deviceValue<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS));
    size_t dims[3] = {0, 0, 0};
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof dims, dims, nullptr);
    for (int i = 0; i < 3; ++i) a.maxThreadDimensions[size_t(i)] = int64_t(dims[i]);
    a.maxRegistersPerBlock = 0;
    a.apiVersion = CL_TARGET_OPENCL_VERSION;  // TVM: the OpenCL version the runtime was built against
    a.driverVersion = deviceString(d, CL_DRIVER_VERSION);
    a.l2CacheSizeBytes = int64_t(deviceValue<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE));
    a.totalGlobalMemory = int64_t(deviceValue<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE));
    size_t n = 0;
    if (clGetPlatformInfo(e.platform, CL_PLATFORM_NAME, 0, nullptr, &n) == CL_SUCCESS && n > 0) {
        a.platformName.resize(n);
        clGetPlatformInfo(e.platform, CL_PLATFORM_NAME, n, a.platformName.data(), nullptr);
        while (!a.platformName.empty() && a.platformName.back() == '\0') a.platformName.pop_back();
    }
    return a;
}

class OpenclProgram final : public GpuProgram {
public:
    OpenclProgram(cl_context ctx, cl_command_queue q, cl_device_id dev, const codegen::GpuModule& m)
        : m_queue(q), m_module(m) {
        const char* src = m.source.c_str();
        const size_t len = m.source.size();
        cl_int rc = CL_SUCCESS;
        m_program = clCreateProgramWithSource(ctx, 1, &src, &len, &rc);
        if (rc != CL_SUCCESS) throw GpuError(kErrorCompileDevice, clError("clCreateProgramWithSource", rc));
        rc = clBuildProgram(m_program, 1, &dev, "", nullptr, nullptr);
        if (rc != CL_SUCCESS) {
            size_t n = 0;
            std::string log;
            if (clGetProgramBuildInfo(m_program, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) == CL_SUCCESS && n > 0) {
                log.resize(n);
                clGetProgramBuildInfo(m_program, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
                while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
            }
            throw GpuError(kErrorCompileDevice, clError("clBuildProgram", rc) + (log.empty() ? "" : ":\n" + log));
        }
        const size_t maxLocal = size_t(deviceValue<cl_ulong>(dev, CL_DEVICE_LOCAL_MEM_SIZE));
        for (const codegen::GpuLaunch& l : m.launches) {
            if (m_kernels.count(l.entry)) continue;
            cl_kernel k = clCreateKernel(m_program, l.entry.c_str(), &rc);
            if (rc != CL_SUCCESS)
                throw GpuError(kErrorCompileDevice, clError(("clCreateKernel('" + l.entry + "')").c_str(), rc));
            m_kernels[l.entry] = k;
            cl_ulong local = 0;
            clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, nullptr);
            if (local > maxLocal)
                throw GpuError(kErrorRuntimeDevice, "kernel '" + l.entry + "' uses " + std::to_string(local) +
                                                        " bytes of local memory; the device has " +
                                                        std::to_string(maxLocal));
        }
        for (int64_t n : m.bufferElements) {
            const size_t bytes = size_t(n + kGuardElements) * sizeof(float);
            cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
            if (rc != CL_SUCCESS) throw GpuError(kErrorRuntimeDevice, clError("clCreateBuffer", rc));
            m_buffers.push_back(b);
            const float zero = 0;
            rc = clEnqueueFillBuffer(q, b, &zero, sizeof zero, 0, bytes, 0, nullptr, nullptr);
            if (rc != CL_SUCCESS) throw GpuError(kErrorRuntimeDevice, clError("clEnqueueFillBuffer", rc));
        }
        rc = clFinish(q);
        if (rc != CL_SUCCESS) throw GpuError(kErrorRuntimeDevice, clError("clFinish", rc));
    }

    ~OpenclProgram() override {
        for (cl_mem b : m_buffers) clReleaseMemObject(b);
        for (auto& [name, k] : m_kernels) clReleaseKernel(k);
        if (m_program) clReleaseProgram(m_program);
    }

    void write(int buffer, int64_t offset, const float* data, int64_t n) override {
        const cl_int rc = clEnqueueWriteBuffer(m_queue, m_buffers.at(size_t(buffer)), CL_TRUE, size_t(offset) * 4,
                                               size_t(n) * 4, data, 0, nullptr, nullptr);
        if (rc != CL_SUCCESS) throw GpuError(kErrorRuntimeDevice, clError("clEnqueueWriteBuffer", rc));
    }

    void read(int buffer, int64_t offset, float* data, int64_t n) override {
        const cl_int rc = clEnqueueReadBuffer(m_queue, m_buffers.at(size_t(buffer)), CL_TRUE, size_t(offset) * 4,
                                              size_t(n) * 4, data, 0, nullptr, nullptr);
        if (rc != CL_SUCCESS) throw GpuError(kErrorRuntimeDevice, clError("clEnqueueReadBuffer", rc));
    }

    double runTimed(int times) override {
        std::vector<cl_event> events;
        events.reserve(size_t(times) * m_module.launches.size());
        struct Release {
            std::vector<cl_event>& e;
            ~Release() {
                for (cl_event x : e) clReleaseEvent(x);
            }
        } release{events};
        for (int t = 0; t < times; ++t) {
            for (const codegen::GpuLaunch& l : m_module.launches) {
                cl_kernel k = m_kernels.at(l.entry);
                for (size_t i = 0; i < l.args.size(); ++i) {
                    const cl_int rc = clSetKernelArg(k, cl_uint(i), sizeof(cl_mem), &m_buffers.at(size_t(l.args[i])));
                    if (rc != CL_SUCCESS)
                        throw GpuError(kErrorRuntimeDevice,
                                       clError(("clSetKernelArg('" + l.entry + "', " + std::to_string(i) + ")").c_str(), rc));
                }
                size_t global[3], local[3];
                for (int d = 0; d < 3; ++d) {
                    global[d] = size_t(l.grid[size_t(d)] * l.block[size_t(d)]);
                    local[d] = size_t(l.block[size_t(d)]);
                }
                cl_event ev = nullptr;
                const cl_int rc = clEnqueueNDRangeKernel(m_queue, k, 3, nullptr, global, local, 0, nullptr, &ev);
                if (rc != CL_SUCCESS)
                    throw GpuError(kErrorRuntimeDevice, clError(("launch of '" + l.entry + "' (work-group " +
                                                                 std::to_string(l.block[0]) + "x" +
                                                                 std::to_string(l.block[1]) + "x" +
                                                                 std::to_string(l.block[2]) + ")")
                                                                    .c_str(),
                                                                rc));
                events.push_back(ev);
            }
        }
        cl_int rc = clFinish(m_queue);
        if (rc != CL_SUCCESS) throw GpuError(kErrorRuntimeDevice, clError("clFinish", rc));
        double ns = 0;
        for (cl_event ev : events) {
            cl_int status = CL_COMPLETE;
            clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
            if (status < 0) throw GpuError(kErrorRuntimeDevice, clError("kernel execution", status));
            cl_ulong start = 0, end = 0;
            rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
            if (rc == CL_SUCCESS) rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
            if (rc != CL_SUCCESS) throw GpuError(kErrorRuntimeDevice, clError("clGetEventProfilingInfo", rc));
            if (end > start) ns += double(end - start);
        }
        return ns / 1e6;
    }

private:
    cl_command_queue m_queue;
    codegen::GpuModule m_module;
    cl_program m_program = nullptr;
    std::map<std::string, cl_kernel> m_kernels;
    std::vector<cl_mem> m_buffers;
};

class OpenclDevice final : public GpuDevice {
public:
    explicit OpenclDevice(const DeviceEntry& e) : m_entry(e), m_attributes(readAttributes(e)) {
        cl_int rc = CL_SUCCESS;
        const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, cl_context_properties(e.platform), 0};
        m_context = clCreateContext(props, 1, &e.device, nullptr, nullptr, &rc);
        if (rc != CL_SUCCESS) throw GpuError(kErrorCompileDevice, clError("clCreateContext", rc));
        m_queue = clCreateCommandQueue(m_context, e.device, CL_QUEUE_PROFILING_ENABLE, &rc);
        if (rc != CL_SUCCESS) {
            clReleaseContext(m_context);
            throw GpuError(kErrorCompileDevice, clError("clCreateCommandQueue", rc));
        }
    }
    ~OpenclDevice() override {
        clReleaseCommandQueue(m_queue);
        clReleaseContext(m_context);
    }

    GpuApi api() const override { return GpuApi::OpenCL; }
    const GpuDeviceAttributes& attributes() const override { return m_attributes; }

    std::unique_ptr<GpuProgram> load(const codegen::GpuModule& m) override {
        if (m.language != codegen::GpuLanguage::OpenCL)
            throw GpuError(kErrorCompileDevice, std::string("an OpenCL device cannot run a ") +
                                                    codegen::gpuLanguageName(m.language) + " module");
        return std::make_unique<OpenclProgram>(m_context, m_queue, m_entry.device, m);
    }

private:
    DeviceEntry m_entry;
    GpuDeviceAttributes m_attributes;
    cl_context m_context = nullptr;
    cl_command_queue m_queue = nullptr;
};

}  // namespace

int openclDeviceCount() { return int(listDevices().size()); }

std::unique_ptr<GpuDevice> openOpenclDevice(int index) {
    const std::vector<DeviceEntry> all = listDevices();
    if (index < 0 || size_t(index) >= all.size())
        throw GpuError(kErrorCompileDevice, "no OpenCL device " + std::to_string(index) + " (" +
                                                std::to_string(all.size()) +
                                                " found through the ICD loader; see `clinfo -l`)");
    return std::make_unique<OpenclDevice>(all[size_t(index)]);
}

}  // namespace tb::gpu::detail

#else  // built without OpenCL headers

namespace tb::gpu::detail {
int openclDeviceCount() {
    throw GpuError(kErrorCompileDevice, "this build has no OpenCL support (OpenCL headers and ICD loader not found)");
}
std::unique_ptr<GpuDevice> openOpenclDevice(int) { return openclDeviceCount(), nullptr; }
}  // namespace tb::gpu::detail

#endif
