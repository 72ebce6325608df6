package mqttsession

import (
	"context"
	"sync"
	"testing"
)

// hostTaskID and hostRegistry have the shape of WuKongIM's goroutine
// package: a string-typed task id and Go(task, fn) on a pointer (a nil
// registry falls back to a process-wide one, as upstream's SafeGo).
type hostTaskID string

type hostRegistry struct {
	mu    sync.Mutex
	tasks []hostTaskID
	wg    sync.WaitGroup
}

var fallbackRegistry hostRegistry

func (r *hostRegistry) Go(task hostTaskID, fn func()) {
	if r == nil {
		r = &fallbackRegistry
	}
	r.mu.Lock()
	r.tasks = append(r.tasks, task)
	r.mu.Unlock()
	r.wg.Add(1)
	go func() { defer r.wg.Done(); fn() }()
}

type stringRegistry struct{ tasks chan string }

func (r stringRegistry) Go(task string, fn func()) { r.tasks <- task; go fn() }

type wrongRegistry struct{}

func (wrongRegistry) Go(task int, fn func()) {}

// The loop starts under the host's registry, as its OwnerSweeperTask task;
// a value without a fitting Go is refused.
func TestOwnerSweeperRegistry(t *testing.T) {
	owners, _ := publicFixture(t, 1, 1)
	ctx := context.Background()
	reg := &hostRegistry{}
	var nilReg *hostRegistry
	strReg := stringRegistry{tasks: make(chan string, 1)}
	for _, c := range []struct {
		name string
		reg  any
		ran  func() []string
	}{
		{"host registry", reg, func() []string {
			reg.wg.Wait()
			return []string{string(reg.tasks[0])}
		}},
		{"nil host registry", nilReg, func() []string {
			fallbackRegistry.wg.Wait()
			return []string{string(fallbackRegistry.tasks[0])}
		}},
		{"string task ids", strReg, func() []string { return []string{<-strReg.tasks} }},
	} {
		w, err := NewOwnerSweeper(OwnerSweeperOptions{Owners: owners, Registry: c.reg})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		must(t, w.Start(ctx))
		must(t, w.Stop(ctx))
		if got := c.ran(); len(got) != 1 || got[0] != OwnerSweeperTask {
			t.Fatalf("%s: tasks %q", c.name, got)
		}
	}
	for _, bad := range []any{42, wrongRegistry{}, struct{}{}} {
		if _, err := NewOwnerSweeper(OwnerSweeperOptions{Owners: owners, Registry: bad}); err != ErrOwnerSweeperInvalid {
			t.Fatalf("registry %T: %v", bad, err)
		}
	}
}
