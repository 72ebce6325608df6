package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// summary prints the one-page summary.
func summary(cfg config, systems []system, s *sampler, mem memResult, elapsed time.Duration, chk *checker) {
	fmt.Printf("\nwksoak summary: %v timed run (asked %v), %d samples\n", elapsed.Round(time.Millisecond), cfg.duration, len(s.rows))
	fmt.Printf("  %-10s %14s %14s\n", "system", "operations", "ops/s")
	secs := elapsed.Seconds()
	for _, sys := range systems {
		n := sys.ops()
		fmt.Printf("  %-10s %14d %14.0f\n", sys.name(), n, float64(n)/secs)
	}
	if len(s.rows) > 0 {
		var minLib, maxLib uint64 = math.MaxUint64, 0
		var maxG uint64
		for _, r := range s.rows {
			minLib, maxLib = min(minLib, libTotal(r)), max(maxLib, libTotal(r))
			maxG = max(maxG, r.mem.goroutines)
		}
		lib := "none (pure Go)"
		if mem.hasLib {
			lib = fmt.Sprintf("%.1f..%.1f MiB", mib(mem.minLib), mib(mem.maxLib))
		}
		fmt.Printf("  memory: RSS %.1f..%.1f MiB, live Go heap %.1f..%.1f MiB, library heap %s, admission slots (library-reported) %.1f..%.1f KiB, goroutines max %d\n",
			mib(mem.minRSS), mib(mem.maxRSS), mib(mem.minHeap), mib(mem.maxHeap), lib, float64(minLib)/1024, float64(maxLib)/1024, maxG)
	}
	switch {
	case mem.checked && cfg.memCheck:
		fmt.Printf("  memory bound (warm-up = first %d samples, checked = last %d): RSS max %.1f MiB <= %.1f MiB, live Go heap max %.1f MiB <= %.1f MiB%s (warm-up max + %.0f%% + %.0f MiB)\n",
			mem.warmupN, mem.lastN, mib(mem.lastRSS), mib(mem.bound), mib(mem.lastHeap), mib(mem.hcap), libBound(mem), cfg.memPct, cfg.memMiB)
	case mem.checked:
		fmt.Printf("  memory bound %s: RSS max %.1f MiB (bound %.1f), live Go heap max %.1f MiB (bound %.1f)%s\n", mem.why,
			mib(mem.lastRSS), mib(mem.bound), mib(mem.lastHeap), mib(mem.hcap), libBound(mem))
	default:
		fmt.Printf("  memory bound not checked: %s\n", mem.why)
	}
	for _, sys := range systems {
		if n, ok := sys.(interface{ notes() []string }); ok {
			for _, line := range n.notes() {
				fmt.Printf("  %s: %s\n", sys.name(), line)
			}
		}
	}
	var parts []string
	for g := 0; g < checkGroups; g++ {
		parts = append(parts, fmt.Sprintf("%d %s", chk.passed[g].Load(), groupNames[g]))
	}
	fmt.Printf("  checks passed: %s\n", strings.Join(parts, ", "))
	if cfg.csvPath != "" {
		fmt.Printf("  samples: %s\n", cfg.csvPath)
	}
	if cfg.svgPath != "" {
		fmt.Printf("  chart: %s\n", cfg.svgPath)
	}
	if n := chk.total.Load(); n != 0 {
		fmt.Printf("\nwksoak: FAIL: %d violation(s)", n)
		if n > maxFails {
			fmt.Printf(" (the first %d)", maxFails)
		}
		fmt.Println(":")
		chk.mu.Lock()
		for _, f := range chk.fails {
			fmt.Println("  -", f)
		}
		chk.mu.Unlock()
		return
	}
	fmt.Println("\nwksoak: PASS")
}

// line is one polyline of a chart.
type line struct {
	label string
	color string
	ys    []float64
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}

// libBound describes the library heap's bound, where the build has one.
func libBound(mem memResult) string {
	if !mem.hasLib {
		return ""
	}
	return fmt.Sprintf(", library heap max %.1f MiB <= %.1f MiB", mib(mem.lastLib), mib(mem.libCap))
}

// writeSVG draws two charts, one above the other: memory (MiB) and
// throughput (operations per second per system, between samples), against
// the run's time.
func writeSVG(path string, s *sampler, systems []system) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	xs := make([]float64, len(s.rows))
	mem := []line{{label: "RSS"}, {label: "Go heap (objects)"}, {label: "Go heap (live)"}, {label: "Go runtime total"},
		{label: "admission slots (library)"}, {label: "library heap"}}
	for i, r := range s.rows {
		xs[i] = r.t
		mem[0].ys = append(mem[0].ys, mib(r.mem.rss))
		mem[1].ys = append(mem[1].ys, mib(r.mem.goHeap))
		mem[2].ys = append(mem[2].ys, mib(r.mem.liveHeap))
		mem[3].ys = append(mem[3].ys, mib(r.mem.goTotal))
		mem[4].ys = append(mem[4].ys, mib(libTotal(r)))
		mem[5].ys = append(mem[5].ys, mib(r.mem.libHeap))
	}
	if len(s.rows) > 0 && !s.rows[0].mem.hasLib {
		mem = mem[:5] // the pure-Go build links no library
	}
	var tput []line
	for j, sys := range systems {
		l := line{label: sys.name()}
		for i := range s.rows {
			if i == 0 {
				l.ys = append(l.ys, math.NaN())
				continue
			}
			dt := s.rows[i].t - s.rows[i-1].t
			if dt <= 0 {
				l.ys = append(l.ys, math.NaN())
				continue
			}
			l.ys = append(l.ys, float64(s.rows[i].ops[j]-s.rows[i-1].ops[j])/dt)
		}
		tput = append(tput, l)
	}
	var b strings.Builder
	const w, h = 960, 720
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	chart(&b, 0, "wksoak: memory (MiB)", "MiB", xs, mem)
	chart(&b, h/2, "wksoak: throughput (operations per second, host count)", "ops/s", xs, tput)
	b.WriteString("</svg>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// chart draws one chart in the band starting at y0 (360 px high).
func chart(b *strings.Builder, y0 int, title, unit string, xs []float64, lines []line) {
	const left, right, top, band = 80, 200, 36, 360
	const w = 960
	pw, ph := float64(w-left-right), float64(band-top-50)
	xmax, ymax := 1.0, 1.0
	for _, x := range xs {
		xmax = math.Max(xmax, x)
	}
	for _, l := range lines {
		for _, y := range l.ys {
			if !math.IsNaN(y) {
				ymax = math.Max(ymax, y)
			}
		}
	}
	xstep, ystep := niceCeil(xmax/5), niceCeil(ymax/5)
	ymax = math.Ceil(ymax/ystep) * ystep
	ox, oy := float64(left), float64(y0+top)+ph
	px := func(x float64) float64 { return ox + x/xmax*pw }
	py := func(y float64) float64 { return oy - y/ymax*ph }
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>`+"\n", left, y0+22, esc(title))
	// Axes, grid and ticks.
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", ox, oy, ox+pw, oy)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", ox, oy, ox, oy-ph)
	for y := 0.0; y <= ymax*1.0001; y += ystep {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", ox, py(y), ox+pw, py(y))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", ox-6, py(y)+4, fmtNum(y))
	}
	for x := 0.0; x <= xmax*1.0001; x += xstep {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", px(x), oy, px(x), oy+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(x), oy+18, fmtNum(x))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">time (s)</text>`+"\n", ox+pw/2, oy+36)
	fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="middle" transform="rotate(-90 %d %.1f)">%s</text>`+"\n",
		18, oy-ph/2, 18, oy-ph/2, esc(unit))
	for i, l := range lines {
		color := palette[i%len(palette)]
		var pts []string
		for j, y := range l.ys {
			if j < len(xs) && !math.IsNaN(y) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(xs[j]), py(y)))
			}
		}
		if len(pts) > 0 {
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		}
		ly := float64(y0+top) + 16*float64(i)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n", ox+pw+14, ly, ox+pw+34, ly, color)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", ox+pw+40, ly+4, esc(l.label))
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func fmtNum(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.4gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.4gk", v/1e3)
	}
	return fmt.Sprintf("%.4g", v)
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func itoa(i int) string { return strconv.Itoa(i) }

// libTotal is the library-reported memory of a sample, over the systems
// (only the admission slots report theirs).
func libTotal(r row) uint64 {
	var n uint64
	for _, v := range r.lib {
		n += v
	}
	return n
}
