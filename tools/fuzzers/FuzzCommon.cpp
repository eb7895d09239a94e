//===- FuzzCommon.cpp - Shared set-up of gopt's fuzz targets --------------===//

#include "FuzzCommon.h"

#include <google/protobuf/stubs/logging.h>

namespace gopt::fuzz {

void quietProtobuf() {
  static const bool done = [] {
    if (!verbose())
      google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)done;
}

} // namespace gopt::fuzz
