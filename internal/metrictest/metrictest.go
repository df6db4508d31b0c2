// Package metrictest reads the Prometheus metrics a test's registry
// gathers.
package metrictest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Value returns the metric name whose label has value, as g gathers it
// now: a counter's or gauge's value, a histogram's or summary's number
// of observations. It fails t when g has no such metric.
func Value(t testing.TB, g prometheus.Gatherer, name, label, value string) float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != label || l.GetValue() != value {
					continue
				}
				switch {
				case m.GetCounter() != nil:
					return m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					return m.GetGauge().GetValue()
				case m.GetHistogram() != nil:
					return float64(m.GetHistogram().GetSampleCount())
				case m.GetSummary() != nil:
					return float64(m.GetSummary().GetSampleCount())
				}
				return m.GetUntyped().GetValue()
			}
		}
	}
	t.Fatalf("no metric %s{%s=%q}", name, label, value)
	return 0
}
