// GroupCoordinator's Entry, shared by the files that implement the coordinator
// (group_coordinator.cc, streams_coordination.cc): every public entry point (and every timer or
// store callback) holds one; callbacks to the handlers run when the outermost one ends, after the
// group state is consistent again.
#pragma once

#include "bridge/groups/group_coordinator.h"

namespace kib::bridge {

struct GroupCoordinator::Entry {
  explicit Entry(GroupCoordinator& c) : c(c) { ++c.depth_; }
  ~Entry() {
    if (--c.depth_ == 0) c.flush();
  }
  GroupCoordinator& c;
};

}  // namespace kib::bridge
