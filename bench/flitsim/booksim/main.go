// Command booksim compares flitsim with BookSim2 side by side and measures
// flitsim's speed; bench/flitsim/booksim.sh builds both and runs it.
//
//	booksim -booksim PATH -flitsim PATH [-only NAME] > booksim.md
//	booksim -speed -booksim PATH -flitsim PATH > speed.md
//
// Every row runs the same workload in both simulators with the settings
// aligned (booksim/*.cfg beside this file; flitsim flags in rows.go), and
// finds each simulator's saturation load by bisection on its own verdict:
// BookSim2's "unstable" (or accepted below 95 % of injected), flitsim's
// Result.Verdict. It is a report generator: it measures, never asserts.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// point is one run of one simulator at one offered load.
type point struct {
	load, accepted, latency float64
	stable                  bool
	cycles                  int64
	cpu                     float64 // CPU seconds (user + system)
	maxRSS                  int64   // KiB
}

// tools are the two simulators and the configuration directory.
type tools struct {
	booksim, flitsim, cfgDir string
}

// runBookSim runs BookSim2 on cfg with the overrides and parses its
// overall statistics.
func (t tools) runBookSim(cfg string, overrides []string, load float64) (point, error) {
	args := append([]string{filepath.Join(t.cfgDir, cfg)}, overrides...)
	args = append(args, fmt.Sprintf("injection_rate=%g", load))
	out, cpu, rss, err := run(t.booksim, args)
	p := point{load: load, cpu: cpu, maxRSS: rss}
	// BookSim2 exits with status 255 after a stable run and 0 after an
	// unstable one; its last line says whether it finished.
	if !bytes.Contains(out, []byte("Total run time")) {
		return p, fmt.Errorf("booksim %s: %v\n%s", strings.Join(args, " "), err, tail(out))
	}
	p.stable = !bytes.Contains(out, []byte("Simulation unstable"))
	p.latency = lastFloat(out, `Packet latency average = ([0-9.e+-]+)`)
	p.accepted = lastFloat(out, `Accepted flit rate average = ([0-9.e+-]+)`)
	if !p.stable {
		p.accepted = lastFloat(out, `Accepted flit rate average= ([0-9.e+-]+)`)
		p.latency = lastFloat(out, `Packet latency average = ([0-9.e+-]+)`)
	}
	injected := lastFloat(out, `Injected flit rate average = ([0-9.e+-]+)`)
	if p.stable && p.accepted < 0.95*injected {
		p.stable = false
	}
	p.cycles = int64(lastFloat(out, `Time taken is ([0-9]+) cycles`))
	return p, nil
}

// runFlitsim runs `flitsim run` with args at load and reads its JSON.
func (t tools) runFlitsim(args []string, load float64) (point, error) {
	args = append(append([]string{"run"}, args...), "--load", strconv.FormatFloat(load, 'g', -1, 64), "--json", "-", "--busiest", "0", "--no-bound")
	out, cpu, rss, err := run(t.flitsim, args)
	p := point{load: load, cpu: cpu, maxRSS: rss}
	if err != nil {
		return p, fmt.Errorf("flitsim %s: %w\n%s", strings.Join(args, " "), err, tail(out))
	}
	i := bytes.IndexByte(out, '{')
	var doc struct {
		Result struct {
			AcceptedFraction float64 `json:"accepted_fraction"`
			Verdict          string  `json:"verdict"`
			Cycles           int64   `json:"cycles"`
			Latency          struct {
				Mean float64 `json:"mean"`
			} `json:"latency"`
		} `json:"result"`
	}
	if i < 0 || json.Unmarshal(out[i:], &doc) != nil {
		return p, fmt.Errorf("flitsim %s: no JSON result\n%s", strings.Join(args, " "), tail(out))
	}
	r := doc.Result
	p.accepted, p.latency, p.stable, p.cycles = r.AcceptedFraction, r.Latency.Mean, r.Verdict == "stable", r.Cycles
	return p, nil
}

// run executes a command and returns its output, CPU seconds and peak
// resident memory (KiB).
func run(bin string, args []string) ([]byte, float64, int64, error) {
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.ProcessState == nil {
		return out.Bytes(), 0, 0, err
	}
	cpu := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return out.Bytes(), cpu, rss, err
}

func lastFloat(out []byte, pattern string) float64 {
	m := regexp.MustCompile(pattern).FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	return v
}

func tail(out []byte) string {
	if len(out) > 2000 {
		out = out[len(out)-2000:]
	}
	return string(out)
}

// saturation bisects for the highest stable load in [lo, hi] to within
// step, given a run function; it returns that load and the runs made.
func saturation(runAt func(float64) (point, error), lo, hi, step float64) (float64, []point, error) {
	var pts []point
	best := 0.0
	for hi-lo > step {
		mid := (lo + hi) / 2
		p, err := runAt(mid)
		if err != nil {
			return 0, pts, err
		}
		pts = append(pts, p)
		if p.stable {
			lo, best = mid, mid
		} else {
			hi = mid
		}
	}
	return best, pts, nil
}

func main() {
	var t tools
	flag.StringVar(&t.booksim, "booksim", "booksim", "BookSim2 binary")
	flag.StringVar(&t.flitsim, "flitsim", "bin/flitsim", "flitsim binary")
	flag.StringVar(&t.cfgDir, "configs", "bench/flitsim/booksim", "directory of the BookSim2 configurations")
	only := flag.String("only", "", "run only the rows (with -speed: the speed cases) whose name contains this")
	speed := flag.Bool("speed", false, "write the speed report instead of the comparison")
	flag.Parse()
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	var err error
	if *speed {
		err = speedReport(w, t, *only)
	} else {
		err = compare(w, t, *only)
	}
	if err != nil {
		w.Flush()
		fmt.Fprintln(os.Stderr, "booksim:", err)
		os.Exit(1)
	}
}

// compare writes the side-by-side report.
func compare(w io.Writer, t tools, only string) error {
	t0 := time.Now()
	fmt.Fprint(w, header)
	var summary []string
	for _, r := range rows {
		if only != "" && !strings.Contains(r.name, only) {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", r.name)
		line, err := r.report(w, t)
		if err != nil {
			return err
		}
		summary = append(summary, line)
	}
	fmt.Fprintf(w, "\n## Saturation points\n\n| row | BookSim2 | flitsim | difference | within 10 %% |\n|---|---|---|---|---|\n")
	for _, s := range summary {
		fmt.Fprintln(w, s)
	}
	fmt.Fprintf(w, "\nThe whole comparison took %.0f s of wall time.\n", time.Since(t0).Seconds())
	return nil
}
