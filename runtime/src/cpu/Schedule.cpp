//===- Schedule.cpp - One step per plan op --------------------------------===//
#include "Schedule.h"

namespace gopt::runtime {

KernelConfig makeKernelConfig(const ScheduleInput &in, int o) {
  const plan::Op &op = in.plan->ops(o);
  KernelConfig config;
  config.op = &op;
  config.threads = in.threads;
  config.seed = in.seed;
  config.opIndex = o;
  config.repeatRandomness = in.repeatRandomness;
  config.communicator = in.communicator;
  config.communicationQueue = in.communicationQueue;
  if (in.regionSessions && o < static_cast<int>(in.regionSessions->size()))
    config.regions = (*in.regionSessions)[o];
  for (int t : op.inputs()) {
    config.inputTypes.push_back((*in.dtypes)[t]);
    config.inputShapes.push_back((*in.shapes)[t]);
    config.constantInputs.push_back(in.constants[t]);
  }
  for (int t : op.outputs()) {
    config.outputTypes.push_back((*in.dtypes)[t]);
    config.outputShapes.push_back((*in.shapes)[t]);
  }
  return config;
}

Status appendDefaultStep(const ScheduleInput &in, int o, Schedule &schedule) {
  const plan::Op &op = in.plan->ops(o);
  auto kernel =
      KernelRegistry::global().create(in.backend, makeKernelConfig(in, o));
  if (!kernel.ok())
    return Status(kernel.status().code(),
                  "op '" + op.name() + "' (" + op.kind() +
                      "): " + kernel.status().message());
  Step step;
  step.kernel = std::move(kernel).value();
  step.inputs.assign(op.inputs().begin(), op.inputs().end());
  step.outputs.assign(op.outputs().begin(), op.outputs().end());
  step.name = op.name();
  step.kind = op.kind();
  step.device = op.device();
  schedule.steps.push_back(std::move(step));
  return Status::success();
}

} // namespace gopt::runtime
