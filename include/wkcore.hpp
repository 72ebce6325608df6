// wkcore.hpp: header-only C++17 RAII layer over the wkcore C ABI (wkcore.h).
//
// * Each class owns its handle in a std::unique_ptr whose deleter calls wk_<type>_free. Classes
//   are move-only; clone() calls wk_<type>_clone, so every reference-count bump is visible.
//   c_ptr() exposes the raw handle for C calls (ownership stays with the object).
// * Every call returns a Status (or a Result<T> = Status + value); no exceptions are thrown.
//   A method called on an empty (default-constructed or moved-from) object passes NULL to the
//   C ABI and so returns WK_STATUS_NULL_ARGUMENT instead of crashing.
// * Thread safety is that of the C ABI: a Slot or AdmissionRegistry may be used from many
//   threads at once (drains are serialised inside the library). Moving or destroying an object
//   while another thread uses it is, as for any C++ object, the caller's responsibility.
// * Factories call wk_abi_v1(), a no-op symbol: linking against a libwkcore.a of another ABI
//   generation fails at link time instead of misbehaving at run time.
#ifndef WKCORE_HPP
#define WKCORE_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "wkcore.h"

namespace wkcore {

/// A wk_status with helpers. ok() is true only for WK_STATUS_OK.
class Status {
 public:
  constexpr Status() noexcept : code_(WK_STATUS_OK) {}
  constexpr Status(wk_status code) noexcept : code_(code) {}  // NOLINT: implicit by design

  constexpr wk_status code() const noexcept { return code_; }
  constexpr bool ok() const noexcept { return code_ == WK_STATUS_OK; }
  constexpr explicit operator bool() const noexcept { return ok(); }
  /// BUSY or THROTTLED: upstream's ErrProposalBackpressure.
  constexpr bool is_backpressure() const noexcept {
    return code_ == WK_STATUS_BUSY || code_ == WK_STATUS_THROTTLED;
  }
  /// Static text (upstream's error text where one exists); never NULL.
  const char* str() const noexcept { return wk_status_str(code_); }

  friend constexpr bool operator==(Status a, Status b) noexcept { return a.code_ == b.code_; }
  friend constexpr bool operator!=(Status a, Status b) noexcept { return a.code_ != b.code_; }

 private:
  wk_status code_;
};

/// A Status plus the value it guards; value() is meaningful only when ok().
template <typename T>
class Result {
 public:
  Result(Status status) : status_(status), value_() {}  // NOLINT: implicit by design
  Result(T value) : status_(WK_STATUS_OK), value_(std::move(value)) {}  // NOLINT

  bool ok() const noexcept { return status_.ok(); }
  explicit operator bool() const noexcept { return ok(); }
  Status status() const noexcept { return status_; }

  T& value() & noexcept { return value_; }
  const T& value() const& noexcept { return value_; }
  T&& value() && noexcept { return std::move(value_); }
  T* operator->() noexcept { return &value_; }
  const T* operator->() const noexcept { return &value_; }
  T& operator*() & noexcept { return value_; }
  const T& operator*() const& noexcept { return value_; }

 private:
  Status status_;
  T value_;
};

/// The ABI generation of the library actually linked (WK_ABI_VERSION when they match).
inline uint32_t abi_version() noexcept {
  wk_abi_v1();
  return wk_abi_version();
}

/// Deleter for std::unique_ptr<wk_slot>.
struct SlotDeleter {
  void operator()(wk_slot* slot) const noexcept { wk_slot_free(slot); }
};

/// Deleter for std::unique_ptr<wk_admission_registry>.
struct RegistryDeleter {
  void operator()(wk_admission_registry* registry) const noexcept {
    wk_admission_registry_free(registry);
  }
};

/// Limits with both fields 0: the defaults (8192 total, 4096 background).
inline wk_slot_limits default_limits() noexcept { return wk_slot_limits{0, 0}; }

/// Limits helper: total and background caps (0 = default).
inline wk_slot_limits limits(uint32_t max_queued_controls,
                             uint32_t max_queued_background_controls = 0) noexcept {
  return wk_slot_limits{max_queued_controls, max_queued_background_controls};
}

/// One Slot's proposal admission (a handle to an Arc-owned object).
class Slot {
 public:
  /// An empty slot; every method returns WK_STATUS_NULL_ARGUMENT.
  Slot() noexcept = default;
  Slot(Slot&&) noexcept = default;
  Slot& operator=(Slot&&) noexcept = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  ~Slot() = default;

  /// Takes ownership of one reference (e.g. from wk_admission_registry_get).
  static Slot adopt(wk_slot* raw) noexcept { return Slot(raw); }

  /// A new slot: a follower, open, nothing queued.
  static Result<Slot> create(uint64_t slot_id, const wk_slot_limits& lim = default_limits()) {
    Slot out;
    Status st = create(slot_id, lim, out);
    if (!st.ok()) return st;
    return Result<Slot>(std::move(out));
  }

  /// As above, writing the slot to `out` (left unchanged on failure).
  static Status create(uint64_t slot_id, const wk_slot_limits& lim, Slot& out) {
    wk_abi_v1();  // link-time ABI guard
    wk_slot* raw = nullptr;
    Status st = wk_slot_new(slot_id, &lim, &raw);
    if (st.ok()) out = Slot(raw);
    return st;
  }

  /// Another reference to the same slot (wk_slot_clone).
  Result<Slot> clone() const {
    wk_slot* raw = nullptr;
    Status st = wk_slot_clone(ptr_.get(), &raw);
    if (!st.ok()) return st;
    return Result<Slot>(Slot(raw));
  }

  /// The raw handle (still owned by this object); NULL when empty.
  wk_slot* c_ptr() const noexcept { return ptr_.get(); }
  /// Gives up ownership of the raw handle; the caller must wk_slot_free it.
  wk_slot* release() noexcept { return ptr_.release(); }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }

  /// Queue one action (kind: WK_CONTROL_KIND_*, proposal_class: WK_PROPOSAL_CLASS_*).
  Status admit(uint32_t kind, uint32_t proposal_class, uint64_t token) const noexcept {
    return wk_slot_admit(ptr_.get(), kind, proposal_class, token);
  }

  /// Queue n actions in order; on ok, `result` says how many leading tokens were admitted.
  Status admit_batch(uint32_t kind, uint32_t proposal_class, const uint64_t* tokens, size_t n,
                     wk_batch_result& result) const noexcept {
    return wk_slot_admit_batch(ptr_.get(), kind, proposal_class, tokens, n, &result);
  }

  Status admit_batch(uint32_t kind, uint32_t proposal_class, const std::vector<uint64_t>& tokens,
                     wk_batch_result& result) const noexcept {
    return admit_batch(kind, proposal_class, tokens.data(), tokens.size(), result);
  }

  /// Take up to `cap` actions in FIFO order into items[0..n).
  Status drain(wk_item* items, size_t cap, size_t& n) const noexcept {
    return wk_slot_drain(ptr_.get(), items, cap, &n);
  }

  /// Take up to `max` actions; `out` is replaced by what was taken (possibly nothing).
  Status drain(std::vector<wk_item>& out, size_t max) const {
    out.resize(max);
    size_t n = 0;
    Status st = drain(out.data(), max, n);
    out.resize(st.ok() ? n : 0);
    return st;
  }

  Status set_leader() const noexcept { return wk_slot_set_leader(ptr_.get()); }
  Status demote() const noexcept { return wk_slot_demote(ptr_.get()); }
  Status close() const noexcept { return wk_slot_close(ptr_.get()); }
  /// Ok when this call recorded `code`; WK_STATUS_FATAL when one was already recorded.
  Status fail(uint32_t code) const noexcept { return wk_slot_fail(ptr_.get(), code); }
  Status config_change_resolved() const noexcept {
    return wk_slot_config_change_resolved(ptr_.get());
  }

  Status state(wk_slot_state& out) const noexcept { return wk_slot_state_get(ptr_.get(), &out); }
  Result<wk_slot_state> state() const noexcept {
    wk_slot_state s{};
    Status st = state(s);
    if (!st.ok()) return st;
    return s;
  }

  Status counters(wk_admission_counters& out) const noexcept {
    return wk_slot_counters(ptr_.get(), &out);
  }
  Result<wk_admission_counters> counters() const noexcept {
    wk_admission_counters c{};
    Status st = counters(c);
    if (!st.ok()) return st;
    return c;
  }

  Result<uint64_t> id() const noexcept {
    uint64_t id = 0;
    Status st = wk_slot_id(ptr_.get(), &id);
    if (!st.ok()) return st;
    return id;
  }

 private:
  explicit Slot(wk_slot* raw) noexcept : ptr_(raw) {}
  std::unique_ptr<wk_slot, SlotDeleter> ptr_;
};

/// Slots by id. Holds its own reference to each inserted slot.
class AdmissionRegistry {
 public:
  AdmissionRegistry() noexcept = default;
  AdmissionRegistry(AdmissionRegistry&&) noexcept = default;
  AdmissionRegistry& operator=(AdmissionRegistry&&) noexcept = default;
  AdmissionRegistry(const AdmissionRegistry&) = delete;
  AdmissionRegistry& operator=(const AdmissionRegistry&) = delete;
  ~AdmissionRegistry() = default;

  static Result<AdmissionRegistry> create() {
    wk_abi_v1();  // link-time ABI guard
    wk_admission_registry* raw = nullptr;
    Status st = wk_admission_registry_new(&raw);
    if (!st.ok()) return st;
    return Result<AdmissionRegistry>(AdmissionRegistry(raw));
  }

  Result<AdmissionRegistry> clone() const {
    wk_admission_registry* raw = nullptr;
    Status st = wk_admission_registry_clone(ptr_.get(), &raw);
    if (!st.ok()) return st;
    return Result<AdmissionRegistry>(AdmissionRegistry(raw));
  }

  wk_admission_registry* c_ptr() const noexcept { return ptr_.get(); }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }

  /// WK_STATUS_ALREADY_EXISTS when a slot with that id is registered.
  Status insert(const Slot& slot) const noexcept {
    return wk_admission_registry_insert(ptr_.get(), slot.c_ptr());
  }

  /// A new reference to the slot; WK_STATUS_NOT_FOUND when absent.
  Result<Slot> get(uint64_t slot_id) const {
    wk_slot* raw = nullptr;
    Status st = wk_admission_registry_get(ptr_.get(), slot_id, &raw);
    if (!st.ok()) return st;
    return Result<Slot>(Slot::adopt(raw));
  }

  /// WK_STATUS_NOT_FOUND when absent.
  Status remove(uint64_t slot_id) const noexcept {
    return wk_admission_registry_remove(ptr_.get(), slot_id);
  }

 private:
  explicit AdmissionRegistry(wk_admission_registry* raw) noexcept : ptr_(raw) {}
  std::unique_ptr<wk_admission_registry, RegistryDeleter> ptr_;
};

/// Process-wide counters (summed over all slots).
inline Result<wk_metrics_snapshot> metrics_snapshot() noexcept {
  wk_abi_v1();
  wk_metrics_snapshot s{};
  Status st = wk_metrics_snapshot_get(&s);
  if (!st.ok()) return st;
  return s;
}

/// Prometheus text (format 0.0.4) into `out`; retries while the text grows between calls.
inline Status metrics_render(std::string& out) {
  wk_abi_v1();
  size_t need = 0;
  Status st = wk_metrics_render(nullptr, 0, &need);
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (st.code() != WK_STATUS_BUFFER_TOO_SMALL) break;
    std::vector<uint8_t> buf(need + need / 4 + 256);
    size_t len = 0;
    st = wk_metrics_render(buf.data(), buf.size(), &len);
    if (st.ok()) {
      out.assign(reinterpret_cast<const char*>(buf.data()), len);
      return st;
    }
    need = len;  // BUFFER_TOO_SMALL writes the needed length
  }
  if (st.ok()) out.clear();  // an empty exposition fits in 0 bytes
  return st;
}

/// Prometheus text, or an empty string on failure.
inline std::string metrics_render() {
  std::string out;
  if (!metrics_render(out).ok()) out.clear();
  return out;
}

}  // namespace wkcore

#endif  // WKCORE_HPP
