package sm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/topo"
)

// TestPromtoolChecksScrape runs Debian's promtool on a scrape of the
// daemon (STYLE.md: a scrape checked with promtool check metrics).
func TestPromtoolChecksScrape(t *testing.T) {
	ibtest.RequirePrograms(t, "prometheus", "promtool")
	s, out := servedRing(t)
	body := scrape(t, s.Addr())
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, stderr.String())
	}
	_ = out
}

// TestRealPrometheusScrapes starts Debian's prometheus on loopback,
// scraping the daemon, and queries nuesm_reroutes_total through its HTTP
// API.
func TestRealPrometheusScrapes(t *testing.T) {
	ibtest.RequirePrograms(t, "prometheus", "prometheus")
	s, _ := servedRing(t)
	dir := t.TempDir()
	port := freePort(t)
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: nuesm
    static_configs:
      - targets: ['%s']
`, s.Addr())
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	path, _ := ibtest.LookPath("prometheus")
	var logb bytes.Buffer
	cmd := exec.Command(path, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port))
	cmd.Stdout, cmd.Stderr = &logb, &logb
	// Registered before the kill, so it runs after it: the log is
	// complete and no longer written to.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logb.String())
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d/api/v1/query?query=nuesm_reroutes_total", port)
	ibtest.WaitFor(t, `prometheus returns nuesm_reroutes_total{result="published"} = 1`, func() (bool, error) {
		var q struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Value  []any             `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		resp, err := http.Get(url)
		if err != nil {
			return false, nil // not listening yet
		}
		err = json.NewDecoder(resp.Body).Decode(&q)
		resp.Body.Close()
		if err != nil || q.Status != "success" {
			return false, nil
		}
		for _, r := range q.Data.Result {
			if r.Metric["result"] == "published" && len(r.Value) == 2 && r.Value[1] == "1" {
				t.Logf("prometheus sees %v", r.Metric)
				return true, nil
			}
		}
		return false, nil
	})
}

// servedRing runs the daemon on a small ring until it has published.
func servedRing(t *testing.T) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	fab := filepath.Join(dir, "f.topo")
	tp, err := topo.Ring(5, 1, nil)
	writeFabric(t, fab, tp, err)
	out := filepath.Join(dir, "out")
	s := start(t, Config{Fabric: fab, Output: out})
	waitFor(t, s, "publish", func(st Status) bool { return st.LastResult == resultPublished })
	return s, out
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), ibtest.Deadline(t))
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
