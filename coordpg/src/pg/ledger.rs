//! The ledgers and hand-offs on the database (the `ledger_*` statements).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_postgres::Row;
use wkcore::coord::LedgerConfig;

use super::store::{col, cutoff, dec, dec_time, enc, enc_time, request_id, Decided, Store};
use crate::contract::{
    check_batch, check_batch_len, check_key, check_time, Batch, Counts, Decision, Error,
    HandoffKey, HandoffStore, LedgerStore, NewRecord, Outcome, Page, RecordState, RecordView,
    Verdict, BATCH_MAX, KEY_MAX,
};

#[derive(Debug, Default)]
struct Counters {
    claims_won: AtomicU64,
    claims_lost: AtomicU64,
    fin_won: AtomicU64,
    fin_dup: AtomicU64,
    timeouts: AtomicU64,
    reclaimed: AtomicU64,
}

impl Counters {
    fn add(c: &AtomicU64, n: u64) {
        // Ordering: Relaxed; counters order nothing.
        c.fetch_add(n, Ordering::Relaxed);
    }

    fn get(&self) -> Counts {
        // Ordering: Relaxed; as in `add`.
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Counts {
            claims_won: l(&self.claims_won),
            claims_lost: l(&self.claims_lost),
            finalizations_won: l(&self.fin_won),
            finalizations_duplicate: l(&self.fin_dup),
            reconciled_timeouts: l(&self.timeouts),
            rejected_full: 0,
            reclaimed: l(&self.reclaimed),
        }
    }

    fn claim(&self, d: &Decision) {
        if d.won() {
            Self::add(&self.claims_won, 1);
        } else {
            Self::add(&self.claims_lost, 1);
        }
    }

    fn finalize(&self, d: &Decision) {
        match d.result {
            Verdict::Won => Self::add(&self.fin_won, 1),
            Verdict::Duplicate => Self::add(&self.fin_dup, 1),
            _ => {}
        }
    }
}

/// A ledger on the database: the records of one named ledger, shared by every replica that
/// opens the same name. Counts are this handle's decisions (every replica counts its own).
#[derive(Debug)]
pub struct PgLedger {
    s: Store,
    name: String,
    retention: u64,
    handoff: bool,
    counts: Counters,
}

/// The state of a record as its `state` and `outcome` columns say.
fn state_of(st: i16, outcome: i32) -> Result<RecordState, String> {
    Ok(match st {
        1 => RecordState::Placed,
        2 => RecordState::Claimed,
        3 => RecordState::Finalized(outcome_of(outcome)?),
        _ => return Err(format!("record state {st}")),
    })
}

fn outcome_of(code: i32) -> Result<Outcome, String> {
    u16::try_from(code)
        .ok()
        .and_then(Outcome::from_code)
        .ok_or_else(|| format!("outcome {code}"))
}

/// The decision of a caller that found a record in state `st`.
fn found(r: Verdict, st: i16, outcome: i32) -> Result<Decision, String> {
    Ok(Decision::new(r, Some(state_of(st, outcome)?)))
}

/// An insert's decision on a record it found: lost while PENDING, a duplicate once terminal.
fn exists(st: i16, outcome: i32) -> Result<Decision, String> {
    found(
        if st == 3 {
            Verdict::Duplicate
        } else {
            Verdict::Lost
        },
        st,
        outcome,
    )
}

const PLACED: Decision = Decision::new(Verdict::Won, Some(RecordState::Placed));
const NOT_FOUND: Decision = Decision::new(Verdict::NotFound, None);

fn mismatch(e: String) -> Error {
    Error::Store(crate::contract::StoreError {
        kind: crate::contract::StoreErrorKind::SchemaMismatch,
        statement: "decode",
        request_id: 0,
        uncertain: false,
        source: Some(e.into()),
    })
}

/// Splits the indexes of `keys` into passes of distinct keys: the first occurrence of each key
/// in the first pass, the second in the second, ...
fn passes<K: AsRef<[u8]>>(keys: &[K]) -> Vec<Vec<usize>> {
    let mut seen: HashMap<&[u8], usize> = HashMap::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let n = seen.entry(k.as_ref()).or_insert(0);
        if *n == out.len() {
            out.push(Vec::new());
        }
        out[*n].push(i);
        *n += 1;
    }
    out
}

/// A record as `ledger_get` reads it.
struct RowView {
    state: i16,
    outcome: i32,
    id: i64,
    runner: i64,
}

impl PgLedger {
    pub(crate) fn new(s: Store, name: String, retention: u64, handoff: bool) -> Self {
        Self {
            s,
            name,
            retention,
            handoff,
            counts: Counters::default(),
        }
    }

    async fn read_row(&self, key: &[u8]) -> Result<Option<(RowView, Row)>, Error> {
        let rows = self
            .s
            .read("ledger_get", &[&self.name, &key], |rows| Ok(rows.to_vec()))
            .await?;
        let Some(r) = rows.into_iter().next() else {
            return Ok(None);
        };
        let v = RowView {
            state: col(&r, 0).map_err(mismatch)?,
            outcome: col(&r, 1).map_err(mismatch)?,
            id: col(&r, 2).map_err(mismatch)?,
            runner: col(&r, 3).map_err(mismatch)?,
        };
        Ok(Some((v, r)))
    }

    pub(crate) async fn insert_key(
        &self,
        key: &[u8],
        record: NewRecord,
        now: u64,
    ) -> Result<Decision, Error> {
        let op = request_id();
        let (id, runner, deadline, now_e) = (
            enc(record.id),
            enc(record.runner),
            enc_time(record.deadline),
            enc(now),
        );
        for attempt in 0.. {
            let got = self
                .s
                .decide(
                    "ledger_insert",
                    op,
                    &[&self.name, &key, &id, &runner, &deadline, &now_e],
                    |rows| {
                        let Some(r) = rows.first() else {
                            return Err("no row".into());
                        };
                        let won: bool = col(r, 0)?;
                        let st: Option<i16> = col(r, 1)?;
                        let oc: Option<i32> = col(r, 2)?;
                        Ok((won, st, oc))
                    },
                )
                .await?;
            match got {
                Decided::Logged(_) | Decided::Rows((true, _, _)) => return Ok(PLACED),
                Decided::Rows((false, Some(st), oc)) => {
                    return exists(st, oc.unwrap_or(0)).map_err(mismatch)
                }
                Decided::Rows((false, None, _)) => {}
            }
            // A concurrent insert won after this statement's snapshot: read it.
            if let Some((r, _)) = self.read_row(key).await? {
                return exists(r.state, r.outcome).map_err(mismatch);
            }
            if attempt >= 2 {
                break;
            }
        }
        Ok(Decision::new(Verdict::Lost, Some(RecordState::Placed)))
    }

    pub(crate) async fn place_keys<K: AsRef<[u8]> + Sync>(
        &self,
        keys: &[K],
        id: u64,
        deadline: u64,
        now: u64,
    ) -> Result<Batch, Error> {
        let mut out = vec![NOT_FOUND; keys.len()];
        let base = request_id();
        let (id, runner, deadline, now_e) = (enc(id), enc(0), enc_time(deadline), enc(now));
        for (n, pass) in passes(keys).into_iter().enumerate() {
            let batch: Vec<&[u8]> = pass.iter().map(|&i| keys[i].as_ref()).collect();
            let op = base.wrapping_add(n as i64); // each pass its own request id
            let got = self
                .s
                .decide(
                    "ledger_place",
                    op,
                    &[&self.name, &batch, &id, &runner, &deadline, &now_e],
                    |rows| {
                        let mut res: Vec<Option<Decision>> = vec![None; batch.len()];
                        for r in rows {
                            let i: i64 = col(r, 0)?;
                            let won: bool = col(r, 1)?;
                            let st: Option<i16> = col(r, 2)?;
                            let oc: Option<i32> = col(r, 3)?;
                            let slot = res
                                .get_mut((i - 1) as usize)
                                .ok_or_else(|| format!("ordinal {i}"))?;
                            *slot = match (won, st) {
                                (true, _) => Some(PLACED),
                                (false, Some(st)) => Some(exists(st, oc.unwrap_or(0))?),
                                // A concurrent insert: read below.
                                (false, None) => None,
                            };
                        }
                        Ok(res)
                    },
                )
                .await?;
            let mut res = match got {
                Decided::Rows(r) => r,
                Decided::Logged(v) => {
                    let mut r = vec![None; batch.len()];
                    for i in v {
                        if let Some(slot) = r.get_mut((i - 1) as usize) {
                            *slot = Some(PLACED);
                        }
                    }
                    r
                }
            };
            self.fill_unknown(&batch, &mut res, exists).await?;
            for (j, &i) in pass.iter().enumerate() {
                out[i] = res[j].unwrap_or(NOT_FOUND);
            }
        }
        Ok(Batch::of(out))
    }

    /// Reads the records of the keys whose decision is still open and decides them with `f`; a
    /// key without a record is not found.
    async fn fill_unknown(
        &self,
        keys: &[&[u8]],
        res: &mut [Option<Decision>],
        f: fn(i16, i32) -> Result<Decision, String>,
    ) -> Result<(), Error> {
        let ask: Vec<&[u8]> = keys
            .iter()
            .zip(res.iter())
            .filter(|(_, d)| d.is_none())
            .map(|(k, _)| *k)
            .collect();
        if ask.is_empty() {
            return Ok(());
        }
        let got = self
            .s
            .read("ledger_states", &[&self.name, &ask], |rows| {
                let mut m: HashMap<Vec<u8>, (i16, i32)> = HashMap::new();
                for r in rows {
                    m.insert(col(r, 0)?, (col(r, 1)?, col(r, 2)?));
                }
                Ok(m)
            })
            .await?;
        for (k, d) in keys.iter().zip(res.iter_mut()) {
            if d.is_none() {
                *d = Some(match got.get(*k) {
                    Some(&(st, oc)) => f(st, oc).map_err(mismatch)?,
                    None => NOT_FOUND,
                });
            }
        }
        Ok(())
    }

    async fn claim_inner(
        &self,
        key: &[u8],
        placeholder: u64,
        request: u64,
        runner: u64,
        now: u64,
    ) -> Result<Decision, Error> {
        let loser = |st: i16, id: i64, oc: i32| -> Result<Option<Decision>, String> {
            Ok(match st {
                2 => Some(Decision::new(Verdict::Lost, Some(RecordState::Claimed))),
                3 => Some(found(Verdict::Duplicate, st, oc)?),
                _ if dec(id) != placeholder => {
                    Some(Decision::new(Verdict::Mismatch, Some(RecordState::Placed)))
                }
                _ => None,
            })
        };
        let op = request_id();
        let (ph, rq, rn, now_e) = (enc(placeholder), enc(request), enc(runner), enc(now));
        let got = self
            .s
            .decide(
                "ledger_claim",
                op,
                &[&self.name, &key, &ph, &rq, &rn, &now_e],
                scan4,
            )
            .await?;
        let won = Decision::new(Verdict::Won, Some(RecordState::Claimed));
        match got {
            Decided::Logged(_) | Decided::Rows((true, ..)) => return Ok(won),
            Decided::Rows((false, None, ..)) => return Ok(NOT_FOUND),
            Decided::Rows((false, Some(st), id, oc)) => {
                if let Some(d) = loser(st, id.unwrap_or(0), oc.unwrap_or(0)).map_err(mismatch)? {
                    return Ok(d);
                }
            }
        }
        // The snapshot showed the claim open: a concurrent transition won.
        match self.read_row(key).await? {
            None => Ok(NOT_FOUND),
            Some((r, _)) => Ok(loser(r.state, r.id, r.outcome)
                .map_err(mismatch)?
                .unwrap_or(Decision::new(Verdict::Lost, Some(RecordState::Claimed)))),
        }
    }

    pub(crate) async fn finalize_key(
        &self,
        key: &[u8],
        outcome: Outcome,
        payload: u64,
        now: u64,
    ) -> Result<Decision, Error> {
        let op = request_id();
        let (oc, pl, now_e) = (i32::from(outcome.code()), enc(payload), enc(now));
        let got = self
            .s
            .decide(
                "ledger_finalize",
                op,
                &[&self.name, &key, &oc, &pl, &now_e],
                |rows| match rows.first() {
                    None => Ok(None),
                    Some(r) => Ok(Some((col::<bool>(r, 0)?, col::<i32>(r, 1)?))),
                },
            )
            .await?;
        let d = match got {
            Decided::Logged(_) | Decided::Rows(Some((true, _))) => {
                Decision::new(Verdict::Won, Some(RecordState::Finalized(outcome)))
            }
            Decided::Rows(None) => return Ok(NOT_FOUND),
            Decided::Rows(Some((false, oc))) => {
                found(Verdict::Duplicate, 3, oc).map_err(mismatch)?
            }
        };
        self.counts.finalize(&d);
        Ok(d)
    }

    async fn finalize_batch_inner(
        &self,
        keys: &[&[u8]],
        payloads: Option<&[u64]>,
        outcome: Outcome,
        now: u64,
    ) -> Result<Batch, Error> {
        let mut out = vec![NOT_FOUND; keys.len()];
        let base = request_id();
        let (oc, now_e) = (i32::from(outcome.code()), enc(now));
        let won = Decision::new(Verdict::Won, Some(RecordState::Finalized(outcome)));
        for (n, pass) in passes(keys).into_iter().enumerate() {
            let batch: Vec<&[u8]> = pass.iter().map(|&i| keys[i]).collect();
            let pl: Vec<i64> = pass
                .iter()
                .map(|&i| enc(payloads.map_or(0, |p| p[i])))
                .collect();
            let op = base.wrapping_add(n as i64); // each pass its own request id
            let got = self
                .s
                .decide(
                    "ledger_finalize_batch",
                    op,
                    &[&self.name, &batch, &pl, &oc, &now_e],
                    |rows| {
                        let mut res: Vec<Option<Decision>> = vec![None; batch.len()];
                        for r in rows {
                            let i: i64 = col(r, 0)?;
                            let w: Option<bool> = col(r, 1)?;
                            let o: Option<i32> = col(r, 2)?;
                            let slot = res
                                .get_mut((i - 1) as usize)
                                .ok_or_else(|| format!("ordinal {i}"))?;
                            *slot = Some(match w {
                                None => NOT_FOUND,
                                Some(true) => won,
                                Some(false) => found(Verdict::Duplicate, 3, o.unwrap_or(0))?,
                            });
                        }
                        Ok(res)
                    },
                )
                .await?;
            let res = match got {
                Decided::Rows(r) => r,
                Decided::Logged(v) => {
                    // The statement committed; its winners are in v, every other key was a
                    // duplicate or not found: read which.
                    let mut r = vec![None; batch.len()];
                    for i in v {
                        if let Some(slot) = r.get_mut((i - 1) as usize) {
                            *slot = Some(won);
                        }
                    }
                    self.fill_unknown(&batch, &mut r, |st, oc| found(Verdict::Duplicate, st, oc))
                        .await?;
                    r
                }
            };
            for (j, &i) in pass.iter().enumerate() {
                out[i] = res[j].unwrap_or(NOT_FOUND);
                self.counts.finalize(&out[i]);
            }
        }
        Ok(Batch::of(out))
    }

    async fn take_inner(&self, key: &[u8], expected: u64) -> Result<Decision, Error> {
        let loser = |st: i16, id: i64, oc: i32| -> Result<Option<Decision>, String> {
            Ok(match st {
                3 => Some(found(Verdict::Duplicate, st, oc)?),
                _ if dec(id) != expected => Some(found(Verdict::Mismatch, st, 0)?),
                _ => None,
            })
        };
        let op = request_id();
        let ex = enc(expected);
        let got = self
            .s
            .decide("ledger_take", op, &[&self.name, &key, &ex], scan4)
            .await?;
        match got {
            Decided::Logged(_) | Decided::Rows((true, ..)) => {
                Counters::add(&self.counts.fin_won, 1);
                Counters::add(&self.counts.reclaimed, 1);
                return Ok(Decision::new(Verdict::Won, None));
            }
            Decided::Rows((false, None, ..)) => return Ok(NOT_FOUND),
            Decided::Rows((false, Some(st), id, oc)) => {
                if let Some(d) = loser(st, id.unwrap_or(0), oc.unwrap_or(0)).map_err(mismatch)? {
                    return Ok(d);
                }
            }
        }
        if let Some((r, _)) = self.read_row(key).await? {
            if let Some(d) = loser(r.state, r.id, r.outcome).map_err(mismatch)? {
                return Ok(d);
            }
        }
        Ok(NOT_FOUND)
    }

    async fn touch_inner(&self, key: &[u8], runner: u64, now: u64) -> Result<Decision, Error> {
        let loser = |st: i16, rn: i64, oc: i32| -> Result<Option<Decision>, String> {
            Ok(match st {
                3 => Some(found(Verdict::Duplicate, st, oc)?),
                _ if dec(rn) != runner => Some(found(Verdict::Mismatch, st, 0)?),
                _ => None,
            })
        };
        let (rn, now_e) = (enc(runner), enc(now));
        let (won, st, r, oc) = self
            .s
            .read("ledger_touch", &[&self.name, &key, &rn, &now_e], scan4)
            .await?;
        let Some(st) = st else {
            return Ok(NOT_FOUND);
        };
        if won {
            return found(Verdict::Won, st, 0).map_err(mismatch);
        }
        if let Some(d) = loser(st, r.unwrap_or(0), oc.unwrap_or(0)).map_err(mismatch)? {
            return Ok(d);
        }
        match self.read_row(key).await? {
            Some((r, _)) => match loser(r.state, r.runner, r.outcome).map_err(mismatch)? {
                Some(d) => Ok(d),
                None => found(Verdict::Won, r.state, 0).map_err(mismatch),
            },
            None => Ok(NOT_FOUND),
        }
    }

    /// Runs one scan statement (`args`, then the limit, then the request id); its two columns
    /// are the candidates it examined and the records it changed. `scanned` is the candidates,
    /// `wrapped` says fewer than `limit` were due (a pass over the due records ended).
    async fn page(
        &self,
        name: &'static str,
        limit: usize,
        args: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Page, Error> {
        if limit == 0 {
            return Ok(Page::default());
        }
        let op = request_id();
        let lim = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut all: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![&self.name];
        all.extend_from_slice(args);
        all.push(&lim);
        let got = self
            .s
            .decide(name, op, &all, |rows| match rows.first() {
                None => Ok((0i64, 0i64)),
                Some(r) => Ok((col(r, 0)?, col(r, 1)?)),
            })
            .await?;
        let (cand, changed) = match got {
            Decided::Rows(p) => p,
            Decided::Logged(v) => {
                let n = v.first().copied().unwrap_or(0);
                (n, n)
            }
        };
        Ok(Page {
            scanned: cand as usize,
            changed: changed as usize,
            wrapped: cand < lim,
        })
    }

    async fn get_key(&self, key: &[u8]) -> Result<Option<RecordView>, Error> {
        let Some((v, r)) = self.read_row(key).await? else {
            return Ok(None);
        };
        let view = (|| -> Result<RecordView, String> {
            Ok(RecordView {
                state: state_of(v.state, v.outcome)?,
                id: dec(v.id),
                runner: dec(v.runner),
                deadline: dec_time(col(&r, 4)?),
                refreshed_at: dec(col(&r, 5)?),
                finalized_at: col::<Option<i64>>(&r, 6)?.map(dec),
                payload: dec(col(&r, 7)?),
                duplicates: col::<i64>(&r, 8)? as u64,
                last_duplicate_payload: dec(col(&r, 9)?),
            })
        })()
        .map_err(mismatch)?;
        Ok(Some(view))
    }

    async fn len_inner(&self) -> Result<usize, Error> {
        Ok(self
            .s
            .read("ledger_len", &[&self.name], |rows| {
                rows.first().map_or(Ok(0), |r| col::<i64>(r, 0))
            })
            .await? as usize)
    }

    async fn reconcile_inner(&self, now: u64, limit: usize) -> Result<Page, Error> {
        check_time(now)?;
        let now_e = enc(now);
        let p = self.page("ledger_reconcile", limit, &[&now_e]).await?;
        Counters::add(&self.counts.timeouts, p.changed as u64);
        Ok(p)
    }

    async fn reclaim_inner(&self, now: u64, limit: usize) -> Result<Page, Error> {
        check_time(now)?;
        let c = cutoff(now, self.retention);
        let p = self.page("ledger_reclaim", limit, &[&c]).await?;
        Counters::add(&self.counts.reclaimed, p.changed as u64);
        Ok(p)
    }
}

/// Won, and the statement's snapshot of the record: state, id (or runner), outcome.
type Snapshot = (bool, Option<i16>, Option<i64>, Option<i32>);

/// The four columns of `ledger_claim`, `ledger_take` and `ledger_touch`: won, then the state,
/// the id (or runner) and the outcome of the statement's snapshot of the record.
fn scan4(rows: &[Row]) -> Result<Snapshot, String> {
    let Some(r) = rows.first() else {
        return Err("no row".into());
    };
    Ok((col(r, 0)?, col(r, 1)?, col(r, 2)?, col(r, 3)?))
}

impl LedgerStore for PgLedger {
    async fn insert(&self, key: &[u8], record: NewRecord, now: u64) -> Result<Decision, Error> {
        check_key(key)?;
        check_time(now)?;
        let d = self.insert_key(key, record, now).await?;
        if self.handoff {
            self.counts.claim(&d);
        }
        Ok(d)
    }

    async fn place(
        &self,
        keys: &[&[u8]],
        placeholder: u64,
        deadline: u64,
        now: u64,
    ) -> Result<Batch, Error> {
        check_batch(keys)?;
        check_time(now)?;
        self.place_keys(keys, placeholder, deadline, now).await
    }

    async fn claim(
        &self,
        key: &[u8],
        placeholder: u64,
        request_id: u64,
        runner: u64,
        now: u64,
    ) -> Result<Decision, Error> {
        check_key(key)?;
        check_time(now)?;
        let d = self
            .claim_inner(key, placeholder, request_id, runner, now)
            .await?;
        self.counts.claim(&d);
        Ok(d)
    }

    async fn finalize(
        &self,
        key: &[u8],
        outcome: Outcome,
        payload: u64,
        now: u64,
    ) -> Result<Decision, Error> {
        check_key(key)?;
        check_time(now)?;
        self.finalize_key(key, outcome, payload, now).await
    }

    async fn finalize_batch(
        &self,
        keys: &[&[u8]],
        payloads: Option<&[u64]>,
        outcome: Outcome,
        now: u64,
    ) -> Result<Batch, Error> {
        check_batch(keys)?;
        if payloads.is_some_and(|p| p.len() != keys.len()) {
            return Err(Error::InvalidArgument);
        }
        check_time(now)?;
        self.finalize_batch_inner(keys, payloads, outcome, now)
            .await
    }

    async fn take(&self, key: &[u8], expected_id: u64) -> Result<Decision, Error> {
        check_key(key)?;
        self.take_inner(key, expected_id).await
    }

    async fn touch(&self, key: &[u8], runner: u64, now: u64) -> Result<Decision, Error> {
        check_key(key)?;
        check_time(now)?;
        self.touch_inner(key, runner, now).await
    }

    async fn reconcile(&self, now: u64, limit: usize) -> Result<Page, Error> {
        self.reconcile_inner(now, limit).await
    }

    async fn reclaim(&self, now: u64, limit: usize) -> Result<Page, Error> {
        self.reclaim_inner(now, limit).await
    }

    async fn finalize_own(
        &self,
        runner: u64,
        outcome: Outcome,
        now: u64,
        limit: usize,
    ) -> Result<Page, Error> {
        check_time(now)?;
        if runner == 0 {
            return Ok(Page::default());
        }
        let (rn, oc, now_e) = (enc(runner), i32::from(outcome.code()), enc(now));
        let p = self
            .page("ledger_finalize_own", limit, &[&rn, &oc, &now_e])
            .await?;
        Counters::add(&self.counts.fin_won, p.changed as u64);
        Ok(p)
    }

    async fn sweep_orphans(&self, now: u64, quiet: u64, limit: usize) -> Result<Page, Error> {
        check_time(now)?;
        let (c, now_e) = (cutoff(now, quiet), enc(now));
        let p = self
            .page("ledger_sweep_orphans", limit, &[&c, &now_e])
            .await?;
        Counters::add(&self.counts.fin_won, p.changed as u64);
        Ok(p)
    }

    async fn get(&self, key: &[u8]) -> Result<Option<RecordView>, Error> {
        check_key(key)?;
        self.get_key(key).await
    }

    async fn len(&self) -> Result<usize, Error> {
        self.len_inner().await
    }

    fn counts(&self) -> Counts {
        self.counts.get()
    }
}

/// A hand-off ledger on the database: the first claim of a 6-tuple wins, across every replica.
#[derive(Debug)]
pub struct PgHandoffs {
    l: PgLedger,
}

impl PgHandoffs {
    pub(crate) fn new(l: PgLedger) -> Self {
        Self { l }
    }
}

/// The 6-tuple in full (every field tells hand-offs apart), encoded as the Go driver does, so
/// that replicas of either language share the rows.
pub fn handoff_key_bytes(k: &HandoffKey) -> Vec<u8> {
    let mut b = Vec::with_capacity(2 + k.channel_id().len() + k.tag_key().len() + 25);
    b.push(k.channel_id().len() as u8);
    b.extend_from_slice(k.channel_id());
    b.push(k.channel_type());
    b.extend_from_slice(&k.message_id().to_be_bytes());
    b.extend_from_slice(&k.target_node_id().to_be_bytes());
    b.push(k.tag_key().len() as u8);
    b.extend_from_slice(k.tag_key());
    b.extend_from_slice(&k.tag_version().to_be_bytes());
    b
}

fn handoff_record(deadline: u64) -> NewRecord {
    NewRecord {
        id: 0,
        runner: 0,
        deadline,
    }
}

impl HandoffStore for PgHandoffs {
    async fn claim(&self, key: &HandoffKey, deadline: u64, now: u64) -> Result<Decision, Error> {
        check_time(now)?;
        let d = self
            .l
            .insert_key(&handoff_key_bytes(key), handoff_record(deadline), now)
            .await?;
        self.l.counts.claim(&d);
        Ok(d)
    }

    async fn claim_batch(
        &self,
        keys: &[HandoffKey],
        deadline: u64,
        now: u64,
    ) -> Result<Batch, Error> {
        check_batch_len(keys.len())?;
        check_time(now)?;
        let ks: Vec<Vec<u8>> = keys.iter().map(handoff_key_bytes).collect();
        let b = self.l.place_keys(&ks, 0, deadline, now).await?;
        for d in &b.decisions {
            self.l.counts.claim(d);
        }
        Ok(b)
    }

    async fn complete(
        &self,
        key: &HandoffKey,
        outcome: Outcome,
        now: u64,
    ) -> Result<Decision, Error> {
        check_time(now)?;
        self.l
            .finalize_key(&handoff_key_bytes(key), outcome, 0, now)
            .await
    }

    async fn reconcile(&self, now: u64, limit: usize) -> Result<Page, Error> {
        self.l.reconcile_inner(now, limit).await
    }

    async fn reclaim(&self, now: u64, limit: usize) -> Result<Page, Error> {
        self.l.reclaim_inner(now, limit).await
    }

    async fn get(&self, key: &HandoffKey) -> Result<Option<RecordView>, Error> {
        self.l.get_key(&handoff_key_bytes(key)).await
    }

    async fn len(&self) -> Result<usize, Error> {
        self.l.len_inner().await
    }

    fn counts(&self) -> Counts {
        self.l.counts.get()
    }
}

impl Store {
    /// The ledger called `name` (1 to [`KEY_MAX`] bytes; one namespace per database) with
    /// `config`: its capacity checked as in memory (so a configuration moves unchanged) but not
    /// a bound (the table holds what is placed; retention with reclaim bounds it), its retention
    /// used by reclaim. Every replica must open a ledger with the same retention.
    pub fn ledger(&self, name: &str, config: LedgerConfig) -> Result<PgLedger, Error> {
        check_capacity(config.capacity)?;
        check_name(name)?;
        Ok(PgLedger::new(
            self.clone(),
            format!("ledger:{name}"),
            config.retention,
            config.kind == wkcore::coord::LedgerKind::Handoff,
        ))
    }

    /// The hand-off ledger called `name`, with `capacity` checked as in memory (not a bound) and
    /// `retention` (the same on every replica).
    pub fn handoffs(
        &self,
        name: &str,
        capacity: usize,
        retention: u64,
    ) -> Result<PgHandoffs, Error> {
        check_capacity(capacity)?;
        check_name(name)?;
        Ok(PgHandoffs::new(PgLedger::new(
            self.clone(),
            format!("handoff:{name}"),
            retention,
            true,
        )))
    }
}

fn check_capacity(capacity: usize) -> Result<(), Error> {
    if capacity == 0 || capacity > wkcore::coord::LEDGER_CAPACITY_MAX {
        Err(Error::InvalidCapacity)
    } else {
        Ok(())
    }
}

/// Checks a store's name (1 to [`KEY_MAX`] bytes).
pub(crate) fn check_name(name: &str) -> Result<(), Error> {
    check_key(name.as_bytes())
}

const _: () = assert!(BATCH_MAX <= 4096 && KEY_MAX == 64);
