package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/routing"
)

// rsiSetup: the four 8-super-node RSI networks routed by a deterministic
// minimal engine (DFSSSP: shortest paths, deadlock-free by VL layers), one
// CA per node, uniform and super-node-local traffic: 8-flit
// single-packet messages, Bernoulli arrivals, virtual cut-through,
// 32-flit buffers per VL.
type rsiSetup struct {
	layers     []string
	supernodes int
	engine     string
	vls        int
	loads      []float64
	seeds      []uint64
	warmup     int64
	measure    int64
	workers    int
}

func fullRSI() rsiSetup {
	return rsiSetup{layers: []string{"DF", "HR", "SR", "BR"}, supernodes: 8, engine: "dfsssp", vls: 15,
		loads: loadRange(0.05, 1, 0.05), seeds: []uint64{1}, warmup: 2000, measure: 8000}
}

func quickRSI() rsiSetup {
	return rsiSetup{layers: []string{"DF"}, supernodes: 3, engine: "dfsssp", vls: 15, loads: []float64{0.2, 0.9}, seeds: []uint64{1}, warmup: 300, measure: 1500}
}

// fewestVLs returns the smallest VL limit with which engine routes rt's
// fabric (verified), up to most.
func fewestVLs(ctx context.Context, rt *routed, engine string, most int) (int, error) {
	es, err := routing.ParseChain(engine)
	if err != nil {
		return 0, err
	}
	for k := 1; k <= most; k++ {
		_, err := routing.RouteChain(ctx, rt.g, es, routing.Options{MaxVLs: k, Seed: 1})
		if err == nil {
			return k, nil
		}
		if !errors.Is(err, routing.ErrNeedVLs) && !strings.Contains(err.Error(), "VL") {
			return 0, err
		}
	}
	return 0, fmt.Errorf("%s needs more than %d VLs", engine, most)
}

// paperHops are the seed's average hop counts (§VI).
var paperHops = map[string]string{"DF": "2.5", "HR": "4.6", "SR": "4.0", "BR": "3.7"}

type rsiNet struct {
	layer    string
	net      *flitsim.Network
	groups   []int
	vls      int // VLs the tables use (DFSSSP balances over all it may)
	fewest   int // fewest VLs the engine routes with
	apl, bfs float64
	maxHops  int
	curves   [2]curve // uniform, group-local
}

// rsiPatterns are the traffic patterns of the RSI study, in the order of
// rsiNet.curves.
var rsiPatterns = []flitsim.Pattern{flitsim.Uniform, flitsim.GroupLocal}

// runRSI routes every RSI network, simulates it under both patterns and
// writes the CSV, the Markdown table and the plots.
func runRSI(ctx context.Context, s rsiSetup, dir string, md io.Writer) error {
	nets, err := rsiNets(ctx, s)
	if err != nil {
		return err
	}
	res, err := simulateRSI(ctx, s, nets)
	if err != nil {
		return err
	}
	csv := rsiCurves(s, nets, res)
	if err := os.WriteFile(filepath.Join(dir, "rsi.csv"), []byte(csv), 0o644); err != nil {
		return err
	}
	return writeRSIReport(dir, md, s, nets)
}

// rsiNets routes the RSI network of every layer-1 topology and measures its
// hops and the fewest VLs the engine needs for it.
func rsiNets(ctx context.Context, s rsiSetup) ([]*rsiNet, error) {
	var nets []*rsiNet
	for _, l := range s.layers {
		rt, err := route(ctx, "rsi", map[string]string{"layer1": l, "supernodes": fmt.Sprint(s.supernodes)}, s.engine, s.vls)
		if err != nil {
			return nil, err
		}
		net, err := flitsim.NewNetwork(rt.g, rt.r, flitsim.Config{PacketFlits: 8})
		if err != nil {
			return nil, err
		}
		fewest, err := fewestVLs(ctx, rt, s.engine, s.vls)
		if err != nil {
			return nil, err
		}
		rn := &rsiNet{layer: l, net: net, groups: rt.tp.Group, vls: rt.r.MaxVL() + 1, fewest: fewest, bfs: bfsHops(net)}
		rn.apl, rn.maxHops = hopStats(net)
		nets = append(nets, rn)
	}
	return nets, nil
}

// rsiTraffic is pattern p on rn (the groups are its super nodes, which the
// group-local pattern needs).
func rsiTraffic(rn *rsiNet, p flitsim.Pattern, load float64) flitsim.Traffic {
	return flitsim.Traffic{Pattern: p, Load: load, Groups: rn.groups}
}

// simulateRSI runs every (net, pattern, load, seed) in one pool, results
// in that order, and sets each curve's analytic bound.
func simulateRSI(ctx context.Context, s rsiSetup, nets []*rsiNet) ([]*flitsim.Result, error) {
	var jobs []job
	for _, rn := range nets {
		for pi, p := range rsiPatterns {
			for _, l := range s.loads {
				for _, seed := range s.seeds {
					jobs = append(jobs, job{net: rn.net, tr: rsiTraffic(rn, p, l), opt: flitsim.RunOptions{Seed: seed, Warmup: s.warmup, Measure: s.measure}})
				}
			}
			b, err := rn.net.Bound(rsiTraffic(rn, p, 0.5), 1)
			if err != nil {
				return nil, err
			}
			rn.curves[pi].bound = b.Saturation
		}
	}
	return runAll(ctx, jobs, s.workers)
}

// rsiCurves fills each net's curves with the means over the seeds and
// returns the CSV of every single run.
func rsiCurves(s rsiSetup, nets []*rsiNet, res []*flitsim.Result) string {
	var csv strings.Builder
	csv.WriteString("network,pattern,load,seed,offered,accepted,accepted_min,latency_mean,latency_p99,bound\n")
	i := 0
	for _, rn := range nets {
		for pi, p := range rsiPatterns {
			c := &rn.curves[pi]
			for _, l := range s.loads {
				var off, acc, lat float64
				for _, seed := range s.seeds {
					r := res[i]
					i++
					fmt.Fprintf(&csv, "%s,%s,%g,%d,%.4f,%.4f,%.4f,%.1f,%d,%.4f\n", rn.layer, p, l, seed, r.OfferedFraction, r.AcceptedFraction,
						r.AcceptedMin/rn.net.Config().LinkBandwidth, r.Latency.Mean, r.Latency.P99, c.bound)
					off += r.OfferedFraction
					acc += r.AcceptedFraction
					lat += r.Latency.Mean
				}
				m := float64(len(s.seeds))
				c.offered, c.accepted, c.lat = append(c.offered, off/m), append(c.accepted, acc/m), append(c.lat, lat/m)
			}
			c.sat, c.peak = saturation(c.offered, c.accepted, c.lat)
		}
	}
	return csv.String()
}

// writeRSIReport writes the Markdown table and, per pattern, the latency
// and throughput plots of all networks.
func writeRSIReport(dir string, md io.Writer, s rsiSetup, nets []*rsiNet) error {
	base := filepath.Base(dir)
	fmt.Fprintf(md, "Hops = router-to-router (switch-to-switch) hops of the %s tables over every ordered pair\n", s.engine)
	fmt.Fprintf(md, "of nodes (BFS = shortest-path mean, so equal means minimal). Knee = highest offered load up\n")
	fmt.Fprintf(md, "to which the mean latency stays within 3× its value at the lowest load; peak = highest accepted throughput; bound\n")
	fmt.Fprintf(md, "= analytic 1/max channel load (fractions of the link bandwidth per node). VLs = VLs the tables\n")
	fmt.Fprintf(md, "use (the engine spreads its layers over every VL it may use, limit %d), in brackets the fewest\n", s.vls)
	fmt.Fprintf(md, "it can route with.\n\n")
	var rows [][]string
	for _, rn := range nets {
		u, g := rn.curves[0], rn.curves[1]
		rows = append(rows, []string{rn.layer, fmt.Sprint(rn.net.NumNodes()), fmt.Sprintf("%d (%d)", rn.vls, rn.fewest), f3(rn.apl), f3(rn.bfs), paperHops[rn.layer],
			fmt.Sprint(rn.maxHops), f2(u.sat), f3(u.peak), f3(u.bound), f2(g.sat), f3(g.peak), f3(g.bound)})
	}
	table(md, []string{"network", "nodes", "VLs (fewest)", "avg hops", "BFS", "paper", "max hops", "uniform knee", "peak", "bound", "local knee", "peak", "bound"}, rows)
	fmt.Fprintln(md)
	for pi, p := range rsiPatterns {
		var lat, thr []series
		for _, rn := range nets {
			c := rn.curves[pi]
			lat = append(lat, series{name: rn.layer, x: c.offered, y: c.lat})
			thr = append(thr, series{name: rn.layer, x: c.offered, y: c.accepted})
		}
		name := "rsi-" + p.String()
		if err := linePlot(filepath.Join(dir, name+"-latency.svg"), fmt.Sprintf("RSI, %d super nodes, %s traffic: latency", s.supernodes, p), "offered load", "mean latency (cycles)", lat, true); err != nil {
			return err
		}
		if err := linePlot(filepath.Join(dir, name+"-throughput.svg"), fmt.Sprintf("RSI, %d super nodes, %s traffic: throughput", s.supernodes, p), "offered load", "accepted throughput", thr, false); err != nil {
			return err
		}
		fmt.Fprintf(md, "![%s latency](%s/%s-latency.svg) ![%s throughput](%s/%s-throughput.svg)\n\n", p, base, name, p, base, name)
	}
	return nil
}
