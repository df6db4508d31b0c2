package sm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// healthz returns /healthz's code and body.
func healthz(s *Server) (int, string) {
	rec := httptest.NewRecorder()
	s.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	return rec.Code, rec.Body.String()
}

// awaitHealth waits until /healthz answers code with a body containing
// want.
func awaitHealth(t *testing.T, s *Server, code int, want string) {
	t.Helper()
	poll(t, want, func() bool {
		c, body := healthz(s)
		return c == code && strings.Contains(body, want)
	})
	if code != http.StatusOK {
		st := s.Status()
		if !strings.Contains(strings.Join(st.Problems, "\n"), want) && st.Published != nil {
			t.Fatalf("/status problems %q lack %q", st.Problems, want)
		}
	}
}

// gatedDaemon runs a daemon on a 3x3 torus through a gate engine and
// waits for its first publish.
func gatedDaemon(t *testing.T, cfg Config) (*Server, *gate, string) {
	t.Helper()
	dir := t.TempDir()
	if cfg.Fabric == "" {
		cfg.Fabric = filepath.Join(dir, "fabric.topo")
		tp, err := topo.Torus([]int{3, 3}, 1, false)
		writeFabric(t, cfg.Fabric, tp, err)
	}
	if cfg.Output == "" {
		cfg.Output = filepath.Join(dir, "out")
	}
	name, g := newGate(t)
	cfg.Engines = name
	s := start(t, cfg)
	waitFor(t, s, "first publish", func(st Status) bool { return st.LastResult == resultPublished })
	awaitHealth(t, s, http.StatusOK, "ok")
	return s, g, cfg.Output
}

// TestHealthzRerouteDeadline: a reroute that hangs past reroute_timeout
// makes /healthz fail with the reason in /status; the reroute is
// cancelled and publishes nothing; shutdown does not wait for it.
func TestHealthzRerouteDeadline(t *testing.T) {
	s, g, out := gatedDaemon(t, Config{RerouteTimeout: Duration{MinRerouteTimeout}})
	g.close(true)
	s.Trigger("test")
	g.awaitHeld(t)
	awaitHealth(t, s, http.StatusServiceUnavailable, "past its deadline of 1s")
	if st := s.Status(); st.State != "rerouting" {
		t.Fatalf("state %q while the reroute hangs", st.State)
	}
	g.reopen()
	st := waitFor(t, s, "the late reroute to fail", func(st Status) bool { return st.State == "idle" && st.Reroutes == 2 })
	if st.LastResult != resultFailed || !strings.Contains(st.LastError, "reroute deadline of 1s exceeded") || st.Published.Generation != 1 {
		t.Fatalf("late reroute: %s %q generation %d", st.LastResult, st.LastError, st.Published.Generation)
	}
	awaitHealth(t, s, http.StatusOK, "ok")
	checkPublished(t, out)
}

// TestShutdownDuringReroute: the daemon stops promptly while a reroute
// runs (SIGTERM at any time), also when the engine ignores cancellation.
func TestShutdownDuringReroute(t *testing.T) {
	for _, stubborn := range []bool{false, true} {
		dir := t.TempDir()
		fab := filepath.Join(dir, "fabric.topo")
		tp, err := topo.Torus([]int{3, 3}, 1, false)
		writeFabric(t, fab, tp, err)
		name, g := newGate(t)
		g.close(stubborn)
		s, err := New(Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: name, Listen: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		g.awaitHeld(t)
		t0 := time.Now()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d > shutdownGrace+5*time.Second {
			t.Errorf("stubborn=%v: Run took %v to stop", stubborn, d)
		}
		g.reopen()
	}
}

// TestHealthzOutputDeleted: a deleted output directory fails /healthz
// and is made again, with a new generation, without a restart.
func TestHealthzOutputDeleted(t *testing.T) {
	s, g, out := gatedDaemon(t, Config{})
	g.close(false)
	// Gone in one step: a RemoveAll the daemon's watch can see half done
	// ("current" gone first) reports that instead.
	if err := os.Rename(out, out+".gone"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(out + ".gone"); err != nil {
		t.Fatal(err)
	}
	g.awaitHeld(t) // the repair reroute
	awaitHealth(t, s, http.StatusServiceUnavailable, "output directory "+out)
	g.reopen()
	st := waitFor(t, s, "republished", func(st Status) bool { return st.Published.Generation == 2 && st.State == "idle" })
	if st.LastTrigger != "output-repair" {
		t.Errorf("trigger %q", st.LastTrigger)
	}
	awaitHealth(t, s, http.StatusOK, "ok")
	checkPublished(t, out)
}

// TestHealthzTampered: a published file changed after publishing fails
// /healthz, and is replaced by a fresh generation.
func TestHealthzTampered(t *testing.T) {
	s, g, out := gatedDaemon(t, Config{})
	g.close(false)
	lfts := filepath.Join(out, "current", "opensm-lfts.dump")
	f, err := os.OpenFile(lfts, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, "Unicast lids [0x0-0x2] of switch DR path slid 0; dlid 0; 0,1 guid 0x1 (x):\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	g.awaitHeld(t)
	awaitHealth(t, s, http.StatusServiceUnavailable, lfts+" changed after it was published")
	g.reopen()
	waitFor(t, s, "republished", func(st Status) bool { return st.Published.Generation == 2 && st.State == "idle" })
	awaitHealth(t, s, http.StatusOK, "ok")
	checkPublished(t, out)

	// "current" pointed elsewhere is tampering too.
	g.close(false)
	if err := os.Remove(filepath.Join(out, "current")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("gen-000001", filepath.Join(out, "current")); err != nil {
		t.Fatal(err)
	}
	g.awaitHeld(t)
	awaitHealth(t, s, http.StatusServiceUnavailable, "points at gen-000001, but gen-000002 was published")
	g.reopen()
	waitFor(t, s, "republished", func(st Status) bool { return st.Published.Generation == 3 && st.State == "idle" })
	awaitHealth(t, s, http.StatusOK, "ok")
}

// TestHealthzDumpDeleted: a deleted dump fails /healthz until it is back.
func TestHealthzDumpDeleted(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.Torus([]int{3, 3}, 1, false)
	writeFabric(t, fab, tp, err)
	s, _, _ := gatedDaemon(t, Config{Fabric: fab})
	b, err := os.ReadFile(fab)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(fab); err != nil {
		t.Fatal(err)
	}
	awaitHealth(t, s, http.StatusServiceUnavailable, "fabric dump "+fab+": no such file")
	if err := os.WriteFile(fab, b, 0o644); err != nil {
		t.Fatal(err)
	}
	awaitHealth(t, s, http.StatusOK, "ok")
}

// TestHealthzNothingPublished: a daemon whose dump never loads answers
// 503, and its log does not claim tables stay published.
func TestHealthzNothingPublished(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	if err := os.WriteFile(fab, []byte("not a dump\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log logBuffer
	s := start(t, Config{Fabric: fab, Output: filepath.Join(dir, "out")}, WithLogger(log.logger()))
	waitFor(t, s, "failure", func(st Status) bool { return st.LastResult == resultFailed })
	awaitHealth(t, s, http.StatusServiceUnavailable, "no tables published yet")
	if strings.Contains(log.String(), "stay published") || !strings.Contains(log.String(), "no tables are published") {
		t.Fatalf("log:\n%s", log.String())
	}
}

// TestHealthzDamagedAtStart: a published generation found damaged at
// start fails /healthz from the start, also while the first reroute runs
// (held at a gate), until a generation is published afresh.
func TestHealthzDamagedAtStart(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.Torus([]int{3, 3}, 1, false)
	writeFabric(t, fab, tp, err)
	name, g := newGate(t)
	cfg := Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: name}
	s, stop := serve(t, cfg)
	waitFor(t, s, "publish", func(st Status) bool { return st.Published != nil && st.Published.Generation == 1 && st.State == "idle" })
	stop()
	truncateLFTs(t, filepath.Join(cfg.Output, genName(1)))

	g.close(false)
	s, _ = serve(t, cfg)
	g.awaitHeld(t)
	lfts := filepath.Join(cfg.Output, "current", lft.CompactLFTsFile)
	if c, body := healthz(s); c != http.StatusServiceUnavailable || !strings.Contains(body, lfts+" changed after it was published") {
		t.Errorf("/healthz during the first reroute after a restart on a damaged generation: %d %q", c, body)
	}
	g.reopen()
	waitFor(t, s, "published afresh", func(st Status) bool { return st.Published.Generation == 2 && st.State == "idle" })
	if c, body := healthz(s); c != http.StatusOK {
		t.Errorf("/healthz once published afresh: %d %q", c, body)
	}
	checkPublished(t, cfg.Output)
}
