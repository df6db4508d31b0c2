package sar

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// TestLoadJobsUnknownHosts: a jobs file naming a host the fabric does not
// have fails at that line, naming the job and its unknown hosts.
func TestLoadJobsUnknownHosts(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0) // hosts node0001…node0064
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jobs.txt")
	text := "# job id   hosts\n1 node[0001,0005]\n\n2 node0002,ghost[1-2],node0009 # typo\n3 ghost9,node0003\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = LoadJobs(context.Background(), g, JobsRequest{File: path})
	want := path + ":4: job 2: hosts ghost1, ghost2 not on the fabric"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want %q", err, want)
	}
	if err := os.WriteFile(path, []byte("1 node[0001,0005]\n2 node0002,node0009\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if jobs, _, err := LoadJobs(context.Background(), g, JobsRequest{File: path}); err != nil || len(jobs) != 2 {
		t.Fatalf("good file: %d jobs, %v", len(jobs), err)
	}
}
