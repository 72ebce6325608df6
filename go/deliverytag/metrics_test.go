package deliverytag

import (
	"strings"
	"testing"
	"time"
)

// Both builds export the delivery-tag families with the Rust core's names,
// help, labels and series order; a cache's look-ups and stores count in
// them.
func TestMetricsFamilies(t *testing.T) {
	c := newCache(t, 2, time.Minute, nil)
	tag := versionTag("group:metrics", 1)
	store(t, c, tag)
	_, err := c.Check(tag.Ref())
	must(t, err)
	families, err := Metrics.Families()
	must(t, err)
	series := map[string][]string{}
	values := map[string]uint64{}
	for _, f := range families {
		eq(t, len(f.Labels), 1, f.Name, "labels")
		for _, s := range f.Series {
			series[f.Name] = append(series[f.Name], s.LabelValues[0])
			values[f.Name+"/"+s.LabelValues[0]] = s.Value
		}
	}
	eq(t, strings.Join(series[familyLookups], ","), "hit,missing_ref,missing_tag,tag_key_mismatch,stale_request,newer_request,topology_mismatch", "lookup series")
	eq(t, strings.Join(series[familyStores], ","), "stored,stale", "store series")
	eq(t, strings.Join(series[familyCached], ","), "tags,uids", "cached series")
	eq(t, strings.Join(series[familyReclaimed], ","), "bodies,refs", "reclaimed series")
	if values[familyLookups+"/hit"] < 1 || values[familyStores+"/stored"] < 1 || values[familyCached+"/tags"] < 1 {
		t.Fatalf("counts not exported: %v", values)
	}
	text, err := RenderMetrics()
	must(t, err)
	for _, want := range []string{"# TYPE wukongim_delivery_tag_lookups_total counter", "# TYPE wukongim_delivery_tag_cached gauge",
		`wukongim_delivery_tag_lookups_total{result="hit"}`} {
		if !strings.Contains(text, want) {
			t.Fatalf("render lacks %q:\n%s", want, text)
		}
	}
}
