// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/machine_peak.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "engine/measure/cpu_caches.h"
#include "engine/support/error.h"
#include "engine/support/thread_pool.h"

namespace tb::measure {

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int kChains = 12;            // independent FMA chains: covers 4-cycle latency x 2 pipes with room
constexpr int64_t kIters = 2'000'000;  // one call: ~13 ms per thread at 60 GFLOP/s (AVX-512)

float sumOf(const float* v, int n) {
    float r = 0;
    for (int i = 0; i < n; ++i) r += v[i];
    return r;
}

// Each returns a value depending on every chain, so the loop cannot be removed, and has a side effect
// (an empty asm with a memory clobber), so the compiler cannot take it for a pure function and drop
// or move a repeated call with the same argument out of a timed region.
#if defined(__x86_64__)
__attribute__((target("avx512f"), noinline)) float chains512(int64_t iters) {
    asm volatile("" ::: "memory");
    __m512 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (int64_t k = 0; k < iters; ++k) {
#pragma GCC unroll 12
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    }
    for (int i = 1; i < kChains; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc[0]);
    return sumOf(lanes, 16);
}

__attribute__((target("avx2,fma"), noinline)) float chains256(int64_t iters) {
    asm volatile("" ::: "memory");
    __m256 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(float(i) * 1e-3f);
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (int64_t k = 0; k < iters; ++k) {
#pragma GCC unroll 12
        for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    }
    for (int i = 1; i < kChains; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc[0]);
    return sumOf(lanes, 8);
}
#endif

__attribute__((noinline)) float chainsScalar(int64_t iters) {
    asm volatile("" ::: "memory");
    float acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = float(i) * 1e-3f;
    for (int64_t k = 0; k < iters; ++k)
        for (float& x : acc) x = __builtin_fmaf(x, 0.999999f, 1e-7f);
    return sumOf(acc, kChains);
}

// The widest FMA this CPU has: the loop and its FP32 lanes.
struct FmaLoop {
    float (*fn)(int64_t);
    int lanes;
};
FmaLoop widestFma() {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return {chains512, 16};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {chains256, 8};
#endif
    return {chainsScalar, 1};
}

void checkThreads(int threads) {
    const int pool = ThreadPool::global().numThreads();
    TB_USER_CHECK(threads >= 1 && threads <= pool)
        << "the thread count for a peak measurement must be 1.." << pool << " (the thread pool's size), got " << threads;
}

std::string cpuInfoField(const std::string& text, const std::string& name) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(name, 0) != 0) continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
    }
    return {};
}

}  // namespace

double measureFmaPeak(int threads, int rounds) {
    // Many short rounds: on a shared machine the best one is the likeliest to have had the cores.
    checkThreads(threads);
    TB_USER_CHECK(rounds >= 1) << "a peak measurement needs at least one round, got " << rounds;
    const FmaLoop loop = widestFma();
    // The scalar fallback is ~16x slower per iteration: keep a call near the same duration.
    const int64_t iters = loop.lanes == 1 ? kIters / 8 : kIters;
    static volatile float sink = 0;
    auto call = [&] {
        ThreadPool::global().parallelForRange(threads, [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t) sink = sink + loop.fn(iters);
        });
    };
    call();  // warm-up: wakes the workers and raises the clocks
    double best = 1e30;
    for (int r = 0; r < rounds; ++r) {
        const auto t0 = Clock::now();
        call();
        best = std::min(best, secondsSince(t0));
    }
    return double(threads) * double(iters) * kChains * loop.lanes * 2 / best;
}

int fullRateFmaLanes() {
    static const int lanes = [] {
        if (const char* env = std::getenv("TB_FMA_LANES"); env && *env) {
            const std::string v = env;
            TB_USER_CHECK(v == "4" || v == "8" || v == "16") << "TB_FMA_LANES must be 4, 8 or 16, got '" << v << "'";
            return std::stoi(v);
        }
#if defined(__x86_64__)
        if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 4;
        if (!__builtin_cpu_supports("avx512f")) return 8;
        // FLOP/s of one thread's chains, the best of a few short calls (the first raises the clocks).
        auto rate = [](float (*fn)(int64_t), int lanesPerOp) {
            constexpr int64_t iters = 100'000;
            static volatile float sink = 0;
            sink = sink + fn(iters);
            double best = 1e30;
            for (int r = 0; r < 3; ++r) {
                const auto t0 = Clock::now();
                sink = sink + fn(iters);
                best = std::min(best, secondsSince(t0));
            }
            return double(iters) * kChains * lanesPerOp * 2 / best;
        };
        const double wide = rate(chains512, 16), half = rate(chains256, 8);
        return wide >= 1.5 * half ? 16 : 8;
#else
        return 4;
#endif
    }();
    return lanes;
}

namespace {
// Version of the triad probe behind a cache entry's triad_gbps: 1 (no field) was the scalar loop.
constexpr int kTriadProbe = 2;

// a[i] = b[i] + s * c[i] over [lo, hi), in explicit 8-float vectors (GCC splits them to the target's
// width). The plain loop stays scalar at -O2 (GCC 12 vectorizes there only loops that need no
// epilogue and no alias check), and a scalar triad is bound by the core, not the memory: on the
// Zen 5 VM of 2026-12-01 it streamed 26-27 GB/s from 3 x 1 MiB and 23.5 GB/s from memory, so
// measureEffectiveLastLevelCacheBytes found no cache at all and `--cache-flush auto` timed every
// task warm. Vectorized, the same sizes stream 60-85 GB/s against 22-34 GB/s (a C triad at -O3).
void triadRange(float* __restrict a, const float* __restrict b, const float* __restrict c, float s, int64_t lo,
                int64_t hi) {
    using V = float __attribute__((vector_size(32)));
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        V vb, vc;
        std::memcpy(&vb, b + i, sizeof(V));
        std::memcpy(&vc, c + i, sizeof(V));
        const V va = vb + s * vc;
        std::memcpy(a + i, &va, sizeof(V));
    }
    for (; i < hi; ++i) a[i] = b[i] + s * c[i];
}
}  // namespace

double measureTriadBandwidth(int threads, int64_t arrayBytes, int rounds) {
    checkThreads(threads);
    TB_USER_CHECK(rounds >= 1) << "a bandwidth measurement needs at least one round, got " << rounds;
    if (arrayBytes == 0) arrayBytes = std::max<int64_t>(4 * hostLastLevelCacheBytes(), int64_t(64) << 20);
    TB_USER_CHECK(arrayBytes >= 4096) << "the triad's arrays must be at least 4096 bytes, got " << arrayBytes;
    const int64_t n = arrayBytes / int64_t(sizeof(float));
    struct Free {
        void operator()(float* p) const { std::free(p); }
    };
    auto alloc = [&] {
        const size_t bytes = (size_t(n) * sizeof(float) + 63) / 64 * 64;
        float* p = static_cast<float*>(std::aligned_alloc(64, bytes));
        TB_CHECK(p) << "cannot allocate " << bytes << " bytes for the triad";
        return std::unique_ptr<float[], Free>(p);
    };
    auto a = alloc(), b = alloc(), c = alloc();
    float *pa = a.get(), *pb = b.get(), *pc = c.get();
    ThreadPool& pool = ThreadPool::global();
    // The same static partition as the timed passes: each thread first-touches the pages it streams.
    auto parts = [&](const std::function<void(int64_t, int64_t)>& body) {
        pool.parallelForRange(threads, [&](int64_t tb, int64_t te) {
            for (int64_t t = tb; t < te; ++t) body(n * t / threads, n * (t + 1) / threads);
        });
    };
    parts([&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
            pa[i] = 0.f;
            pb[i] = 1.f;
            pc[i] = 2.f;
        }
    });
    const float s = 3.f;
    auto triad = [&] { parts([&](int64_t lo, int64_t hi) { triadRange(pa, pb, pc, s, lo, hi); }); };
    triad();
    double best = 1e30;
    for (int r = 0; r < rounds; ++r) {
        const auto t0 = Clock::now();
        triad();
        best = std::min(best, secondsSince(t0));
    }
    TB_CHECK(pa[n / 2] == 7.f) << "the triad computed " << pa[n / 2] << " instead of 7";
    return 3.0 * double(n) * sizeof(float) / best;
}

int64_t measureEffectiveLastLevelCacheBytes() {
    constexpr int64_t kMiB = int64_t(1) << 20;
    const double memory = measureTriadBandwidth(1, 256 * kMiB, 2);
    int64_t cached = 0;
    for (int64_t s = kMiB; s <= 64 * kMiB; s *= 2) {
        if (measureTriadBandwidth(1, s, 3) < 1.5 * memory) break;
        cached = 3 * s;
    }
    const int64_t sysfs = hostLastLevelCacheBytes();
    return sysfs > 0 ? std::min(cached, sysfs) : cached;
}

int64_t effectiveLastLevelCacheBytes() {
    static const int64_t bytes = [] {
        if (const char* env = std::getenv("TB_LLC_BYTES"); env && *env) {
            char* end = nullptr;
            const long long v = std::strtoll(env, &end, 10);
            TB_USER_CHECK(*end == 0 && v >= 0) << "TB_LLC_BYTES must be a byte count, got '" << env << "'";
            return int64_t(v);
        }
        return measureEffectiveLastLevelCacheBytes();
    }();
    return bytes;
}

std::string machineKey() {
    std::ifstream in("/proc/cpuinfo");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    std::string model = cpuInfoField(text, "model name");
    if (model.empty()) model = "unknown CPU";
    return model + " | family " + cpuInfoField(text, "cpu family") + " model " + cpuInfoField(text, "model\t") +
           " | " + std::to_string(std::thread::hardware_concurrency()) + " hw threads | LLC " +
           std::to_string(hostLastLevelCacheBytes()) + " B";
}

std::string defaultPeakCachePath() {
    if (const char* d = std::getenv("TB_CACHE_DIR"); d && *d) return std::string(d) + "/machine_peak.json";
    if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/tunebench/machine_peak.json";
    if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/tunebench/machine_peak.json";
    return {};
}

MachinePeak machinePeak(int threads, const std::string& cachePath) {
    checkThreads(threads);
    MachinePeak p;
    p.threads = threads;
    p.machine = machineKey();
    nlohmann::json doc = nlohmann::json::object();
    nlohmann::json* entry = nullptr;  // this machine's entry for `threads`, if any
    if (!cachePath.empty()) {
        std::ifstream in(cachePath);
        if (in) doc = nlohmann::json::parse(in, nullptr, false);
        if (!doc.is_object() || !doc.contains("entries") || !doc["entries"].is_array()) doc = nlohmann::json::object();
    }
    if (!doc.contains("entries")) doc["entries"] = nlohmann::json::array();
    for (auto& e : doc["entries"]) {
        if (!e.is_object() || e.value("machine", "") != p.machine || e.value("threads", 0) != threads) continue;
        if (e.value("triad_probe", 1) != kTriadProbe) {
            entry = &e;  // measured by an older probe: measured again and replaced
            break;
        }
        if (e.value("peak_gflops", 0.0) <= 0 || e.value("triad_gbps", 0.0) <= 0) continue;
        entry = &e;
        p.flopsPerSecond = e.value("peak_gflops", 0.0) * 1e9;
        p.bytesPerSecond = e.value("triad_gbps", 0.0) * 1e9;
        p.quiet = e.value("quiet", false);
        p.runs = e.value("runs", 1);
        p.loadAverage = e.value("load_average", -1.0);
        if (p.quiet) {
            p.fromCache = true;
            return p;
        }
        break;
    }
    double load[1] = {-1};
    if (getloadavg(load, 1) != 1) load[0] = -1;
    // The load is sampled before the run: the run itself does not count.
    const bool quietNow = load[0] >= 0 && load[0] <= 0.5 * double(std::thread::hardware_concurrency());
    p.flopsPerSecond = std::max(p.flopsPerSecond, measureFmaPeak(threads));
    p.bytesPerSecond = std::max(p.bytesPerSecond, measureTriadBandwidth(threads));
    p.quiet = p.quiet || quietNow;
    p.runs += 1;
    p.loadAverage = load[0];
    if (cachePath.empty()) return p;
    const nlohmann::json fresh = {{"machine", p.machine},
                                  {"threads", threads},
                                  {"peak_gflops", p.flopsPerSecond / 1e9},
                                  {"triad_gbps", p.bytesPerSecond / 1e9},
                                  {"triad_probe", kTriadProbe},
                                  {"quiet", p.quiet},
                                  {"runs", p.runs},
                                  {"load_average", p.loadAverage},
                                  {"measured_unix_s", std::chrono::duration<double>(
                                                          std::chrono::system_clock::now().time_since_epoch())
                                                          .count()}};
    if (entry)
        *entry = fresh;
    else
        doc["entries"].push_back(fresh);
    // Written to a temporary file and renamed, so a concurrent reader never sees half a file.
    std::error_code ec;
    const std::filesystem::path path(cachePath);
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    const std::string tmp = cachePath + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out) return p;
        out << doc.dump(2) << "\n";
        if (!out) return p;
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) std::filesystem::remove(tmp, ec);
    return p;
}

}  // namespace tb::measure
