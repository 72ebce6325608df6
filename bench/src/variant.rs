//! The variants (what is measured) and shapes (how it is driven).

use std::fmt;

/// One implementation under test, with its admission style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// `SlotAdmission::admit`, one call per item.
    Wkcore,
    /// `SlotAdmission::admit_batch_copied` of [`BATCH`](crate::BATCH) items.
    WkcoreBatch64,
    /// `MutexSlot::admit` (upstream algorithm under one `Mutex`), one call per item.
    Mutex,
    /// `MutexSlot::admit_batch_copied` of [`BATCH`](crate::BATCH) items.
    MutexBatch64,
    /// Raw `ArrayQueue<u64>` push + pop, no admission: the floor.
    ArrayQueueFloor,
}

impl Variant {
    /// Every variant, in table order.
    pub const ALL: [Variant; 5] = [
        Variant::Wkcore,
        Variant::WkcoreBatch64,
        Variant::Mutex,
        Variant::MutexBatch64,
        Variant::ArrayQueueFloor,
    ];

    /// The name used in tables, JSON and criterion ids.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Wkcore => "wkcore",
            Variant::WkcoreBatch64 => "wkcore_batch64",
            Variant::Mutex => "mutex",
            Variant::MutexBatch64 => "mutex_batch64",
            Variant::ArrayQueueFloor => "arrayqueue_floor",
        }
    }

    /// The variant called `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Whether producers admit [`BATCH`](crate::BATCH) items per call.
    pub fn is_batch(self) -> bool {
        matches!(self, Variant::WkcoreBatch64 | Variant::MutexBatch64)
    }

    /// The mutex baseline this variant is compared with (`None` for the baselines and the floor).
    pub fn mutex_equivalent(self) -> Option<Variant> {
        match self {
            Variant::Wkcore => Some(Variant::Mutex),
            Variant::WkcoreBatch64 => Some(Variant::MutexBatch64),
            _ => None,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a variant is driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// `1t`: one thread admits a run of [`BATCH`](crate::BATCH) items (single admits or one
    /// batch), then drains them with `drain_with(usize::MAX, ..)`, and so on.
    OneThread,
    /// `Np1c`: N producer threads admit (spinning and retrying on busy/full), one consumer thread
    /// drains batches in a loop. `Producers(1)` is `1p1c`, `Producers(2)` is `2p1c`.
    Producers(usize),
}

impl Shape {
    /// The shapes of a default run: `1t`, `1p1c`, `2p1c`.
    pub const DEFAULT: [Shape; 3] = [Shape::OneThread, Shape::Producers(1), Shape::Producers(2)];

    /// Number of threads that run at once in a trial of this shape.
    pub fn threads(self) -> usize {
        match self {
            Shape::OneThread => 1,
            Shape::Producers(n) => n + 1,
        }
    }

    /// The shape called `name` (`1t`, or `Np1c` with N ≥ 1), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        if name == "1t" {
            return Some(Shape::OneThread);
        }
        let n: usize = name.strip_suffix("p1c")?.parse().ok()?;
        (n >= 1).then_some(Shape::Producers(n))
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::OneThread => f.write_str("1t"),
            Shape::Producers(n) => write!(f, "{n}p1c"),
        }
    }
}
