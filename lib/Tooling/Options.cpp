//===- Options.cpp - gopt-run's command line ------------------------------===//
//
// A hand-written parser rather than llvm::cl: the runtime-only build
// (GOPT_BUILD_COMPILER=OFF) has no LLVM. Flags take their value as the next
// argument or after '=' (--batch=8); --input and --compare-npy values hold
// '=' themselves (NAME=FILE.npy).
//
//===----------------------------------------------------------------------===//
#include "gopt/Tooling/Options.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace gopt::tooling {

using namespace runtime;

namespace {

const char *const kUsage = R"(usage: gopt-run MODEL [options]
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
  --threads N            intra-op threads (default: library default); idle
                         threads spin about 5 ms, then sleep, or sleep at
                         once when other tasks keep the CPUs busy;
                         OMP_WAIT_POLICY and KMP_BLOCKTIME override it
  --affinity MODE        none (default): threads go where the kernel puts
                         them; cores: each thread pinned to a core of its
                         own, local ranks (--nproc, torchrun, mpirun) on
                         disjoint cores; OMP_PLACES overrides it
  --memory-limit SIZE    most memory a session may plan, e.g. 512M or 4G
                         (default: the machine's physical memory)
  --input NAME=FILE.npy  input value (default: deterministic random data)
  --output-dir DIR       write each output as DIR/NAME.npy ('/' in NAME
                         spelled __)
  --warmup N             untimed runs first (default 50)
  --iterations N         timed runs (default 100)
  --profile              print a per-op time table
  --trace FILE.json      write a Chrome/Perfetto trace of one step (with
                         --train: the last training step; collectives on
                         their own track)
  --json FILE            write the report as JSON
  --compare OTHER        run MODEL and OTHER on the reference backend with the
                         same inputs and compare their outputs
  --compare-backend B    backend of --compare (default reference; cpu runs
                         large batches fast, e.g. top-1 agreement over 256)
  --compare-npy NAME=FILE.npy  compare output NAME with a stored array
  --npy-u16-as-bf16      a uint16 .npy given for a bf16 input or output holds
                         bf16 bit patterns (numpy has no bfloat16; onnx's
                         numpy_helper writes bf16 tensors so)
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
                         (tf.train.Example), or fake (default: one batch of
                         fixed random examples and labels, repeated)
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
  --layout L             NCHW, NHWC or auto (default: NHWC on the CPU,
                         where oneDNN's gradient kernels read channels-last
                         activations as they are; the graph's own elsewhere)
  --batch N              batch size (default 64 with --train)
  --epochs N             epochs (default 1)   --steps N  steps instead
  --seed N               shuffling seed (default 1234)   --no-shuffle
  --normalize MEAN,STD   applied to inputs after scaling pixels to [0,1]
  --image-feature NAME --label-feature NAME   TFRecord feature names
  --prefetch N           batches the loader prepares ahead (default 4)
  --loader-threads N     input pipeline threads (default 2)
  --log-every K          print the mean loss every K steps (default 100)
  --profile              after training, the per-op time table of the step
  --nproc N              data-parallel training on N local processes (each
                         reads its own shard; --batch is per rank); ranks
                         started by torchrun (RANK, WORLD_SIZE, MASTER_ADDR,
                         MASTER_PORT) or mpirun join without it
  --collective-timeout S  a collective (or the start-up) that takes longer
                         fails (default 300)
  --bucket-mb X          gradients per all-reduce bucket (default 25)
  --sync-batch-norm      batch norms use the statistics of the global batch
                         (every rank's), as PyTorch's SyncBatchNorm (default:
                         each rank its own batch's)
  --save-params DIR      write the trained parameters as DIR/NAME.npy
  --save-plan FILE.gplan  compile the training step, write it and exit: it
                         trains with `gopt-run FILE.gplan --train` where no
                         compiler (MLIR) is installed, e.g. on a GPU machine
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

/// Everything the flags say, before it is checked and split by mode.
struct CommandLine {
  bool help = false;
  std::string model;
  std::string pipeline;
  bool optimize = false;
  std::string precision; // --precision, with --optimize
  std::string backend = "cpu";
  int64_t batch = 1;
  int threads = 0;
  std::string affinity = "none";
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
  bool npyU16AsBf16 = false;
  std::string labelsFile; // --labels: class labels for --compare
  double atol = 1e-5;
  double rtol = 1e-4;
  bool train = false;
  bool gradCheck = false;
  bool batchGiven = false;
  bool backendGiven = false;
  bool layoutGiven = false;
  bool tolerancesGiven = false;
  TrainOptions training;
  GradCheckOptions gradCheckOptions;
  bool calibrate = false;
  // The first calibration flag given, for the error when --calibrate is not.
  std::string calibrationFlag;
  bool percentileGiven = false;
  CalibrateOptions calibration;
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

// Throws UsageError, which parseToolArgs turns into a Status: exceptions
// never cross the library's API.
CommandLine parseCommandLine(const std::vector<std::string> &args) {
  CommandLine o;
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
      // As before any later argument is looked at.
      o.help = true;
      return o;
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
        std::optional<CalibrationMethod> method = parseCalibrationMethod(v);
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
    } else if (arg == "--layout") {
      o.training.layout = next();
      if (o.training.layout != "NCHW" && o.training.layout != "NHWC" &&
          o.training.layout != "auto")
        throw UsageError{"--layout expects NCHW, NHWC or auto, got '" +
                         o.training.layout + "'"};
      o.layoutGiven = true;
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
    } else if (arg == "--nproc") {
      o.training.nproc = static_cast<int>(parseInt(arg, next(), 1));
      // The ranks run the same command line without --nproc.
      for (size_t k = 0; k < args.size(); ++k) {
        if (args[k] == "--nproc") {
          ++k;
          continue;
        }
        if (args[k].rfind("--nproc=", 0) != 0)
          o.training.launchArgs.push_back(args[k]);
      }
    } else if (arg == "--collective-timeout") {
      o.training.collectiveTimeout = parseDouble(arg, next());
      if (!(o.training.collectiveTimeout > 0))
        throw UsageError{"--collective-timeout expects seconds > 0"};
    } else if (arg == "--sync-batch-norm") {
      o.training.syncBatchNorm = true;
    } else if (arg == "--bucket-mb") {
      o.training.bucketMb = parseDouble(arg, next());
      if (!(o.training.bucketMb >= 0))
        throw UsageError{"--bucket-mb expects megabytes >= 0"};
    } else if (arg == "--save-params") {
      o.training.saveParams = next();
    } else if (arg == "--save-plan") {
      o.training.savePlan = next();
    } else if (arg == "--load-params") {
      o.training.loadParams = next();
    } else if (arg == "--threads") {
      o.threads = static_cast<int>(parseInt(arg, next(), 1));
    } else if (arg == "--affinity") {
      o.affinity = next();
      if (o.affinity != "none" && o.affinity != "cores")
        throw UsageError{"--affinity expects none or cores, got '" +
                         o.affinity + "'"};
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
    } else if (arg == "--npy-u16-as-bf16") {
      o.npyU16AsBf16 = true;
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
    o.training.traceFile = o.traceFile;
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
  if (o.layoutGiven && !o.train)
    throw UsageError{"--layout needs --train"};
  if (!o.training.savePlan.empty() && !o.train)
    throw UsageError{
        "--save-plan needs --train (it writes the training "
        "step; gopt-translate --emit-plan writes inference plans)"};
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
        o.calibration.method != CalibrationMethod::kPercentile)
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

RunOptions runOptionsOf(const CommandLine &c) {
  RunOptions r;
  r.model = c.model;
  r.pipeline = c.pipeline;
  r.backend = c.backend;
  r.batch = c.batch;
  r.threads = c.threads;
  r.memoryLimit = c.memoryLimit;
  r.inputs = c.inputs;
  r.outputDir = c.outputDir;
  r.warmup = c.warmup;
  r.iterations = c.iterations;
  r.profile = c.profile;
  r.traceFile = c.traceFile;
  r.jsonFile = c.jsonFile;
  r.compareModel = c.compareModel;
  r.compareBackend = c.compareBackend;
  r.labelsFile = c.labelsFile;
  r.compareNpy = c.compareNpy;
  r.npyU16AsBf16 = c.npyU16AsBf16;
  r.atol = c.atol;
  r.rtol = c.rtol;
  return r;
}

} // namespace

const char *toolUsage() { return kUsage; }

StatusOr<ToolOptions> parseToolArgs(const std::vector<std::string> &args) {
  CommandLine c;
  try {
    c = parseCommandLine(args);
  } catch (const UsageError &e) {
    return invalidArgument(e.message);
  }
  ToolOptions options;
  options.affinity = c.affinity;
  // The flags' checks make these exclusive; the order only decides between
  // a mode and the plain run its flags would otherwise mean.
  if (c.help) {
    options.mode = ToolMode::kHelp;
  } else if (c.calibrate) {
    options.mode = ToolMode::kCalibrate;
    options.calibrate = c.calibration;
  } else if (c.gradCheck) {
    options.mode = ToolMode::kGradCheck;
    options.gradCheck = c.gradCheckOptions;
  } else if (c.train) {
    options.mode = ToolMode::kTrain;
    options.train = c.training;
  } else {
    options.mode = c.compareModel.empty() ? ToolMode::kRun : ToolMode::kCompare;
    options.run = runOptionsOf(c);
  }
  return options;
}

StatusOr<bool> runTool(const ToolOptions &options) {
  switch (options.mode) {
  case ToolMode::kHelp:
    std::fputs(kUsage, stdout);
    return true;
  case ToolMode::kRun:
    return runModel(options.run);
  case ToolMode::kCompare:
    return runCompare(options.run);
  case ToolMode::kTrain:
    return runTraining(options.train);
  case ToolMode::kGradCheck:
    return runGradCheck(options.gradCheck);
  case ToolMode::kCalibrate:
    return runCalibration(options.calibrate);
  }
  return internalError("unknown gopt-run mode");
}

} // namespace gopt::tooling
