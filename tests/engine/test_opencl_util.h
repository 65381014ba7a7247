// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file test_opencl_util.h
/// \brief A minimal OpenCL runner for the GPU lowering tests (header only, tests only): builds a
/// GpuModule's OpenCL C on the first OpenCL device (PoCL here), runs its launches in order and reads
/// the buffers back, and compares a module's outputs with the reference interpreter's. The
/// engine's GPU runtime (measure/, device server) is the product code; this helper exists so the
/// code generator is tested against a real OpenCL compiler on its own.

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/codegen/gpu_module.h"
#include "engine/te/interpreter.h"
#include "test_util.h"

namespace tb::test {

/// True when an OpenCL platform with a device is present.
inline bool openClAvailable() {
    cl_uint n = 0;
    if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return false;
    cl_platform_id p;
    clGetPlatformIDs(1, &p, nullptr);
    cl_uint d = 0;
    return clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &d) == CL_SUCCESS && d > 0;
}

/// Runs `m` (language OpenCL). `init[i]` is the initial content of buffer i (empty: NaN-filled, so
/// an element a kernel forgets to write never passes a comparison). Returns every buffer after the
/// last launch. Throws std::runtime_error with the build log or the failing call.
inline std::vector<std::vector<float>> runOpenCl(const codegen::GpuModule& m, std::vector<std::vector<float>> init) {
    auto check = [](cl_int err, const char* what) {
        if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
    };
    cl_platform_id platform;
    cl_device_id device;
    check(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
    check(err, "clCreateCommandQueue");
    const char* src = m.source.c_str();
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
    check(err, "clCreateProgramWithSource");
    if (clBuildProgram(prog, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
        std::string log(n, '\0');
        clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
        throw std::runtime_error("clBuildProgram failed:\n" + log + "\n--- source ---\n" + m.source);
    }
    init.resize(m.bufferElements.size());
    std::vector<cl_mem> bufs;
    for (size_t i = 0; i < m.bufferElements.size(); ++i) {
        auto& host = init[i];
        if (host.empty()) host.assign(size_t(m.bufferElements[i]), std::numeric_limits<float>::quiet_NaN());
        if (host.size() != size_t(m.bufferElements[i])) throw std::runtime_error("buffer size mismatch");
        bufs.push_back(clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(float),
                                      host.data(), &err));
        check(err, "clCreateBuffer");
    }
    for (const auto& l : m.launches) {
        cl_kernel k = clCreateKernel(prog, l.entry.c_str(), &err);
        check(err, "clCreateKernel");
        for (size_t a = 0; a < l.args.size(); ++a)
            check(clSetKernelArg(k, cl_uint(a), sizeof(cl_mem), &bufs[size_t(l.args[a])]), "clSetKernelArg");
        size_t global[3], local[3];
        for (int d = 0; d < 3; ++d) {
            local[d] = size_t(l.block[size_t(d)]);
            global[d] = size_t(l.grid[size_t(d)] * l.block[size_t(d)]);
        }
        check(clEnqueueNDRangeKernel(q, k, 3, nullptr, global, local, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
        check(clFinish(q), "clFinish");
        clReleaseKernel(k);
    }
    for (size_t i = 0; i < bufs.size(); ++i) {
        check(clEnqueueReadBuffer(q, bufs[i], CL_TRUE, 0, init[i].size() * sizeof(float), init[i].data(), 0, nullptr, nullptr),
              "clEnqueueReadBuffer");
        clReleaseMemObject(bufs[i]);
    }
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return init;
}

/// Runs `m` (language OpenCL, its arguments `dag.tensors()` in order) on random inputs (randomInputs
/// with `seed`) and compares its outputs with the reference interpreter's (compareOutputs). Empty
/// when equal; else the mismatch, or the error of building or running the module.
inline QString runAndCompare(const te::ComputeDAG& dag, const codegen::GpuModule& m, unsigned seed) {
    const auto inputs = randomInputs(dag, seed);
    std::vector<std::vector<float>> init;
    for (const auto& b : inputs) init.push_back(b.data);
    std::vector<std::vector<float>> got;
    try {
        got = runOpenCl(m, init);
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    std::vector<std::vector<float>> outs(got.begin() + long(inputs.size()), got.begin() + m.numArgs);
    return compareOutputs(outs, te::evaluate(dag, inputs));
}

}  // namespace tb::test
