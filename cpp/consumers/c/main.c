/* A C program outside the repository, built against an installed wkcore (scripts/install) with
 * pkg-config: `cc main.c $(pkg-config --cflags --libs wkcore)` (shared) or with `--static`.
 * It admits two proposals on a leader slot, drains them, and checks what it got. */
#include <stdio.h>

#include "wkcore.h"

int main(void) {
  if (wk_abi_version() != WK_ABI_VERSION) {
    fprintf(stderr, "ABI %u, header %u\n", wk_abi_version(), (unsigned)WK_ABI_VERSION);
    return 1;
  }
  wk_slot_limits limits = {8, 4};
  wk_slot* slot = NULL;
  if (wk_slot_new(NULL, 1, &limits, &slot) != WK_STATUS_OK) return 1;
  if (wk_slot_set_leader(slot) != WK_STATUS_OK) return 1;
  wk_admission admission;
  for (uint64_t token = 1; token <= 2; token++) {
    if (wk_slot_admit(slot, WK_CONTROL_KIND_PROPOSE, WK_PROPOSAL_CLASS_FOREGROUND, token,
                      &admission) != WK_STATUS_OK)
      return 1;
  }
  wk_item items[4];
  wk_drain_result drained;
  if (wk_slot_drain(slot, items, 4, &drained) != WK_STATUS_OK || drained.count != 2 ||
      items[0].token != 1 || items[1].token != 2)
    return 1;
  wk_slot_free(slot);
  printf("c consumer: ok (%s)\n", wk_status_str(WK_STATUS_OK));
  return 0;
}
