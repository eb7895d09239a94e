//===- KernelRegistry.cpp - Kernels keyed by (op kind, backend) -----------===//
#include "cpu/FastKernels.h"
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

bool isBackendAvailable(const std::string &backend, std::string *whyNot) {
  if (backend == "cpu" || backend == "reference")
    return true;
  if (whyNot) {
    if (backend == "cuda")
      *whyNot = "CUDA backend not built (configure with "
                "-DGOPT_ENABLE_CUDA=ON where the CUDA toolkit is installed)";
    else
      *whyNot =
          "unknown backend '" + backend + "' (known: cpu, reference, cuda)";
  }
  return false;
}

} // namespace gopt::runtime
