//! Metrics: registry handles, and one generic export of every family and series.
//!
//! A `wk_metrics_registry` is a set of metric families (`wkcore::metrics::Registry`): the
//! process-wide one (`wk_metrics_registry_global`) or one of the host's own
//! (`wk_metrics_registry_new`, for tests and embedders that want isolation). Systems register
//! their families and counting objects with the registry they are created in; this module knows
//! none of them. A host reads everything through the same calls: a snapshot handle, then each
//! family (name, help, type, label names) and each series (label values, value). The Go
//! Collector and any C++ exporter are written once over these and pick up new families with no
//! edit. `wk_metrics_registry_render` writes the Prometheus text format directly.
//!
//! # Threads
//!
//! Every call may run on any thread, concurrently with anything. Reading takes the registry's
//! lock (a cold path: scrapes); counting never does.

use std::sync::Arc;

use wkcore::metrics::{Family, MetricType, MetricsSnapshot, Registry};

use crate::handle::{
    check_out, try_clone, try_ref, write_out, write_sized, ArcCastPtr, Castable, Guarded,
};
use crate::panic::ffi_panic_boundary;
use crate::status::{
    wk_status, WK_STATUS_BUFFER_TOO_SMALL, WK_STATUS_NOT_FOUND, WK_STATUS_NULL_ARGUMENT,
    WK_STATUS_OK,
};

/// Opaque, `Arc`-owned handle to a metrics registry.
#[allow(non_camel_case_types)]
pub struct wk_metrics_registry {
    _private: [u8; 0],
}

/// The registry behind a handle.
pub(crate) enum RegistryRef {
    /// `wkcore::metrics::global()`.
    Global,
    /// The host's own.
    Owned(Registry),
}

impl RegistryRef {
    /// The registry itself.
    pub(crate) fn registry(&self) -> &Registry {
        match self {
            RegistryRef::Global => wkcore::metrics::global(),
            RegistryRef::Owned(registry) => registry,
        }
    }
}

impl Castable for wk_metrics_registry {
    type RustType = RegistryRef;
    const MAGIC: u64 = 0x776b_4d45_5452_0002; // "wkMETR" + ABI generation
}

/// Opaque, `Arc`-owned handle to one moment's values of every family of a registry. The
/// strings and arrays that `wk_metrics_snapshot_family_get` / `_series_get` point at live until
/// the snapshot's last handle is freed.
#[allow(non_camel_case_types)]
pub struct wk_metrics_snapshot {
    _private: [u8; 0],
}

impl Castable for wk_metrics_snapshot {
    type RustType = SnapshotView;
    const MAGIC: u64 = 0x776b_534e_4150_0002; // "wkSNAP" + ABI generation
}

/// A borrowed UTF-8 string (not NUL-terminated): `len` bytes at `ptr`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_str {
    /// The first byte; NULL when `len` is 0 (never a dangling placeholder, which garbage
    /// collectors that scan pointers, such as Go's, may reject).
    pub ptr: *const u8,
    /// The length in bytes.
    pub len: usize,
}

impl wk_str {
    fn of(s: &'static str) -> Self {
        wk_str {
            ptr: if s.is_empty() {
                std::ptr::null()
            } else {
                s.as_ptr()
            },
            len: s.len(),
        }
    }
}

/// The first element of `items`, or NULL when there is none (no dangling placeholder).
fn array_ptr<T>(items: &[T]) -> *const T {
    if items.is_empty() {
        std::ptr::null()
    } else {
        items.as_ptr()
    }
}

/// The Prometheus type of a family (`wk_metric_family.metric_type`). Values are fixed.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum wk_metric_type {
    /// A monotonic total.
    Counter = 0,
    /// A current value.
    Gauge = 1,
}

const fn metric_type(t: MetricType) -> wk_metric_type {
    match t {
        MetricType::Counter => wk_metric_type::Counter,
        MetricType::Gauge => wk_metric_type::Gauge,
    }
}

/// One family of a snapshot (`wk_metrics_snapshot_family_get`). It may grow: callers pass its
/// size.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_metric_family {
    /// The metric name, e.g. `wukongim_slot_proposal_admission_total`.
    pub name: wk_str,
    /// The HELP text (unescaped).
    pub help: wk_str,
    /// A `wk_metric_type` value.
    pub metric_type: u32,
    /// Zero.
    pub reserved: u32,
    /// `label_count` label names, in order; NULL when there are none.
    pub labels: *const wk_str,
    /// The number of label names.
    pub label_count: usize,
    /// The number of series (`wk_metrics_snapshot_series_get` indexes).
    pub series_count: usize,
}

/// One series of a family (`wk_metrics_snapshot_series_get`). It may grow: callers pass its
/// size.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct wk_metric_series {
    /// `label_count` label values, in the order of the family's label names; NULL when there
    /// are none.
    pub label_values: *const wk_str,
    /// The number of label values (the family's `label_count`).
    pub label_count: usize,
    /// The value (counters and gauges are non-negative integers).
    pub value: u64,
}

/// The smallest `family_size` `wk_metrics_snapshot_family_get` accepts (first release's size).
pub const WK_METRIC_FAMILY_MIN_SIZE: usize = 64;
/// The smallest `series_size` `wk_metrics_snapshot_series_get` accepts (first release's size).
pub const WK_METRIC_SERIES_MIN_SIZE: usize = 24;
const FAMILY_MIN_SIZE: usize = WK_METRIC_FAMILY_MIN_SIZE;
const SERIES_MIN_SIZE: usize = WK_METRIC_SERIES_MIN_SIZE;
const _: () = {
    assert!(std::mem::size_of::<wk_metric_family>() == FAMILY_MIN_SIZE);
    assert!(std::mem::size_of::<wk_metric_series>() == SERIES_MIN_SIZE);
};

/// A snapshot laid out for C: the label arrays are built once, so every pointer handed out
/// stays valid for the snapshot's life.
pub(crate) struct SnapshotView {
    families: Vec<FamilyView>,
}

struct FamilyView {
    family: &'static Family,
    labels: Box<[wk_str]>,
    series: Box<[(Box<[wk_str]>, u64)]>,
}

// SAFETY: every `wk_str` points into a `&'static str` of a static `Family`: immutable data that
// lives for the whole program, so sharing the pointers across threads is sound.
unsafe impl Send for SnapshotView {}
// SAFETY: as above; the view is never mutated after it is built.
unsafe impl Sync for SnapshotView {}

impl SnapshotView {
    fn new(snapshot: MetricsSnapshot) -> Self {
        let families = snapshot
            .families
            .into_iter()
            .map(|f| FamilyView {
                family: f.family,
                labels: f.family.labels.iter().map(|l| wk_str::of(l)).collect(),
                series: f
                    .family
                    .series
                    .iter()
                    .zip(f.values)
                    .map(|(labels, value)| (labels.iter().map(|l| wk_str::of(l)).collect(), value))
                    .collect(),
            })
            .collect();
        Self { families }
    }
}

fn registry_into_raw(registry: RegistryRef) -> *mut wk_metrics_registry {
    wk_metrics_registry::into_raw(Arc::new(Guarded::new::<wk_metrics_registry>(registry)))
}

/// Creates an empty registry of the host's own. On `WK_STATUS_OK` the caller owns
/// `*registry_out` and frees it with `wk_metrics_registry_free`; objects created in it keep
/// counting after that (the registry lives while any of them, or a handle, does). Any thread
/// may call this.
///
/// # Safety
///
/// `registry_out` must be NULL or point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_registry_new(
    registry_out: *mut *mut wk_metrics_registry,
) -> wk_status {
    ffi_panic_boundary! {
        let registry_out = check_out!(registry_out);
        let raw = registry_into_raw(RegistryRef::Owned(Registry::new()));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(registry_out, raw) };
        WK_STATUS_OK
    }
}

/// A handle to the process-wide registry, where objects created with a NULL registry count.
/// The caller frees it with `wk_metrics_registry_free` (the registry itself lives forever).
/// Any thread may call this.
///
/// # Safety
///
/// `registry_out` must be NULL or point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_registry_global(
    registry_out: *mut *mut wk_metrics_registry,
) -> wk_status {
    ffi_panic_boundary! {
        let registry_out = check_out!(registry_out);
        let raw = registry_into_raw(RegistryRef::Global);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(registry_out, raw) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*registry_out` is a handle to the same registry, freed separately.
///
/// # Safety
///
/// `registry` must be NULL or a live registry handle; `registry_out` must be NULL or point to
/// writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_registry_clone(
    registry: *const wk_metrics_registry,
    registry_out: *mut *mut wk_metrics_registry,
) -> wk_status {
    ffi_panic_boundary! {
        let registry_out = check_out!(registry_out);
        let arc = try_clone!(wk_metrics_registry, registry);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(registry_out, wk_metrics_registry::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Drops one reference. NULL is a no-op; a handle detected as already freed is ignored (best
/// effort).
///
/// # Safety
///
/// `registry` must be NULL or a live registry handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_registry_free(registry: *mut wk_metrics_registry) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_metrics_registry::free(registry) }
    }
}

/// Takes one moment's values of every family of `registry`. On `WK_STATUS_OK` the caller owns
/// `*snapshot_out` and frees it with `wk_metrics_snapshot_free`.
///
/// # Safety
///
/// `registry` must be NULL or a live registry handle; `snapshot_out` must be NULL or point to
/// writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_registry_snapshot(
    registry: *const wk_metrics_registry,
    snapshot_out: *mut *mut wk_metrics_snapshot,
) -> wk_status {
    ffi_panic_boundary! {
        let registry = try_ref!(wk_metrics_registry, registry);
        let snapshot_out = check_out!(snapshot_out);
        let view = SnapshotView::new(registry.registry().snapshot());
        let raw = wk_metrics_snapshot::into_raw(Arc::new(Guarded::new::<wk_metrics_snapshot>(view)));
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(snapshot_out, raw) };
        WK_STATUS_OK
    }
}

/// Adds a reference: `*snapshot_out` is a handle to the same snapshot, freed separately (the
/// strings and arrays stay valid until the last handle is freed).
///
/// # Safety
///
/// `snapshot` must be NULL or a live snapshot handle; `snapshot_out` must be NULL or point to
/// writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_snapshot_clone(
    snapshot: *const wk_metrics_snapshot,
    snapshot_out: *mut *mut wk_metrics_snapshot,
) -> wk_status {
    ffi_panic_boundary! {
        let snapshot_out = check_out!(snapshot_out);
        let arc = try_clone!(wk_metrics_snapshot, snapshot);
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(snapshot_out, wk_metrics_snapshot::into_raw(arc)) };
        WK_STATUS_OK
    }
}

/// Frees a snapshot; the strings and arrays it handed out become invalid. NULL is a no-op.
///
/// # Safety
///
/// `snapshot` must be NULL or a live snapshot handle that is not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_snapshot_free(snapshot: *mut wk_metrics_snapshot) {
    ffi_panic_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe { wk_metrics_snapshot::free(snapshot) }
    }
}

/// The number of families in the snapshot; 0 for a NULL or invalid handle.
///
/// # Safety
///
/// `snapshot` must be NULL or a live snapshot handle.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_snapshot_family_count_get(
    snapshot: *const wk_metrics_snapshot,
) -> usize {
    ffi_panic_boundary! {
        try_ref!(wk_metrics_snapshot, snapshot).families.len()
    }
}

/// Writes family `family_index` (from 0) to `*family_out`, whose size the caller passes
/// (`sizeof(wk_metric_family)`; at least 64). `WK_STATUS_NOT_FOUND` past the last family.
/// The pointers written stay valid until the snapshot is freed.
///
/// # Safety
///
/// `snapshot` must be NULL or a live snapshot handle; `family_out` must be NULL or point to
/// `family_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_snapshot_family_get(
    snapshot: *const wk_metrics_snapshot,
    family_index: usize,
    family_out: *mut wk_metric_family,
    family_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let snapshot = try_ref!(wk_metrics_snapshot, snapshot);
        let family_out = check_out!(family_out);
        if family_size < FAMILY_MIN_SIZE {
            return crate::status::WK_STATUS_INVALID_ARGUMENT;
        }
        let Some(view) = snapshot.families.get(family_index) else {
            return WK_STATUS_NOT_FOUND;
        };
        let family = wk_metric_family {
            name: wk_str::of(view.family.name),
            help: wk_str::of(view.family.help),
            metric_type: metric_type(view.family.metric_type) as u32,
            reserved: 0,
            labels: array_ptr(&view.labels),
            label_count: view.labels.len(),
            series_count: view.series.len(),
        };
        // SAFETY: checked by `check_out!`; `family_size` writable bytes per this function's
        // contract.
        unsafe { write_sized(family_out, family_size, FAMILY_MIN_SIZE, family) }
    }
}

/// Writes series `series_index` of family `family_index` to `*series_out`, whose size the
/// caller passes (`sizeof(wk_metric_series)`; at least 24). `WK_STATUS_NOT_FOUND` past the last
/// family or series. The pointers written stay valid until the snapshot is freed.
///
/// # Safety
///
/// `snapshot` must be NULL or a live snapshot handle; `series_out` must be NULL or point to
/// `series_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_snapshot_series_get(
    snapshot: *const wk_metrics_snapshot,
    family_index: usize,
    series_index: usize,
    series_out: *mut wk_metric_series,
    series_size: usize,
) -> wk_status {
    ffi_panic_boundary! {
        let snapshot = try_ref!(wk_metrics_snapshot, snapshot);
        let series_out = check_out!(series_out);
        if series_size < SERIES_MIN_SIZE {
            return crate::status::WK_STATUS_INVALID_ARGUMENT;
        }
        let Some((labels, value)) = snapshot
            .families
            .get(family_index)
            .and_then(|f| f.series.get(series_index))
        else {
            return WK_STATUS_NOT_FOUND;
        };
        let series = wk_metric_series {
            label_values: array_ptr(labels),
            label_count: labels.len(),
            value: *value,
        };
        // SAFETY: checked by `check_out!`; `series_size` writable bytes per this function's
        // contract.
        unsafe { write_sized(series_out, series_size, SERIES_MIN_SIZE, series) }
    }
}

/// Writes every family of `registry` as Prometheus text format 0.0.4 (UTF-8, not
/// NUL-terminated) into `buf[0..cap]` and its length to `*len_out`.
///
/// When `cap` is too small the call returns `WK_STATUS_BUFFER_TOO_SMALL`, writes nothing to
/// `buf` and writes the needed length to `*len_out` (the one documented exception to
/// "out-parameters only on success"); retry with a larger buffer (the text may grow in
/// between). `buf` may be NULL when `cap == 0`, to ask for the length.
///
/// # Safety
///
/// `registry` must be NULL or a live registry handle; `buf` must be NULL (only with `cap == 0`)
/// or point to `cap` writable bytes; `len_out` must be NULL or point to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn wk_metrics_registry_render(
    registry: *const wk_metrics_registry,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> wk_status {
    ffi_panic_boundary! {
        let registry = try_ref!(wk_metrics_registry, registry);
        let len_out = check_out!(len_out);
        if buf.is_null() && cap != 0 {
            return WK_STATUS_NULL_ARGUMENT;
        }
        let mut text = String::new();
        registry.registry().render(&mut text);
        let bytes = text.as_bytes();
        if bytes.len() > cap {
            // SAFETY: checked by `check_out!`; writable per this function's contract.
            unsafe { write_out(len_out, bytes.len()) };
            return WK_STATUS_BUFFER_TOO_SMALL;
        }
        if !bytes.is_empty() {
            // SAFETY: `buf` is non-NULL here (cap >= len > 0), the caller provides `cap >= len`
            // writable bytes, and a fresh `String` cannot overlap the caller's buffer.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, bytes.len()) };
        }
        // SAFETY: checked by `check_out!`; writable per this function's contract.
        unsafe { write_out(len_out, bytes.len()) };
        WK_STATUS_OK
    }
}

#[cfg(test)]
mod tests {
    use std::ptr;

    use super::*;
    use crate::admission::slot::{wk_slot_admit, wk_slot_free, wk_slot_new, wk_slot_set_leader};
    use crate::admission::status::WK_STATUS_PROPOSAL_THROTTLED;
    use crate::admission::types::{wk_control_kind, wk_proposal_class, wk_slot_limits};

    fn s(v: wk_str) -> String {
        if v.len == 0 {
            assert!(v.ptr.is_null());
            return String::new();
        }
        // SAFETY: the library hands out `len` valid UTF-8 bytes at `ptr`.
        let bytes = unsafe { std::slice::from_raw_parts(v.ptr, v.len) };
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    /// `len` elements at `ptr`, which is NULL exactly when `len` is 0.
    ///
    /// # Safety
    ///
    /// A non-NULL `ptr` points at `len` valid elements that outlive `'a`.
    unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
        if len == 0 {
            assert!(ptr.is_null(), "an empty array is NULL");
            &[]
        } else {
            // SAFETY: per the function's contract.
            unsafe { std::slice::from_raw_parts(ptr, len) }
        }
    }

    /// `(name, help, type, label names, [(label values, value)])`.
    type ExportedFamily = (String, String, u32, Vec<String>, Vec<(Vec<String>, u64)>);

    /// Reads a registry through the generic export, as the Go Collector does.
    fn export(registry: *const wk_metrics_registry) -> Vec<ExportedFamily> {
        let mut snap = ptr::null_mut();
        let mut out = Vec::new();
        // SAFETY: valid handles and out-pointers; sizes are the structs' own.
        unsafe {
            let mut first = ptr::null_mut();
            assert_eq!(
                wk_metrics_registry_snapshot(registry, &mut first),
                WK_STATUS_OK
            );
            // Read through a clone whose original is already freed.
            assert_eq!(wk_metrics_snapshot_clone(first, &mut snap), WK_STATUS_OK);
            wk_metrics_snapshot_free(first);
            for f in 0..wk_metrics_snapshot_family_count_get(snap) {
                let mut fam = std::mem::zeroed::<wk_metric_family>();
                let size = std::mem::size_of::<wk_metric_family>();
                assert_eq!(
                    wk_metrics_snapshot_family_get(snap, f, &mut fam, size),
                    WK_STATUS_OK
                );
                let labels = slice(fam.labels, fam.label_count);
                let mut series = Vec::new();
                for i in 0..fam.series_count {
                    let mut ser = std::mem::zeroed::<wk_metric_series>();
                    let size = std::mem::size_of::<wk_metric_series>();
                    assert_eq!(
                        wk_metrics_snapshot_series_get(snap, f, i, &mut ser, size),
                        WK_STATUS_OK
                    );
                    let values = slice(ser.label_values, ser.label_count);
                    series.push((values.iter().map(|v| s(*v)).collect(), ser.value));
                }
                let mut past = std::mem::zeroed::<wk_metric_series>();
                let size = std::mem::size_of::<wk_metric_series>();
                assert_eq!(
                    wk_metrics_snapshot_series_get(snap, f, fam.series_count, &mut past, size),
                    WK_STATUS_NOT_FOUND
                );
                out.push((
                    s(fam.name),
                    s(fam.help),
                    fam.metric_type,
                    labels.iter().map(|l| s(*l)).collect(),
                    series,
                ));
            }
            let mut fam = std::mem::zeroed::<wk_metric_family>();
            let n = wk_metrics_snapshot_family_count_get(snap);
            assert_eq!(
                wk_metrics_snapshot_family_get(snap, n, &mut fam, 64),
                WK_STATUS_NOT_FOUND
            );
            assert_eq!(
                wk_metrics_snapshot_family_get(snap, 0, &mut fam, 63),
                crate::status::WK_STATUS_INVALID_ARGUMENT
            );
            wk_metrics_snapshot_free(snap);
        }
        out
    }

    #[test]
    fn isolated_registries_export_only_their_own_families() {
        let (mut a, mut b) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: valid out pointers; every handle is freed once below.
        unsafe {
            assert_eq!(wk_metrics_registry_new(&mut a), WK_STATUS_OK);
            assert_eq!(wk_metrics_registry_new(&mut b), WK_STATUS_OK);
            assert!(export(b).is_empty(), "a new registry has no family yet");
            let limits = wk_slot_limits {
                max_queued_controls: 4,
                max_queued_background_controls: 1,
            };
            let mut slot = ptr::null_mut();
            assert_eq!(wk_slot_new(a, 1, &limits, &mut slot), WK_STATUS_OK);
            wk_slot_set_leader(slot);
            let (propose, bg) = (
                wk_control_kind::Propose as u32,
                wk_proposal_class::Background as u32,
            );
            let mut admission = crate::admission::types::wk_admission::default();
            assert_eq!(
                wk_slot_admit(slot, propose, bg, 1, &mut admission),
                WK_STATUS_OK
            );
            assert_eq!(
                wk_slot_admit(slot, propose, bg, 2, &mut admission),
                WK_STATUS_PROPOSAL_THROTTLED
            );
            // The registry's handle may go first: the slot keeps counting, a clone still reads.
            let mut a2 = ptr::null_mut();
            assert_eq!(wk_metrics_registry_clone(a, &mut a2), WK_STATUS_OK);
            wk_metrics_registry_free(a);
            let families = export(a2);
            assert_eq!(families.len(), 1);
            let (name, help, metric_type, labels, series) = &families[0];
            assert_eq!(name, "wukongim_slot_proposal_admission_total");
            assert!(!help.is_empty());
            assert_eq!(*metric_type, wk_metric_type::Counter as u32);
            assert_eq!(labels, &["class", "result"]);
            assert_eq!(series.len(), 8);
            let get = |c: &str, r: &str| series.iter().find(|(l, _)| l == &[c, r]).unwrap().1;
            assert_eq!(
                (get("background", "ok"), get("background", "throttled")),
                (1, 1)
            );
            assert_eq!(get("foreground", "ok"), 0);
            assert!(export(b).is_empty(), "b saw a's slot");
            // Render agrees with the export.
            let mut len = 0;
            assert_eq!(
                wk_metrics_registry_render(a2, ptr::null_mut(), 0, &mut len),
                WK_STATUS_BUFFER_TOO_SMALL
            );
            let mut buf = vec![0u8; len];
            assert_eq!(
                wk_metrics_registry_render(a2, buf.as_mut_ptr(), len, &mut len),
                WK_STATUS_OK
            );
            let text = String::from_utf8(buf).unwrap();
            for (labels, value) in series {
                let line = format!(
                    "{name}{{class=\"{}\",result=\"{}\"}} {value}\n",
                    labels[0], labels[1]
                );
                assert!(text.contains(&line), "{line}");
            }
            wk_slot_free(slot);
            // Dropped slots' counts stay.
            assert_eq!(export(a2)[0].4.iter().map(|(_, v)| v).sum::<u64>(), 2);
            wk_metrics_registry_free(a2);
            wk_metrics_registry_free(b);
        }
    }

    #[test]
    fn empty_strings_and_arrays_are_null() {
        static BARE: Family = Family {
            name: "test_bare",
            help: "",
            metric_type: MetricType::Gauge,
            labels: &[],
            series: &[&[]],
        };
        let registry = Registry::new();
        registry.declare(&BARE);
        let raw = registry_into_raw(RegistryRef::Owned(registry));
        let families = export(raw);
        assert_eq!(families.len(), 1);
        let (name, help, metric_type, labels, series) = &families[0];
        assert_eq!((name.as_str(), help.as_str()), ("test_bare", ""));
        assert_eq!(*metric_type, wk_metric_type::Gauge as u32);
        assert!(labels.is_empty());
        assert_eq!(series, &[(Vec::<String>::new(), 0)]);
        // SAFETY: the handle made above, freed once.
        unsafe { wk_metrics_registry_free(raw) };
    }

    #[test]
    fn bad_arguments_change_nothing() {
        let mut len = 7usize;
        let mut small = [0u8; 8];
        let mut global = ptr::null_mut();
        // SAFETY: NULL and valid pointers only; the global handle is freed once.
        unsafe {
            assert_eq!(
                wk_metrics_registry_new(ptr::null_mut()),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(
                wk_metrics_registry_global(ptr::null_mut()),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(
                wk_metrics_registry_render(ptr::null(), small.as_mut_ptr(), 8, &mut len),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(wk_metrics_registry_global(&mut global), WK_STATUS_OK);
            assert_eq!(
                wk_metrics_registry_render(global, ptr::null_mut(), 10, &mut len),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(
                wk_metrics_registry_render(global, small.as_mut_ptr(), 8, ptr::null_mut()),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(len, 7);
            let mut snap = ptr::null_mut();
            assert_eq!(
                wk_metrics_registry_snapshot(ptr::null(), &mut snap),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(
                wk_metrics_registry_snapshot(global, ptr::null_mut()),
                WK_STATUS_NULL_ARGUMENT
            );
            assert!(snap.is_null());
            assert_eq!(wk_metrics_snapshot_family_count_get(ptr::null()), 0);
            // A registry handle is not a snapshot handle.
            assert_eq!(wk_metrics_snapshot_family_count_get(global.cast()), 0);
            let mut fam = std::mem::zeroed::<wk_metric_family>();
            assert_eq!(
                wk_metrics_snapshot_family_get(global.cast(), 0, &mut fam, 64),
                crate::status::WK_STATUS_INVALID_HANDLE
            );
            let mut copy = ptr::null_mut();
            assert_eq!(
                wk_metrics_snapshot_clone(ptr::null(), &mut copy),
                WK_STATUS_NULL_ARGUMENT
            );
            assert_eq!(
                wk_metrics_snapshot_clone(global.cast(), &mut copy),
                crate::status::WK_STATUS_INVALID_HANDLE
            );
            assert!(copy.is_null());
            wk_metrics_snapshot_free(ptr::null_mut());
            wk_metrics_registry_free(ptr::null_mut());
            wk_metrics_registry_free(global);
        }
    }
}
