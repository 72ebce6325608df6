//! The anchors (`anchor_*`) and the keyed words (`flip`, `counter_increment`, `trigger_*`,
//! `window_increment`, `word_get`) on the database.

use super::ledger::check_name;
use super::store::{col, cutoff, dec, enc, enc_time, request_id, Decided, Store};
use crate::contract::{
    check_key, check_time, check_window, AnchorStore, AnchorTableError, CounterStore, Error, Fire,
    FlipStore, TriggerError, TriggerStore, WindowStore, RUN_MAX,
};

/// An anchor table on the database: the anchors of one named table, shared by every replica.
/// The table is not bounded (it is never full).
#[derive(Debug)]
pub struct PgAnchors {
    s: Store,
    name: String,
}

/// A flip store on the database; a key without a row is in the initial state.
#[derive(Debug)]
pub struct PgFlips {
    s: Store,
    name: String,
    initial: u64,
}

/// A counter store on the database.
#[derive(Debug)]
pub struct PgCounters {
    s: Store,
    name: String,
}

/// An exclusive-trigger store on the database.
#[derive(Debug)]
pub struct PgTriggers {
    s: Store,
    name: String,
}

/// A windowed-counter store on the database.
#[derive(Debug)]
pub struct PgWindows {
    s: Store,
    name: String,
}

impl Store {
    /// The anchor table called `name`; `capacity` is checked as in memory, not a bound.
    pub fn anchors(&self, name: &str, capacity: usize) -> Result<PgAnchors, Error> {
        if capacity == 0 || capacity > wkcore::coord::ANCHOR_TABLE_CAPACITY_MAX {
            return Err(Error::InvalidCapacity);
        }
        check_name(name)?;
        Ok(PgAnchors {
            s: self.clone(),
            name: format!("anchors:{name}"),
        })
    }

    /// The flip store called `name`; its keys start in `initial`.
    pub fn flips(&self, name: &str, initial: u64) -> Result<PgFlips, Error> {
        check_name(name)?;
        Ok(PgFlips {
            s: self.clone(),
            name: format!("flip:{name}"),
            initial,
        })
    }

    /// The counter store called `name`.
    pub fn counters(&self, name: &str) -> Result<PgCounters, Error> {
        check_name(name)?;
        Ok(PgCounters {
            s: self.clone(),
            name: format!("counter:{name}"),
        })
    }

    /// The exclusive-trigger store called `name`.
    pub fn triggers(&self, name: &str) -> Result<PgTriggers, Error> {
        check_name(name)?;
        Ok(PgTriggers {
            s: self.clone(),
            name: format!("trigger:{name}"),
        })
    }

    /// The windowed-counter store called `name`.
    pub fn windows(&self, name: &str) -> Result<PgWindows, Error> {
        check_name(name)?;
        Ok(PgWindows {
            s: self.clone(),
            name: format!("window:{name}"),
        })
    }

    /// A word's row: `None` when the key has none.
    async fn word(&self, scope: &str, key: &[u8]) -> Result<Option<(i64, i64)>, Error> {
        Ok(self
            .read("word_get", &[&scope, &key], |rows| match rows.first() {
                None => Ok(None),
                Some(r) => Ok(Some((col(r, 0)?, col(r, 1)?))),
            })
            .await?)
    }
}

fn bools(rows: &[tokio_postgres::Row]) -> Result<Vec<bool>, String> {
    let Some(r) = rows.first() else {
        return Err("no row".into());
    };
    (0..r.len()).map(|i| col(r, i)).collect()
}

impl AnchorStore for PgAnchors {
    async fn insert(&self, id: u64, value: Option<u64>) -> Result<(), Error> {
        if let Some(v) = value {
            check_time(v)?;
        }
        let (id, v) = (enc(id), value.and_then(enc_time));
        let got = self
            .s
            .decide("anchor_insert", request_id(), &[&self.name, &id, &v], bools)
            .await?;
        match got {
            Decided::Logged(_) => Ok(()),
            Decided::Rows(b) if b.first() == Some(&true) => Ok(()),
            Decided::Rows(_) => Err(Error::Anchor(AnchorTableError::Exists)),
        }
    }

    async fn remove(&self, id: u64) -> Result<(), Error> {
        let id = enc(id);
        let got = self
            .s
            .decide("anchor_remove", request_id(), &[&self.name, &id], bools)
            .await?;
        match got {
            Decided::Logged(_) => Ok(()),
            Decided::Rows(b) if b.first() == Some(&true) => Ok(()),
            Decided::Rows(_) => Err(Error::Anchor(AnchorTableError::NotFound)),
        }
    }

    async fn try_fire(&self, id: u64, now: u64, period: u64) -> Result<Fire, Error> {
        check_time(now)?;
        let p = period.max(1);
        let (id_e, now_e, c) = (enc(id), enc(now), cutoff(now, p));
        let got = self
            .s
            .decide(
                "anchor_try_fire",
                request_id(),
                &[&self.name, &id_e, &now_e, &c],
                |rows| {
                    let Some(r) = rows.first() else {
                        return Err("no row".into());
                    };
                    let present: bool = col(r, 0)?;
                    let cur: Option<i64> = col(r, 1)?;
                    let won: bool = col(r, 2)?;
                    let prev: Option<i64> = col(r, 3)?;
                    Ok((present, cur, won, prev))
                },
            )
            .await?;
        let (present, cur, won, prev) = match got {
            Decided::Logged(v) => {
                return Ok(match v.first() {
                    None => Fire::AnchoredFirstSeen,
                    Some(&p) => Fire::Fired { previous: dec(p) },
                })
            }
            Decided::Rows(r) => r,
        };
        Ok(match (won, prev) {
            (true, None) => Fire::AnchoredFirstSeen,
            (true, Some(p)) => Fire::Fired { previous: dec(p) },
            _ if !present => return Err(Error::Anchor(AnchorTableError::NotFound)),
            _ => match cur {
                Some(c) if now < dec(c).saturating_add(p) => Fire::NotDue {
                    due_at: dec(c).saturating_add(p),
                },
                _ => Fire::Lost,
            },
        })
    }

    async fn advance(&self, id: u64, expected: u64, next: u64) -> Result<bool, Error> {
        check_time(next)?;
        let want = (expected != u64::MAX && next != expected).then(|| enc(expected));
        let (id, nx) = (enc(id), enc(next));
        let got = self
            .s
            .decide(
                "anchor_advance",
                request_id(),
                &[&self.name, &id, &want, &nx],
                bools,
            )
            .await?;
        present_won(got)
    }

    async fn anchor_unset(&self, id: u64, now: u64) -> Result<bool, Error> {
        check_time(now)?;
        let (id, now_e) = (enc(id), enc(now));
        let got = self
            .s
            .decide(
                "anchor_unset",
                request_id(),
                &[&self.name, &id, &now_e],
                bools,
            )
            .await?;
        present_won(got)
    }

    async fn get(&self, id: u64) -> Result<Option<u64>, Error> {
        let id = enc(id);
        let got = self
            .s
            .read("anchor_get", &[&self.name, &id], |rows| {
                match rows.first() {
                    None => Ok(None),
                    Some(r) => Ok(Some(col::<Option<i64>>(r, 0)?)),
                }
            })
            .await?;
        match got {
            None => Err(Error::Anchor(AnchorTableError::NotFound)),
            Some(v) => Ok(v.map(dec)),
        }
    }

    async fn len(&self) -> Result<usize, Error> {
        Ok(self
            .s
            .read("anchor_len", &[&self.name], |rows| {
                rows.first().map_or(Ok(0), |r| col::<i64>(r, 0))
            })
            .await? as usize)
    }
}

/// The answer of `anchor_advance` and `anchor_unset`: (present, won).
fn present_won(got: Decided<Vec<bool>>) -> Result<bool, Error> {
    match got {
        Decided::Logged(_) => Ok(true),
        Decided::Rows(b) => match (b.first(), b.get(1)) {
            (Some(false), _) => Err(Error::Anchor(AnchorTableError::NotFound)),
            (_, Some(&won)) => Ok(won),
            _ => Ok(false),
        },
    }
}

impl FlipStore for PgFlips {
    async fn flip(&self, key: &[u8], from: u64, to: u64) -> Result<bool, Error> {
        check_key(key)?;
        if from == to {
            return Ok(false);
        }
        let (f, t, i) = (enc(from), enc(to), enc(self.initial));
        let got = self
            .s
            .decide("flip", request_id(), &[&self.name, &key, &f, &t, &i], bools)
            .await?;
        Ok(match got {
            Decided::Logged(_) => true,
            Decided::Rows(b) => b.first() == Some(&true),
        })
    }

    async fn get(&self, key: &[u8]) -> Result<u64, Error> {
        check_key(key)?;
        Ok(self
            .s
            .word(&self.name, key)
            .await?
            .map_or(self.initial, |(a, _)| dec(a)))
    }
}

impl CounterStore for PgCounters {
    async fn increment(&self, key: &[u8]) -> Result<u64, Error> {
        check_key(key)?;
        let got = self
            .s
            .decide(
                "counter_increment",
                request_id(),
                &[&self.name, &key],
                |rows| {
                    rows.first()
                        .map_or(Err("no row".into()), |r| col::<i64>(r, 0))
                },
            )
            .await?;
        Ok(dec(match got {
            Decided::Rows(a) => a,
            Decided::Logged(v) => v.first().copied().unwrap_or(enc(0)),
        }))
    }

    async fn get(&self, key: &[u8]) -> Result<u64, Error> {
        check_key(key)?;
        Ok(self
            .s
            .word(&self.name, key)
            .await?
            .map_or(0, |(a, _)| dec(a)))
    }
}

/// Why a trigger whose word is (`a`, `b`) refuses to start a run, if it does.
fn refused(a: i64, b: i64) -> Option<TriggerError> {
    if b == 1 {
        Some(TriggerError::Busy { run: dec(a) })
    } else if dec(a) >= RUN_MAX {
        Some(TriggerError::Exhausted)
    } else {
        None
    }
}

impl TriggerStore for PgTriggers {
    async fn trigger(&self, key: &[u8]) -> Result<u64, Error> {
        check_key(key)?;
        let max = enc(RUN_MAX);
        let got = self
            .s
            .decide(
                "trigger_start",
                request_id(),
                &[&self.name, &key, &max],
                |rows| {
                    let Some(r) = rows.first() else {
                        return Err("no row".into());
                    };
                    let run: Option<i64> = col(r, 0)?;
                    let cur: Option<i64> = col(r, 1)?;
                    let active: Option<i64> = col(r, 2)?;
                    Ok((run, cur, active))
                },
            )
            .await?;
        let (cur, active) = match got {
            Decided::Logged(v) => return Ok(dec(v.first().copied().unwrap_or(enc(1)))),
            Decided::Rows((Some(run), _, _)) => return Ok(dec(run)),
            Decided::Rows((None, cur, active)) => (cur, active),
        };
        if let (Some(a), Some(b)) = (cur, active) {
            if let Some(e) = refused(a, b) {
                return Err(Error::Trigger(e));
            }
        }
        // A concurrent trigger won after this statement's snapshot: read it.
        match self.s.word(&self.name, key).await? {
            Some((a, b)) => Err(Error::Trigger(
                refused(a, b).unwrap_or(TriggerError::Busy { run: dec(a) }),
            )),
            None => Err(Error::Trigger(TriggerError::Busy { run: 1 })),
        }
    }

    async fn finish(&self, key: &[u8], run: u64) -> Result<bool, Error> {
        check_key(key)?;
        if run == 0 || run > RUN_MAX {
            return Ok(false);
        }
        let r = enc(run);
        let got = self
            .s
            .decide(
                "trigger_finish",
                request_id(),
                &[&self.name, &key, &r],
                bools,
            )
            .await?;
        Ok(match got {
            Decided::Logged(_) => true,
            Decided::Rows(b) => b.first() == Some(&true),
        })
    }

    async fn active(&self, key: &[u8]) -> Result<Option<u64>, Error> {
        check_key(key)?;
        Ok(match self.s.word(&self.name, key).await? {
            Some((a, 1)) => Some(dec(a)),
            _ => None,
        })
    }

    async fn last_run(&self, key: &[u8]) -> Result<u64, Error> {
        check_key(key)?;
        Ok(self
            .s
            .word(&self.name, key)
            .await?
            .map_or(0, |(a, _)| dec(a)))
    }
}

impl WindowStore for PgWindows {
    async fn increment(&self, key: &[u8], now: u64, window: u64) -> Result<u32, Error> {
        check_key(key)?;
        check_window(now, window)?;
        let (n, end) = (enc(now), enc(now + window));
        let got = self
            .s
            .decide(
                "window_increment",
                request_id(),
                &[&self.name, &key, &n, &end],
                |rows| {
                    rows.first()
                        .map_or(Err("no row".into()), |r| col::<i64>(r, 0))
                },
            )
            .await?;
        Ok(match got {
            Decided::Rows(b) => b,
            Decided::Logged(v) => v.first().copied().unwrap_or(1),
        } as u32)
    }

    async fn count(&self, key: &[u8], now: u64) -> Result<u32, Error> {
        check_key(key)?;
        Ok(match self.s.word(&self.name, key).await? {
            Some((a, b)) if enc(now) < a => b as u32,
            _ => 0,
        })
    }
}
