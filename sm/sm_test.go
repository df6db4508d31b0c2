package sm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/lft"
	_ "github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/topo"
)

// writeFabric writes a generated fabric as a dump (atomically, like an
// admin's cp+mv would).
func writeFabric(t *testing.T, path string, tp *topo.Topology, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := ibnetdiscover.WriteFile(path, tp.Fabric); err != nil {
		t.Fatal(err)
	}
}

// start runs a server in the background; it stops at test end.
func start(t *testing.T, cfg Config, opts ...Option) *Server {
	t.Helper()
	s, _ := serve(t, cfg, opts...)
	return s
}

// serve runs a server in the background until stop (or the test's end).
func serve(t *testing.T, cfg Config, opts ...Option) (s *Server, stop func()) {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.FabricPoll.Duration == 0 {
		cfg.FabricPoll.Duration = MinFabricPoll
	}
	s, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return s, stop
}

// waitFor polls the status until cond holds.
func waitFor(t *testing.T, s *Server, what string, cond func(Status) bool) Status {
	t.Helper()
	deadline := testDeadline(t)
	for time.Now().Before(deadline) {
		if st := s.Status(); cond(st) {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timeout waiting for %s; status %+v", what, s.Status())
	return Status{}
}

// checkPublished verifies that <out>/current is a complete set whose
// tables pass the verifier against the fabric.topo they were made for.
func checkPublished(t *testing.T, out string) *PublishedStatus {
	t.Helper()
	cur := filepath.Join(out, "current")
	b, err := os.ReadFile(filepath.Join(cur, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st PublishedStatus
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	res, err := ibnetdiscover.ParseFile(filepath.Join(cur, "fabric.topo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Fabric.AssignLIDs(0); err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(res.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	r, err := lft.ReadCompactLFTs(openFile(t, filepath.Join(cur, "nuesm.lft")), "nuesm.lft", g, lft.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// OpenSM reads the current generation's dump (opensm_dump "auto"
	// without the deployer): the same tables.
	dump, err := lft.ReadOpenSMLFTsFile(filepath.Join(cur, "opensm-lfts.dump"), g)
	if err != nil {
		t.Fatal(err)
	}
	if !lft.Equal(dump, r) {
		t.Fatal("opensm-lfts.dump and nuesm.lft hold different tables")
	}
	if r.SL, r.NumVLs, err = lft.ReadSLFile(filepath.Join(cur, "nuesm.sl"), g); err != nil {
		t.Fatal(err)
	}
	if r.SL2VL, err = lft.ReadSL2VLFile(filepath.Join(cur, "nuesm.sl2vl"), g); err != nil {
		t.Fatal(err)
	}
	if rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: 8}); err != nil {
		t.Fatalf("published tables fail verification: %v\n%s", err, rep)
	}
	for _, f := range []string{"plan.json"} {
		if _, err := os.Stat(filepath.Join(cur, f)); err != nil {
			t.Fatal(err)
		}
	}
	return &st
}

// openFile opens path for the test's duration.
func openFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestPublishThenUnchanged(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.Torus([]int{3, 4}, 2, false)
	writeFabric(t, fab, tp, err)
	out := filepath.Join(dir, "out")
	s := start(t, Config{Fabric: fab, Output: out})
	st := waitFor(t, s, "first publish", func(st Status) bool { return st.LastResult == resultPublished })
	if st.Published == nil || st.Published.Generation != 1 || !st.Published.Verified {
		t.Fatalf("%+v", st.Published)
	}
	checkPublished(t, out)
	s.Trigger("test")
	waitFor(t, s, "unchanged", func(st Status) bool { return st.Reroutes == 2 })
	if st := s.Status(); st.LastResult != resultUnchanged || st.Published.Generation != 1 {
		t.Fatalf("second reroute: %s, generation %d", st.LastResult, st.Published.Generation)
	}
	// A restart does not republish either.
	s2, err := New(Config{Fabric: fab, Output: out, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Status().Published == nil || s2.Status().Published.Generation != 1 {
		t.Fatal("restart lost the published status")
	}
}

func TestFabricChangesAndFaults(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.Torus([]int{4, 4}, 1, false)
	writeFabric(t, fab, tp, err)
	out := filepath.Join(dir, "out")
	s := start(t, Config{Fabric: fab, Output: out, Engines: "dor"})
	waitFor(t, s, "publish", func(st Status) bool { return st.LastResult == resultPublished })

	// A truncated dump: the reroute fails, the last good set stays.
	b, _ := os.ReadFile(fab)
	if err := os.WriteFile(fab+".tmp", b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fab+".tmp", fab); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "failure on truncated dump", func(st Status) bool { return st.LastResult == resultFailed })
	if !strings.Contains(st.LastError, "parse") || st.Published.Generation != 1 {
		t.Fatalf("truncated: %q, generation %d", st.LastError, st.Published.Generation)
	}
	checkPublished(t, out)

	// A fabric the engine cannot route (DOR on a fat tree): failure again.
	ft, err := topo.FatTree(4, 2, 0)
	writeFabric(t, fab, ft, err)
	st = waitFor(t, s, "failure on unroutable fabric", func(st Status) bool {
		return st.LastResult == resultFailed && strings.Contains(st.LastError, "not applicable")
	})
	if st.Published.Generation != 1 {
		t.Fatal("unroutable fabric replaced the published tables")
	}
	if checkPublished(t, out).Switches != 16 {
		t.Fatal("published set changed")
	}

	// A good fabric again: published as generation 2.
	tp2, err := topo.Torus([]int{4, 5}, 1, false)
	writeFabric(t, fab, tp2, err)
	st = waitFor(t, s, "publish generation 2", func(st Status) bool { return st.LastResult == resultPublished && st.Published.Generation == 2 })
	if checkPublished(t, out).Switches != 20 {
		t.Fatal("generation 2 not current")
	}
	if st.Failures != 2 {
		t.Fatalf("failures %d, want 2", st.Failures)
	}
}

// failingJobs is a job source that is down.
type failingJobs struct{}

func (failingJobs) Fetch(context.Context) (JobSet, error) {
	return nil, errors.New("slurmctld: connection refused")
}

func TestSLURMOutageStillPublishes(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	tp, err := topo.Ring(4, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	if err := ibnetdiscover.Write(&buf, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	m := NewMetrics()
	s := start(t, Config{Output: out, Engines: "sar-nue,nue", SLURM: SLURMConfig{Enabled: true, Poll: Duration{time.Second}}},
		WithDefaultFabric("ring.topo", buf.String()), WithJobSource(failingJobs{}), WithMetrics(m))
	st := waitFor(t, s, "publish without jobs", func(st Status) bool { return st.LastResult == resultPublished })
	if !strings.HasPrefix(st.SLURM, "error") {
		t.Fatalf("SLURM state %q", st.SLURM)
	}
	checkPublished(t, out)
	ibtest.WaitFor(t, "the poll error metric", func() (bool, error) {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return strings.Contains(rec.Body.String(), "nuesm_slurm_poll_errors_total"), nil
	})
}

func TestHTTP(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "f.topo")
	tp, err := topo.Ring(5, 1, nil)
	writeFabric(t, fab, tp, err)
	s, err := New(Config{Fabric: fab, Output: filepath.Join(dir, "out"), Listen: "127.0.0.1:0", Token: "sekret"})
	if err != nil {
		t.Fatal(err)
	}
	h := s.handler()
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	if rec := get("/healthz"); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("healthz before publish: %d", rec.Code)
	}
	post := func(remote, auth string) int {
		req := httptest.NewRequest("POST", "/reroute", nil)
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = remote
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if c := post("127.0.0.1:5555", ""); c != http.StatusAccepted {
		t.Fatalf("loopback POST: %d", c)
	}
	if c := post("[::1]:5555", ""); c != http.StatusAccepted {
		t.Fatalf("IPv6 loopback POST: %d", c)
	}
	if c := post("10.1.2.3:5555", ""); c != http.StatusForbidden {
		t.Fatalf("remote POST without token: %d", c)
	}
	if c := post("10.1.2.3:5555", "Bearer wrong"); c != http.StatusForbidden {
		t.Fatalf("remote POST with wrong token: %d", c)
	}
	if c := post("10.1.2.3:5555", "Bearer sekret"); c != http.StatusAccepted {
		t.Fatalf("remote POST with token: %d", c)
	}
	if rec := get("/reroute"); rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /reroute: %d", rec.Code)
	}
	s.reroute(context.Background(), "test")
	if rec := get("/healthz"); rec.Code != http.StatusOK {
		t.Fatalf("healthz after publish: %d %s", rec.Code, rec.Body)
	}
	var st Status
	if err := json.Unmarshal(get("/status").Body.Bytes(), &st); err != nil || st.Published == nil || st.Published.Engine != "nue" {
		t.Fatalf("status: %v %+v", err, st)
	}
	body := get("/metrics").Body.String()
	for _, m := range []string{"nuesm_reroutes_total{result=\"published\"} 1", "nuesm_routing_verified 1", "nuesm_fabric_switches 5", "nuesm_reroute_phase_duration_seconds_bucket"} {
		if !strings.Contains(body, m) {
			t.Errorf("metrics lack %q", m)
		}
	}
}

func TestTriggersCoalesce(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "f.topo")
	tp, err := topo.Torus([]int{6, 6}, 4, false)
	writeFabric(t, fab, tp, err)
	s := start(t, Config{Fabric: fab, Output: filepath.Join(dir, "out")})
	waitFor(t, s, "first publish", func(st Status) bool { return st.Reroutes >= 1 })
	for i := 0; i < 50; i++ {
		s.Trigger("burst")
	}
	time.Sleep(500 * time.Millisecond)
	st := waitFor(t, s, "idle", func(st Status) bool { return st.State == "idle" })
	if st.Reroutes > 3 {
		t.Fatalf("50 triggers gave %d reroutes; they should coalesce", st.Reroutes)
	}
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nuesm.toml")
	if err := os.WriteFile(p, []byte(`fabric = "/x.topo"
output = "/var/lib/nuesm"
engines = "nue,updn"
max_vls = 4
fabric_poll = "5s"
[params]
partition = "locality"
[slurm]
enabled = true
poll = "off"
exclude_partitions = ["debug", "test"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	c = c.Defaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.MaxVLs != 4 || c.FabricPoll.Duration != 5*time.Second || c.SLURM.Poll.Duration != -1 || c.Params["partition"] != "locality" || len(c.SLURM.ExcludePartitions) != 2 {
		t.Fatalf("%+v", c)
	}
	if err := os.WriteFile(p, []byte("fabrik = \"/x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(p); err == nil || !strings.Contains(err.Error(), "fabrik") {
		t.Fatalf("unknown key: %v", err)
	}
	bad := Config{Output: "", MaxVLs: 16, Listen: "nope"}
	if err := bad.Validate(); err == nil {
		t.Fatal("bad config accepted")
	}
	_ = io.Discard
}

// TestConfigOverride: flags (o, keys) win over the file; parameters merge
// by name, the flags' winning; an unknown key is an error.
func TestConfigOverride(t *testing.T) {
	file := Config{Fabric: "/file.topo", Output: "/file-out", Engines: "nue,updn", MaxVLs: 4, Keep: 5,
		Params: map[string]string{"share": "none", "partition": "locality"},
		SLURM:  SLURMConfig{Enabled: true, Source: "rest", Poll: Duration{Duration: time.Minute}}}
	flags := Config{Fabric: "/flag.topo", Engines: "dfsssp", MaxVLs: 2, Keep: 9, Params: map[string]string{"share": "switch", "vlbalance": "off"},
		SLURM: SLURMConfig{Poll: Duration{Duration: -1}}}
	got, err := file.Override(flags, "fabric", "max_vls", "slurm.poll")
	if err != nil {
		t.Fatal(err)
	}
	want := file
	want.Fabric, want.MaxVLs, want.SLURM.Poll = "/flag.topo", 2, Duration{Duration: -1}
	want.Params = map[string]string{"share": "switch", "partition": "locality", "vlbalance": "off"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Override:\n%+v\nwant\n%+v", got, want)
	}
	if file.Params["share"] != "none" {
		t.Fatal("Override changed the file's parameters")
	}
	for k := range overrides {
		if _, err := (Config{}).Override(flags, k); err != nil {
			t.Errorf("key %s: %v", k, err)
		}
	}
	if _, err := file.Override(flags, "max_vl"); err == nil || !strings.Contains(err.Error(), `"max_vl"`) {
		t.Fatalf("unknown key: %v", err)
	}
}

// TestNewChecksEngineChain: the engine chain and its parameters are
// checked when the daemon is made, before anything is routed.
func TestNewChecksEngineChain(t *testing.T) {
	for _, c := range []struct {
		engines string
		params  map[string]string
		want    string
	}{
		{"nosuch", nil, `unknown engine "nosuch"`},
		{"nue:share=bogus", nil, `nue: parameter share: unknown value "bogus", expected auto, switch, switchlid or none`},
		{"updn", map[string]string{"share": "none"}, `no engine of the chain "updn" takes "share"`},
	} {
		_, err := New(Config{Fabric: "/x.topo", Output: t.TempDir(), Engines: c.engines, Params: c.params})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.engines, c.params, err, c.want)
		}
	}
}
