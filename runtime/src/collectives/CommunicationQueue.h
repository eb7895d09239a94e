//===- CommunicationQueue.h - Collectives on a thread of their own -*- C++
//-*-===//
//
// A CPU session's communication thread: all_reduce kernels hand it their
// buckets and return, so backward computes the next gradients while a
// bucket is on the wire. One thread, first in first out, so that every
// rank issues its collectives in the plan's order (Gloo matches them by
// order and tag).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_COLLECTIVES_COMMUNICATIONQUEUE_H
#define GOPT_RUNTIME_SRC_COLLECTIVES_COMMUNICATIONQUEUE_H

#include "gopt/runtime/Collectives.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace gopt::runtime {

// One collective the thread ran: what it was for, its bytes and when.
struct CommunicationRecord {
  std::string label;
  int64_t bytes = 0;
  std::chrono::steady_clock::time_point start, end;
};

class CommunicationQueue {
public:
  explicit CommunicationQueue(Communicator &communicator);
  // Finishes what was queued, then joins the thread.
  ~CommunicationQueue();
  // The all-reduce runs on the thread; the future gives its Status. The
  // buffers must stay valid until then. `label` names it in the records.
  std::shared_future<Status> allReduce(std::vector<CollectiveBuffer> buffers,
                                       Reduction reduction, std::string label);
  // The records of the collectives finished since the last call (for the
  // profile's communication rows and the trace's communication track).
  std::vector<CommunicationRecord> takeRecords();
  const char *engine() const { return communicator_.engine(); }

private:
  void loop();

  Communicator &communicator_;
  std::vector<CommunicationRecord> records_; // guarded by mutex_
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<Status()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

// Sums `values` in place over all replicas before it returns (the
// cross-replica batch statistics of a synchronized batch_norm). Through
// `queue` when the session has one, so that it stays behind the all_reduce
// buckets already queued in plan order (every rank issues its collectives
// in the same order); else on `communicator` directly. No communicator or
// one replica: nothing to do.
Status sumAcrossReplicas(Communicator *communicator, CommunicationQueue *queue,
                         std::vector<double> &values, std::string label);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_COLLECTIVES_COMMUNICATIONQUEUE_H
