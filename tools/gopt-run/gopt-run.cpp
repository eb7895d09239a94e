//===- gopt-run.cpp - Execute, time, profile and compare plans ------------===//
//
// gopt-run MODEL [options]: runs MODEL on a backend with given or
// deterministic random inputs, reports latency, throughput and memory, and
// optionally a per-op profile, a Chrome trace, a JSON report, or a numeric
// comparison with another model or stored outputs.
//
// Exit status: 0 success, 1 runtime error or comparison beyond tolerance,
// 2 usage error.
//
//===----------------------------------------------------------------------===//
#include "Calibrate.h"
#include "FakeData.h"
#include "GradCheck.h"
#include "ModelLoader.h"
#include "NpyFileName.h"
#include "Profile.h"
#include "Train.h"
#include "gopt/runtime/Npy.h"
#include "gopt/runtime/Session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace gopt::runtime;
using gopt::run::fakeData;
using gopt::run::printProfile;
using gopt::run::sortedProfiles;
using gopt::run::sumOpMs;

namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

const char *kUsage = R"(usage: gopt-run MODEL [options]
  MODEL                  a .gplan plan, or a graph file (.mlir, .onnx, .pb,
                         .pbtxt) compiled on the fly when built with the compiler
  --pipeline P           pass pipeline run on MODEL before lowering, e.g.
                         'builtin.module(func.func(gopt-fuse-batch-norm))';
                         OTHER in --compare is lowered without it
  --optimize             run gopt's default pipeline for the backend first
                         (gopt-optimize{target=cpu|gpu})
  --precision P          with --optimize: f32 (default), bf16 or f16
                         (mixed precision, gopt-optimize{precision=P})
  --backend B            cpu (default), reference, or cuda
  --batch N              value of dynamic batch dimensions (default 1)
  --threads N            intra-op threads (default: library default)
  --memory-limit SIZE    most memory a session may plan, e.g. 512M or 4G
                         (default: the machine's physical memory)
  --input NAME=FILE.npy  input value (default: deterministic random data)
  --output-dir DIR       write each output as DIR/NAME.npy ('/' in NAME
                         spelled __)
  --warmup N             untimed runs first (default 50)
  --iterations N         timed runs (default 100)
  --profile              print a per-op time table
  --trace FILE.json      write a Chrome/Perfetto trace of one step
  --json FILE            write the report as JSON
  --compare OTHER        run MODEL and OTHER on the reference backend with the
                         same inputs and compare their outputs
  --compare-backend B    backend of --compare (default reference; cpu runs
                         large batches fast, e.g. top-1 agreement over 256)
  --compare-npy NAME=FILE.npy  compare output NAME with a stored array
  --labels FILE.npy      with --compare: integer class labels, one per input
                         row; each [N, C] output's top-1 accuracy for both
                         models (e.g. int8 against f32 on a validation set)
  --atol X               absolute tolerance (default 1e-5)
  --rtol X               relative tolerance (default 1e-4)

training (MODEL: a forward graph; gopt adds the loss, the backward graph
and the optimizer, and keeps parameters and optimizer state resident):
  --train                train instead of timing inference
  --data SPEC            fashion-mnist (the installed Fashion-MNIST),
                         idx:IMAGES,LABELS (MNIST IDX, .gz or raw),
                         npy:INPUTS,LABELS, tfrecord:FILE[,FILE...]
                         (tf.train.Example), or fake (constant; default)
  --eval                 report test accuracy after each epoch
  --eval-data SPEC       test data (default for fashion-mnist: its test set)
  --loss L               softmax-cross-entropy (default), mse, or none (the
                         graph returns a result named "loss")
  --optimizer O          adam (default) or sgd
  --lr X --momentum X --weight-decay X   optimizer settings
  --precision P          f32 (default), bf16 or f16: mixed-precision
                         training with f32 master weights
  --loss-scale S         dynamic[:INITIAL] (default for f16; initially
                         65536), none (default for f32 and bf16) or a
                         fixed scale N
  --batch N              batch size (default 64 with --train)
  --epochs N             epochs (default 1)   --steps N  steps instead
  --seed N               shuffling seed (default 1234)   --no-shuffle
  --normalize MEAN,STD   applied to inputs after scaling pixels to [0,1]
  --image-feature NAME --label-feature NAME   TFRecord feature names
  --prefetch N           batches the loader prepares ahead (default 4)
  --loader-threads N     input pipeline threads (default 2)
  --log-every K          print the mean loss every K steps (default 100)
  --profile              after training, the per-op time table of the step
  --save-params DIR      write the trained parameters as DIR/NAME.npy
  --load-params DIR      start from parameters saved by --save-params
  --data-only            time the input pipeline alone (no graph runs; fake
                         and tfrecord examples take MODEL's input shape,
                         [1,28,28] without a MODEL)
  --grad-check           compare autodiff's gradients of MODEL's loss with
                         finite differences (--backend reference by default,
                         --batch 2, --input NAME=FILE.npy, --loss, --atol,
                         --rtol, --epsilon (step, default 1e-2); labels
                         default to row % 2)

calibration (activation ranges for static int8 quantization,
docs/quantization.md):
  --calibrate            run MODEL over calibration batches and record the
                         range of every floating-point input and result of
                         conv2d, matmul, add, bias_add, relu, relu6, clip,
                         max_pool, avg_pool, global_avg_pool and concat ops,
                         and of the graph inputs; --input NAME=FILE.npy gives
                         samples along its first dimension, --batch N per run
                         (other inputs: deterministic random data)
  --calibration-out FILE.json  where the ranges go (required; written only
                         when calibration succeeds)
  --calibration-method M minmax (default), percentile, or entropy (TensorRT's
                         KL-divergence threshold)
  --percentile P         for the percentile method: the percentile of |x|
                         kept, in (0, 100] (default 99.99)
  --calibration-batches N  at most N batches (default: every full batch of
                         the --input files, or 1 batch of random data)
)";

struct Options {
  std::string model;
  std::string pipeline;
  bool optimize = false;
  std::string precision; // --precision, with --optimize
  std::string backend = "cpu";
  int64_t batch = 1;
  int threads = 0;
  size_t memoryLimit = 0;
  std::vector<std::pair<std::string, std::string>> inputs;
  std::string outputDir;
  int warmup = 50;
  int iterations = 100;
  bool profile = false;
  std::string traceFile;
  std::string jsonFile;
  std::string compareModel;
  std::string compareBackend = "reference";
  std::vector<std::pair<std::string, std::string>> compareNpy;
  std::string labelsFile; // --labels: class labels for --compare
  double atol = 1e-5;
  double rtol = 1e-4;
  bool train = false;
  bool gradCheck = false;
  bool batchGiven = false;
  bool backendGiven = false;
  bool tolerancesGiven = false;
  gopt::run::TrainOptions training;
  gopt::run::GradCheckOptions gradCheckOptions;
  bool calibrate = false;
  // The first calibration flag given, for the error when --calibrate is not.
  std::string calibrationFlag;
  bool percentileGiven = false;
  gopt::run::CalibrateOptions calibration;
};

struct UsageError {
  std::string message;
};

/// "4096", "64K", "512M", "4G": bytes, > 0.
size_t parseSize(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  unsigned shift = 0;
  if (end && *end && !end[1]) {
    switch (*end) {
    case 'K':
    case 'k':
      shift = 10;
      ++end;
      break;
    case 'M':
    case 'm':
      shift = 20;
      ++end;
      break;
    case 'G':
    case 'g':
      shift = 30;
      ++end;
      break;
    default:
      break;
    }
  }
  if (text.empty() || text[0] == '-' || *end || errno || v == 0 ||
      v > (SIZE_MAX >> shift))
    throw UsageError{flag + " expects a size in bytes > 0, optionally with " +
                     "K, M or G, got '" + text + "'"};
  return static_cast<size_t>(v) << shift;
}

int64_t parseInt(const std::string &flag, const std::string &text,
                 int64_t min) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < min)
    throw UsageError{flag + " expects an integer >= " + std::to_string(min) +
                     ", got '" + text + "'"};
  return v;
}

double parseDouble(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || v < 0)
    throw UsageError{flag + " expects a non-negative number, got '" + text +
                     "'"};
  return v;
}

std::pair<std::string, std::string> parseNameFile(const std::string &flag,
                                                  const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError{flag + " expects NAME=FILE.npy, got '" + text + "'"};
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// Throws UsageError (caught in main, never crossing the runtime API).
Options parseArgs(int argc, char **argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i], value;
    bool hasInlineValue = false;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos &&
        arg.rfind("--input", 0) != 0 && arg.rfind("--compare-npy", 0) != 0) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
      hasInlineValue = true;
    }
    auto next = [&]() -> std::string {
      if (hasInlineValue)
        return value;
      if (i + 1 >= args.size())
        throw UsageError{arg + " expects a value"};
      return args[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--backend") {
      o.backend = next();
      o.backendGiven = true;
    } else if (arg == "--pipeline") {
      o.pipeline = next();
    } else if (arg == "--optimize") {
      o.optimize = true;
    } else if (arg == "--precision") {
      o.precision = next();
      if (o.precision != "f32" && o.precision != "bf16" && o.precision != "f16")
        throw UsageError{"--precision expects f32, bf16 or f16, got '" +
                         o.precision + "'"};
    } else if (arg == "--batch") {
      o.batch = parseInt(arg, next(), 1);
      o.batchGiven = true;
    } else if (arg == "--grad-check") {
      o.gradCheck = true;
    } else if (arg == "--epsilon") {
      o.gradCheckOptions.epsilon = parseDouble(arg, next());
      if (!(o.gradCheckOptions.epsilon > 0))
        throw UsageError{"--epsilon expects a number > 0"};
    } else if (arg == "--calibrate") {
      o.calibrate = true;
    } else if (arg == "--calibration-out" || arg == "--calibration-method" ||
               arg == "--percentile" || arg == "--calibration-batches") {
      if (o.calibrationFlag.empty())
        o.calibrationFlag = arg;
      std::string v = next();
      if (arg == "--calibration-out") {
        o.calibration.out = v;
      } else if (arg == "--calibration-method") {
        std::optional<gopt::run::CalibrationMethod> method =
            gopt::run::parseCalibrationMethod(v);
        if (!method)
          throw UsageError{"--calibration-method expects minmax, percentile "
                           "or entropy, got '" +
                           v + "'"};
        o.calibration.method = *method;
      } else if (arg == "--percentile") {
        char *end = nullptr;
        double p = std::strtod(v.c_str(), &end);
        if (v.empty() || *end || !(p > 0 && p <= 100))
          throw UsageError{"--percentile expects a number in (0, 100], got '" +
                           v + "'"};
        o.calibration.percentile = p;
        o.percentileGiven = true;
      } else {
        o.calibration.maxBatches = parseInt(arg, v, 1);
      }
    } else if (arg == "--train") {
      o.train = true;
    } else if (arg == "--data-only") {
      o.train = true;
      o.training.dataOnly = true;
    } else if (arg == "--data") {
      o.training.data = next();
    } else if (arg == "--eval") {
      o.training.eval = true;
    } else if (arg == "--eval-data") {
      o.training.evalData = next();
      o.training.eval = true;
    } else if (arg == "--loss") {
      o.training.loss = next();
      if (o.training.loss != "softmax-cross-entropy" &&
          o.training.loss != "mse" && o.training.loss != "none")
        throw UsageError{"--loss expects softmax-cross-entropy, mse or none, "
                         "got '" +
                         o.training.loss + "'"};
    } else if (arg == "--optimizer") {
      o.training.optimizer = next();
      if (o.training.optimizer != "adam" && o.training.optimizer != "sgd")
        throw UsageError{"--optimizer expects adam or sgd, got '" +
                         o.training.optimizer + "'"};
    } else if (arg == "--lr") {
      o.training.lr = parseDouble(arg, next());
      if (!(o.training.lr > 0))
        throw UsageError{"--lr expects a number > 0"};
    } else if (arg == "--momentum") {
      o.training.momentum = parseDouble(arg, next());
    } else if (arg == "--loss-scale") {
      std::string v = next();
      std::string number = v.rfind("dynamic:", 0) == 0 ? v.substr(8) : v;
      char *end = nullptr;
      double scale = std::strtod(number.c_str(), &end);
      bool isNumber =
          !number.empty() && !*end && scale > 0 && std::isfinite(scale);
      if (v != "dynamic" && v != "none" && !isNumber)
        throw UsageError{"--loss-scale expects dynamic[:INITIAL], none or a "
                         "finite number > 0, got '" +
                         v + "'"};
      o.training.lossScale = v;
    } else if (arg == "--weight-decay") {
      o.training.weightDecay = parseDouble(arg, next());
    } else if (arg == "--epochs") {
      o.training.epochs = parseInt(arg, next(), 1);
    } else if (arg == "--steps") {
      o.training.steps = parseInt(arg, next(), 1);
    } else if (arg == "--seed") {
      o.training.seed = static_cast<uint64_t>(parseInt(arg, next(), 0));
    } else if (arg == "--no-shuffle") {
      o.training.shuffle = false;
    } else if (arg == "--normalize") {
      std::string v = next();
      size_t comma = v.find(',');
      if (comma == std::string::npos)
        throw UsageError{"--normalize expects MEAN,STD, got '" + v + "'"};
      o.training.normalizeMean =
          static_cast<float>(parseDouble(arg, v.substr(0, comma)));
      o.training.normalizeStd =
          static_cast<float>(parseDouble(arg, v.substr(comma + 1)));
      if (!(o.training.normalizeStd > 0))
        throw UsageError{"--normalize expects STD > 0"};
    } else if (arg == "--image-feature") {
      o.training.imageFeature = next();
    } else if (arg == "--label-feature") {
      o.training.labelFeature = next();
    } else if (arg == "--prefetch") {
      o.training.prefetch = static_cast<int>(parseInt(arg, next(), 1));
    } else if (arg == "--loader-threads") {
      o.training.loaderThreads = static_cast<int>(parseInt(arg, next(), 1));
    } else if (arg == "--log-every") {
      o.training.logEvery = parseInt(arg, next(), 1);
    } else if (arg == "--save-params") {
      o.training.saveParams = next();
    } else if (arg == "--load-params") {
      o.training.loadParams = next();
    } else if (arg == "--threads") {
      o.threads = static_cast<int>(parseInt(arg, next(), 1));
    } else if (arg == "--memory-limit") {
      o.memoryLimit = parseSize(arg, next());
    } else if (arg == "--input") {
      o.inputs.push_back(parseNameFile(arg, next()));
    } else if (arg.rfind("--input=", 0) == 0) {
      o.inputs.push_back(parseNameFile("--input", arg.substr(8)));
    } else if (arg == "--output-dir") {
      o.outputDir = next();
    } else if (arg == "--warmup") {
      o.warmup = static_cast<int>(parseInt(arg, next(), 0));
    } else if (arg == "--iterations") {
      o.iterations = static_cast<int>(parseInt(arg, next(), 1));
    } else if (arg == "--profile") {
      o.profile = true;
    } else if (arg == "--trace") {
      o.traceFile = next();
    } else if (arg == "--json") {
      o.jsonFile = next();
    } else if (arg == "--compare") {
      o.compareModel = next();
    } else if (arg == "--compare-backend") {
      o.compareBackend = next();
      if (o.compareBackend != "cpu" && o.compareBackend != "reference")
        throw UsageError{"--compare-backend expects cpu or reference, got '" +
                         o.compareBackend + "'"};
    } else if (arg == "--labels") {
      o.labelsFile = next();
    } else if (arg == "--compare-npy") {
      o.compareNpy.push_back(parseNameFile(arg, next()));
    } else if (arg.rfind("--compare-npy=", 0) == 0) {
      o.compareNpy.push_back(parseNameFile("--compare-npy", arg.substr(14)));
    } else if (arg == "--atol") {
      o.atol = parseDouble(arg, next());
      o.tolerancesGiven = true;
    } else if (arg == "--rtol") {
      o.rtol = parseDouble(arg, next());
      o.tolerancesGiven = true;
    } else if (arg.rfind("-", 0) == 0) {
      throw UsageError{"unknown option '" + arg + "'"};
    } else if (o.model.empty()) {
      o.model = arg;
    } else {
      throw UsageError{"unexpected argument '" + arg +
                       "' (one MODEL only; use --compare OTHER)"};
    }
  }
  if (o.model.empty() && !o.training.dataOnly)
    throw UsageError{"no MODEL given"};
  if (o.gradCheck) {
    if (o.train || !o.compareModel.empty() || o.optimize || !o.pipeline.empty())
      throw UsageError{"--grad-check cannot be combined with --train, "
                       "--compare, --optimize or --pipeline"};
    o.gradCheckOptions.model = o.model;
    if (o.backendGiven)
      o.gradCheckOptions.backend = o.backend;
    if (o.batchGiven)
      o.gradCheckOptions.batch = o.batch;
    o.gradCheckOptions.loss = o.training.loss;
    o.gradCheckOptions.inputs = o.inputs;
    if (o.tolerancesGiven) {
      o.gradCheckOptions.atol = o.atol;
      o.gradCheckOptions.rtol = o.rtol;
    }
  }
  if (o.train) {
    o.training.model = o.model;
    o.training.backend = o.backend;
    o.training.threads = o.threads;
    o.training.memoryLimit = o.memoryLimit;
    o.training.batch = o.batchGiven ? o.batch : 64;
    o.training.profile = o.profile;
    o.training.precision = o.precision.empty() ? "f32" : o.precision;
    if (!o.compareModel.empty() || o.optimize || !o.pipeline.empty())
      throw UsageError{"--train cannot be combined with --compare, "
                       "--optimize or --pipeline"};
  }
  if (o.optimize && !o.pipeline.empty())
    throw UsageError{"--optimize and --pipeline are exclusive"};
  if (!o.precision.empty() && !o.optimize && !o.train)
    throw UsageError{"--precision needs --optimize or --train"};
  if (!o.training.lossScale.empty() && !o.train)
    throw UsageError{"--loss-scale needs --train"};
  if (o.optimize)
    o.pipeline = std::string("builtin.module(gopt-optimize{target=") +
                 (o.backend == "cuda" ? "gpu" : "cpu") +
                 (o.precision.empty() ? "" : " precision=" + o.precision) +
                 "})";
  if (o.backend != "cpu" && o.backend != "reference" && o.backend != "cuda")
    throw UsageError{"unknown backend '" + o.backend +
                     "' (expected cpu, reference or cuda)"};
  if (!o.labelsFile.empty() && o.compareModel.empty())
    throw UsageError{"--labels needs --compare (the accuracy of both models "
                     "on the same inputs)"};
  if (!o.calibrate && !o.calibrationFlag.empty())
    throw UsageError{o.calibrationFlag + " needs --calibrate"};
  if (o.calibrate) {
    if (o.calibration.out.empty())
      throw UsageError{"--calibrate needs --calibration-out FILE.json"};
    if (o.train || o.gradCheck || !o.compareModel.empty() ||
        !o.compareNpy.empty())
      throw UsageError{"--calibrate cannot be combined with --train, "
                       "--grad-check, --compare or --compare-npy"};
    if (o.percentileGiven &&
        o.calibration.method != gopt::run::CalibrationMethod::kPercentile)
      throw UsageError{"--percentile applies only to --calibration-method "
                       "percentile"};
    o.calibration.model = o.model;
    o.calibration.pipeline = o.pipeline;
    o.calibration.backend = o.backend;
    o.calibration.batch = o.batch;
    o.calibration.threads = o.threads;
    o.calibration.memoryLimit = o.memoryLimit;
    o.calibration.inputs = o.inputs;
  }
  return o;
}

std::vector<double> toDoubles(const Tensor &t) {
  std::vector<double> v(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i) {
    switch (t.dtype()) {
    case DType::kF32:
      v[i] = t.data<float>()[i];
      break;
    case DType::kF16:
      v[i] = halfToFloat(t.data<uint16_t>()[i]);
      break;
    case DType::kBF16:
      v[i] = bf16ToFloat(t.data<uint16_t>()[i]);
      break;
    case DType::kI8:
      v[i] = t.data<int8_t>()[i];
      break;
    case DType::kU8:
      v[i] = t.data<uint8_t>()[i];
      break;
    case DType::kI32:
      v[i] = t.data<int32_t>()[i];
      break;
    case DType::kI64:
      v[i] = static_cast<double>(t.data<int64_t>()[i]);
      break;
    case DType::kBool:
      v[i] = t.data<bool>()[i];
      break;
    default:
      break;
    }
  }
  return v;
}

struct Comparison {
  double maxAbs = 0;
  double maxRel = 0;
  int64_t violations = 0;
};

// numpy.allclose's criterion: |a - b| <= atol + rtol * |b|, b the expected.
StatusOr<Comparison> compareTensors(const std::string &what, const Tensor &a,
                                    const Tensor &expected, double atol,
                                    double rtol) {
  if (a.shape() != expected.shape())
    return invalidArgument(what, ": shape ", shapeToString(a.shape()),
                           " differs from expected ",
                           shapeToString(expected.shape()));
  std::vector<double> x = toDoubles(a), y = toDoubles(expected);
  Comparison c;
  for (size_t i = 0; i < x.size(); ++i) {
    double diff = std::fabs(x[i] - y[i]);
    bool bothNan = std::isnan(x[i]) && std::isnan(y[i]);
    if (bothNan)
      continue;
    if (std::isnan(diff))
      diff = INFINITY;
    double rel = diff / std::max(std::fabs(y[i]), 1e-30);
    c.maxAbs = std::max(c.maxAbs, diff);
    if (diff > 0)
      c.maxRel = std::max(c.maxRel, rel);
    if (!(diff <= atol + rtol * std::fabs(y[i])))
      ++c.violations;
  }
  return c;
}

/// For a classifier's [N, C] scores: in how many rows the two tensors pick
/// the same class, and the mean overlap of their top-k (k = min(5, C))
/// sets; also the mean absolute error. nullopt for other shapes.
/// Agreement means little when the reference `b` picks one class for every
/// input (e.g. a randomly initialized network whose scores hardly depend
/// on the input): `referenceClasses` counts the distinct top-1 classes of
/// `b`, and the spreads say how much its scores vary across inputs (the
/// mean over classes of the standard deviation over rows) against across
/// classes (the mean over rows of the standard deviation over classes).
struct ClassAgreement {
  int64_t rows = 0, top1Same = 0, k = 0, referenceClasses = 0;
  int64_t referenceClass = 0; // b's top-1 of row 0
  double topKOverlap = 0, meanAbs = 0;
  // Signal-to-quantization-noise ratio, 10 log10(sum b^2 / sum (a - b)^2)
  // in dB (infinite when a == b), the usual figure for quantized outputs.
  double sqnrDb = 0;
  double spreadAcrossInputs = 0, spreadAcrossClasses = 0;
  std::vector<int64_t> top1, referenceTop1; // per row, of a and of b
};

/// The mean standard deviation of the [rows, cols] `v` along rows
/// (byRow = false: over the rows of each column) or along each row.
double meanStdDev(const std::vector<double> &v, int64_t rows, int64_t cols,
                  bool byRow) {
  int64_t groups = byRow ? rows : cols, len = byRow ? cols : rows;
  double total = 0;
  for (int64_t g = 0; g < groups; ++g) {
    auto at = [&](int64_t i) {
      return byRow ? v[g * cols + i] : v[i * cols + g];
    };
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < len; ++i)
      mean += at(i);
    mean /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i)
      sq += (at(i) - mean) * (at(i) - mean);
    total += std::sqrt(sq / static_cast<double>(len));
  }
  return total / static_cast<double>(groups);
}

std::optional<ClassAgreement> compareClasses(const Tensor &a, const Tensor &b) {
  if (a.shape().size() != 2 || a.shape() != b.shape() ||
      !isFloatDType(a.dtype()) || !isFloatDType(b.dtype()))
    return std::nullopt;
  int64_t rows = a.shape()[0], cols = a.shape()[1];
  if (rows == 0 || cols < 2)
    return std::nullopt;
  std::vector<double> x = toDoubles(a), y = toDoubles(b);
  ClassAgreement r;
  r.rows = rows;
  r.k = std::min<int64_t>(5, cols);
  auto topK = [&](const std::vector<double> &v, int64_t row) {
    std::vector<int64_t> idx(cols);
    for (int64_t c = 0; c < cols; ++c)
      idx[c] = c;
    // Ties broken by the lower index, so equal scores agree.
    std::partial_sort(idx.begin(), idx.begin() + r.k, idx.end(),
                      [&](int64_t i, int64_t j) {
                        double vi = v[row * cols + i], vj = v[row * cols + j];
                        return vi > vj || (vi == vj && i < j);
                      });
    idx.resize(r.k);
    return idx;
  };
  double overlap = 0, absSum = 0;
  std::set<int64_t> referenceTop1;
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<int64_t> ta = topK(x, row), tb = topK(y, row);
    r.top1Same += ta[0] == tb[0];
    r.top1.push_back(ta[0]);
    r.referenceTop1.push_back(tb[0]);
    referenceTop1.insert(tb[0]);
    if (row == 0)
      r.referenceClass = tb[0];
    for (int64_t i : ta)
      overlap += std::count(tb.begin(), tb.end(), i);
  }
  r.referenceClasses = static_cast<int64_t>(referenceTop1.size());
  r.spreadAcrossInputs = meanStdDev(y, rows, cols, /*byRow=*/false);
  r.spreadAcrossClasses = meanStdDev(y, rows, cols, /*byRow=*/true);
  double signal = 0, noise = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    absSum += std::fabs(x[i] - y[i]);
    signal += y[i] * y[i];
    noise += (x[i] - y[i]) * (x[i] - y[i]);
  }
  r.sqnrDb = noise == 0 ? INFINITY : 10 * std::log10(signal / noise);
  r.topKOverlap = overlap / (static_cast<double>(rows) * r.k);
  r.meanAbs = absSum / static_cast<double>(x.size());
  return r;
}

std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    default:
      if (static_cast<unsigned char>(ch) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
        out += buf;
      } else {
        out += ch;
      }
    }
  }
  return out;
}

std::string formatBytes(size_t bytes) {
  char buf[64];
  if (bytes >= (1u << 20))
    std::snprintf(buf, sizeof(buf), "%.2f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof(buf), "%.2f KiB", bytes / 1024.0);
  else
    std::snprintf(buf, sizeof(buf), "%zu B", bytes);
  return buf;
}

// The inputs the session will see: from --input files or fake data.
StatusOr<std::map<std::string, Tensor>> prepareInputs(const Session &session,
                                                      const Options &options) {
  std::map<std::string, Tensor> inputs;
  std::vector<TensorDesc> descs = session.inputs();
  for (const auto &[name, file] : options.inputs) {
    bool known =
        std::any_of(descs.begin(), descs.end(),
                    [&](const TensorDesc &d) { return d.name == name; });
    if (!known)
      return notFound("--input ", name, ": the model has no input named '",
                      name, "'");
    GOPT_ASSIGN_OR_RETURN(Tensor t, readNpy(file));
    inputs[name] = t;
  }
  uint32_t seed = 0;
  for (const TensorDesc &d : descs) {
    ++seed;
    if (!inputs.count(d.name))
      inputs[d.name] = fakeData(d, seed);
  }
  return inputs;
}

Status setInputs(Session &session,
                 const std::map<std::string, Tensor> &inputs) {
  for (const auto &[name, t] : inputs)
    GOPT_RETURN_IF_ERROR(session.setInput(name, t));
  return Status::success();
}

// `pipeline` runs on graph-file models before lowering (MODEL only: OTHER in
// --compare is the unoptimized reference).
StatusOr<std::unique_ptr<Session>> makeSession(const std::string &model,
                                               const Options &options,
                                               const std::string &backend,
                                               const std::string &pipeline) {
  gopt::run::ModelLoadOptions load;
  load.backend = backend;
  load.batchSize = options.batch;
  load.pipeline = pipeline;
  GOPT_ASSIGN_OR_RETURN(Plan plan, gopt::run::loadModelAsPlan(model, load));
  gopt::run::warnIfReducedPrecisionIsSlow(plan, backend);
  SessionOptions so;
  so.backend = backend;
  so.batchSize = options.batch;
  so.threads = options.threads;
  so.memoryLimitBytes = options.memoryLimit;
  return Session::create(plan, so);
}

/// --labels: integer class labels, one per row (int64, int32 or uint8).
StatusOr<std::vector<int64_t>> readLabels(const std::string &file) {
  StatusOr<Tensor> read = readNpy(file);
  if (!read.ok())
    return Status(read.status().code(), "--labels: " + read.status().message());
  const Tensor &t = *read;
  if (t.shape().size() != 1)
    return invalidArgument("--labels '", file, "': expected a 1-D array of ",
                           "class labels, got shape ",
                           shapeToString(t.shape()));
  std::vector<int64_t> labels(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i) {
    switch (t.dtype()) {
    case DType::kI64:
      labels[i] = t.data<int64_t>()[i];
      break;
    case DType::kI32:
      labels[i] = t.data<int32_t>()[i];
      break;
    case DType::kU8:
      labels[i] = t.data<uint8_t>()[i];
      break;
    default:
      return invalidArgument("--labels '", file, "': expected int64, int32 ",
                             "or uint8 labels, got ", dtypeName(t.dtype()));
    }
  }
  return labels;
}

/// The top-1 accuracy of `a` (the model) and `b` (--compare) against
/// `labels` on output `name` ([rows, classes]).
Status printAccuracy(const std::string &name, const ClassAgreement &agreement,
                     int64_t classes, const std::vector<int64_t> &labels,
                     const std::string &file) {
  if (static_cast<int64_t>(labels.size()) != agreement.rows)
    return invalidArgument("--labels '", file, "' has ", labels.size(),
                           " labels for the ", agreement.rows, " rows of ",
                           "output '", name,
                           "' (set --batch to the number "
                           "of inputs)");
  int64_t correct = 0, referenceCorrect = 0;
  for (int64_t row = 0; row < agreement.rows; ++row) {
    int64_t label = labels[row];
    if (label < 0 || label >= classes)
      return invalidArgument("--labels '", file, "': label ", row, " is ",
                             label, ", outside the ", classes, " classes of ",
                             "output '", name, "'");
    correct += agreement.top1[row] == label;
    referenceCorrect += agreement.referenceTop1[row] == label;
  }
  double n = static_cast<double>(agreement.rows);
  std::printf("%s: accuracy %lld/%lld (%.2f%%), reference %lld/%lld "
              "(%.2f%%): %+.2f points\n",
              name.c_str(), static_cast<long long>(correct),
              static_cast<long long>(agreement.rows), 100.0 * correct / n,
              static_cast<long long>(referenceCorrect),
              static_cast<long long>(agreement.rows),
              100.0 * referenceCorrect / n,
              100.0 * (correct - referenceCorrect) / n);
  return Status::success();
}

// --compare: both models on the reference backend with the same inputs.
StatusOr<bool> runCompare(const Options &options) {
  std::vector<int64_t> labels;
  if (!options.labelsFile.empty()) {
    // Read first: a bad file fails before two sessions are built.
    GOPT_ASSIGN_OR_RETURN(labels, readLabels(options.labelsFile));
  }
  GOPT_ASSIGN_OR_RETURN(auto a,
                        makeSession(options.model, options,
                                    options.compareBackend, options.pipeline));
  GOPT_ASSIGN_OR_RETURN(auto b, makeSession(options.compareModel, options,
                                            options.compareBackend, ""));
  GOPT_ASSIGN_OR_RETURN(auto inputs, prepareInputs(*a, options));
  for (const TensorDesc &d : b->inputs())
    if (!inputs.count(d.name))
      return notFound("'", options.compareModel, "' has input '", d.name,
                      "' that '", options.model, "' lacks");
  GOPT_RETURN_IF_ERROR(setInputs(*a, inputs));
  for (const auto &[name, t] : inputs) {
    bool used = false;
    for (const TensorDesc &d : b->inputs())
      used |= d.name == name;
    if (used)
      GOPT_RETURN_IF_ERROR(b->setInput(name, t));
  }
  GOPT_RETURN_IF_ERROR(a->run());
  GOPT_RETURN_IF_ERROR(b->run());
  bool allClose = true;
  std::vector<std::pair<std::string, std::optional<ClassAgreement>>> agreements;
  std::map<std::string, int64_t> classes; // of each [N, C] output
  std::printf("%-24s %14s %14s  %s\n", "output", "max_abs_err", "max_rel_err",
              "result");
  for (const TensorDesc &d : a->outputs()) {
    GOPT_ASSIGN_OR_RETURN(Tensor ta, a->output(d.name));
    StatusOr<Tensor> tb = b->output(d.name);
    if (!tb.ok())
      return notFound("'", options.compareModel, "' has no output '", d.name,
                      "'");
    GOPT_ASSIGN_OR_RETURN(Comparison c,
                          compareTensors("output '" + d.name + "'", ta, *tb,
                                         options.atol, options.rtol));
    bool ok = c.violations == 0;
    allClose &= ok;
    std::printf("%-24s %14.6g %14.6g  %s\n", d.name.c_str(), c.maxAbs, c.maxRel,
                ok ? "ok" : "MISMATCH");
    agreements.emplace_back(d.name, compareClasses(ta, *tb));
    if (ta.shape().size() == 2)
      classes[d.name] = ta.shape()[1];
  }
  bool anyClassifier = false;
  for (const auto &[name, agreement] : agreements)
    anyClassifier |= agreement.has_value();
  if (!labels.empty() && !anyClassifier)
    return invalidArgument("--labels '", options.labelsFile, "': the model ",
                           "has no classifier output ([N, C] scores with C ",
                           ">= 2) to score");
  // Classifier outputs ([N, C]): how often the two models agree, the figure
  // that matters for quantized or reduced-precision graphs.
  for (const auto &[name, agreement] : agreements) {
    if (!agreement)
      continue;
    std::printf("%s: mean_abs_err %.6g, top-1 agreement %lld/%lld (%.2f%%), "
                "top-%lld overlap %.2f%%, SQNR %.1f dB\n",
                name.c_str(), agreement->meanAbs,
                static_cast<long long>(agreement->top1Same),
                static_cast<long long>(agreement->rows),
                100.0 * agreement->top1Same / agreement->rows,
                static_cast<long long>(agreement->k),
                100.0 * agreement->topKOverlap, agreement->sqnrDb);
    if (agreement->rows > 1 && agreement->referenceClasses == 1)
      std::printf(
          "note: %s: the reference's top-1 is class %lld for all %lld "
          "inputs (its scores vary by %.3g across inputs, %.3g "
          "across classes): top-k agreement says little about "
          "accuracy here; compare the errors\n",
          name.c_str(), static_cast<long long>(agreement->referenceClass),
          static_cast<long long>(agreement->rows),
          agreement->spreadAcrossInputs, agreement->spreadAcrossClasses);
    if (!options.labelsFile.empty())
      GOPT_RETURN_IF_ERROR(printAccuracy(name, *agreement, classes[name],
                                         labels, options.labelsFile));
  }
  std::printf("tolerance: atol %g, rtol %g: %s\n", options.atol, options.rtol,
              allClose ? "outputs match" : "outputs differ");
  return allClose;
}

double percentile(std::vector<double> sorted, double q) {
  size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  return sorted[std::min(sorted.size() - 1, rank ? rank - 1 : 0)];
}

Status writeTrace(const std::string &path, const Session &session,
                  double stepMs) {
  std::ofstream out(path);
  if (!out)
    return notFound("cannot open trace file '", path, "' for writing");
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  out << "{\"name\":\"step\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":0,\"dur\":"
      << stepMs * 1000 << ",\"pid\":1,\"tid\":0}";
  for (const OpProfile &p : session.opProfiles())
    out << ",\n{\"name\":\"" << jsonEscape(p.name) << "\",\"cat\":\""
        << jsonEscape(p.kind)
        << "\",\"ph\":\"X\",\"ts\":" << p.lastStartMs * 1000
        << ",\"dur\":" << p.lastMs * 1000
        << ",\"pid\":1,\"tid\":1,\"args\":{\"kind\":\"" << jsonEscape(p.kind)
        << "\",\"device\":\"" << jsonEscape(p.device)
        << "\",\"implementation\":\"" << jsonEscape(p.implementation) << "\"}}";
  out << "\n]}\n";
  out.close();
  if (!out)
    return dataLoss("error writing trace file '", path, "'");
  return Status::success();
}

struct Timing {
  double medianMs = 0, p90Ms = 0, minMs = 0, meanMs = 0;
};

Status writeJson(const std::string &path, const Options &options,
                 const Timing &t, double throughput, const MemoryStats &m,
                 const std::vector<OpProfile> &rows) {
  std::ofstream out(path);
  if (!out)
    return notFound("cannot open JSON file '", path, "' for writing");
  double total = sumOpMs(rows);
  out << "{\n  \"model\": \"" << jsonEscape(options.model) << "\",\n"
      << "  \"backend\": \"" << jsonEscape(options.backend) << "\",\n"
      << "  \"batch\": " << options.batch << ",\n"
      << "  \"threads\": " << options.threads << ",\n"
      << "  \"warmup\": " << options.warmup << ",\n"
      << "  \"iterations\": " << options.iterations << ",\n"
      << "  \"median_ms\": " << t.medianMs << ",\n"
      << "  \"p90_ms\": " << t.p90Ms << ",\n"
      << "  \"min_ms\": " << t.minMs << ",\n"
      << "  \"mean_ms\": " << t.meanMs << ",\n"
      << "  \"throughput_per_s\": " << throughput << ",\n"
      << "  \"peak_memory_bytes\": " << m.totalBytes() << ",\n"
      << "  \"arena_bytes\": " << m.arenaBytes << ",\n"
      << "  \"intermediate_bytes\": " << m.intermediateBytes << ",\n"
      << "  \"constant_bytes\": " << m.constantBytes << ",\n"
      << "  \"workspace_bytes\": " << m.workspaceBytes << ",\n"
      << "  \"ops\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const OpProfile &p = rows[i];
    out << (i ? "," : "") << "\n    {\"name\": \"" << jsonEscape(p.name)
        << "\", \"kind\": \"" << jsonEscape(p.kind) << "\", \"device\": \""
        << jsonEscape(p.device) << "\", \"implementation\": \""
        << jsonEscape(p.implementation) << "\", \"calls\": " << p.calls
        << ", \"total_ms\": " << p.totalMs
        << ", \"mean_ms\": " << (p.calls ? p.totalMs / p.calls : 0.0)
        << ", \"percent\": " << (total > 0 ? 100.0 * p.totalMs / total : 0.0)
        << "}";
  }
  out << "\n  ]\n}\n";
  out.close();
  if (!out)
    return dataLoss("error writing JSON file '", path, "'");
  return Status::success();
}

StatusOr<bool> runModel(const Options &options) {
  GOPT_ASSIGN_OR_RETURN(
      auto session,
      makeSession(options.model, options, options.backend, options.pipeline));
  GOPT_ASSIGN_OR_RETURN(auto inputs, prepareInputs(*session, options));
  GOPT_RETURN_IF_ERROR(setInputs(*session, inputs));

  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < options.warmup; ++i)
    GOPT_RETURN_IF_ERROR(session->run());
  session->resetProfiles();
  std::vector<double> times;
  for (int i = 0; i < options.iterations; ++i) {
    Clock::time_point start = Clock::now();
    GOPT_RETURN_IF_ERROR(session->run());
    times.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - start)
            .count());
  }
  std::vector<OpProfile> rows = sortedProfiles(*session);
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  Timing t;
  t.medianMs = percentile(sorted, 0.5);
  t.p90Ms = percentile(sorted, 0.9);
  t.minMs = sorted.front();
  for (double v : times)
    t.meanMs += v / times.size();
  double throughput = t.medianMs > 0 ? options.batch * 1000.0 / t.medianMs : 0;
  MemoryStats m = session->memoryStats();

  const char *waitPolicy = std::getenv("OMP_WAIT_POLICY");
  std::printf("model: %s  backend: %s  batch: %lld  threads: %d  "
              "omp-wait: %s\n",
              options.model.c_str(), options.backend.c_str(),
              static_cast<long long>(options.batch), options.threads,
              waitPolicy ? waitPolicy : "default");
  std::printf("latency (ms): median %.4f  p90 %.4f  min %.4f  (%d iterations "
              "after %d warm-up)\n",
              t.medianMs, t.p90Ms, t.minMs, options.iterations, options.warmup);
  std::printf("throughput: %.2f samples/s\n", throughput);
  std::printf("memory: arena %s vs. %s for all intermediates without reuse; "
              "constants %s; total %s\n",
              formatBytes(m.arenaBytes).c_str(),
              formatBytes(m.intermediateBytes).c_str(),
              formatBytes(m.constantBytes).c_str(),
              formatBytes(m.totalBytes()).c_str());
  if (options.profile)
    printProfile(rows);

  if (!options.traceFile.empty()) {
    // One more step, so the trace shows a single run.
    Clock::time_point start = Clock::now();
    GOPT_RETURN_IF_ERROR(session->run());
    double stepMs =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    GOPT_RETURN_IF_ERROR(writeTrace(options.traceFile, *session, stepMs));
  }
  if (!options.jsonFile.empty())
    GOPT_RETURN_IF_ERROR(
        writeJson(options.jsonFile, options, t, throughput, m, rows));
  if (!options.outputDir.empty()) {
    mkdir(options.outputDir.c_str(), 0777);
    for (const TensorDesc &d : session->outputs()) {
      GOPT_ASSIGN_OR_RETURN(Tensor out, session->output(d.name));
      GOPT_RETURN_IF_ERROR(writeNpy(
          options.outputDir + "/" + gopt::run::npyFileName(d.name), out));
    }
  }
  bool allClose = true;
  for (const auto &[name, file] : options.compareNpy) {
    StatusOr<Tensor> actual = session->output(name);
    if (!actual.ok())
      return notFound("--compare-npy ", name, ": the model has no output '",
                      name, "'");
    GOPT_ASSIGN_OR_RETURN(Tensor expected, readNpy(file));
    GOPT_ASSIGN_OR_RETURN(
        Comparison c,
        compareTensors("output '" + name + "' vs. '" + file + "'", *actual,
                       expected, options.atol, options.rtol));
    bool ok = c.violations == 0;
    allClose &= ok;
    std::printf("compare %s with %s: max_abs_err %.6g max_rel_err %.6g: %s\n",
                name.c_str(), file.c_str(), c.maxAbs, c.maxRel,
                ok ? "ok" : "MISMATCH");
  }
  return allClose;
}

} // namespace

/// libgomp's default wait policy spins at barriers; with 2 threads on a
/// loaded machine a pre-empted thread stalls every parallel region (measured:
/// 100 ms vs. 0.35 ms per mnist_cnn inference at batch 1). libgomp reads the
/// policy only when it loads, so gopt-run re-executes itself once with
/// OMP_WAIT_POLICY=passive unless the user chose a policy.
static void preferPassiveOpenMPWaiting(char **argv) {
  if (std::getenv("OMP_WAIT_POLICY"))
    return;
  setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  execv("/proc/self/exe", argv);
  // If re-executing fails, run on with the default policy.
}

int main(int argc, char **argv) {
  preferPassiveOpenMPWaiting(argv);
  Options options;
  try {
    options = parseArgs(argc, argv);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "gopt-run: error: %s\n%s", e.message.c_str(),
                 "run 'gopt-run --help' for usage\n");
    return kExitUsage;
  }
  StatusOr<bool> result =
      options.calibrate   ? gopt::run::runCalibration(options.calibration)
      : options.gradCheck ? gopt::run::runGradCheck(options.gradCheckOptions)
      : options.train     ? gopt::run::runTraining(options.training)
      : options.compareModel.empty() ? runModel(options)
                                     : runCompare(options);
  if (!result.ok()) {
    std::fprintf(stderr, "gopt-run: error: %s\n",
                 result.status().message().c_str());
    return kExitRuntime;
  }
  return *result ? 0 : kExitRuntime;
}
