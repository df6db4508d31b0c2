package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixtureJob is what a test expects of one parsed job.
type fixtureJob struct {
	id, state, nodeList string
	limit               time.Duration
	partition           string
}

// squeueAll is testdata/squeue-all.txt, captured from SLURM 22.05.8 by
// TestCaptureFixtures: every state, in squeue's order.
var squeueAll = []fixtureJob{
	{"6", "PENDING", "", Unlimited, "batch"},
	{"7+0", "PENDING", "", Unlimited, "batch"},
	{"7+1", "PENDING", "", Unlimited, "batch"},
	{"1", "RUNNING", "node[0001-0002,0010]", 30 * time.Minute, "batch"},
	{"2", "RUNNING", "node[0003-0004]", 26*time.Hour + 4*time.Minute, "batch"},
	{"3", "RUNNING", "node0005", Unlimited, "batch"},
	{"5_1", "RUNNING", "node0008", 5 * time.Minute, "batch"},
	{"5_2", "RUNNING", "node0009", 5 * time.Minute, "batch"},
	{"4", "RUNNING", "node[0006-0007]", 10 * time.Minute, "debug"},
}

func checkJobs(t *testing.T, what string, got []Job, want []fixtureJob) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d jobs, want %d: %+v", what, len(got), len(want), got)
	}
	for i, w := range want {
		j := got[i]
		nodes, _ := Expand(w.nodeList)
		if j.ID != w.id || j.State != w.state || j.NodeList != w.nodeList || !slices.Equal(j.Nodes, nodes) ||
			j.TimeLimit != w.limit || j.Partition != w.partition {
			t.Errorf("%s: job %d = %+v, want %+v", what, i, j, w)
		}
	}
}

func TestParseSqueueFixture(t *testing.T) {
	f, err := os.Open("testdata/squeue-all.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, err := ParseSqueue(f)
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, "squeue-all.txt", jobs, squeueAll)
	if want := hosts("node0001 node0002 node0010"); !slices.Equal(jobs[3].Nodes, want) {
		t.Errorf("job 1 nodes %q, want %q", jobs[3].Nodes, want)
	}
}

func TestParseSqueueOddLines(t *testing.T) {
	in := "JOBID|STATE|NODELIST|TIME_LIMIT|PARTITION\r\n" + // a header (squeue without -h)
		"\n" +
		"  12|RUNNING|n[1-2]|UNLIMITED|batch  \r\n" + // padding, CRLF
		"   \t  \n" +
		"13_[1-4]|PENDING||INVALID|batch,debug\n" + // pending array, two partitions
		"14|COMPLETING|n3|NOT_SET|debug\n" +
		"      15|   RUNNING|n4|      5:00|   long\n" // "%.8i"-style widths
	jobs, err := ParseSqueue(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, "odd lines", jobs, []fixtureJob{
		{"12", "RUNNING", "n[1-2]", Unlimited, "batch"},
		{"13_[1-4]", "PENDING", "", 0, "batch,debug"},
		{"14", "COMPLETING", "n3", 0, "debug"},
		{"15", "RUNNING", "n4", 5 * time.Minute, "long"},
	})
}

func TestParseSqueueErrors(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		is       error
	}{
		{"1|RUNNING|n1|UNLIMITED\n", `squeue output line 1 "1|RUNNING|n1|UNLIMITED": 4 fields, expected 5 (%i|%T|%N|%l|%P)`, nil},
		{"1|RUNNING|n1|UNLIMITED|batch|x\n", `6 fields, expected 5`, nil},
		{"\n\n1|RUNNING|n[1-|UNLIMITED|batch\n", `squeue output line 3 "1|RUNNING|n[1-|UNLIMITED|batch": hostlist "n[1-": unterminated bracket at offset 1, expected ']'`, ErrHostlist},
		{"1|RUNNING|n1|soon|batch\n", `squeue output line 1 "1|RUNNING|n1|soon|batch": time limit "soon": field "soon" is not a number: invalid time limit`, ErrTimeLimit},
		{"|RUNNING|n1|UNLIMITED|batch\n", `job id ""`, nil},
		{"1 2|RUNNING|n1|UNLIMITED|batch\n", `job id "1 2"`, nil},
		{"1||n1|UNLIMITED|batch\n", `empty state`, nil},
		{"1|RUNNING||UNLIMITED|batch\n", `running job without nodes`, nil},
		{"squeue: error: Invalid user: nobody\n", `1 fields, expected 5`, nil},
	} {
		_, err := ParseSqueue(strings.NewReader(tc.in))
		if err == nil {
			t.Errorf("%q: no error, want %s", tc.in, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, err, tc.want)
		}
		var oe *OutputError
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &oe) || oe.Line == 0 {
			t.Errorf("%q: %v is not an *OutputError with a line wrapping ErrMalformed", tc.in, err)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%q: %v does not wrap %v", tc.in, err, tc.is)
		}
	}
}

func TestParseTimeLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"UNLIMITED", Unlimited},
		{"infinite", Unlimited},
		{"NOT_SET", 0},
		{"INVALID", 0},
		{"N/A", 0},
		{"", 0},
		{"30:00", 30 * time.Minute}, // squeue prints minutes:seconds below an hour
		{"5:00", 5 * time.Minute},
		{"0:30", 30 * time.Second},
		{"12:00:00", 12 * time.Hour},
		{"1:02:03", time.Hour + 2*time.Minute + 3*time.Second},
		{"1-02:04:00", 26*time.Hour + 4*time.Minute},
		{"7-00:00:00", 7 * 24 * time.Hour},
		{"45", 45 * time.Minute}, // sbatch --time syntax
		{"2-3", 51 * time.Hour},
		{"2-3:30", 51*time.Hour + 30*time.Minute},
		{" 10:00 ", 10 * time.Minute},
	} {
		got, err := ParseTimeLimit(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTimeLimit(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"soon", "1:2:3:4", "-5", "1--2", "1-", ":", "1:", "1-2:3:4:5", "+5", "1.5",
		"99999999999999999999", "106751991167-00:00:00"} {
		if d, err := ParseTimeLimit(in); err == nil || !errors.Is(err, ErrTimeLimit) {
			t.Errorf("ParseTimeLimit(%q) = %v, %v; want an ErrTimeLimit", in, d, err)
		}
	}
}

func TestFormatTimeLimit(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{Unlimited, "UNLIMITED"},
		{0, "NOT_SET"},
		{30 * time.Minute, "30:00"},
		{5 * time.Minute, "5:00"},
		{12 * time.Hour, "12:00:00"},
		{26*time.Hour + 4*time.Minute, "1-02:04:00"},
	} {
		if got := FormatTimeLimit(tc.d); got != tc.want {
			t.Errorf("FormatTimeLimit(%v) = %q, want %q", tc.d, got, tc.want)
		}
		if back, err := ParseTimeLimit(tc.want); err != nil || back != tc.d {
			t.Errorf("ParseTimeLimit(%q) = %v, %v; want %v", tc.want, back, err, tc.d)
		}
	}
}

func TestCompareJobIDs(t *testing.T) {
	want := []string{"1", "2", "4_1", "4_2", "4_10", "4_[11-20]", "6+0", "6+1", "9", "10", "10_1", "100", "abc"}
	got := slices.Clone(want)
	slices.Reverse(got)
	jobs := make([]Job, len(got))
	for i, id := range got {
		jobs[i].ID = id
	}
	SortJobs(jobs)
	for i := range jobs {
		got[i] = jobs[i].ID
	}
	if !slices.Equal(got, want) {
		t.Errorf("sorted %q\nwant   %q", got, want)
	}
	if CompareJobIDs("01", "1") == 0 || CompareJobIDs("7", "7") != 0 {
		t.Error("ties must be broken by the string, equal ids compare equal")
	}
}

// fakeSqueue writes a shell script standing in for squeue: it records its
// arguments and SQUEUE_*/SLURM_CONF environment, then runs body.
func fakeSqueue(t *testing.T, body string) (path, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "squeue")
	argsFile = filepath.Join(dir, "args")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + argsFile + "\n" +
		"env | grep -E '^(SQUEUE_|SLURM_CONF=)' | sort >> " + argsFile + "\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, argsFile
}

func TestSqueueRunsTheProgram(t *testing.T) {
	fixture, err := filepath.Abs("testdata/squeue-all.txt")
	if err != nil {
		t.Fatal(err)
	}
	path, argsFile := fakeSqueue(t, "cat "+fixture)
	t.Setenv("SQUEUE_FORMAT", "%j")
	t.Setenv("SQUEUE_STATES", "all")
	s := &Squeue{Path: path, Env: []string{"SLURM_CONF=/etc/slurm/test.conf"}}
	jobs, err := s.RunningJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var running []fixtureJob
	for _, w := range squeueAll {
		if w.state == "RUNNING" {
			running = append(running, w)
		}
	}
	slices.SortStableFunc(running, func(a, b fixtureJob) int { return CompareJobIDs(a.id, b.id) })
	checkJobs(t, "fake squeue", jobs, running)
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	// one argument per line: no shell split or quoted the format
	want := strings.Join(SqueueArgs, "\n") + "\nSLURM_CONF=/etc/slurm/test.conf\n"
	if string(b) != want {
		t.Errorf("squeue saw\n%s\nwant\n%s", b, want)
	}
}

func TestSqueueFailures(t *testing.T) {
	ctx := context.Background()
	path, _ := fakeSqueue(t, "echo 'squeue: error: Unable to contact slurm controller (connect failure)' >&2; exit 1")
	_, err := (&Squeue{Path: path}).RunningJobs(ctx)
	if err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(err.Error(), "Unable to contact slurm controller") {
		t.Errorf("failing squeue: %v", err)
	}

	path, _ = fakeSqueue(t, "exec sleep 30")
	t0 := time.Now()
	_, err = (&Squeue{Path: path, Timeout: 200 * time.Millisecond}).RunningJobs(ctx)
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging squeue: %v", err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Errorf("hanging squeue took %v to give up", el)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (&Squeue{Path: path}).RunningJobs(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}

	path, _ = fakeSqueue(t, "echo '1|RUNNING|n[1-|UNLIMITED|batch'")
	if _, err := (&Squeue{Path: path}).RunningJobs(ctx); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed output: %v", err)
	}

	if _, err := (&Squeue{Path: filepath.Join(t.TempDir(), "no-squeue")}).RunningJobs(ctx); err == nil {
		t.Error("missing program: no error")
	}
}

// TestSqueueKeepsConfiguring: while PrologSlurmctld (nuesm's hook) runs, a
// job is CONFIGURING and squeue -t RUNNING omits it; the source asks for
// and keeps it, as slurmrestd reports it too.
func TestSqueueKeepsConfiguring(t *testing.T) {
	path, _ := fakeSqueue(t, "printf '9|CONFIGURING|n[1-2]|30:00|batch\\n8|RUNNING|n3|UNLIMITED|batch\\n7|COMPLETING|n4|UNLIMITED|batch\\n'")
	jobs, err := (&Squeue{Path: path}).RunningJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, "configuring", jobs, []fixtureJob{
		{"8", "RUNNING", "n3", Unlimited, "batch"},
		{"9", "CONFIGURING", "n[1-2]", 30 * time.Minute, "batch"},
	})
	if !slices.Contains(SqueueArgs, "RUNNING,CONFIGURING") {
		t.Errorf("squeue arguments %q do not ask for CONFIGURING jobs", SqueueArgs)
	}
	if _, err := ParseSqueue(strings.NewReader("9|CONFIGURING||30:00|batch\n")); err == nil {
		t.Error("a CONFIGURING job without nodes parsed")
	}
}
