//===- KernelRegistry.cpp - Kernels keyed by (op kind, backend) -----------===//
#include "FastKernels.h"
#include "gopt/runtime/Kernel.h"

namespace gopt::runtime {

KernelRegistry &KernelRegistry::global() {
  // Registered explicitly rather than by static initializers, which a static
  // library link would drop.
  static KernelRegistry *registry = [] {
    auto *r = new KernelRegistry();
    registerReferenceKernels(*r);
    registerOneDnnKernels(*r);
    cpu::registerFastKernels(*r);
    return r;
  }();
  return *registry;
}

void KernelRegistry::registerKernel(const std::string &kind,
                                    const std::string &backend,
                                    KernelFactory factory) {
  factories_[{kind, backend}] = std::move(factory);
}

const KernelFactory *KernelRegistry::find(const std::string &kind,
                                          const std::string &backend) const {
  auto it = factories_.find({kind, backend});
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string>
KernelRegistry::kinds(const std::string &backend) const {
  std::vector<std::string> result;
  for (const auto &[key, factory] : factories_)
    if (key.second == backend)
      result.push_back(key.first);
  return result; // sorted: the map's keys start with the kind
}

StatusOr<std::unique_ptr<Kernel>>
KernelRegistry::create(const std::string &backend,
                       const KernelConfig &config) const {
  const std::string &kind = config.op->kind();
  if (backend != "reference") {
    if (const KernelFactory *fast = find(kind, backend)) {
      GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, (*fast)(config));
      if (kernel)
        return kernel;
    }
  }
  // "cpu" falls back to the reference kernels; other backends must have
  // their own.
  if (backend == "reference" || backend == "cpu") {
    if (const KernelFactory *ref = find(kind, "reference")) {
      GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, (*ref)(config));
      if (kernel)
        return kernel;
    }
  }
  return unimplemented("no ", backend, " kernel for op kind '", kind, "'");
}

} // namespace gopt::runtime
