//===- SmokeDriver.cpp - gopt-fuzz-smoke: fuzz targets without libFuzzer --===//
//
//   gopt-fuzz-smoke TARGET PATH... [--runs N] [--seconds S] [--seed X]
//                   [--timeout S] [--artifacts DIR] [--max-len BYTES]
//                   [--last-input FILE] [--replay | --write-seeds DIR]
//
// Runs a fuzz target (the same LLVMFuzzerTestOneInput source the libFuzzer
// build uses, linked here under another name) in the ordinary gcc build:
// first every seed under PATH as is, then deterministic mutants of them until
// N inputs ran or S seconds passed. --replay runs every file under PATH once
// (the regression corpus). A crash, an abort, a per-input timeout or an
// allocation above the limit writes the input to DIR and exits non-zero
// through the signal, so ctest fails and the log names the file to replay.
//
//===----------------------------------------------------------------------===//

#include "Mutator.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#define GOPT_DECLARE_TARGET(name)                                              \
  extern "C" int goptFuzz_##name(const uint8_t *data, size_t size);
GOPT_DECLARE_TARGET(onnx_import)
GOPT_DECLARE_TARGET(graphdef_binary)
GOPT_DECLARE_TARGET(graphdef_text)
GOPT_DECLARE_TARGET(mlir_parse)
GOPT_DECLARE_TARGET(plan_load)

namespace fs = std::filesystem;
using gopt::fuzz::InputKind;

namespace {

struct Target {
  const char *name;
  int (*run)(const uint8_t *, size_t);
  InputKind kind;
  std::vector<std::string> extensions;
  /// MLIR lit files hold several cases separated by this marker.
  const char *splitMarker;
};

const Target kTargets[] = {
    {"onnx-import",
     goptFuzz_onnx_import,
     InputKind::Protobuf,
     {".onnx"},
     nullptr},
    {"graphdef-binary",
     goptFuzz_graphdef_binary,
     InputKind::Protobuf,
     {".pb"},
     nullptr},
    {"graphdef-text",
     goptFuzz_graphdef_text,
     InputKind::Text,
     {".pbtxt"},
     nullptr},
    {"mlir-parse", goptFuzz_mlir_parse, InputKind::Text, {".mlir"}, "// -----"},
    {"plan-load", goptFuzz_plan_load, InputKind::Protobuf, {".gplan"}, nullptr},
};

//===----------------------------------------------------------------------===//
// Crash capture: the input being run goes to a file from the signal handler.
//===----------------------------------------------------------------------===//

const char *gTargetName = "";
const std::string *gCurrent = nullptr;
char gArtifactDir[1024] = ".";
volatile sig_atomic_t gInTarget = 0;

void writeString(int fd, const char *s) {
  ssize_t ignored = write(fd, s, std::strlen(s));
  (void)ignored;
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s)
    h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

/// Writes the current input as DIR/<prefix>-<target>-<hash>; async-signal
/// safe (no allocation).
void saveCurrent(const char *prefix) {
  if (!gCurrent)
    return;
  char path[1400];
  uint64_t h = fnv1a(*gCurrent); // reads only
  char hex[17];
  for (int i = 15; i >= 0; --i, h >>= 4)
    hex[i] = "0123456789abcdef"[h & 15];
  hex[16] = 0;
  std::snprintf(path, sizeof(path), "%s/%s-%s-%s", gArtifactDir, prefix,
                gTargetName, hex);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t ignored = write(fd, gCurrent->data(), gCurrent->size());
    (void)ignored;
    close(fd);
  }
  writeString(2, "gopt-fuzz-smoke: input saved to ");
  writeString(2, path);
  writeString(2, "\n  replay: gopt-fuzz-smoke ");
  writeString(2, gTargetName);
  writeString(2, " --replay <that file>\n");
}

void onFatalSignal(int sig) {
  static volatile sig_atomic_t entered = 0;
  if (!entered) {
    entered = 1;
    writeString(2, "gopt-fuzz-smoke: ");
    writeString(2, sig == SIGALRM ? "timeout" : strsignal(sig));
    writeString(2, gInTarget ? " while running an input\n"
                             : " outside the target\n");
    saveCurrent(sig == SIGALRM ? "timeout" : "crash");
  }
  signal(sig == SIGALRM ? SIGABRT : sig, SIG_DFL);
  raise(sig == SIGALRM ? SIGABRT : sig);
}

void installHandlers() {
  // Deep recursion overflows the stack: handle SIGSEGV on a stack of its own.
  static char altStack[1 << 16];
  stack_t ss{};
  ss.ss_sp = altStack;
  ss.ss_size = sizeof(altStack);
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_handler = onFatalSignal;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGALRM})
    sigaction(sig, &sa, nullptr);
}

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Files under `path` (a file or a directory, recursively), sorted.
std::vector<fs::path> listFiles(const fs::path &path,
                                const std::vector<std::string> &extensions) {
  std::vector<fs::path> files;
  auto wanted = [&](const fs::path &p) {
    return extensions.empty() ||
           std::find(extensions.begin(), extensions.end(),
                     p.extension().string()) != extensions.end();
  };
  if (fs::is_directory(path)) {
    for (const auto &entry : fs::recursive_directory_iterator(path))
      if (entry.is_regular_file() && wanted(entry.path()) &&
          entry.path().filename().string()[0] != '.')
        files.push_back(entry.path());
  } else if (fs::is_regular_file(path)) {
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> splitCases(const std::string &text,
                                    const char *marker) {
  std::vector<std::string> cases;
  size_t start = 0, width = std::strlen(marker);
  while (true) {
    size_t at = text.find(marker, start);
    cases.push_back(text.substr(start, at - start));
    if (at == std::string::npos)
      return cases;
    start = at + width;
  }
}

int usage() {
  std::fprintf(stderr, "usage: gopt-fuzz-smoke TARGET PATH... [--runs N] "
                       "[--seconds S] [--seed X]\n"
                       "                       [--timeout S] [--artifacts DIR] "
                       "[--max-len BYTES] [--last-input FILE]\n"
                       "                       [--replay | --write-seeds DIR]\n"
                       "targets:");
  for (const Target &t : kTargets)
    std::fprintf(stderr, " %s", t.name);
  std::fprintf(stderr, "\n");
  return 2;
}

} // namespace

#if !defined(__SANITIZE_ADDRESS__)
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GOPT_FUZZ_HAVE_ASAN 1
#endif
#endif
#else
#define GOPT_FUZZ_HAVE_ASAN 1
#endif

#ifndef GOPT_FUZZ_HAVE_ASAN
//===----------------------------------------------------------------------===//
// Allocation guard (glibc, no sanitizer): while a target runs, one allocation
// above the limit is a finding, as libFuzzer's -malloc_limit_mb makes it. The
// executable's definitions interpose glibc's for the whole process.
//===----------------------------------------------------------------------===//

extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
}

namespace {
size_t gMallocLimit = size_t(64) << 20;

void checkAllocation(size_t bytes) {
  if (!gInTarget || bytes <= gMallocLimit)
    return;
  gInTarget = 0;
  char message[160];
  std::snprintf(message, sizeof(message),
                "gopt-fuzz-smoke: allocation of %zu bytes is above the "
                "%zu MiB limit\n",
                bytes, gMallocLimit >> 20);
  writeString(2, message);
  saveCurrent("oom");
  signal(SIGABRT, SIG_DFL);
  abort();
}
} // namespace

extern "C" {
void *malloc(size_t bytes) {
  checkAllocation(bytes);
  return __libc_malloc(bytes);
}
void *calloc(size_t count, size_t bytes) {
  if (bytes && count > SIZE_MAX / bytes)
    return nullptr;
  checkAllocation(count * bytes);
  return __libc_calloc(count, bytes);
}
void *realloc(void *p, size_t bytes) {
  checkAllocation(bytes);
  return __libc_realloc(p, bytes);
}
void *memalign(size_t alignment, size_t bytes) {
  checkAllocation(bytes);
  return __libc_memalign(alignment, bytes);
}
void *aligned_alloc(size_t alignment, size_t bytes) {
  checkAllocation(bytes);
  return __libc_memalign(alignment, bytes);
}
int posix_memalign(void **out, size_t alignment, size_t bytes) {
  if (alignment % sizeof(void *) || (alignment & (alignment - 1)))
    return EINVAL;
  checkAllocation(bytes);
  void *p = __libc_memalign(alignment, bytes);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}
}
#endif

int main(int argc, char **argv) {
  if (argc < 3)
    return usage();
  const Target *target = nullptr;
  for (const Target &t : kTargets)
    if (std::strcmp(argv[1], t.name) == 0)
      target = &t;
  if (!target)
    return usage();
  std::vector<fs::path> paths;
  long long runs = 2000, seed = 1;
  double seconds = 10, timeout = 20;
  size_t maxLength = 1 << 20;
  bool replay = false;
  std::string artifacts = ".", writeSeeds, lastInput;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gopt-fuzz-smoke: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--runs")
      runs = std::atoll(value());
    else if (arg == "--seconds")
      seconds = std::atof(value());
    else if (arg == "--seed")
      seed = std::atoll(value());
    else if (arg == "--timeout")
      timeout = std::atof(value());
    else if (arg == "--artifacts")
      artifacts = value();
    else if (arg == "--max-len")
      maxLength = std::strtoull(value(), nullptr, 10);
    else if (arg == "--replay")
      replay = true;
    else if (arg == "--last-input")
      lastInput = value();
    else if (arg == "--write-seeds")
      writeSeeds = value();
    else if (arg.rfind("--", 0) == 0)
      return usage();
    else
      paths.push_back(arg);
  }

  // Inputs: whole files (replay), or the seeds (split into cases for MLIR).
  std::vector<std::string> inputs;
  for (const fs::path &path : paths) {
    if (!fs::exists(path)) {
      std::fprintf(stderr, "gopt-fuzz-smoke: %s does not exist\n",
                   path.c_str());
      return 2;
    }
    for (const fs::path &file : listFiles(
             path, replay ? std::vector<std::string>{} : target->extensions)) {
      std::string bytes = readFile(file);
      if (!replay && target->splitMarker) {
        for (std::string &c : splitCases(bytes, target->splitMarker))
          inputs.push_back(std::move(c));
      } else {
        inputs.push_back(std::move(bytes));
      }
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "gopt-fuzz-smoke: no %s inputs under the paths\n",
                 replay ? "" : target->extensions.front().c_str());
    return 2;
  }

  // scripts/fuzz.sh seeds libFuzzer with the same (split) inputs.
  if (!writeSeeds.empty()) {
    fs::create_directories(writeSeeds);
    for (size_t i = 0; i < inputs.size(); ++i) {
      char name[32];
      std::snprintf(name, sizeof(name), "seed-%04zu", i);
      std::ofstream(fs::path(writeSeeds) / name, std::ios::binary) << inputs[i];
    }
    std::printf("gopt-fuzz-smoke: %zu seeds written to %s\n", inputs.size(),
                writeSeeds.c_str());
    return 0;
  }

  fs::create_directories(artifacts);
  std::snprintf(gArtifactDir, sizeof(gArtifactDir), "%s", artifacts.c_str());
  gTargetName = target->name;
  installHandlers();

  unsigned alarmSeconds = static_cast<unsigned>(std::max(1.0, timeout));
  std::string current;
  auto runOne = [&](std::string input) {
    current = std::move(input);
    gCurrent = &current;
    // For tools that end the process without a signal (valgrind's
    // --exit-on-first-error): the input about to run, on disk.
    if (!lastInput.empty())
      std::ofstream(lastInput, std::ios::binary) << current;
    alarm(alarmSeconds);
    gInTarget = 1;
    target->run(reinterpret_cast<const uint8_t *>(current.data()),
                current.size());
    gInTarget = 0;
    alarm(0);
  };

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  long long done = 0;
  for (const std::string &input : inputs) {
    runOne(input);
    ++done;
  }
  if (!replay) {
    gopt::fuzz::Mutator mutator(target->kind, inputs,
                                static_cast<uint64_t>(seed), maxLength);
    while (done < runs && elapsed() < seconds) {
      runOne(mutator.next());
      ++done;
    }
  }
  std::printf("gopt-fuzz-smoke %s: %lld inputs (%zu %s), no crash, %.1f s\n",
              target->name, done, inputs.size(),
              replay ? "files replayed" : "seeds", elapsed());
  return 0;
}
