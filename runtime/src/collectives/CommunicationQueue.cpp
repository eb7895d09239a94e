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
                              Reduction reduction, std::string label) {
  std::packaged_task<Status()> task([this, buffers = std::move(buffers),
                                     reduction, label = std::move(label)] {
    CommunicationRecord record;
    record.label = label;
    for (const CollectiveBuffer &b : buffers)
      record.bytes += b.count * static_cast<int64_t>(dtypeSize(b.dtype));
    record.start = std::chrono::steady_clock::now();
    Status status = communicator_.allReduce(buffers, reduction);
    record.end = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mutex_);
    records_.push_back(std::move(record));
    return status;
  });
  std::shared_future<Status> done = task.get_future().share();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
  return done;
}

std::vector<CommunicationRecord> CommunicationQueue::takeRecords() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<CommunicationRecord> taken;
  taken.swap(records_);
  return taken;
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

Status sumAcrossReplicas(Communicator *communicator, CommunicationQueue *queue,
                         std::vector<double> &values, std::string label) {
  if (!communicator || communicator->size() == 1 || values.empty())
    return Status::success();
  std::vector<CollectiveBuffer> buffers = {
      {values.data(), static_cast<int64_t>(values.size()), DType::kF64}};
  if (queue)
    return queue
        ->allReduce(std::move(buffers), Reduction::kSum, std::move(label))
        .get();
  return communicator->allReduce(buffers, Reduction::kSum);
}

} // namespace gopt::runtime
