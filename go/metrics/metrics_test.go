package metrics

import (
	"errors"
	"strings"
	"testing"
)

// Render writes the text exposition format 0.0.4: HELP with backslash and
// newline escaped, TYPE, one line per series with label values escaped
// (backslash, newline, double quote), in the given order.
func TestRender(t *testing.T) {
	families := []Family{
		{
			Name: "wk_admission_total", Help: "Decisions \\ by class\nand result.", Type: Counter,
			Labels: []string{"class", "result"},
			Series: []Series{
				{LabelValues: []string{"foreground", "ok"}, Value: 3},
				{LabelValues: []string{`a"b\c` + "\nd", "busy"}, Value: 0},
				{LabelValues: []string{"only one"}, Value: 1 << 63},
			},
		},
		{Name: "wk_depth", Help: "", Type: Gauge, Series: []Series{{Value: 18446744073709551615}}},
		{Name: "wk_future", Help: "x", Type: Type(7), Series: []Series{{Value: 1}}},
		{Name: "wk_empty", Help: "no series", Type: Counter},
	}
	want := `# HELP wk_admission_total Decisions \\ by class\nand result.
# TYPE wk_admission_total counter
wk_admission_total{class="foreground",result="ok"} 3
wk_admission_total{class="a\"b\\c\nd",result="busy"} 0
wk_admission_total{class="only one",result=""} 9223372036854775808
# HELP wk_depth 
# TYPE wk_depth gauge
wk_depth 18446744073709551615
# HELP wk_future x
# TYPE wk_future untyped
wk_future 1
# HELP wk_empty no series
# TYPE wk_empty counter
`
	var b strings.Builder
	if err := Render(&b, families); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("Render:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := Render(&b, nil); err != nil || b.Len() != 0 {
		t.Errorf("Render(nil) = %q, %v", b.String(), err)
	}
}

type failingWriter struct{}

var errWrite = errors.New("write failed")

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestRenderReturnsWriteError(t *testing.T) {
	err := Render(failingWriter{}, []Family{{Name: "x", Type: Counter, Series: []Series{{Value: 1}}}})
	if err != errWrite {
		t.Fatalf("Render to a failing writer: %v", err)
	}
}

func TestTypeString(t *testing.T) {
	for typ, want := range map[Type]string{Counter: "counter", Gauge: "gauge", 2: "metric_type(2)", 1<<32 - 1: "metric_type(4294967295)"} {
		if got := typ.String(); got != want {
			t.Errorf("Type(%d).String() = %q, want %q", uint32(typ), got, want)
		}
	}
	if Counter != 0 || Gauge != 1 {
		t.Error("the values are the C ABI's enum wk_metric_type")
	}
}
