//! How far reads of one `DashMap` scale across threads, beside one map per thread: the reason
//! `wkcore-bench --coord`'s 2-thread `finalize` row does not scale although the threads finalize
//! different keys. Every read takes its shard's read lock, an atomic RMW on the shard's lock
//! word; threads reading disjoint keys still visit every shard, so each shard's lock line moves
//! between their caches on nearly every read, however many shards there are.
//!
//! `cargo run --release -p wkcore-bench --example map_read_scaling`
//!
//! Prints ns per read (aggregate over all threads) for one thread, two threads on one map (128
//! shards, the ledger's setting; disjoint key halves) and two threads on a map each.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::Instant;

use dashmap::DashMap;

type Map = DashMap<u64, u64, ahash::RandomState>;

const KEYS: u64 = 4096;
const ROUNDS: u64 = 200;

fn run(maps: &[&Map], threads: usize) -> f64 {
    let barrier = Barrier::new(threads + 1);
    let per = KEYS / threads as u64;
    std::thread::scope(|s| {
        for t in 0..threads {
            let (barrier, map) = (&barrier, maps[t % maps.len()]);
            s.spawn(move || {
                barrier.wait();
                for _ in 0..ROUNDS {
                    for k in t as u64 * per..(t as u64 + 1) * per {
                        black_box(map.get(&black_box(k)).map(|v| *v));
                    }
                }
                barrier.wait();
            });
        }
        barrier.wait();
        let start = Instant::now();
        barrier.wait();
        start.elapsed().as_secs_f64() * 1e9 / (KEYS * ROUNDS) as f64
    })
}

fn main() {
    let make = || {
        let map = Map::with_hasher_and_shard_amount(ahash::RandomState::new(), 128);
        for k in 0..KEYS {
            map.insert(k, k);
        }
        map
    };
    let (a, b) = (make(), make());
    println!("ns per read: 1 thread | 2 threads, one map | 2 threads, a map each");
    for _ in 0..5 {
        println!(
            "{:>8.1} | {:>8.1} | {:>8.1}",
            run(&[&a], 1),
            run(&[&a], 2),
            run(&[&a, &b], 2)
        );
    }
}
