package metrictest

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestValue reads a counter, a gauge and a histogram by their label, and
// fails on a label value the registry does not have.
func TestValue(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c_total", Help: "c"}, []string{"result"})
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "g", Help: "g"}, []string{"phase"})
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "h_seconds", Help: "h"}, []string{"phase"})
	reg.MustRegister(c, g, h)
	c.WithLabelValues("ok").Add(2)
	c.WithLabelValues("failed").Inc()
	g.WithLabelValues("idle").Set(3)
	h.WithLabelValues("route").Observe(0.5)
	h.WithLabelValues("route").Observe(7)
	h.WithLabelValues("verify").Observe(1)
	for _, tc := range []struct {
		name, label, value string
		want               float64
	}{
		{"c_total", "result", "ok", 2}, {"c_total", "result", "failed", 1},
		{"g", "phase", "idle", 3}, {"h_seconds", "phase", "route", 2}, {"h_seconds", "phase", "verify", 1},
	} {
		if got := Value(t, reg, tc.name, tc.label, tc.value); got != tc.want {
			t.Errorf("%s{%s=%q} = %v, want %v", tc.name, tc.label, tc.value, got, tc.want)
		}
	}
	for _, missing := range [][3]string{{"c_total", "result", "stuck"}, {"absent_total", "result", "ok"}, {"g", "result", "idle"}} {
		rec := &recorder{TB: t}
		Value(rec, reg, missing[0], missing[1], missing[2])
		if rec.failure == "" {
			t.Errorf("%s{%s=%q}: no failure for a metric the registry lacks", missing[0], missing[1], missing[2])
		}
	}
}

// recorder notes a failure instead of ending the test.
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failure = fmt.Sprintf(format, args...) }
