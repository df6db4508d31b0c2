package slurm

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseJobsFile(t *testing.T) {
	in := "# job id   hosts\n" +
		"\n" +
		"1234       node[0001-0004,0017]\n" +
		"1235\tnode0005 node0021     # a comment\n" +
		"  4_2  rack[1-2]n[01-02] , x9  \r\n" +
		"   # indented comment\n"
	jobs, err := ParseJobsFile(strings.NewReader(in), "jobs.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id    string
		nodes string
	}{
		{"1234", "node0001 node0002 node0003 node0004 node0017"},
		{"1235", "node0005 node0021"},
		{"4_2", "rack1n01 rack1n02 rack2n01 rack2n02 x9"},
	}
	if len(jobs) != len(want) {
		t.Fatalf("%d jobs, want %d: %+v", len(jobs), len(want), jobs)
	}
	for i, w := range want {
		j := jobs[i]
		if j.ID != w.id || !slices.Equal(j.Nodes, hosts(w.nodes)) || j.State != StateRunning || j.TimeLimit != 0 || j.Partition != "" {
			t.Errorf("job %d = %+v, want %s on %s", i, j, w.id, w.nodes)
		}
	}
}

func TestParseJobsFileErrors(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		is       error
	}{
		{"1 n1\n2\n", `jobs j.txt:2: invalid jobs file: job "2" without hosts (want: job-id hostlist)`, nil},
		{"1 n1\n\n1 n2\n", `jobs j.txt:3: invalid jobs file: job "1" again (first on line 1)`, nil},
		{"7 node[1-\n", `jobs j.txt:1: invalid jobs file: job 7: hostlist "node[1-": unterminated bracket at offset 4, expected ']'`, ErrHostlist},
		{"8 ,, \n", `jobs j.txt:1: invalid jobs file: job "8" without hosts`, nil},
		{"9 # n1\n", `job "9" without hosts`, nil},
	} {
		_, err := ParseJobsFile(strings.NewReader(tc.in), "j.txt")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrJobsFile) {
			t.Errorf("%q: %v\nwant an ErrJobsFile reading %s", tc.in, err, tc.want)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%q: %v does not wrap %v", tc.in, err, tc.is)
		}
	}
	if _, err := LoadJobsFile("testdata/no-such-file"); err == nil || !strings.Contains(err.Error(), "jobs file") {
		t.Errorf("missing file: %v", err)
	}
}
