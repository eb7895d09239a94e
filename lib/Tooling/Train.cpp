//===- Train.cpp - gopt-run --train and --data-only -----------------------===//
//
// gopt-run's training loop over a Trainer: batches come from the runtime's
// BatchLoader; the loop logs progress, evaluates after each epoch, and the
// report says whether the run waited on its input (data-bound) or on the
// graph (compute-bound).
//
//===----------------------------------------------------------------------===//
#include "gopt/Tooling/Train.h"
#include "gopt/Tooling/Distributed.h"
#include "gopt/Tooling/FileExtension.h"
#include "gopt/Tooling/ModelLoader.h"
#include "gopt/Tooling/Profile.h"
#include "gopt/Tooling/Report.h"
#include "gopt/Tooling/Trainer.h"

#include "gopt/runtime/Collectives.h"
#include "gopt/runtime/DataPipeline.h"
#include "gopt/runtime/Session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace gopt::tooling {

using namespace gopt::runtime;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Where a step's op time goes: the forward pass, the backward pass (ops
/// named "<forward op>/grad" by --gopt-autodiff, and the loss gradient),
/// the optimizer updates, and layout reorders the schedule added.
void printTimeSplit(const std::vector<OpProfile> &rows) {
  double forward = 0, backward = 0, optimizer = 0, reorder = 0,
         communication = 0;
  for (const OpProfile &p : rows) {
    if (isCommunication(p)) // its own thread: overlaps the rows below
      continue;
    if (p.kind == "all_reduce") {
      communication += p.totalMs;
      continue;
    }
    bool grad = p.name.size() >= 5 &&
                p.name.compare(p.name.size() - 5, 5, "/grad") == 0;
    if (p.kind == "sgd_update" || p.kind == "adam_update" ||
        p.kind == "all_finite" || p.kind == "select" ||
        p.kind == "loss_scale_update")
      optimizer += p.totalMs;
    else if (p.kind == "reorder")
      reorder += p.totalMs;
    else if (grad || p.kind.find("_grad") != std::string::npos ||
             p.kind.find("backprop") != std::string::npos)
      backward += p.totalMs;
    else
      forward += p.totalMs;
  }
  double total = forward + backward + optimizer + reorder + communication;
  if (total <= 0)
    return;
  std::printf("\nop time: forward %.0f%%, backward %.0f%%, optimizer %.0f%%, "
              "layout reorders %.0f%%",
              100 * forward / total, 100 * backward / total,
              100 * optimizer / total, 100 * reorder / total);
  if (communication > 0)
    std::printf(", all-reduce %.0f%%", 100 * communication / total);
  std::printf("\n");
}

StatusOr<bool> runDataOnlyMode(const TrainOptions &o) {
  // Fake and TFRecord data take their example shape from the model's first
  // input when a model is given, else MNIST's.
  Shape shape = {1, 28, 28};
  if (!o.model.empty()) {
    ModelLoadOptions load;
    load.pipeline = evaluationPipeline();
    GOPT_ASSIGN_OR_RETURN(Plan plan, loadModelAsPlan(o.model, load));
    if (plan.proto().inputs_size() == 0)
      return invalidArgument("'", o.model, "' has no inputs");
    const plan::TensorInfo &in =
        plan.proto().tensors(plan.proto().inputs(0).tensor());
    shape.assign(in.shape().begin() + std::min(1, in.shape_size()),
                 in.shape().end());
  }
  GOPT_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> data,
                        openTrainingData(o.data, shape, 10, o));
  LoaderOptions lo = trainingLoaderOptions(o);
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<BatchLoader> loader,
                        BatchLoader::create(data, lo));
  GOPT_ASSIGN_OR_RETURN(DataSpeed speed,
                        runDataOnly(*loader, o.steps, /*warmupBatches=*/5));
  std::printf("data: %s\n", data->describe().c_str());
  std::printf("input pipeline alone (--data-only): %lld batches of %lld in "
              "%.3f s\n",
              static_cast<long long>(speed.batches),
              static_cast<long long>(o.batch), speed.seconds);
  std::printf("  %.1f batches/s, %.0f samples/s (%d loader threads, "
              "prefetch %d)\n",
              speed.batchesPerSecond, speed.samplesPerSecond, o.loaderThreads,
              o.prefetch);
  return true;
}

/// Data-parallel runs: every rank must train the same step from the same
/// parameters; a rank that differs is named before any step runs.
Status checkRanksAgree(Trainer &trainer, const TrainOptions &o,
                       Communicator &comm) {
  std::vector<std::string> items;
  for (const plan::Op &op : trainer.session().plan().proto().ops())
    items.push_back(op.kind());
  items.push_back("batch=" + std::to_string(o.batch));
  items.push_back("optimizer=" + o.optimizer + " lr=" + std::to_string(o.lr) +
                  " momentum=" + std::to_string(o.momentum));
  std::vector<Tensor> params;
  for (const std::string &name : trainer.parameterNames()) {
    GOPT_ASSIGN_OR_RETURN(Tensor t, trainer.parameter(name));
    params.push_back(std::move(t));
  }
  uint64_t hash = hashTrainingStep(items, trainer.parameterNames(), params);
  GOPT_ASSIGN_OR_RETURN(std::vector<int64_t> all,
                        comm.allGather(static_cast<int64_t>(hash)));
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      return failedPrecondition(
          "rank ", r,
          " trains a different step than rank 0 (its plan, batch, "
          "optimizer or parameter shapes/values differ: hash ",
          static_cast<uint64_t>(all[r]), " against ",
          static_cast<uint64_t>(all[0]),
          "); every rank must run the same model with the same options");
  return Status::success();
}

/// Every rank's input pipeline, on rank 0: a data-bound rank slows all of
/// them, since each step waits for the slowest at its all-reduce.
Status printRankInputSummary(Communicator &comm, const LoaderStats &stats,
                             double computeSeconds) {
  // all_gather moves integers: fill in thousandths, times in microseconds.
  GOPT_ASSIGN_OR_RETURN(
      std::vector<int64_t> fills,
      comm.allGather(static_cast<int64_t>(stats.meanFill * 1000)));
  GOPT_ASSIGN_OR_RETURN(
      std::vector<int64_t> empties,
      comm.allGather(static_cast<int64_t>(stats.fractionEmpty * 1000)));
  GOPT_ASSIGN_OR_RETURN(
      std::vector<int64_t> waits,
      comm.allGather(static_cast<int64_t>(stats.totalWaitSeconds * 1e6)));
  GOPT_ASSIGN_OR_RETURN(
      std::vector<int64_t> computes,
      comm.allGather(static_cast<int64_t>(computeSeconds * 1e6)));
  std::printf("per rank:");
  for (size_t r = 0; r < fills.size(); ++r) {
    LoaderStats rank = stats;
    rank.meanFill = fills[r] / 1000.0;
    rank.fractionEmpty = empties[r] / 1000.0;
    rank.totalWaitSeconds = waits[r] / 1e6;
    // The verdict's rule is classifyBottleneck's.
    std::string verdict = classifyBottleneck(rank, computes[r] / 1e6);
    std::printf("%s rank %zu %s (fill %.2f, empty %.0f%%, waited %.2f s)",
                r ? ";" : "", r, verdict.substr(0, verdict.find(':')).c_str(),
                rank.meanFill, 100 * rank.fractionEmpty, rank.totalWaitSeconds);
  }
  std::printf("\n");
  return Status::success();
}

} // namespace

// --save-plan: the compiled step, written for a machine without the
// compiler (a .gplan trains there with --train; the session checks that its
// backend has every op's kernel when it is created).
StatusOr<bool> saveTrainingPlan(const TrainOptions &o) {
  if (fileExtension(o.model) == ".gplan")
    return invalidArgument("--save-plan: '", o.model,
                           "' is already a compiled plan");
  GOPT_ASSIGN_OR_RETURN(Plan plan, compileTrainingPlan(o));
  GOPT_RETURN_IF_ERROR(plan.saveToFile(o.savePlan));
  int params = 0;
  for (const plan::StateBinding &s : plan.proto().states())
    params += s.has_update_tensor();
  std::printf("wrote the training step of %s (%s, %s; %d states, %d of them "
              "updated) to %s\n",
              o.model.c_str(),
              o.loss == "none" ? "graph's loss" : o.loss.c_str(),
              o.optimizer.c_str(), plan.proto().states_size(), params,
              o.savePlan.c_str());
  return true;
}

StatusOr<bool> runTraining(const TrainOptions &options) {
  if (options.dataOnly)
    return runDataOnlyMode(options);
  if (!options.savePlan.empty())
    return saveTrainingPlan(options);
  GOPT_ASSIGN_OR_RETURN(DistributedEnv env, readDistributedEnv());
  if (options.nproc > 0 && env.launcher.empty())
    return launchLocalRanks(options);

  TrainOptions o = options;
  if (env.worldSize > 1) {
    // A peer that dies closes its sockets: writing to one must be an error
    // the collective reports (naming the rank), not a silent SIGPIPE death.
    std::signal(SIGPIPE, SIG_IGN);
  }
  if (env.worldSize > 1 && !o.communicator) {
    RendezvousOptions ro;
    ro.rank = env.rank;
    ro.worldSize = env.worldSize;
    ro.masterAddr = env.masterAddr;
    ro.masterPort = env.masterPort;
    ro.timeoutSeconds = o.collectiveTimeout;
    GOPT_ASSIGN_OR_RETURN(o.communicator, createGlooCommunicator(ro));
    // GPUs reduce device buffers with NCCL, one device per local rank,
    // bootstrapped over the Gloo store (its id sent by rank 0).
    if (o.backend == "cuda") {
      auto nccl = createNcclCommunicator(o.communicator, env.localRank,
                                         o.collectiveTimeout);
      GOPT_ASSIGN_OR_RETURN(o.communicator, std::move(nccl));
    }
  }
  int rank = o.communicator ? o.communicator->rank() : 0;
  int world = o.communicator ? o.communicator->size() : 1;
  // Only rank 0 logs; every rank still reports its errors on stderr.
  if (rank != 0 && !std::freopen("/dev/null", "w", stdout))
    return internalError("rank ", rank, ": cannot silence stdout");

  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::create(o));
  if (!o.loadParams.empty()) {
    Status loaded = trainer->loadParameters(o.loadParams);
    if (!loaded.ok())
      return Status(loaded.code(), "--load-params: " + loaded.message());
  }
  if (world > 1)
    GOPT_RETURN_IF_ERROR(checkRanksAgree(*trainer, o, *o.communicator));
  Shape exampleShape = trainer->exampleShape();
  int64_t numClasses = trainer->numClasses();

  GOPT_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> data,
                        openTrainingData(o.data, exampleShape, numClasses, o));
  if (data->inputShape() != exampleShape)
    return invalidArgument("data '", o.data, "' has examples of shape ",
                           shapeToString(data->inputShape()), ", input '",
                           trainer->dataInput().name, "' of '", o.model,
                           "' expects ", shapeToString(exampleShape));

  std::shared_ptr<Dataset> evalData;
  if (o.eval) {
    std::string spec = o.evalData;
    if (spec.empty()) {
      if (o.data != "fashion-mnist")
        return invalidArgument("--eval needs --eval-data SPEC for data '",
                               o.data, "'");
      spec = "fashion-mnist-test";
    }
    GOPT_ASSIGN_OR_RETURN(evalData,
                          openTrainingData(spec, exampleShape, numClasses, o));
  }

  // Each rank reads its own shard (DistributedSampler): together the
  // ranks' batches of B are the single process's batch of world x B.
  LoaderOptions lo = trainingLoaderOptions(o);
  lo.numShards = world;
  lo.shard = rank;
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<BatchLoader> loader,
                        BatchLoader::create(data, lo));
  int64_t totalSteps =
      o.steps > 0 ? o.steps : loader->batchesPerEpoch() * o.epochs;

  std::string scaling = effectiveLossScale(o);
  // A .gplan carries its loss and optimizer; the flags did not choose them.
  bool compiled = fileExtension(o.model) == ".gplan";
  std::string recipe =
      compiled
          ? "the compiled step's loss and optimizer"
          : (o.loss == "none" ? "graph's loss" : o.loss) + ", " + o.optimizer +
                " (lr " + (o.lr > 0 ? std::to_string(o.lr) : "default") + ")";
  std::printf("training %s: %s, batch %lld, %lld steps "
              "(%lld per epoch), backend %s%s\n",
              o.model.c_str(), recipe.c_str(), static_cast<long long>(o.batch),
              static_cast<long long>(totalSteps),
              static_cast<long long>(loader->batchesPerEpoch()),
              o.backend.c_str(),
              o.precision == "f32"
                  ? ""
                  : (", " + o.precision + " mixed precision" +
                     (scaling == "none" ? std::string()
                                        : ", " + describeLossScale(scaling)))
                        .c_str());
  std::printf("data: %s\n", data->describe().c_str());
  if (const char *affinity = std::getenv("GOPT_AFFINITY_CHOICE"))
    std::printf("affinity: %s\n", affinity);
  if (world > 1)
    std::printf("data-parallel: %d ranks (%s), %s all-reduce in buckets of "
                "%g MB, global batch %lld (%lld per rank, each rank a "
                "disjoint shard)\n",
                world, env.launcher.empty() ? "caller" : env.launcher.c_str(),
                o.communicator->engine(), o.bucketMb,
                static_cast<long long>(o.batch * world),
                static_cast<long long>(o.batch));
  if (world > 1 && o.syncBatchNorm)
    std::printf("batch norm: statistics of the global batch (all-reduced "
                "across the %d ranks in forward and backward)\n",
                world);
  std::printf("compiled the training step in %.2f s: %zu parameters, "
              "%d state tensors\n",
              trainer->compileSeconds(), trainer->parameterNames().size(),
              trainer->stateCount());
  std::fflush(stdout);

  bool tty = isatty(STDOUT_FILENO);
  std::vector<double> stepSeconds;
  double computeSeconds = 0, lossWindow = 0;
  int64_t windowSteps = 0, samples = 0;
  auto runStart = Clock::now(), lastProgress = runStart;
  for (int64_t step = 1; step <= totalSteps; ++step) {
    GOPT_ASSIGN_OR_RETURN(std::optional<Batch> batch, loader->next());
    if (!batch)
      break;
    auto stepStart = Clock::now();
    GOPT_ASSIGN_OR_RETURN(float loss,
                          trainer->step(batch->inputs, batch->labels));
    double seconds = secondsSince(stepStart);
    stepSeconds.push_back(seconds);
    computeSeconds += seconds;
    samples += batch->inputs.shape()[0] * world;
    if (!std::isfinite(loss)) {
      if (tty)
        std::printf("\r\033[K");
      std::fprintf(stderr,
                   "gopt-run: error: the loss is %s at step %lld (epoch "
                   "%lld); parameters not saved\n",
                   std::isnan(loss) ? "NaN" : "infinite",
                   static_cast<long long>(step),
                   static_cast<long long>(batch->epoch + 1));
      return false;
    }
    lossWindow += loss;
    ++windowSteps;
    if (step % o.logEvery == 0 || step == totalSteps) {
      if (tty)
        std::printf("\r\033[K");
      std::printf("epoch %lld step %lld/%lld  loss %.4f  %.0f samples/s",
                  static_cast<long long>(batch->epoch + 1),
                  static_cast<long long>(step),
                  static_cast<long long>(totalSteps), lossWindow / windowSteps,
                  samples / secondsSince(runStart));
      if (trainer->dynamicLossScaling())
        std::printf("  loss scale %g (%lld skipped)", trainer->lossScale(),
                    static_cast<long long>(trainer->skippedSteps()));
      std::printf("\n");
      lossWindow = 0;
      windowSteps = 0;
      std::fflush(stdout);
    } else if (tty && secondsSince(lastProgress) > 0.2) {
      // Progress only on a terminal: logs stay quiet.
      std::printf("\r\033[K  epoch %lld step %lld/%lld  loss %.4f",
                  static_cast<long long>(batch->epoch + 1),
                  static_cast<long long>(step),
                  static_cast<long long>(totalSteps), loss);
      std::fflush(stdout);
      lastProgress = Clock::now();
    }
    bool epochEnd = batch->lastOfEpoch || step == totalSteps;
    if (epochEnd && evalData && rank == 0) {
      GOPT_ASSIGN_OR_RETURN(EvalResult r, trainer->evaluate(evalData));
      if (tty)
        std::printf("\r\033[K");
      std::printf("epoch %lld: test accuracy %.2f%% (%lld of %lld), test "
                  "loss %.4f\n",
                  static_cast<long long>(batch->epoch + 1),
                  100.0 * r.accuracy(), static_cast<long long>(r.correct),
                  static_cast<long long>(r.total), r.meanLoss());
      std::fflush(stdout);
    }
  }
  double wall = secondsSince(runStart);
  // The first steps create kernels' caches and fault pages in.
  size_t warm = std::min<size_t>(stepSeconds.size() / 10, 10);
  std::vector<double> steady(stepSeconds.begin() + warm, stepSeconds.end());
  double med = median(steady);
  LoaderStats stats = loader->stats();
  std::printf("\nsteps: %zu, samples: %lld, wall %.2f s\n", stepSeconds.size(),
              static_cast<long long>(samples), wall);
  std::printf("step time (median after %zu warm-up steps): %.3f ms = %.0f "
              "samples/s compute; end to end %.0f samples/s\n",
              warm, med * 1e3, med > 0 ? o.batch * world / med : 0.0,
              samples / wall);
  if (o.communicator && world > 1) {
    CollectiveStats cs = o.communicator->stats();
    double steps = static_cast<double>(std::max<size_t>(1, stepSeconds.size()));
    // The step waited only for what backward did not hide: the all_reduce
    // rows of the profile.
    double exposedMs = 0;
    for (const OpProfile &p : trainer->session().opProfiles())
      if (p.kind == "all_reduce")
        exposedMs += p.totalMs;
    double totalMs = cs.seconds * 1e3;
    std::printf("all-reduce (%s, %d ranks): %.2f calls, %.2f MB and %.3f ms "
                "per step, %.3f ms of it exposed (%.0f%% hidden behind "
                "backward; exposed %.0f%% of the step time)\n",
                o.communicator->engine(), world, cs.calls / steps,
                cs.bytes / 1e6 / steps, totalMs / steps, exposedMs / steps,
                totalMs > 0 ? 100 * std::max(0.0, 1 - exposedMs / totalMs)
                            : 0.0,
                computeSeconds > 0 ? exposedMs / 10 / computeSeconds : 0.0);
  }
  std::printf("prefetch queue: mean fill %.2f of %lld, empty at %.0f%% of "
              "steps, waited %.2f s in total\n",
              stats.meanFill, static_cast<long long>(stats.capacity),
              100.0 * stats.fractionEmpty, stats.totalWaitSeconds);
  std::printf("%s\n", classifyBottleneck(stats, computeSeconds).c_str());
  if (o.communicator && world > 1)
    GOPT_RETURN_IF_ERROR(
        printRankInputSummary(*o.communicator, stats, computeSeconds));
  if (trainer->dynamicLossScaling())
    std::printf("loss scaling: %lld of %zu steps skipped (inf/NaN "
                "gradients), final scale %g\n",
                static_cast<long long>(trainer->skippedSteps()),
                stepSeconds.size(), trainer->lossScale());
  if (o.profile) {
    std::vector<OpProfile> rows = sortedProfiles(trainer->session());
    printTimeSplit(rows);
    printProfile(rows);
  }
  if (!o.traceFile.empty() && rank == 0 && !stepSeconds.empty()) {
    GOPT_RETURN_IF_ERROR(
        writeTrace(o.traceFile, trainer->session(), stepSeconds.back() * 1e3));
    std::printf("trace of the last step written to %s\n", o.traceFile.c_str());
  }
  // Every rank finished every step before rank 0 writes the parameters.
  if (o.communicator && world > 1)
    GOPT_RETURN_IF_ERROR(o.communicator->barrier());
  if (!o.saveParams.empty() && rank == 0) {
    Status saved = trainer->saveParameters(o.saveParams);
    if (!saved.ok())
      return Status(saved.code(), "--save-params: " + saved.message());
    std::printf("saved %zu parameters to %s/\n",
                trainer->parameterNames().size(), o.saveParams.c_str());
  }
  return true;
}

} // namespace gopt::tooling
