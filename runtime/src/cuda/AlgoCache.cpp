//===- AlgoCache.cpp - cuDNN algorithm choices cached on disk -------------===//
#include "AlgoCache.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace gopt::runtime::cuda {

static std::string sanitize(std::string s) {
  for (char &c : s)
    if (c == '\t' || c == '\n' || c == '\r' || c == '|')
      c = '_';
  return s;
}

std::string makeAlgoKey(const std::string &deviceName,
                        const std::vector<std::string> &parts) {
  std::string key = sanitize(deviceName);
  for (const std::string &p : parts)
    key += "|" + sanitize(p);
  return key;
}

static bool parseInt(const std::string &s, int *value) {
  if (s.empty())
    return false;
  char *end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0' || v < -1 || v > 1000000)
    return false;
  *value = static_cast<int>(v);
  return true;
}

std::map<std::string, AlgoChoice> parseAlgoCache(const std::string &text,
                                                 int *malformed) {
  std::map<std::string, AlgoChoice> entries;
  int bad = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty() || line[0] == '#')
      continue;
    size_t t1 = line.find('\t');
    size_t t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    AlgoChoice choice;
    if (t1 == 0 || t2 == std::string::npos ||
        line.find('\t', t2 + 1) != std::string::npos ||
        !parseInt(line.substr(t1 + 1, t2 - t1 - 1), &choice.algo) ||
        !parseInt(line.substr(t2 + 1), &choice.mathType) || choice.algo < 0) {
      ++bad;
      continue;
    }
    entries[line.substr(0, t1)] = choice; // a later line wins
  }
  if (malformed)
    *malformed = bad;
  return entries;
}

std::string formatAlgoCache(const std::map<std::string, AlgoChoice> &entries) {
  std::string text = "# gopt cuDNN algorithm cache: key\\talgo\\tmath_type\n";
  for (const auto &[key, choice] : entries)
    text += key + "\t" + std::to_string(choice.algo) + "\t" +
            std::to_string(choice.mathType) + "\n";
  return text;
}

std::string defaultAlgoCachePath() {
  if (const char *p = std::getenv("GOPT_CUDNN_ALGO_CACHE"))
    return std::string(p) == "off" ? std::string() : std::string(p);
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/gopt/cudnn-algos.txt";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/gopt/cudnn-algos.txt";
  return {};
}

AlgoCache &AlgoCache::global() {
  static AlgoCache *cache = new AlgoCache(defaultAlgoCachePath());
  return *cache;
}

void AlgoCache::loadLocked() {
  if (loaded_)
    return;
  loaded_ = true;
  if (path_.empty())
    return;
  std::ifstream in(path_);
  if (!in)
    return;
  std::stringstream text;
  text << in.rdbuf();
  entries_ = parseAlgoCache(text.str());
}

bool AlgoCache::lookup(const std::string &key, AlgoChoice *choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  loadLocked();
  auto it = entries_.find(key);
  if (it == entries_.end())
    return false;
  *choice = it->second;
  return true;
}

static void makeParentDirs(const std::string &path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos;
       pos = path.find('/', pos + 1))
    mkdir(path.substr(0, pos).c_str(), 0755);
}

bool AlgoCache::insert(const std::string &key, const AlgoChoice &choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  loadLocked();
  entries_[key] = choice;
  if (path_.empty())
    return true;
  makeParentDirs(path_);
  // Keep what other processes added since we loaded the file.
  if (std::ifstream in(path_); in) {
    std::stringstream text;
    text << in.rdbuf();
    for (const auto &[k, v] : parseAlgoCache(text.str()))
      entries_.emplace(k, v);
  }
  std::string tmp = path_ + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out)
      return false;
    out << formatAlgoCache(entries_);
    if (!out.flush())
      return false;
  }
  return std::rename(tmp.c_str(), path_.c_str()) == 0;
}

} // namespace gopt::runtime::cuda
