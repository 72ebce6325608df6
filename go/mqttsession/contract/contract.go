// Package mqttsession (imported from go/mqttsession/contract) is the identity
// contract of the MQTT owner registry under the path shape of WuKongIM's
// internal/contracts/mqttsession: Key, Owner, ValidIdentity and
// ErrInvalidIdentity. Every name is go/mqttsession's own (type aliases and
// the same error value), so a value made through either import is the other's
// and errors.Is / == match across both:
//
//	contract "github.com/wukongim/wkcore/go/mqttsession/contract"
//
// The package is named mqttsession, as upstream's, so an import without a
// name keeps its call sites (mqttsession.Key) too.
package mqttsession

import owners "github.com/wukongim/wkcore/go/mqttsession"

// Key is a broker-scoped ClientID (go/mqttsession's Key).
type Key = owners.Key

// Owner identifies one immutable execution incarnation (go/mqttsession's
// Owner).
type Owner = owners.Owner

// ErrInvalidIdentity is go/mqttsession's ErrInvalidIdentity, the same value
// ("mqttsession: invalid identity").
var ErrInvalidIdentity = owners.ErrInvalidIdentity

// ValidIdentity reports whether s is 1..limit bytes of UTF-8, has no NUL and
// is not only white space (go/mqttsession's ValidIdentity).
func ValidIdentity(s string, limit int) bool { return owners.ValidIdentity(s, limit) }
