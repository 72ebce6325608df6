// wkcore.hpp: header-only C++17 RAII layer over the wkcore C ABI (wkcore.h), generation 3.
//
// * Status and Result<T> are [[nodiscard]]. A Status wraps a wk_status; what it *means* is asked
//   of the library, never re-listed here: is() is wk_status_is (Go's errors.Is), str() is
//   wk_status_str, is_backpressure() is is(WK_STATUS_PROPOSAL_BACKPRESSURE). A Result<T> holds a
//   Status and, on success only, a T (T need not be default-constructible); value() on an error
//   result is a precondition violation (asserted in debug builds). A Result converts to its
//   Status where one is expected (`Status st = slot.admit(...)`), dropping the value.
// * Every owning class (Slot, AdmissionRegistry, MetricsRegistry, MetricsSnapshot) is a Handle:
//   one template that owns one reference of an Arc-owned C handle and drops it with the type's
//   wk_<type>_free. Handles are move-only; clone() calls wk_<type>_clone, so every
//   reference-count bump is explicit. c_ptr() lends the raw handle, release() gives it up,
//   adopt() takes one over.
// * No exceptions are thrown by this layer (std::string / std::vector may throw bad_alloc).
//   A method called on an empty (default-constructed or moved-from) object passes NULL to the
//   C ABI and so returns WK_STATUS_NULL_ARGUMENT instead of crashing.
// * Metrics are exported generically: MetricsRegistry::snapshot() copies every family and
//   series the library reports, and render_prometheus() writes any of them. Neither names a
//   family or a label, so a family the library adds shows up with no edit here.
// * Thread safety is that of the C ABI: every object may be used from many threads at once
//   (drains of one slot are serialised inside the library). Moving or destroying an object
//   while another thread uses it is, as for any C++ object, the caller's responsibility.
// * Admission reports ring positions (Admission::position, BatchAdmission::first_position,
//   Drained::first_position; modulo kPositionModulus), so a host may keep its own values in an
//   array indexed by position and take() without copying items out. A config change's admission
//   returns a ConfigChange ticket that resolves it once (Slot::resolve).
// * Every handle is adopted through Handle::adopt, which references wk_abi_v3(), a no-op
//   symbol: linking against a libwkcore.a of another ABI generation fails at link time instead
//   of misbehaving at run time.
#ifndef WKCORE_HPP
#define WKCORE_HPP

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "wkcore.h"

#if WK_ABI_VERSION != 3
#error "wkcore.hpp is written for ABI generation 3: include the wkcore.h it ships with"
#endif

/// Checks a precondition of this layer; define it before including to route failures elsewhere.
#ifndef WKCORE_ASSERT
#define WKCORE_ASSERT(condition) assert(condition)
#endif

namespace wkcore {

/// References the ABI generation's link symbol (see the file comment).
inline void abi_guard() noexcept { wk_abi_v3(); }

/// The ABI generation of the library actually linked (WK_ABI_VERSION when they match).
inline uint32_t abi_version() noexcept {
  abi_guard();
  return wk_abi_version();
}

/// A wk_status with helpers. ok() is true only for WK_STATUS_OK.
class [[nodiscard]] Status {
 public:
  constexpr Status() noexcept = default;
  constexpr Status(wk_status code) noexcept : code_(code) {}  // NOLINT: implicit by design

  constexpr wk_status code() const noexcept { return code_; }
  constexpr bool ok() const noexcept { return code_ == WK_STATUS_OK; }
  constexpr explicit operator bool() const noexcept { return ok(); }

  /// True when this status is `identity` or wraps it (wk_status_is, Go's errors.Is): a busy
  /// proposal (WK_STATUS_PROPOSAL_BUSY) is also WK_STATUS_SLOT_BUSY.
  bool is(wk_status identity) const noexcept { return wk_status_is(code_, identity); }
  /// Upstream's ErrProposalBackpressure: the caller should back off and retry.
  bool is_backpressure() const noexcept { return is(WK_STATUS_PROPOSAL_BACKPRESSURE); }
  /// Static text (upstream's error text for a system's code); never NULL.
  const char* str() const noexcept { return wk_status_str(code_); }

  friend constexpr bool operator==(Status a, Status b) noexcept { return a.code_ == b.code_; }
  friend constexpr bool operator!=(Status a, Status b) noexcept { return a.code_ != b.code_; }

 private:
  wk_status code_ = WK_STATUS_OK;
};

/// A Status plus, when ok(), the value it guards. The value is constructed only on success.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_reference<T>::value, "Result<T&> is not supported");
  static_assert(!std::is_same<std::remove_cv_t<T>, Status>::value, "use Status itself");

 public:
  using value_type = T;

  /// A failure. `status` must not be ok (asserted; without asserts an ok status becomes
  /// WK_STATUS_INVALID_ARGUMENT, so ok() never promises a value that is not there).
  Result(Status status) noexcept : status_(failure(status)) {}  // NOLINT: implicit by design
  /// A success holding `value` (copied, for copyable T; moved otherwise).
  template <typename U = T, std::enable_if_t<std::is_copy_constructible<U>::value, int> = 0>
  Result(const T& value) : value_(value) {}  // NOLINT: implicit by design
  Result(T&& value) noexcept(std::is_nothrow_move_constructible<T>::value)  // NOLINT
      : value_(std::move(value)) {}

  bool ok() const noexcept { return status_.ok(); }
  explicit operator bool() const noexcept { return ok(); }
  Status status() const noexcept { return status_; }
  /// The status alone, where a Status is expected (the value, if any, is dropped).
  operator Status() const noexcept { return status_; }  // NOLINT: implicit by design

  /// The value; the result must be ok() (a precondition, asserted in debug builds).
  T& value() & noexcept {
    WKCORE_ASSERT(ok() && "wkcore::Result::value() on an error result");
    return *value_;
  }
  const T& value() const& noexcept {
    WKCORE_ASSERT(ok() && "wkcore::Result::value() on an error result");
    return *value_;
  }
  T&& value() && noexcept {
    WKCORE_ASSERT(ok() && "wkcore::Result::value() on an error result");
    return std::move(*value_);
  }
  T* operator->() noexcept { return &value(); }
  const T* operator->() const noexcept { return &value(); }
  T& operator*() & noexcept { return value(); }
  const T& operator*() const& noexcept { return value(); }
  T&& operator*() && noexcept { return std::move(*this).value(); }

 private:
  static Status failure(Status status) noexcept {
    WKCORE_ASSERT(!status.ok() && "wkcore::Result: a success needs a value");
    return status.ok() ? Status(WK_STATUS_INVALID_ARGUMENT) : status;
  }

  Status status_;
  std::optional<T> value_;
};

/// Owns one reference of an Arc-owned C handle `T*`, dropped with `Free`. `Derived` is the class
/// built on it (CRTP), so adopt() and clone() give a Derived. `Clone` is the type's
/// wk_<type>_clone, or nullptr for handle types the ABI does not clone (clone() then fails to
/// compile).
template <typename Derived, typename T, void (*Free)(T*),
          wk_status (*Clone)(const T*, T**) = nullptr>
class Handle {
 public:
  using c_type = T;
  static constexpr bool clonable =
      !std::is_same<std::integral_constant<decltype(Clone), Clone>,
                    std::integral_constant<decltype(Clone), nullptr>>::value;

  /// An empty handle; every call through it returns WK_STATUS_NULL_ARGUMENT.
  constexpr Handle() noexcept = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) reset(std::exchange(other.ptr_, nullptr));
    return *this;
  }
  ~Handle() { reset(); }

  /// Takes over one reference (from a C call that returned one, or from release()).
  static Derived adopt(T* raw) noexcept {
    abi_guard();  // link-time ABI guard
    Derived out;
    static_cast<Handle&>(out).ptr_ = raw;
    return out;
  }

  /// Another reference to the same object (wk_<type>_clone).
  Result<Derived> clone() const {
    static_assert(clonable, "the C ABI has no clone for this handle type");
    T* raw = nullptr;
    Status st = call_clone(ptr_, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// The raw handle (still owned by this object); NULL when empty.
  T* c_ptr() const noexcept { return ptr_; }
  /// Gives up ownership of the raw handle; the caller must free it (or adopt() it again).
  [[nodiscard]] T* release() noexcept { return std::exchange(ptr_, nullptr); }
  /// Drops the held reference (if any) and takes over `raw` (default: none).
  void reset(T* raw = nullptr) noexcept {
    T* old = std::exchange(ptr_, raw);
    if (old != nullptr) Free(old);
  }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }

 private:
  static wk_status call_clone(const T* raw, T** out) noexcept {
    if constexpr (clonable) {
      return Clone(raw, out);
    } else {
      (void)raw;
      (void)out;
      return WK_STATUS_INVALID_HANDLE;
    }
  }

  T* ptr_ = nullptr;
};

// --- Metrics ----------------------------------------------------------------------------------

/// One series of a family: its label values (in the family's label order) and value.
struct MetricSeries {
  std::vector<std::string> label_values;
  uint64_t value = 0;
};

/// One family as the library reports it, copied out of a snapshot.
struct MetricFamily {
  std::string name;
  std::string help;  // unescaped
  wk_metric_type type = WK_METRIC_TYPE_COUNTER;
  std::vector<std::string> labels;
  std::vector<MetricSeries> series;
};

/// A wk_str as a std::string (the bytes are UTF-8 and not NUL-terminated).
inline std::string to_string(wk_str s) {
  if (s.len == 0) return std::string();
  return std::string(reinterpret_cast<const char*>(s.ptr), s.len);
}

/// The word of a `# TYPE` line; "untyped" for a type this header does not know.
inline const char* metric_type_name(wk_metric_type type) noexcept {
  switch (type) {
    case WK_METRIC_TYPE_COUNTER:
      return "counter";
    case WK_METRIC_TYPE_GAUGE:
      return "gauge";
  }
  return "untyped";
}

namespace detail {
inline void append_escaped(std::string& out, const std::string& text, bool quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}
}  // namespace detail

/// Appends `family` in Prometheus text format 0.0.4: `# HELP`, `# TYPE`, then one line per
/// series, `name{label="value",...} value` (no braces for a family without labels).
inline void render_prometheus(const MetricFamily& family, std::string& out) {
  out += "# HELP ";
  out += family.name;
  out += ' ';
  detail::append_escaped(out, family.help, false);
  out += "\n# TYPE ";
  out += family.name;
  out += ' ';
  out += metric_type_name(family.type);
  out += '\n';
  for (const MetricSeries& series : family.series) {
    out += family.name;
    if (!family.labels.empty()) {
      out += '{';
      const size_t n = std::min(family.labels.size(), series.label_values.size());
      for (size_t i = 0; i < n; ++i) {
        if (i > 0) out += ',';
        out += family.labels[i];
        out += "=\"";
        detail::append_escaped(out, series.label_values[i], true);
        out += '"';
      }
      out += '}';
    }
    out += ' ';
    out += std::to_string(series.value);
    out += '\n';
  }
}

/// Every family in Prometheus text format 0.0.4, in order: for a registry's snapshot, the same
/// text as MetricsRegistry::render() at that moment.
inline std::string render_prometheus(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const MetricFamily& family : families) render_prometheus(family, out);
  return out;
}

/// One moment's values of every family of a registry (wk_metrics_snapshot). The strings that
/// family() and series() point at live as long as this object or a clone() of it.
class MetricsSnapshot : public Handle<MetricsSnapshot, wk_metrics_snapshot, &wk_metrics_snapshot_free,
                                      &wk_metrics_snapshot_clone> {
 public:
  /// The number of families; 0 for an empty (or invalid) handle.
  size_t family_count() const noexcept { return wk_metrics_snapshot_family_count_get(c_ptr()); }

  /// Family `index` (raw view); WK_STATUS_NOT_FOUND past the last.
  Status family(size_t index, wk_metric_family& out) const noexcept {
    return wk_metrics_snapshot_family_get(c_ptr(), index, &out, sizeof out);
  }

  /// Series `series_index` of family `family_index` (raw view); WK_STATUS_NOT_FOUND past the last.
  Status series(size_t family_index, size_t series_index, wk_metric_series& out) const noexcept {
    return wk_metrics_snapshot_series_get(c_ptr(), family_index, series_index, &out, sizeof out);
  }

  /// Every family and series, copied out (valid after this snapshot is gone).
  Result<std::vector<MetricFamily>> families() const {
    const size_t count = family_count();
    if (count == 0) {
      // 0 is also what an empty or invalid handle gives: let the library say which it is.
      wk_metric_family probe{};
      Status st = family(0, probe);
      if (st.code() != WK_STATUS_NOT_FOUND) {
        return st.ok() ? Status(WK_STATUS_INVALID_ARGUMENT) : st;
      }
      return std::vector<MetricFamily>();
    }
    std::vector<MetricFamily> out;
    out.reserve(count);
    for (size_t f = 0; f < count; ++f) {
      wk_metric_family raw{};
      Status st = family(f, raw);
      if (!st.ok()) return st;
      MetricFamily family_out;
      family_out.name = to_string(raw.name);
      family_out.help = to_string(raw.help);
      family_out.type = static_cast<wk_metric_type>(raw.metric_type);
      family_out.labels.reserve(raw.label_count);
      for (size_t l = 0; l < raw.label_count; ++l) family_out.labels.push_back(to_string(raw.labels[l]));
      family_out.series.reserve(raw.series_count);
      for (size_t s = 0; s < raw.series_count; ++s) {
        wk_metric_series raw_series{};
        st = series(f, s, raw_series);
        if (!st.ok()) return st;
        MetricSeries series_out;
        series_out.value = raw_series.value;
        series_out.label_values.reserve(raw_series.label_count);
        for (size_t l = 0; l < raw_series.label_count; ++l) {
          series_out.label_values.push_back(to_string(raw_series.label_values[l]));
        }
        family_out.series.push_back(std::move(series_out));
      }
      out.push_back(std::move(family_out));
    }
    return out;
  }
};

/// A set of metric families (wk_metrics_registry): the process-wide one, or one of the host's
/// own for isolation. Objects created in it count there.
class MetricsRegistry
    : public Handle<MetricsRegistry, wk_metrics_registry, &wk_metrics_registry_free,
                    &wk_metrics_registry_clone> {
 public:
  /// A new, empty registry of the host's own.
  static Result<MetricsRegistry> create() {
    wk_metrics_registry* raw = nullptr;
    Status st = wk_metrics_registry_new(&raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// A handle to the process-wide registry (where Slot::create(..., nullptr) counts).
  static Result<MetricsRegistry> global() {
    wk_metrics_registry* raw = nullptr;
    Status st = wk_metrics_registry_global(&raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// The raw snapshot handle (one moment's values of every family).
  Result<MetricsSnapshot> snapshot_handle() const {
    wk_metrics_snapshot* raw = nullptr;
    Status st = wk_metrics_registry_snapshot(c_ptr(), &raw);
    if (!st.ok()) return st;
    return MetricsSnapshot::adopt(raw);
  }

  /// Every family and series of one moment, copied out of a snapshot.
  Result<std::vector<MetricFamily>> snapshot() const {
    Result<MetricsSnapshot> snap = snapshot_handle();
    if (!snap.ok()) return snap.status();
    return snap->families();
  }

  /// The library's Prometheus text (format 0.0.4) into `out`, by the BUFFER_TOO_SMALL protocol:
  /// ask for the length, then retry while the text grows between calls. `out` is left alone on
  /// failure.
  Status render(std::string& out) const {
    size_t need = 0;
    Status st = wk_metrics_registry_render(c_ptr(), nullptr, 0, &need);
    for (int attempt = 0; attempt < kRenderAttempts; ++attempt) {
      if (st.code() != WK_STATUS_BUFFER_TOO_SMALL) break;
      std::string buf(need + need / 8 + 256, '\0');
      size_t len = 0;
      st = wk_metrics_registry_render(c_ptr(), reinterpret_cast<uint8_t*>(&buf[0]), buf.size(),
                                      &len);
      if (st.ok()) {
        buf.resize(len);
        out = std::move(buf);
        return st;
      }
      need = len;  // BUFFER_TOO_SMALL writes the needed length
    }
    if (st.ok()) out.clear();  // the text is empty: it fit in 0 bytes
    return st;
  }

  /// As above, returning the text.
  Result<std::string> render() const {
    std::string out;
    Status st = render(out);
    if (!st.ok()) return st;
    return out;
  }

 private:
  static constexpr int kRenderAttempts = 8;
};

// --- Admission --------------------------------------------------------------------------------

/// Limits with both fields 0: the defaults (8192 total, half of it background).
inline wk_slot_limits default_limits() noexcept { return wk_slot_limits{0, 0}; }

/// Limits helper: total and background caps (0 = default).
inline wk_slot_limits limits(uint32_t max_queued_controls,
                             uint32_t max_queued_background_controls = 0) noexcept {
  return wk_slot_limits{max_queued_controls, max_queued_background_controls};
}

/// Positions count modulo this (WK_SLOT_POSITION_MODULUS, 1 << 27).
constexpr uint64_t kPositionModulus = WK_SLOT_POSITION_MODULUS;

class Slot;

/// The ticket of an admitted config change: resolve it once, when the change's future resolves
/// (Slot::resolve, or resolve(slot)). A default-constructed ticket is "no config change".
class ConfigChange {
 public:
  constexpr ConfigChange() noexcept = default;
  constexpr explicit ConfigChange(uint64_t ticket) noexcept : ticket_(ticket) {}

  /// The ticket's number (odd; 0 for none).
  constexpr uint64_t ticket() const noexcept { return ticket_; }
  /// True for a ticket, false for "no config change".
  constexpr explicit operator bool() const noexcept { return ticket_ != 0; }

  /// Slot::resolve(*this): OK once; WK_STATUS_CONFIG_CHANGE_STALE after that.
  Status resolve(const Slot& slot) const noexcept;

  friend constexpr bool operator==(ConfigChange a, ConfigChange b) noexcept {
    return a.ticket_ == b.ticket_;
  }
  friend constexpr bool operator!=(ConfigChange a, ConfigChange b) noexcept {
    return a.ticket_ != b.ticket_;
  }

 private:
  uint64_t ticket_ = 0;
};

/// An admitted action: its ring position and, for a config change, its ticket.
struct Admission {
  uint64_t position = 0;
  ConfigChange config_change;
};

/// A batch admission that ran: `admitted` leading actions were queued at consecutive positions
/// from `first_position` (meaningful when admitted > 0), and `refused` says why the rest were
/// not (ok when all were). A config change batch queues at most one, with its ticket.
struct BatchAdmission {
  size_t admitted = 0;
  Status refused;
  uint64_t first_position = 0;
  ConfigChange config_change;
};

/// What a drain or take took: `count` actions at consecutive positions from `first_position`
/// (when none, the position the next one taken will have).
struct Drained {
  size_t count = 0;
  uint64_t first_position = 0;
};

/// One Slot's proposal admission (wk_slot).
class Slot : public Handle<Slot, wk_slot, &wk_slot_free, &wk_slot_clone> {
 public:
  /// A new slot: a follower, open, nothing queued, counting in `metrics` (nullptr: the
  /// process-wide registry; an empty MetricsRegistry gives WK_STATUS_NULL_ARGUMENT). Its ring is
  /// allocated as positions are first used: a new slot is small whatever its limits.
  static Result<Slot> create(uint64_t slot_id, const wk_slot_limits& lim = default_limits(),
                             const MetricsRegistry* metrics = nullptr) {
    const wk_metrics_registry* registry = nullptr;
    if (metrics != nullptr) {
      if (!*metrics) return Status(WK_STATUS_NULL_ARGUMENT);
      registry = metrics->c_ptr();
    }
    wk_slot* raw = nullptr;
    Status st = wk_slot_new(registry, slot_id, &lim, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// Queue one action; on success, its position (and a config change's ticket). A full queue
  /// gives WK_STATUS_PROPOSAL_BUSY for a proposal and WK_STATUS_SLOT_BUSY for other kinds (both
  /// is(WK_STATUS_SLOT_BUSY)).
  Result<Admission> admit(wk_control_kind kind, wk_proposal_class proposal_class,
                          uint64_t token) const noexcept {
    wk_admission raw{};
    Status st = wk_slot_admit(c_ptr(), kind, proposal_class, token, &raw);
    if (!st.ok()) return st;
    return Admission{raw.position, ConfigChange(raw.config_change)};
  }

  /// Queue n actions in order (`tokens` may be nullptr: n zero tokens, for hosts that keep their
  /// values by position). The Result is an error only when the call did not run (bad handle or
  /// argument); refusals are in BatchAdmission::refused.
  Result<BatchAdmission> admit_batch(wk_control_kind kind, wk_proposal_class proposal_class,
                                     const uint64_t* tokens, size_t n) const noexcept {
    wk_batch_result raw{};
    Status st = wk_slot_admit_batch(c_ptr(), kind, proposal_class, tokens, n, &raw);
    if (!st.ok()) return st;
    return BatchAdmission{raw.admitted, Status(raw.refused), raw.first_position,
                          ConfigChange(raw.config_change)};
  }

  /// As above, with the tokens of a vector (an empty one is WK_STATUS_INVALID_ARGUMENT).
  Result<BatchAdmission> admit_batch(wk_control_kind kind, wk_proposal_class proposal_class,
                                     const std::vector<uint64_t>& tokens) const noexcept {
    static const uint64_t kNone = 0;  // lets the library refuse n == 0 itself
    return admit_batch(kind, proposal_class, tokens.empty() ? &kNone : tokens.data(),
                       tokens.size());
  }

  /// As above, without tokens: n actions whose values the host keeps by position.
  Result<BatchAdmission> admit_batch(wk_control_kind kind, wk_proposal_class proposal_class,
                                     size_t n) const noexcept {
    return admit_batch(kind, proposal_class, nullptr, n);
  }

  /// Take up to `cap` actions in FIFO order into items[0..count).
  Result<Drained> drain(wk_item* items, size_t cap) const noexcept {
    wk_drain_result raw{};
    Status st = wk_slot_drain(c_ptr(), items, cap, &raw);
    if (!st.ok()) return st;
    return Drained{raw.count, raw.first_position};
  }

  /// Take up to `max` actions; `out` is replaced by what was taken (nothing on error).
  Result<Drained> drain(std::vector<wk_item>& out, size_t max) const {
    wk_item scratch{};  // lets the library refuse max == 0 itself
    out.resize(max);
    Result<Drained> r = drain(max == 0 ? &scratch : out.data(), max);
    out.resize(r.ok() ? r->count : 0);
    return r;
  }

  /// Take up to `max` actions in FIFO order without copying them out (the host keeps the
  /// values by position). max == 0 is WK_STATUS_INVALID_ARGUMENT.
  Result<Drained> take(size_t max) const noexcept {
    wk_drain_result raw{};
    Status st = wk_slot_take(c_ptr(), max, &raw);
    if (!st.ok()) return st;
    return Drained{raw.count, raw.first_position};
  }

  /// The config change admitted with `change` has resolved: a new one may be admitted. Ok once
  /// per ticket; WK_STATUS_CONFIG_CHANGE_STALE (nothing changed) for a ticket resolved already,
  /// one of an earlier change, or none.
  Status resolve(ConfigChange change) const noexcept {
    return wk_slot_config_change_resolve(c_ptr(), change.ticket());
  }

  Status set_leader() const noexcept { return wk_slot_set_leader(c_ptr()); }
  Status demote() const noexcept { return wk_slot_demote(c_ptr()); }
  Status close() const noexcept { return wk_slot_close(c_ptr()); }
  /// Ok when this call recorded `code`; WK_STATUS_SLOT_FAILED when one was already recorded.
  Status fail(uint32_t code) const noexcept { return wk_slot_fail(c_ptr(), code); }

  /// Flags, queue depths (queued_proposals: 0 means no proposal queued) and memory_bytes.
  Status state(wk_slot_state& out) const noexcept {
    return wk_slot_state_get(c_ptr(), &out, sizeof out);
  }
  Result<wk_slot_state> state() const noexcept {
    wk_slot_state s{};
    Status st = state(s);
    if (!st.ok()) return st;
    return s;
  }

  Status counters(wk_admission_counters& out) const noexcept {
    return wk_slot_counters_get(c_ptr(), &out, sizeof out);
  }
  Result<wk_admission_counters> counters() const noexcept {
    wk_admission_counters c{};
    Status st = counters(c);
    if (!st.ok()) return st;
    return c;
  }

  /// The slot's id; 0 for an empty handle.
  uint64_t id() const noexcept { return wk_slot_id_get(c_ptr()); }
};

inline Status ConfigChange::resolve(const Slot& slot) const noexcept { return slot.resolve(*this); }

/// Slots by id (wk_admission_registry). Holds its own reference to each inserted slot.
class AdmissionRegistry
    : public Handle<AdmissionRegistry, wk_admission_registry, &wk_admission_registry_free,
                    &wk_admission_registry_clone> {
 public:
  static Result<AdmissionRegistry> create() {
    wk_admission_registry* raw = nullptr;
    Status st = wk_admission_registry_new(&raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// WK_STATUS_ALREADY_EXISTS when a slot with that id is registered.
  Status insert(const Slot& slot) const noexcept {
    return wk_admission_registry_insert(c_ptr(), slot.c_ptr());
  }

  /// A new reference to the slot; WK_STATUS_SLOT_NOT_FOUND when absent.
  Result<Slot> get(uint64_t slot_id) const {
    wk_slot* raw = nullptr;
    Status st = wk_admission_registry_get(c_ptr(), slot_id, &raw);
    if (!st.ok()) return st;
    return Slot::adopt(raw);
  }

  /// WK_STATUS_SLOT_NOT_FOUND when absent.
  Status remove(uint64_t slot_id) const noexcept {
    return wk_admission_registry_remove(c_ptr(), slot_id);
  }
};

}  // namespace wkcore

#endif  // WKCORE_HPP
