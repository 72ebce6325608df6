//! [`KeyIndex`]: a ledger's key → slot index whose look-ups take no lock and write nothing.
//!
//! A key map whose every read takes a shard read lock (an atomic RMW on the shard's lock word)
//! does not scale across threads even on disjoint keys: every thread visits every shard, so the
//! lock lines move between the cores on nearly every read (`bench/examples/map_read_scaling.rs`).
//! This index is chained hashing over the ledger's own slab:
//!
//! - `heads[bucket]` and each slot's `next` are *links*: `slot + 1 (32) | generation (32)`, 0
//!   for none. A link names the slot *and the generation it was linked in*, so a reader that
//!   follows a stale link to a slot that was freed and reused sees the generation differ.
//! - Each slot stores its key in words ([`LedgerKey::encode`]), the key's hash first. Readers
//!   compare those words with relaxed atomic loads and validate them seqlock-style against the
//!   slot's state word.
//! - A slot's `next` and key words are one *entry*, `next` first, and each entry starts on a
//!   cache line of its own and fills whole lines (a key of up to 40 bytes and its link take one
//!   line). A look-up reads one line per record it passes, and no two records share an index
//!   line, so threads that insert and then use different keys never meet on one (an entry that
//!   shared a line with another thread's record cost a miss on every first read after that
//!   thread wrote it).
//! - Writers (linking a new record, unlinking a removed one) take the bucket's stripe lock: one
//!   of [`STRIPES`] mutexes. Linking checks the key is absent and links it under the same lock,
//!   so two inserts of one key are one after the other. These are the ledger's cold steps (one
//!   per new record, one per removed record); look-ups (claims, finalizations, reads) never
//!   lock.
//!
//! # Look-up
//!
//! From the bucket's head, for each link `(s, g)`: load slot `s`'s state word `w` (`Acquire`);
//! if `w`'s generation is not `g` (or the slot is free), the slot was freed since the link was
//! read: start again from the head. Otherwise compare the key words, read `next`, then
//! `fence(Acquire)` and reload the state word: if the generation changed, start again; else the
//! key words and `next` were those of record `(s, g)`. A key present for the whole look-up is
//! always found: links change only by linking at the head (a reader past the head may miss a
//! record linked after it started, which is linearizable as inserted after the look-up) and by
//! unlinking a removed slot, whose own `next` still leads on into the chain until the slot is
//! freed (and then its generation differs). Restarts happen only when the reader raced a
//! removal that freed the slot it stood on: lock-free, never waiting for a writer.
//!
//! # Orderings
//!
//! - Linking: the record's key words and `next` are written, then the head is stored with
//!   `Release`; a reader's `Acquire` load of the link sees them. Unlinking stores the
//!   predecessor's link with `Release`, pairing the same way.
//! - Reuse: the ledger frees a slot (generation + 1, `Relaxed`) before its `Release` push; the
//!   next inserter pops it (`Acquire`) and issues `fence(Release)` before it writes anything of
//!   the new record, the key words and `next` included (relaxed). A reader whose relaxed load of a key word or `next` saw one of
//!   the new values synchronizes, through its `fence(Acquire)`, with that release fence, so its
//!   reload of the state word sees the new generation and it starts again (the seqlock
//!   argument, with the generation as the sequence).
//! - The stripe mutexes order the writers of one bucket among themselves.

use crossbeam_utils::CachePadded;

use crate::sync::{fence, AtomicU64, Mutex, Ordering};

/// Stripe locks per index (buckets map to `bucket % STRIPES`).
#[cfg(not(wkcore_loom))]
const STRIPES: usize = 256;
#[cfg(wkcore_loom)]
const STRIPES: usize = 2;

/// The most words a key's stored form may take.
pub(crate) const KEY_WORDS_MAX: usize = 32;

/// A key a ledger can index: a fixed number of words, its hash first.
pub trait LedgerKey: Clone + Eq + std::hash::Hash + Send + Sync + private::Sealed {
    /// Words of the stored form (at most 32).
    #[doc(hidden)]
    const WORDS: usize;

    /// The key's keyed hash (word 0 of the stored form).
    #[doc(hidden)]
    fn hash64(&self) -> u64;

    /// Writes the stored form, `WORDS` words, word 0 the key's keyed hash. Equal keys, and only
    /// they, give equal words.
    #[doc(hidden)]
    fn encode(&self, out: &mut [u64]);

    /// Whether the stored form `word(0..WORDS)` is this key's, reading as few words as it can
    /// (the hash first, then only the words the key's lengths use).
    #[doc(hidden)]
    fn matches(&self, word: impl Fn(usize) -> u64) -> bool;
}

pub(crate) mod private {
    /// Only wkcore's key types are ledger keys.
    pub trait Sealed {}
}

/// A link: `slot + 1` and the generation it was linked in; 0 is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Link(u64);

impl Link {
    fn new(slot: usize, generation: u32) -> Self {
        Link(((generation as u64) << 32) | (slot as u64 + 1))
    }

    fn get(self) -> Option<(usize, u32)> {
        let low = self.0 as u32;
        (low != 0).then(|| (low as usize - 1, (self.0 >> 32) as u32))
    }
}

/// What the index needs to know of a slot's state word.
pub(crate) trait SlotStates {
    /// The slot's state word.
    fn state(&self, slot: usize) -> &AtomicU64;
    /// The generation in a state word.
    fn generation(word: u64) -> u32;
    /// Whether a state word holds a record (anything but free). A record being removed is still
    /// one: its slot stays traversable (its `next` is not touched until the slot is reused,
    /// after its generation changed).
    fn is_live(word: u64) -> bool;
}

/// Words per cache line.
const LINE_WORDS: usize = 8;

/// Words of one entry of a key of `words` words: its `next` and the key, in whole lines.
const fn stride_for(words: usize) -> usize {
    (1 + words).next_multiple_of(LINE_WORDS)
}

/// The index (module docs).
pub(crate) struct KeyIndex {
    heads: Box<[AtomicU64]>,
    mask: u64,
    /// The entries: slot `s`'s is `entries[base + s * stride..][..1 + words]`, its `next` first,
    /// then its key words; `base` puts entry 0 at the start of a cache line.
    entries: Box<[AtomicU64]>,
    base: usize,
    stride: usize,
    words: usize,
    stripes: Box<[CachePadded<Mutex<()>>]>,
}

/// Why [`KeyIndex::link_with`] linked nothing.
pub(crate) enum LinkError<E> {
    /// The key is linked: its slot and generation.
    Exists(usize, u32),
    /// The constructor refused.
    Refused(E),
}

impl KeyIndex {
    /// An empty index for `capacity` slots of keys of `words` words.
    pub(crate) fn new(capacity: usize, words: usize) -> Self {
        assert!((1..=KEY_WORDS_MAX).contains(&words));
        // Twice the slots, so chains average at most half a record.
        let buckets = (2 * capacity).next_power_of_two();
        // Whole lines per entry, and room to start the first on a line boundary.
        let stride = stride_for(words);
        let entries: Box<[AtomicU64]> = (0..capacity * stride + LINE_WORDS - 1)
            .map(|_| AtomicU64::new(0))
            .collect();
        let misalign = (entries.as_ptr() as usize / std::mem::size_of::<AtomicU64>()) % LINE_WORDS;
        let base = (LINE_WORDS - misalign) % LINE_WORDS;
        Self {
            heads: (0..buckets).map(|_| AtomicU64::new(0)).collect(),
            mask: buckets as u64 - 1,
            entries,
            base,
            stride,
            words,
            stripes: (0..STRIPES.min(buckets))
                .map(|_| CachePadded::new(Mutex::new(())))
                .collect(),
        }
    }

    fn bucket(&self, hash: u64) -> usize {
        // The low bits pick the shard of the ledger map's hashers; use the high ones here.
        ((hash >> 32) & self.mask) as usize
    }

    fn stripe(&self, bucket: usize) -> &Mutex<()> {
        &self.stripes[bucket % self.stripes.len()]
    }

    /// Slot `slot`'s stored key.
    #[inline]
    fn words_of(&self, slot: usize) -> &[AtomicU64] {
        let at = self.base + slot * self.stride + 1;
        &self.entries[at..at + self.words]
    }

    /// Slot `slot`'s link to the next record of its chain.
    #[inline]
    fn next(&self, slot: usize) -> &AtomicU64 {
        &self.entries[self.base + slot * self.stride]
    }

    /// Slot `slot`'s entry for keys of type `K`: its `next`, then its `K::WORDS` key words. The
    /// stride is `K`'s, a constant, so the look-up's address arithmetic folds away, and the
    /// bound is not checked again on the look-up's path.
    ///
    /// # Safety
    ///
    /// `slot` is named by a link of this index: [`KeyIndex::link_with`] links only slots whose
    /// entry lies inside `entries` (it asserts so), and a link, once read, names the slot it
    /// was stored with.
    #[inline]
    unsafe fn entry<K: LedgerKey>(&self, slot: usize) -> &[AtomicU64] {
        debug_assert_eq!(self.words, K::WORDS, "an index is used with one key type");
        let stride = const { stride_for(K::WORDS) };
        let at = self.base + slot * stride;
        debug_assert!(at + 1 + K::WORDS <= self.entries.len());
        // SAFETY: in bounds, by the caller's contract.
        unsafe { self.entries.get_unchecked(at..at + 1 + K::WORDS) }
    }

    /// Whether `entry` holds `key` (relaxed loads; the caller validates). [`LedgerKey::matches`]
    /// compares the stored hash first and reads the rest only when it is `key`'s, so the look-up
    /// does not load the whole key for every record of the chain.
    #[inline]
    fn holds<K: LedgerKey>(entry: &[AtomicU64], key: &K) -> bool {
        let words = &entry[1..1 + K::WORDS];
        // Ordering: Relaxed; validated by the caller's fence and state reload (module docs).
        key.matches(|i| words[i].load(Ordering::Relaxed))
    }

    /// Finds the live record of the key whose stored form is `encoded`: its slot and the state
    /// word it was validated against. Takes no lock.
    #[inline(always)]
    pub(crate) fn find<S: SlotStates, K: LedgerKey>(
        &self,
        states: &S,
        key: &K,
    ) -> Option<(usize, u64)> {
        let head = &self.heads[self.bucket(key.hash64())];
        'restart: loop {
            // Ordering: Acquire; pairs with the Release store that linked it (module docs).
            let mut link = Link(head.load(Ordering::Acquire));
            while let Some((slot, generation)) = link.get() {
                let state = states.state(slot);
                // Ordering: Acquire; the slot's fields as of this word.
                let word = state.load(Ordering::Acquire);
                if S::generation(word) != generation || !S::is_live(word) {
                    crate::sync::spin_loop();
                    continue 'restart;
                }
                // SAFETY: `slot` came from a link of this index.
                let entry = unsafe { self.entry::<K>(slot) };
                let found = Self::holds(entry, key);
                // Ordering: Relaxed; validated below.
                let next = Link(entry[0].load(Ordering::Relaxed));
                // Ordering: Acquire fence: if a load above saw a reused slot's new words, the
                // reload below sees its new generation (module docs).
                fence(Ordering::Acquire);
                // Ordering: Relaxed; ordered by the fence above.
                let again = state.load(Ordering::Relaxed);
                if S::generation(again) != generation || !S::is_live(again) {
                    crate::sync::spin_loop();
                    continue 'restart;
                }
                if found {
                    return Some((slot, word));
                }
                // `next` was read while the slot held this record; the fence above made that
                // relaxed load an acquire (it pairs with the Release store of the link), and
                // whatever it names is validated the same way when the reader gets there.
                link = next;
            }
            return None;
        }
    }

    /// Links `key` to a slot `make` fills, unless the key is linked: with the
    /// bucket's stripe lock held, so the check and the link are one step for inserts of one
    /// key. `make` returns the slot and the generation it filled it in; it runs before the link
    /// is published and must write nothing a reader validates against except through
    /// [`KeyIndex::prepare`].
    pub(crate) fn link_with<S: SlotStates, K: LedgerKey, E>(
        &self,
        states: &S,
        key: &K,
        make: impl FnOnce() -> Result<(usize, u32), E>,
    ) -> Result<(), LinkError<E>> {
        let bucket = self.bucket(key.hash64());
        let _guard = self.stripe(bucket).lock();
        if let Some((slot, word)) = self.find(states, key) {
            return Err(LinkError::Exists(slot, S::generation(word)));
        }
        let (slot, generation) = make().map_err(LinkError::Refused)?;
        // The look-up reads a linked slot's entry unchecked (`entry`).
        assert!(
            self.base + (slot + 1) * self.stride <= self.entries.len(),
            "slot {slot} is outside the index"
        );
        // Ordering: Relaxed; the stripe lock orders this bucket's writers, and the Release
        // store below publishes.
        let head = self.heads[bucket].load(Ordering::Relaxed);
        // Ordering: Relaxed; published by the Release store below.
        self.next(slot).store(head, Ordering::Relaxed);
        // Ordering: Release; pairs with the Acquire load of a reader (module docs).
        self.heads[bucket].store(Link::new(slot, generation).0, Ordering::Release);
        Ok(())
    }

    /// Writes a popped slot's stored key before its record is published. The caller has issued
    /// a `fence(Release)` since it popped the slot, so a reader that still follows an old link
    /// here and sees a new word also sees the slot's new generation (module docs).
    pub(crate) fn prepare<K: LedgerKey>(&self, slot: usize, key: &K) {
        let mut encoded = [0u64; KEY_WORDS_MAX];
        key.encode(&mut encoded[..K::WORDS]);
        for (word, value) in self.words_of(slot).iter().zip(&encoded[..K::WORDS]) {
            // Ordering: Relaxed; published by the record's Release state word and link.
            word.store(*value, Ordering::Relaxed);
        }
        // Ordering: Relaxed; as above (the link store sets it again under the stripe lock).
        self.next(slot).store(0, Ordering::Relaxed);
    }

    /// Unlinks slot `slot` (linked in `generation`), whose state the caller has moved out of the
    /// live phases (so readers on it start again). Returns whether it was linked.
    pub(crate) fn unlink(&self, slot: usize, generation: u32) -> bool {
        // Ordering: Relaxed; the slot's own key, written by its inserter, which the caller's
        // winning transition synchronized with.
        let hash = self.words_of(slot)[0].load(Ordering::Relaxed);
        let bucket = self.bucket(hash);
        let _guard = self.stripe(bucket).lock();
        let target = Link::new(slot, generation);
        let mut at: &AtomicU64 = &self.heads[bucket];
        loop {
            // Ordering: Relaxed; the stripe lock orders this bucket's writers.
            let link = Link(at.load(Ordering::Relaxed));
            match link.get() {
                None => return false,
                Some((s, _)) if link == target => {
                    // Ordering: Relaxed; under the lock, the removed slot's own link.
                    let next = self.next(s).load(Ordering::Relaxed);
                    // Ordering: Release; pairs with the Acquire loads of readers.
                    at.store(next, Ordering::Release);
                    return true;
                }
                Some((s, _)) => at = self.next(s),
            }
        }
    }
}
