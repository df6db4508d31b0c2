package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sweepArgs is a small sweep: 3 engines (one rejected by the verifier)
// × 2 loads × 2 seeds.
var sweepArgs = []string{"sweep", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor,nue/2,minhop",
	"--loads", "0.3,0.6", "--seeds", "1:2", "--warmup", "300", "--cycles", "2000"}

// unquoteArgs reads the ARGS=(…) line of the array script: bash words in
// single quotes, with '\” for a quote.
func unquoteArgs(t *testing.T, script string) []string {
	t.Helper()
	var line string
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(l, "ARGS=(") {
			line = strings.TrimSuffix(strings.TrimPrefix(l, "ARGS=("), ")")
		}
	}
	if line == "" {
		t.Fatalf("no ARGS line in:\n%s", script)
	}
	var out []string
	for _, w := range strings.Split(line, "' '") {
		w = strings.TrimSuffix(strings.TrimPrefix(w, "'"), "'")
		out = append(out, strings.ReplaceAll(w, `'\''`, "'"))
	}
	return out
}

// TestSweepSlurmMerge: a local sweep, and the same sweep as a SLURM array
// whose tasks are run by hand (as sbatch would, one --point each) and
// merged, give byte-identical CSV and JSON.
func TestSweepSlurmMerge(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "local")
	out, _, err := run(t, append(append([]string{}, sweepArgs...), "--workers", "2", "-o", local)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "minhop") || !strings.Contains(out, "dependency cycle") {
		t.Errorf("summary does not say why minhop was not simulated:\n%s", out)
	}
	for _, f := range []string{"sweep.csv", "sweep.json", "latency.svg", "throughput.svg", "heat-dor.svg", "heat-nue-2.svg"} {
		if st, err := os.Stat(filepath.Join(local, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	localCSV, err := os.ReadFile(filepath.Join(local, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(localCSV)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+3*2*2 {
		t.Fatalf("%d CSV records, want a header and 12 rows", len(recs))
	}
	for _, r := range recs[1:] {
		acc, _ := strconv.ParseFloat(r[6], 64)
		switch {
		case r[1] == "minhop" && !strings.Contains(r[20], "dependency cycle"):
			t.Errorf("minhop row without the verifier's reason: %v", r)
		case r[1] != "minhop" && (acc <= 0.25 || r[17] != "" || r[20] != ""):
			t.Errorf("row %v: accepted %g", r, acc)
		}
	}

	// The comparison table.
	out, _, err = run(t, "summary", local, "--plot", filepath.Join(dir, "cmp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| engine | torus dims=4x4 hosts=1 |", "| dor | 0.", "| nue/2 | 0.", "| minhop | — cyclic CDG |"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cmp-uniform.svg")); err != nil {
		t.Error(err)
	}

	// The array script.
	sdir := filepath.Join(dir, "slurm")
	if _, _, err := run(t, append(append([]string{}, sweepArgs...), "--slurm-array", sdir, "--flitsim-bin", "/opt/flitsim", "--slurm-time", "0:10:00")...); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(sdir, "sweep.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	for _, want := range []string{"#!/bin/bash", "#SBATCH --array=0-11\n", "#SBATCH --time=0:10:00\n", "FLITSIM='/opt/flitsim'", `--point "$SLURM_ARRAY_TASK_ID"`} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(bash, "-n", filepath.Join(sdir, "sweep.sbatch")).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v\n%s", err, out)
		}
	}
	args := unquoteArgs(t, script)
	if args[0] != "sweep" {
		t.Fatalf("script runs %v", args)
	}
	points := filepath.Join(sdir, "points")
	for i := 11; i >= 0; i-- { // any order
		if _, _, err := run(t, append(append([]string{}, args...), "--point", strconv.Itoa(i), "--out", points)...); err != nil {
			t.Fatalf("point %d: %v", i, err)
		}
	}
	merged := filepath.Join(dir, "merged")
	if _, _, err := run(t, "merge", points, "-o", merged, "--plots", "none"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sweep.csv", "sweep.json"} {
		a, _ := os.ReadFile(filepath.Join(local, f))
		b, err := os.ReadFile(filepath.Join(merged, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s of the merged array differs from the local sweep (%v)", f, err)
		}
	}

	// A missing point is an error.
	if err := os.Remove(filepath.Join(points, "point-00004.json")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "merge", points, "-o", filepath.Join(dir, "bad")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("merge with a point missing: %v", err)
	}
}

func TestSweepErrors(t *testing.T) {
	base := []string{"sweep", "--gen", "torus", "--gen-param", "dims=4x4", "-o", t.TempDir()}
	for _, extra := range [][]string{
		{"--engine", "nosuch"},
		{"--engine", "nue/99"},
		{"--engine", "dor,dor"},
		{"--loads", "0.5,1.5"},
		{"--loads", "1:0.5:0.1"},
		{"--seeds", "x"},
		{"--plots", "pdf"},
		{"--point", "99"},
	} {
		if _, _, err := run(t, append(append([]string{}, base...), extra...)...); err == nil {
			t.Errorf("%v: no error", extra)
		}
	}
}

// TestSweepEngineParams: an engine with parameters and a VL limit is
// routed with its parameters (its rows and heat map carry the label), and
// an unknown parameter value is refused before anything is simulated.
func TestSweepEngineParams(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "sweep", "--gen", "torus", "--gen-param", "dims=3x3", "--engine", "nue:share=switch/2",
		"--loads", "0.3", "--seeds", "1", "--warmup", "200", "--cycles", "1000", "-o", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "nue:share=switch/2") {
		t.Errorf("summary without the engine's label:\n%s", out)
	}
	if st, err := os.Stat(filepath.Join(dir, "heat-nue_share_switch-2.svg")); err != nil || st.Size() == 0 {
		t.Errorf("heat map: %v", err)
	}
	_, _, err = run(t, "sweep", "--gen", "torus", "--gen-param", "dims=3x3", "--engine", "nue:share=bogus",
		"--loads", "0.3", "-o", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "share") {
		t.Errorf("bad parameter value: err %v, want a refusal naming the parameter", err)
	}
}
