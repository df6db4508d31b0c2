package slurm

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// restAll is testdata/jobs-v0.0.38.json, captured from SLURM 22.05.8's
// slurmrestd by TestCaptureFixtures (the same jobs as squeue-all.txt), in
// the answer's order.
var restAll = []fixtureJob{
	{"1", "RUNNING", "node[0001-0002,0010]", 30 * time.Minute, "batch"},
	{"2", "RUNNING", "node[0003-0004]", 26*time.Hour + 4*time.Minute, "batch"},
	{"3", "RUNNING", "node0005", Unlimited, "batch"},
	{"4", "RUNNING", "node[0006-0007]", 10 * time.Minute, "debug"},
	{"5_1", "RUNNING", "node0008", 5 * time.Minute, "batch"},
	{"6", "PENDING", "", Unlimited, "batch"},
	{"7+0", "PENDING", "", Unlimited, "batch"},
	{"7+1", "PENDING", "", Unlimited, "batch"},
	{"5_2", "RUNNING", "node0009", 5 * time.Minute, "batch"},
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseRESTFixture(t *testing.T) {
	jobs, err := ParseRESTJobs(strings.NewReader(string(readFixture(t, "jobs-v0.0.38.json"))))
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, "jobs-v0.0.38.json", jobs, restAll)
	names := map[string]string{"1": "multi", "2": "long", "3": "unlimited", "4": "dbg", "5_1": "arr", "6": "toobig", "7+1": "het"}
	for _, j := range jobs {
		if n, ok := names[j.ID]; ok && j.Name != n || j.User != "root" {
			t.Errorf("job %s: name %q user %q", j.ID, j.Name, j.User)
		}
	}
}

func TestParseRESTErrorFixture(t *testing.T) {
	_, err := ParseRESTJobs(strings.NewReader(string(readFixture(t, "job-error-v0.0.38.json"))))
	want := "slurmrestd error: Invalid job id specified: Unable to find JobId=999999 (error 2017 in slurm_load_job)"
	if !errors.Is(err, ErrREST) || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestParseRESTNewerShapes decodes a hand-written answer in the shape of
// the v0.0.39+ plugins (job_state a list, numbers as set/infinite/number
// objects). It is not a capture: SLURM 22.05 does not serve them.
func TestParseRESTNewerShapes(t *testing.T) {
	in := `{"errors": [], "warnings": [], "jobs": [
	 {"job_id": 11, "job_state": ["RUNNING", "COMPLETING"], "nodes": "n[1-2]", "partition": "p",
	  "time_limit": {"set": true, "infinite": false, "number": 90},
	  "array_job_id": {"set": true, "infinite": false, "number": 0}, "array_task_id": {"set": false, "infinite": false, "number": 0},
	  "het_job_id": {"set": true, "infinite": false, "number": 0}},
	 {"job_id": 12, "job_state": ["RUNNING"], "nodes": "n3", "partition": "p",
	  "time_limit": {"set": true, "infinite": true, "number": 0},
	  "array_job_id": {"set": true, "infinite": false, "number": 10}, "array_task_id": {"set": true, "infinite": false, "number": 3}},
	 {"job_id": 13, "job_state": [], "nodes": "", "partition": "p", "time_limit": {"set": false, "infinite": false, "number": 0}}
	]}`
	_, err := ParseRESTJobs(strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "no job_state") {
		t.Errorf("empty state list: %v", err)
	}
	in = strings.Replace(in, `"job_state": [],`, `"job_state": ["PENDING"],`, 1)
	jobs, err := ParseRESTJobs(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, "v0.0.39 shape", jobs, []fixtureJob{
		{"11", "RUNNING", "n[1-2]", 90 * time.Minute, "p"},
		{"10_3", "RUNNING", "n3", Unlimited, "p"},
		{"13", "PENDING", "", Unlimited, "p"},
	})
}

func TestParseRESTMalformed(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"jobs": [`, "JSON"},
		{`[]`, "JSON"},
		{`{"meta": {}}`, `no "jobs" list`},
		{`{"jobs": [{"job_state": "RUNNING", "nodes": "n1"}]}`, "no job_id"},
		{`{"jobs": [{"job_id": 3, "nodes": "n1"}]}`, "no job_state"},
		{`{"jobs": [{"job_id": 3, "job_state": "RUNNING", "nodes": "n[1-"}]}`, `slurmrestd jobs [0] (job_id 3): nodes: hostlist "n[1-": unterminated bracket`},
		{`{"jobs": [{"job_id": 3, "job_state": "RUNNING", "nodes": ""}]}`, "running job without nodes"},
		{`{"jobs": [{"job_id": -3, "job_state": "RUNNING", "nodes": "n1"}]}`, "non-negative integer"},
		{`{"jobs": [{"job_id": 3, "job_state": 7, "nodes": "n1"}]}`, "job_state"},
		{`{"jobs": [{"job_id": 3, "job_state": "RUNNING", "nodes": "n1", "time_limit": 1e300}]}`, "non-negative integer"},
		{`{"jobs": [{"job_id": 3, "job_state": "RUNNING", "nodes": "n1", "time_limit": 153722867280912931}]}`, "invalid time limit"},
	} {
		_, err := ParseRESTJobs(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want an ErrMalformed mentioning %q", tc.in, err, tc.want)
		}
	}
	errs := `{"errors": [{"error": "a"}, {"error": "b", "error_number": 7}, {"description": "c"}, {"error": "d"}], "jobs": []}`
	_, err := ParseRESTJobs(strings.NewReader(errs))
	if err == nil || err.Error() != "slurmrestd error: a; b (error 7); c; and 1 more" {
		t.Errorf("error list: %v", err)
	}
}

// restServer serves the captured answer at the v0.0.38 path, demanding
// the JWT headers when token is set.
func restServer(t *testing.T, token string) http.Handler {
	body := readFixture(t, "jobs-v0.0.38.json")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/slurm/v0.0.38/jobs" || r.Method != http.MethodGet {
			http.Error(w, "Unable find requested URL.", http.StatusNotFound)
			return
		}
		if token != "" && (r.Header.Get("X-SLURM-USER-TOKEN") != token || r.Header.Get("X-SLURM-USER-NAME") != "root") {
			http.Error(w, "Authentication failure", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

func runningOf(all []fixtureJob) []fixtureJob {
	var out []fixtureJob
	for _, j := range all {
		if j.state == StateRunning {
			out = append(out, j)
		}
	}
	slices.SortStableFunc(out, func(a, b fixtureJob) int { return CompareJobIDs(a.id, b.id) })
	return out
}

func TestRESTOverTCPWithToken(t *testing.T) {
	srv := httptest.NewServer(restServer(t, "tok"))
	defer srv.Close()
	ctx := context.Background()
	jobs, err := (&REST{URL: srv.URL + "/", User: "root", Token: "tok", AllowHTTPToken: true}).RunningJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, "REST", jobs, runningOf(restAll))

	_, err = (&REST{URL: srv.URL}).RunningJobs(ctx)
	if !errors.Is(err, ErrREST) || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "Authentication failure") {
		t.Errorf("without a token: %v", err)
	}
	_, err = (&REST{URL: srv.URL, APIVersion: "v0.0.40"}).RunningJobs(ctx)
	if !errors.Is(err, ErrREST) || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown version: %v", err)
	}
}

func TestRESTOverUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "restd.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: restServer(t, "")}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	jobs, err := (&REST{URL: "unix://" + sock}).RunningJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, "REST over unix socket", jobs, runningOf(restAll))
}

func TestRESTErrors(t *testing.T) {
	ctx := context.Background()
	errBody := readFixture(t, "job-error-v0.0.38.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/slow/") {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(errBody)
			return
		}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	_, err := (&REST{URL: srv.URL}).RunningJobs(ctx)
	if !errors.Is(err, ErrREST) || !strings.Contains(err.Error(), "HTTP 500") || !strings.Contains(err.Error(), "Unable to find JobId=999999") {
		t.Errorf("500 with an error list: %v", err)
	}
	_, err = (&REST{URL: srv.URL + "/slow", Timeout: 200 * time.Millisecond}).RunningJobs(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("slow server: %v", err)
	}
	for _, u := range []string{"", "ftp://x", "unix://", "http://", "http://[::1"} {
		if _, err := (&REST{URL: u}).RunningJobs(ctx); err == nil || !strings.Contains(err.Error(), "slurmrestd URL") {
			t.Errorf("URL %q: %v", u, err)
		}
	}
	if _, err := (&REST{URL: "unix://" + filepath.Join(t.TempDir(), "none.sock")}).RunningJobs(ctx); err == nil {
		t.Error("missing socket: no error")
	}
}

func TestRESTKeepsConfiguring(t *testing.T) {
	in := `{"errors": [], "jobs": [
	 {"job_id": 9, "job_state": "CONFIGURING", "nodes": "n[1-2]", "partition": "batch", "time_limit": 30},
	 {"job_id": 7, "job_state": "COMPLETING", "nodes": "n4", "partition": "batch", "time_limit": null}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(in)) }))
	defer srv.Close()
	jobs, err := (&REST{URL: srv.URL}).RunningJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, "configuring", jobs, []fixtureJob{{"9", "CONFIGURING", "n[1-2]", 30 * time.Minute, "batch"}})
}
