//! loom models of `wkcore::hazard`: a reader never reads a value after it was freed, whether it
//! holds it in its row's slot or, with its row full or without a row, through a shared slot and
//! a reference count; reclaims that run at once free each value once; and every retired value
//! is freed once no reader holds it.
//!
//! Each value's payload is a loom `UnsafeCell` that its `Drop` writes, so a free that does not
//! happen after a reader's read is a race loom reports. Under loom the light and heavy barriers
//! are `AcqRel` read-modify-writes of one word of the domain, and rows hold one slot (the
//! domain's docs say why that stands for the system call and compiler fence that ship).
#![cfg(wkcore_loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use wkcore::hazard::{Domain, RawCell, Weighed};

/// A freed value's payload.
const FREED: u64 = u64::MAX;

struct Value {
    payload: UnsafeCell<u64>,
    drops: Arc<AtomicUsize>,
}

// SAFETY: the payload is written only by `Drop` (exclusive access) and read otherwise; loom
// checks that those never race.
unsafe impl Sync for Value {}

impl Weighed for Value {
    fn weight(&self) -> u64 {
        0
    }
}

impl Drop for Value {
    fn drop(&mut self) {
        // SAFETY: `&mut self`; loom checks that no read of the payload races this write.
        self.payload.with_mut(|p| unsafe { *p = FREED });
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

fn value(payload: u64, drops: &Arc<AtomicUsize>) -> Arc<Value> {
    Arc::new(Value {
        payload: UnsafeCell::new(payload),
        drops: drops.clone(),
    })
}

struct Fixture {
    domain: Domain,
    cell: RawCell<Value>,
    drops: Arc<AtomicUsize>,
}

fn fixture(rows: usize) -> Arc<Fixture> {
    let drops = Arc::new(AtomicUsize::new(0));
    Arc::new(Fixture {
        domain: Domain::with_rows(rows),
        cell: RawCell::new(Some(value(1, &drops))),
        drops,
    })
}

/// Reads the cell's value in `row` (`None`: a shared slot) and checks it was not freed.
fn read(f: &Fixture, row: Option<usize>) -> u64 {
    // SAFETY: each model gives each thread its own row; the cell's domain is `f.domain`.
    let held = unsafe { f.cell.load(&f.domain, row) };
    let v = held.as_ref().expect("the cell always holds a value");
    // SAFETY: the payload is only written by `Drop`, which loom checks happens after this.
    let payload = v.payload.with(|p| unsafe { *p });
    assert_ne!(payload, FREED, "read a freed value");
    payload
}

/// Replaces the value with `payload` (reading it in `row`) and reclaims; true if it won.
fn replace(f: &Fixture, row: usize, payload: u64) -> bool {
    // SAFETY: as in `read`.
    let current = unsafe { f.cell.load(&f.domain, Some(row)) };
    let expected = current.as_ref().map(Arc::as_ptr);
    let fresh = value(payload, &f.drops);
    // SAFETY: the cell's domain.
    let won = unsafe { f.cell.compare_and_swap(&f.domain, &current, Some(fresh)) };
    drop(current);
    assert!(expected.is_some());
    f.domain.reclaim();
    won
}

/// After every thread joined: a reclaim frees every replaced value (`replaced` of them, the
/// unpublished ones included), and letting go of the cell and the domain frees the last one.
fn all_replaced_values_go(f: Arc<Fixture>, replaced: usize) {
    f.domain.reclaim();
    assert_eq!(f.drops.load(Ordering::Relaxed), replaced);
    let Fixture {
        domain,
        mut cell,
        drops,
    } = Arc::try_unwrap(f).ok().expect("every thread joined");
    // SAFETY: the cell's domain; its last access.
    unsafe { cell.retire_on_drop(&domain) };
    drop(domain);
    assert_eq!(drops.load(Ordering::Relaxed), replaced + 1);
}

#[test]
fn a_row_reader_never_reads_a_freed_value() {
    loom::model(|| {
        let f = fixture(2);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                let first = read(&f, Some(0));
                let second = read(&f, Some(0));
                assert!(first <= second, "values are replaced in order");
            })
        };
        assert!(replace(&f, 1, 2));
        reader.join().unwrap();
        all_replaced_values_go(f, 1);
    });
}

#[test]
fn a_reader_past_its_row_holds_a_count_and_never_reads_a_freed_value() {
    loom::model(|| {
        let f = fixture(2);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                // SAFETY: row 0 is this thread's; the cell's domain.
                let first = unsafe { f.cell.load(&f.domain, Some(0)) };
                // The row's one slot is taken: this read takes a shared slot and a count.
                let second = read(&f, Some(0));
                let first = first.as_ref().expect("a value");
                // SAFETY: as in `read`.
                assert_ne!(first.payload.with(|p| unsafe { *p }), FREED);
                assert!(second >= 1);
            })
        };
        assert!(replace(&f, 1, 2));
        reader.join().unwrap();
        all_replaced_values_go(f, 1);
    });
}

#[test]
fn a_rowless_reader_and_a_row_reader_against_a_reclaiming_writer() {
    loom::model(|| {
        let f = fixture(2);
        let rowless = {
            let f = f.clone();
            thread::spawn(move || {
                read(&f, None);
            })
        };
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                read(&f, Some(0));
            })
        };
        assert!(replace(&f, 1, 2));
        rowless.join().unwrap();
        reader.join().unwrap();
        all_replaced_values_go(f, 1);
    });
}

#[test]
fn two_reclaiming_writers_free_each_value_once() {
    loom::model(|| {
        let f = fixture(3);
        let writer = {
            let f = f.clone();
            thread::spawn(move || replace(&f, 1, 2))
        };
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                read(&f, Some(2));
            })
        };
        let won = replace(&f, 0, 3);
        let other_won = writer.join().unwrap();
        reader.join().unwrap();
        assert!(
            won || other_won,
            "one of two writers on the same value wins"
        );
        let replaced = usize::from(won) + usize::from(other_won);
        // A losing writer's fresh value was dropped unpublished.
        let unpublished = 2 - replaced;
        all_replaced_values_go(f, replaced + unpublished);
    });
}

#[test]
fn a_reader_that_sends_its_value_away_keeps_it_alive_there() {
    loom::model(|| {
        let f = fixture(2);
        // SAFETY: row 0 is this (the model's main) thread's; the cell's domain. The lifetime
        // is stretched to move the value into a thread that also holds `f` and drops the
        // value first.
        let held: wkcore::hazard::Protected<'static, Value> =
            unsafe { std::mem::transmute(f.cell.load(&f.domain, Some(0))) };
        let writer = {
            let f = f.clone();
            thread::spawn(move || assert!(replace(&f, 1, 2)))
        };
        let elsewhere = {
            let f = f.clone();
            thread::spawn(move || {
                let v = held.as_ref().expect("a value");
                // SAFETY: as in `read`.
                assert_ne!(v.payload.with(|p| unsafe { *p }), FREED);
                drop(held);
                drop(f);
            })
        };
        writer.join().unwrap();
        elsewhere.join().unwrap();
        all_replaced_values_go(f, 1);
    });
}
