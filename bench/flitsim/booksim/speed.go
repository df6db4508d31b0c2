package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// speedCase is one speed measurement: a fabric and workload in flitsim
// and, when BookSim2 can run the same, in BookSim2.
type speedCase struct {
	name    string
	routers int
	flitsim []string // flitsim run flags; --cycles is set per run
	short   int64    // flitsim window of the short run (setup is the long run minus it)
	long    int64
	cfg     string   // BookSim2 configuration ("" none)
	bsArgs  []string // BookSim2 overrides
	load    float64
	reps    int // runs (pairs for flitsim) whose median is reported
	note    string
}

var speedCases = []speedCase{
	{name: "8×8 torus, DOR, uniform 0.25, BookSim2-default router", routers: 64,
		flitsim: append(append([]string{}, aligned...), "--gen", "torus", "--gen-param", "dims=8x8", "--gen-param", "hosts=1",
			"--engine", "dor", "--vls", "2", "--buffer-flits", "32", "--traffic", "uniform"),
		short: 2000, long: 42000, cfg: "torus88.cfg", load: 0.25, reps: 3},
	{name: "k=12 fat tree (1,728 hosts, 432 switches), uniform 0.3", routers: 432,
		flitsim: append(append([]string{}, aligned...), "--gen", "fattree", "--gen-param", "k=12", "--gen-param", "n=3",
			"--engine", "ftree", "--vls", "1", "--buffer-flits", "32", "--traffic", "uniform"),
		short: 1000, long: 6000, cfg: "fattree4.cfg", bsArgs: []string{"k=12", "warmup_periods=1", "sample_period=2000", "max_samples=1"}, load: 0.3, reps: 1,
		note: "BookSim2 routes nca (a random up port per hop), flitsim ftree's tables; at 0.3 load, below BookSim2's saturation there (about 0.37: at 0.5 it aborts as unstable before reporting its cycles)."},
	{name: "Dragonfly p=8 a=16 h=8 (16,512 hosts, 2,064 switches), MIN, uniform 0.3", routers: 2064,
		flitsim: append(append([]string{}, aligned...), "--gen", "dragonfly", "--gen-param", "p=8", "--gen-param", "a=16", "--gen-param", "h=8",
			"--engine", "updn", "--vls", "1", "--policy", "min", "--vc-policy", "global-hops", "--buffer-flits", "256",
			"--link-latency", "10", "--global-latency", "100", "--inject-latency", "1", "--traffic", "uniform", "--warmup", "500"),
		short: 500, long: 2500, cfg: "dragonfly.cfg", bsArgs: []string{"k=8", "warmup_periods=1", "sample_period=1000", "max_samples=1"}, load: 0.3, reps: 1,
		note: "both route group-minimal per hop on 3 VCs (flitsim: --policy min over the two-level tables; its base tables, Up*/Down*, only pass the set-up's delivery check)."},
	{name: "Dragonfly p=8 a=16 h=8 with seed 002's Table III times, MIN, UN 0.3", routers: 2064,
		flitsim: append(append([]string{}, tableIII...), "--policy", "min", "--vc-policy", "df-2vc", "--traffic", "uniform"),
		short:   500, long: 2500, load: 0.3, reps: 1,
		note: "flitsim's model of seed 002's simulation (bench/seeds/002-ethernet/sim.sh): 40 ns cycles of one 200-byte flit at 40 Gb/s, 5-flit packets, 5-cycle pipeline, local links 1 cycle, global 10, 50-flit buffers per VL, virtual cut-through; BookSim2's dragonflynew fixes its own latencies, so it has no such row."},
	{name: "Dragonfly p=8 a=16 h=8 with seed 002's Table III times, conditional rules, ADV+1 0.3", routers: 2064,
		flitsim: append(append([]string{}, tableIII...), "--policy", "conditional", "--vc-policy", "df-2vc", "--traffic", "nextgroup"),
		short:   500, long: 2500, load: 0.3, reps: 1,
		note: "as above; every packet of a group heads for one global cable, so buffers fill and the conditional rules divert most packets at the source."},
}

// tableIII are the flitsim flags of seed 002's Table III network
// (bench/seeds/simstudy's dragonfly study): 129 groups, 16,512 hosts.
var tableIII = []string{"--gen", "dragonfly", "--gen-param", "p=8", "--gen-param", "a=16", "--gen-param", "h=8",
	"--engine", "updn", "--vls", "1", "--flit-bytes", "200", "--packet-flits", "5", "--link-gbps", "40",
	"--link-latency", "40ns", "--global-latency", "400ns", "--pipeline-delay", "5", "--buffer-flits", "50",
	"--warmup", "500", "--seed", "1"}

// median returns the run with the median CPU time.
func median(ps []point) point {
	sort.Slice(ps, func(i, j int) bool { return ps[i].cpu < ps[j].cpu })
	return ps[len(ps)/2]
}

// flitsimSpeed measures simulated cycles per CPU-second as the difference
// of a long and a short run (setup and routing cancel out), the median of
// c.reps pairs.
func (t tools) flitsimSpeed(c speedCase) (rate float64, long point, err error) {
	var rates []point
	for i := 0; i < max(c.reps, 1); i++ {
		a, err := t.runFlitsim(append(append([]string{}, c.flitsim...), "--cycles", strconv.FormatInt(c.short, 10)), c.load)
		if err != nil {
			return 0, long, err
		}
		b, err := t.runFlitsim(append(append([]string{}, c.flitsim...), "--cycles", strconv.FormatInt(c.long, 10)), c.load)
		if err != nil {
			return 0, long, err
		}
		rates = append(rates, point{cpu: b.cpu - a.cpu, cycles: b.cycles - a.cycles, maxRSS: b.maxRSS, accepted: b.accepted})
	}
	m := median(rates)
	return float64(m.cycles) / m.cpu, m, nil
}

// speedReport writes the speed tables of the cases whose name contains
// only ("" all).
func speedReport(w io.Writer, t tools, only string) error {
	fmt.Fprintf(w, "| workload | simulator | simulated cycles | CPU s | cycles/s | router-cycles/s | peak memory | flitsim / BookSim2 |\n|---|---|---|---|---|---|---|---|\n")
	var cases []speedCase
	for _, c := range speedCases {
		if strings.Contains(c.name, only) {
			cases = append(cases, c)
		}
	}
	for _, c := range cases {
		fmt.Fprintf(os.Stderr, "== speed: %s\n", c.name)
		fr, fl, err := t.flitsimSpeed(c)
		if err != nil {
			return err
		}
		ratio := "—"
		var b point
		if c.cfg != "" {
			var runs []point
			for i := 0; i < max(c.reps, 1) && err == nil; i++ {
				var p point
				p, err = t.runBookSim(c.cfg, c.bsArgs, c.load)
				runs = append(runs, p)
			}
			if err != nil {
				return err
			}
			b = median(runs)
			if b.cycles == 0 {
				return fmt.Errorf("%s: BookSim2 reported no simulated cycles (it aborts an unstable run before counting them): choose a load below its saturation", c.name)
			}
			ratio = fmt.Sprintf("%.1f×", fr/(float64(b.cycles)/b.cpu))
		}
		fmt.Fprintf(w, "| %s | flitsim | %d (difference of two runs) | %.2f | %.0f | %.3g | %.0f MB | %s |\n",
			c.name, fl.cycles, fl.cpu, fr, fr*float64(c.routers), float64(fl.maxRSS)/1024, ratio)
		if c.cfg != "" {
			br := float64(b.cycles) / b.cpu
			fmt.Fprintf(w, "| | BookSim2 | %d | %.2f | %.0f | %.3g | %.0f MB | |\n", b.cycles, b.cpu, br, br*float64(c.routers), float64(b.maxRSS)/1024)
		}
	}
	fmt.Fprintln(w)
	for _, c := range cases {
		if c.note != "" {
			fmt.Fprintf(w, "- %s: %s\n", c.name, c.note)
		}
	}
	return nil
}
