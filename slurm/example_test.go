package slurm_test

import (
	"fmt"
	"os"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/slurm"
	"github.com/nuesm/nuesm/topo"
)

// Example goes from SLURM's view of the running jobs to the jobs a
// scheduling-aware engine routes for: squeue's output (here a capture,
// in the daemon a slurm.Squeue or slurm.REST), the fabric's CA ports as
// Endpoints, the SAR filter, and routing.Job.
func Example() {
	tp, _ := topo.FatTree(4, 3, 0) // node0001…node0064, four per leaf switch
	g, _ := fabric.Compile(tp.Fabric)

	// the adapter: Endpoint i is terminal i of the compiled fabric
	eps := make([]slurm.Endpoint, len(g.Terms))
	for i, tm := range g.Terms {
		n := g.F.Node(tm.Node)
		eps[i] = slurm.Endpoint{Desc: n.Desc, NodeGUID: n.GUID, PortGUID: n.Ports[tm.Port].GUID, Switch: tm.Switch}
	}
	hm := slurm.NewHostMap(eps, nil)

	f, _ := os.Open("testdata/squeue-all.txt")
	defer f.Close()
	jobs, err := slurm.ParseSqueue(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	sel, _ := slurm.Filter(jobs, hm, slurm.DefaultFilterOptions())
	var routed []routing.Job
	for _, mj := range sel.Jobs {
		routed = append(routed, routing.Job{ID: mj.ID, Terms: mj.Endpoints})
		fmt.Printf("kept %s on %s: %d switches\n", mj.ID, mj.NodeList, len(mj.Switches))
	}
	for _, d := range sel.Dropped {
		fmt.Printf("dropped %s: %s\n", d.ID, d.Reason)
	}
	fmt.Printf("%+v\n", routed)
	// Output:
	// kept 1 on node[0001-0002,0010]: 2 switches
	// dropped 2: too few switches
	// dropped 3: too few switches
	// dropped 4: excluded partition
	// dropped 5_1: time limit below the minimum
	// dropped 5_2: time limit below the minimum
	// dropped 6: not running
	// dropped 7+0: not running
	// dropped 7+1: not running
	// [{ID:1 Terms:[0 1 9]}]
}

// ExampleExpand shows the hostlist forms.
func ExampleExpand() {
	for _, expr := range []string{"node[001-004,010]", "a[1-3]b[2,4]", "n7,m[01-02]", "n[8-10]", "n[08-10]", "node[1-"} {
		hosts, err := slurm.Expand(expr)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(expr, "=", hosts)
	}
	// Output:
	// node[001-004,010] = [node001 node002 node003 node004 node010]
	// a[1-3]b[2,4] = [a1b2 a1b4 a2b2 a2b4 a3b2 a3b4]
	// n7,m[01-02] = [n7 m01 m02]
	// n[8-10] = [n8 n9 n10]
	// n[08-10] = [n08 n09 n10]
	// hostlist "node[1-": unterminated bracket at offset 4, expected ']'
}

// ExampleCompress shows both orders.
func ExampleCompress() {
	hosts := []string{"tux2", "tux1", "tux2", "n08", "n09", "n10", "n7"}
	fmt.Println(slurm.Compress(hosts))
	fmt.Println(slurm.CompressSorted(hosts))
	// Output:
	// tux[2,1-2],n[08-10,7]
	// n[7,08-10],tux[1-2,2]
}
