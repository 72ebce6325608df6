//! Packed state words: named bit fields over a `u64`, with encode and decode in one place.
//!
//! Hot objects keep their whole decision state in one `AtomicU64` (`docs/ARCHITECTURE.md`), so a
//! decision and its accounting are one CAS. A state word is a `Copy` newtype over `u64` whose
//! accessors are written with [`Field`] constants; the constants are checked for overlap at
//! compile time with [`disjoint`].
//!
//! ```ignore
//! const COUNT: Field = Field::new(0, 26);
//! const CLOSED: Field = Field::flag(53);
//! const _: () = assert!(disjoint(&[COUNT, CLOSED]));
//! ```

/// A run of `width` bits starting at bit `shift` of a `u64` word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Field {
    shift: u32,
    width: u32,
}

impl Field {
    /// A field of `width` bits at `shift`. Panics at compile time (in a `const`) if it does not fit.
    pub(crate) const fn new(shift: u32, width: u32) -> Self {
        assert!(
            width > 0 && width < 64 && shift + width <= 64,
            "field outside the word"
        );
        Self { shift, width }
    }

    /// A one-bit field.
    pub(crate) const fn flag(bit: u32) -> Self {
        Self::new(bit, 1)
    }

    /// The largest value the field holds, unshifted (`2^width - 1`).
    pub(crate) const fn max(self) -> u64 {
        (1u64 << self.width) - 1
    }

    /// The field's bits in place.
    pub(crate) const fn mask(self) -> u64 {
        self.max() << self.shift
    }

    /// The field's value in `word`.
    #[inline]
    pub(crate) const fn get(self, word: u64) -> u64 {
        (word >> self.shift) & self.max()
    }

    /// `word` with the field set to `value` (truncated to the field's width).
    #[inline]
    pub(crate) const fn set(self, word: u64, value: u64) -> u64 {
        (word & !self.mask()) | ((value & self.max()) << self.shift)
    }

    /// The field's bits for `value` (truncated to the field's width), every other bit zero: for
    /// building a word from disjoint fields with `|`.
    #[inline]
    pub(crate) const fn put(self, value: u64) -> u64 {
        (value & self.max()) << self.shift
    }

    /// `word` with `n` added to the field modulo `2^width`; other fields are untouched.
    #[inline]
    pub(crate) const fn add_wrapping(self, word: u64, n: u64) -> u64 {
        self.set(word, self.get(word).wrapping_add(n))
    }

    /// Whether a one-bit field is set.
    #[inline]
    pub(crate) const fn is_set(self, word: u64) -> bool {
        word & self.mask() != 0
    }
}

/// True when no two fields share a bit; use in `const _: () = assert!(disjoint(&[..]));`.
pub(crate) const fn disjoint(fields: &[Field]) -> bool {
    let mut seen = 0u64;
    let mut i = 0;
    while i < fields.len() {
        let mask = fields[i].mask();
        if seen & mask != 0 {
            return false;
        }
        seen |= mask;
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Field = Field::new(0, 4);
    const B: Field = Field::new(4, 8);
    const F: Field = Field::flag(63);

    #[test]
    fn fields_encode_and_decode_independently() {
        let w = B.set(A.set(0, 9), 200);
        assert_eq!(A.get(w), 9);
        assert_eq!(B.get(w), 200);
        assert!(!F.is_set(w));
        let w = F.set(w, 1);
        assert!(F.is_set(w));
        assert_eq!((A.get(w), B.get(w)), (9, 200));
        assert_eq!(A.put(9) | B.put(200) | F.put(1), w);
        assert_eq!(A.put(0x1f), 0xf, "truncated to the width");
    }

    #[test]
    fn add_wrapping_stays_inside_the_field() {
        let w = A.set(B.set(0, 7), 15);
        let w = A.add_wrapping(w, 3);
        assert_eq!(A.get(w), 2);
        assert_eq!(B.get(w), 7);
    }

    #[test]
    fn disjoint_detects_overlap() {
        assert!(disjoint(&[A, B, F]));
        assert!(!disjoint(&[A, Field::new(3, 2)]));
    }
}
