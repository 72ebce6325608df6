package multiraft

// ConfigChange resolves one admitted config change. Admitting a config change
// sets the slot's pending flag, which refuses every other config change with
// ErrConfigChangePending; only the ConfigChange of that admission clears it,
// once. Both the admitting call (AdmitConfigChange) and the drained Control
// carry it; either copy may resolve. A second Resolve, a Resolve after a newer
// config change was admitted, and the zero ConfigChange return
// ErrConfigChangeResolved and change nothing. Resolve it when the config
// change's future settles, whatever the outcome (applied, refused, cancelled
// at close).
type ConfigChange struct {
	r      configResolver
	ticket uint64
}

type configResolver interface {
	resolveConfigChange(ticket uint64) error
}

// Resolve clears the pending flag this config change set. It returns
// ErrConfigChangeResolved for a stale or second resolve and for the zero
// value, and ErrHandleClosed when the queue was closed (closing makes every
// pending config change moot).
func (c ConfigChange) Resolve() error {
	if c.r == nil || c.ticket == 0 {
		return ErrConfigChangeResolved
	}
	return c.r.resolveConfigChange(c.ticket)
}

// Pending reports whether c is a config change ticket (not the zero value).
// It does not say whether it has been resolved.
func (c ConfigChange) Pending() bool { return c.r != nil && c.ticket != 0 }
