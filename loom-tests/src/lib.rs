//! loom models of wkcore's concurrent algorithms.
//!
//! The models live in `tests/` and build only with the `wkcore_loom` cfg, which makes
//! `wkcore`'s `sync` shim hand out loom's atomics, cells and mutexes, so loom explores every
//! interleaving of the same code that ships. Run them as `scripts/loom` does:
//!
//! ```text
//! RUSTFLAGS="--cfg wkcore_loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=2 \
//!     LOOM_MAX_BRANCHES=10000 CARGO_TARGET_DIR=target/loom \
//!     cargo test -p loom-tests --release
//! ```
//!
//! Models use at most three threads counting the main one. To replay a failure, rerun the failing
//! model with `LOOM_CHECKPOINT_FILE=loom.json LOOM_CHECKPOINT_INTERVAL=1 LOOM_LOG=trace
//! LOOM_LOCATION=1` (loom's `checkpoint` feature) and read the trace of the last interleaving.
//!
//! What loom cannot see: dashmap (replaced under the cfg by a loom-mutex stand-in) and
//! `SeqCst` subtleties (loom models `SeqCst` as `AcqRel`; wkcore uses no `SeqCst`). The real
//! structures are covered by the stress and model tests in `core/tests/`.
