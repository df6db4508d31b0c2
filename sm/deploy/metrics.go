package deploy

import (
	"github.com/nuesm/nuesm/plan"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the deployer's Prometheus metrics (nuesm_deploy_*,
// nuesm_fabric_discover_*).
type metrics struct {
	phase       *prometheus.GaugeVec
	target      prometheus.Gauge
	deployed    prometheus.Gauge
	step        prometheus.Gauge
	steps       prometheus.Gauge
	stepSeconds *prometheus.HistogramVec
	stepsTotal  *prometheus.CounterVec
	rollouts    *prometheus.CounterVec
	lastProven  prometheus.Gauge
	heldSafe    prometheus.Gauge
	heldLost    prometheus.Gauge
	heldMatch   prometheus.Gauge
	discover    *prometheus.CounterVec
	discoverDur prometheus.Histogram
	changes     prometheus.Counter
	lastChange  prometheus.Gauge
	smpBlocks   prometheus.Counter
	smpFailures prometheus.Counter
}

var phases = []string{PhaseStarting, PhaseIdle, PhaseRollout, PhaseStuck, PhaseRefused, PhaseNoOpenSM}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		reg.MustRegister(g)
		return g
	}
	m.phase = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "nuesm_deploy_phase",
		Help: "1 for the rollout's current phase: idle, rolling, stuck, refused, no-opensm, starting."}, []string{"phase"})
	reg.MustRegister(m.phase)
	for _, p := range phases {
		m.phase.WithLabelValues(p)
	}
	m.target = gauge("nuesm_deploy_target_generation", "Generation being rolled out to the switches (or last tried).")
	m.deployed = gauge("nuesm_deploy_deployed_generation", "Last generation whose every step the switches were proven to hold.")
	m.step = gauge("nuesm_deploy_step", "Steps of the current plan done.")
	m.steps = gauge("nuesm_deploy_steps", "Steps of the current plan.")
	m.stepSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "nuesm_deploy_step_duration_seconds",
		Help:    "Duration of rollout steps by kind (write: staged until read back and verified; barrier, pause, resume: drains).",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"kind"})
	reg.MustRegister(m.stepSeconds)
	for k := plan.Write; k <= plan.Resume; k++ {
		m.stepSeconds.WithLabelValues(k.String()) // every kind from the start
	}
	m.stepsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nuesm_deploy_steps_total",
		Help: "Rollout steps by result: proven, failed, superseded (a newer generation arrived while the step waited on switches that did not answer)."}, []string{"result"})
	reg.MustRegister(m.stepsTotal)
	m.rollouts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nuesm_deploy_rollouts_total",
		Help: "Rollouts by result: deployed, stuck, refused, replanned (a newer generation arrived), no-opensm."}, []string{"result"})
	reg.MustRegister(m.rollouts)
	for _, r := range []string{"deployed", "stuck", "refused", "replanned", "no-opensm"} {
		m.rollouts.WithLabelValues(r)
	}
	for _, r := range []string{"proven", "failed", "superseded"} {
		m.stepsTotal.WithLabelValues(r)
	}
	m.lastProven = gauge("nuesm_deploy_last_proven_timestamp_seconds", "Unix time the switches' tables were last read back and verified.")
	m.heldSafe = gauge("nuesm_deploy_held_safe", "1 when the tables read back from the switches have no loop and no CDG cycle.")
	m.heldLost = gauge("nuesm_deploy_held_undelivered_pairs", "Connected pairs the tables read back from the switches do not deliver.")
	m.heldMatch = gauge("nuesm_deploy_held_matches_deployed", "1 when the switches hold exactly the deployed generation's tables.")
	m.discover = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nuesm_fabric_discover_total",
		Help: "Discoveries of the fabric by result: unchanged, changed, failed, superseded (a link's trap came during the scan, or the scan was abandoned for it)."}, []string{"result"})
	reg.MustRegister(m.discover)
	for _, r := range []string{"unchanged", "changed", "failed", "superseded"} {
		m.discover.WithLabelValues(r)
	}
	m.discoverDur = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "nuesm_fabric_discover_duration_seconds",
		Help: "Duration of ibnetdiscover runs.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)})
	reg.MustRegister(m.discoverDur)
	m.changes = prometheus.NewCounter(prometheus.CounterOpts{Name: "nuesm_fabric_changes_total", Help: "Fabric changes found by discovery."})
	reg.MustRegister(m.changes)
	m.smpBlocks = prometheus.NewCounter(prometheus.CounterOpts{Name: "nuesm_deploy_smp_blocks_written_total",
		Help: "LFT blocks the deployer wrote with SMPs (opensm.apply = smp) and read back holding the step's entries."})
	m.smpFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "nuesm_deploy_smp_agent_failures_total",
		Help: "Batches of SMPs the agent could not carry out (it did not start, died twice, or did not answer in time); each stops its step."})
	reg.MustRegister(m.smpBlocks, m.smpFailures)
	m.lastChange = gauge("nuesm_fabric_last_change_timestamp_seconds", "Unix time discovery last found the fabric changed.")
	return m
}

func (m *metrics) setPhase(p string) {
	for _, q := range phases {
		v := 0.0
		if q == p {
			v = 1
		}
		m.phase.WithLabelValues(q).Set(v)
	}
}
