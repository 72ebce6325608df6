package wkprometheus_test

// One Prometheus registry holding WuKongIM's own families beside wkcore's
// collectors, one per package, as a host does.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/wukongim/wkcore/go/coord"
	"github.com/wukongim/wkcore/go/deliverytag"
	"github.com/wukongim/wkcore/go/metrics"
	"github.com/wukongim/wkcore/go/mqttsession"
	"github.com/wukongim/wkcore/go/multiraft"
	wkprometheus "github.com/wukongim/wkcore/go/prometheus"
)

// hostOwnerFamilies registers the owner families the way WuKongIM's own
// metrics package declares them (its help texts, its node const labels),
// fed from an OwnerSweeper's Observe hook.
func hostOwnerFamilies(t *testing.T, reg *prometheus.Registry) func(mqttsession.OwnerSweepObservation) {
	t.Helper()
	labels := prometheus.Labels{"node_id": "1", "node_name": "node"}
	sweep := prometheus.NewCounterVec(prometheus.CounterOpts{Name: mqttsession.FamilyOwnerSweep,
		Help:        "Local owner sweep turns, visited owners and failed turns; visits are not retirement proofs.",
		ConstLabels: labels}, []string{"event"})
	work := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: mqttsession.FamilyOwnerWork,
		Help:        "Last sampled aggregate local owner state; unresolved effects remain retained across sweep shutdown.",
		ConstLabels: labels}, []string{"state"})
	reg.MustRegister(sweep, work)
	return func(o mqttsession.OwnerSweepObservation) {
		sweep.WithLabelValues("turns").Inc()
		sweep.WithLabelValues("visited").Add(float64(o.Visited))
		sweep.WithLabelValues("failures").Add(float64(o.Failures))
		work.WithLabelValues("held").Set(float64(o.Owners.Held))
		work.WithLabelValues("operations").Set(float64(o.Owners.Operations))
	}
}

// exercise makes every package count something in the process-wide
// registry: an admission, a claim, an owner sweep, a tag look-up.
func exercise(t *testing.T, observe func(mqttsession.OwnerSweepObservation)) {
	t.Helper()
	q, err := multiraft.NewControlQueue[int](7, multiraft.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	_ = q.SetLeader()
	_ = q.Admit(multiraft.ControlPropose, multiraft.ProposalClassForeground, 1)
	l, err := coord.NewLedger(coord.LedgerConfig{Kind: coord.KindClaim, Capacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Insert([]byte("k"), 1, 1, 100, 1); err != nil {
		t.Fatal(err)
	}
	owners, err := mqttsession.NewOwners(mqttsession.OwnerOptions{NodeID: 1, BootID: "boot", Capacity: 4,
		MaxOperations: 1, PendingTimeout: time.Minute, MaxLease: time.Minute, CloseRetry: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := mqttsession.NewOwnerSweeper(mqttsession.OwnerSweeperOptions{Owners: owners, Observe: observe})
	if err != nil {
		t.Fatal(err)
	}
	observe(w.Turn(context.Background()))
	c, err := deliverytag.NewCache(deliverytag.CacheOptions{LocalNodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _, _ = c.Lookup(deliverytag.TagRef{ChannelKey: "c", TagKey: "k"})
}

func sources(t *testing.T) (mr, co metrics.Source) {
	t.Helper()
	m, err := multiraft.GlobalMetrics()
	if err != nil {
		t.Fatal(err)
	}
	c, err := coord.GlobalMetrics()
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

// Each package's process-wide source reports only its own families, so one
// collector per package scrapes without a duplicate, in both builds.
func TestOneCollectorPerPackage(t *testing.T) {
	exercise(t, func(mqttsession.OwnerSweepObservation) {})
	mr, co := sources(t)
	for _, c := range []struct {
		src    metrics.Source
		prefix string
	}{{mr, "wukongim_slot_"}, {co, "wkcore_coord_"}, {mqttsession.Metrics, "wukongim_mqtt_owner_"},
		{deliverytag.Metrics, "wukongim_delivery_tag"}} {
		fams, err := c.src.Families()
		if err != nil {
			t.Fatal(err)
		}
		if len(fams) == 0 {
			t.Fatalf("no %s families", c.prefix)
		}
		for _, f := range fams {
			if !strings.HasPrefix(f.Name, c.prefix) {
				t.Fatalf("the %s source reports %s", c.prefix, f.Name)
			}
		}
	}
	reg := prometheus.NewRegistry()
	for _, src := range []metrics.Source{mr, co, mqttsession.Metrics, deliverytag.Metrics} {
		reg.MustRegister(wkprometheus.New(src))
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("one collector per package: %v", err)
	}
}

// WuKongIM keeps its own owner families (fed by the sweeper's Observe);
// wkcore's collector for the owner registry then leaves those two out. The
// same registry with both fails its scrape: one name, two help texts.
func TestHostKeepsItsOwnOwnerFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	observe := hostOwnerFamilies(t, reg)
	exercise(t, observe)
	mr, co := sources(t)
	reg.MustRegister(wkprometheus.New(metrics.Exclude(mqttsession.Metrics, mqttsession.HostFamilies()...)),
		wkprometheus.New(mr), wkprometheus.New(co), wkprometheus.New(deliverytag.Metrics))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("host families beside wkcore's: %v", err)
	}
	for _, f := range fams {
		if f.GetName() == mqttsession.FamilyOwnerWork &&
			!strings.HasPrefix(f.GetHelp(), "Last sampled aggregate local owner state") {
			t.Fatalf("the owner work family is not the host's: %q", f.GetHelp())
		}
	}

	both := prometheus.NewRegistry()
	hostOwnerFamilies(t, both)(mqttsession.OwnerSweepObservation{})
	both.MustRegister(wkprometheus.New(mqttsession.Metrics))
	if _, err := both.Gather(); err == nil {
		t.Fatal("two owner work families in one registry scraped without an error")
	}
}
