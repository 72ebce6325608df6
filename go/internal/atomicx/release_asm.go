//go:build !race && (amd64 || arm64)

package atomicx

// StoreRelease stores v at addr with release ordering (amd64: a plain MOV,
// which TSO orders after every earlier store; arm64: STLR), where
// sync/atomic's Store is sequentially consistent (amd64: XCHG, a locked
// instruction). Publishing stores (a value written, then a word that says so) need release only:
// their readers load with sync/atomic's (acquire). A call to an assembly function is
// opaque to the compiler, so no earlier store moves past it. Under -race,
// and on other architectures, it is sync/atomic's Store (release_atomic.go).
//
//go:noescape
func StoreRelease(addr *uint64, v uint64)
