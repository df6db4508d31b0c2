package deploy

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/internal/metrictest"
	_ "github.com/nuesm/nuesm/nue"
	_ "github.com/nuesm/nuesm/sar"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/topo"
	dto "github.com/prometheus/client_model/go"
)

var contribDir = filepath.Join("..", "..", "contrib")

// TestContribQueries runs the daemon with the deployer's metrics
// registered through what an operator's day holds: a routing by a
// fallback engine, a SLURM job's start and end announced by the
// contrib/slurm hooks (squeue a stand-in script), a fabric change and a
// reroute that fails on a garbage dump. Every expression of
// contrib/prometheus/nuesm-alerts.yml and every query of
// contrib/grafana/nuesm-dashboard.json must then select exported series:
// a metric renamed, a label or a label value changed fails here.
func TestContribQueries(t *testing.T) {
	m := sm.NewMetrics()
	if _, err := New(Config{Conf: "x", LogFile: "x"}.Defaults(t.TempDir()), nil, m.Registry); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dump := filepath.Join(dir, "fabric.topo")
	writeFatTree(t, dump, 0)
	jobs := filepath.Join(dir, "jobs")
	if err := os.WriteFile(jobs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := sm.Config{Fabric: dump, Output: filepath.Join(dir, "out"), Engines: "dor,sar-nue", Listen: "127.0.0.1:0",
		FabricPoll: sm.Duration{Duration: sm.MinFabricPoll},
		SLURM:      sm.SLURMConfig{Enabled: true, Poll: sm.Duration{Duration: -1}, Squeue: squeueScript(t, jobs)}}
	src, err := sm.NewSLURMJobs(cfg.Defaults().SLURM)
	if err != nil {
		t.Fatal(err)
	}
	srv := runServer(t, cfg, sm.WithMetrics(m), sm.WithJobSource(src))
	waitStatus(t, srv, "published at start", func(st sm.Status) bool { return st.Published != nil })

	// A job on two leaves starts, then ends: the hooks reroute for each.
	if err := os.WriteFile(jobs, []byte("7|RUNNING|node[0001,0005]|1:00:00|batch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runHook(t, srv, "prolog")
	waitStatus(t, srv, "routed for the job", func(st sm.Status) bool { return len(st.Published.Jobs) == 1 })
	if err := os.WriteFile(jobs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runHook(t, srv, "epilog")
	waitStatus(t, srv, "routed without the job", func(st sm.Status) bool {
		return st.Published.Jobs != nil && len(st.Published.Jobs) == 0 && st.LastTrigger == "http-epilog"
	})

	// A cable fails; then the dump is overwritten with garbage.
	writeFatTree(t, dump, 1)
	waitStatus(t, srv, "rerouted for the fabric change", func(st sm.Status) bool { return st.LastTrigger == "fabric-changed" })
	if err := os.WriteFile(dump, []byte("not a dump\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, srv, "a failed reroute", func(st sm.Status) bool { return st.Failures > 0 })

	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range contribQueries(t) {
		for _, p := range metrictest.Problems(fams, q.expr, q.legend...) {
			t.Errorf("%s: %s\n\tin %s", q.where, p, q.expr)
		}
	}
	checkDocMetrics(t, fams)
}

// checkDocMetrics checks that every metric the operator's documents name
// is exported, with the labels they list ("nuesm_deploy_phase{phase}").
func checkDocMetrics(t *testing.T, fams []*dto.MetricFamily) {
	t.Helper()
	labels := map[string]map[string]bool{} // name -> its label names
	for _, f := range fams {
		ls := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				ls[l.GetName()] = true
			}
		}
		labels[f.GetName()] = ls
		if f.GetType() == dto.MetricType_HISTOGRAM {
			labels[f.GetName()+"_bucket"], labels[f.GetName()+"_sum"], labels[f.GetName()+"_count"] = ls, ls, ls
		}
	}
	docs := []string{filepath.Join("..", "..", "README.md"), filepath.Join(contribDir, "slurm", "README.md")}
	more, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	nameRE := regexp.MustCompile(`\bnuesm_[a-z0-9_]*[a-z0-9](?:\{([a-z_, ]+)\})?`)
	for _, doc := range append(docs, more...) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			for _, m := range nameRE.FindAllStringSubmatch(line, -1) {
				name := strings.TrimSuffix(m[0], "{"+m[1]+"}")
				ls, ok := labels[name]
				if !ok {
					t.Errorf("%s:%d: names metric %s, which nuesm does not export", doc, i+1, name)
					continue
				}
				for l := range strings.SplitSeq(m[1], ",") {
					if l = strings.TrimSpace(l); l != "" && !ls[l] {
						t.Errorf("%s:%d: names label %s of %s, which it does not have", doc, i+1, l, name)
					}
				}
			}
		}
	}
}

// query is one PromQL expression of a contrib file.
type query struct {
	where  string   // file and rule or panel
	expr   string   // the expression
	legend []string // labels its Grafana legend names
}

// contribQueries returns every expression of the alert rules and every
// query of the dashboard (panels in rows too, and the template
// variables'), failing t on a form it cannot read.
func contribQueries(t *testing.T) []query {
	t.Helper()
	rules := filepath.Join(contribDir, "prometheus", "nuesm-alerts.yml")
	text, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	var qs []query
	alert := ""
	for i, line := range strings.Split(string(text), "\n") {
		l := strings.TrimSpace(line)
		if a, ok := strings.CutPrefix(l, "- alert:"); ok {
			alert = strings.TrimSpace(a)
		}
		if e, ok := strings.CutPrefix(l, "expr:"); ok {
			e = strings.TrimSpace(e)
			if e == "" || strings.ContainsAny(e[:1], "|>'\"") {
				t.Fatalf("%s:%d: expr %q: write it on one line, unquoted, for this check", rules, i+1, e)
			}
			qs = append(qs, query{where: rules + " " + alert, expr: e})
		}
	}
	if n := strings.Count(string(text), "- alert:"); n != len(qs) || n == 0 {
		t.Fatalf("%s: %d alerts, %d expressions read", rules, n, len(qs))
	}
	return append(qs, dashboardQueries(t)...)
}

// dashboardQueries returns the dashboard's queries.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	path := filepath.Join(contribDir, "grafana", "nuesm-dashboard.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr   string `json:"expr"`
			Legend string `json:"legendFormat"`
		} `json:"targets"`
		Panels []panel `json:"panels"`
	}
	var dash struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	legendRE := regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
	var qs []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				var legend []string
				for _, m := range legendRE.FindAllStringSubmatch(tg.Legend, -1) {
					legend = append(legend, m[1])
				}
				qs = append(qs, query{where: path + " panel " + p.Title, expr: tg.Expr, legend: legend})
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, ok := v.Query.(string)
		if !ok {
			t.Fatalf("%s: variable %s: query %v is not a string", path, v.Name, v.Query)
		}
		qs = append(qs, query{where: path + " variable " + v.Name, expr: q})
	}
	if len(qs) == 0 {
		t.Fatalf("%s: no queries read", path)
	}
	return qs
}

// writeFatTree writes topo.FatTree(4, 3) as a dump (hosts node0001…,
// four a leaf), with its first fail cables cut.
func writeFatTree(t *testing.T, path string, fail int) {
	t.Helper()
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := tp.Fabric
	if fail > 0 {
		if f, _, err = topo.InjectFailures(f, topo.FailureSpec{Links: fail, Seed: 1, SkipCritical: true}); err != nil {
			t.Fatal(err)
		}
	}
	tmp := path + ".tmp"
	if err := ibnetdiscover.WriteFile(tmp, f); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// squeueScript writes a stand-in for squeue that prints the file jobs.
func squeueScript(t *testing.T, jobs string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "squeue")
	if err := os.WriteFile(p, []byte("#!/bin/sh\ncat '"+jobs+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// runHook runs contrib/slurm's prolog or epilog hook against srv, as
// slurmctld would.
func runHook(t *testing.T, srv *sm.Server, kind string) {
	t.Helper()
	ibtest.RequirePrograms(t, "curl", "curl")
	cmd := exec.Command(filepath.Join(contribDir, "slurm", "nuesm-"+kind+".sh"))
	cmd.Env = append(os.Environ(), "NUESM_ADDR="+srv.Addr(), "SLURM_JOB_ID=7")
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("%s hook: %v\n%s", kind, err, out)
	}
}

// runServer runs the daemon until the test ends.
func runServer(t *testing.T, cfg sm.Config, opts ...sm.Option) *sm.Server {
	t.Helper()
	srv, err := sm.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	waitStatus(t, srv, "listening", func(sm.Status) bool { return srv.Addr() != "" })
	return srv
}

// waitStatus polls srv's status until cond holds, up to the test's
// deadline.
func waitStatus(t *testing.T, srv *sm.Server, what string, cond func(sm.Status) bool) {
	t.Helper()
	deadline := ibtest.Deadline(t)
	for time.Now().Before(deadline) {
		if cond(srv.Status()) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := srv.Status()
	t.Fatalf("timeout waiting for %s; status: trigger %s, result %s, error %q", what, st.LastTrigger, st.LastResult, st.LastError)
}
