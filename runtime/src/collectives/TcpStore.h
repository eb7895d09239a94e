//===- TcpStore.h - The rendezvous key-value store of a run -----*- C++ -*-===//
//
// Gloo's rendezvous needs a store in which the ranks exchange their
// transport addresses; Debian's Gloo has file and Redis stores but no TCP
// one (PyTorch keeps its TCPStore in c10d). This is that store: rank 0
// serves it on MASTER_ADDR:MASTER_PORT, every rank is a client. It also
// tells which ranks are lost: a client connection that closes without a
// goodbye is a rank whose process died, which is how a failed collective
// names the rank at fault.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_COLLECTIVES_TCPSTORE_H
#define GOPT_RUNTIME_SRC_COLLECTIVES_TCPSTORE_H

#include "gopt/runtime/Status.h"

#include <gloo/rendezvous/store.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace gopt::runtime::collectives {

// Rank 0's server: a thread polling the listening socket and the clients.
class TcpStoreServer {
public:
  // Binds 0.0.0.0:port (an error naming the port when it is in use).
  static StatusOr<std::unique_ptr<TcpStoreServer>> start(int port,
                                                         int worldSize);
  ~TcpStoreServer();
  // Ranks whose connection closed without a goodbye, sorted.
  std::vector<int> lostRanks() const;

private:
  TcpStoreServer(int listenFd, int worldSize);
  void serve();
  // False when the client's connection is to be closed.
  bool handle(int fd);

  int listenFd_;
  int worldSize_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<char>> values_;
  std::map<int, int> rankOfFd_;
  std::set<int> ranksSeen_, departed_, lost_;
};

class TcpStoreClient : public gloo::rendezvous::Store {
public:
  // Connects to host:port, retrying until `timeout` (rank 0 may start
  // last), and introduces itself as `rank` of `worldSize`; the server
  // refuses a duplicate rank or a different world size.
  static StatusOr<std::unique_ptr<TcpStoreClient>>
  connect(const std::string &host, int port, int rank, int worldSize,
          std::chrono::milliseconds timeout);
  ~TcpStoreClient() override;

  // gloo::rendezvous::Store: throws gloo::IoException on failure.
  void set(const std::string &key, const std::vector<char> &data) override;
  std::vector<char> get(const std::string &key) override;
  void wait(const std::vector<std::string> &keys) override;
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override;

  // The lost ranks as the server sees them; an error when the server (rank
  // 0) itself is unreachable.
  StatusOr<std::vector<int>> lostRanks();
  // Tells the server this rank leaves cleanly.
  void goodbye();
  // The local address of the connection: the interface that reaches rank 0.
  std::string localAddress() const;

private:
  TcpStoreClient(int fd, std::chrono::milliseconds timeout)
      : fd_(fd), timeout_(timeout) {}
  // One request and its reply, under the mutex; false if the connection
  // failed.
  bool request(char op, const std::string &key, const std::vector<char> &value,
               std::vector<char> &reply);
  std::vector<char> getOnce(const std::string &key, bool &found);

  int fd_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
};

} // namespace gopt::runtime::collectives

#endif // GOPT_RUNTIME_SRC_COLLECTIVES_TCPSTORE_H
