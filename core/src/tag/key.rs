//! Tag keys: one per tag incarnation.

use std::hash::{BuildHasher, Hasher};

use crate::sync::{AtomicU64, Ordering};

/// Makes tag keys. Keys must differ between incarnations (and between channels): a follower
/// fences on the key, so a reused key would let an old incarnation's entry be hit.
pub trait TagKeys: Send + Sync {
    /// A key never returned before.
    fn next_key(&self) -> Box<str>;
}

/// The default: 16 random bytes as 32 lowercase hex characters, as upstream makes them.
///
/// The bytes come from two SipHash outputs of a per-generator random seed (std's
/// `RandomState`, seeded by the OS) over a counter: unique and unpredictable to other nodes,
/// not a secret.
#[derive(Debug)]
pub struct RandomTagKeys {
    seed: std::collections::hash_map::RandomState,
    counter: AtomicU64,
}

impl Default for RandomTagKeys {
    fn default() -> Self {
        Self {
            seed: std::collections::hash_map::RandomState::new(),
            counter: AtomicU64::new(0),
        }
    }
}

impl TagKeys for RandomTagKeys {
    fn next_key(&self) -> Box<str> {
        // Ordering: Relaxed; only uniqueness of the count matters.
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let mut out = String::with_capacity(32);
        for lane in 0..2u64 {
            let mut h = self.seed.build_hasher();
            h.write_u64(n);
            h.write_u64(lane);
            for b in h.finish().to_be_bytes() {
                out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
                out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
            }
        }
        out.into_boxed_str()
    }
}

/// Keys `<prefix>-1`, `<prefix>-2`, …: upstream's tests name keys this way (`leader-a-1`).
#[derive(Debug)]
pub struct SequentialTagKeys {
    prefix: Box<str>,
    counter: AtomicU64,
}

impl SequentialTagKeys {
    /// Keys starting at `<prefix>-1`.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.into(),
            counter: AtomicU64::new(0),
        }
    }
}

impl TagKeys for SequentialTagKeys {
    fn next_key(&self) -> Box<str> {
        // Ordering: Relaxed; only uniqueness of the count matters.
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}-{n}", self.prefix).into_boxed_str()
    }
}

/// Keys from a host function (the ABI's callback, a test's script).
pub struct FnTagKeys<F>(pub F);

impl<F: Fn() -> Box<str> + Send + Sync> TagKeys for FnTagKeys<F> {
    fn next_key(&self) -> Box<str> {
        (self.0)()
    }
}

#[cfg(all(test, not(wkcore_loom)))]
mod tests {
    use super::*;

    #[test]
    fn random_keys_are_32_hex_and_distinct() {
        let keys = RandomTagKeys::default();
        let a = keys.next_key();
        let b = keys.next_key();
        assert_eq!(a.len(), 32);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
        assert_ne!(RandomTagKeys::default().next_key(), a);
    }

    #[test]
    fn sequential_keys_count_from_one() {
        let keys = SequentialTagKeys::new("leader-a");
        assert_eq!(&*keys.next_key(), "leader-a-1");
        assert_eq!(&*keys.next_key(), "leader-a-2");
    }
}
