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

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace gopt::runtime {

class CommunicationQueue {
public:
  explicit CommunicationQueue(Communicator &communicator);
  // Finishes what was queued, then joins the thread.
  ~CommunicationQueue();
  // The all-reduce runs on the thread; the future gives its Status. The
  // buffers must stay valid until then.
  std::shared_future<Status> allReduce(std::vector<CollectiveBuffer> buffers,
                                       Reduction reduction);

private:
  void loop();

  Communicator &communicator_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<Status()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_COLLECTIVES_COMMUNICATIONQUEUE_H
