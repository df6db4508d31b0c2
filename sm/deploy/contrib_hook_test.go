package deploy

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// TestPrologWait runs contrib/slurm's prolog with NUESM_PROLOG_WAIT
// against a stand-in for nuesm's HTTP API: it waits while /deployed
// answers 503 and stops at 200; a 404 (nuesm without a deployer) ends the
// wait at once instead of holding every job for NUESM_PROLOG_WAIT; a wait
// that runs out starts the job anyway. Each outcome is in the hook's log.
func TestPrologWait(t *testing.T) {
	ibtest.RequirePrograms(t, "curl", "curl")
	for _, c := range []struct {
		name     string
		answers  []int // /deployed's answers in turn, the last repeated
		wait     string
		want     string
		minPolls int64
	}{
		{"deployed", []int{503, 503, 200}, "600", "job 7: tables on the switches after", 3},
		{"no deployer", []int{404}, "30", "job 7: nuesm has no deployer ([opensm]); NUESM_PROLOG_WAIT has nothing to wait for", 1},
		{"never", []int{503}, "1", "job 7: its tables were not on the switches after 1s; starting it anyway", 2},
	} {
		var polls, reroutes atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodPost && r.URL.Path == "/reroute" && r.URL.Query().Get("reason") == "prolog" &&
				r.Header.Get("Content-Type") == "application/json":
				reroutes.Add(1)
				w.WriteHeader(http.StatusAccepted)
			case r.Method == http.MethodGet && r.URL.Path == "/deployed" && r.URL.Query().Get("job") == "7":
				n := polls.Add(1)
				w.WriteHeader(c.answers[min(int(n), len(c.answers))-1])
			default:
				http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
			}
		}))
		log := filepath.Join(t.TempDir(), "hook.log")
		cmd := exec.Command(filepath.Join(contribDir, "slurm", "nuesm-prolog.sh"))
		cmd.Env = append(os.Environ(), "NUESM_ADDR="+strings.TrimPrefix(srv.URL, "http://"), "SLURM_JOB_ID=7",
			"NUESM_PROLOG_WAIT="+c.wait, "NUESM_HOOK_LOG="+log)
		out, err := cmd.CombinedOutput()
		srv.Close()
		text, _ := os.ReadFile(log)
		if err != nil || reroutes.Load() != 1 || polls.Load() < c.minPolls || !strings.Contains(string(text), c.want) {
			t.Errorf("%s: exit %v, %d reroutes, %d polls, output %q, log %q; want 1 reroute, %d polls or more, %q",
				c.name, err, reroutes.Load(), polls.Load(), out, text, c.minPolls, c.want)
		}
	}
}
