//===- Train.h - gopt-run --train and --data-only ---------------*- C++ -*-===//
#ifndef GOPT_TOOLING_TRAIN_H
#define GOPT_TOOLING_TRAIN_H

#include "gopt/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gopt::runtime {
class Communicator;
} // namespace gopt::runtime

namespace gopt::tooling {

struct TrainOptions {
  std::string model;
  std::string backend = "cpu";
  int threads = 0;
  size_t memoryLimit = 0;
  // Loss put on the model's first output: softmax-cross-entropy, mse, or
  // none (the graph already returns a result named "loss").
  std::string loss = "softmax-cross-entropy";
  std::string optimizer = "adam";
  double lr = -1; // the optimizer's default
  double momentum = 0;
  double weightDecay = 0;
  // Mixed-precision training: f32, bf16 or f16 (gopt-mixed-precision on the
  // forward graph; parameters stay f32). Loss scaling: "dynamic", "none",
  // a fixed scale, or "" for the precision's default (dynamic for f16).
  std::string precision = "f32";
  std::string lossScale;
  // The data format the step's convolutions and pools run in (the
  // parameters keep the graph's): NCHW, NHWC, or auto: NHWC when the step
  // is compiled for the CPU, the graph's own otherwise.
  std::string layout = "auto";
  int64_t batch = 64;
  int64_t steps = 0;  // 0: run whole epochs
  int64_t epochs = 1; // when steps == 0
  // Training data: "fashion-mnist", "idx:IMAGES,LABELS", "npy:INPUTS,LABELS",
  // "tfrecord:FILE[,FILE...]" or "fake" (one batch of fixed random examples
  // and labels, repeated).
  std::string data = "fake";
  std::string evalData; // same forms; "" with --eval: the data's test split
  bool eval = false;
  std::string imageFeature = "image", labelFeature = "label";
  float normalizeMean = 0, normalizeStd = 1;
  bool shuffle = true;
  uint64_t seed = 1234;
  int prefetch = 4;
  int loaderThreads = 2;
  int64_t logEvery = 100;
  std::string saveParams, loadParams;
  // Compile the training step, write it to this .gplan file and stop (no
  // data is read, nothing runs): the file trains with `--train` on a
  // machine without the compiler.
  std::string savePlan;
  // Print the per-op time table of the training step after the run.
  bool profile = false;
  // The last step as a Chrome/Perfetto trace (rank 0), the communication
  // thread's collectives on their own track.
  std::string traceFile;
  // Time the input pipeline alone for this many batches (tensorpack's
  // TestDataSpeed); no graph runs.
  bool dataOnly = false;
  // Data-parallel training (docs/scaling.md): launch this many local ranks
  // (gopt-run --nproc N re-executes itself with launchArgs and torchrun's
  // environment); 0 without --nproc.
  int nproc = 0;
  std::vector<std::string> launchArgs;
  // Gradients go in all_reduce buckets of about this many megabytes.
  double bucketMb = 25;
  // Batch norms normalize with the global batch's statistics (all ranks'
  // local batches), PyTorch's SyncBatchNorm; otherwise each rank's own.
  bool syncBatchNorm = false;
  // Every collective call (and the start-up rendezvous) fails after this.
  double collectiveTimeout = 300;
  // The ranks' communicator (Gloo); null trains a single replica. Set by
  // runTraining from the environment, or by a caller that made one.
  std::shared_ptr<runtime::Communicator> communicator;
};

// Runs training (or --data-only) and prints the report. False when the
// run failed in a way already reported (NaN loss).
runtime::StatusOr<bool> runTraining(const TrainOptions &options);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_TRAIN_H
