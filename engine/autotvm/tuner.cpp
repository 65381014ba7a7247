// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/tuner.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>

#include "engine/support/error.h"

namespace tb::autotvm {

// ---- Tuner ----------------------------------------------------------------------------------

Tuner::Tuner(const Task& task, std::uint64_t seed) : m_task(task), m_space(task.space), m_rng(seed) {}

void Tuner::update(const std::vector<ConfigEntity>&, const std::vector<measure::MeasureResult>&) {}

double Tuner::flops(const measure::MeasureResult& r) const {
    if (!r.ok() || r.costs.empty()) return 0;
    const double mean = std::accumulate(r.costs.begin(), r.costs.end(), 0.0) / double(r.costs.size());
    return mean > 0 ? m_task.flop / mean : 0;
}

std::int64_t Tuner::randIndex(const std::set<std::int64_t>& exclude) {
    std::uniform_int_distribution<std::int64_t> dist(0, m_space.rangeLength() - 1);
    for (;;) {
        const std::int64_t i = dist(m_rng);
        if (m_space.isIndexValid(i) && !exclude.count(i)) return i;
    }
}

void Tuner::tune(const TuneOptions& options, const MeasureOption& measureOption,
                 const std::vector<TuneCallback>& callbacks) {
    const int nParallel = std::max(1, options.nParallel);
    const int earlyStopping = options.earlyStopping > 0 ? options.earlyStopping : std::numeric_limits<int>::max() / 2;
    int i = 0;
    while (i < options.nTrial) {
        if (!hasNext()) break;
        std::vector<ConfigEntity> configs = nextBatch(std::min(nParallel, options.nTrial - i));
        if (configs.empty()) break;
        std::vector<measure::MeasureResult> results = measureConfigs(m_task, configs, measureOption);
        for (size_t k = 0; k < configs.size(); ++k) {
            const double f = flops(results[k]);
            if (f > m_bestFlops) {
                m_bestFlops = f;
                m_bestConfig = configs[k];
                m_bestIter = i + int(k);
            }
        }
        i += int(results.size());
        m_trials = i;
        update(configs, results);
        for (const auto& cb : callbacks) cb(*this, configs, results);
        if (i >= m_bestIter + earlyStopping) break;
    }
}

// ---- RandomTuner / GridSearchTuner -------------------------------------------------------------

std::vector<ConfigEntity> RandomTuner::nextBatch(int batchSize) {
    std::vector<ConfigEntity> out;
    while (int(out.size()) < batchSize && hasNext()) {
        const std::int64_t index = randIndex(m_visited);
        m_visited.insert(index);
        out.push_back(m_space.get(index));
    }
    return out;
}

GridSearchTuner::GridSearchTuner(const Task& task) : Tuner(task) {
    while (m_index < m_space.rangeLength() && !m_space.isIndexValid(m_index)) ++m_index;
}

std::vector<ConfigEntity> GridSearchTuner::nextBatch(int batchSize) {
    std::vector<ConfigEntity> out;
    while (int(out.size()) < batchSize && hasNext() && m_index < m_space.rangeLength()) {
        out.push_back(m_space.get(m_index));
        ++m_count;
        do ++m_index;
        while (m_index < m_space.rangeLength() && !m_space.isIndexValid(m_index));
    }
    return out;
}

// ---- GATuner ----------------------------------------------------------------------------------

GATuner::GATuner(const Task& task, int popSize, int eliteNum, double mutationProb, std::uint64_t seed)
    : Tuner(task, seed), m_popSize(popSize), m_eliteNum(eliteNum), m_mutationProb(mutationProb) {
    TB_USER_CHECK(eliteNum <= popSize) << "GATuner: the number of elites must not exceed the population size";
    m_popSize = int(std::min<std::int64_t>(m_popSize, m_space.size()));
    m_eliteNum = std::min(m_popSize, m_eliteNum);
    // TVM: visited = set(space.sample_ints(pop_size)); genes in the set's order (ours: ascending).
    while (int(m_visited.size()) < m_popSize) m_visited.insert(randIndex(m_visited));
    for (std::int64_t idx : m_visited) m_genes.push_back(m_space.pointToKnob(idx));
}

std::vector<ConfigEntity> GATuner::nextBatch(int batchSize) {
    std::vector<ConfigEntity> out;
    // TVM wraps around the population (genes[trial_pt % pop_size]) when a batch outlasts the
    // generation, proposing measured genes again; we end the batch with the generation instead.
    while (int(out.size()) < batchSize && hasNext() && m_trialPt < m_genes.size()) {
        const Gene& gene = m_genes[m_trialPt];
        ++m_trialPt;
        out.push_back(m_space.get(m_space.knobToPoint(gene)));
    }
    return out;
}

bool GATuner::hasNext() const {
    return std::int64_t(m_visited.size()) - (std::int64_t(m_genes.size()) - std::int64_t(m_trialPt)) < m_space.size();
}

void GATuner::update(const std::vector<ConfigEntity>&, const std::vector<measure::MeasureResult>& results) {
    for (const auto& r : results) m_scores.push_back(flops(r));
    if (m_scores.size() < m_genes.size() || std::int64_t(m_visited.size()) >= m_space.size()) return;
    std::vector<Gene> next;
    if (m_space.size() - std::int64_t(m_visited.size()) <= m_popSize) {
        for (std::int64_t idx = 0; idx < m_space.rangeLength(); ++idx)
            if (m_space.isIndexValid(idx) && !m_visited.count(idx)) {
                next.push_back(m_space.pointToKnob(idx));
                m_visited.insert(idx);
            }
    } else {
        std::vector<Gene> genes = m_genes;
        genes.insert(genes.end(), m_elites.begin(), m_elites.end());
        std::vector<double> scores(m_scores.begin(), m_scores.begin() + std::ptrdiff_t(m_genes.size()));
        scores.insert(scores.end(), m_eliteScores.begin(), m_eliteScores.end());
        // elites: the eliteNum best of genes + previous elites
        std::vector<size_t> order(genes.size());
        std::iota(order.begin(), order.end(), size_t(0));
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
        m_elites.clear();
        m_eliteScores.clear();
        for (int e = 0; e < m_eliteNum && size_t(e) < order.size(); ++e) {
            m_elites.push_back(genes[order[size_t(e)]]);
            m_eliteScores.push_back(scores[order[size_t(e)]]);
        }
        // fitness-proportional selection (scores + 1e-8, normalized)
        double maxScore = 0;
        for (double& s : scores) {
            s += 1e-8;
            maxScore = std::max(maxScore, s);
        }
        for (double& s : scores) s /= maxScore;
        std::discrete_distribution<size_t> pick(scores.begin(), scores.end());
        const std::vector<std::int64_t> dims = m_space.dims();
        std::uniform_int_distribution<size_t> pointDist(0, dims.size() - 1);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        // Bounded so that a space whose unvisited points are all filtered out cannot hang.
        for (int attempts = 0; int(next.size()) < m_popSize && attempts < 1000 * m_popSize; ++attempts) {
            const size_t p1 = pick(m_rng);
            size_t p2 = pick(m_rng);
            if (genes.size() > 1)
                for (int t = 0; p2 == p1 && t < 100; ++t) p2 = pick(m_rng);  // replace=False
            const size_t point = pointDist(m_rng);
            Gene child(genes[p1].begin(), genes[p1].begin() + std::ptrdiff_t(point));
            child.insert(child.end(), genes[p2].begin() + std::ptrdiff_t(point), genes[p2].end());
            for (size_t j = 0; j < dims.size(); ++j)
                if (unit(m_rng) < m_mutationProb) child[j] = std::uniform_int_distribution<std::int64_t>(0, dims[j] - 1)(m_rng);
            const std::int64_t idx = m_space.knobToPoint(child);
            if (!m_space.isIndexValid(idx)) continue;
            // TVM may repeat a visited gene here; we keep the proposals unvisited (the brief of
            // next_batch), so a child already measured is redrawn.
            if (m_visited.count(idx)) continue;
            next.push_back(child);
            m_visited.insert(idx);
        }
        if (next.empty())  // the population converged: continue with random unvisited genes
            while (int(next.size()) < m_popSize && std::int64_t(m_visited.size()) < m_space.size()) {
                const std::int64_t idx = randIndex(m_visited);
                m_visited.insert(idx);
                next.push_back(m_space.pointToKnob(idx));
            }
    }
    m_genes = std::move(next);
    m_trialPt = 0;
    m_scores.clear();
}

// ---- XGBoost cost model -------------------------------------------------------------------------

namespace {

void check(int rc, const char* what) {
    TB_CHECK(rc == 0) << "XGBoost " << what << " failed: " << XGBGetLastError();
}

struct DMatrix {
    DMatrixHandle h = nullptr;
    ~DMatrix() {
        if (h) XGDMatrixFree(h);
    }
};

// TVM space.py _ann_to_number (the one-hot positions of annotations).
int annNumber(const std::string& ann) {
    static const char* kAnns[] = {"none", "vec", "unroll", "blockIdx.x", "blockIdx.y", "blockIdx.z",
                                  "threadIdx.x", "threadIdx.y", "threadIdx.z", "vthread", "fuse"};
    for (int i = 0; i < int(std::size(kAnns)); ++i)
        if (ann == kAnns[i]) return i;
    return 0;
}
constexpr int kNumAnns = 11;

// metric.py: ranks (0 = largest) of values.
std::vector<size_t> getRank(const std::vector<float>& values) {
    std::vector<size_t> order(values.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] > values[b]; });
    std::vector<size_t> ranks(values.size());
    for (size_t i = 0; i < order.size(); ++i) ranks[order[i]] = i;
    return ranks;
}

// xgb_average_recalln_curve_score(N): mean over i < N of |{j < i : rank_j <= i}| / (i + 1), the
// ranks being the true ranks of the points sorted by prediction.
double averageRecall(const float* preds, const std::vector<float>& labels, int n) {
    std::vector<size_t> trials(labels.size());
    std::iota(trials.begin(), trials.end(), size_t(0));
    std::stable_sort(trials.begin(), trials.end(), [&](size_t a, size_t b) { return preds[a] > preds[b]; });
    std::vector<float> sortedLabels;
    for (size_t t : trials) sortedLabels.push_back(labels[t]);
    const std::vector<size_t> ranks = getRank(sortedLabels);
    double sum = 0;
    for (size_t i = 0; i < ranks.size() && int(i) < n; ++i) {
        size_t hit = 0;
        for (size_t j = 0; j < i; ++j) hit += ranks[j] <= i ? 1 : 0;
        sum += double(hit) / double(i + 1);
    }
    return sum / double(n);
}

}  // namespace

XGBCostModel::XGBCostModel(const ConfigSpace& space, std::string featureType, std::string lossType, std::uint64_t seed)
    : m_space(space), m_lossType(std::move(lossType)), m_rng(seed) {
    TB_USER_CHECK(featureType == "knob")
        << "XGBTuner feature_type '" << featureType << "' is not implemented yet (only 'knob')";
    TB_USER_CHECK(m_lossType == "reg" || m_lossType == "rank")
        << "XGBTuner loss_type must be 'reg' or 'rank', not '" << m_lossType << "'";
    m_numFeatures = int(features(0).size());
}

XGBCostModel::~XGBCostModel() {
    if (m_booster) XGBoosterFree(m_booster);
}

std::vector<float> XGBCostModel::features(std::int64_t index) const {
    const ConfigEntity c = m_space.get(index);
    std::vector<float> f;
    for (size_t k = 0; k < c.knobs.size(); ++k) {
        const Entity& e = c.knobs[k].second;
        if (const auto* s = std::get_if<SplitEntity>(&e)) {
            for (auto v : s->size) f.push_back(float(v));
        } else if (const auto* r = std::get_if<ReorderEntity>(&e)) {
            for (int v : r->perm) f.push_back(float(v));
        } else if (const auto* a = std::get_if<AnnotateEntity>(&e)) {
            for (const auto& ann : a->anns) {
                std::vector<float> oneHot(kNumAnns, 0.f);
                oneHot[size_t(annNumber(ann))] = 1.f;
                f.insert(f.end(), oneHot.begin(), oneHot.end());
            }
            for (int v : a->anchors) f.push_back(float(v));
        } else {
            const auto& v = std::get<OtherOptionEntity>(e).val;
            // TVM appends the value itself (bools and numbers); a string knob gets its position.
            if (v.is_number() || v.is_boolean()) f.push_back(v.is_boolean() ? float(v.get<bool>()) : v.get<float>());
            else f.push_back(float(m_space.pointToKnob(index)[k]));
        }
    }
    return f;
}

void XGBCostModel::fit(const std::vector<std::int64_t>& xs, const std::vector<double>& ys, int planSize) {
    TB_CHECK(xs.size() == ys.size() && !xs.empty()) << "XGBCostModel::fit: " << xs.size() << " xs, " << ys.size() << " ys";
    const double yMax = std::max(*std::max_element(ys.begin(), ys.end()), 1e-8);
    std::vector<size_t> perm(xs.size());
    std::iota(perm.begin(), perm.end(), size_t(0));
    std::shuffle(perm.begin(), perm.end(), m_rng);
    std::vector<float> data, labels;
    for (size_t p : perm) {
        const auto f = features(xs[p]);
        data.insert(data.end(), f.begin(), f.end());
        labels.push_back(float(ys[p] / yMax));
    }
    const bst_ulong nrow = bst_ulong(perm.size());
    DMatrix dm;
    check(XGDMatrixCreateFromMat(data.data(), nrow, bst_ulong(m_numFeatures), std::numeric_limits<float>::quiet_NaN(),
                                 &dm.h),
          "DMatrix creation");
    check(XGDMatrixSetFloatInfo(dm.h, "label", labels.data(), nrow), "set label");
    BoosterHandle bst = nullptr;
    check(XGBoosterCreate(&dm.h, 1, &bst), "booster creation");
    auto set = [&](const char* k, const std::string& v) { check(XGBoosterSetParam(bst, k, v.c_str()), "set param"); };
    // xgboost_cost_model.py's parameters ("reg:linear" is today's "reg:squarederror").
    set("max_depth", "3");
    set("gamma", "0.0001");
    set("min_child_weight", "1");
    set("subsample", "1.0");
    set("eta", "0.3");
    set("lambda", "1.0");
    set("alpha", "0");
    set("objective", m_lossType == "reg" ? "reg:squarederror" : "rank:pairwise");
    set("verbosity", "0");
    set("nthread", "1");
    set("seed", std::to_string(m_rng() % 1000000));
    // num_boost_round=8000 with early stopping after 20 rounds without a better a-recall@plan_size
    // on the training set (TVM's CustomCallback, maximize).
    double best = -1;
    int bestIter = 0;
    for (int it = 0; it < 8000; ++it) {
        check(XGBoosterUpdateOneIter(bst, it, dm.h), "boost");
        bst_ulong len = 0;
        const float* pred = nullptr;
        check(XGBoosterPredict(bst, dm.h, 0, 0, 0, &len, &pred), "predict");
        const double score = averageRecall(pred, labels, planSize);
        if (score > best) {
            best = score;
            bestIter = it;
        } else if (it - bestIter >= 20) {
            break;
        }
    }
    if (m_booster) XGBoosterFree(m_booster);
    m_booster = bst;
}

std::vector<float> XGBCostModel::predict(const std::vector<std::int64_t>& xs) const {
    std::vector<float> out(xs.size(), 0.f);
    if (!m_booster || xs.empty()) return out;
    std::vector<float> data;
    for (auto x : xs) {
        const auto f = features(x);
        data.insert(data.end(), f.begin(), f.end());
    }
    DMatrix dm;
    check(XGDMatrixCreateFromMat(data.data(), bst_ulong(xs.size()), bst_ulong(m_numFeatures),
                                 std::numeric_limits<float>::quiet_NaN(), &dm.h),
          "DMatrix creation");
    bst_ulong len = 0;
    const float* pred = nullptr;
    check(XGBoosterPredict(m_booster, dm.h, 0, 0, 0, &len, &pred), "predict");
    TB_CHECK(len == xs.size()) << "XGBoost predicted " << len << " values for " << xs.size() << " rows";
    std::copy(pred, pred + len, out.begin());
    return out;
}

// ---- SimulatedAnnealingOptimizer ----------------------------------------------------------------

SimulatedAnnealingOptimizer::SimulatedAnnealingOptimizer(const ConfigSpace& space, std::uint64_t seed, int nIter,
                                                         int parallelSize, int earlyStop)
    : m_space(space), m_rng(seed), m_nIter(nIter),
      m_parallelSize(int(std::min<std::int64_t>(parallelSize, space.size()))), m_earlyStop(earlyStop) {}

std::vector<std::int64_t> SimulatedAnnealingOptimizer::findMaximums(const XGBCostModel& model, int num,
                                                                    const std::set<std::int64_t>& exclusive) {
    std::uniform_int_distribution<std::int64_t> anyIndex(0, m_space.rangeLength() - 1);
    if (m_points.empty()) {  // sample_ints(parallel_size)
        std::set<std::int64_t> vis;
        while (int(vis.size()) < m_parallelSize) {
            const std::int64_t i = anyIndex(m_rng);
            if (m_space.isIndexValid(i)) vis.insert(i);
        }
        m_points.assign(vis.begin(), vis.end());
    }
    std::vector<std::int64_t>& points = m_points;
    std::vector<float> scores = model.predict(points);

    // A min-heap of (score, point) of size num, initialized with (-inf, -1 - i).
    using Item = std::pair<double, std::int64_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    std::set<std::int64_t> inHeap(exclusive.begin(), exclusive.end());
    for (int i = 0; i < num; ++i) {
        heap.push({-std::numeric_limits<double>::infinity(), -1 - i});
        inHeap.insert(-1 - i);
    }
    auto offer = [&](double s, std::int64_t p) {
        if (s > heap.top().first && !inHeap.count(p)) {
            inHeap.erase(heap.top().second);
            heap.pop();
            heap.push({s, p});
            inHeap.insert(p);
            return true;
        }
        return false;
    };
    for (size_t i = 0; i < points.size(); ++i) offer(scores[i], points[i]);

    const std::vector<std::int64_t> dims = m_space.dims();
    std::uniform_int_distribution<size_t> knobDist(0, dims.size() - 1);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    auto randomWalk = [&](std::int64_t p) {  // space.random_walk
        const auto old = m_space.pointToKnob(p);
        auto knob = old;
        std::int64_t np = p;
        for (int guard = 0; (knob == old || !m_space.isIndexValid(np)) && guard < 10000; ++guard) {
            const size_t from = knobDist(m_rng);
            knob[from] = std::uniform_int_distribution<std::int64_t>(0, dims[from] - 1)(m_rng);
            np = m_space.knobToPoint(knob);
        }
        return m_space.isIndexValid(np) ? np : p;
    };
    double t = 1.0;
    const double cool = 1.0 / double(m_nIter + 1);
    int k = 0, kLastModify = 0;
    while (k < m_nIter && k < kLastModify + m_earlyStop) {
        std::vector<std::int64_t> newPoints(points.size());
        for (size_t i = 0; i < points.size(); ++i) newPoints[i] = randomWalk(points[i]);
        const std::vector<float> newScores = model.predict(newPoints);
        for (size_t i = 0; i < points.size(); ++i) {
            const double acProb = std::exp(std::min((double(newScores[i]) - scores[i]) / (t + 1e-5), 1.0));
            if (unit(m_rng) < acProb) {
                points[i] = newPoints[i];
                scores[i] = newScores[i];
            }
        }
        for (size_t i = 0; i < newPoints.size(); ++i)
            if (offer(newScores[i], newPoints[i])) kLastModify = k;
        ++k;
        t -= cool;
    }
    std::vector<Item> items;
    while (!heap.empty()) {
        items.push_back(heap.top());
        heap.pop();
    }
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.first > b.first; });
    std::vector<std::int64_t> out;
    for (const auto& [s, p] : items)
        if (s >= 0) out.push_back(p);
    return out;
}

// ---- XGBTuner (ModelBasedTuner) -------------------------------------------------------------------

XGBTuner::XGBTuner(const Task& task, int planSize, const std::string& featureType, const std::string& lossType,
                   std::uint64_t seed)
    : Tuner(task, seed), m_planSize(planSize), m_model(task.space, featureType, lossType, seed + 1),
      m_optimizer(task.space, seed + 2) {}

std::vector<ConfigEntity> XGBTuner::nextBatch(int batchSize) {
    std::vector<ConfigEntity> out;
    while (int(out.size()) < batchSize && hasNext()) {
        std::int64_t index = -1;
        while (m_trialPt < m_trials.size()) {
            index = m_trials[m_trialPt];
            if (!m_visited.count(index) && m_space.isIndexValid(index)) break;
            ++m_trialPt;
        }
        if (std::int64_t(m_trialPt) >= std::int64_t(m_trials.size()) - std::int64_t(0.05 * m_planSize))
            index = randIndex(m_visited);
        out.push_back(m_space.get(index));
        m_visited.insert(index);
    }
    return out;
}

void XGBTuner::update(const std::vector<ConfigEntity>& configs, const std::vector<measure::MeasureResult>& results) {
    for (size_t i = 0; i < configs.size(); ++i) {
        const double f = flops(results[i]);
        m_xs.push_back(configs[i].index);
        m_ys.push_back(f);
        m_flopsMax = std::max(m_flopsMax, f);
        m_visited.insert(configs[i].index);
    }
    if (int(m_xs.size()) >= m_planSize * (m_trainCt + 1) && m_flopsMax > 1e-6) {
        m_model.fit(m_xs, m_ys, m_planSize);
        m_trials = m_optimizer.findMaximums(m_model, m_planSize, m_visited);
        m_trialPt = 0;
        ++m_trainCt;
    }
}

std::unique_ptr<Tuner> makeTuner(const std::string& name, const Task& task, std::uint64_t seed) {
    if (name == "xgb" || name == "xgb_knob") return std::make_unique<XGBTuner>(task, 64, "knob", "reg", seed);
    if (name == "xgb_rank" || name == "xgb_rank_knob") return std::make_unique<XGBTuner>(task, 64, "knob", "rank", seed);
    if (name == "random") return std::make_unique<RandomTuner>(task, seed);
    if (name == "gridsearch") return std::make_unique<GridSearchTuner>(task);
    if (name == "ga") return std::make_unique<GATuner>(task, 50, 3, 0.1, seed);
    if (name.rfind("xgb", 0) == 0)
        throw UserError("tuner '" + name + "': only knob features are implemented yet (xgb, xgb_rank, xgb_knob, "
                        "xgb_rank_knob); itervar and curve features come later");
    throw UserError("unknown tuner '" + name + "' (xgb, xgb_rank, xgb_knob, xgb_rank_knob, random, gridsearch, ga)");
}

}  // namespace tb::autotvm
