package mqttsession

import (
	"context"
	"errors"
	"testing"

	"github.com/wukongim/wkcore/go/internal/status"
)

// Every sentinel has upstream's text, is registered under its code, and
// matches only itself.
func TestSentinelsAreUpstreams(t *testing.T) {
	all := []struct {
		err  error
		code status.Code
		text string
	}{
		{ErrOwnerInvalid, 200, "mqttsession: invalid owner execution request"},
		{ErrOwnerFenced, 201, "mqttsession: owner execution fenced"},
		{ErrOwnerUnknown, 202, "mqttsession: owner isolation unproved"},
		{ErrOwnerLimit, 203, "mqttsession: owner execution capacity reached"},
		{ErrOwnerStopped, 204, "mqttsession: owner execution stopped"},
		{ErrOwnerClose, 205, "mqttsession: transport close failed"},
		{ErrInvalidIdentity, 208, "mqttsession: invalid identity"},
		{ErrOwnerSweeperInvalid, 209, "mqttsession: invalid owner sweeper configuration"},
		{ErrOwnerSweeperStopping, 210, "mqttsession: owner sweeper still draining"},
	}
	for _, s := range all {
		if s.err.Error() != s.text {
			t.Errorf("%q, want %q", s.err.Error(), s.text)
		}
		if got := status.Lookup(s.code); got != s.err {
			t.Errorf("status %d is %v", s.code, got)
		}
		for _, other := range all {
			if errors.Is(s.err, other.err) != (s.err == other.err) {
				t.Errorf("errors.Is(%v, %v)", s.err, other.err)
			}
		}
		for _, ctxErr := range []error{context.Canceled, context.DeadlineExceeded} {
			if errors.Is(s.err, ctxErr) || errors.Is(ctxErr, s.err) {
				t.Errorf("%v matches %v", s.err, ctxErr)
			}
		}
	}
	// The wait codes are Go's context errors, never registered here.
	for _, c := range []status.Code{codeOwnerCanceled, codeOwnerDeadlineExceeded, codeInvalidFrame} {
		var u status.UnknownError
		if !errors.As(status.Lookup(c), &u) && Implementation == "go" {
			t.Errorf("status %d is registered", c)
		}
	}
}
