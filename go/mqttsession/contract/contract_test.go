package mqttsession_test

import (
	"errors"
	"reflect"
	"testing"

	owners "github.com/wukongim/wkcore/go/mqttsession"
	contract "github.com/wukongim/wkcore/go/mqttsession/contract"
)

// The contract's names are the registry package's own: the same types, the
// same error value, the same answers.
func TestContractIsTheRegistrysIdentity(t *testing.T) {
	if reflect.TypeOf(contract.Key{}) != reflect.TypeOf(owners.Key{}) ||
		reflect.TypeOf(contract.Owner{}) != reflect.TypeOf(owners.Owner{}) {
		t.Fatal("the contract's types are not the registry's")
	}
	if contract.ErrInvalidIdentity != owners.ErrInvalidIdentity ||
		!errors.Is(contract.Owner{}.Validate(), contract.ErrInvalidIdentity) {
		t.Fatal("ErrInvalidIdentity is not the registry's value")
	}
	if contract.ErrInvalidIdentity.Error() != "mqttsession: invalid identity" {
		t.Fatalf("text %q", contract.ErrInvalidIdentity.Error())
	}
	var o owners.Owner = contract.Owner{Key: contract.Key{Namespace: "n", ClientID: "c"}, SessionGeneration: 1,
		OwnerGeneration: 1, NodeID: 1, BootID: "b", ConnectionID: 1}
	if o.Validate() != nil {
		t.Fatal("a valid owner made through the contract is refused")
	}
	for _, c := range []struct {
		s     string
		limit int
	}{{"a", 1}, {"ab", 1}, {"", 5}, {" ", 5}, {"a\x00", 5}, {"\xff", 5}, {"é", 2}, {"é", 1}} {
		if contract.ValidIdentity(c.s, c.limit) != owners.ValidIdentity(c.s, c.limit) {
			t.Fatalf("ValidIdentity(%q, %d) differs", c.s, c.limit)
		}
	}
}
