package sm

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/topo"
)

// FuzzParseConfig: no configuration text panics the parser, and every
// setting of an accepted one is in range once defaults fill the rest.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"",
		"fabric = \"/x.topo\"\noutput = \"/o\"\nengines = \"nue:share=none,dfsssp,updn\"\nmax_vls = 4\nseed = 7\n",
		"fabric_poll = \"5s\"\nreroute_timeout = \"2m\"\nmax_dump_bytes = 1048576\nkeep = 2\n",
		"[params]\npartition = \"locality\"\n[slurm]\nenabled = true\nsource = \"rest\"\nrest_url = \"unix:///run/s.sock\"\npoll = \"off\"\ntimeout = \"3s\"\nexclude_partitions = [\"debug\", \"t*\"]\n",
		"seed = -5\n", "max_vls = 0\n", "[slurm]\ntimeout = \"off\"\n", "fabric_poll = \"1ns\"\n",
		"listen = \"127.0.0.1:9716\"\ntoken_file = \"/etc/nuesm/token\"\n",
	} {
		f.Add([]byte(s))
	}
	keys := slices.Sorted(maps.Keys(rangeChecks))
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := ParseConfig(text, "fuzz.toml")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := c.Defaults().Check(keys...); err != nil {
			t.Fatalf("accepted %q, but after defaults: %v", text, err)
		}
	})
}

// FuzzDumpToTables runs dumps through the daemon's path to tables: load
// (parse, LIDs, compile), route with a small chain (Up*/Down*, then Nue),
// verify. Nothing may panic, and every routing the chain returns passed
// the verifier.
func FuzzDumpToTables(f *testing.F) {
	for _, mk := range []func() (*topo.Topology, error){
		func() (*topo.Topology, error) { return topo.Ring(3, 1, nil) },
		func() (*topo.Topology, error) { return topo.Torus([]int{2, 3}, 1, false) },
		func() (*topo.Topology, error) { return topo.FatTree(4, 2, 0) },
		func() (*topo.Topology, error) { return topo.Ring(5, 2, []int{0, 2}) },
	} {
		tp, err := mk()
		if err != nil {
			f.Fatal(err)
		}
		var b strings.Builder
		if err := ibnetdiscover.Write(&b, tp.Fabric); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(b.String()))
	}
	s, err := New(Config{Fabric: "/fuzz.topo", Output: f.TempDir(), Engines: "updn,nue", MaxVLs: 2})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		l, err := ibnetdiscover.Load(text, "fuzz.topo")
		if err != nil {
			return
		}
		if l.Graph.NumSwitches() > 64 || len(l.Graph.Terms) > 256 {
			return // keeps each run short
		}
		res, err := s.routeAndVerify(context.Background(), l.Graph, nil)
		if err != nil {
			return
		}
		if res.Routing == nil || res.Report == nil || !res.Report.OK() {
			t.Fatalf("chain returned unverified tables: %+v", res.Report)
		}
	})
}
