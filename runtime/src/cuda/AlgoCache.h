//===- AlgoCache.h - cuDNN algorithm choices cached on disk -----*- C++ -*-===//
//
// cuDNN convolution algorithms are chosen by timing once per shape and
// device, then remembered in a text file (default
// ~/.cache/gopt/cudnn-algos.txt; GOPT_CUDNN_ALGO_CACHE overrides the path,
// "off" disables the file). One entry per line: KEY<TAB>ALGO<TAB>MATH_TYPE;
// lines starting with '#' and malformed lines are ignored. Plain C++: the
// parsing is unit-tested without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_ALGOCACHE_H
#define GOPT_RUNTIME_SRC_CUDA_ALGOCACHE_H

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace gopt::runtime::cuda {

struct AlgoChoice {
  int algo = -1;
  int mathType = 0;
  bool operator==(const AlgoChoice &o) const {
    return algo == o.algo && mathType == o.mathType;
  }
};

// The key of one convolution configuration: the device name followed by
// every parameter that changes the choice, '|'-separated. Tabs and newlines
// in the parts are replaced so that the file stays line/tab structured.
std::string makeAlgoKey(const std::string &deviceName,
                        const std::vector<std::string> &parts);

// Parses the file's text; `malformed` (optional) counts ignored lines.
std::map<std::string, AlgoChoice> parseAlgoCache(const std::string &text,
                                                 int *malformed = nullptr);
std::string formatAlgoCache(const std::map<std::string, AlgoChoice> &entries);

// The cache file's path from the environment (GOPT_CUDNN_ALGO_CACHE, else
// $XDG_CACHE_HOME/gopt/cudnn-algos.txt, else $HOME/.cache/gopt/...); empty
// when disabled or no home is known.
std::string defaultAlgoCachePath();

// A process-wide cache backed by a file: loaded on first use, rewritten
// (atomically, via a temporary file and rename) after each insertion.
class AlgoCache {
public:
  explicit AlgoCache(std::string path) : path_(std::move(path)) {}
  static AlgoCache &global();

  bool lookup(const std::string &key, AlgoChoice *choice);
  // Returns false if the file could not be written (the entry is still
  // remembered in memory).
  bool insert(const std::string &key, const AlgoChoice &choice);
  const std::string &path() const { return path_; }

private:
  void loadLocked();
  std::mutex mutex_;
  std::string path_;
  bool loaded_ = false;
  std::map<std::string, AlgoChoice> entries_;
};

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_ALGOCACHE_H
