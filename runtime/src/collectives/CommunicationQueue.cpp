//===- CommunicationQueue.cpp - Collectives on a thread of their own ------===//
#include "CommunicationQueue.h"

namespace gopt::runtime {

CommunicationQueue::CommunicationQueue(Communicator &communicator)
    : communicator_(communicator), thread_([this] { loop(); }) {}

CommunicationQueue::~CommunicationQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_one();
  thread_.join();
}

std::shared_future<Status>
CommunicationQueue::allReduce(std::vector<CollectiveBuffer> buffers,
                              Reduction reduction) {
  std::packaged_task<Status()> task(
      [this, buffers = std::move(buffers), reduction] {
        return communicator_.allReduce(buffers, reduction);
      });
  std::shared_future<Status> done = task.get_future().share();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
  return done;
}

void CommunicationQueue::loop() {
  while (true) {
    std::packaged_task<Status()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty())
        return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

} // namespace gopt::runtime
