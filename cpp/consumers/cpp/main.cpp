// A C++ program outside the repository, built with find_package(wkcore CONFIG): a leader slot
// through the RAII wrappers, two admissions, one drain.
#include <cstdio>
#include <utility>
#include <vector>

#include "wkcore.hpp"

int main() {
  auto created = wkcore::Slot::create(7);
  if (!created.ok()) return 1;
  wkcore::Slot slot = std::move(created).value();
  if (!slot.set_leader().ok()) return 1;
  for (uint64_t token = 1; token <= 2; ++token) {
    if (!slot.admit(WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_FOREGROUND, token).ok()) return 1;
  }
  std::vector<wk_item> out;
  auto drained = slot.drain(out, 8);
  if (!drained.ok() || out.size() != 2 || out[0].token != 1 || out[1].token != 2) return 1;
  std::printf("c++ consumer: ok\n");
  return 0;
}
