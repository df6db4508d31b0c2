package metrictest

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestParseUse reads the selectors, matchers and grouping labels of the
// PromQL forms the contrib files use.
func TestParseUse(t *testing.T) {
	u := ParseUse(`histogram_quantile(0.9, sum by (le, phase) (rate(nuesm_x_seconds_bucket{job=~"$job", phase!="a"}[15m]))) and nuesm_y == 0`)
	if len(u.Selectors) != 2 || u.Selectors[0].Name != "nuesm_x_seconds_bucket" || u.Selectors[1].Name != "nuesm_y" {
		t.Fatalf("selectors %+v", u.Selectors)
	}
	want := []Matcher{{"job", "=~", "$job"}, {"phase", "!=", "a"}}
	if !slices.Equal(u.Selectors[0].Matchers, want) {
		t.Errorf("matchers %+v, want %+v", u.Selectors[0].Matchers, want)
	}
	if !slices.Equal(u.By, []string{"le", "phase"}) {
		t.Errorf("by %v", u.By)
	}
	if u = ParseUse(`label_values(nuesm_z_total, job)`); !slices.Equal(u.By, []string{"job"}) || len(u.Selectors) != 1 {
		t.Errorf("label_values: %+v", u)
	}
}

// TestProblems passes the queries a registry serves and names what is
// wrong in the others: a renamed metric, a label or label value it does
// not export, a grouping or legend label no metric carries.
func TestProblems(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nuesm_r_total", Help: "c"}, []string{"result"})
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "nuesm_p_seconds", Help: "h"}, []string{"phase"})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "nuesm_g", Help: "g"})
	empty := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "nuesm_e", Help: "e"}, []string{"x"})
	reg.MustRegister(c, h, g, empty)
	c.WithLabelValues("ok")
	c.WithLabelValues("failed")
	h.WithLabelValues("route").Observe(1)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr   string
		legend []string
		want   string // "" : no problem; else a part of the first problem
	}{
		{`increase(nuesm_r_total{result="failed", job=~"$job"}[10m]) > 0`, []string{"result"}, ""},
		{`nuesm_r_total{result=~"ok|failed"}`, nil, ""},
		{`histogram_quantile(0.9, sum by (le, phase) (rate(nuesm_p_seconds_bucket[5m])))`, []string{"phase"}, ""},
		{`nuesm_p_seconds_sum / nuesm_p_seconds_count`, nil, ""},
		{`time() - nuesm_g{instance="a"}`, nil, ""},
		{`label_values(nuesm_r_total, job)`, nil, ""},
		{`nuesm_r_totals`, nil, "nuesm_r_totals: no such metric"},
		{`nuesm_e == 1`, nil, "nuesm_e: no such metric"},
		{`nuesm_r_total{outcome="failed"}`, nil, `no label "outcome"`},
		{`nuesm_r_total{result="error"}`, nil, `result="error"`},
		{`nuesm_r_total{result=~"ok|stuck"}`, nil, `result="stuck"`},
		{`sum by (phase) (nuesm_r_total)`, nil, `groups by label "phase"`},
		{`nuesm_g`, []string{"engine"}, "{{engine}}"},
		{`sum by (le) (rate(nuesm_p_seconds_bucket[5m]))`, []string{"phase"}, "aggregation drops"},
		{`time()`, nil, "selects no nuesm_ metric"},
	} {
		probs := Problems(fams, tc.expr, tc.legend...)
		switch {
		case tc.want == "" && len(probs) > 0:
			t.Errorf("%s: %v", tc.expr, probs)
		case tc.want != "" && (len(probs) == 0 || !strings.Contains(probs[0], tc.want)):
			t.Errorf("%s: problems %q, want one with %q", tc.expr, probs, tc.want)
		}
	}
}
