//! Fixed-size ledger keys: [`ByteKey`] (host bytes) and [`HandoffKey`] (the shard hand-off
//! 6-tuple).
//!
//! Both are stored inline, so a key costs no allocation. Each computes its hash once, when it is
//! built, with a hasher keyed by a random key drawn once per process (so an attacker who chooses
//! keys cannot choose collisions), and the ledgers' maps hash that word again with their own
//! per-map random state. Equality compares the hash first, then every byte of the key, so two
//! different keys whose hashes collide stay two records.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

/// The process's hash key: drawn once, at the first key built.
fn keyed() -> &'static ahash::RandomState {
    static STATE: OnceLock<ahash::RandomState> = OnceLock::new();
    STATE.get_or_init(ahash::RandomState::new)
}

/// The longest [`ByteKey`], in bytes.
pub const KEY_MAX: usize = 64;
/// The longest `channel_id` of a [`HandoffKey`], in bytes.
pub const CHANNEL_ID_MAX: usize = 128;
/// The longest `tag_key` of a [`HandoffKey`], in bytes.
pub const TAG_KEY_MAX: usize = 64;

/// Why a key was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// The key (or a required string of the tuple) is empty.
    Empty,
    /// The key (or a string of the tuple) is longer than its maximum.
    TooLong {
        /// The length given.
        len: usize,
        /// The maximum for that field.
        max: usize,
    },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::Empty => f.write_str("empty key"),
            KeyError::TooLong { len, max } => write!(f, "key of {len} bytes (at most {max})"),
        }
    }
}

impl std::error::Error for KeyError {}

/// Inline bytes of at most `N`, compared and hashed by their used part only.
#[derive(Clone, Copy)]
struct InlineBytes<const N: usize> {
    len: u8,
    bytes: [u8; N],
}

impl<const N: usize> InlineBytes<N> {
    fn new(bytes: &[u8], allow_empty: bool) -> Result<Self, KeyError> {
        if bytes.is_empty() && !allow_empty {
            return Err(KeyError::Empty);
        }
        if bytes.len() > N {
            return Err(KeyError::TooLong {
                len: bytes.len(),
                max: N,
            });
        }
        let mut out = [0u8; N];
        out[..bytes.len()].copy_from_slice(bytes);
        Ok(Self {
            len: bytes.len() as u8,
            bytes: out,
        })
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl<const N: usize> PartialEq for InlineBytes<N> {
    fn eq(&self, other: &Self) -> bool {
        // The bytes past `len` are zero (`new`), so whole arrays compare as the used parts do,
        // without a call into `memcmp`.
        self.len == other.len && self.bytes == other.bytes
    }
}

impl<const N: usize> Eq for InlineBytes<N> {}

/// A ledger key of 1 to [`KEY_MAX`] host bytes (`pending:{job}:{batch}:{target}`, a receipt id,
/// a refresh token), stored inline with its keyed hash.
#[derive(Clone, Copy)]
pub struct ByteKey {
    hash: u64,
    bytes: InlineBytes<KEY_MAX>,
}

impl ByteKey {
    /// The key of `bytes`; empty or longer than [`KEY_MAX`] is refused.
    pub fn new(bytes: &[u8]) -> Result<Self, KeyError> {
        let inline = InlineBytes::new(bytes, false)?;
        Ok(Self {
            hash: keyed().hash_one(inline.as_slice()),
            bytes: inline,
        })
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

impl PartialEq for ByteKey {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.bytes == other.bytes
    }
}

impl Eq for ByteKey {}

impl Hash for ByteKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl super::index::private::Sealed for ByteKey {}

impl super::index::LedgerKey for ByteKey {
    const WORDS: usize = 2 + KEY_MAX / 8;

    #[inline]
    fn hash64(&self) -> u64 {
        self.hash
    }

    #[inline]
    fn matches(&self, word: impl Fn(usize) -> u64) -> bool {
        if word(0) != self.hash || word(1) != u64::from(self.bytes.len) {
            return false;
        }
        // A plain loop over the used words: it compiles to one load and compare each.
        let used = (self.bytes.len as usize).div_ceil(8).min(KEY_MAX / 8);
        let mut i = 0;
        while i < used {
            let chunk: [u8; 8] = self.bytes.bytes[8 * i..8 * i + 8]
                .try_into()
                .expect("8 bytes");
            if word(2 + i) != u64::from_le_bytes(chunk) {
                return false;
            }
            i += 1;
        }
        true
    }

    fn encode(&self, out: &mut [u64]) {
        out[0] = self.hash;
        out[1] = u64::from(self.bytes.len);
        for (word, chunk) in out[2..].iter_mut().zip(self.bytes.bytes.chunks_exact(8)) {
            *word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        }
    }
}

impl fmt::Debug for ByteKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ByteKey({:?})", String::from_utf8_lossy(self.as_bytes()))
    }
}

/// The identity of one delivery shard hand-off: `(channel_id, channel_type, message_id,
/// target_node_id, tag_key, tag_version)`, the whole tuple stored inline.
///
/// `channel_id` is 1 to [`CHANNEL_ID_MAX`] bytes; `tag_key` 0 to [`TAG_KEY_MAX`] (an empty tag key
/// is a hand-off without a tag).
#[derive(Clone, Copy)]
pub struct HandoffKey {
    hash: u64,
    channel_id: InlineBytes<CHANNEL_ID_MAX>,
    channel_type: u8,
    message_id: u64,
    target_node_id: u64,
    tag_key: InlineBytes<TAG_KEY_MAX>,
    tag_version: u64,
}

impl HandoffKey {
    /// The key of one hand-off; strings beyond their maximum, or an empty `channel_id`, are
    /// refused.
    pub fn new(
        channel_id: &[u8],
        channel_type: u8,
        message_id: u64,
        target_node_id: u64,
        tag_key: &[u8],
        tag_version: u64,
    ) -> Result<Self, KeyError> {
        let mut key = Self {
            hash: 0,
            channel_id: InlineBytes::new(channel_id, false)?,
            channel_type,
            message_id,
            target_node_id,
            tag_key: InlineBytes::new(tag_key, true)?,
            tag_version,
        };
        key.hash = keyed().hash_one((
            key.channel_id.as_slice(),
            channel_type,
            message_id,
            target_node_id,
            key.tag_key.as_slice(),
            tag_version,
        ));
        Ok(key)
    }

    /// The channel id.
    pub fn channel_id(&self) -> &[u8] {
        self.channel_id.as_slice()
    }

    /// The channel type.
    pub fn channel_type(&self) -> u8 {
        self.channel_type
    }

    /// The message id.
    pub fn message_id(&self) -> u64 {
        self.message_id
    }

    /// The node the shard is handed to.
    pub fn target_node_id(&self) -> u64 {
        self.target_node_id
    }

    /// The delivery tag's key (may be empty).
    pub fn tag_key(&self) -> &[u8] {
        self.tag_key.as_slice()
    }

    /// The delivery tag's version.
    pub fn tag_version(&self) -> u64 {
        self.tag_version
    }
}

impl PartialEq for HandoffKey {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && self.message_id == other.message_id
            && self.target_node_id == other.target_node_id
            && self.tag_version == other.tag_version
            && self.channel_type == other.channel_type
            && self.channel_id == other.channel_id
            && self.tag_key == other.tag_key
    }
}

impl Eq for HandoffKey {}

impl Hash for HandoffKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl super::index::private::Sealed for HandoffKey {}

impl super::index::LedgerKey for HandoffKey {
    const WORDS: usize = 5 + CHANNEL_ID_MAX / 8 + TAG_KEY_MAX / 8;

    #[inline]
    fn hash64(&self) -> u64 {
        self.hash
    }

    #[inline]
    fn matches(&self, word: impl Fn(usize) -> u64) -> bool {
        let lens = u64::from(self.channel_type)
            | (u64::from(self.channel_id.len) << 8)
            | (u64::from(self.tag_key.len) << 16);
        let chunks = |bytes: &[u8], len: u8, first: usize| {
            bytes
                .chunks_exact(8)
                .take((len as usize).div_ceil(8))
                .enumerate()
                .all(|(i, chunk)| {
                    word(first + i) == u64::from_le_bytes(chunk.try_into().expect("8 bytes"))
                })
        };
        word(0) == self.hash
            && word(1) == self.message_id
            && word(2) == self.target_node_id
            && word(3) == self.tag_version
            && word(4) == lens
            && chunks(&self.channel_id.bytes, self.channel_id.len, 5)
            && chunks(
                &self.tag_key.bytes,
                self.tag_key.len,
                5 + CHANNEL_ID_MAX / 8,
            )
    }

    fn encode(&self, out: &mut [u64]) {
        out[0] = self.hash;
        out[1] = self.message_id;
        out[2] = self.target_node_id;
        out[3] = self.tag_version;
        out[4] = u64::from(self.channel_type)
            | (u64::from(self.channel_id.len) << 8)
            | (u64::from(self.tag_key.len) << 16);
        let channel = self.channel_id.bytes.chunks_exact(8);
        let tag = self.tag_key.bytes.chunks_exact(8);
        for (word, chunk) in out[5..].iter_mut().zip(channel.chain(tag)) {
            *word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        }
    }
}

impl fmt::Debug for HandoffKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandoffKey")
            .field("channel_id", &String::from_utf8_lossy(self.channel_id()))
            .field("channel_type", &self.channel_type)
            .field("message_id", &self.message_id)
            .field("target_node_id", &self.target_node_id)
            .field("tag_key", &String::from_utf8_lossy(self.tag_key()))
            .field("tag_version", &self.tag_version)
            .finish()
    }
}

const _: () = {
    use super::index::{LedgerKey, KEY_WORDS_MAX};
    assert!(<ByteKey as LedgerKey>::WORDS <= KEY_WORDS_MAX);
    assert!(<HandoffKey as LedgerKey>::WORDS <= KEY_WORDS_MAX);
    assert!(KEY_MAX % 8 == 0 && CHANNEL_ID_MAX % 8 == 0 && TAG_KEY_MAX % 8 == 0);
};

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn byte_keys_are_bounded_and_compare_their_bytes() {
        assert_eq!(ByteKey::new(b"").unwrap_err(), KeyError::Empty);
        assert_eq!(
            ByteKey::new(&[1; KEY_MAX + 1]).unwrap_err(),
            KeyError::TooLong {
                len: KEY_MAX + 1,
                max: KEY_MAX
            }
        );
        let full = ByteKey::new(&[7; KEY_MAX]).unwrap();
        assert_eq!(full.as_bytes(), &[7; KEY_MAX]);
        assert_ne!(ByteKey::new(b"a").unwrap(), ByteKey::new(b"a\0").unwrap());
        assert_eq!(ByteKey::new(b"ab").unwrap(), ByteKey::new(b"ab").unwrap());
    }

    /// A hasher that sends every key to one bucket: equality alone must keep keys apart.
    #[derive(Default)]
    struct Collide;

    impl Hasher for Collide {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, _: &[u8]) {}
    }

    #[test]
    fn colliding_hashes_never_merge_two_keys() {
        let build = std::hash::BuildHasherDefault::<Collide>::default();
        let mut map = std::collections::HashMap::with_hasher(build);
        let a = HandoffKey::new(b"ch", 2, 10, 3, b"tag-1", 8).unwrap();
        let b = HandoffKey::new(b"ch", 2, 10, 3, b"tag-1", 9).unwrap();
        // Even with the stored hashes forced equal, the full tuples differ.
        let (mut a2, mut b2) = (a, b);
        a2.hash = 7;
        b2.hash = 7;
        assert_ne!(a2, b2);
        map.insert(a2, 1);
        map.insert(b2, 2);
        assert_eq!(map.len(), 2);
        assert_eq!((map[&a2], map[&b2]), (1, 2));
        let mut x = ByteKey::new(b"x").unwrap();
        let mut y = ByteKey::new(b"y").unwrap();
        x.hash = 7;
        y.hash = 7;
        assert_ne!(x, y);
    }

    #[test]
    fn handoff_keys_differ_in_every_field() {
        let base = HandoffKey::new(b"ch", 2, 10, 3, b"tag-1", 8).unwrap();
        let variants = [
            HandoffKey::new(b"ch2", 2, 10, 3, b"tag-1", 8).unwrap(),
            HandoffKey::new(b"ch", 1, 10, 3, b"tag-1", 8).unwrap(),
            HandoffKey::new(b"ch", 2, 11, 3, b"tag-1", 8).unwrap(),
            HandoffKey::new(b"ch", 2, 10, 4, b"tag-1", 8).unwrap(),
            HandoffKey::new(b"ch", 2, 10, 3, b"tag-2", 8).unwrap(),
            HandoffKey::new(b"ch", 2, 10, 3, b"tag-1", 9).unwrap(),
            HandoffKey::new(b"ch", 2, 10, 3, b"", 8).unwrap(),
        ];
        let mut set = HashSet::new();
        set.insert(base);
        for v in variants {
            assert_ne!(v, base);
            assert!(set.insert(v));
        }
        assert_eq!(base.tag_key(), b"tag-1");
        assert_eq!(
            HandoffKey::new(b"", 1, 1, 1, b"", 1).unwrap_err(),
            KeyError::Empty
        );
        assert!(HandoffKey::new(&[1; CHANNEL_ID_MAX + 1], 1, 1, 1, b"", 1).is_err());
        assert!(HandoffKey::new(b"c", 1, 1, 1, &[1; TAG_KEY_MAX + 1], 1).is_err());
    }
}
