package mqttsession_test

// The upstream-visible surface of the package, name by name: every
// signature, field, value and error text a WuKongIM call site or test uses.
// A change to any of them fails here. WK_API_DUMP=1 prints what is.

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/wukongim/wkcore/go/internal/apisurface"
	. "github.com/wukongim/wkcore/go/mqttsession"
	contract "github.com/wukongim/wkcore/go/mqttsession/contract"
)

// surfaceCase is apisurface.Case, declared here so the table's literals can
// stay unkeyed.
type surfaceCase struct {
	Kind, Name string
	V          any
	Member     string
	Want       string
}

func TestAPISurface(t *testing.T) {
	_ = time.Second
	_ = context.Background
	owners, op, sw := (*Owners)(nil), (*Operation)(nil), (*OwnerSweeper)(nil)
	apisurface.Check(t, []surfaceCase{
		{"func", "NewOwners", NewOwners, "", "func(mqttsession.OwnerOptions) (*mqttsession.Owners, error)"},
		{"method", "Owners.Reserve", owners, "Reserve", "func(mqttsession.Claim, mqttsession.CloseTransport) (mqttsession.Owner, error)"},
		{"method", "Owners.Activate", owners, "Activate", "func(mqttsession.Owner, uint64, time.Time) error"},
		{"method", "Owners.Renew", owners, "Renew", "func(mqttsession.Owner, uint64, time.Time) error"},
		{"method", "Owners.Begin", owners, "Begin", "func(context.Context, mqttsession.Owner) (*mqttsession.Operation, error)"},
		{"method", "Owners.Fence", owners, "Fence", "func(mqttsession.Owner) error"},
		{"method", "Owners.Quiesce", owners, "Quiesce", "func(context.Context, mqttsession.Owner) error"},
		{"method", "Owners.Sweep", owners, "Sweep", "func(context.Context, int) (int, error)"},
		{"method", "Owners.StopAdmission", owners, "StopAdmission", "func()"},
		{"method", "Owners.Close", owners, "Close", "func(context.Context) error"},
		{"method", "Owners.Snapshot", owners, "Snapshot", "func() mqttsession.OwnerSnapshot"},
		{"method", "Owners.Retirement", owners, "Retirement", "func() (mqttsession.RetiredBoot, error)"},
		{"method", "Operation.Done", op, "Done", "func()"},
		{"method", "Operation.Check", op, "Check", "func() error"},
		{"method", "Operation.MarkUncertain", op, "MarkUncertain", "func() error"},
		{"method", "Operation.UID", op, "UID", "func() string"},
		{"method", "Operation.Context", op, "Context", "func() context.Context"},
		{"func", "NewOwnerSweeper", NewOwnerSweeper, "", "func(mqttsession.OwnerSweeperOptions) (*mqttsession.OwnerSweeper, error)"},
		{"method", "OwnerSweeper.Start", sw, "Start", "func(context.Context) error"},
		{"method", "OwnerSweeper.Stop", sw, "Stop", "func(context.Context) error"},
		{"method", "OwnerSweeper.Turn", sw, "Turn", "func(context.Context) mqttsession.OwnerSweepObservation"},
		{"method", "OwnerSweeper.Options", sw, "Options", "func() *mqttsession.OwnerSweeperOptions"},
		{"method", "Isolation.Quiesce", Isolation{}, "Quiesce", "func(context.Context, mqttsession.Owner) error"},
		{"method", "RetiredBoot.Identity", RetiredBoot{}, "Identity", "func() (uint64, string, uint64)"},
		{"method", "RetiredOwners.Quiesce", reflect.TypeOf((*RetiredOwners)(nil)).Elem(), "Quiesce", "func(context.Context, mqttsession.Owner) error"},
		{"fields", "RetiredBoot", RetiredBoot{}, "", ""},
		{"fields", "Isolation", Isolation{}, "", "Owners,Retired"},
		{"field", "Isolation.Owners", Isolation{}, "Owners", "*mqttsession.Owners"},
		{"field", "Isolation.Retired", Isolation{}, "Retired", "mqttsession.RetiredOwners"},
		{"fields", "Claim", Claim{}, "", "Key,UID,SessionGeneration,OwnerGeneration"},
		{"field", "Claim.Key", Claim{}, "Key", "mqttsession.Key"},
		{"field", "Claim.UID", Claim{}, "UID", "string"},
		{"field", "Claim.SessionGeneration", Claim{}, "SessionGeneration", "uint64"},
		{"field", "Claim.OwnerGeneration", Claim{}, "OwnerGeneration", "uint64"},
		{"fields", "OwnerOptions", OwnerOptions{}, "", "NodeID,BootID,Capacity,MaxOperations,PendingTimeout,MaxLease,CloseRetry,Now"},
		{"field", "OwnerOptions.NodeID", OwnerOptions{}, "NodeID", "uint64"},
		{"field", "OwnerOptions.BootID", OwnerOptions{}, "BootID", "string"},
		{"field", "OwnerOptions.Capacity", OwnerOptions{}, "Capacity", "int"},
		{"field", "OwnerOptions.MaxOperations", OwnerOptions{}, "MaxOperations", "int"},
		{"field", "OwnerOptions.PendingTimeout", OwnerOptions{}, "PendingTimeout", "time.Duration"},
		{"field", "OwnerOptions.MaxLease", OwnerOptions{}, "MaxLease", "time.Duration"},
		{"field", "OwnerOptions.CloseRetry", OwnerOptions{}, "CloseRetry", "time.Duration"},
		{"field", "OwnerOptions.Now", OwnerOptions{}, "Now", "func() time.Time"},
		{"fields", "OwnerSnapshot", OwnerSnapshot{}, "", "Held,Pending,Active,Closing,Operations,Deadlines,Uncertain,Stopped"},
		{"fields", "OwnerSweeperOptions", OwnerSweeperOptions{}, "", "Owners,Registry,Limit,Interval,TurnTimeout,Observe"},
		{"field", "OwnerSweeperOptions.Owners", OwnerSweeperOptions{}, "Owners", "*mqttsession.Owners"},
		{"field", "OwnerSweeperOptions.Registry", OwnerSweeperOptions{}, "Registry", "interface {}"},
		{"field", "OwnerSweeperOptions.Limit", OwnerSweeperOptions{}, "Limit", "int"},
		{"field", "OwnerSweeperOptions.Interval", OwnerSweeperOptions{}, "Interval", "time.Duration"},
		{"field", "OwnerSweeperOptions.TurnTimeout", OwnerSweeperOptions{}, "TurnTimeout", "time.Duration"},
		{"field", "OwnerSweeperOptions.Observe", OwnerSweeperOptions{}, "Observe", "func(mqttsession.OwnerSweepObservation)"},
		{"fields", "OwnerSweepObservation", OwnerSweepObservation{}, "", "Visited,Failures,Owners"},
		{"type", "CloseTransport", (*CloseTransport)(nil), "", "func mqttsession.CloseTransport"},
		{"value", "OwnerSweeperTask", OwnerSweeperTask, "", "mqtt/owner_sweeper"},
		{"error", "ErrOwnerInvalid", ErrOwnerInvalid, "", "mqttsession: invalid owner execution request"},
		{"error", "ErrOwnerFenced", ErrOwnerFenced, "", "mqttsession: owner execution fenced"},
		{"error", "ErrOwnerUnknown", ErrOwnerUnknown, "", "mqttsession: owner isolation unproved"},
		{"error", "ErrOwnerLimit", ErrOwnerLimit, "", "mqttsession: owner execution capacity reached"},
		{"error", "ErrOwnerStopped", ErrOwnerStopped, "", "mqttsession: owner execution stopped"},
		{"error", "ErrOwnerClose", ErrOwnerClose, "", "mqttsession: transport close failed"},
		{"error", "ErrOwnerSweeperInvalid", ErrOwnerSweeperInvalid, "", "mqttsession: invalid owner sweeper configuration"},
		{"error", "ErrOwnerSweeperStopping", ErrOwnerSweeperStopping, "", "mqttsession: owner sweeper still draining"},
		{"error", "ErrInvalidIdentity", ErrInvalidIdentity, "", "mqttsession: invalid identity"},
		// The contract package (upstream's internal/contracts/mqttsession).
		{"fields", "contract.Key", contract.Key{}, "", "Namespace,ClientID"},
		{"field", "contract.Key.Namespace", contract.Key{}, "Namespace", "string `json:\"namespace\"`"},
		{"field", "contract.Key.ClientID", contract.Key{}, "ClientID", "string `json:\"client_id\"`"},
		{"fields", "contract.Owner", contract.Owner{}, "", "Key,SessionGeneration,OwnerGeneration,NodeID,BootID,ConnectionID"},
		{"field", "contract.Owner.Key", contract.Owner{}, "Key", "mqttsession.Key `json:\"key\"`"},
		{"field", "contract.Owner.SessionGeneration", contract.Owner{}, "SessionGeneration", "uint64 `json:\"session_generation\"`"},
		{"field", "contract.Owner.OwnerGeneration", contract.Owner{}, "OwnerGeneration", "uint64 `json:\"owner_generation\"`"},
		{"field", "contract.Owner.NodeID", contract.Owner{}, "NodeID", "uint64 `json:\"node_id\"`"},
		{"field", "contract.Owner.BootID", contract.Owner{}, "BootID", "string `json:\"boot_id\"`"},
		{"field", "contract.Owner.ConnectionID", contract.Owner{}, "ConnectionID", "uint64 `json:\"connection_id\"`"},
		{"method", "contract.Key.Validate", contract.Key{}, "Validate", "func() error"},
		{"method", "contract.Owner.Validate", contract.Owner{}, "Validate", "func() error"},
		{"func", "contract.ValidIdentity", contract.ValidIdentity, "", "func(string, int) bool"},
		{"error", "contract.ErrInvalidIdentity", contract.ErrInvalidIdentity, "", "mqttsession: invalid identity"},
	})
}
