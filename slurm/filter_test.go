package slurm_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/slurm"
)

func job(t *testing.T, id, state, nodeList string, limit time.Duration, partition string) slurm.Job {
	t.Helper()
	nodes, err := slurm.Expand(nodeList)
	if err != nil {
		t.Fatal(err)
	}
	return slurm.Job{ID: id, State: state, NodeList: nodeList, Nodes: nodes, TimeLimit: limit, Partition: partition}
}

// filterJobs is a mix on topo.FatTree(4,3,0), whose leaf switches hold
// node0001-0004, node0005-0008, … .
func filterJobs(t *testing.T) []slurm.Job {
	R := slurm.StateRunning
	return []slurm.Job{
		job(t, "10", R, "node[0001-0004]", time.Hour, "batch"),                   // one leaf
		job(t, "11", R, "node[0001,0005]", 30*time.Minute, "batch"),              // two leaves
		job(t, "12", R, "node[0009-0016]", slurm.Unlimited, "batch"),             // two leaves
		job(t, "13", R, "node[0017,0021]", 20*time.Minute, "debug"),              // excluded partition
		job(t, "14", R, "node[0025,0029]", 20*time.Minute, "Debug-GPU"),          // also, any case
		job(t, "15", R, "node[0033,0037]", 10*time.Minute-time.Second, "batch"),  // too short
		job(t, "16", R, "node[0041,0045]", 0, "batch"),                           // limit unknown: kept
		job(t, "17", "PENDING", "", time.Hour, "batch"),                          // not running
		job(t, "18", R, "login[1-2]", time.Hour, "batch"),                        // not on the fabric
		job(t, "19", R, "node[0049,0053],ghost7,node0049", time.Hour, "batch"),   // partly unknown, a repeat
		job(t, "2", R, "node[0057-0058]", time.Hour, "batch"),                    // one leaf
		job(t, "20", R, "node[0001,0017,0033,0061]", 10*time.Minute, "gpu,long"), // four leaves, exactly 10 min
		job(t, "21", "CONFIGURING", "node[0002,0006]", time.Hour, "batch"),       // PrologSlurmctld running: kept
		job(t, "22", "COMPLETING", "node[0003,0007]", time.Hour, "batch"),        // EpilogSlurmctld running: gone
	}
}

func TestFilterSAR(t *testing.T) {
	g, eps := fatTree(t)
	hm := slurm.NewHostMap(eps, nil)
	sel, err := slurm.Filter(filterJobs(t), hm, slurm.DefaultFilterOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"11": 2, "12": 2, "16": 2, "19": 2, "20": 4, "21": 2} // id → switches
	var kept []string
	for _, mj := range sel.Jobs {
		kept = append(kept, mj.ID)
		if len(mj.Switches) != want[mj.ID] {
			t.Errorf("job %s: switches %v, want %d", mj.ID, mj.Switches, want[mj.ID])
		}
		// endpoints are exactly the terminals of its known hosts
		var hostsOf []string
		for _, e := range mj.Endpoints {
			hostsOf = append(hostsOf, slurm.DescHost(g.F.Node(g.Terms[e].Node).Desc))
			if !slices.Contains(mj.Switches, g.Terms[e].Switch) {
				t.Errorf("job %s: endpoint %d on switch %d, not in %v", mj.ID, e, g.Terms[e].Switch, mj.Switches)
			}
		}
		var known []string
		for _, h := range mj.Nodes {
			if !strings.HasPrefix(h, "ghost") && !slices.Contains(known, h) {
				known = append(known, h)
			}
		}
		slices.Sort(known)
		if !slices.Equal(hostsOf, known) || !slices.IsSorted(mj.Endpoints) {
			t.Errorf("job %s: endpoints %v are hosts %q, want %q", mj.ID, mj.Endpoints, hostsOf, known)
		}
	}
	if wantIDs := []string{"11", "12", "16", "19", "20", "21"}; !slices.Equal(kept, wantIDs) {
		t.Errorf("kept %q, want %q", kept, wantIDs)
	}
	wantDropped := []slurm.Dropped{
		{ID: "2", Reason: slurm.DropSwitches},
		{ID: "10", Reason: slurm.DropSwitches},
		{ID: "13", Reason: slurm.DropPartition},
		{ID: "14", Reason: slurm.DropPartition},
		{ID: "15", Reason: slurm.DropShort},
		{ID: "17", Reason: slurm.DropNotRunning},
		{ID: "18", Reason: slurm.DropOffFabric},
		{ID: "22", Reason: slurm.DropNotRunning},
	}
	if !slices.Equal(sel.Dropped, wantDropped) {
		t.Errorf("dropped %v\nwant    %v", sel.Dropped, wantDropped)
	}
	if want := []string{"ghost7", "login1", "login2"}; !slices.Equal(sel.UnknownHosts, want) {
		t.Errorf("unknown hosts %q, want %q", sel.UnknownHosts, want)
	}
	if j19 := sel.Jobs[3]; !slices.Equal(j19.Unknown, []string{"ghost7"}) || len(j19.Endpoints) != 2 {
		t.Errorf("job 19: unknown %q, endpoints %v", j19.Unknown, j19.Endpoints)
	}
}

func TestFilterIsDeterministic(t *testing.T) {
	_, eps := fatTree(t)
	hm := slurm.NewHostMap(eps, nil)
	jobs := filterJobs(t)
	orig := slices.Clone(jobs)
	first, err := slurm.Filter(jobs, hm, slurm.DefaultFilterOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(jobs, orig) {
		t.Fatal("Filter modified its input")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		r.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
		again, err := slurm.Filter(jobs, hm, slurm.DefaultFilterOptions())
		if err != nil || !reflect.DeepEqual(again, first) {
			t.Fatalf("output depends on the input order:\n%+v\n%+v", again, first)
		}
	}
}

func TestFilterOptions(t *testing.T) {
	_, eps := fatTree(t)
	hm := slurm.NewHostMap(eps, nil)
	keptIDs := func(opt slurm.FilterOptions) []string {
		t.Helper()
		sel, err := slurm.Filter(filterJobs(t), hm, opt)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, mj := range sel.Jobs {
			ids = append(ids, mj.ID)
		}
		return ids
	}
	for _, tc := range []struct {
		name string
		opt  slurm.FilterOptions
		want []string
	}{
		{"zero value: running multi-switch jobs", slurm.FilterOptions{}, []string{"11", "12", "13", "14", "15", "16", "19", "20", "21"}},
		{"three switches", slurm.FilterOptions{MinSwitches: 3}, []string{"20"}},
		{"one switch", slurm.FilterOptions{MinSwitches: 1}, []string{"2", "10", "11", "12", "13", "14", "15", "16", "19", "20", "21"}},
		{"exact partition name", slurm.FilterOptions{ExcludePartitions: []string{"DEBUG"}}, []string{"11", "12", "14", "15", "16", "19", "20", "21"}},
		{"one of several partitions", slurm.FilterOptions{ExcludePartitions: []string{"long"}}, []string{"11", "12", "13", "14", "15", "16", "19", "21"}},
		{"longer minimum", slurm.FilterOptions{MinTimeLimit: 31 * time.Minute}, []string{"12", "16", "19", "21"}},
	} {
		if got := keptIDs(tc.opt); !slices.Equal(got, tc.want) {
			t.Errorf("%s: kept %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, bad := range []slurm.FilterOptions{
		{MinTimeLimit: -time.Second},
		{MinSwitches: -1},
		{ExcludePartitions: []string{"debug", "[a-"}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: Validate passed", bad)
		}
		if _, err := slurm.Filter(nil, hm, bad); err == nil {
			t.Errorf("%+v: Filter passed", bad)
		}
	}
	if err := slurm.DefaultFilterOptions().Validate(); err != nil {
		t.Error(err)
	}
	sel, err := slurm.Filter(nil, hm, slurm.DefaultFilterOptions())
	if err != nil || len(sel.Jobs)+len(sel.Dropped)+len(sel.UnknownHosts) != 0 {
		t.Errorf("no jobs: %+v, %v", sel, err)
	}
}
