//===- DataPipeline.h - Training input pipeline -----------------*- C++ -*-===//
//
// Datasets (MNIST IDX, .npy, TFRecord of tf.train.Example, constant fake
// data) and a multithreaded BatchLoader that turns one into a deterministic
// stream of shuffled f32 batches, with queue statistics that tell whether a
// training run is bound by its input pipeline (tensorpack's method: a mostly
// empty prefetch queue means the data side is the bottleneck).
//
//   StatusOr<std::shared_ptr<Dataset>> ds = openIdxDataset(
//       "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz");
//   LoaderOptions opts;
//   opts.batchSize = 64;
//   opts.shuffle = true;
//   opts.numEpochs = 10;
//   StatusOr<std::unique_ptr<BatchLoader>> loader =
//       BatchLoader::create(*ds, opts);
//   while (true) {
//     StatusOr<std::optional<Batch>> b = (*loader)->next();
//     if (!b.ok()) ...            // a read error, naming the file
//     if (!b->has_value()) break; // after the last epoch
//     train((*b)->inputs, (*b)->labels);
//   }
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_DATAPIPELINE_H
#define GOPT_RUNTIME_DATAPIPELINE_H

#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gopt::runtime {

//===----------------------------------------------------------------------===//
// Datasets
//===----------------------------------------------------------------------===//

// A fixed number of examples, each an f32 input of a fixed shape and an
// integer class label. Implementations must make read() safe to call from
// several threads at once.
class Dataset {
public:
  virtual ~Dataset();

  // Number of examples (> 0).
  virtual int64_t size() const = 0;
  // Shape of one example's input, without the batch dimension ([1,28,28]
  // for MNIST). Inputs are always decoded to f32.
  virtual const Shape &inputShape() const = 0;
  // Writes example `index`'s input (numElements(inputShape()) floats) to
  // `inputOut` and its label to `labelOut`. Thread-safe. Errors name the
  // file and the example.
  virtual Status read(int64_t index, float *inputOut,
                      int64_t *labelOut) const = 0;
  // One line for logs, e.g. "IDX train-images-idx3-ubyte.gz: 60000 x
  // [1,28,28]".
  virtual std::string describe() const = 0;

  DType inputDType() const { return DType::kF32; }
  int64_t inputElements() const { return numElements(inputShape()); }
};

// Applied to every decoded input value: u8 pixels are first scaled to
// [0,1] (v / 255), then every value x becomes (x - mean) / stddev.
struct NormalizeOptions {
  float mean = 0.0f;
  float stddev = 1.0f;
};

// MNIST IDX files: images (magic 0x00000803, u8 [N,H,W]) and labels (magic
// 0x00000801, u8 [N]), each raw or gzip'd (detected by the 1f 8b magic
// bytes, not the file name). Both are loaded into memory here; inputs are
// f32 [1,H,W] (channel first).
StatusOr<std::shared_ptr<Dataset>>
openIdxDataset(const std::string &imagesPath, const std::string &labelsPath,
               const NormalizeOptions &options = {});

// .npy files: inputs [N, ...] of f32 (normalized) or u8 (scaled to [0,1],
// then normalized); labels [N] (or [N,1]) of int32, int64 or u8, none
// negative. Loaded into memory here; inputs are f32 [...].
StatusOr<std::shared_ptr<Dataset>>
openNpyDataset(const std::string &inputsPath, const std::string &labelsPath,
               const NormalizeOptions &options = {});

// Synthetic data, to time or try a graph without real data (tensorpack's
// FakeData(random=False)): `distinctExamples` fixed random examples, uniform
// in [0, 1) with uniform random labels in [0, numClasses), repeated to
// `numExamples` (example i is example i % distinctExamples). The same every
// run, and few enough that a model can fit them: the loss falls.
StatusOr<std::shared_ptr<Dataset>> openFakeDataset(const Shape &inputShape,
                                                   int64_t numClasses,
                                                   int64_t numExamples,
                                                   int64_t distinctExamples);

// TFRecord files of serialized tf.train.Example protos, read in the order
// of `paths`. Every record is indexed here (length CRCs verified, data read
// lazily with pread; the files stay open), and the first record is decoded
// to check the features. Each read() verifies the record's data CRC.
//   imageFeature: a float_list of numElements(inputShape) values, or a
//                 bytes_list holding that many raw u8 pixels (scaled to
//                 [0,1]); then normalized.
//   labelFeature: an int64_list of one non-negative value.
StatusOr<std::shared_ptr<Dataset>>
openTfRecordDataset(const std::vector<std::string> &paths,
                    const std::string &imageFeature,
                    const std::string &labelFeature, const Shape &inputShape,
                    const NormalizeOptions &options = {});

// CRC-32C (Castagnoli), as TFRecord uses it; `crc` continues a previous
// value (0 to start).
uint32_t crc32c(const void *data, size_t size, uint32_t crc = 0);
// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t maskCrc32c(uint32_t crc);

//===----------------------------------------------------------------------===//
// Batch loader
//===----------------------------------------------------------------------===//

struct LoaderOptions {
  static constexpr int64_t kUnlimitedEpochs = -1;

  int64_t batchSize = 32;
  // Each epoch visits the examples in a permutation drawn from (seed,
  // epoch); the same on every platform and for any number of threads.
  bool shuffle = false;
  uint64_t seed = 0;
  // Drop the last, partial batch of an epoch; otherwise it comes with
  // fewer rows.
  bool dropLast = true;
  // Batches held at once, ready or being filled (at least `threads` are).
  int prefetch = 4;
  // Worker threads that read examples.
  int threads = 2;
  // Epochs to produce, or kUnlimitedEpochs.
  int64_t numEpochs = 1;
  // Data-parallel training (PyTorch's DistributedSampler): of each epoch's
  // permutation, shard r of N takes positions r, r+N, r+2N, ... (the last
  // size % N examples are dropped, so every shard has size / N). With the
  // same seed on every rank, batch k of the N shards together is batch k of
  // one unsharded loader with N times the batch size.
  int64_t numShards = 1;
  int64_t shard = 0;
};

struct Batch {
  Tensor inputs;     // f32 [B, ...inputShape]
  Tensor labels;     // i64 [B]
  int64_t index = 0; // batch number from 0, counted across epochs
  int64_t epoch = 0; // from 0
  bool lastOfEpoch = false;
};

// Queue statistics, sampled at every next() that returned a batch.
struct LoaderStats {
  int64_t batches = 0;
  int64_t samples = 0;
  // Capacity of the queue (batches).
  int64_t capacity = 0;
  // Mean number of batches ready when next() was called, before it took
  // one.
  double meanFill = 0.0;
  // Share of next() calls that found the batch they return not ready yet
  // and had to wait for a worker.
  double fractionEmpty = 0.0;
  // Time next() spent waiting for workers.
  double totalWaitSeconds = 0.0;
  // fillHistogram[k]: next() calls that found k batches ready
  // (k = 0..capacity).
  std::vector<int64_t> fillHistogram;
};

// Produces batches from a Dataset with worker threads filling a bounded,
// ordered prefetch queue: batch k always holds the same examples whatever
// the number of threads, and next() hands them out in order. The destructor
// stops the workers (it does not wait for the remaining epochs).
class BatchLoader {
public:
  // Validates the options (batchSize, prefetch, threads >= 1; numEpochs
  // >= 1 or unlimited; at least one batch per epoch) and starts the workers.
  static StatusOr<std::unique_ptr<BatchLoader>>
  create(std::shared_ptr<const Dataset> dataset, const LoaderOptions &options);
  ~BatchLoader();
  BatchLoader(const BatchLoader &) = delete;
  BatchLoader &operator=(const BatchLoader &) = delete;

  // Blocks until the next batch is ready. An empty optional after the last
  // epoch (and on every later call); a worker's error (naming the file and
  // example) when the batch it was filling is due, and on every later call.
  StatusOr<std::optional<Batch>> next();

  LoaderStats stats() const;
  int64_t batchesPerEpoch() const;
  // Batches over all epochs; -1 when unlimited.
  int64_t totalBatches() const;
  const Dataset &dataset() const;
  const LoaderOptions &options() const;

private:
  struct Impl;
  explicit BatchLoader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "data-bound: ..." when the consumer found the queue empty at more than
// half of its next() calls or waited for more than 20% of its total time
// (computeSeconds + stats.totalWaitSeconds), else "compute-bound: ...";
// one line with the numbers. `computeSeconds` is the time the consumer
// spent outside next() (its training steps).
std::string classifyBottleneck(const LoaderStats &stats, double computeSeconds);

// Input pipeline throughput without any graph (tensorpack's TestDataSpeed,
// `gopt-run --data-only`).
struct DataSpeed {
  int64_t batches = 0;
  int64_t samples = 0;
  double seconds = 0.0;
  double batchesPerSecond = 0.0;
  double samplesPerSecond = 0.0;
};

// Takes `warmupBatches` untimed batches, then times up to `numBatches`
// more (until the end of the data when numBatches <= 0 or the data ends
// first).
StatusOr<DataSpeed> runDataOnly(BatchLoader &loader, int64_t numBatches,
                                int64_t warmupBatches = 0);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_DATAPIPELINE_H
