// Minimal use of the wkcore C++ layer: create a leader slot counted in a metrics registry of its
// own, admit background and foreground proposals until backpressure, drain them as a Raft worker
// would, and export the registry's metrics as a gateway would (generically: no family named).
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "wkcore.hpp"

int main() {
  std::printf("wkcore %s (ABI %u)\n", WK_VERSION, wkcore::abi_version());

  auto metrics = wkcore::MetricsRegistry::create();
  if (!metrics.ok()) {
    std::fprintf(stderr, "metrics: %s\n", metrics.status().str());
    return 1;
  }
  auto created = wkcore::Slot::create(/*slot_id=*/1, wkcore::limits(8, 2), &*metrics);
  if (!created.ok()) {
    std::fprintf(stderr, "create: %s\n", created.status().str());
    return 1;
  }
  wkcore::Slot slot = std::move(created).value();
  if (!slot.set_leader().ok()) return 1;

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
  for (const wk_item& it : items) {
    std::printf("drained token=%llu kind=%u class=%u\n", static_cast<unsigned long long>(it.token),
                static_cast<unsigned>(it.kind), static_cast<unsigned>(it.proposal_class));
  }

  // A gateway's /metrics: every family the library reports, copied out of one snapshot.
  auto families = metrics->snapshot();
  auto library_text = metrics->render();
  if (!families.ok() || !library_text.ok()) return 1;
  const std::string text = wkcore::render_prometheus(*families);
  std::fputs(text.c_str(), stdout);
  if (text != *library_text) {
    std::fprintf(stderr, "exporter and library disagree\n");
    return 1;
  }
  return items.size() == 3 ? 0 : 1;
}
