//! Shared-subscription topics: build `$share/{group}/{filter}`, and split one back into its
//! group and the real topic filter.
//!
//! An MQTT shared subscription (`$share/{group}/{filter}`) delivers each message of `filter` to
//! one member of `group`, which is how several replicas of a service consume one stream without
//! each handling every message. The broker owns that delivery; the trap this module exists for
//! is on the host's side: an ACL check must match the **real filter**, not the whole
//! `$share/...` string. An ACL rule `uplink/#` does not match the text `$share/workers/uplink/#`
//! (its first level is `$share`), so a host that checks the full string refuses every member of
//! the group, and nothing reports it: the subscriptions are refused (or silently granted
//! nothing) and the messages simply never arrive. [`split`] (or [`acl_filter`]) gives the filter
//! to check, and refuses malformed forms loudly instead of letting them reach the ACL.
//!
//! # The forms
//!
//! A topic whose first level is exactly `$share` is a shared subscription, and must be
//! `$share/{group}/{filter}`:
//!
//! - `group` is at least one byte and holds none of `/`, `+`, `#` (MQTT 5, 4.8.2);
//! - `filter` is a valid topic filter: not empty; `+` and `#` only as a whole level; `#` only as
//!   the last level; and not itself a shared subscription (its first level is not `$share`), so
//!   one split always yields the filter to match.
//!
//! Any other topic is a plain filter, checked by the same filter rules. No string holds U+0000,
//! and a whole topic is at most [`SHARE_TOPIC_MAX`] bytes (an MQTT string's limit). So `$share`,
//! `$share/`, `$share/g`, `$share//f` and `$share/g/` are all refused; `$sharex/f` and `a/$share`
//! are plain filters.
//!
//! Everything here is a pure function of its arguments; [`split`] borrows from its input and
//! allocates nothing.

use std::fmt;

/// The first level that makes a topic a shared subscription.
pub const SHARE_LEVEL: &str = "$share";
/// What every shared-subscription topic starts with: [`SHARE_LEVEL`] and its separator.
pub const SHARE_PREFIX: &str = "$share/";
/// The longest topic, shared or plain, in bytes: an MQTT UTF-8 string's limit.
pub const SHARE_TOPIC_MAX: usize = 65535;

/// Why a group, a filter or a topic was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShareError {
    /// The group is empty (`$share//f`, `$share/`, `$share`).
    EmptyGroup,
    /// The group holds `/`, `+`, `#` or U+0000.
    InvalidGroup,
    /// There is no filter after the group (`$share/g`, `$share/g/`), or a plain topic is empty.
    EmptyFilter,
    /// The filter breaks the topic-filter rules: a `+` or `#` that is not a whole level, a `#`
    /// before the last level, or a U+0000.
    InvalidFilter,
    /// The filter is itself a shared subscription (`$share/g/$share/h/f`).
    NestedShare,
    /// The topic would be, or is, longer than [`SHARE_TOPIC_MAX`] bytes.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
}

impl ShareError {
    /// True for the errors that are about the group (the others are about the filter or the
    /// whole topic).
    pub fn is_group(&self) -> bool {
        matches!(self, ShareError::EmptyGroup | ShareError::InvalidGroup)
    }
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::EmptyGroup => f.write_str("empty share group"),
            ShareError::InvalidGroup => f.write_str("share group holds '/', '+', '#' or U+0000"),
            ShareError::EmptyFilter => f.write_str("empty topic filter"),
            ShareError::InvalidFilter => f.write_str("malformed topic filter"),
            ShareError::NestedShare => f.write_str("topic filter is itself a shared subscription"),
            ShareError::TooLong { len } => {
                write!(f, "topic of {len} bytes (at most {SHARE_TOPIC_MAX})")
            }
        }
    }
}

impl std::error::Error for ShareError {}

/// A topic split for ACL matching: the group when it is a shared subscription, and the filter
/// to match in every case. Both borrow from the topic given to [`split`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitTopic<'a> {
    /// The share group, `None` for a plain filter.
    pub group: Option<&'a str>,
    /// The real topic filter: what an ACL must match.
    pub filter: &'a str,
}

impl SplitTopic<'_> {
    /// True for a shared subscription.
    pub fn is_shared(&self) -> bool {
        self.group.is_some()
    }
}

/// Checks a share group: non-empty, without `/`, `+`, `#` or U+0000.
pub fn check_group(group: &str) -> Result<(), ShareError> {
    if group.is_empty() {
        return Err(ShareError::EmptyGroup);
    }
    if group.bytes().any(|b| matches!(b, b'/' | b'+' | b'#' | 0)) {
        return Err(ShareError::InvalidGroup);
    }
    Ok(())
}

/// Checks a topic filter that is to be matched as is: non-empty, wildcards only as whole levels
/// (`#` last), no U+0000, and not a shared subscription itself.
pub fn check_filter(filter: &str) -> Result<(), ShareError> {
    if filter.is_empty() {
        return Err(ShareError::EmptyFilter);
    }
    let mut levels = filter.split('/').peekable();
    if levels.peek() == Some(&SHARE_LEVEL) {
        return Err(ShareError::NestedShare);
    }
    while let Some(level) = levels.next() {
        let last = levels.peek().is_none();
        let ok = match level {
            "+" => true,
            "#" => last,
            _ => !level.bytes().any(|b| matches!(b, b'+' | b'#' | 0)),
        };
        if !ok {
            return Err(ShareError::InvalidFilter);
        }
    }
    Ok(())
}

/// The length of `$share/{group}/{filter}`, after checking both parts; what [`build`] would
/// return is exactly this long. Lets a caller size (or refuse) a buffer before writing.
pub fn build_len(group: &str, filter: &str) -> Result<usize, ShareError> {
    check_group(group)?;
    check_filter(filter)?;
    // Both lengths are those of live strings, so the sum cannot overflow.
    let len = SHARE_PREFIX.len() + group.len() + 1 + filter.len();
    if len > SHARE_TOPIC_MAX {
        return Err(ShareError::TooLong { len });
    }
    Ok(len)
}

/// Builds `$share/{group}/{filter}`: the topic a member of `group` subscribes to so that each
/// message of `filter` goes to one member. Refuses a malformed group or filter (the same rules
/// [`split`] applies, so `split(&build(g, f)?)` gives back `g` and `f`).
pub fn build(group: &str, filter: &str) -> Result<String, ShareError> {
    let len = build_len(group, filter)?;
    let mut topic = String::with_capacity(len);
    topic.push_str(SHARE_PREFIX);
    topic.push_str(group);
    topic.push('/');
    topic.push_str(filter);
    Ok(topic)
}

/// Splits a subscription topic into its share group (if it is a shared subscription) and the
/// real filter, borrowing both from `topic`. A plain filter comes back whole with no group.
/// Malformed forms are refused: `$share`, `$share/` and `$share//f` (no group), `$share/g` and
/// `$share/g/` (no filter), a group or filter that breaks its rules, a nested share, a topic
/// longer than [`SHARE_TOPIC_MAX`].
pub fn split(topic: &str) -> Result<SplitTopic<'_>, ShareError> {
    if topic.len() > SHARE_TOPIC_MAX {
        return Err(ShareError::TooLong { len: topic.len() });
    }
    let (first, rest) = match topic.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (topic, None),
    };
    if first != SHARE_LEVEL {
        check_filter(topic)?;
        return Ok(SplitTopic {
            group: None,
            filter: topic,
        });
    }
    // `$share` alone, or `$share/` (`rest` empty): no group.
    let rest = rest.unwrap_or("");
    let (group, filter) = match rest.split_once('/') {
        Some((group, filter)) => (group, filter),
        None => (rest, ""),
    };
    check_group(group)?;
    check_filter(filter)?;
    Ok(SplitTopic {
        group: Some(group),
        filter,
    })
}

/// The filter an ACL must match for subscription `topic`: the real filter of a shared
/// subscription, the topic itself otherwise ([`split`]'s `filter`).
pub fn acl_filter(topic: &str) -> Result<&str, ShareError> {
    split(topic).map(|s| s.filter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_splits_back() {
        let t = build("workers", "uplink/+/data").unwrap();
        assert_eq!(t, "$share/workers/uplink/+/data");
        assert_eq!(build_len("workers", "uplink/+/data"), Ok(t.len()));
        let s = split(&t).unwrap();
        assert_eq!(s.group, Some("workers"));
        assert_eq!(s.filter, "uplink/+/data");
        assert!(s.is_shared());
        for (g, f) in [
            ("g", "#"),
            ("g", "+"),
            ("g", "a"),
            ("g-1.x", "$SYS/#"),
            ("日本", "a/b/"),
        ] {
            let t = build(g, f).unwrap();
            assert_eq!(
                split(&t),
                Ok(SplitTopic {
                    group: Some(g),
                    filter: f
                }),
                "{t}"
            );
        }
    }

    #[test]
    fn split_borrows_from_its_input() {
        let topic = String::from("$share/g/a/b");
        let s = split(&topic).unwrap();
        let base = topic.as_ptr() as usize;
        assert_eq!(s.group.unwrap().as_ptr() as usize, base + 7);
        assert_eq!(s.filter.as_ptr() as usize, base + 9);
    }

    #[test]
    fn plain_filters_come_back_whole() {
        for t in [
            "a",
            "a/b",
            "#",
            "+",
            "a/+/b",
            "a/#",
            "/",
            "a//b",
            "$SYS/x",
            "$sharex/g/f",
            "a/$share/g",
            "$shar",
        ] {
            assert_eq!(
                split(t),
                Ok(SplitTopic {
                    group: None,
                    filter: t
                }),
                "{t}"
            );
            assert!(!split(t).unwrap().is_shared());
            assert_eq!(acl_filter(t), Ok(t));
        }
    }

    #[test]
    fn malformed_forms_are_refused() {
        let cases = [
            ("$share", ShareError::EmptyGroup),
            ("$share/", ShareError::EmptyGroup),
            ("$share//f", ShareError::EmptyGroup),
            ("$share//", ShareError::EmptyGroup),
            ("$share/g", ShareError::EmptyFilter),
            ("$share/g/", ShareError::EmptyFilter),
            ("$share/g+/f", ShareError::InvalidGroup),
            ("$share/#/f", ShareError::InvalidGroup),
            ("$share/g\0/f", ShareError::InvalidGroup),
            ("$share/g/a/#/b", ShareError::InvalidFilter),
            ("$share/g/a+", ShareError::InvalidFilter),
            ("$share/g/a/b#", ShareError::InvalidFilter),
            ("$share/g/a\0", ShareError::InvalidFilter),
            ("$share/g/$share/h/f", ShareError::NestedShare),
            ("$share/g/$share", ShareError::NestedShare),
            ("", ShareError::EmptyFilter),
            ("a/#/b", ShareError::InvalidFilter),
            ("a+/b", ShareError::InvalidFilter),
            ("##", ShareError::InvalidFilter),
        ];
        for (t, e) in cases {
            assert_eq!(split(t), Err(e), "{t:?}");
            assert_eq!(acl_filter(t), Err(e), "{t:?}");
        }
    }

    #[test]
    fn build_refuses_what_split_refuses() {
        assert_eq!(build("", "f"), Err(ShareError::EmptyGroup));
        assert_eq!(build("a/b", "f"), Err(ShareError::InvalidGroup));
        assert_eq!(build("g", ""), Err(ShareError::EmptyFilter));
        assert_eq!(build("g", "a/#/b"), Err(ShareError::InvalidFilter));
        assert_eq!(build("g", "$share/h/f"), Err(ShareError::NestedShare));
        assert!(ShareError::EmptyGroup.is_group() && ShareError::InvalidGroup.is_group());
        assert!(!ShareError::EmptyFilter.is_group() && !ShareError::NestedShare.is_group());
        // The group is checked first.
        assert_eq!(build("", ""), Err(ShareError::EmptyGroup));
    }

    #[test]
    fn the_length_bound_is_exact() {
        let room = SHARE_TOPIC_MAX - SHARE_PREFIX.len() - 2;
        let fits = "f".repeat(room);
        assert_eq!(build_len("g", &fits), Ok(SHARE_TOPIC_MAX));
        assert_eq!(
            split(&build("g", &fits).unwrap()).unwrap().filter.len(),
            room
        );
        let over = "f".repeat(room + 1);
        assert_eq!(
            build("g", &over),
            Err(ShareError::TooLong {
                len: SHARE_TOPIC_MAX + 1
            })
        );
        let plain = "p".repeat(SHARE_TOPIC_MAX + 1);
        assert_eq!(
            split(&plain),
            Err(ShareError::TooLong {
                len: SHARE_TOPIC_MAX + 1
            })
        );
        assert!(split(&plain[1..]).is_ok());
    }

    #[test]
    fn errors_have_texts() {
        assert_eq!(ShareError::EmptyGroup.to_string(), "empty share group");
        assert!(ShareError::TooLong { len: 70000 }
            .to_string()
            .contains("70000"));
    }

    /// An ACL rule (a filter, possibly with wildcards) covers a subscription filter when the
    /// subscription, read as a topic, matches the rule: the usual broker check.
    fn acl_allows(rule: &str, subscription: &str) -> bool {
        let mut r = rule.split('/');
        let mut s = subscription.split('/');
        loop {
            match (r.next(), s.next()) {
                (Some("#"), _) => return true,
                (Some("+"), Some(_)) => {}
                (Some(a), Some(b)) if a == b => {}
                (None, None) => return true,
                _ => return false,
            }
        }
    }

    /// The silent refusal: every replica of a service subscribes to the same shared
    /// subscription, and the ACL allows the service its filter. A host that matches the ACL on
    /// the full `$share/...` string refuses every member, so the group receives nothing and no
    /// error names the cause; matching the real filter from `split` grants them all.
    #[test]
    fn matching_the_full_string_refuses_the_whole_group_silently() {
        let rules = ["uplink/#", "devices/+/telemetry"];
        let allowed = |subscription: &str| rules.iter().any(|r| acl_allows(r, subscription));
        let group = ["replica-a", "replica-b", "replica-c"];
        for filter in ["uplink/#", "uplink/eu/+", "devices/d1/telemetry"] {
            assert!(allowed(filter), "the ACL allows {filter} itself");
            let topic = build("workers", filter).unwrap();
            let mut refused_full = 0;
            let mut granted_split = 0;
            for _member in group {
                // The trap: the whole string's first level is `$share`, which no rule covers.
                if !allowed(&topic) {
                    refused_full += 1;
                }
                if allowed(acl_filter(&topic).unwrap()) {
                    granted_split += 1;
                }
            }
            assert_eq!(refused_full, group.len(), "every member refused: {topic}");
            assert_eq!(granted_split, group.len(), "every member granted: {topic}");
        }
        // And a rule the service does not hold still refuses the real filter: splitting widens
        // nothing.
        let topic = build("workers", "billing/#").unwrap();
        assert!(!allowed(acl_filter(&topic).unwrap()));
        // A wildcard rule such as `#` would match the full string too, which is why the trap
        // hides in tests that use broad rules: it only bites with the narrow rules production
        // uses.
        assert!(acl_allows("#", &build("workers", "uplink/#").unwrap()));
    }
}
