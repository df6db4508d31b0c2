package sm

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/routing"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// reroutePhases are the phases a reroute is timed in, in their order:
// nuesm_reroute_phase_duration_seconds{phase} and the "reroute done" log
// line's phases name the same ones. A repaired or kept routing times
// its own route and verify within repair.
var reroutePhases = []string{"parse", "jobs", "repair", "route", "verify", "measure", "diff", "publish", "plan"}

// Metrics are the daemon's Prometheus metrics, on a registry of their own
// (names nuesm_<subsystem>_<name>_<unit>, STYLE.md).
type Metrics struct {
	Registry *prometheus.Registry

	reroutes     *prometheus.CounterVec
	duration     prometheus.Histogram
	phase        *prometheus.HistogramVec
	switches     prometheus.Gauge
	terminals    prometheus.Gauge
	vls          prometheus.Gauge
	verified     prometheus.Gauge
	maxEFI       prometheus.Gauge
	avgHops      prometheus.Gauge
	effEFI       prometheus.Gauge
	darkFiber    prometheus.Gauge
	jobs         prometheus.Gauge
	planSteps    prometheus.Gauge
	planWrites   prometheus.Gauge
	planBlocks   prometheus.Gauge
	slurmErrors  prometheus.Counter
	unknownHosts prometheus.Gauge
	lastSuccess  prometheus.Gauge
	generation   prometheus.Gauge
	triggerCount *prometheus.CounterVec
	engine       *prometheus.GaugeVec
}

// NewMetrics creates and registers the metrics.
func NewMetrics() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{Registry: r}
	f := func(c prometheus.Collector) { r.MustRegister(c) }
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		f(g)
		return g
	}
	m.reroutes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nuesm_reroutes_total",
		Help: "Reroutes by result: published (new tables), unchanged (nothing to publish), failed (last good tables kept)."}, []string{"result"})
	f(m.reroutes)
	for _, res := range []string{"published", "unchanged", "failed"} {
		m.reroutes.WithLabelValues(res)
	}
	m.duration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "nuesm_reroute_duration_seconds",
		Help: "Duration of whole reroutes.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)})
	f(m.duration)
	m.phase = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "nuesm_reroute_phase_duration_seconds",
		Help:    "Duration of each reroute phase (" + strings.Join(reroutePhases, ", ") + "; repair spans the repair's route and verify), as the reroute's log line lists them.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 20)}, []string{"phase"})
	f(m.phase)
	for _, ph := range reroutePhases {
		m.phase.WithLabelValues(ph) // export every phase from the start
	}
	m.switches = gauge("nuesm_fabric_switches", "Switches in the routed fabric.")
	m.terminals = gauge("nuesm_fabric_terminals", "CA and router ports in the routed fabric.")
	m.vls = gauge("nuesm_routing_vls", "VLs the published routing uses.")
	m.verified = gauge("nuesm_routing_verified", "1 when the published routing passed the verifier.")
	m.maxEFI = gauge("nuesm_routing_max_efi_paths", "Largest number of terminal paths on one channel (edge forwarding index).")
	m.avgHops = gauge("nuesm_routing_avg_hops", "Average switch-to-switch hops between terminals.")
	m.effEFI = gauge("nuesm_sar_effective_efi_paths", "Largest number of intra-job paths on one channel, all running jobs together.")
	m.darkFiber = gauge("nuesm_sar_dark_fiber_ratio", "Share of switch-to-switch cables no running job's paths use (0..1).")
	m.jobs = gauge("nuesm_sar_jobs", "Running multi-switch jobs the routing considers.")
	m.planSteps = gauge("nuesm_plan_steps", "Steps of the last update plan.")
	m.planWrites = gauge("nuesm_plan_writes", "LFT entries the last update plan writes.")
	m.planBlocks = gauge("nuesm_plan_blocks", "64-entry LFT blocks the last update plan writes.")
	m.slurmErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "nuesm_slurm_poll_errors_total", Help: "Failed queries of the SLURM job source."})
	f(m.slurmErrors)
	m.unknownHosts = gauge("nuesm_slurm_unknown_hosts", "Hosts of running SLURM jobs that are not on the routed fabric (listed in /status slurm_unknown_hosts).")
	m.lastSuccess = gauge("nuesm_last_success_timestamp_seconds", "Unix time of the last reroute that succeeded (published or unchanged).")
	m.generation = gauge("nuesm_published_generation", "Number of the published table generation.")
	m.triggerCount = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nuesm_reroute_triggers_total",
		Help: "Reroute triggers by source."}, []string{"source"})
	f(m.triggerCount)
	for _, src := range triggerLabels {
		m.triggerCount.WithLabelValues(src)
	}
	m.engine = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "nuesm_routing_engine_info",
		Help: "1 for the engine that produced the published routing; fallback=\"true\" when it is not the chain's first."}, []string{"engine", "chain", "fallback"})
	f(m.engine)
	f(buildInfo())
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// buildInfo is nuesm_build_info: the module version and VCS revision the
// binary was built from.
func buildInfo() prometheus.Collector {
	version, revision := "(devel)", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "nuesm_build_info", Help: "1; labels: the version and VCS revision nuesm was built from, and the Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()}})
	g.Set(1)
	return g
}

// setEngine records the engine of the published routing.
func (m *Metrics) setEngine(chain, engine string) {
	m.engine.Reset()
	base, _ := strings.CutSuffix(engine, repairSuffix) // a repair is no fallback
	m.engine.WithLabelValues(engine, chain, strconv.FormatBool(!fromFirst(chain, base))).Set(1)
}

// fromFirst reports whether tables of engine came from the chain's first
// engine: that engine or, when it is best, one of the engines it compares
// (named by their specs, "nue:share=switchlid").
func fromFirst(chain, engine string) bool {
	spec, _, _ := strings.Cut(chain, ",")
	if es, err := routing.NewChain(spec, nil); err == nil {
		if b, ok := es[0].(routing.Best); ok {
			return slices.Contains(b.Of, engine)
		}
	}
	first, _, _ := strings.Cut(spec, ":")
	return strings.TrimSpace(first) == engine
}

// triggerLabels are the values of the trigger metric's "source" label:
// the daemon's own triggers, the SLURM hooks' reasons (contrib/slurm),
// and "http-other" and "other" for every other reason, so that clients
// cannot grow the number of series.
var triggerLabels = []string{"start", "fabric-changed", "fabric-discovered", "sighup", "output-repair", "publish-retry", "slurm-jobs-changed",
	"http", "http-prolog", "http-epilog", "http-hook", "http-other", "other"}

// triggerLabel returns the label value of a trigger reason.
func triggerLabel(reason string) string {
	switch {
	case slices.Contains(triggerLabels, reason):
		return reason
	case strings.HasPrefix(reason, "http-"):
		return "http-other"
	}
	return "other"
}

// countTrigger counts a reroute trigger by its label.
func (m *Metrics) countTrigger(reason string) {
	m.triggerCount.WithLabelValues(triggerLabel(reason)).Inc()
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}
