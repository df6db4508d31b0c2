package slurm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// TestSqueueOutputLimit: output beyond MaxBytes stops the run (the writer
// is killed, not drained) with an error naming squeue and the limit; an
// answer of exactly MaxBytes is taken.
func TestSqueueOutputLimit(t *testing.T) {
	ctx := context.Background()
	path, _ := fakeSqueue(t, "exec yes '1|RUNNING|n1|UNLIMITED|batch'")
	_, err := (&Squeue{Path: path, MaxBytes: 64 << 10, Timeout: ibtest.Budget(t)}).RunningJobs(ctx)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "squeue: answer larger than 64 KiB") {
		t.Errorf("endless squeue: %v, want an ErrTooLarge naming squeue and 64 KiB", err)
	}

	line := "1|RUNNING|n1|UNLIMITED|batch\n"
	path, _ = fakeSqueue(t, "printf '"+strings.TrimSuffix(line, "\n")+"\\n'")
	jobs, err := (&Squeue{Path: path, MaxBytes: int64(len(line))}).RunningJobs(ctx)
	if err != nil || len(jobs) != 1 {
		t.Errorf("answer of exactly MaxBytes: %v, %v", jobs, err)
	}
	_, err = (&Squeue{Path: path, MaxBytes: int64(len(line)) - 1}).RunningJobs(ctx)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("than %d bytes", len(line)-1)) {
		t.Errorf("answer one byte over MaxBytes: %v", err)
	}
}

// hangingSqueue is a wrapper script that starts two children and a
// grandchild, records their process ids in pidFile (one per line, then
// "ready"), and waits for ever.
func hangingSqueue(t *testing.T) (path, pidFile string) {
	pidFile = filepath.Join(t.TempDir(), "pids")
	path, _ = fakeSqueue(t, `
sleep 600 & echo $! >> `+pidFile+`
sh -c 'sleep 600 & echo $! >> `+pidFile+`; wait' & echo $! >> `+pidFile+`
while [ $(wc -l < `+pidFile+`) -lt 3 ]; do sleep 0.05; done
echo ready >> `+pidFile+`
wait`)
	return path, pidFile
}

// recordedPids returns the pids hangingSqueue wrote, once it wrote them all.
func recordedPids(t *testing.T, pidFile string) ([]int, bool) {
	b, err := os.ReadFile(pidFile)
	if err != nil || !strings.HasSuffix(string(b), "ready\n") {
		return nil, false
	}
	var pids []int
	for _, f := range strings.Fields(strings.TrimSuffix(string(b), "ready\n")) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %q", pidFile, b)
		}
		pids = append(pids, pid)
	}
	return pids, true
}

// running reports whether pid is a live process (a zombie is not: it
// waits only for its parent to collect it).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func checkNoSurvivors(t *testing.T, pids []int) {
	t.Helper()
	if len(pids) != 3 {
		t.Fatalf("recorded %d pids, want 3", len(pids))
	}
	ibtest.WaitFor(t, "children of the hung squeue wrapper gone", func() (bool, error) {
		for _, pid := range pids {
			if running(pid) {
				return false, nil
			}
		}
		return true, nil
	})
}

// TestSqueueHungWrapperLeavesNoChildren: a squeue wrapper that hangs with
// children of its own is killed with all of them, on the deadline and on
// the caller's cancellation.
func TestSqueueHungWrapperLeavesNoChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see the children")
	}
	t.Run("timeout", func(t *testing.T) {
		// The wrapper must have started its children before the timeout
		// strikes for the test to mean anything: double the timeout until
		// it has (a busy machine may need more than the first).
		for timeout := time.Second; ; timeout *= 2 {
			path, pidFile := hangingSqueue(t)
			t0 := time.Now()
			_, err := (&Squeue{Path: path, Timeout: timeout}).RunningJobs(context.Background())
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("hung wrapper: %v, want a deadline error", err)
			}
			if el := time.Since(t0); el > timeout+ibtest.Budget(t)/2 {
				t.Fatalf("gave up after %v with a timeout of %v", el, timeout)
			}
			if pids, ok := recordedPids(t, pidFile); ok {
				checkNoSurvivors(t, pids)
				return
			}
			if 2*timeout > ibtest.Budget(t) {
				t.Fatalf("the wrapper never started its children")
			}
		}
	})
	t.Run("cancel", func(t *testing.T) {
		path, pidFile := hangingSqueue(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		found := make(chan []int, 1)
		go func() {
			// cancel once the children are all there
			defer close(found)
			for ctx.Err() == nil {
				if p, ok := recordedPids(t, pidFile); ok {
					found <- p
					cancel()
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		_, err := (&Squeue{Path: path, Timeout: ibtest.Budget(t)}).RunningJobs(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled run: %v", err)
		}
		checkNoSurvivors(t, <-found)
	})
}

// TestSqueueChildKeepsOutputOpen: a wrapper that exits but leaves a child
// holding its output is an error, and the child is killed.
func TestSqueueChildKeepsOutputOpen(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	path, _ := fakeSqueue(t, "sleep 600 & echo $! > "+pidFile+"; echo ready >> "+pidFile+"; exit 0")
	_, err := (&Squeue{Path: path, Timeout: ibtest.Budget(t)}).RunningJobs(context.Background())
	if err == nil || !strings.Contains(err.Error(), "kept its output open") {
		t.Fatalf("lingering child: %v", err)
	}
	pids, ok := recordedPids(t, pidFile)
	if !ok || len(pids) != 1 {
		t.Fatalf("pid file: %v %v", pids, ok)
	}
	ibtest.WaitFor(t, "child left by squeue gone", func() (bool, error) { return !running(pids[0]), nil })
}

// headerLog records the requests a server received.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (l *headerLog) add(h http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, h.Clone())
}

func (l *headerLog) requests() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen
}

// TestRESTTokenStaysWithURL: a redirect is reported, not followed, so its
// target (a real server recording headers) never sees the token; the same
// holds on a redirect to another path of the same server.
func TestRESTTokenStaysWithURL(t *testing.T) {
	var target headerLog
	dst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target.add(r.Header)
		_, _ = w.Write(readFixture(t, "jobs-v0.0.38.json"))
	}))
	defer dst.Close()
	var origin headerLog
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin.add(r.Header)
		if strings.HasPrefix(r.URL.Path, "/same/") {
			http.Redirect(w, r, "/elsewhere"+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, dst.URL+r.URL.Path, http.StatusFound)
	}))
	defer src.Close()
	for _, u := range []string{src.URL, src.URL + "/same"} {
		_, err := (&REST{URL: u, User: "root", Token: "secret", AllowHTTPToken: true}).RunningJobs(context.Background())
		if !errors.Is(err, ErrRedirect) || !strings.Contains(err.Error(), "HTTP 30") {
			t.Errorf("%s: %v, want an ErrRedirect", u, err)
		}
	}
	if n := len(origin.requests()); n != 2 {
		t.Errorf("origin saw %d requests, want 2", n)
	}
	for _, h := range origin.requests() {
		if h.Get("X-SLURM-USER-TOKEN") != "secret" {
			t.Errorf("origin request without the token: %v", h)
		}
	}
	for _, h := range target.requests() {
		if h.Get("X-SLURM-USER-TOKEN") != "" {
			t.Errorf("redirect target received the token: %v", h)
		}
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("redirect target received %d requests, want none", n)
	}
}

// TestRESTRefusesHTTPToken: a token over plain http:// is refused before
// any request unless allowed; https://, unix:// and no token need no
// permission.
func TestRESTRefusesHTTPToken(t *testing.T) {
	var log headerLog
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r.Header)
		restServer(t, "secret").ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "http:", "HTTP:", 1)} {
		_, err := (&REST{URL: u, User: "root", Token: "secret"}).RunningJobs(ctx)
		if !errors.Is(err, ErrHTTPToken) || !strings.Contains(err.Error(), u) {
			t.Errorf("%s without AllowHTTPToken: %v, want an ErrHTTPToken naming the URL", u, err)
		}
	}
	if n := len(log.requests()); n != 0 {
		t.Fatalf("%d requests sent although refused", n)
	}
	if _, err := (&REST{URL: srv.URL, User: "root", Token: "secret", AllowHTTPToken: true}).RunningJobs(ctx); err != nil {
		t.Errorf("allowed: %v", err)
	}

	tls := httptest.NewTLSServer(restServer(t, "secret"))
	defer tls.Close()
	jobs, err := (&REST{URL: tls.URL, User: "root", Token: "secret", Transport: tls.Client().Transport}).RunningJobs(ctx)
	if err != nil || len(jobs) == 0 {
		t.Errorf("https: %v, %v", jobs, err)
	}
}

// TestRESTAnswerLimit: an answer beyond MaxBytes is refused with an error
// naming slurmrestd's URL and the limit, announced (Content-Length) or
// not (chunked).
func TestRESTAnswerLimit(t *testing.T) {
	body := readFixture(t, "jobs-v0.0.38.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked/slurm/v0.0.38/jobs" {
			for i := 0; i < 1000; i++ { // 1000 x 33 KB, flushed: no length
				if _, err := w.Write(body); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	ctx := context.Background()
	limit := int64(len(body))
	if _, err := (&REST{URL: srv.URL, MaxBytes: limit}).RunningJobs(ctx); err != nil {
		t.Errorf("answer of exactly MaxBytes: %v", err)
	}
	for _, u := range []string{srv.URL, srv.URL + "/chunked"} {
		_, err := (&REST{URL: u, MaxBytes: limit - 1}).RunningJobs(ctx)
		want := fmt.Sprintf("slurmrestd %s: answer larger than %s", u, formatBytes(limit-1))
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an ErrTooLarge: %s", u, err, want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB",
		16 << 20: "16 MiB", 256 << 20: "256 MiB", 3 << 30: "3 GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
