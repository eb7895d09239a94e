//===- Distributed.cpp - Ranks of a data-parallel training run ------------===//
#include "gopt/Tooling/Distributed.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace gopt::tooling {

using namespace gopt::runtime;

namespace {

const char *getenvOrNull(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

StatusOr<int> envInt(const char *name, const char *text, int min, int max) {
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno || end == text || *end || v < min || v > max)
    return invalidArgument("environment variable ", name, "='", text,
                           "' is not an integer in [", min, ", ", max, "]");
  return static_cast<int>(v);
}

// A port the kernel considers free now (bind to port 0); the launcher's
// default MASTER_PORT, so that concurrent runs do not collide.
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 29500;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  if (fd >= 0)
    ::close(fd);
  return port;
}

void mix(uint64_t &h, const void *data, size_t n) {
  // FNV-1a.
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
}

} // namespace

StatusOr<DistributedEnv> readDistributedEnv() {
  DistributedEnv env;
  const char *rank = getenvOrNull("RANK");
  const char *size = getenvOrNull("WORLD_SIZE");
  const char *localRank = getenvOrNull("LOCAL_RANK");
  if (rank || size) {
    env.launcher = "torchrun";
    if (!rank || !size)
      return invalidArgument("torchrun's environment needs both RANK and "
                             "WORLD_SIZE; only ",
                             rank ? "RANK" : "WORLD_SIZE", " is set");
  } else if ((rank = getenvOrNull("OMPI_COMM_WORLD_RANK"))) {
    env.launcher = "Open MPI";
    size = getenvOrNull("OMPI_COMM_WORLD_SIZE");
    localRank = getenvOrNull("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!size)
      return invalidArgument("OMPI_COMM_WORLD_RANK is set but "
                             "OMPI_COMM_WORLD_SIZE is not");
  } else {
    return env;
  }
  bool mpi = env.launcher == "Open MPI";
  const char *sizeName = mpi ? "OMPI_COMM_WORLD_SIZE" : "WORLD_SIZE";
  const char *rankName = mpi ? "OMPI_COMM_WORLD_RANK" : "RANK";
  const char *localName = mpi ? "OMPI_COMM_WORLD_LOCAL_RANK" : "LOCAL_RANK";
  GOPT_ASSIGN_OR_RETURN(env.worldSize, envInt(sizeName, size, 1, 1 << 20));
  GOPT_ASSIGN_OR_RETURN(env.rank, envInt(rankName, rank, 0, 1 << 20));
  if (env.rank >= env.worldSize)
    return invalidArgument(rankName, " ", env.rank,
                           " is out of range for a world of ", env.worldSize,
                           " ranks (0..", env.worldSize - 1, ")");
  if (localRank) {
    GOPT_ASSIGN_OR_RETURN(env.localRank,
                          envInt(localName, localRank, 0, 1 << 20));
  }
  if (const char *addr = getenvOrNull("MASTER_ADDR"))
    env.masterAddr = addr;
  if (const char *port = getenvOrNull("MASTER_PORT")) {
    GOPT_ASSIGN_OR_RETURN(env.masterPort,
                          envInt("MASTER_PORT", port, 1, 65535));
  }
  // torchrun's agent serves its own store (PyTorch's TCPStore protocol) on
  // MASTER_PORT and tells its workers so; gopt's store then takes the next
  // port.
  const char *agentStore = getenvOrNull("TORCHELASTIC_USE_AGENT_STORE");
  if (agentStore && std::string(agentStore) == "True" && env.masterPort < 65535)
    ++env.masterPort;
  return env;
}

StatusOr<bool> launchLocalRanks(const TrainOptions &o) {
  if (o.nproc < 1)
    return invalidArgument("--nproc expects at least 1 rank, got ", o.nproc);
  std::string addr = "127.0.0.1";
  int port = freePort();
  if (const char *a = getenvOrNull("MASTER_ADDR"))
    addr = a;
  if (const char *p = getenvOrNull("MASTER_PORT")) {
    GOPT_ASSIGN_OR_RETURN(port, envInt("MASTER_PORT", p, 1, 65535));
  }
  std::vector<std::string> args = o.launchArgs;
  args.insert(args.begin(), "gopt-run");
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids;
  for (int r = 0; r < o.nproc; ++r) {
    pid_t pid = ::fork();
    if (pid < 0)
      return internalError("--nproc: fork: ", std::strerror(errno));
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(o.nproc).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(o.nproc).c_str(), 1);
      setenv("MASTER_ADDR", addr.c_str(), 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::execv("/proc/self/exe", argv.data());
      std::fprintf(stderr, "gopt-run: --nproc: exec: %s\n",
                   std::strerror(errno));
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  // Like torchrun: once a rank fails the run has failed; the survivors get
  // the collective timeout (plus a margin) to report it, then are killed.
  bool ok = true;
  size_t running = pids.size();
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (running > 0) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : pids)
          if (p > 0)
            ::kill(p, SIGKILL);
        deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    if (pid < 0)
      break;
    for (size_t r = 0; r < pids.size(); ++r) {
      if (pids[r] != pid)
        continue;
      pids[r] = -1;
      --running;
      bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
      if (!failed)
        break;
      if (WIFSIGNALED(status))
        std::fprintf(stderr, "gopt-run: rank %zu was killed by signal %d\n", r,
                     WTERMSIG(status));
      else
        std::fprintf(stderr, "gopt-run: rank %zu exited with status %d\n", r,
                     WEXITSTATUS(status));
      if (ok)
        deadline = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(
                       static_cast<int64_t>((o.collectiveTimeout + 5) * 1000));
      ok = false;
    }
  }
  return ok;
}

uint64_t hashTrainingStep(const std::vector<std::string> &opKinds,
                          const std::vector<std::string> &paramNames,
                          const std::vector<Tensor> &params) {
  uint64_t h = 1469598103934665603ull;
  for (const std::string &k : opKinds)
    mix(h, k.c_str(), k.size() + 1);
  for (size_t i = 0; i < paramNames.size(); ++i) {
    mix(h, paramNames[i].c_str(), paramNames[i].size() + 1);
    const Tensor &t = params[i];
    DType dtype = t.dtype();
    mix(h, &dtype, sizeof dtype);
    for (int64_t d : t.shape())
      mix(h, &d, sizeof d);
    mix(h, t.data(), t.byteSize());
  }
  return h;
}

} // namespace gopt::tooling
