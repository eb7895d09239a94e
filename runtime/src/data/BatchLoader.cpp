//===- BatchLoader.cpp - Ordered, prefetching batch loader ----------------===//
//
// Batch k (counted across epochs) holds examples perm(epoch)[j*B, j*B + B)
// with epoch = k / batchesPerEpoch and j = k % batchesPerEpoch. Workers
// claim batch numbers in increasing order, fill them without the lock and
// store batch k in slot k % window; next() takes slot `consumed % window`
// once it is ready. A batch number is claimed only when its slot is free
// (k < consumed + window), which bounds the memory and keeps the order
// independent of the number of threads and of their timing.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/DataPipeline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <system_error>
#include <thread>

namespace gopt::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A permutation of [0, n) from (seed, epoch): std::mt19937_64 is specified
// exactly by the standard and the Fisher-Yates shuffle is written out here
// (std::shuffle and the std distributions differ between standard
// libraries), so the order is the same on every platform.
std::vector<int64_t> makePermutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::mt19937_64 rng(
      splitmix64(seed ^ splitmix64(static_cast<uint64_t>(epoch))));
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  for (int64_t i = n - 1; i > 0; --i) {
    // A uniform j in [0, i] by multiply-shift (bias < 2^-40 for i < 2^24).
    auto j = static_cast<int64_t>((static_cast<unsigned __int128>(rng()) *
                                   static_cast<uint64_t>(i + 1)) >>
                                  64);
    std::swap(perm[i], perm[j]);
  }
  return perm;
}

} // namespace

struct BatchLoader::Impl {
  struct Slot {
    bool ready = false;
    Status status;
    Batch batch;
  };

  std::shared_ptr<const Dataset> dataset;
  LoaderOptions options;
  int64_t examples = 0;
  int64_t perEpoch = 0;
  int64_t total = -1; // -1: unlimited
  int64_t window = 0;
  int64_t elements = 0;

  mutable std::mutex mu;
  std::condition_variable workCv;  // workers: a slot became free, or stop
  std::condition_variable readyCv; // consumer: a batch became ready
  std::vector<Slot> slots;
  int64_t nextClaim = 0;
  int64_t consumed = 0;
  int64_t readyCount = 0;
  bool noMoreClaims = false; // a worker failed
  std::atomic<bool> stopping{false};
  std::optional<Status> failure;
  std::map<int64_t, std::shared_ptr<const std::vector<int64_t>>> perms;

  // Statistics of next().
  int64_t statBatches = 0, statSamples = 0, statEmpty = 0;
  double fillSum = 0.0, waitSeconds = 0.0;
  std::vector<int64_t> histogram;

  std::vector<std::thread> workers;

  bool finished(int64_t k) const { return total >= 0 && k >= total; }
  std::shared_ptr<const std::vector<int64_t>> permutation(int64_t epoch);
  Status fill(int64_t k, const std::vector<int64_t> *perm, Batch &batch);
  void workerLoop();
  void stop();
};

// Called with `mu` held. Computing a permutation under the lock costs each
// epoch a few milliseconds at most (60000 examples: ~0.3 ms).
std::shared_ptr<const std::vector<int64_t>>
BatchLoader::Impl::permutation(int64_t epoch) {
  // Epochs before the consumer's are done with (workers keep their own
  // reference while filling).
  perms.erase(perms.begin(), perms.lower_bound(consumed / perEpoch));
  auto it = perms.find(epoch);
  if (it != perms.end())
    return it->second;
  auto perm = std::make_shared<const std::vector<int64_t>>(
      makePermutation(dataset->size(), options.seed, epoch));
  perms.emplace(epoch, perm);
  return perm;
}

Status BatchLoader::Impl::fill(int64_t k, const std::vector<int64_t> *perm,
                               Batch &batch) {
  int64_t epoch = k / perEpoch;
  int64_t j = k % perEpoch;
  int64_t start = j * options.batchSize;
  int64_t count = std::min(options.batchSize, examples - start);
  Shape shape{count};
  shape.insert(shape.end(), dataset->inputShape().begin(),
               dataset->inputShape().end());
  // Plain host memory: the CPU backend reads these tensors directly. A CUDA
  // backend would allocate the batch here from pinned (page-locked) host
  // memory, e.g. a pool of `window` pinned buffers recycled as next() hands
  // batches out, so that its host-to-device copy can run asynchronously;
  // nothing else in the loader depends on where the batch lives.
  batch.inputs = Tensor::allocate(DType::kF32, std::move(shape));
  batch.labels = Tensor::allocate(DType::kI64, {count});
  batch.index = k;
  batch.epoch = epoch;
  batch.lastOfEpoch = j == perEpoch - 1;
  float *inputs = batch.inputs.data<float>();
  int64_t *labels = batch.labels.data<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    if (stopping.load(std::memory_order_relaxed))
      return failedPrecondition("the batch loader is shutting down");
    int64_t position = options.shard + (start + i) * options.numShards;
    int64_t example = perm ? (*perm)[position] : position;
    Status st = dataset->read(example, inputs + i * elements, labels + i);
    if (!st.ok())
      return Status(st.code(),
                    detail::concat("loading batch ", k, " (epoch ", epoch,
                                   "), example ", example, ": ", st.message()));
  }
  return Status::success();
}

void BatchLoader::Impl::workerLoop() {
  std::unique_lock<std::mutex> lock(mu);
  while (true) {
    workCv.wait(lock, [&] {
      return stopping || noMoreClaims || finished(nextClaim) ||
             nextClaim < consumed + window;
    });
    if (stopping || noMoreClaims || finished(nextClaim))
      return;
    int64_t k = nextClaim++;
    std::shared_ptr<const std::vector<int64_t>> perm;
    if (options.shuffle)
      perm = permutation(k / perEpoch);
    lock.unlock();

    Batch batch;
    Status status;
    try {
      status = fill(k, perm.get(), batch);
    } catch (const std::exception &e) {
      status = resourceExhausted("loading batch ", k, ": ", e.what());
    }
    perm.reset();

    lock.lock();
    Slot &slot = slots[k % window];
    slot.ready = true;
    slot.status = std::move(status);
    slot.batch = std::move(batch);
    ++readyCount;
    if (!slot.status.ok()) {
      // Batches before k were claimed already and will still be delivered;
      // the consumer gets this error when batch k is due.
      noMoreClaims = true;
      workCv.notify_all();
    }
    readyCv.notify_all();
  }
}

void BatchLoader::Impl::stop() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  workCv.notify_all();
  for (std::thread &t : workers)
    if (t.joinable())
      t.join();
  workers.clear();
}

BatchLoader::BatchLoader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

BatchLoader::~BatchLoader() { impl_->stop(); }

StatusOr<std::unique_ptr<BatchLoader>>
BatchLoader::create(std::shared_ptr<const Dataset> dataset,
                    const LoaderOptions &options) {
  if (!dataset)
    return invalidArgument("batch loader: no dataset");
  if (options.batchSize < 1)
    return invalidArgument("batch loader: batch size must be >= 1, got ",
                           options.batchSize);
  if (options.prefetch < 1)
    return invalidArgument("batch loader: prefetch must be >= 1, got ",
                           options.prefetch);
  if (options.threads < 1 || options.threads > 1024)
    return invalidArgument("batch loader: threads must be in [1, 1024], got ",
                           options.threads);
  if (options.numEpochs < 1 &&
      options.numEpochs != LoaderOptions::kUnlimitedEpochs)
    return invalidArgument("batch loader: numEpochs must be >= 1 or ",
                           "unlimited (-1), got ", options.numEpochs);
  if (options.numShards < 1 || options.shard < 0 ||
      options.shard >= options.numShards)
    return invalidArgument("batch loader: shard ", options.shard, " of ",
                           options.numShards, " is out of range");
  // This shard's examples (all of them with one shard).
  int64_t n = dataset->size() / options.numShards;
  int64_t perEpoch = options.dropLast
                         ? n / options.batchSize
                         : (n + options.batchSize - 1) / options.batchSize;
  if (perEpoch < 1)
    return invalidArgument("batch loader: ", dataset->describe(), " has ", n,
                           " examples, fewer than one batch of ",
                           options.batchSize,
                           " (dropLast drops partial batches); use a smaller "
                           "batch or dropLast = false");
  int64_t total = -1;
  if (options.numEpochs != LoaderOptions::kUnlimitedEpochs) {
    if (options.numEpochs > std::numeric_limits<int64_t>::max() / perEpoch)
      return invalidArgument("batch loader: ", options.numEpochs,
                             " epochs are too many; use unlimited (-1)");
    total = perEpoch * options.numEpochs;
  }

  auto impl = std::make_unique<Impl>();
  impl->dataset = std::move(dataset);
  impl->options = options;
  impl->examples = n;
  impl->perEpoch = perEpoch;
  impl->total = total;
  impl->elements = impl->dataset->inputElements();
  // Every worker needs a slot to fill, so there are at least `threads`.
  impl->window = std::max<int64_t>(options.prefetch, options.threads);
  impl->slots.resize(static_cast<size_t>(impl->window));
  impl->histogram.assign(static_cast<size_t>(impl->window) + 1, 0);
  std::unique_ptr<BatchLoader> loader(new BatchLoader(std::move(impl)));
  Impl *p = loader->impl_.get();
  try {
    for (int i = 0; i < options.threads; ++i)
      p->workers.emplace_back([p] { p->workerLoop(); });
  } catch (const std::system_error &e) {
    return resourceExhausted("batch loader: cannot start ", options.threads,
                             " worker threads: ", e.what());
  }
  return loader;
}

StatusOr<std::optional<Batch>> BatchLoader::next() {
  Impl &m = *impl_;
  std::unique_lock<std::mutex> lock(m.mu);
  if (m.failure)
    return *m.failure;
  if (m.finished(m.consumed))
    return std::optional<Batch>();
  Impl::Slot &slot = m.slots[m.consumed % m.window];
  int64_t fill = m.readyCount;
  bool empty = !slot.ready;
  double waited = 0.0;
  if (empty) {
    Clock::time_point start = Clock::now();
    m.readyCv.wait(lock, [&] { return slot.ready; });
    waited = secondsSince(start);
  }
  Status status = std::move(slot.status);
  Batch batch = std::move(slot.batch);
  slot = Impl::Slot();
  --m.readyCount;
  ++m.consumed;
  m.workCv.notify_all();
  if (!status.ok()) {
    m.failure = status;
    m.noMoreClaims = true;
    return status;
  }
  ++m.statBatches;
  m.statSamples += batch.labels.numElements();
  m.statEmpty += empty ? 1 : 0;
  m.fillSum += static_cast<double>(fill);
  m.waitSeconds += waited;
  ++m.histogram[static_cast<size_t>(std::min(fill, m.window))];
  return std::optional<Batch>(std::move(batch));
}

LoaderStats BatchLoader::stats() const {
  const Impl &m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  LoaderStats s;
  s.batches = m.statBatches;
  s.samples = m.statSamples;
  s.capacity = m.window;
  if (m.statBatches > 0) {
    s.meanFill = m.fillSum / static_cast<double>(m.statBatches);
    s.fractionEmpty =
        static_cast<double>(m.statEmpty) / static_cast<double>(m.statBatches);
  }
  s.totalWaitSeconds = m.waitSeconds;
  s.fillHistogram = m.histogram;
  return s;
}

int64_t BatchLoader::batchesPerEpoch() const { return impl_->perEpoch; }
int64_t BatchLoader::totalBatches() const { return impl_->total; }
const Dataset &BatchLoader::dataset() const { return *impl_->dataset; }
const LoaderOptions &BatchLoader::options() const { return impl_->options; }

std::string classifyBottleneck(const LoaderStats &stats,
                               double computeSeconds) {
  if (stats.batches == 0)
    return "unknown: no batches were taken from the loader";
  double total = std::max(0.0, computeSeconds) + stats.totalWaitSeconds;
  double waitShare = total > 0.0 ? stats.totalWaitSeconds / total : 0.0;
  bool dataBound = stats.fractionEmpty > 0.5 || waitShare > 0.2;
  char line[512];
  std::snprintf(
      line, sizeof(line),
      "%s: the prefetch queue was empty at %.0f%% of %lld next() calls "
      "(mean fill %.1f of %lld batches); waiting for data took %.3f s = "
      "%.0f%% of %.3f s (compute %.3f s)%s",
      dataBound ? "data-bound" : "compute-bound", 100.0 * stats.fractionEmpty,
      static_cast<long long>(stats.batches), stats.meanFill,
      static_cast<long long>(stats.capacity), stats.totalWaitSeconds,
      100.0 * waitShare, total, computeSeconds,
      dataBound ? "; the input pipeline is the bottleneck: add loader "
                  "threads or make preprocessing cheaper"
                : "");
  return line;
}

StatusOr<DataSpeed> runDataOnly(BatchLoader &loader, int64_t numBatches,
                                int64_t warmupBatches) {
  if (numBatches <= 0 && loader.totalBatches() < 0)
    return invalidArgument("runDataOnly: the loader has unlimited epochs; ",
                           "give a number of batches");
  for (int64_t i = 0; i < warmupBatches; ++i) {
    GOPT_ASSIGN_OR_RETURN(std::optional<Batch> batch, loader.next());
    if (!batch)
      return failedPrecondition("runDataOnly: the data ended after ", i, " of ",
                                warmupBatches, " warmup batches");
  }
  DataSpeed speed;
  Clock::time_point start = Clock::now();
  while (numBatches <= 0 || speed.batches < numBatches) {
    GOPT_ASSIGN_OR_RETURN(std::optional<Batch> batch, loader.next());
    if (!batch)
      break;
    ++speed.batches;
    speed.samples += batch->labels.numElements();
  }
  speed.seconds = secondsSince(start);
  if (speed.seconds > 0.0) {
    speed.batchesPerSecond = static_cast<double>(speed.batches) / speed.seconds;
    speed.samplesPerSecond = static_cast<double>(speed.samples) / speed.seconds;
  }
  return speed;
}

} // namespace gopt::runtime
