// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file sketch_policy.h
/// \brief The sketch policy: Ansor's search for one task (TVM search_policy/sketch_policy.cc).
///
/// Each round: (1) sketches, generated once (sketch_generation.h); (2) an initial population of
/// random annotations of the sketches (tile sizes, compute locations, parallel, unroll, vectorize;
/// REFERENCE-TVM §1.4), filtered by the cost model and by already-measured states; (3) evolutionary
/// search: 4 generations of 2048 states made by the four CPU mutations (tile size 0.90, auto-unroll
/// 0.04, compute location 0.05, parallel 0.01), selection ∝ predicted score, keeping the best
/// 2·numMeasures unseen states; (4) eps-greedy pick of numMeasures states (5% random); (5) measure;
/// (6) train the cost model. Parameters default to TVM's (§1.6). Seeded: the same seed and the same
/// measurements give the same search.
///
/// GPU tasks (search_utils.h isGpuTask: cuda, opencl, ...) follow TVM's GPU lists: the GPU sketch
/// rules (sketch_generation.h); the init rules FillTileSize, ThreadBind (the tiled root's `.0`
/// tiles fused to blockIdx.x, `.1` to vthread, `.2` to threadIdx.x; other roots split by the warp
/// size; shared-memory copies fetched cooperatively: fused, split off a vectorized inner part,
/// follow-fused-split by the consumer's thread tile, bound to threadIdx.x), Unroll with the GPU
/// table {0, 16, 64, 512, 1024}, and on Mali also Vectorization; the mutations TileSize 0.90 and
/// AutoUnroll 0.10. Instead of the CPU's nested-parallel pruning, states that break the
/// HardwareParams limits (gpu_limits.h verifyGpuState: threads per block, vthread, shared memory,
/// vector bytes) are dropped where TVM's VerifyGPUCode would fail their feature extraction.

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/search/cost_model.h"
#include "engine/search/search_utils.h"
#include "engine/search/sketch_generation.h"

namespace tb::search {

/// What measuring a state gave (mirror of measure::MeasureResult that the search needs).
struct MeasureOutcome {
    std::vector<double> costs;   ///< seconds per run; {1e10} on error
    int errorNo = 0;             ///< TVM MeasureErrorNO
    std::string errorMsg;
    double allCost = 0;          ///< build + run wall time, seconds
    double meanCost() const;
};

/// What the search needs of a measurer: build and run candidate states of a task, one outcome per
/// state in order. tuning::ProgramMeasurer (TVM's ProgramMeasurer: builder + runner + records)
/// implements it; tests use fakes.
/// Where one measure() call spent its time (seconds); zero where a measurer does not say.
struct MeasurePhases {
    double lowerSeconds = 0;  ///< states to loop IR or GPU modules (source included for GPUs)
    double buildSeconds = 0;  ///< the builder (LLVM for CPUs)
    double runSeconds = 0;    ///< the runner (GPUs: device compile, e.g. NVRTC, plus the timed runs)
};

class Measurer {
public:
    virtual ~Measurer() = default;
    virtual std::vector<MeasureOutcome> measure(const SearchTask& task, const std::vector<State>& states) = 0;
    /// The phases of the last measure() call.
    virtual MeasurePhases lastPhases() const { return {}; }
};

struct SketchPolicyParams {
    SketchParams sketch;
    double epsGreedy = 0.05;
    int retrySearchOneRoundOnEmpty = 1;
    int sampleInitMinPopulation = 50;
    double sampleInitUseMeasuredRatio = 0.2;
    int evolutionaryPopulation = 2048;
    int evolutionaryNumIters = 4;
    double mutationProb = 0.85;
    std::vector<int> autoUnrollConfigs{0, 16, 64, 512};
    std::vector<int> gpuAutoUnrollConfigs{0, 16, 64, 512, 1024};
    int numThreads = 0;  ///< 1 = sample/mutate on the calling thread; else on the engine thread pool
};

/// One candidate handed to the measurer, with the model's score when it was picked.
struct PickedState {
    State state;
    float predicted = 0;
};

/// Where the time of the last round went (seconds), as TVM's verbose search output shows.
struct RoundStats {
    double sampleSeconds = 0;   ///< initial population (random annotation + bound inference + scoring)
    double evolveSeconds = 0;   ///< evolutionary search
    double measureSeconds = 0;  ///< lowering, building and running (the measurer)
    MeasurePhases measurePhases;  ///< measureSeconds split as the measurer reports it
    double trainSeconds = 0;    ///< cost-model update
    int sampled = 0;            ///< states in the initial population
    int picked = 0;             ///< states measured
};

class SketchPolicy {
public:
    /// Throws UserError for a GPU task whose hardware params lack warp_size or max_threads_per_block.
    SketchPolicy(SearchTask task, std::shared_ptr<cost_model::CostModel> model, SketchPolicyParams params, uint64_t seed);

    const SearchTask& task() const { return m_task; }
    const std::vector<State>& sketches();

    /// One search round (TVM ContinueSearchOneRound): picks up to numMeasures new states, measures
    /// them with `measurer`, records them as measured and trains the model. Returns the measured
    /// states with their outcomes (empty when the space is exhausted).
    std::vector<std::pair<PickedState, MeasureOutcome>> continueSearchOneRound(int numMeasures, Measurer& measurer);

    /// The search half of a round (no measurement): the states a round would measure.
    std::vector<PickedState> searchOneRound(int numMeasures);

    /// Marks states as measured (resume from a log: TVM PreloadMeasuredStates). `costs` in seconds.
    void preloadMeasured(const std::vector<State>& states, const std::vector<double>& meanCosts);
    /// States to measure first, ahead of the search's own picks in the next round (they count
    /// against that round's numMeasures; continueSearchOneRound measures them in a measurer batch
    /// of their own before the other picks, so their records are logged first). Not in TVM: NetworkTuner seeds every task with its
    /// default schedule (default_schedule.h), so a task's best record is never worse than the
    /// schedule the compiler would use without one, and the evolutionary search starts from it
    /// (measured states join the initial population). Steps applied, bound inference not needed;
    /// states that fail bound inference or were already measured are dropped.
    void addSeedStates(std::vector<State> states);

    // Building blocks, public for tests and benchmarks.
    std::vector<State> sampleInitPopulation();
    std::vector<State> evolutionarySearch(const std::vector<State>& init, int outSize, std::vector<float>* scores = nullptr);
    /// Random annotation of a sketch (CPU: FillTileSize, ChangeComputeLocation, Parallel, Unroll,
    /// Vectorization; GPU: FillTileSize, ThreadBind, Unroll [, Vectorization on Mali]). Returns an
    /// undefined State when a rule finds the state invalid.
    State randomAnnotate(const State& sketch, std::mt19937_64& rng);
    /// One mutation by rule weight; an undefined State when it fails.
    State mutate(const State& s, std::mt19937_64& rng);
    size_t numMeasured() const { return m_measuredVector.size(); }
    const RoundStats& lastRoundStats() const { return m_stats; }

private:
    State fillTileSize(State s, std::mt19937_64& rng);
    bool changeComputeLocation(State* s, std::mt19937_64& rng);
    void annotateParallel(State* s, int stageId, int iterOffset);
    void initParallel(State* s);
    void initUnroll(State* s, std::mt19937_64& rng);
    void initVectorization(State* s, std::mt19937_64& rng);
    /// TVM InitThreadBind; false when the state is invalid (vthread > max_vthread_extent, fewer
    /// threads than a warp on a large op).
    bool initThreadBind(State* s);
    const std::vector<int>& unrollConfigs() const;
    State mutateTileSize(const State& s, std::mt19937_64& rng);
    State mutateAutoUnroll(const State& s, std::mt19937_64& rng);
    State mutateComputeLocation(const State& s, std::mt19937_64& rng);
    State mutateParallel(const State& s, std::mt19937_64& rng);
    std::vector<PickedState> searchOneRoundImpl(int numMeasures);
    /// Records `s` as picked for measurement (throughput filled in after measuring); false when a
    /// state with the same loop nest was measured or picked before.
    bool markPicked(const State& s);
    /// Bound inference + pruning (nested parallel); undefined entries for invalid states.
    std::vector<State> inferAndPrune(const std::vector<State>& states);
    std::vector<float> predict(const std::vector<State>& states);
    /// numThreads == 1: no thread pool.
    bool serial() const;

    SearchTask m_task;
    bool m_gpu = false;   ///< isGpuTask(m_task)
    bool m_mali = false;  ///< isMaliTask(m_task)
    std::shared_ptr<cost_model::CostModel> m_model;
    SketchPolicyParams m_params;
    std::mt19937_64 m_rng;
    std::vector<State> m_sketches;
    bool m_sketchesDone = false;
    std::unordered_set<std::string> m_measuredSet;
    std::vector<State> m_measuredVector;
    std::vector<State> m_seeds;  ///< addSeedStates, not yet measured
    int m_pickedSeeds = 0;       ///< seeds at the front of the last searchOneRound's result
    std::vector<double> m_measuredThroughputs;
    SplitFactorizationMemo m_memo;
    RoundStats m_stats;
};

}  // namespace tb::search
