// Minimal use of the wkcore C++ layer: create a leader slot counted in a metrics registry of its
// own, admit background and foreground proposals until backpressure, drain them as a Raft worker
// would, and export the registry's metrics as a gateway would (generically: no family named).
// Then an MQTT gateway's owner registry: reserve a connection, activate its committed lease, run
// work inside operation scopes, sweep on the host's own timer, and prove the connection
// isolated before handing it over.
// Then delivery tags: a channel leader builds a tag partitioned by slot, a follower fetches its
// partition over service 44, fences a delivery page against it, and a host timer pages through
// the cache's cleanup.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "wkcore.hpp"

// The owner registry: the close callback runs on the thread that quiesces; sweeping is a call
// the host makes on its own timer (the library starts no thread).
static int owners() {
  wkcore::OwnerRegistry::Options options;
  options.node_id = 1;
  options.boot_id = "example-boot";
  options.capacity = 1024;
  auto created = wkcore::OwnerRegistry::create(options);
  if (!created.ok()) {
    std::fprintf(stderr, "owners: %s\n", created.status().str());
    return 1;
  }
  wkcore::OwnerRegistry registry = std::move(created).value();
  int closes = 0;
  auto reserved = registry.reserve("tenant", "client-1", "alice", 1, 1, [&closes](uint64_t) {
    ++closes;  // seal writes, close the socket
    return WK_STATUS_OK;
  });
  if (!reserved.ok()) return 1;
  wkcore::Owner owner = std::move(reserved).value();
  auto now = registry.now();
  if (!now.ok() || !owner.activate(/*revision=*/1, *now + 30000000000ULL).ok()) return 1;
  {
    auto op = owner.begin();  // one admitted scope: a publish, a delivery
    if (!op.ok()) return 1;
    std::printf("owner op check: %s\n", op->check().str());
  }  // the scope ends here (OwnerOp's destructor is done)
  // The host's timer: one sweep turn per interval, however many threads call it.
  auto turn = registry.sweep_turn(/*interval_ns=*/250000000ULL, /*limit=*/256);
  if (!turn.ok()) return 1;
  std::printf("sweep turn ran=%d visited=%u\n", turn->ran ? 1 : 0, turn->visited);
  wkcore::Status st = owner.quiesce(/*timeout_ns=*/1000000000ULL);
  auto snapshot = registry.snapshot();
  if (!snapshot.ok()) return 1;
  std::printf("quiesce: %s; closes=%d held=%llu\n", st.str(), closes,
              static_cast<unsigned long long>(snapshot->held));
  return st.ok() && closes == 1 && snapshot->held == 0 ? 0 : 1;
}

// Delivery tags: the leader builds, the follower fetches and caches its own partition, and the
// follower's cleanup is a call the host makes on its own timer (the library starts no thread).
static int tags() {
  wkcore::TagLeader::Options leader_options;
  leader_options.local_node_id = 1;
  wkcore::TagCache::Options leader_cache_options;
  leader_cache_options.local_node_id = 1;
  wkcore::TagCache::Options follower_options;
  follower_options.local_node_id = 2;
  follower_options.ttl_ns = 60000000000ULL;
  auto leader = wkcore::TagLeader::create(leader_options);
  auto leader_cache = wkcore::TagCache::create(leader_cache_options);
  auto follower = wkcore::TagCache::create(follower_options);
  if (!leader.ok() || !leader_cache.ok() || !follower.ok()) return 1;

  // The leader: subscribers by hash slot, slots by node (one consistent control-plane snapshot).
  wkcore::TagBuild request;
  request.channel_key = "group:g1";
  request.subscriber_mutation_version = 7;  // the subscriber store's version
  request.topology = {1, {wk_tag_slot_ref{0, 1, 1, 1}, wk_tag_slot_ref{1, 2, 1, 1}}};
  auto built = leader->build_by_slot(request, {"alice", "bob", "carol"}, {0, 1, 1}, {1, 2});
  if (!built.ok()) return 1;

  // The follower fetches its partition of the tag the message names.
  wkcore::TagRequestFields get;
  get.op = "get";
  get.tag_key = std::string(built->key());
  get.tag_version = built->tag_version();
  get.target_node_id = 2;
  auto frame = wkcore::TagFrame::encode_request(get);
  if (!frame.ok()) return 1;
  auto response = leader->handle_rpc(*leader_cache, *frame, /*channel_leader=*/1);
  if (!response.ok()) return 1;
  auto fetched = follower->store_response(*response);
  if (!fetched.ok() || !fetched->stored) return 1;

  // A delivery page: fenced against the reference the message carries, read zero-copy.
  auto lookup = follower->lookup("group:g1", built->request());
  if (!lookup.ok() || !lookup->hit()) return 1;
  auto partition = lookup->view.partition_of(2);
  if (!partition.ok()) return 1;
  std::printf("tag %.*s v%llu on node 2: %s, %zu uids:", static_cast<int>(built->key().size()),
              built->key().data(), static_cast<unsigned long long>(built->tag_version()),
              wkcore::tag_lookup_reason_name(lookup->reason), partition->size());
  for (size_t i = 0; i < partition->size(); i++) {
    const std::string_view uid = partition->uid(i);
    std::printf(" %.*s", static_cast<int>(uid.size()), uid.data());
  }
  std::printf("\n");

  // The host's timer: one cleanup page per tick, with the cache clock's reading.
  auto now = follower->now();
  if (!now.ok()) return 1;
  auto page = follower->cleanup(*now, /*limit=*/256);
  if (!page.ok()) return 1;
  std::printf("tag cleanup: visited=%u reclaimed=%u\n", page->visited, page->reclaimed);
  return partition->size() == 2 && page->reclaimed == 0 ? 0 : 1;
}

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
  if (items.size() != 3) return 1;
  if (owners() != 0) return 1;
  return tags();
}
