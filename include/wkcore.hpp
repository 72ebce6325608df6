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
// * Coordination (Ledger, HandoffLedger, AnchorTable) are Handles too. A call's decision (won,
//   lost, duplicate, not found, full, mismatch) is a Decision beside an ok Status; an error
//   Status means the library refused the call for its arguments and nothing changed. Batch calls
//   take a std::vector, a braced list or (C++20) a std::span of keys and build the concatenated
//   bytes and lengths the C call wants.
#ifndef WKCORE_HPP
#define WKCORE_HPP

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "wkcore.h"

// std::span overloads of the coordination batch calls, where the standard library has it (C++20).
#if defined(__has_include)
#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#endif
#endif
#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
#define WKCORE_HAVE_SPAN 1
#else
#define WKCORE_HAVE_SPAN 0
#endif

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

/// The library's own heap, read now (wk_memory_stats_get): the bytes and blocks every system of
/// the linked library holds, its allocations so far and the threads that made them. The
/// process's resident set also holds what the allocator keeps for itself; this does not.
inline wk_memory_stats memory_stats() noexcept {
  wk_memory_stats stats{};
  // Cannot fail: the out-pointer is a local of the full size.
  (void)wk_memory_stats_get(&stats, sizeof stats);
  return stats;
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

// --- Coordination -----------------------------------------------------------------------------
//
// The ledgers and the anchor table of the coordination ABI (wk_ledger, wk_handoff_ledger,
// wk_anchor_table). What a call *decided* (won, lost, duplicate, not found, full, mismatch) is a
// Decision beside an ok Status, as in the C ABI: a duplicate receipt is not an error. A Result
// holds an error only when the library refused the call for its arguments (then nothing
// changed), or, for get(), when there is no record (WK_STATUS_NOT_FOUND).

/// What one coordination call decided (wk_coord_decision): the result, the record's state after
/// a win (or as a loser found it), and, when that state is WK_RECORD_STATE_FINALIZED, the outcome
/// code that won (else 0).
struct Decision {
  wk_coord_result result = WK_COORD_RESULT_NOT_FOUND;
  wk_record_state state = WK_RECORD_STATE_NONE;
  uint32_t outcome = 0;

  constexpr Decision() noexcept = default;
  constexpr Decision(wk_coord_result r, wk_record_state s, uint32_t o = 0) noexcept
      : result(r), state(s), outcome(o) {}
  /// The fields of a C decision (its reserved field is dropped).
  static constexpr Decision from_c(const wk_coord_decision& d) noexcept {
    return Decision(d.result, d.state, d.outcome);
  }

  constexpr bool won() const noexcept { return result == WK_COORD_RESULT_WON; }
  constexpr bool lost() const noexcept { return result == WK_COORD_RESULT_LOST; }
  constexpr bool duplicate() const noexcept { return result == WK_COORD_RESULT_DUPLICATE; }
  constexpr bool not_found() const noexcept { return result == WK_COORD_RESULT_NOT_FOUND; }
  constexpr bool full() const noexcept { return result == WK_COORD_RESULT_FULL; }
  constexpr bool mismatch() const noexcept { return result == WK_COORD_RESULT_MISMATCH; }
  constexpr bool finalized() const noexcept { return state == WK_RECORD_STATE_FINALIZED; }

  friend constexpr bool operator==(const Decision& a, const Decision& b) noexcept {
    return a.result == b.result && a.state == b.state && a.outcome == b.outcome;
  }
  friend constexpr bool operator!=(const Decision& a, const Decision& b) noexcept {
    return !(a == b);
  }
};

/// A batch call's decisions, one per key in order, and how many won (for Ledger::place: how
/// many were placed; all-or-nothing on full, then every decision is WK_COORD_RESULT_FULL).
struct BatchDecisions {
  std::vector<Decision> decisions;
  size_t won = 0;
};

/// What one scan page did (wk_coord_page): reconcile, reclaim, the runner sweeps.
struct Page {
  uint64_t scanned = 0;
  uint64_t changed = 0;
  /// The page ended a pass over the whole ledger.
  bool wrapped = false;

  static constexpr Page from_c(const wk_coord_page& p) noexcept {
    return Page{p.scanned, p.changed, p.wrapped != 0};
  }
  friend constexpr bool operator==(const Page& a, const Page& b) noexcept {
    return a.scanned == b.scanned && a.changed == b.changed && a.wrapped == b.wrapped;
  }
  friend constexpr bool operator!=(const Page& a, const Page& b) noexcept { return !(a == b); }
};

/// A moment's view of one record (wk_ledger_record), copied out.
struct Record {
  wk_record_state state = WK_RECORD_STATE_NONE;
  /// With state == WK_RECORD_STATE_FINALIZED: the outcome code that won; else 0.
  uint32_t outcome = 0;
  /// The placeholder, or the claim's request id once visible.
  uint64_t id = 0;
  /// 0: none.
  uint64_t runner = 0;
  /// WK_COORD_DEADLINE_NEVER: none (has_deadline()).
  uint64_t deadline = WK_COORD_DEADLINE_NEVER;
  uint64_t refreshed_at = 0;
  /// WK_COORD_TIME_UNSET while PENDING, or until the winner's time is visible.
  uint64_t finalized_at = WK_COORD_TIME_UNSET;
  uint64_t payload = 0;
  uint64_t duplicates = 0;
  uint64_t last_duplicate_payload = 0;

  static constexpr Record from_c(const wk_ledger_record& r) noexcept {
    return Record{r.state,        r.outcome,      r.id,      r.runner,
                  r.deadline,     r.refreshed_at, r.finalized_at, r.payload,
                  r.duplicates,   r.last_duplicate_payload};
  }
  /// PENDING: placed or claimed.
  constexpr bool pending() const noexcept {
    return state == WK_RECORD_STATE_PLACED || state == WK_RECORD_STATE_CLAIMED;
  }
  constexpr bool finalized() const noexcept { return state == WK_RECORD_STATE_FINALIZED; }
  constexpr bool has_deadline() const noexcept { return deadline != WK_COORD_DEADLINE_NEVER; }
  constexpr bool has_finalized_at() const noexcept { return finalized_at != WK_COORD_TIME_UNSET; }

  friend constexpr bool operator==(const Record& a, const Record& b) noexcept {
    return a.state == b.state && a.outcome == b.outcome && a.id == b.id && a.runner == b.runner &&
           a.deadline == b.deadline && a.refreshed_at == b.refreshed_at &&
           a.finalized_at == b.finalized_at && a.payload == b.payload &&
           a.duplicates == b.duplicates && a.last_duplicate_payload == b.last_duplicate_payload;
  }
  friend constexpr bool operator!=(const Record& a, const Record& b) noexcept { return !(a == b); }
};

/// A ledger's event counters (wk_ledger_counts), copied out.
struct Counts {
  uint64_t claims_won = 0;
  uint64_t claims_lost = 0;
  uint64_t finalizations_won = 0;
  uint64_t finalizations_duplicate = 0;
  uint64_t reconciled_timeouts = 0;
  uint64_t rejected_full = 0;
  uint64_t reclaimed = 0;

  static constexpr Counts from_c(const wk_ledger_counts& c) noexcept {
    return Counts{c.claims_won,          c.claims_lost,         c.finalizations_won,
                  c.finalizations_duplicate, c.reconciled_timeouts, c.rejected_full,
                  c.reclaimed};
  }
  friend constexpr bool operator==(const Counts& a, const Counts& b) noexcept {
    return a.claims_won == b.claims_won && a.claims_lost == b.claims_lost &&
           a.finalizations_won == b.finalizations_won &&
           a.finalizations_duplicate == b.finalizations_duplicate &&
           a.reconciled_timeouts == b.reconciled_timeouts && a.rejected_full == b.rejected_full &&
           a.reclaimed == b.reclaimed;
  }
  friend constexpr bool operator!=(const Counts& a, const Counts& b) noexcept { return !(a == b); }
};

/// What AnchorTable::try_fire decided (wk_fire): `value` is the anchor advanced from (FIRED),
/// when it is due (NOT_DUE), else 0.
struct Fire {
  wk_fire_kind kind = WK_FIRE_KIND_LOST;
  uint64_t value = 0;

  static constexpr Fire from_c(const wk_fire& f) noexcept { return Fire{f.kind, f.value}; }
  /// This call advanced the anchor: the caller must fire.
  constexpr bool fired() const noexcept { return kind == WK_FIRE_KIND_FIRED; }

  friend constexpr bool operator==(const Fire& a, const Fire& b) noexcept {
    return a.kind == b.kind && a.value == b.value;
  }
  friend constexpr bool operator!=(const Fire& a, const Fire& b) noexcept { return !(a == b); }
};

namespace detail {
/// Keys of a batch as the C ABI takes them: their bytes concatenated and their lengths. An
/// empty batch still passes non-NULL pointers, so the library itself refuses count == 0.
class KeyBatch {
 public:
  template <typename Keys>
  explicit KeyBatch(const Keys& keys) {
    lens_.reserve(keys.size());
    size_t total = 0;
    for (const auto& key : keys) total += std::string_view(key).size();
    bytes_.reserve(total);
    for (const auto& key : keys) {
      const std::string_view k(key);
      // A length that does not fit a uint32_t is far above WK_COORD_KEY_MAX: refuse it here
      // as the library would, instead of truncating it into another key.
      if (k.size() > UINT32_MAX) oversized_ = true;
      lens_.push_back(static_cast<uint32_t>(k.size()));
      bytes_.append(k.data(), k.size());
    }
  }

  /// WK_STATUS_COORD_INVALID_KEY for a length the C ABI cannot carry; else ok.
  Status check() const noexcept {
    return oversized_ ? Status(WK_STATUS_COORD_INVALID_KEY) : Status();
  }
  const uint8_t* bytes() const noexcept {
    // std::string's data() is never NULL; the bytes are the keys' bytes.
    return reinterpret_cast<const uint8_t*>(bytes_.data());
  }
  size_t bytes_len() const noexcept { return bytes_.size(); }
  const uint32_t* lens() const noexcept {
    static const uint32_t kNone = 0;
    return lens_.empty() ? &kNone : lens_.data();
  }
  size_t count() const noexcept { return lens_.size(); }

 private:
  std::string bytes_;
  std::vector<uint32_t> lens_;
  bool oversized_ = false;
};

/// A key's bytes for the C ABI: never NULL (an empty std::string_view may have a NULL data()),
/// so the library refuses an empty key as WK_STATUS_COORD_INVALID_KEY, not a NULL argument.
inline const uint8_t* key_ptr(std::string_view key) noexcept {
  static const uint8_t kEmpty = 0;
  return key.data() == nullptr ? &kEmpty : reinterpret_cast<const uint8_t*>(key.data());
}

/// Decisions of a batch call, converted; `raw` holds count decisions.
inline std::vector<Decision> decisions_of(const std::vector<wk_coord_decision>& raw,
                                          size_t count) {
  std::vector<Decision> out;
  out.reserve(count);
  for (size_t i = 0; i < count && i < raw.size(); ++i) out.push_back(Decision::from_c(raw[i]));
  return out;
}
}  // namespace detail

/// A bounded ledger of byte-keyed records (wk_ledger): the claim ledger (two-phase claims) or the
/// pending ledger (receipts, timeouts, runner marks, token pairs). Keys are 1 to
/// WK_COORD_KEY_MAX bytes (any bytes; a std::string_view is not NUL-terminated); times are the
/// host's, UINT64_MAX reserved.
class Ledger : public Handle<Ledger, wk_ledger, &wk_ledger_free, &wk_ledger_clone> {
 public:
  /// The ledger's kind: the `ledger` label of its metric series.
  enum class Kind : uint32_t {
    kClaim = WK_LEDGER_KIND_CLAIM,
    kPending = WK_LEDGER_KIND_PENDING,
  };

  /// A new ledger of `kind` holding at most `capacity` records (1..=WK_LEDGER_CAPACITY_MAX, else
  /// WK_STATUS_COORD_INVALID_CAPACITY, as for an unknown kind), keeping terminal records for
  /// `retention`, counted in `metrics` (nullptr: the process-wide registry; an empty
  /// MetricsRegistry gives WK_STATUS_NULL_ARGUMENT).
  static Result<Ledger> create(Kind kind, uint64_t capacity, uint64_t retention,
                               const MetricsRegistry* metrics = nullptr) {
    const wk_metrics_registry* registry = nullptr;
    if (metrics != nullptr) {
      if (!*metrics) return Status(WK_STATUS_NULL_ARGUMENT);
      registry = metrics->c_ptr();
    }
    wk_ledger* raw = nullptr;
    Status st = wk_ledger_new(registry, static_cast<uint32_t>(kind), capacity, retention, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// Inserts a PENDING record holding `id` and `runner` (0: none), timed out from `deadline`
  /// (WK_COORD_DEADLINE_NEVER: never): WON, LOST / DUPLICATE (the key is held), or FULL.
  Result<Decision> insert(std::string_view key, uint64_t id, uint64_t runner, uint64_t deadline,
                          uint64_t now) const noexcept {
    wk_coord_decision d{};
    Status st = wk_ledger_insert(c_ptr(), detail::key_ptr(key), key.size(), id, runner, deadline,
                                 now, &d);
    if (!st.ok()) return st;
    return Decision::from_c(d);
  }

  /// Phase one of a two-phase claim: one PENDING record holding `placeholder` per key
  /// (1..=WK_COORD_BATCH_MAX keys), all or nothing when the ledger cannot hold them all.
  Result<BatchDecisions> place(const std::vector<std::string>& keys, uint64_t placeholder,
                               uint64_t deadline, uint64_t now) const {
    return place_batch(detail::KeyBatch(keys), placeholder, deadline, now);
  }
  Result<BatchDecisions> place(const std::vector<std::string_view>& keys, uint64_t placeholder,
                               uint64_t deadline, uint64_t now) const {
    return place_batch(detail::KeyBatch(keys), placeholder, deadline, now);
  }
  /// A braced list of keys (`ledger.place({"a", "b"}, ...)`).
  Result<BatchDecisions> place(std::initializer_list<std::string_view> keys, uint64_t placeholder,
                               uint64_t deadline, uint64_t now) const {
    return place_batch(detail::KeyBatch(keys), placeholder, deadline, now);
  }
#if WKCORE_HAVE_SPAN
  Result<BatchDecisions> place(std::span<const std::string> keys, uint64_t placeholder,
                               uint64_t deadline, uint64_t now) const {
    return place_batch(detail::KeyBatch(keys), placeholder, deadline, now);
  }
  Result<BatchDecisions> place(std::span<const std::string_view> keys, uint64_t placeholder,
                               uint64_t deadline, uint64_t now) const {
    return place_batch(detail::KeyBatch(keys), placeholder, deadline, now);
  }
#endif

  /// Phase two: claims the placed record of `key` (exactly one of racing claims is WON; the
  /// others LOST; another placeholder MISMATCH; a terminal record DUPLICATE; none NOT_FOUND).
  Result<Decision> claim(std::string_view key, uint64_t placeholder, uint64_t request_id,
                         uint64_t runner, uint64_t now) const noexcept {
    wk_coord_decision d{};
    Status st = wk_ledger_claim(c_ptr(), detail::key_ptr(key), key.size(), placeholder,
                                request_id, runner, now, &d);
    if (!st.ok()) return st;
    return Decision::from_c(d);
  }

  /// The pending-only transition to `outcome` (WK_OUTCOME_* or a host code
  /// WK_HOST_OUTCOME_MIN..=65535): the first terminal write is WON, every later one DUPLICATE
  /// with the outcome that won.
  Result<Decision> finalize(std::string_view key, uint32_t outcome, uint64_t payload,
                            uint64_t now) const noexcept {
    wk_coord_decision d{};
    Status st = wk_ledger_finalize(c_ptr(), detail::key_ptr(key), key.size(), outcome, payload,
                                   now, &d);
    if (!st.ok()) return st;
    return Decision::from_c(d);
  }

  /// finalize() for a batch with one outcome and time; `payloads` has one per key
  /// (WK_STATUS_INVALID_ARGUMENT, and no call, when it has not).
  Result<BatchDecisions> finalize_batch(const std::vector<std::string>& keys,
                                        const std::vector<uint64_t>& payloads, uint32_t outcome,
                                        uint64_t now) const {
    if (payloads.size() != keys.size()) return Status(WK_STATUS_INVALID_ARGUMENT);
    return finalize_batch_raw(detail::KeyBatch(keys), payloads.data(), outcome, now);
  }
  Result<BatchDecisions> finalize_batch(const std::vector<std::string_view>& keys,
                                        const std::vector<uint64_t>& payloads, uint32_t outcome,
                                        uint64_t now) const {
    if (payloads.size() != keys.size()) return Status(WK_STATUS_INVALID_ARGUMENT);
    return finalize_batch_raw(detail::KeyBatch(keys), payloads.data(), outcome, now);
  }
  Result<BatchDecisions> finalize_batch(std::initializer_list<std::string_view> keys,
                                        const std::vector<uint64_t>& payloads, uint32_t outcome,
                                        uint64_t now) const {
    if (payloads.size() != keys.size()) return Status(WK_STATUS_INVALID_ARGUMENT);
    return finalize_batch_raw(detail::KeyBatch(keys), payloads.data(), outcome, now);
  }
  /// As above, every payload 0.
  Result<BatchDecisions> finalize_batch(const std::vector<std::string>& keys, uint32_t outcome,
                                        uint64_t now) const {
    return finalize_batch_raw(detail::KeyBatch(keys), nullptr, outcome, now);
  }
  Result<BatchDecisions> finalize_batch(const std::vector<std::string_view>& keys,
                                        uint32_t outcome, uint64_t now) const {
    return finalize_batch_raw(detail::KeyBatch(keys), nullptr, outcome, now);
  }
  Result<BatchDecisions> finalize_batch(std::initializer_list<std::string_view> keys,
                                        uint32_t outcome, uint64_t now) const {
    return finalize_batch_raw(detail::KeyBatch(keys), nullptr, outcome, now);
  }
#if WKCORE_HAVE_SPAN
  Result<BatchDecisions> finalize_batch(std::span<const std::string> keys,
                                        std::span<const uint64_t> payloads, uint32_t outcome,
                                        uint64_t now) const {
    if (payloads.size() != keys.size()) return Status(WK_STATUS_INVALID_ARGUMENT);
    return finalize_batch_raw(detail::KeyBatch(keys), payloads.data(), outcome, now);
  }
  Result<BatchDecisions> finalize_batch(std::span<const std::string_view> keys,
                                        std::span<const uint64_t> payloads, uint32_t outcome,
                                        uint64_t now) const {
    if (payloads.size() != keys.size()) return Status(WK_STATUS_INVALID_ARGUMENT);
    return finalize_batch_raw(detail::KeyBatch(keys), payloads.data(), outcome, now);
  }
#endif

  /// Compare-and-delete: removes the PENDING record of `key` if its id is `expected_id` (of two
  /// racing takes exactly one is WON).
  Result<Decision> take(std::string_view key, uint64_t expected_id) const noexcept {
    wk_coord_decision d{};
    Status st = wk_ledger_take(c_ptr(), detail::key_ptr(key), key.size(), expected_id, &d);
    if (!st.ok()) return st;
    return Decision::from_c(d);
  }

  /// A runner's heartbeat on its PENDING record.
  Result<Decision> touch(std::string_view key, uint64_t runner, uint64_t now) const noexcept {
    wk_coord_decision d{};
    Status st = wk_ledger_touch(c_ptr(), detail::key_ptr(key), key.size(), runner, now, &d);
    if (!st.ok()) return st;
    return Decision::from_c(d);
  }

  /// The reconciler: times out the due PENDING records of the next `limit` slots.
  Result<Page> reconcile(uint64_t now, size_t limit) const noexcept {
    wk_coord_page p{};
    Status st = wk_ledger_reconcile(c_ptr(), now, limit, &p);
    if (!st.ok()) return st;
    return Page::from_c(p);
  }

  /// Reclaims the terminal records past their retention in the next `limit` slots.
  Result<Page> reclaim(uint64_t now, size_t limit) const noexcept {
    wk_coord_page p{};
    Status st = wk_ledger_reclaim(c_ptr(), now, limit, &p);
    if (!st.ok()) return st;
    return Page::from_c(p);
  }

  /// A restarting runner's clean-up: finalizes with `outcome` its own PENDING records of the
  /// next `limit` slots.
  Result<Page> finalize_own(uint64_t runner, uint32_t outcome, uint64_t now,
                            size_t limit) const noexcept {
    wk_coord_page p{};
    Status st = wk_ledger_finalize_own(c_ptr(), runner, outcome, now, limit, &p);
    if (!st.ok()) return st;
    return Page::from_c(p);
  }

  /// The orphan sweep: finalizes as WK_OUTCOME_ORPHANED the PENDING records of the next `limit`
  /// slots whose runner was quiet for `quiet`.
  Result<Page> sweep_orphans(uint64_t now, uint64_t quiet, size_t limit) const noexcept {
    wk_coord_page p{};
    Status st = wk_ledger_sweep_orphans(c_ptr(), now, quiet, limit, &p);
    if (!st.ok()) return st;
    return Page::from_c(p);
  }

  /// A moment's view of the record of `key`; WK_STATUS_NOT_FOUND when there is none.
  Result<Record> get(std::string_view key) const noexcept {
    wk_ledger_record r{};
    Status st = wk_ledger_get(c_ptr(), detail::key_ptr(key), key.size(), &r, sizeof r);
    if (!st.ok()) return st;
    return Record::from_c(r);
  }

  /// Records held (PENDING and retained), a moment's view; 0 for an empty handle.
  size_t len() const noexcept { return wk_ledger_len(c_ptr()); }

  /// The ledger's event counters.
  Result<Counts> counts() const noexcept {
    wk_ledger_counts c{};
    Status st = wk_ledger_counts_get(c_ptr(), &c, sizeof c);
    if (!st.ok()) return st;
    return Counts::from_c(c);
  }

 private:
  Result<BatchDecisions> place_batch(const detail::KeyBatch& batch, uint64_t placeholder,
                                     uint64_t deadline, uint64_t now) const {
    Status st = batch.check();
    if (!st.ok()) return st;
    std::vector<wk_coord_decision> raw(std::max<size_t>(batch.count(), 1));
    size_t placed = 0;
    st = wk_ledger_place(c_ptr(), batch.bytes(), batch.bytes_len(), batch.lens(), batch.count(),
                         placeholder, deadline, now, raw.data(), batch.count(), &placed);
    if (!st.ok()) return st;
    return BatchDecisions{detail::decisions_of(raw, batch.count()), placed};
  }

  Result<BatchDecisions> finalize_batch_raw(const detail::KeyBatch& batch,
                                            const uint64_t* payloads, uint32_t outcome,
                                            uint64_t now) const {
    Status st = batch.check();
    if (!st.ok()) return st;
    std::vector<wk_coord_decision> raw(std::max<size_t>(batch.count(), 1));
    size_t won = 0;
    st = wk_ledger_finalize_batch(c_ptr(), batch.bytes(), batch.bytes_len(), batch.lens(),
                                  payloads, batch.count(), outcome, now, raw.data(),
                                  batch.count(), &won);
    if (!st.ok()) return st;
    return BatchDecisions{detail::decisions_of(raw, batch.count()), won};
  }
};

/// The identity of one shard hand-off (wk_handoff_key), by value: `(channel_id, channel_type,
/// message_id, target_node_id, tag_key, tag_version)`. make() refuses a field longer than the
/// key can hold (WK_HANDOFF_CHANNEL_ID_MAX, WK_HANDOFF_TAG_KEY_MAX) with
/// WK_STATUS_COORD_INVALID_KEY; what else a key must be (a channel id of at least one byte) is
/// the library's to say when the key is used.
class HandoffKey {
 public:
  /// An empty key (no channel id): the library refuses it.
  HandoffKey() noexcept : key_() {}

  static Result<HandoffKey> make(std::string_view channel_id, uint8_t channel_type,
                                 uint64_t message_id, uint64_t target_node_id,
                                 std::string_view tag_key, uint64_t tag_version) noexcept {
    if (channel_id.size() > WK_HANDOFF_CHANNEL_ID_MAX || tag_key.size() > WK_HANDOFF_TAG_KEY_MAX) {
      return Status(WK_STATUS_COORD_INVALID_KEY);
    }
    HandoffKey out;
    out.key_.message_id = message_id;
    out.key_.target_node_id = target_node_id;
    out.key_.tag_version = tag_version;
    out.key_.channel_type = channel_type;
    out.key_.channel_id_len = static_cast<uint8_t>(channel_id.size());
    out.key_.tag_key_len = static_cast<uint8_t>(tag_key.size());
    if (!channel_id.empty()) std::memcpy(out.key_.channel_id, channel_id.data(), channel_id.size());
    if (!tag_key.empty()) std::memcpy(out.key_.tag_key, tag_key.data(), tag_key.size());
    return out;
  }

  /// The C key (bytes past each field's length are 0).
  const wk_handoff_key& c_key() const noexcept { return key_; }

  std::string_view channel_id() const noexcept {
    return std::string_view(reinterpret_cast<const char*>(key_.channel_id),
                            std::min<size_t>(key_.channel_id_len, WK_HANDOFF_CHANNEL_ID_MAX));
  }
  uint8_t channel_type() const noexcept { return key_.channel_type; }
  uint64_t message_id() const noexcept { return key_.message_id; }
  uint64_t target_node_id() const noexcept { return key_.target_node_id; }
  std::string_view tag_key() const noexcept {
    return std::string_view(reinterpret_cast<const char*>(key_.tag_key),
                            std::min<size_t>(key_.tag_key_len, WK_HANDOFF_TAG_KEY_MAX));
  }
  uint64_t tag_version() const noexcept { return key_.tag_version; }

  /// Equal when every field of the tuple is (the bytes past the lengths do not count).
  friend bool operator==(const HandoffKey& a, const HandoffKey& b) noexcept {
    return a.channel_id() == b.channel_id() && a.channel_type() == b.channel_type() &&
           a.message_id() == b.message_id() && a.target_node_id() == b.target_node_id() &&
           a.tag_key() == b.tag_key() && a.tag_version() == b.tag_version();
  }
  friend bool operator!=(const HandoffKey& a, const HandoffKey& b) noexcept { return !(a == b); }

 private:
  wk_handoff_key key_;
};

/// Shard hand-off idempotency (wk_handoff_ledger): the first claim of a key wins; a retry or a
/// replay is LOST (in flight) or DUPLICATE (completed) while the record is retained.
class HandoffLedger : public Handle<HandoffLedger, wk_handoff_ledger, &wk_handoff_ledger_free,
                                    &wk_handoff_ledger_clone> {
 public:
  /// A new hand-off ledger of at most `capacity` records (1..=WK_LEDGER_CAPACITY_MAX), keeping
  /// completed ones for `retention`, counted in `metrics` (nullptr: the process-wide registry).
  static Result<HandoffLedger> create(uint64_t capacity, uint64_t retention,
                                      const MetricsRegistry* metrics = nullptr) {
    const wk_metrics_registry* registry = nullptr;
    if (metrics != nullptr) {
      if (!*metrics) return Status(WK_STATUS_NULL_ARGUMENT);
      registry = metrics->c_ptr();
    }
    wk_handoff_ledger* raw = nullptr;
    Status st = wk_handoff_ledger_new(registry, capacity, retention, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// Claims the hand-off `key`: WON the first time; LOST / DUPLICATE after; FULL.
  Result<Decision> claim(const HandoffKey& key, uint64_t deadline, uint64_t now) const noexcept {
    wk_coord_decision d{};
    Status st = wk_handoff_ledger_claim(c_ptr(), &key.c_key(), deadline, now, &d);
    if (!st.ok()) return st;
    return Decision::from_c(d);
  }

  /// claim() for 1..=WK_COORD_BATCH_MAX keys in one call (a key repeated in the batch wins once).
  Result<BatchDecisions> claim_batch(const std::vector<HandoffKey>& keys, uint64_t deadline,
                                     uint64_t now) const {
    return claim_batch_of(keys, deadline, now);
  }
  Result<BatchDecisions> claim_batch(std::initializer_list<HandoffKey> keys, uint64_t deadline,
                                     uint64_t now) const {
    return claim_batch_of(keys, deadline, now);
  }
#if WKCORE_HAVE_SPAN
  Result<BatchDecisions> claim_batch(std::span<const HandoffKey> keys, uint64_t deadline,
                                     uint64_t now) const {
    return claim_batch_of(keys, deadline, now);
  }
#endif

  /// Completes the hand-off `key` with `outcome`: WON the first time, DUPLICATE after.
  Result<Decision> complete(const HandoffKey& key, uint32_t outcome, uint64_t now) const noexcept {
    wk_coord_decision d{};
    Status st = wk_handoff_ledger_complete(c_ptr(), &key.c_key(), outcome, now, &d);
    if (!st.ok()) return st;
    return Decision::from_c(d);
  }

  Result<Page> reconcile(uint64_t now, size_t limit) const noexcept {
    wk_coord_page p{};
    Status st = wk_handoff_ledger_reconcile(c_ptr(), now, limit, &p);
    if (!st.ok()) return st;
    return Page::from_c(p);
  }

  Result<Page> reclaim(uint64_t now, size_t limit) const noexcept {
    wk_coord_page p{};
    Status st = wk_handoff_ledger_reclaim(c_ptr(), now, limit, &p);
    if (!st.ok()) return st;
    return Page::from_c(p);
  }

  /// A moment's view of the hand-off `key`; WK_STATUS_NOT_FOUND when there is none.
  Result<Record> get(const HandoffKey& key) const noexcept {
    wk_ledger_record r{};
    Status st = wk_handoff_ledger_get(c_ptr(), &key.c_key(), &r, sizeof r);
    if (!st.ok()) return st;
    return Record::from_c(r);
  }

  /// Hand-offs held, a moment's view; 0 for an empty handle.
  size_t len() const noexcept { return wk_handoff_ledger_len(c_ptr()); }

  Result<Counts> counts() const noexcept {
    wk_ledger_counts c{};
    Status st = wk_handoff_ledger_counts_get(c_ptr(), &c, sizeof c);
    if (!st.ok()) return st;
    return Counts::from_c(c);
  }

 private:
  template <typename Keys>
  Result<BatchDecisions> claim_batch_of(const Keys& keys, uint64_t deadline, uint64_t now) const {
    // The C keys, contiguous; an empty batch still passes a non-NULL array (count stays 0, so
    // the library itself refuses it).
    std::vector<wk_handoff_key> raw_keys;
    raw_keys.reserve(std::max<size_t>(keys.size(), 1));
    for (const HandoffKey& k : keys) raw_keys.push_back(k.c_key());
    if (raw_keys.empty()) raw_keys.push_back(HandoffKey().c_key());
    const size_t count = keys.size();
    std::vector<wk_coord_decision> raw(std::max<size_t>(count, 1));
    size_t won = 0;
    Status st = wk_handoff_ledger_claim_batch(c_ptr(), raw_keys.data(), count, deadline, now,
                                              raw.data(), count, &won);
    if (!st.ok()) return st;
    return BatchDecisions{detail::decisions_of(raw, count), won};
  }
};

/// Scheduled-trigger anchors by id (wk_anchor_table): try_fire() is the whole decision.
class AnchorTable : public Handle<AnchorTable, wk_anchor_table, &wk_anchor_table_free,
                                  &wk_anchor_table_clone> {
 public:
  /// An empty table of at most `capacity` anchors (1..=WK_ANCHOR_TABLE_CAPACITY_MAX).
  static Result<AnchorTable> create(uint64_t capacity) {
    wk_anchor_table* raw = nullptr;
    Status st = wk_anchor_table_new(capacity, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// Adds trigger `id`, unset (std::nullopt, or WK_COORD_TIME_UNSET as in C) or anchored at
  /// `value`. WK_STATUS_ALREADY_EXISTS, WK_STATUS_FULL: nothing added.
  Status insert(uint64_t id, std::optional<uint64_t> value) const noexcept {
    return wk_anchor_table_insert(c_ptr(), id, value.value_or(WK_COORD_TIME_UNSET));
  }

  /// WK_STATUS_NOT_FOUND when absent.
  Status remove(uint64_t id) const noexcept { return wk_anchor_table_remove(c_ptr(), id); }

  /// Whether trigger `id` fires at `now` with `period`; WK_STATUS_NOT_FOUND for an unknown id.
  Result<Fire> try_fire(uint64_t id, uint64_t now, uint64_t period) const noexcept {
    wk_fire f{};
    Status st = wk_anchor_table_try_fire(c_ptr(), id, now, period, &f);
    if (!st.ok()) return st;
    return Fire::from_c(f);
  }

  /// Advances trigger `id` from `expected` to `next`: true for exactly one of racing callers.
  Result<bool> advance(uint64_t id, uint64_t expected, uint64_t next) const noexcept {
    bool won = false;
    Status st = wk_anchor_table_advance(c_ptr(), id, expected, next, &won);
    if (!st.ok()) return st;
    return won;
  }

  /// The first-seen transition: true for the one caller that anchored the unset trigger.
  Result<bool> anchor_unset(uint64_t id, uint64_t now) const noexcept {
    bool won = false;
    Status st = wk_anchor_table_anchor_unset(c_ptr(), id, now, &won);
    if (!st.ok()) return st;
    return won;
  }

  /// The anchor of trigger `id`: its value, std::nullopt while unset.
  Result<std::optional<uint64_t>> get(uint64_t id) const noexcept {
    uint64_t value = 0;
    Status st = wk_anchor_table_get(c_ptr(), id, &value);
    if (!st.ok()) return st;
    if (value == WK_COORD_TIME_UNSET) return std::optional<uint64_t>();
    return std::optional<uint64_t>(value);
  }

  /// Anchors held, a moment's view; 0 for an empty handle.
  size_t len() const noexcept { return wk_anchor_table_len(c_ptr()); }
};


// --- Coordination words -------------------------------------------------------------------------
//
// Flip, Counter, ExclusiveTrigger and WindowedCounter (wk_flip, wk_counter, wk_exclusive_trigger,
// wk_windowed_counter) are Handles like the ledgers: move-only, clone() is wk_<type>_clone, and
// one atomic word each behind the handle. A transition's answer (flipped, the new value, the run
// started or refused) is the value of an ok Result; an error Status means the library refused the
// call for its arguments and nothing changed. The plain getters return 0 for an empty handle.

/// The largest time a WindowedCounter accepts (WK_WINDOW_TIME_MAX, 2^44 - 1).
constexpr uint64_t kWindowTimeMax = WK_WINDOW_TIME_MAX;
/// The largest count of a WindowedCounter (WK_WINDOW_COUNT_MAX); increments beyond it saturate.
constexpr uint32_t kWindowCountMax = WK_WINDOW_COUNT_MAX;

/// What ExclusiveTrigger::trigger decided (wk_trigger): STARTED run `run`, BUSY (run `run` holds
/// the key), or EXHAUSTED (run numbers used up; `run` is 0).
struct Trigger {
  wk_trigger_result result = WK_TRIGGER_RESULT_EXHAUSTED;
  uint64_t run = 0;

  constexpr Trigger() noexcept = default;
  constexpr Trigger(wk_trigger_result r, uint64_t n) noexcept : result(r), run(n) {}
  /// The fields of a C trigger outcome (its reserved field is dropped).
  static constexpr Trigger from_c(const wk_trigger& t) noexcept { return Trigger(t.result, t.run); }

  /// This call started run `run`: the caller does the work, then finish(run).
  constexpr bool started() const noexcept { return result == WK_TRIGGER_RESULT_STARTED; }
  constexpr bool busy() const noexcept { return result == WK_TRIGGER_RESULT_BUSY; }
  constexpr bool exhausted() const noexcept { return result == WK_TRIGGER_RESULT_EXHAUSTED; }

  friend constexpr bool operator==(const Trigger& a, const Trigger& b) noexcept {
    return a.result == b.result && a.run == b.run;
  }
  friend constexpr bool operator!=(const Trigger& a, const Trigger& b) noexcept {
    return !(a == b);
  }
};

/// A fire-once state flip (wk_flip): of many callers flipping `from` → `to` at once, exactly one
/// learns it flipped (and emits the alert); the recovery flip back likewise.
class Flip : public Handle<Flip, wk_flip, &wk_flip_free, &wk_flip_clone> {
 public:
  /// A new flip in `state` (a host-chosen value).
  static Result<Flip> create(uint64_t state) {
    wk_flip* raw = nullptr;
    Status st = wk_flip_new(state, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// Moves the state from `from` to `to`: true only for the one caller that did (false when the
  /// state is not `from`, and when `from == to`).
  Result<bool> flip(uint64_t from, uint64_t to) const noexcept {
    bool flipped = false;
    Status st = wk_flip_flip(c_ptr(), from, to, &flipped);
    if (!st.ok()) return st;
    return flipped;
  }

  /// The current state; 0 for an empty handle.
  uint64_t get() const noexcept { return wk_flip_get(c_ptr()); }
};

/// A counter whose increment returns the new value (wk_counter): N threads × M increments give
/// exactly N·M, and every returned value is unique.
class Counter : public Handle<Counter, wk_counter, &wk_counter_free, &wk_counter_clone> {
 public:
  /// A new counter at `value`.
  static Result<Counter> create(uint64_t value = 0) {
    wk_counter* raw = nullptr;
    Status st = wk_counter_new(value, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// Adds one; the new value (unique to this call; wraps at 2^64).
  Result<uint64_t> increment() const noexcept {
    uint64_t value = 0;
    Status st = wk_counter_increment(c_ptr(), &value);
    if (!st.ok()) return st;
    return value;
  }

  /// The current value; 0 for an empty handle.
  uint64_t get() const noexcept { return wk_counter_get(c_ptr()); }
};

/// An exclusive trigger (wk_exclusive_trigger): `{run number, active}` in one word. Of many
/// concurrent trigger() calls exactly one STARTED run N + 1; the others are BUSY with its number
/// until finish(N + 1).
class ExclusiveTrigger : public Handle<ExclusiveTrigger, wk_exclusive_trigger,
                                       &wk_exclusive_trigger_free, &wk_exclusive_trigger_clone> {
 public:
  /// A new, inactive trigger whose last run was `last_run` (0: none); the next run is
  /// `last_run + 1`. A `last_run` above `2^63 - 1` (what the trigger holds) is refused
  /// (`WK_STATUS_INVALID_ARGUMENT`); Rust's `ExclusiveTrigger::new` and Go clamp it instead.
  static Result<ExclusiveTrigger> create(uint64_t last_run = 0) {
    wk_exclusive_trigger* raw = nullptr;
    Status st = wk_exclusive_trigger_new(last_run, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// "No active run" → "run N + 1 active" in one transition: STARTED for one caller, BUSY (with
  /// the run holding the key) for the others, EXHAUSTED when the run numbers are used up.
  Result<Trigger> trigger() const noexcept {
    wk_trigger t{};
    Status st = wk_exclusive_trigger_trigger(c_ptr(), &t);
    if (!st.ok()) return st;
    return Trigger::from_c(t);
  }

  /// Ends run `run`: true only when `run` held the key (and now nothing does).
  Result<bool> finish(uint64_t run) const noexcept {
    bool finished = false;
    Status st = wk_exclusive_trigger_finish(c_ptr(), run, &finished);
    if (!st.ok()) return st;
    return finished;
  }

  /// The active run, 0 when none is (runs start at 1); 0 for an empty handle.
  uint64_t active() const noexcept { return wk_exclusive_trigger_active_get(c_ptr()); }
  /// The last run started (active or finished; 0 before the first); 0 for an empty handle.
  uint64_t last_run() const noexcept { return wk_exclusive_trigger_last_run_get(c_ptr()); }
};

/// Increment-and-expire in one word (wk_windowed_counter): a login lock-out counts failures, and
/// "the fifth failure locks the account" is decided on increment()'s own result. Times are the
/// host's (any unit, e.g. milliseconds), at most kWindowTimeMax.
class WindowedCounter : public Handle<WindowedCounter, wk_windowed_counter,
                                      &wk_windowed_counter_free, &wk_windowed_counter_clone> {
 public:
  /// A new counter at zero.
  static Result<WindowedCounter> create() {
    wk_windowed_counter* raw = nullptr;
    Status st = wk_windowed_counter_new(&raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }

  /// Counts one at `now` in a window of `window`: a new window (count 1, ending `now + window`)
  /// when the last one ended, else one more (saturating at kWindowCountMax); the new count.
  /// `window == 0` or `now + window > kWindowTimeMax`: WK_STATUS_COORD_INVALID_TIME.
  Result<uint32_t> increment(uint64_t now, uint64_t window) const noexcept {
    uint32_t count = 0;
    Status st = wk_windowed_counter_increment(c_ptr(), now, window, &count);
    if (!st.ok()) return st;
    return count;
  }

  /// The count at `now`: 0 once the window has ended; 0 for an empty handle.
  uint32_t count(uint64_t now) const noexcept { return wk_windowed_counter_count_get(c_ptr(), now); }
};

// --- Shared-subscription topics -----------------------------------------------------------------
//
// Pure functions over wk_share_topic_build / wk_share_topic_split: no handle, any thread. An ACL
// check of a subscription must match SharedTopic::filter, never the whole `$share/...` string: a
// rule such as `uplink/#` does not cover `$share/workers/uplink/#`, so matching the full string
// refuses every member of the group, silently.

/// The longest topic the helpers build or split, in bytes.
constexpr size_t kShareTopicMax = WK_SHARE_TOPIC_MAX;

/// A subscription topic split for ACL matching. The views point into the topic given to
/// split_share_topic (keep it alive while they are used).
struct SharedTopic {
  /// True for `$share/{group}/{filter}`.
  bool shared = false;
  /// The share group; empty for a plain filter.
  std::string_view group;
  /// The real topic filter: what an ACL must match (the whole topic for a plain filter).
  std::string_view filter;
};

/// Builds `$share/{group}/{filter}`. A malformed group (empty, or holding `/`, `+`, `#`, U+0000,
/// or not UTF-8): WK_STATUS_COORD_INVALID_SHARE_GROUP; a malformed filter (empty, a wildcard
/// that is not a whole level, `#` not last, itself shared, not UTF-8, or a topic beyond
/// kShareTopicMax bytes): WK_STATUS_COORD_INVALID_TOPIC_FILTER.
inline Result<std::string> build_share_topic(std::string_view group, std::string_view filter) {
  // The topic's exact length (what the library writes when the parts are valid), capped so a
  // huge filter is refused by the library instead of allocated here.
  const size_t need = std::min(WK_SHARE_PREFIX_LEN + group.size() + 1 + filter.size(),
                               kShareTopicMax);
  std::string out(need, '\0');
  size_t len = 0;
  Status st = wk_share_topic_build(reinterpret_cast<const uint8_t*>(group.data()), group.size(),
                                   reinterpret_cast<const uint8_t*>(filter.data()),
                                   filter.size(), reinterpret_cast<uint8_t*>(&out[0]),
                                   out.size(), &len);
  if (!st.ok()) return st;
  out.resize(len);
  return out;
}

/// Splits a subscription topic into its group (when shared) and the real filter, as views into
/// `topic`. Malformed forms (`$share`, `$share/`, `$share//f`, `$share/g`, `$share/g/`, a bad
/// group or filter) are refused with the statuses of build_share_topic.
inline Result<SharedTopic> split_share_topic(std::string_view topic) noexcept {
  wk_share_split raw{};
  Status st = wk_share_topic_split(reinterpret_cast<const uint8_t*>(topic.data()), topic.size(),
                                   &raw);
  if (!st.ok()) return st;
  SharedTopic out;
  out.shared = raw.shared != 0;
  out.group = topic.substr(raw.group_offset, raw.group_len);
  out.filter = topic.substr(raw.filter_offset, raw.filter_len);
  return out;
}

/// The filter an ACL must match for subscription `topic` (split_share_topic's filter).
inline Result<std::string_view> acl_filter(std::string_view topic) noexcept {
  Result<SharedTopic> split = split_share_topic(topic);
  if (!split.ok()) return split.status();
  return split->filter;
}

// --- MQTT owner registry ------------------------------------------------------------------------
//
// OwnerRegistry, Owner and CancelToken are Handles (move-only; clone() is wk_<type>_clone).
// OwnerOp is one admitted operation scope kept in this object (a wk_owner_op): done() is
// idempotent and the destructor calls it, so a scope is released exactly once. It does not own
// a reference to its owner: keep the Owner alive while an OwnerOp of it is live. A close
// callback is a std::function, boxed into user_data and freed by the release callback when the
// owner's last reference goes. Timeouts are std::optional<uint64_t> nanoseconds (std::nullopt:
// wait forever).

namespace detail {
using OwnerCloseFn = std::function<wk_status(uint64_t timeout_ns)>;
inline wk_status owner_close_trampoline(void* user_data, void* /*call_data*/,
                                        uint64_t timeout_ns) noexcept {
  auto* fn = static_cast<OwnerCloseFn*>(user_data);
  try {
    return (*fn)(timeout_ns);
  } catch (...) {
    return WK_STATUS_OWNER_CLOSE;  // never unwind into the library
  }
}
inline void owner_release_trampoline(void* user_data) noexcept {
  delete static_cast<OwnerCloseFn*>(user_data);
}
inline uint64_t owner_timeout(std::optional<uint64_t> timeout_ns) noexcept {
  return timeout_ns.value_or(WK_OWNER_WAIT_FOREVER);
}
}  // namespace detail

/// A cancellation signal for blocking owner calls (wk_cancel_token).
class CancelToken : public Handle<CancelToken, wk_cancel_token, &wk_cancel_token_free,
                                  &wk_cancel_token_clone> {
 public:
  static Result<CancelToken> create() {
    wk_cancel_token* raw = nullptr;
    Status st = wk_cancel_token_new(&raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }
  Status cancel() const noexcept { return wk_cancel_token_cancel(c_ptr()); }
  bool cancelled() const noexcept { return wk_cancel_token_is_cancelled(c_ptr()); }
};

/// A full owner identity with owned strings; view() lends it as a wk_owner_identity (valid
/// while this object lives and is not modified).
struct OwnerIdentity {
  std::string namespace_;
  std::string client_id;
  uint64_t session_generation = 0;
  uint64_t owner_generation = 0;
  uint64_t node_id = 0;
  std::string boot_id;
  uint64_t connection_id = 0;

  wk_owner_identity view() const noexcept {
    wk_owner_identity id{};
    id.namespace_ptr = reinterpret_cast<const uint8_t*>(namespace_.data());
    id.namespace_len = namespace_.size();
    id.client_id = reinterpret_cast<const uint8_t*>(client_id.data());
    id.client_id_len = client_id.size();
    id.session_generation = session_generation;
    id.owner_generation = owner_generation;
    id.node_id = node_id;
    id.boot_id = reinterpret_cast<const uint8_t*>(boot_id.data());
    id.boot_id_len = boot_id.size();
    id.connection_id = connection_id;
    return id;
  }
  static OwnerIdentity from_c(const wk_owner_identity& id) {
    auto str = [](const uint8_t* p, size_t n) {
      return n == 0 ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
    };
    return OwnerIdentity{str(id.namespace_ptr, id.namespace_len), str(id.client_id, id.client_id_len),
                         id.session_generation, id.owner_generation, id.node_id,
                         str(id.boot_id, id.boot_id_len), id.connection_id};
  }
  friend bool operator==(const OwnerIdentity& a, const OwnerIdentity& b) {
    return a.namespace_ == b.namespace_ && a.client_id == b.client_id &&
           a.session_generation == b.session_generation &&
           a.owner_generation == b.owner_generation && a.node_id == b.node_id &&
           a.boot_id == b.boot_id && a.connection_id == b.connection_id;
  }
};

class Owner;

/// One admitted operation scope (a wk_owner_op in this object). Move-only; done() is
/// idempotent and the destructor calls it.
class OwnerOp {
 public:
  OwnerOp() noexcept = default;
  OwnerOp(const OwnerOp&) = delete;
  OwnerOp& operator=(const OwnerOp&) = delete;
  OwnerOp(OwnerOp&& other) noexcept : op_(std::exchange(other.op_, wk_owner_op{nullptr, 0})) {}
  OwnerOp& operator=(OwnerOp&& other) noexcept {
    if (this != &other) {
      (void)done();
      op_ = std::exchange(other.op_, wk_owner_op{nullptr, 0});
    }
    return *this;
  }
  ~OwnerOp() { (void)done(); }

  /// Ends the scope (wk_owner_op_done); OK and nothing more on later calls or an empty op.
  Status done() noexcept {
    if (op_.owner == nullptr) return WK_STATUS_OK;
    return wk_owner_op_done(&op_);
  }
  Status check() const noexcept { return wk_owner_op_check(&op_); }
  Status mark_uncertain() const noexcept { return wk_owner_op_mark_uncertain(&op_); }
  bool live() const noexcept { return op_.owner != nullptr && op_.state == WK_OWNER_OP_LIVE; }
  wk_owner_op* c_ptr() noexcept { return &op_; }

 private:
  friend class Owner;
  wk_owner_op op_{nullptr, 0};
};

/// A handle to one owner (wk_owner).
class Owner : public Handle<Owner, wk_owner, &wk_owner_free, &wk_owner_clone> {
 public:
  Result<wk_owner_info> info() const noexcept {
    wk_owner_info out{};
    Status st = wk_owner_info_get(c_ptr(), &out);
    if (!st.ok()) return st;
    return out;
  }
  Result<std::string> uid() const {
    const uint8_t* p = nullptr;
    size_t n = 0;
    Status st = wk_owner_uid_get(c_ptr(), &p, &n);
    if (!st.ok()) return st;
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  Status activate(uint64_t revision, uint64_t until_ns) const noexcept {
    return wk_owner_activate(c_ptr(), revision, until_ns);
  }
  Status renew(uint64_t revision, uint64_t until_ns) const noexcept {
    return wk_owner_renew(c_ptr(), revision, until_ns);
  }
  /// Begins a scope (wk_owner_begin).
  Result<OwnerOp> begin() const noexcept {
    OwnerOp op;
    Status st = wk_owner_begin(c_ptr(), &op.op_);
    if (!st.ok()) return st;
    return op;
  }
  Status fence() const noexcept { return wk_owner_fence(c_ptr()); }
  Status quiesce(std::optional<uint64_t> timeout_ns = std::nullopt,
                 const CancelToken* cancel = nullptr) const noexcept {
    return wk_owner_quiesce(c_ptr(), detail::owner_timeout(timeout_ns),
                            cancel != nullptr ? cancel->c_ptr() : nullptr, nullptr);
  }
};

/// An owner registry (wk_owner_registry).
class OwnerRegistry : public Handle<OwnerRegistry, wk_owner_registry, &wk_owner_registry_free,
                                    &wk_owner_registry_clone> {
 public:
  struct Options {
    uint64_t node_id = 0;
    std::string boot_id;
    uint32_t capacity = 0;
    uint32_t max_operations = 8;
    uint64_t pending_timeout_ns = 5000000000ULL;
    uint64_t max_lease_ns = 60000000000ULL;
    uint64_t close_retry_ns = 250000000ULL;

    /// The C options; they point into this object (`boot_id`), which must outlive them.
    wk_owner_options to_c() const noexcept {
      wk_owner_options o{};
      o.struct_size = static_cast<uint32_t>(sizeof(wk_owner_options));
      o.node_id = node_id;
      o.boot_id = reinterpret_cast<const uint8_t*>(boot_id.data());
      o.boot_id_len = boot_id.size();
      o.capacity = capacity;
      o.max_operations = max_operations;
      o.pending_timeout_ns = pending_timeout_ns;
      o.max_lease_ns = max_lease_ns;
      o.close_retry_ns = close_retry_ns;
      return o;
    }
  };
  using CloseFn = detail::OwnerCloseFn;

  static Result<OwnerRegistry> create(const Options& options) {
    wk_owner_options o = options.to_c();
    wk_owner_registry* raw = nullptr;
    Status st = wk_owner_registry_new(&o, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }
  /// For tests: a registry on a manual clock reading `start_ns`.
  static Result<OwnerRegistry> create_with_manual_clock(const Options& options, uint64_t start_ns) {
    wk_owner_options o = options.to_c();
    wk_owner_registry* raw = nullptr;
    Status st = wk_owner_registry_new_with_manual_clock(&o, start_ns, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }
  Status advance_clock(uint64_t ns) const noexcept {
    return wk_owner_registry_advance_clock(c_ptr(), ns);
  }
  Result<uint64_t> now() const noexcept {
    uint64_t out = 0;
    Status st = wk_owner_registry_now(c_ptr(), &out);
    if (!st.ok()) return st;
    return out;
  }
  /// Reserves an owner whose transport close is `close` (called on the quiescing thread; an
  /// exception it throws is a failed close). `close` is freed when the owner's last reference
  /// goes (or at once when the reservation is refused).
  Result<Owner> reserve(std::string_view namespace_, std::string_view client_id,
                        std::string_view uid, uint64_t session_generation,
                        uint64_t owner_generation, CloseFn close) const {
    wk_owner_claim c{};
    c.namespace_ptr = reinterpret_cast<const uint8_t*>(namespace_.data());
    c.namespace_len = namespace_.size();
    c.client_id = reinterpret_cast<const uint8_t*>(client_id.data());
    c.client_id_len = client_id.size();
    c.uid = reinterpret_cast<const uint8_t*>(uid.data());
    c.uid_len = uid.size();
    c.session_generation = session_generation;
    c.owner_generation = owner_generation;
    auto* boxed = new CloseFn(std::move(close));
    wk_owner* raw = nullptr;
    Status st = wk_owner_reserve(c_ptr(), &c, &detail::owner_close_trampoline, boxed,
                                 &detail::owner_release_trampoline, &raw);
    if (!st.ok()) {
      delete boxed;  // a refused reservation never calls release
      return st;
    }
    return Owner::adopt(raw);
  }
  /// The held owner `id` names; WK_STATUS_NOT_FOUND once it retired.
  Result<Owner> resolve(const OwnerIdentity& id) const noexcept {
    wk_owner_identity v = id.view();
    wk_owner* raw = nullptr;
    Status st = wk_owner_registry_resolve(c_ptr(), &v, &raw);
    if (!st.ok()) return st;
    return Owner::adopt(raw);
  }
  Status fence(const OwnerIdentity& id) const noexcept {
    wk_owner_identity v = id.view();
    return wk_owner_registry_fence(c_ptr(), &v);
  }
  Status quiesce(const OwnerIdentity& id, std::optional<uint64_t> timeout_ns = std::nullopt,
                 const CancelToken* cancel = nullptr) const noexcept {
    wk_owner_identity v = id.view();
    return wk_owner_registry_quiesce(c_ptr(), &v, detail::owner_timeout(timeout_ns),
                                     cancel != nullptr ? cancel->c_ptr() : nullptr, nullptr);
  }
  Status stop_admission() const noexcept { return wk_owner_registry_stop_admission(c_ptr()); }
  Status close(std::optional<uint64_t> timeout_ns = std::nullopt,
               const CancelToken* cancel = nullptr) const noexcept {
    return wk_owner_registry_close(c_ptr(), detail::owner_timeout(timeout_ns),
                                   cancel != nullptr ? cancel->c_ptr() : nullptr, nullptr);
  }
  Result<wk_owner_sweep_result> sweep(uint32_t limit, std::optional<uint64_t> timeout_ns = std::nullopt,
                                      const CancelToken* cancel = nullptr) const noexcept {
    wk_owner_sweep_result r{};
    Status st = wk_owner_registry_sweep(c_ptr(), limit, detail::owner_timeout(timeout_ns),
                                        cancel != nullptr ? cancel->c_ptr() : nullptr, nullptr, &r);
    if (!st.ok()) return st;
    return r;
  }
  Result<wk_owner_sweep_result> sweep_turn(uint64_t interval_ns, uint32_t limit,
                                           std::optional<uint64_t> timeout_ns = std::nullopt,
                                           const CancelToken* cancel = nullptr) const noexcept {
    wk_owner_sweep_result r{};
    Status st = wk_owner_registry_sweep_turn(c_ptr(), interval_ns, limit,
                                             detail::owner_timeout(timeout_ns),
                                             cancel != nullptr ? cancel->c_ptr() : nullptr, nullptr, &r);
    if (!st.ok()) return st;
    return r;
  }
  Result<wk_owner_snapshot> snapshot() const noexcept {
    wk_owner_snapshot s{};
    Status st = wk_owner_registry_snapshot(c_ptr(), &s);
    if (!st.ok()) return st;
    return s;
  }
  Result<wk_retired_boot> retirement() const noexcept {
    wk_retired_boot p{};
    Status st = wk_owner_registry_retirement(c_ptr(), &p);
    if (!st.ok()) return st;
    return p;
  }
};

/// The owner RPC frame codec (wk_owner_frame_*, wk_owner_rpc_*).
struct OwnerFrame {
  static Result<std::vector<uint8_t>> encode_request(const OwnerIdentity& id) {
    wk_owner_identity v = id.view();
    std::vector<uint8_t> buf(WK_OWNER_FRAME_MAX);
    size_t len = 0;
    Status st = wk_owner_frame_encode_request(&v, buf.data(), buf.size(), &len);
    if (!st.ok()) return st;
    buf.resize(len);
    return buf;
  }
  static Result<std::vector<uint8_t>> encode_response(const OwnerIdentity& id, uint8_t status) {
    wk_owner_identity v = id.view();
    std::vector<uint8_t> buf(WK_OWNER_FRAME_MAX);
    size_t len = 0;
    Status st = wk_owner_frame_encode_response(&v, status, buf.data(), buf.size(), &len);
    if (!st.ok()) return st;
    buf.resize(len);
    return buf;
  }
  static Result<OwnerIdentity> decode_request(const std::vector<uint8_t>& frame) {
    wk_owner_identity out{};
    Status st = wk_owner_frame_decode_request(frame.data(), frame.size(), &out);
    if (!st.ok()) return st;
    return OwnerIdentity::from_c(out);
  }
  static Result<std::pair<OwnerIdentity, uint8_t>> decode_response(const std::vector<uint8_t>& frame) {
    wk_owner_identity out{};
    uint8_t status = 0;
    Status st = wk_owner_frame_decode_response(frame.data(), frame.size(), &out, &status);
    if (!st.ok()) return st;
    return std::make_pair(OwnerIdentity::from_c(out), status);
  }
  static uint8_t status_for(Status quiesce_result) noexcept {
    return wk_owner_rpc_status_for(quiesce_result.code());
  }
  static Status client_result(const OwnerIdentity& request, const std::vector<uint8_t>& response) noexcept {
    wk_owner_identity v = request.view();
    return wk_owner_rpc_client_result(&v, response.data(), response.size());
  }
};

// --- Delivery tags ------------------------------------------------------------------------------
//
// TagCache (the follower's cache), TagChannel (one channel's cell), TagLeader (the channel
// leader's side), TagView (one held tag body) and TagMutation (one membership change) are Handles
// (move-only; TagMutation has no clone, and commit() consumes it). Inputs are owned C++ structs
// (TagInput, TagBuild) that lend their C form for the call only; look-ups take a
// wk_tag_lookup_request, which TagView::request() makes from a body (pointing into it) and
// TagLookup from borrowed fields. A TagView's strings and partitions are read zero-copy
// (std::string_view into the body, valid while the TagView lives); TagPartition::copy_uids()
// copies. Reasons are the WK_TAG_LOOKUP_* codes.

/// A string_view as the wk_str the C ABI takes (NULL when empty).
inline wk_str tag_str(std::string_view s) noexcept {
  return wk_str{s.empty() ? nullptr : reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

/// A wk_str the library wrote, as a string_view (empty when NULL).
inline std::string_view tag_string_view(wk_str s) noexcept {
  return s.len == 0 ? std::string_view()
                    : std::string_view(reinterpret_cast<const char*>(s.ptr), s.len);
}

/// The name of a look-up reason (upstream's: "hit", "missing_ref", ...); "unknown" otherwise.
inline const char* tag_lookup_reason_name(uint8_t reason) noexcept {
  switch (reason) {
    case WK_TAG_LOOKUP_HIT:
      return "hit";
    case WK_TAG_LOOKUP_MISSING_REF:
      return "missing_ref";
    case WK_TAG_LOOKUP_MISSING_TAG:
      return "missing_tag";
    case WK_TAG_LOOKUP_TAG_KEY_MISMATCH:
      return "tag_key_mismatch";
    case WK_TAG_LOOKUP_STALE_REQUEST:
      return "stale_request";
    case WK_TAG_LOOKUP_NEWER_REQUEST:
      return "newer_request";
    case WK_TAG_LOOKUP_TOPOLOGY_MISMATCH:
      return "topology_mismatch";
    default:
      return "unknown";
  }
}

/// One node's UIDs of an input tag, owned.
struct TagPartitionInput {
  uint64_t node_id = 0;
  std::vector<std::string> uids;
};

/// A tag's topology version, owned.
struct TagTopology {
  uint64_t hash_slot_table_version = 0;
  std::vector<wk_tag_slot_ref> refs;
};

namespace detail {
// The C arrays an input's partitions point into; built by a call, alive during it.
struct TagPartitionsC {
  std::vector<std::vector<wk_str>> uids;
  std::vector<wk_tag_partition_in> parts;

  explicit TagPartitionsC(const std::vector<TagPartitionInput>& partitions) {
    uids.reserve(partitions.size());
    parts.reserve(partitions.size());
    for (const TagPartitionInput& p : partitions) {
      std::vector<wk_str> list;
      list.reserve(p.uids.size());
      for (const std::string& u : p.uids) list.push_back(tag_str(u));
      uids.push_back(std::move(list));
      const std::vector<wk_str>& back = uids.back();
      parts.push_back(wk_tag_partition_in{p.node_id, back.empty() ? nullptr : back.data(),
                                          back.size()});
    }
  }
  const wk_tag_partition_in* data() const noexcept {
    return parts.empty() ? nullptr : parts.data();
  }
  size_t size() const noexcept { return parts.size(); }
};

inline const wk_tag_slot_ref* refs_data(const std::vector<wk_tag_slot_ref>& refs) noexcept {
  return refs.empty() ? nullptr : refs.data();
}

// Runs `call(buf, cap, &len)` with a buffer that grows to the needed length once.
template <typename Call>
Result<std::vector<uint8_t>> tag_frame_call(Call call, size_t first_cap) {
  std::vector<uint8_t> buf(first_cap);
  size_t len = 0;
  Status st = call(buf.data(), buf.size(), &len);
  if (st.code() == WK_STATUS_BUFFER_TOO_SMALL) {
    buf.resize(len);
    st = call(buf.data(), buf.size(), &len);
  }
  if (!st.ok()) return st;
  buf.resize(len);
  return buf;
}
}  // namespace detail

/// A tag as a host hands it to a cache (TagCache::store) or a request (TagFrame), owned.
struct TagInput {
  std::string key;
  std::string channel_key;
  uint64_t tag_version = 0;
  uint64_t subscriber_mutation_version = 0;
  std::string source_channel_key;
  uint64_t source_subscriber_mutation_version = 0;
  TagTopology topology;
  std::vector<TagPartitionInput> partitions;
  int64_t created_at_ns = 0;
  int64_t last_access_ns = 0;

  /// The C form, pointing into this object and `parts` (both must outlive it).
  wk_tag_in to_c(const detail::TagPartitionsC& parts) const noexcept {
    wk_tag_in t{};
    t.key = tag_str(key);
    t.channel_key = tag_str(channel_key);
    t.tag_version = tag_version;
    t.subscriber_mutation_version = subscriber_mutation_version;
    t.source_channel_key = tag_str(source_channel_key);
    t.source_subscriber_mutation_version = source_subscriber_mutation_version;
    t.hash_slot_table_version = topology.hash_slot_table_version;
    t.refs = detail::refs_data(topology.refs);
    t.ref_count = topology.refs.size();
    t.partitions = parts.data();
    t.partition_count = parts.size();
    t.created_at_ns = created_at_ns;
    t.last_access_ns = last_access_ns;
    return t;
  }
};

/// What a leader build materializes, owned (TagLeader::build*).
struct TagBuild {
  std::string channel_key;
  uint64_t subscriber_mutation_version = 0;
  std::string source_channel_key;
  uint64_t source_subscriber_mutation_version = 0;
  TagTopology topology;
  std::vector<TagPartitionInput> partitions;  // ignored by the *_by_slot builds
  bool mint_fresh_key = false;

  /// The C form, pointing into this object and `parts` (NULL: no partitions).
  wk_tag_build_request to_c(const detail::TagPartitionsC* parts) const noexcept {
    wk_tag_build_request r{};
    r.channel_key = tag_str(channel_key);
    r.subscriber_mutation_version = subscriber_mutation_version;
    r.source_channel_key = tag_str(source_channel_key);
    r.source_subscriber_mutation_version = source_subscriber_mutation_version;
    r.hash_slot_table_version = topology.hash_slot_table_version;
    r.refs = detail::refs_data(topology.refs);
    r.ref_count = topology.refs.size();
    r.partitions = parts != nullptr ? parts->data() : nullptr;
    r.partition_count = parts != nullptr ? parts->size() : 0;
    r.mint_fresh_key = mint_fresh_key ? 1 : 0;
    return r;
  }
};

/// A look-up request from borrowed fields (the strings and refs must outlive the call).
struct TagLookup {
  std::string_view tag_key;
  uint64_t tag_version = 0;
  uint64_t subscriber_mutation_version = 0;
  std::string_view source_channel_key;
  uint64_t source_subscriber_mutation_version = 0;
  uint64_t hash_slot_table_version = 0;
  const wk_tag_slot_ref* refs = nullptr;
  size_t ref_count = 0;

  wk_tag_lookup_request to_c() const noexcept {
    return wk_tag_lookup_request{tag_str(tag_key),
                                 tag_version,
                                 subscriber_mutation_version,
                                 tag_str(source_channel_key),
                                 source_subscriber_mutation_version,
                                 hash_slot_table_version,
                                 refs,
                                 ref_count};
  }
};

/// One partition of a TagView, zero-copy: valid while that TagView lives.
class TagPartition {
 public:
  TagPartition() noexcept = default;
  explicit TagPartition(const wk_tag_partition_view& p) noexcept : p_(p) {}

  uint64_t node_id() const noexcept { return p_.node_id; }
  size_t size() const noexcept { return p_.uid_count; }
  bool empty() const noexcept { return p_.uid_count == 0; }
  /// UID `i` (`i < size()`), pointing into the body.
  std::string_view uid(size_t i) const noexcept {
    WKCORE_ASSERT(i < p_.uid_count);
    const size_t start = i == 0 ? 0 : p_.ends[i - 1];
    return std::string_view(reinterpret_cast<const char*>(p_.bytes) + start, p_.ends[i] - start);
  }
  /// Every UID's bytes back to back, and the end offset of each (the C view).
  const wk_tag_partition_view& c_view() const noexcept { return p_; }
  /// The UIDs, copied.
  std::vector<std::string> copy_uids() const {
    std::vector<std::string> out;
    out.reserve(size());
    for (size_t i = 0; i < size(); i++) out.emplace_back(uid(i));
    return out;
  }

 private:
  wk_tag_partition_view p_{0, nullptr, 0, nullptr, 0};
};

/// One held tag body (wk_tag_view): immutable; its strings and partitions stay valid while this
/// object lives.
class TagView : public Handle<TagView, wk_tag_view, &wk_tag_view_free, &wk_tag_view_clone> {
 public:
  /// The body's fields (an empty handle gives a zeroed info).
  wk_tag_info info() const noexcept {
    wk_tag_info out{};
    (void)wk_tag_view_info(c_ptr(), &out, sizeof out);
    return out;
  }
  std::string_view key() const noexcept { return tag_string_view(info().key); }
  std::string_view channel_key() const noexcept { return tag_string_view(info().channel_key); }
  std::string_view source_channel_key() const noexcept {
    return tag_string_view(info().source_channel_key);
  }
  uint64_t tag_version() const noexcept { return info().tag_version; }
  uint64_t subscriber_mutation_version() const noexcept {
    return info().subscriber_mutation_version;
  }
  size_t partition_count() const noexcept { return info().partition_count; }
  size_t uid_count() const noexcept { return info().uid_count; }
  /// Partition `index`; WK_STATUS_NOT_FOUND past the last.
  Result<TagPartition> partition(size_t index) const noexcept {
    wk_tag_partition_view p{};
    Status st = wk_tag_view_partition(c_ptr(), index, &p);
    if (!st.ok()) return st;
    return TagPartition(p);
  }
  /// `node_id`'s partition; WK_STATUS_NOT_FOUND when the tag has none for it.
  Result<TagPartition> partition_of(uint64_t node_id) const noexcept {
    size_t index = 0;
    Status st = wk_tag_view_find_partition(c_ptr(), node_id, &index);
    if (!st.ok()) return st;
    return partition(index);
  }
  /// True when both hold the same body (the same snapshot).
  bool same(const TagView& other) const noexcept {
    return wk_tag_view_same(c_ptr(), other.c_ptr());
  }
  /// A look-up request that matches this body exactly, pointing into it (valid while it lives).
  wk_tag_lookup_request request() const noexcept {
    const wk_tag_info i = info();
    return wk_tag_lookup_request{i.key,
                                 i.tag_version,
                                 i.subscriber_mutation_version,
                                 i.source_channel_key,
                                 i.source_subscriber_mutation_version,
                                 i.hash_slot_table_version,
                                 i.refs,
                                 i.ref_count};
  }
};

/// What a store did: stored (or refused as stale) and the stored or current body.
struct TagStored {
  bool stored = false;
  TagView view;
};

/// What a look-up found: the reason and, when asked, the current body (empty for missing_ref).
struct TagLookupResult {
  uint8_t reason = WK_TAG_LOOKUP_MISSING_REF;
  TagView view;
  bool hit() const noexcept { return reason == WK_TAG_LOOKUP_HIT; }
};

/// What a fetched response did to the cache (TagCache::store_response).
struct TagFetched {
  wk_tag_response_head head{};
  bool stored = false;
  TagView view;  // the stored or current body for an `ok` response; empty otherwise
};

/// One channel's cell of a cache (wk_tag_channel): look-ups and stores without the index.
class TagChannel
    : public Handle<TagChannel, wk_tag_channel, &wk_tag_channel_free, &wk_tag_channel_clone> {
 public:
  /// The reason only: nothing is allocated.
  Result<uint8_t> reason(const wk_tag_lookup_request& request) const noexcept {
    uint8_t reason = 0;
    Status st = wk_tag_channel_lookup(c_ptr(), &request, &reason, nullptr);
    if (!st.ok()) return st;
    return reason;
  }
  Result<TagLookupResult> lookup(const wk_tag_lookup_request& request) const noexcept {
    TagLookupResult out;
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_channel_lookup(c_ptr(), &request, &out.reason, &raw);
    if (!st.ok()) return st;
    out.view = TagView::adopt(raw);
    return out;
  }
  Result<TagStored> store(const TagInput& tag) const {
    detail::TagPartitionsC parts(tag.partitions);
    wk_tag_in t = tag.to_c(parts);
    uint8_t stored = 0;
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_channel_store(c_ptr(), &t, &stored, &raw);
    if (!st.ok()) return st;
    return TagStored{stored != 0, TagView::adopt(raw)};
  }
  /// The current body; WK_STATUS_NOT_FOUND when there is none.
  Result<TagView> current() const noexcept {
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_channel_current(c_ptr(), &raw);
    if (!st.ok()) return st;
    return TagView::adopt(raw);
  }
};

/// The follower's partition cache (wk_tag_cache).
class TagCache : public Handle<TagCache, wk_tag_cache, &wk_tag_cache_free, &wk_tag_cache_clone> {
 public:
  struct Options {
    uint64_t local_node_id = 0;
    uint64_t ttl_ns = 60000000000ULL;  // upstream's production TTL
    bool manual_clock = false;         // tests: a clock moved only by advance_clock
    uint64_t manual_start_ns = 0;

    wk_tag_cache_options to_c() const noexcept {
      wk_tag_cache_options o{};
      o.struct_size = static_cast<uint32_t>(sizeof(wk_tag_cache_options));
      o.local_node_id = local_node_id;
      o.ttl_ns = ttl_ns;
      o.clock = manual_clock ? WK_TAG_CLOCK_MANUAL : WK_TAG_CLOCK_UNIX;
      o.manual_start_ns = manual_start_ns;
      return o;
    }
  };

  /// A cache counting in `metrics` (nullptr: the process-wide registry).
  static Result<TagCache> create(const Options& options,
                                 const MetricsRegistry* metrics = nullptr) noexcept {
    wk_tag_cache_options o = options.to_c();
    wk_tag_cache* raw = nullptr;
    Status st = wk_tag_cache_new(&o, metrics != nullptr ? metrics->c_ptr() : nullptr, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }
  Status advance_clock(uint64_t ns) const noexcept {
    return wk_tag_cache_advance_clock(c_ptr(), ns);
  }
  /// The clock's reading, unix nanoseconds (what cleanup() takes).
  Result<int64_t> now() const noexcept {
    int64_t out = 0;
    Status st = wk_tag_cache_now(c_ptr(), &out);
    if (!st.ok()) return st;
    return out;
  }
  /// Stores `tag`'s local partition unless it is stale (upstream's StoreFollowerPartition).
  Result<TagStored> store(const TagInput& tag) const {
    detail::TagPartitionsC parts(tag.partitions);
    wk_tag_in t = tag.to_c(parts);
    uint8_t stored = 0;
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_cache_store(c_ptr(), &t, &stored, &raw);
    if (!st.ok()) return st;
    return TagStored{stored != 0, TagView::adopt(raw)};
  }
  /// The fence's reason only: nothing is allocated, no reference count touched.
  Result<uint8_t> reason(std::string_view channel,
                         const wk_tag_lookup_request& request) const noexcept {
    uint8_t reason = 0;
    Status st = wk_tag_cache_lookup(c_ptr(), tag_str(channel), &request, &reason, nullptr);
    if (!st.ok()) return st;
    return reason;
  }
  /// The fence, with the current body (upstream's LookupLocalPartitionRef).
  Result<TagLookupResult> lookup(std::string_view channel,
                                 const wk_tag_lookup_request& request) const noexcept {
    TagLookupResult out;
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_cache_lookup(c_ptr(), tag_str(channel), &request, &out.reason, &raw);
    if (!st.ok()) return st;
    out.view = TagView::adopt(raw);
    return out;
  }
  /// channels.size() look-ups (as many requests): reasons to `reasons` and, when `views` is not
  /// nullptr, the bodies to `*views` (empty for missing_ref). Every entry is checked first.
  Status lookup_batch(const std::vector<std::string_view>& channels,
                      const std::vector<wk_tag_lookup_request>& requests,
                      std::vector<uint8_t>& reasons, std::vector<TagView>* views = nullptr) const {
    if (channels.size() != requests.size()) return WK_STATUS_INVALID_ARGUMENT;
    std::vector<wk_str> keys;
    keys.reserve(channels.size());
    for (std::string_view c : channels) keys.push_back(tag_str(c));
    std::vector<uint8_t> out(channels.size());
    std::vector<wk_tag_view*> raw(views != nullptr ? channels.size() : 0, nullptr);
    Status st = wk_tag_cache_lookup_batch(c_ptr(), keys.empty() ? nullptr : keys.data(),
                                          requests.empty() ? nullptr : requests.data(),
                                          requests.size(), out.data(),
                                          views != nullptr ? raw.data() : nullptr);
    if (!st.ok()) return st;
    reasons = std::move(out);
    if (views != nullptr) {
      views->clear();
      views->reserve(raw.size());
      for (wk_tag_view* v : raw) views->push_back(TagView::adopt(v));
    }
    return WK_STATUS_OK;
  }
  /// A handle on `channel`'s cell.
  Result<TagChannel> channel(std::string_view channel) const noexcept {
    wk_tag_channel* raw = nullptr;
    Status st = wk_tag_cache_channel(c_ptr(), tag_str(channel), &raw);
    if (!st.ok()) return st;
    return TagChannel::adopt(raw);
  }
  /// The current body (upstream's CurrentRef through info()); WK_STATUS_NOT_FOUND when none.
  Result<TagView> current(std::string_view channel) const noexcept {
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_cache_current(c_ptr(), tag_str(channel), &raw);
    if (!st.ok()) return st;
    return TagView::adopt(raw);
  }
  /// The body of `channel` if its key is `tag_key` (upstream's LookupTag).
  Result<TagView> lookup_tag(std::string_view channel, std::string_view tag_key) const noexcept {
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_cache_lookup_tag(c_ptr(), tag_str(channel), tag_str(tag_key), &raw);
    if (!st.ok()) return st;
    return TagView::adopt(raw);
  }
  Result<bool> is_source_stale(std::string_view channel, std::string_view source_channel,
                               uint64_t source_version) const noexcept {
    bool out = false;
    Status st = wk_tag_cache_is_source_stale(c_ptr(), tag_str(channel), tag_str(source_channel),
                                             source_version, &out);
    if (!st.ok()) return st;
    return out;
  }
  /// One cleanup page (a host timer's call): `limit` at most WK_TAG_CLEANUP_LIMIT_MAX (0: none).
  Result<wk_tag_cleanup_page> cleanup(int64_t now_ns, uint32_t limit) const noexcept {
    wk_tag_cleanup_page page{};
    Status st = wk_tag_cache_cleanup(c_ptr(), now_ns, limit, &page);
    if (!st.ok()) return st;
    return page;
  }
  Result<wk_tag_counts> counts() const noexcept {
    wk_tag_counts c{};
    Status st = wk_tag_cache_counts(c_ptr(), &c, sizeof c);
    if (!st.ok()) return st;
    return c;
  }
  /// The follower side of a fetch: stores an `ok` response's tag.
  Result<TagFetched> store_response(const std::vector<uint8_t>& frame) const noexcept {
    TagFetched out;
    uint8_t stored = 0;
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_cache_store_response(c_ptr(), frame.data(), frame.size(), &out.head,
                                            &stored, &raw);
    if (!st.ok()) return st;
    out.stored = stored != 0;
    out.view = TagView::adopt(raw);
    return out;
  }
};

/// What a committed mutation did (WK_TAG_MUTATION_*), with the body when it has one.
struct TagCommitted {
  uint8_t outcome = WK_TAG_MUTATION_NO_TAG;
  TagView view;
};

/// One open membership change (wk_tag_mutation). The destructor abandons it (the channel stays
/// dirty until a rebuild); commit() consumes it.
class TagMutation : public Handle<TagMutation, wk_tag_mutation, &wk_tag_mutation_free> {
 public:
  Status reset() const noexcept { return wk_tag_mutation_reset(c_ptr()); }
  /// Adds `uids` to `node_id`'s partition.
  Status add(uint64_t node_id, const std::vector<std::string_view>& uids) const {
    std::vector<wk_str> list;
    list.reserve(uids.size());
    for (std::string_view u : uids) list.push_back(tag_str(u));
    return wk_tag_mutation_add(c_ptr(), node_id, list.empty() ? nullptr : list.data(), list.size());
  }
  /// Removes `uids` from whichever partition holds them.
  Status remove(const std::vector<std::string_view>& uids) const {
    std::vector<wk_str> list;
    list.reserve(uids.size());
    for (std::string_view u : uids) list.push_back(tag_str(u));
    return wk_tag_mutation_remove(c_ptr(), list.empty() ? nullptr : list.data(), list.size());
  }
  /// Applies the change with the store's version; this object is empty afterwards, whatever the
  /// status (the library consumed the mutation).
  Result<TagCommitted> commit(uint64_t store_version) noexcept {
    wk_tag_mutation* raw = release();
    TagCommitted out;
    wk_tag_view* view = nullptr;
    Status st = wk_tag_mutation_commit(raw, store_version, &out.outcome, &view);
    if (!st.ok()) return st;
    out.view = TagView::adopt(view);
    return out;
  }
};

/// The channel leader's side (wk_tag_leader).
class TagLeader
    : public Handle<TagLeader, wk_tag_leader, &wk_tag_leader_free, &wk_tag_leader_clone> {
 public:
  struct Options {
    uint64_t local_node_id = 0;
    uint64_t ttl_ns = 60000000000ULL;
    bool manual_clock = false;
    uint64_t manual_start_ns = 0;
    std::string key_prefix;  // empty: random keys; else "<prefix>-1", "<prefix>-2", ... (tests)

    /// The C options; they point into this object (`key_prefix`), which must outlive them.
    wk_tag_leader_options to_c() const noexcept {
      wk_tag_leader_options o{};
      o.struct_size = static_cast<uint32_t>(sizeof(wk_tag_leader_options));
      o.local_node_id = local_node_id;
      o.ttl_ns = ttl_ns;
      o.clock = manual_clock ? WK_TAG_CLOCK_MANUAL : WK_TAG_CLOCK_UNIX;
      o.manual_start_ns = manual_start_ns;
      o.key_prefix = tag_str(key_prefix);
      return o;
    }
  };

  static Result<TagLeader> create(const Options& options,
                                  const MetricsRegistry* metrics = nullptr) noexcept {
    wk_tag_leader_options o = options.to_c();
    wk_tag_leader* raw = nullptr;
    Status st = wk_tag_leader_new(&o, metrics != nullptr ? metrics->c_ptr() : nullptr, &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }
  Status advance_clock(uint64_t ns) const noexcept {
    return wk_tag_leader_advance_clock(c_ptr(), ns);
  }
  Result<int64_t> now() const noexcept {
    int64_t out = 0;
    Status st = wk_tag_leader_now(c_ptr(), &out);
    if (!st.ok()) return st;
    return out;
  }
  /// The channel's current tag (upstream's BuildLeaderTag).
  Result<TagView> build(const TagBuild& request) const { return build_with(request, false); }
  /// A body reachable only by key (upstream's BuildEphemeralTag).
  Result<TagView> build_ephemeral(const TagBuild& request) const {
    return build_with(request, true);
  }
  /// A build that partitions for the host: uids[i] is in slot slots[i], slot s on node
  /// slot_nodes[s] (0: unknown, which refuses with WK_STATUS_TAG_UNASSIGNED_SLOT).
  Result<TagView> build_by_slot(const TagBuild& request, const std::vector<std::string>& uids,
                                const std::vector<uint32_t>& slots,
                                const std::vector<uint64_t>& slot_nodes,
                                bool ephemeral = false) const {
    if (uids.size() != slots.size()) return Status(WK_STATUS_TAG_LENGTH_MISMATCH);
    wk_tag_build_request r = request.to_c(nullptr);
    std::vector<wk_str> list;
    list.reserve(uids.size());
    for (const std::string& u : uids) list.push_back(tag_str(u));
    wk_tag_view* raw = nullptr;
    auto fn = ephemeral ? &wk_tag_leader_build_ephemeral_by_slot : &wk_tag_leader_build_by_slot;
    Status st = fn(c_ptr(), &r, list.empty() ? nullptr : list.data(),
                   slots.empty() ? nullptr : slots.data(), list.size(),
                   slot_nodes.empty() ? nullptr : slot_nodes.data(), slot_nodes.size(), &raw);
    if (!st.ok()) return st;
    return TagView::adopt(raw);
  }
  Result<uint8_t> reason(std::string_view channel,
                         const wk_tag_lookup_request& request) const noexcept {
    uint8_t reason = 0;
    Status st = wk_tag_leader_lookup(c_ptr(), tag_str(channel), &request, &reason, nullptr);
    if (!st.ok()) return st;
    return reason;
  }
  Result<TagLookupResult> lookup(std::string_view channel,
                                 const wk_tag_lookup_request& request) const noexcept {
    TagLookupResult out;
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_leader_lookup(c_ptr(), tag_str(channel), &request, &out.reason, &raw);
    if (!st.ok()) return st;
    out.view = TagView::adopt(raw);
    return out;
  }
  /// The body under `tag_key` (upstream's LookupTag); WK_STATUS_NOT_FOUND when none.
  Result<TagView> lookup_tag(std::string_view tag_key) const noexcept {
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_leader_lookup_tag(c_ptr(), tag_str(tag_key), &raw);
    if (!st.ok()) return st;
    return TagView::adopt(raw);
  }
  Result<TagView> current(std::string_view channel) const noexcept {
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_leader_current(c_ptr(), tag_str(channel), &raw);
    if (!st.ok()) return st;
    return TagView::adopt(raw);
  }
  /// The current tag if a message may use it; else WK_STATUS_TAG_DIRTY, WK_STATUS_NOT_FOUND or
  /// WK_STATUS_TAG_LAGGING (rebuild).
  Result<TagView> usable(std::string_view channel, uint64_t authoritative_version) const noexcept {
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_leader_usable(c_ptr(), tag_str(channel), authoritative_version, &raw);
    if (!st.ok()) return st;
    return TagView::adopt(raw);
  }
  Result<bool> is_dirty(std::string_view channel) const noexcept {
    bool out = false;
    Status st = wk_tag_leader_is_dirty(c_ptr(), tag_str(channel), &out);
    if (!st.ok()) return st;
    return out;
  }
  Result<bool> is_source_stale(std::string_view channel, std::string_view source_channel,
                               uint64_t source_version) const noexcept {
    bool out = false;
    Status st = wk_tag_leader_is_source_stale(c_ptr(), tag_str(channel),
                                              tag_str(source_channel), source_version, &out);
    if (!st.ok()) return st;
    return out;
  }
  /// Opens a membership change, marking the channel dirty.
  Result<TagMutation> begin_mutation(std::string_view channel) const noexcept {
    wk_tag_mutation* raw = nullptr;
    Status st = wk_tag_leader_begin_mutation(c_ptr(), tag_str(channel), &raw);
    if (!st.ok()) return st;
    return TagMutation::adopt(raw);
  }
  Result<wk_tag_cleanup_page> cleanup(int64_t now_ns, uint32_t limit) const noexcept {
    wk_tag_cleanup_page page{};
    Status st = wk_tag_leader_cleanup(c_ptr(), now_ns, limit, &page);
    if (!st.ok()) return st;
    return page;
  }
  Result<wk_tag_counts> counts() const noexcept {
    wk_tag_counts c{};
    Status st = wk_tag_leader_counts(c_ptr(), &c, sizeof c);
    if (!st.ok()) return st;
    return c;
  }
  /// The service-44 handler against this leader and `cache` (the same node): the response frame.
  Result<std::vector<uint8_t>> handle_rpc(const TagCache& cache, const std::vector<uint8_t>& frame,
                                          uint64_t channel_leader) const {
    return detail::tag_frame_call(
        [&](uint8_t* buf, size_t cap, size_t* len) {
          return wk_tag_rpc_handle(c_ptr(), cache.c_ptr(), frame.data(), frame.size(),
                                   channel_leader, buf, cap, len);
        },
        4096);
  }

 private:
  Result<TagView> build_with(const TagBuild& request, bool ephemeral) const {
    detail::TagPartitionsC parts(request.partitions);
    wk_tag_build_request r = request.to_c(&parts);
    wk_tag_view* raw = nullptr;
    Status st = ephemeral ? wk_tag_leader_build_ephemeral(c_ptr(), &r, &raw)
                          : wk_tag_leader_build(c_ptr(), &r, &raw);
    if (!st.ok()) return st;
    return TagView::adopt(raw);
  }
};

/// A service-44 request's fields besides its tag, owned.
struct TagRequestFields {
  std::string op = "get";  // "get", "update" (the handler refuses others)
  std::string channel_id;
  uint8_t channel_type = 0;
  std::string tag_key;
  uint64_t tag_version = 0;
  uint64_t target_node_id = 0;

  wk_tag_request to_c() const noexcept {
    return wk_tag_request{tag_str(op), tag_str(channel_id), channel_type,
                          tag_str(tag_key), tag_version, target_node_id};
  }
};

/// The service-44 request encoders (wk_tag_request_encode*).
struct TagFrame {
  /// A request with `tag` (nullptr: the empty tag, what a get sends).
  static Result<std::vector<uint8_t>> encode_request(const TagRequestFields& fields,
                                                     const TagInput* tag = nullptr) {
    wk_tag_request r = fields.to_c();
    std::optional<detail::TagPartitionsC> parts;
    wk_tag_in t{};
    if (tag != nullptr) {
      parts.emplace(tag->partitions);
      t = tag->to_c(*parts);
    }
    return detail::tag_frame_call(
        [&](uint8_t* buf, size_t cap, size_t* len) {
          return wk_tag_request_encode(&r, tag != nullptr ? &t : nullptr, buf, cap, len);
        },
        256);
  }
  /// A request with the tag of `view` (what a leader pushes to followers with op "update").
  static Result<std::vector<uint8_t>> encode_request(const TagRequestFields& fields,
                                                     const TagView& view) {
    wk_tag_request r = fields.to_c();
    return detail::tag_frame_call(
        [&](uint8_t* buf, size_t cap, size_t* len) {
          return wk_tag_request_encode_view(&r, view.c_ptr(), buf, cap, len);
        },
        256);
  }
};

/// A service-44 response's fields besides its tag, owned.
struct TagResponseFields {
  std::string status = "ok";  // "ok", "not_leader", "retryable", or any string
  uint64_t leader_id = 0;
  std::string result;         // "", "tag_not_current", "tag_version_mismatch", ...

  wk_tag_response to_c() const noexcept {
    return wk_tag_response{tag_str(status), leader_id, tag_str(result)};
  }
};

/// One decoded service-44 frame (wk_tag_frame): its fields and tag, read through the C views
/// (strings are the wire's bytes, valid while this object lives).
class TagDecoded
    : public Handle<TagDecoded, wk_tag_frame, &wk_tag_frame_free, &wk_tag_frame_clone> {
 public:
  static Result<TagDecoded> request(const std::vector<uint8_t>& frame) noexcept {
    wk_tag_frame* raw = nullptr;
    Status st = wk_tag_frame_decode_request(frame.data(), frame.size(), &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }
  static Result<TagDecoded> response(const std::vector<uint8_t>& frame) noexcept {
    wk_tag_frame* raw = nullptr;
    Status st = wk_tag_frame_decode_response(frame.data(), frame.size(), &raw);
    if (!st.ok()) return st;
    return adopt(raw);
  }
  /// A request frame's fields (WK_STATUS_INVALID_ARGUMENT for a response frame).
  Result<wk_tag_request> request_fields() const noexcept {
    wk_tag_request r{};
    Status st = wk_tag_frame_request(c_ptr(), &r);
    if (!st.ok()) return st;
    return r;
  }
  /// A response frame's fields (WK_STATUS_INVALID_ARGUMENT for a request frame).
  Result<wk_tag_response> response_fields() const noexcept {
    wk_tag_response r{};
    Status st = wk_tag_frame_response(c_ptr(), &r);
    if (!st.ok()) return st;
    return r;
  }
  /// The frame's tag (strings are bytes, not checked for UTF-8).
  Result<wk_tag_info> tag() const noexcept {
    wk_tag_info i{};
    Status st = wk_tag_frame_tag(c_ptr(), &i, sizeof i);
    if (!st.ok()) return st;
    return i;
  }
  /// Partition `index` of the tag as the input form; WK_STATUS_NOT_FOUND past the last.
  Result<wk_tag_partition_in> partition(size_t index) const noexcept {
    wk_tag_partition_in p{};
    Status st = wk_tag_frame_partition(c_ptr(), index, &p);
    if (!st.ok()) return st;
    return p;
  }
};

/// The service-44 response encoder and the pure RPC rules.
struct TagRpc {
  static Result<std::vector<uint8_t>> encode_response(const TagResponseFields& fields,
                                                      const TagInput* tag = nullptr) {
    wk_tag_response r = fields.to_c();
    std::optional<detail::TagPartitionsC> parts;
    wk_tag_in t{};
    if (tag != nullptr) {
      parts.emplace(tag->partitions);
      t = tag->to_c(*parts);
    }
    return detail::tag_frame_call(
        [&](uint8_t* buf, size_t cap, size_t* len) {
          return wk_tag_response_encode(&r, tag != nullptr ? &t : nullptr, buf, cap, len);
        },
        256);
  }

  /// A host's authority: answers `op` (WK_TAG_OP_GET or WK_TAG_OP_UPDATE) for `request` with an
  /// encoded response frame, or a failure status (an exception it throws is WK_STATUS_PANIC).
  using Authority =
      std::function<Result<std::vector<uint8_t>>(uint8_t op, const wk_tag_frame* request)>;

  /// What the handler returned and which op it called the authority for (0: none).
  struct Handled {
    std::vector<uint8_t> response;
    uint8_t called = 0;
  };

  /// Upstream's handler with `authority` (wk_tag_rpc_handle_with). The authority may be called
  /// a second time when the response outgrows the first buffer.
  static Result<Handled> handle_with(const std::vector<uint8_t>& frame, uint64_t channel_leader,
                                     uint64_t local_node_id, const Authority& authority) {
    struct Box {
      const Authority* authority;
      std::vector<uint8_t> answer;
    } box{&authority, {}};
    auto trampoline = [](void* user_data, uint8_t op, const wk_tag_frame* request,
                         const uint8_t** out, size_t* out_len) noexcept -> wk_status {
      auto* b = static_cast<Box*>(user_data);
      try {
        Result<std::vector<uint8_t>> r = (*b->authority)(op, request);
        if (!r.ok()) return r.status().code();
        b->answer = std::move(r).value();
      } catch (...) {
        return WK_STATUS_PANIC;  // never unwind into the library
      }
      *out = b->answer.data();
      *out_len = b->answer.size();
      return WK_STATUS_OK;
    };
    uint8_t called = 0;
    auto r = detail::tag_frame_call(
        [&](uint8_t* buf, size_t cap, size_t* len) {
          return wk_tag_rpc_handle_with(frame.data(), frame.size(), channel_leader, local_node_id,
                                        trampoline, &box, &called, buf, cap, len);
        },
        4096);
    if (!r.ok()) return r.status();
    return Handled{std::move(r).value(), called};
  }

  /// The client's redirect rule: the node to call next, or 0.
  static Result<uint64_t> redirect(uint64_t called_node_id, std::string_view status,
                                   uint64_t leader_id) noexcept {
    uint64_t next = 0;
    Status st = wk_tag_rpc_redirect(called_node_id, tag_str(status), leader_id, &next);
    if (!st.ok()) return st;
    return next;
  }

  /// Upstream's partitioning: a body whose partitions are the result. On
  /// WK_STATUS_TAG_UNASSIGNED_SLOT, `*unassigned_slot` (when given) is the first unknown slot.
  static Result<TagView> partition_by_node(const std::vector<std::string>& uids,
                                           const std::vector<uint32_t>& slots,
                                           const std::vector<uint64_t>& slot_nodes,
                                           uint32_t* unassigned_slot = nullptr) {
    if (uids.size() != slots.size()) return Status(WK_STATUS_TAG_LENGTH_MISMATCH);
    std::vector<wk_str> list;
    list.reserve(uids.size());
    for (const std::string& u : uids) list.push_back(tag_str(u));
    wk_tag_view* raw = nullptr;
    Status st = wk_tag_partition_by_node(list.empty() ? nullptr : list.data(),
                                         slots.empty() ? nullptr : slots.data(), list.size(),
                                         slot_nodes.empty() ? nullptr : slot_nodes.data(),
                                         slot_nodes.size(), &raw, unassigned_slot);
    if (!st.ok()) return st;
    return TagView::adopt(raw);
  }
};

}  // namespace wkcore

#endif  // WKCORE_HPP
