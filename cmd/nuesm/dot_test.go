package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/tooltest"
	"github.com/nuesm/nuesm/lft"
)

// TestDot: nuesm dot draws a fabric alone, coloured by its tables' paths
// and by a flitsim --link-loads file; graphviz's dot parses every graph
// (dot -Tsvg) and the coloured ones carry a load colour. Bad load files
// are errors naming file and line.
func TestDot(t *testing.T) {
	dotBin := tooltest.Require(t, "graphviz", "dot")[0]
	dir := t.TempDir()
	fab := filepath.Join(dir, "torus.topo")
	if _, _, err := run(t, "gen", "torus", "--dims", "4x4", "--hosts", "1", "-o", fab); err != nil {
		t.Fatal(err)
	}
	tables := filepath.Join(dir, "out")
	if _, _, err := run(t, "route", fab, "--engine", "dor", "-o", tables); err != nil {
		t.Fatal(err)
	}
	loads := filepath.Join(dir, "loads.csv")
	writeLoads(t, fab, tables, loads)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, `"torus (0,0)" -- "torus (1,0)"`},
		{[]string{"--tables", tables}, "penwidth="},
		{[]string{"--loads", loads, "--terminals"}, "shape=ellipse"},
	} {
		out, _, err := run(t, append([]string{"dot", fab}, c.args...)...)
		if err != nil {
			t.Fatalf("dot %v: %v", c.args, err)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("dot %v lacks %q:\n%.600s", c.args, c.want, out)
		}
		cmd := exec.Command(dotBin, "-Tsvg")
		cmd.Stdin = strings.NewReader(out)
		svg, err := cmd.Output()
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("dot -Tsvg on %v: %v", c.args, err)
		}
		if c.args != nil && !bytes.Contains(svg, []byte("#ff")) {
			t.Errorf("dot %v: no load colour in the rendered graph", c.args)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("link,kind,from,from_port,to,to_port,flits,utilisation\n0,channel,nosuch,1,x,1,3,0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "dot", fab, "--loads", bad); err == nil || !strings.Contains(err.Error(), "bad.csv:2") {
		t.Errorf("bad loads file: %v", err)
	}
}

// writeLoads simulates uniform traffic on the fabric's tables and writes
// the link loads.
func writeLoads(t *testing.T, fab, tables, path string) {
	t.Helper()
	res, err := ibnetdiscover.ParseFile(fab)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(res.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	r, err := lft.ReadTableSet(tables, g, lft.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := flitsim.NewNetwork(g, r, flitsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := n.Run(context.Background(), flitsim.Traffic{Pattern: flitsim.Transpose, Load: 0.5}, flitsim.RunOptions{Seed: 1, Warmup: 200, Measure: 2000})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := n.WriteLinkLoads(&b, out); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
