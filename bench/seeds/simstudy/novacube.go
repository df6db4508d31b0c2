package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuesm/nuesm/flitsim"
)

// novaSetup: NovaCube (pora tables) against the torus of the same size
// (DOR) under random permutation traffic: 8-flit single-packet messages,
// Bernoulli arrivals, virtual cut-through, 32-flit buffers per VL, the VLs
// the routing uses; every point averaged over the permutations of seeds.
type novaSetup struct {
	sizes   [][2]int // k, n
	loads   []float64
	seeds   []uint64
	warmup  int64
	measure int64
	workers int
}

func fullNova() novaSetup {
	return novaSetup{sizes: [][2]int{{8, 2}, {4, 3}, {6, 2}}, loads: loadRange(0.05, 1, 0.05), seeds: []uint64{1, 2, 3}, warmup: 2000, measure: 8000}
}

func quickNova() novaSetup {
	return novaSetup{sizes: [][2]int{{4, 2}}, loads: []float64{0.2, 0.8}, seeds: []uint64{1}, warmup: 300, measure: 1500}
}

type novaNet struct {
	label, engine string
	net           *flitsim.Network
	vls           int
	apl, bfs      float64
	maxHops       int
	c             curve
}

// runNova routes both fabrics of every size, simulates them and writes
// the CSV, the Markdown table and the plots.
func runNova(ctx context.Context, s novaSetup, dir string, md io.Writer) error {
	nets, err := novaNets(ctx, s)
	if err != nil {
		return err
	}
	res, err := simulateNova(ctx, s, nets)
	if err != nil {
		return err
	}
	csv := novaCurves(s, nets, res)
	if err := os.WriteFile(filepath.Join(dir, "novacube.csv"), []byte(csv), 0o644); err != nil {
		return err
	}
	return writeNovaReport(dir, md, s, nets)
}

// novaNets routes, per size, the torus with DOR and the NovaCube with pora
// (in that order, which writeNovaReport pairs up) and measures their hops.
func novaNets(ctx context.Context, s novaSetup) ([]*novaNet, error) {
	var nets []*novaNet
	for _, kn := range s.sizes {
		k, n := kn[0], kn[1]
		dims := strings.TrimSuffix(strings.Repeat(fmt.Sprint(k)+"x", n), "x")
		for _, v := range []struct{ kind, engine string }{{"torus", "dor"}, {"novacube", "pora"}} {
			params := map[string]string{"dims": dims, "hosts": "1"}
			if v.kind == "novacube" {
				params = map[string]string{"k": fmt.Sprint(k), "n": fmt.Sprint(n), "hosts": "1"}
			}
			rt, err := route(ctx, v.kind, params, v.engine, 8)
			if err != nil {
				return nil, err
			}
			net, err := flitsim.NewNetwork(rt.g, rt.r, flitsim.Config{PacketFlits: 8})
			if err != nil {
				return nil, err
			}
			nn := &novaNet{label: dims + " " + v.kind, engine: v.engine, net: net, vls: rt.r.MaxVL() + 1, bfs: bfsHops(net)}
			nn.apl, nn.maxHops = hopStats(net)
			nets = append(nets, nn)
		}
	}
	return nets, nil
}

// novaTraffic is the random permutation traffic of seed 004's comparison.
func novaTraffic(load float64) flitsim.Traffic {
	return flitsim.Traffic{Pattern: flitsim.Permutation, Load: load}
}

// simulateNova runs every (net, load, seed) in one pool, results in that
// order, and sets each net's bound to the mean over the seeds'
// permutations.
func simulateNova(ctx context.Context, s novaSetup, nets []*novaNet) ([]*flitsim.Result, error) {
	var jobs []job
	for _, nn := range nets {
		for _, l := range s.loads {
			for _, seed := range s.seeds {
				jobs = append(jobs, job{net: nn.net, tr: novaTraffic(l), opt: flitsim.RunOptions{Seed: seed, Warmup: s.warmup, Measure: s.measure}})
			}
		}
		for _, seed := range s.seeds {
			b, err := nn.net.Bound(novaTraffic(0.5), seed)
			if err != nil {
				return nil, err
			}
			nn.c.bound += b.Saturation / float64(len(s.seeds))
		}
	}
	return runAll(ctx, jobs, s.workers)
}

// novaCurves fills each net's curve with the means over the seeds and
// returns the CSV of every single run.
func novaCurves(s novaSetup, nets []*novaNet, res []*flitsim.Result) string {
	var csv strings.Builder
	csv.WriteString("fabric,engine,load,seed,offered,accepted,accepted_min,latency_mean,latency_p99\n")
	i := 0
	for _, nn := range nets {
		for _, l := range s.loads {
			var off, acc, lat float64
			for _, seed := range s.seeds {
				r := res[i]
				i++
				fmt.Fprintf(&csv, "%s,%s,%g,%d,%.4f,%.4f,%.4f,%.1f,%d\n", nn.label, nn.engine, l, seed, r.OfferedFraction, r.AcceptedFraction,
					r.AcceptedMin/nn.net.Config().LinkBandwidth, r.Latency.Mean, r.Latency.P99)
				off += r.OfferedFraction
				acc += r.AcceptedFraction
				lat += r.Latency.Mean
			}
			m := float64(len(s.seeds))
			nn.c.offered, nn.c.accepted, nn.c.lat = append(nn.c.offered, off/m), append(nn.c.accepted, acc/m), append(nn.c.lat, lat/m)
		}
		nn.c.sat, nn.c.peak = saturation(nn.c.offered, nn.c.accepted, nn.c.lat)
	}
	return csv.String()
}

// writeNovaReport writes the Markdown table and, per size, the latency and
// throughput plots of the torus/NovaCube pair.
func writeNovaReport(dir string, md io.Writer, s novaSetup, nets []*novaNet) error {
	base := filepath.Base(dir)
	var rows [][]string
	for _, nn := range nets {
		rows = append(rows, []string{nn.label, nn.engine, fmt.Sprint(nn.vls), f3(nn.apl), f3(nn.bfs), fmt.Sprint(nn.maxHops),
			f1(nn.c.lat[0]), f2(nn.c.sat), f3(nn.c.peak), f3(nn.c.bound)})
	}
	fmt.Fprintf(md, "APL = mean switch-to-switch hops of the tables over all ordered node pairs (BFS = the\n")
	fmt.Fprintf(md, "shortest-path mean); latency at load %.2f = mean packet latency in cycles near zero load;\n", s.loads[0])
	fmt.Fprintf(md, "knee = highest offered load up to which the mean latency stays within 3× its value at the lowest load; peak =\n")
	fmt.Fprintf(md, "highest accepted throughput; bound = analytic 1/max channel load of the permutations (all\n")
	fmt.Fprintf(md, "fractions of the link bandwidth per node, means over the permutations of seeds %v).\n\n", s.seeds)
	table(md, []string{"fabric", "tables", "VLs", "APL", "BFS", "max hops", fmt.Sprintf("latency @%.2f", s.loads[0]), "knee", "peak", "bound"}, rows)
	fmt.Fprintln(md)
	for k := 0; k+1 < len(nets); k += 2 {
		a, b := nets[k], nets[k+1]
		name := "novacube-" + strings.Fields(a.label)[0]
		lat := []series{{name: a.label + " (dor)", x: a.c.offered, y: a.c.lat}, {name: b.label + " (pora)", x: b.c.offered, y: b.c.lat}}
		thr := []series{{name: a.label + " (dor)", x: a.c.offered, y: a.c.accepted}, {name: b.label + " (pora)", x: b.c.offered, y: b.c.accepted}}
		if err := linePlot(filepath.Join(dir, name+"-latency.svg"), strings.Fields(a.label)[0]+": random permutation, latency", "offered load", "mean latency (cycles)", lat, true); err != nil {
			return err
		}
		if err := linePlot(filepath.Join(dir, name+"-throughput.svg"), strings.Fields(a.label)[0]+": random permutation, throughput", "offered load", "accepted throughput", thr, false); err != nil {
			return err
		}
		fmt.Fprintf(md, "![%s latency](%s/%s-latency.svg) ![%s throughput](%s/%s-throughput.svg)\n\n", name, base, name, name, base, name)
	}
	return nil
}
