//===- TcpStore.cpp - The rendezvous key-value store of a run -------------===//
//
// Frames: request [op u8][key length u32][key][value length u32][value],
// reply [status u8][length u32][data]. Ops: 'H' hello ("RANK WORLD_SIZE"),
// 'S' set, 'G' get (status 1: absent), 'L' lost ranks, 'B' goodbye.
//
//===----------------------------------------------------------------------===//
#include "TcpStore.h"

#include <gloo/common/error.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

namespace gopt::runtime::collectives {

namespace {

using Clock = std::chrono::steady_clock;

bool writeAll(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool readAll(int fd, void *data, size_t n) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool writeBlob(int fd, const void *data, uint32_t n) {
  return writeAll(fd, &n, sizeof n) && (n == 0 || writeAll(fd, data, n));
}

bool readBlob(int fd, std::vector<char> &out) {
  uint32_t n = 0;
  if (!readAll(fd, &n, sizeof n))
    return false;
  out.resize(n);
  return n == 0 || readAll(fd, out.data(), n);
}

bool reply(int fd, char status, const std::string &data) {
  return writeAll(fd, &status, 1) &&
         writeBlob(fd, data.data(), static_cast<uint32_t>(data.size()));
}

std::string errnoText() { return std::strerror(errno); }

// Connects with a deadline per attempt, so that an unreachable address
// fails within the timeout instead of the kernel's minutes.
int connectWithTimeout(const sockaddr_in &addr, std::chrono::milliseconds wait,
                       std::string &error) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    error = "socket: " + errnoText();
    return -1;
  }
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc =
      ::connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof addr);
  if (rc < 0 && errno != EINPROGRESS) {
    error = "connect: " + errnoText();
    ::close(fd);
    return -1;
  }
  if (rc < 0) {
    pollfd p{fd, POLLOUT, 0};
    int ready = ::poll(&p, 1, static_cast<int>(wait.count()));
    int soError = 0;
    socklen_t len = sizeof soError;
    if (ready <= 0) {
      error = "connect: no answer";
      ::close(fd);
      return -1;
    }
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len);
    if (soError != 0) {
      error = std::string("connect: ") + std::strerror(soError);
      ::close(fd);
      return -1;
    }
  }
  ::fcntl(fd, F_SETFL, flags);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

} // namespace

//===----------------------------------------------------------------------===//
// Server
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<TcpStoreServer>> TcpStoreServer::start(int port,
                                                                int worldSize) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return internalError("rendezvous store: socket: ", errnoText());
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) < 0) {
    std::string why = errnoText();
    ::close(fd);
    return unavailable("rank 0 cannot serve the rendezvous store on port ",
                       port, " (MASTER_PORT): ", why,
                       errno == EADDRINUSE
                           ? "; another process (or run) uses that port, "
                             "choose another MASTER_PORT"
                           : "");
  }
  if (::listen(fd, 128) < 0) {
    std::string why = errnoText();
    ::close(fd);
    return unavailable("rendezvous store: listen on port ", port, ": ", why);
  }
  return std::unique_ptr<TcpStoreServer>(new TcpStoreServer(fd, worldSize));
}

TcpStoreServer::TcpStoreServer(int listenFd, int worldSize)
    : listenFd_(listenFd), worldSize_(worldSize) {
  thread_ = std::thread([this] { serve(); });
}

TcpStoreServer::~TcpStoreServer() {
  stop_ = true;
  thread_.join();
  for (auto &[fd, rank] : rankOfFd_)
    ::close(fd);
  ::close(listenFd_);
}

std::vector<int> TcpStoreServer::lostRanks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::vector<int>(lost_.begin(), lost_.end());
}

void TcpStoreServer::serve() {
  std::vector<int> clients;
  while (!stop_) {
    std::vector<pollfd> fds{{listenFd_, POLLIN, 0}};
    for (int fd : clients)
      fds.push_back({fd, POLLIN, 0});
    // A short period, so that the destructor's stop is seen promptly.
    if (::poll(fds.data(), fds.size(), 100) <= 0)
      continue;
    if (fds[0].revents & POLLIN) {
      int fd = ::accept(listenFd_, nullptr, nullptr);
      if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        clients.push_back(fd);
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      if (handle(fds[i].fd))
        continue;
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = rankOfFd_.find(fds[i].fd);
      if (it != rankOfFd_.end()) {
        if (!departed_.count(it->second))
          lost_.insert(it->second);
        rankOfFd_.erase(it);
      }
      ::close(fds[i].fd);
      clients.erase(std::find(clients.begin(), clients.end(), fds[i].fd));
    }
  }
  for (int fd : clients)
    if (!rankOfFd_.count(fd))
      ::close(fd);
}

bool TcpStoreServer::handle(int fd) {
  char op = 0;
  std::vector<char> key, value;
  if (!readAll(fd, &op, 1) || !readBlob(fd, key) || !readBlob(fd, value))
    return false;
  std::string k(key.begin(), key.end());
  std::lock_guard<std::mutex> lock(mutex_);
  switch (op) {
  case 'H': {
    int rank = -1, worldSize = -1;
    std::istringstream(k) >> rank >> worldSize;
    if (worldSize != worldSize_)
      return reply(fd, 1,
                   "rank " + std::to_string(rank) + " has WORLD_SIZE " +
                       std::to_string(worldSize) + ", rank 0 has " +
                       std::to_string(worldSize_)) &&
             false;
    if (rank < 0 || rank >= worldSize_ || ranksSeen_.count(rank))
      return reply(fd, 1,
                   "rank " + std::to_string(rank) +
                       (ranksSeen_.count(rank) ? " joined twice"
                                               : " is out of range") +
                       " (WORLD_SIZE " + std::to_string(worldSize_) + ")") &&
             false;
    ranksSeen_.insert(rank);
    rankOfFd_[fd] = rank;
    return reply(fd, 0, "");
  }
  case 'S':
    values_[k] = std::move(value);
    return reply(fd, 0, "");
  case 'G': {
    auto it = values_.find(k);
    if (it == values_.end())
      return reply(fd, 1, "");
    return reply(fd, 0, std::string(it->second.begin(), it->second.end()));
  }
  case 'L': {
    std::string list;
    for (int r : lost_)
      list += (list.empty() ? "" : ",") + std::to_string(r);
    return reply(fd, 0, list);
  }
  case 'B':
    if (rankOfFd_.count(fd))
      departed_.insert(rankOfFd_[fd]);
    return reply(fd, 0, "");
  default:
    return false;
  }
}

//===----------------------------------------------------------------------===//
// Client
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<TcpStoreClient>>
TcpStoreClient::connect(const std::string &host, int port, int rank,
                        int worldSize, std::chrono::milliseconds timeout) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  int gai =
      ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (gai != 0 || !found)
    return invalidArgument("MASTER_ADDR '", host,
                           "' does not resolve: ", ::gai_strerror(gai));
  sockaddr_in addr = *reinterpret_cast<sockaddr_in *>(found->ai_addr);
  ::freeaddrinfo(found);

  auto deadline = Clock::now() + timeout;
  std::string error;
  int fd = -1;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0)
      break;
    fd = connectWithTimeout(
        addr, std::min(left, std::chrono::milliseconds(2000)), error);
    if (fd >= 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (fd < 0)
    return deadlineExceeded(
        "rank ", rank, " could not reach rank 0's rendezvous store at ", host,
        ":", port, " (MASTER_ADDR:MASTER_PORT) within ",
        timeout.count() / 1000.0, " s (", error,
        "): rank 0 is not running, or the address is unreachable");
  std::unique_ptr<TcpStoreClient> client(new TcpStoreClient(fd, timeout));
  std::string hello = std::to_string(rank) + " " + std::to_string(worldSize);
  std::vector<char> answer;
  char op = 'H';
  if (!writeAll(fd, &op, 1) ||
      !writeBlob(fd, hello.data(), static_cast<uint32_t>(hello.size())) ||
      !writeBlob(fd, nullptr, 0))
    return unavailable("rank ", rank, ": the rendezvous store at ", host, ":",
                       port, " closed the connection");
  char status = 0;
  if (!readAll(fd, &status, 1) || !readBlob(fd, answer))
    return unavailable("rank ", rank, ": the rendezvous store at ", host, ":",
                       port, " refused this rank");
  if (status != 0)
    return invalidArgument("rank 0 refused rank ", rank, ": ",
                           std::string(answer.begin(), answer.end()));
  return client;
}

TcpStoreClient::~TcpStoreClient() { ::close(fd_); }

bool TcpStoreClient::request(char op, const std::string &key,
                             const std::vector<char> &value,
                             std::vector<char> &answer) {
  std::lock_guard<std::mutex> lock(mutex_);
  char status = 0;
  if (!writeAll(fd_, &op, 1) ||
      !writeBlob(fd_, key.data(), static_cast<uint32_t>(key.size())) ||
      !writeBlob(fd_, value.data(), static_cast<uint32_t>(value.size())) ||
      !readAll(fd_, &status, 1) || !readBlob(fd_, answer))
    return false;
  if (status != 0)
    answer.clear();
  return status == 0;
}

void TcpStoreClient::set(const std::string &key,
                         const std::vector<char> &data) {
  std::vector<char> answer;
  if (!request('S', key, data, answer))
    throw gloo::IoException("the rendezvous store (rank 0) is unreachable");
}

std::vector<char> TcpStoreClient::getOnce(const std::string &key, bool &found) {
  std::lock_guard<std::mutex> lock(mutex_);
  char op = 'G', status = 0;
  std::vector<char> answer;
  if (!writeAll(fd_, &op, 1) ||
      !writeBlob(fd_, key.data(), static_cast<uint32_t>(key.size())) ||
      !writeBlob(fd_, nullptr, 0) || !readAll(fd_, &status, 1) ||
      !readBlob(fd_, answer))
    throw gloo::IoException("the rendezvous store (rank 0) is unreachable");
  found = status == 0;
  return answer;
}

std::vector<char> TcpStoreClient::get(const std::string &key) {
  wait({key}, timeout_);
  bool found = false;
  return getOnce(key, found);
}

void TcpStoreClient::wait(const std::vector<std::string> &keys) {
  wait(keys, timeout_);
}

void TcpStoreClient::wait(const std::vector<std::string> &keys,
                          const std::chrono::milliseconds &timeout) {
  auto deadline = Clock::now() + (timeout.count() > 0 ? timeout : timeout_);
  for (const std::string &key : keys) {
    while (true) {
      bool found = false;
      getOnce(key, found);
      if (found)
        break;
      if (Clock::now() > deadline)
        throw gloo::IoException("timed out waiting for key '" + key +
                                "' in the rendezvous store");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

StatusOr<std::vector<int>> TcpStoreClient::lostRanks() {
  std::vector<char> answer;
  if (!request('L', "", {}, answer))
    return unavailable("rank 0 (which serves the rendezvous store) is lost");
  std::vector<int> ranks;
  std::istringstream in(std::string(answer.begin(), answer.end()));
  std::string item;
  while (std::getline(in, item, ','))
    ranks.push_back(std::stoi(item));
  return ranks;
}

void TcpStoreClient::goodbye() {
  std::vector<char> answer;
  request('B', "", {}, answer);
}

std::string TcpStoreClient::localAddress() const {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len) < 0)
    return "127.0.0.1";
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr.sin_addr, text, sizeof text);
  return text;
}

} // namespace gopt::runtime::collectives
