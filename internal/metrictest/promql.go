package metrictest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// TargetLabels are the labels Prometheus adds to every scraped series:
// queries may match and group by them whatever the exporter exports.
var TargetLabels = []string{"job", "instance"}

// Selector is one metric a PromQL expression reads, with its label
// matchers.
type Selector struct {
	Name     string
	Matchers []Matcher
}

// Matcher is one label matcher of a selector: Op is =, !=, =~ or !~.
type Matcher struct {
	Label, Op, Value string
}

// Use is what a PromQL expression (or a Grafana label_values query) needs
// from the exporter: the metrics it selects and the labels it groups by.
type Use struct {
	Selectors []Selector
	By        []string // labels of by (...) clauses and label_values
	Without   []string // labels of without (...) clauses
}

var (
	selectorRE    = regexp.MustCompile(`\b(nuesm_[a-zA-Z0-9_]+)\s*(\{[^}]*\})?`)
	matcherRE     = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
	groupingRE    = regexp.MustCompile(`\b(by|without)\s*\(([^)]*)\)`)
	labelValuesRE = regexp.MustCompile(`\blabel_values\(\s*nuesm_[a-zA-Z0-9_]+(?:\{[^}]*\})?\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)`)
	literalAltRE  = regexp.MustCompile(`^[a-zA-Z0-9_.:-]+(\|[a-zA-Z0-9_.:-]+)*$`)
)

// ParseUse returns what expr reads. It knows the PromQL the contrib files
// write (selectors with quoted matchers, by/without clauses, Grafana's
// label_values), not the whole language: the metric names must start
// with nuesm_.
func ParseUse(expr string) Use {
	var u Use
	for _, m := range selectorRE.FindAllStringSubmatch(expr, -1) {
		s := Selector{Name: m[1]}
		for _, mm := range matcherRE.FindAllStringSubmatch(m[2], -1) {
			s.Matchers = append(s.Matchers, Matcher{Label: mm[1], Op: mm[2], Value: mm[3]})
		}
		u.Selectors = append(u.Selectors, s)
	}
	for _, m := range groupingRE.FindAllStringSubmatch(expr, -1) {
		for l := range strings.SplitSeq(m[2], ",") {
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			if m[1] == "by" {
				u.By = append(u.By, l)
			} else {
				u.Without = append(u.Without, l)
			}
		}
	}
	for _, m := range labelValuesRE.FindAllStringSubmatch(expr, -1) {
		u.By = append(u.By, m[1])
	}
	return u
}

// series is what a registry exports under one name a query can use
// (a histogram's _bucket, _sum and _count too): its label names and the
// values seen of each.
type series struct {
	labels map[string]map[string]bool
}

// exported indexes fams by every name a query can select.
func exported(fams []*dto.MetricFamily) map[string]series {
	out := map[string]series{}
	for _, f := range fams {
		s := series{labels: map[string]map[string]bool{}}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if s.labels[l.GetName()] == nil {
					s.labels[l.GetName()] = map[string]bool{}
				}
				s.labels[l.GetName()][l.GetValue()] = true
			}
		}
		if len(f.GetMetric()) == 0 {
			continue // a vector without children: nothing to select yet
		}
		out[f.GetName()] = s
		if f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY {
			out[f.GetName()+"_sum"], out[f.GetName()+"_count"] = s, s
		}
		if f.GetType() == dto.MetricType_HISTOGRAM {
			b := series{labels: map[string]map[string]bool{"le": {}}}
			for k, v := range s.labels {
				b.labels[k] = v
			}
			out[f.GetName()+"_bucket"] = b
		}
	}
	return out
}

// Problems returns what in expr the gathered families do not export: a
// metric without series, a matcher on a label the metric lacks, an
// equality matcher (or a regex of plain alternatives) naming a value no
// series has, a by/without label or a legend label (Grafana's
// {{label}}) no selected metric carries. Labels in TargetLabels are
// always there.
func Problems(fams []*dto.MetricFamily, expr string, legendLabels ...string) []string {
	ex := exported(fams)
	u := ParseUse(expr)
	var probs []string
	if len(u.Selectors) == 0 {
		probs = append(probs, "selects no nuesm_ metric")
	}
	has := func(label string) bool {
		if slices.Contains(TargetLabels, label) {
			return true
		}
		for _, s := range u.Selectors {
			if _, ok := ex[s.Name].labels[label]; ok {
				return true
			}
		}
		return false
	}
	for _, s := range u.Selectors {
		probs = append(probs, selectorProblems(ex, s)...)
	}
	for _, l := range slices.Concat(u.By, u.Without) {
		if !has(l) {
			probs = append(probs, fmt.Sprintf("groups by label %q, which none of its metrics has", l))
		}
	}
	for _, l := range legendLabels {
		if !has(l) {
			probs = append(probs, fmt.Sprintf("legend names label {{%s}}, which none of its metrics has", l))
		} else if (len(u.By) > 0 && !slices.Contains(u.By, l)) || slices.Contains(u.Without, l) {
			probs = append(probs, fmt.Sprintf("legend names label {{%s}}, which its aggregation drops", l))
		}
	}
	return probs
}

// selectorProblems checks one selector against what is exported.
func selectorProblems(ex map[string]series, s Selector) []string {
	se, ok := ex[s.Name]
	if !ok {
		return []string{fmt.Sprintf("%s: no such metric exported", s.Name)}
	}
	var probs []string
	for _, m := range s.Matchers {
		if slices.Contains(TargetLabels, m.Label) {
			continue
		}
		values, ok := se.labels[m.Label]
		if !ok {
			probs = append(probs, fmt.Sprintf("%s: no label %q", s.Name, m.Label))
			continue
		}
		var want []string
		switch {
		case m.Op == "=":
			want = []string{m.Value}
		case m.Op == "=~" && literalAltRE.MatchString(m.Value):
			want = strings.Split(m.Value, "|")
		}
		for _, v := range want {
			if !values[v] {
				probs = append(probs, fmt.Sprintf("%s: no series with %s=%q (exported: %s)", s.Name, m.Label, v, strings.Join(sortedKeys(values), ", ")))
			}
		}
	}
	return probs
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
