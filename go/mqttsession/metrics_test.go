package mqttsession

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Both builds export the owner families with the Rust core's names, help,
// labels and series order; a registry's sweeps and owners count in them.
func TestMetricsFamilies(t *testing.T) {
	r, clock := publicFixture(t, 4, 4)
	o, err := r.Reserve(ownerClaim("m"), okClose)
	must(t, err)
	must(t, r.Activate(o, 1, clock.Now().Add(time.Second)))
	_, err = r.Sweep(context.Background(), 1)
	must(t, err)
	families, err := Metrics.Families()
	must(t, err)
	got := map[string][]string{}
	values := map[string]uint64{}
	for _, f := range families {
		for _, s := range f.Series {
			got[f.Name] = append(got[f.Name], s.LabelValues[0])
			values[f.Name+"/"+s.LabelValues[0]] = s.Value
		}
		eq(t, len(f.Labels), 1, f.Name, "labels")
	}
	eq(t, strings.Join(got[familyWork], ","), strings.Join(workStates, ","), "work series")
	eq(t, strings.Join(got[familySweep], ","), strings.Join(sweepEvents, ","), "sweep series")
	if values[familySweep+"/turns"] < 1 || values[familyWork+"/held"] < 1 || values[familyWork+"/active"] < 1 {
		t.Fatalf("counts not exported: %v", values)
	}
	text, err := RenderMetrics()
	must(t, err)
	for _, want := range []string{"# TYPE wukongim_mqtt_owner_work gauge", "# TYPE wukongim_mqtt_owner_sweep_total counter",
		`wukongim_mqtt_owner_sweep_total{event="turns"}`} {
		if !strings.Contains(text, want) {
			t.Fatalf("render lacks %q:\n%s", want, text)
		}
	}
	must(t, r.Close(context.Background()))
}
