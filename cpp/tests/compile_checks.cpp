// Compiled (syntax only) by ctest: as is it must compile; with one WK_MISUSE_* macro defined it
// must fail with that misuse's diagnostic (cpp/CMakeLists.txt lists them). Never linked.
#include <utility>

#include "wkcore.hpp"

namespace {

wkcore::Status returns_status() { return WK_STATUS_OK; }

[[maybe_unused]] void uses(const wkcore::Slot& slot, const wkcore::MetricsSnapshot& snapshot) {
  // Every result is looked at: nothing here may warn.
  wkcore::Status st = slot.admit(WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_FOREGROUND, 1);
  (void)st;
  auto admission = slot.admit(WK_CONTROL_KIND_CONFIG_CHANGE, WK_PROPOSAL_CLASS_FOREGROUND, 1);
  if (admission.ok()) (void)slot.resolve(admission->config_change);
  (void)slot.take(1);
  (void)slot.set_leader();
  auto clone = slot.clone();
  (void)clone;
  (void)snapshot.family_count();
  (void)returns_status();
  wkcore::Slot moved = std::move(clone).value();
  (void)moved;

#if defined(WK_MISUSE_DISCARD_STATUS)
  returns_status();
#elif defined(WK_MISUSE_DISCARD_RESULT)
  wkcore::Slot::create(1);
#elif defined(WK_MISUSE_DISCARD_METHOD_STATUS)
  slot.admit(WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_FOREGROUND, 2);
#elif defined(WK_MISUSE_COPY_SLOT)
  wkcore::Slot copy = slot;
  (void)copy;
#elif defined(WK_MISUSE_INT_KIND)
  (void)slot.admit(1u, WK_PROPOSAL_CLASS_FOREGROUND, 3);
#elif defined(WK_MISUSE_INT_CLASS)
  (void)slot.admit(WK_CONTROL_KIND_PROPOSE, 0u, 4);
#elif defined(WK_MISUSE_INT_TICKET)
  (void)slot.resolve(uint64_t{1});
#elif defined(WK_MISUSE_DISCARD_TAKE)
  slot.take(1);
#endif
}

}  // namespace
