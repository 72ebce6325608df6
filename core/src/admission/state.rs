//! The producers' packed state word and the ring's head stamps.

use super::class::ProposalClass;
use super::kind::ControlKind;
use super::limits::SlotLimits;
use crate::word::{disjoint, Field};

/// Width of the admitted counters: they count modulo `2^27`, which is more than twice the
/// largest limit ([`super::SlotLimits::MAX`] = `2^25`), so `admitted - released` never wraps
/// ambiguously (see `slot.rs`, "Why the counters cannot wrap"). Tickets, and so the positions
/// the ABI reports, count modulo the same `2^27`.
pub(crate) const COUNT_BITS: u32 = 27;
/// The counters' modulus.
pub(crate) const COUNT_MODULUS: u64 = 1 << COUNT_BITS;

const ADMITTED: Field = Field::new(0, COUNT_BITS);
const ADMITTED_BACKGROUND: Field = Field::new(COUNT_BITS, COUNT_BITS);
const LEADER: Field = Field::flag(2 * COUNT_BITS);
const CLOSED: Field = Field::flag(2 * COUNT_BITS + 1);
const FATAL: Field = Field::flag(2 * COUNT_BITS + 2);
const CONFIG_CHANGE_PENDING: Field = Field::flag(2 * COUNT_BITS + 3);
const _: () = assert!(disjoint(&[
    ADMITTED,
    ADMITTED_BACKGROUND,
    LEADER,
    CLOSED,
    FATAL,
    CONFIG_CHANGE_PENDING
]));
// The layout the table below documents (flags at 54–57), and the counters' headroom: the modulus
// is more than twice the largest limit.
const _: () = assert!(LEADER.mask() == 1 << 54 && CONFIG_CHANGE_PENDING.mask() == 1 << 57);
const _: () = assert!(COUNT_MODULUS > 2 * SlotLimits::MAX as u64);

/// The producers' word: everything an admission decides on, so the decision and its accounting
/// are one CAS.
///
/// | bits  | field |
/// |-------|-------|
/// | 0–26  | items admitted, all kinds (cumulative, mod 2^27); also the next ring ticket |
/// | 27–53 | background proposals admitted (cumulative, mod 2^27) |
/// | 54    | leader |
/// | 55    | closed |
/// | 56    | fatal (the code lives in its own word) |
/// | 57    | a config change is pending (its ticket lives in its own word) |
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct StateWord(pub(crate) u64);

impl StateWord {
    pub(crate) const LEADER_BIT: u64 = LEADER.mask();
    pub(crate) const CLOSED_BIT: u64 = CLOSED.mask();
    pub(crate) const FATAL_BIT: u64 = FATAL.mask();
    pub(crate) const CONFIG_CHANGE_PENDING_BIT: u64 = CONFIG_CHANGE_PENDING.mask();

    #[inline]
    pub(crate) const fn admitted(self) -> u64 {
        ADMITTED.get(self.0)
    }
    #[inline]
    pub(crate) const fn admitted_background(self) -> u64 {
        ADMITTED_BACKGROUND.get(self.0)
    }
    #[inline]
    pub(crate) const fn leader(self) -> bool {
        LEADER.is_set(self.0)
    }
    #[inline]
    pub(crate) const fn closed(self) -> bool {
        CLOSED.is_set(self.0)
    }
    #[inline]
    pub(crate) const fn fatal(self) -> bool {
        FATAL.is_set(self.0)
    }
    #[inline]
    pub(crate) const fn config_change_pending(self) -> bool {
        CONFIG_CHANGE_PENDING.is_set(self.0)
    }

    /// The word after admitting `n` items (`background` of them background proposals).
    #[inline]
    pub(crate) const fn admit(self, n: u64, background: bool, config_change: bool) -> Self {
        let mut w = ADMITTED.add_wrapping(self.0, n);
        if background {
            w = ADMITTED_BACKGROUND.add_wrapping(w, n);
        }
        if config_change {
            w |= CONFIG_CHANGE_PENDING.mask();
        }
        StateWord(w)
    }
}

/// `admitted - released` on the modular counters.
#[inline]
pub(crate) const fn queued(admitted: u64, released: u64) -> u64 {
    admitted.wrapping_sub(released) & (COUNT_MODULUS - 1)
}

const STAMP_TICKET: Field = Field::new(0, COUNT_BITS);
const STAMP_LEN: Field = Field::new(COUNT_BITS, COUNT_BITS);
const STAMP_KIND: Field = Field::new(2 * COUNT_BITS, 3);
const STAMP_CLASS: Field = Field::flag(2 * COUNT_BITS + 3);
const STAMP_BACKGROUND: Field = Field::flag(2 * COUNT_BITS + 4);
const STAMP_OTHER: Field = Field::flag(2 * COUNT_BITS + 5);
const STAMP_READY: Field = Field::flag(63);
const _: () = assert!(disjoint(&[
    STAMP_TICKET,
    STAMP_LEN,
    STAMP_KIND,
    STAMP_CLASS,
    STAMP_BACKGROUND,
    STAMP_OTHER,
    STAMP_READY
]));
// The layout the table below documents (kind at 54–56, background at 58), and room for a run of
// the largest limit.
const _: () = assert!(
    STAMP_KIND.mask() == 0b111 << 54
        && STAMP_BACKGROUND.mask() == 1 << 58
        && STAMP_OTHER.mask() == 1 << 59
);
const _: () = assert!(SlotLimits::MAX as u64 <= STAMP_LEN.max());

/// `ControlKind` by its 3-bit number, so decoding a stamp needs no branch (0 is never stamped).
const KINDS: [ControlKind; 8] = {
    let mut table = [ControlKind::Propose; 8];
    let mut i = 0;
    while i < ControlKind::ALL.len() {
        let kind = ControlKind::ALL[i];
        table[kind as usize] = kind;
        i += 1;
    }
    table
};

/// The head stamp of a run of items in the ring: one queue element, one or many items.
///
/// | bits  | field |
/// |-------|-------|
/// | 0–26  | ticket of the run's first item (mod 2^27) |
/// | 27–53 | run length (at most the limit, `2^25`) |
/// | 54–56 | control kind |
/// | 57    | class (1 = background) |
/// | 58    | the run counts toward the background limit (a background proposal) |
/// | 59    | the run's items are not proposals (they count in `released_other`) |
/// | 63    | ready; an empty slot's stamp is 0 |
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Stamp(pub(crate) u64);

impl Stamp {
    pub(crate) const EMPTY: Stamp = Stamp(0);

    /// The stamp of a ready run (the fields are disjoint, so it is built with `|`: cheap on the
    /// admission path).
    #[inline]
    pub(crate) const fn new(
        ticket: u64,
        len: u64,
        kind: ControlKind,
        class: ProposalClass,
    ) -> Self {
        let proposal = matches!(kind, ControlKind::Propose);
        let background = proposal && matches!(class, ProposalClass::Background);
        Stamp(
            STAMP_READY.mask()
                | STAMP_TICKET.put(ticket)
                | STAMP_LEN.put(len)
                | STAMP_KIND.put(kind as u64)
                | STAMP_CLASS.put(class as u64)
                | STAMP_BACKGROUND.put(background as u64)
                | STAMP_OTHER.put(!proposal as u64),
        )
    }
    /// Whether this is the stamp of a run of one `offset` positions after `first`'s, of the
    /// same kind and class: the stamp `first` would be with its ticket moved on by `offset`
    /// (one compare; `first` is a ready run of one).
    #[inline]
    pub(crate) const fn is_single_after(self, first: Stamp, offset: u64) -> bool {
        self.0 == STAMP_TICKET.set(first.0, first.ticket() + offset)
    }
    #[inline]
    pub(crate) const fn is_ready(self) -> bool {
        STAMP_READY.is_set(self.0)
    }
    #[inline]
    pub(crate) const fn ticket(self) -> u64 {
        STAMP_TICKET.get(self.0)
    }
    #[inline]
    pub(crate) const fn len(self) -> u64 {
        STAMP_LEN.get(self.0)
    }
    #[inline]
    pub(crate) const fn kind(self) -> ControlKind {
        // A stamp is only ever built from a `ControlKind`, so the number is always a kind's.
        KINDS[(STAMP_KIND.get(self.0) & 7) as usize]
    }
    /// 1 when the run's items are not proposals, else 0.
    #[inline]
    pub(crate) const fn other(self) -> u64 {
        STAMP_OTHER.get(self.0)
    }
    /// 1 when the run's items count toward the background limit, else 0.
    #[inline]
    pub(crate) const fn background(self) -> u64 {
        STAMP_BACKGROUND.get(self.0)
    }
    #[inline]
    pub(crate) const fn class(self) -> ProposalClass {
        ProposalClass::from_raw(STAMP_CLASS.get(self.0) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admitting_updates_only_the_counters() {
        let s = StateWord(StateWord::LEADER_BIT | StateWord::CLOSED_BIT);
        let t = s.admit(5, true, true);
        assert_eq!((t.admitted(), t.admitted_background()), (5, 5));
        assert!(t.leader() && t.closed() && t.config_change_pending() && !t.fatal());
        let u = t.admit(3, false, false);
        assert_eq!((u.admitted(), u.admitted_background()), (8, 5));
    }

    #[test]
    fn counters_wrap_modulo_and_queued_is_exact() {
        let s = StateWord(0).admit(COUNT_MODULUS - 2, false, false);
        let t = s.admit(5, false, false);
        assert_eq!(t.admitted(), 3);
        assert_eq!(queued(t.admitted(), COUNT_MODULUS - 4), 7);
        assert!(!t.leader());
    }

    #[test]
    fn stamps_round_trip() {
        for kind in ControlKind::ALL {
            for class in ProposalClass::ALL {
                let max = u64::from(SlotLimits::MAX);
                let s = Stamp::new(COUNT_MODULUS - 1, max, kind, class);
                assert!(s.is_ready());
                assert_eq!(s.ticket(), COUNT_MODULUS - 1);
                assert_eq!(s.len(), max);
                assert_eq!(s.kind(), kind);
                assert_eq!(s.class(), class);
                let background = kind == ControlKind::Propose && class == ProposalClass::Background;
                assert_eq!(s.background(), u64::from(background));
                assert_eq!(s.other(), u64::from(kind != ControlKind::Propose));
            }
        }
        assert!(!Stamp::EMPTY.is_ready());
    }

    #[test]
    fn a_following_single_matches_ticket_kind_and_class() {
        let last = COUNT_MODULUS - 1; // the ticket wraps between the two
        for kind in ControlKind::ALL {
            for class in ProposalClass::ALL {
                let first = Stamp::new(last, 1, kind, class);
                assert!(Stamp::new(0, 1, kind, class).is_single_after(first, 1));
                assert!(Stamp::new(6, 1, kind, class).is_single_after(first, 7));
                assert!(!Stamp::new(6, 1, kind, class).is_single_after(first, 6));
                assert!(!Stamp::new(6, 2, kind, class).is_single_after(first, 7));
                assert!(
                    !Stamp(Stamp::new(6, 1, kind, class).0 & !STAMP_READY.mask())
                        .is_single_after(first, 7)
                );
                assert!(!Stamp::EMPTY.is_single_after(first, 7));
                for other_kind in ControlKind::ALL {
                    for other_class in ProposalClass::ALL {
                        let same = other_kind == kind && other_class == class;
                        assert_eq!(
                            Stamp::new(6, 1, other_kind, other_class).is_single_after(first, 7),
                            same
                        );
                    }
                }
            }
        }
    }
}
