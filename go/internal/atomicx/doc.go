// Package atomicx holds the one atomic operation sync/atomic lacks: a store
// with release ordering (StoreRelease), which the inline hot paths use to
// publish what they wrote, as the Rust core does with its Release stores.
package atomicx
