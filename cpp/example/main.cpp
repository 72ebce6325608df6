// Minimal use of the wkcore C++ layer: create a leader slot, admit foreground and background
// proposals until backpressure, drain them as a Raft worker would, print the metrics.
#include <cstdio>
#include <vector>

#include "wkcore.hpp"

int main() {
  std::printf("wkcore %s (ABI %u)\n", WK_VERSION, wkcore::abi_version());

  auto created = wkcore::Slot::create(/*slot_id=*/1, wkcore::limits(8, 2));
  if (!created.ok()) {
    std::fprintf(stderr, "create: %s\n", created.status().str());
    return 1;
  }
  wkcore::Slot slot = std::move(created).value();
  slot.set_leader();

  uint64_t token = 0;
  for (int i = 0; i < 4; ++i) {
    wkcore::Status st = slot.admit(WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_BACKGROUND, ++token);
    std::printf("background proposal %llu: %s%s\n", static_cast<unsigned long long>(token),
                st.str(), st.is_backpressure() ? " (backpressure, retry later)" : "");
  }
  wkcore::Status st = slot.admit(WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_FOREGROUND, ++token);
  std::printf("foreground proposal %llu: %s\n", static_cast<unsigned long long>(token), st.str());

  std::vector<wk_item> items;
  if (!slot.drain(items, 64).ok()) return 1;
  for (const wk_item& it : items)
    std::printf("drained token=%llu kind=%u class=%u\n", static_cast<unsigned long long>(it.token),
                it.kind, it.proposal_class);

  std::fputs(wkcore::metrics_render().c_str(), stdout);
  return items.size() == 3 ? 0 : 1;
}
