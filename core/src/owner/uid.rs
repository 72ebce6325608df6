//! [`Uid`]: the UID an owner was reserved with, kept in the owner's entry when it is short.
//!
//! Most UIDs are a few bytes (`uid-123`, a numeric id, a UUID's 36 bytes being the long end). A
//! UID of up to [`INLINE`] bytes lives in the entry itself, so reserving and retiring such an
//! owner allocates and frees nothing for it; a longer one (up to 1024 bytes) is boxed.

/// The longest UID kept inline, in bytes: with its length and the enum's tag, 32 bytes, two
/// words more than a box.
pub(crate) const INLINE: usize = 30;

/// An owner's UID (module docs).
pub(crate) enum Uid {
    /// Up to [`INLINE`] bytes: the first `len` bytes of `bytes` are the UID's.
    Inline {
        /// The UID's length.
        len: u8,
        /// The UID, then zeros.
        bytes: [u8; INLINE],
    },
    /// A longer UID.
    Boxed(Box<str>),
}

impl Uid {
    /// The UID `uid`.
    pub(crate) fn new(uid: &str) -> Self {
        if uid.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..uid.len()].copy_from_slice(uid.as_bytes());
            Uid::Inline {
                len: uid.len() as u8,
                bytes,
            }
        } else {
            Uid::Boxed(uid.into())
        }
    }

    /// The UID.
    #[inline]
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Uid::Inline { len, bytes } => {
                let used = &bytes[..usize::from(*len)];
                // SAFETY: `new` copied a whole `&str`, and only it, into the first `len` bytes,
                // so they are valid UTF-8; the enum is never mutated after.
                unsafe { std::str::from_utf8_unchecked(used) }
            }
            Uid::Boxed(uid) => uid,
        }
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_uid_reads_back_as_given_at_every_length_across_the_inline_bound() {
        for len in 0..=INLINE + 2 {
            let ascii = "u".repeat(len);
            let uid = Uid::new(&ascii);
            assert_eq!(uid.as_str(), ascii);
            assert_eq!(
                matches!(uid, Uid::Inline { .. }),
                len <= INLINE,
                "len {len}"
            );
        }
        // Multi-byte characters ending exactly on, and one byte past, the inline bound.
        for uid in [
            "é".repeat(15),
            format!("{}é", "u".repeat(29)),
            "€".repeat(10),
        ] {
            assert_eq!(Uid::new(&uid).as_str(), uid);
        }
        let long = "x".repeat(1024);
        assert_eq!(Uid::new(&long).as_str(), long);
    }

    #[test]
    fn the_uid_costs_the_entry_two_words_more_than_a_box() {
        assert_eq!(std::mem::size_of::<Uid>(), 32);
    }
}
