//! The ambiguous commit: the connection is cut after the statement was sent (a small TCP proxy
//! between the driver and the server forwards the statement, then drops both sides before any
//! answer reaches the driver). The driver must not guess: it ends the session, reads the
//! request table, and answers what the statement decided (won), where a naive retry would see
//! its own row and report a lost race. Cut before the statement reaches the server, the
//! read-back finds nothing and the statement runs again with the same request id.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wkcore::coord::{LedgerConfig, LedgerKind};
use wkcore_coordpg::contract::{CounterStore, LedgerStore, NewRecord, RecordState, Verdict};
use wkcore_coordpg::pg::{with_request_id, Options, Store};

use crate::common;

/// Pass everything.
const PASS: u8 = 0;
/// Forward the client's next complete message run up to its Sync, then cut both sides.
const FORWARD_THEN_CUT: u8 = 1;
/// Cut both sides on the client's next bytes, forwarding none of them.
const CUT: u8 = 2;

/// A proxy to `upstream`; `mode` arms the next cut (the pump that acts on it sets it back).
async fn proxy(upstream: String, mode: Arc<AtomicU8>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(&upstream).await else {
                continue;
            };
            tokio::spawn(pump(client, server, Arc::clone(&mode)));
        }
    });
    port
}

/// True when `buf` holds complete typed messages ending with a Sync (`S`, length 4).
fn ends_with_sync(buf: &[u8]) -> bool {
    let mut i = 0;
    let mut last = 0u8;
    while i + 5 <= buf.len() {
        let len = u32::from_be_bytes([buf[i + 1], buf[i + 2], buf[i + 3], buf[i + 4]]) as usize;
        if i + 1 + len > buf.len() {
            return false;
        }
        last = buf[i];
        i += 1 + len;
    }
    i == buf.len() && last == b'S'
}

async fn pump(client: TcpStream, server: TcpStream, mode: Arc<AtomicU8>) {
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
    // Server to client: until told to stop (then both of its halves are dropped).
    let back = tokio::spawn(async move {
        let mut buf = vec![0u8; 16384];
        loop {
            tokio::select! {
                _ = &mut stop_rx => return,
                n = sr.read(&mut buf) => match n {
                    Ok(0) | Err(_) => return,
                    Ok(n) => if cw.write_all(&buf[..n]).await.is_err() { return },
                },
            }
        }
    });
    let mut buf = vec![0u8; 16384];
    loop {
        let n = match cr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Ordering: SeqCst; pairs with the test's store of the mode, made before it sends the
        // statement this read may carry.
        match mode.load(Ordering::SeqCst) {
            CUT => {
                // Ordering: SeqCst; as the load above (the cut is consumed once).
                mode.store(PASS, Ordering::SeqCst);
                let _ = stop_tx.send(());
                let _ = back.await;
                return; // drops the client's read half and the server's write half
            }
            FORWARD_THEN_CUT => {
                // Ordering: SeqCst; as the load above (the cut is consumed once).
                mode.store(PASS, Ordering::SeqCst);
                // No answer may reach the driver: stop the way back first.
                let _ = stop_tx.send(());
                let _ = back.await;
                let mut msg = buf[..n].to_vec();
                while !ends_with_sync(&msg) {
                    match cr.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => msg.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = sw.write_all(&msg).await;
                let _ = sw.flush().await;
                return;
            }
            _ => {
                if sw.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = stop_tx.send(());
    let _ = back.await;
}

/// A store whose one connection goes through a proxy, and the proxy's mode.
async fn proxied() -> Option<(Store, Store, Arc<AtomicU8>)> {
    let dsn = common::dsn()?;
    let direct = Store::open(dsn, Options::default()).await.expect("open");
    let cfg: tokio_postgres::Config = dsn.parse().expect("a DSN");
    let host = match &cfg.get_hosts()[0] {
        tokio_postgres::config::Host::Tcp(h) => h.clone(),
        #[allow(unreachable_patterns)]
        _ => "127.0.0.1".to_string(),
    };
    let upstream = format!("{host}:{}", cfg.get_ports()[0]);
    let mode = Arc::new(AtomicU8::new(PASS));
    let port = proxy(upstream, Arc::clone(&mode)).await;
    let mut via = tokio_postgres::Config::new();
    via.host("127.0.0.1").port(port);
    if let Some(u) = cfg.get_user() {
        via.user(u);
    }
    if let Some(d) = cfg.get_dbname() {
        via.dbname(d);
    }
    let opts = Options {
        pool_size: 1,
        ..Options::default()
    };
    let store = Store::open_config(via, opts)
        .await
        .expect("open through the proxy");
    Some((store, direct, mode))
}

fn config() -> LedgerConfig {
    LedgerConfig {
        capacity: 16,
        retention: 100,
        kind: LedgerKind::Pending,
    }
}

fn rec(id: u64) -> NewRecord {
    NewRecord {
        id,
        runner: 0,
        deadline: u64::MAX,
    }
}

const PLACED: (Verdict, Option<RecordState>) = (Verdict::Won, Some(RecordState::Placed));

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_cut_after_it_was_sent_is_read_back_as_won() {
    let Some((store, direct, mode)) = proxied().await else {
        return;
    };
    let name = common::unique("amb");
    let l = store.ledger(&name, config()).unwrap();
    let other = direct.ledger(&name, config()).unwrap();
    // Warm the one connection: its statement is prepared, so the next bytes are the execution.
    let d = l.insert(b"warm", rec(1), 0).await.unwrap();
    assert_eq!((d.result, d.state), PLACED);
    let before = store.stats();
    // Ordering: SeqCst; pairs with the pump's load of the mode.
    mode.store(FORWARD_THEN_CUT, Ordering::SeqCst);
    let d = l.insert(b"k", rec(7), 1).await.unwrap();
    assert_eq!(
        (d.result, d.state),
        PLACED,
        "the read-back says the insert won"
    );
    let after = store.stats();
    assert_eq!(
        after.resolved_committed,
        before.resolved_committed + 1,
        "resolved by the read-back"
    );
    assert_eq!(after.resolved_not_committed, before.resolved_not_committed);
    // Exactly one record, the one this insert wrote; another replica now loses.
    let r = other.get(b"k").await.unwrap().expect("the record");
    assert_eq!(r.id, 7);
    let d = other.insert(b"k", rec(8), 2).await.unwrap();
    assert_eq!(d.result, Verdict::Lost);
    assert_eq!(other.len().await.unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_cut_before_it_arrived_runs_again_with_its_request_id() {
    let Some((store, direct, mode)) = proxied().await else {
        return;
    };
    let name = common::unique("amb");
    let l = store.ledger(&name, config()).unwrap();
    let other = direct.ledger(&name, config()).unwrap();
    l.insert(b"warm", rec(1), 0).await.unwrap();
    let before = store.stats();
    // Ordering: SeqCst; pairs with the pump's load of the mode.
    mode.store(CUT, Ordering::SeqCst);
    let d = with_request_id(0xfeed_0001, l.insert(b"k", rec(7), 1))
        .await
        .unwrap();
    assert_eq!((d.result, d.state), PLACED);
    let after = store.stats();
    assert_eq!(
        after.resolved_not_committed,
        before.resolved_not_committed + 1
    );
    assert_eq!(after.resolved_committed, before.resolved_committed);
    assert!(direct.resolved(0xfeed_0001).await.unwrap());
    assert_eq!(other.get(b"k").await.unwrap().expect("the record").id, 7);
}

#[tokio::test]
async fn a_retry_with_a_request_id_that_won_is_told_what_it_decided() {
    let Some(store) = common::store(Options::default()).await else {
        return;
    };
    let c = store.counters(&common::unique("retry")).unwrap();
    let id = wkcore_coordpg_test_id();
    let first = with_request_id(id, c.increment(b"k")).await.unwrap();
    assert_eq!(first, 1);
    // The host retries the same decision (say after an uncertain error): the request table
    // answers what the first run decided, and the counter moved once.
    let again = with_request_id(id, c.increment(b"k")).await.unwrap();
    assert_eq!(again, 1);
    assert_eq!(c.get(b"k").await.unwrap(), 1);
    assert!(store.resolved(id).await.unwrap());
    assert_eq!(c.increment(b"k").await.unwrap(), 2);
}

/// A request id no earlier run used.
fn wkcore_coordpg_test_id() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    t | 1
}
