// SPDX-License-Identifier: Apache-2.0
#include "tools/gpu/sample_modules.h"

#include <algorithm>
#include <string>

namespace tb::gpu::samples {

using codegen::GpuLanguage;
using codegen::GpuLaunch;
using codegen::GpuModule;

namespace {

// The dialect differences the samples need, as macros in front of the kernels.
std::string prelude(GpuLanguage l) {
    if (l == GpuLanguage::OpenCL)
        return "#define KERNEL __kernel void\n#define GLOBAL __global\n#define SHARED __local\n"
               "#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)\n"
               "#define GID(d) get_group_id(d)\n#define LID(d) get_local_id(d)\n";
    return "#define KERNEL extern \"C\" __global__ void\n#define GLOBAL\n#define SHARED __shared__\n"
           "#define BARRIER() __syncthreads()\n"
           "#define GID(d) ((d) == 0 ? blockIdx.x : (d) == 1 ? blockIdx.y : blockIdx.z)\n"
           "#define LID(d) ((d) == 0 ? threadIdx.x : (d) == 1 ? threadIdx.y : threadIdx.z)\n";
}

std::vector<float> pattern(size_t n, int salt) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = float(int((i * 7 + size_t(salt) * 13) % 17) - 8) / 8.0f;
    return v;
}

GpuModule vectorAddModule(GpuLanguage l, int n, const std::string& store) {
    GpuModule m;
    m.language = l;
    m.source = prelude(l) + "KERNEL vadd(GLOBAL const float* a, GLOBAL const float* b, GLOBAL float* c) {\n"
                            "  int i = (int)(GID(0) * 64 + LID(0));\n"
                            "  if (i < " + std::to_string(n) + ") " + store + "\n}\n";
    GpuLaunch launch;
    launch.entry = "vadd";
    launch.grid = {(n + 63) / 64, 1, 1};
    launch.block = {64, 1, 1};
    launch.args = {0, 1, 2};
    m.launches = {launch};
    m.bufferElements = {n, n, n};
    m.numArgs = 3;
    return m;
}

}  // namespace

SampleCase vectorAdd(GpuLanguage l, int n) {
    SampleCase s;
    s.module = vectorAddModule(l, n, "c[i] = a[i] + b[i];");
    const std::vector<float> a = pattern(size_t(n), 1), b = pattern(size_t(n), 2);
    std::vector<float> c(static_cast<size_t>(n));
    for (size_t i = 0; i < c.size(); ++i) c[i] = a[i] + b[i];
    s.check.inputs = {a, b, {}};
    s.check.expected = {{}, {}, c};
    return s;
}

SampleCase tiledMatmulBiasRelu(GpuLanguage l, int m, int n, int k) {
    const std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
    SampleCase s;
    GpuModule& g = s.module;
    g.language = l;
    g.source = prelude(l) +
               "KERNEL matmul_tiled(GLOBAL const float* A, GLOBAL const float* B, GLOBAL float* T) {\n"
               "  SHARED float As[16][16];\n"
               "  SHARED float Bs[16][16];\n"
               "  int tx = (int)LID(0), ty = (int)LID(1);\n"
               "  int col = (int)GID(0) * 16 + tx, row = (int)GID(1) * 16 + ty;\n"
               "  float acc = 0.0f;\n"
               "  for (int k0 = 0; k0 < " + K + "; k0 += 16) {\n"
               "    As[ty][tx] = (row < " + M + " && k0 + tx < " + K + ") ? A[row * " + K + " + k0 + tx] : 0.0f;\n"
               "    Bs[ty][tx] = (k0 + ty < " + K + " && col < " + N + ") ? B[(k0 + ty) * " + N + " + col] : 0.0f;\n"
               "    BARRIER();\n"
               "    for (int kk = 0; kk < 16; ++kk) acc += As[ty][kk] * Bs[kk][tx];\n"
               "    BARRIER();\n"
               "  }\n"
               "  if (row < " + M + " && col < " + N + ") T[row * " + N + " + col] = acc;\n"
               "}\n"
               "KERNEL bias_relu(GLOBAL const float* T, GLOBAL const float* bias, GLOBAL float* out) {\n"
               "  int i = (int)(GID(0) * 128 + LID(0));\n"
               "  if (i < " + std::to_string(m * n) + ") {\n"
               "    float v = T[i] + bias[i % " + N + "];\n"
               "    out[i] = v > 0.0f ? v : 0.0f;\n"
               "  }\n"
               "}\n";
    GpuLaunch mm;
    mm.entry = "matmul_tiled";
    mm.grid = {(n + 15) / 16, (m + 15) / 16, 1};
    mm.block = {16, 16, 1};
    mm.args = {0, 1, 4};
    mm.sharedBytes = 2 * 16 * 16 * 4;
    GpuLaunch br;
    br.entry = "bias_relu";
    br.grid = {(m * n + 127) / 128, 1, 1};
    br.block = {128, 1, 1};
    br.args = {4, 2, 3};
    g.launches = {mm, br};
    g.bufferElements = {int64_t(m) * k, int64_t(k) * n, n, int64_t(m) * n, int64_t(m) * n};
    g.numArgs = 4;

    const std::vector<float> A = pattern(size_t(m) * k, 3), B = pattern(size_t(k) * n, 4), bias = pattern(size_t(n), 5);
    std::vector<float> out(static_cast<size_t>(m) * n);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double acc = bias[size_t(j)];
            for (int q = 0; q < k; ++q) acc += double(A[size_t(i) * k + q]) * B[size_t(q) * n + j];
            out[size_t(i) * n + j] = float(std::max(acc, 0.0));
        }
    s.check.inputs = {A, B, bias, {}};
    s.check.expected = {{}, {}, {}, out};
    return s;
}

GpuModule brokenSource(GpuLanguage l) {
    return vectorAddModule(l, 256, "c[i] = a[i] + undeclared_value;");
}

GpuModule outOfBoundsWrite(GpuLanguage l) {
    return vectorAddModule(l, 256, "c[i + 5] = a[i] + b[i];");
}

GpuModule endlessLoop(GpuLanguage l) {
    // Through a volatile pointer: a loop whose only effects are plain stores may be assumed to end
    // (C++ forward progress, which NVRTC and NVIDIA's OpenCL compiler apply: both deleted the first
    // version of this loop on the H200, and the "endless" kernel returned at once).
    const char* body = l == GpuLanguage::CUDA
                           ? "{ volatile float* v = c; for (;;) { v[i] = v[i] + 1.0f; if (v[i] == -1.0f) break; } }"
                           : "{ volatile __global float* v = c; for (;;) { v[i] = v[i] + 1.0f; if (v[i] == -1.0f) break; } }";
    return vectorAddModule(l, 256, body);
}

}  // namespace tb::gpu::samples
