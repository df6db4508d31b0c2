package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFipRunAndArray(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "t.topo")
	if _, _, err := run(t, "gen", "torus", "--dims", "3x3", "--hosts", "2", "-o", fab); err != nil {
		t.Fatal(err)
	}
	study := []string{"--engines", "nue,minhop", "--years", "2", "--link-rate", "0.1", "--switch-rate", "0",
		"--warmup", "200", "--measure", "1000"}
	local := filepath.Join(dir, "local")
	out, _, err := run(t, append(append([]string{"study", "fip", fab}, study...), "--seeds", "4,1", "-o", local)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"links failed", "shift: accepted throughput", "uniform: accepted throughput", "nue", "minhop", "change"} {
		if !strings.Contains(out, want) {
			t.Fatalf("fip output lacks %q:\n%s", want, out)
		}
	}
	for _, pat := range []string{"shift", "uniform"} {
		svg, err := os.ReadFile(filepath.Join(local, "fip-"+pat+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("minhop")) {
			t.Fatalf("fip-%s.svg: %v, want an SVG plot naming the engines", pat, err)
		}
	}
	csvLocal, err := os.ReadFile(filepath.Join(local, "fip.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// 2 seeds × 3 years (0..2) × 2 engines × 2 patterns + header.
	if n := strings.Count(string(csvLocal), "\n"); n != 25 {
		t.Fatalf("fip.csv has %d lines, want 25", n)
	}

	// The SLURM array: the script's tasks, run by hand as sbatch would
	// (one process per task with its SLURM_ARRAY_TASK_ID), then merged,
	// give the local run's files.
	bin := filepath.Join(dir, "nuesm")
	if b, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	arr := filepath.Join(dir, "array")
	out, _, err = run(t, append(append([]string{"study", "fip", fab}, study...), "--seeds", "1,4", "--slurm-array", arr, "--nuesm-binary", bin)...)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(arr, "fip.sbatch")
	if !strings.Contains(out, script) {
		t.Fatalf("output %q does not name the script", out)
	}
	body, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "#SBATCH --array=0-1\n") {
		t.Fatalf("script lacks the array line:\n%s", body)
	}
	var parts []string
	for i, seed := range []string{"1", "4"} {
		cmd := exec.Command("bash", script)
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID="+string(rune('0'+i)), "SLURM_CPUS_ON_NODE=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("task %d: %v\n%s", i, err, b)
		}
		parts = append(parts, filepath.Join(arr, "part-"+seed+".json"))
	}
	merged := filepath.Join(dir, "merged")
	if _, _, err := run(t, append(append([]string{"study", "fip", "merge"}, parts...), "-o", merged)...); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fip.csv", "summary.txt"} {
		a, _ := os.ReadFile(filepath.Join(local, name))
		b, err := os.ReadFile(filepath.Join(merged, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%s of the merged array differs from the local run:\n%s\nvs\n%s", name, b, a)
		}
	}
}

func TestFipErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"study", "fip", "--default"}, "give -o DIR"},
		{[]string{"study", "fip", "--default", "--seeds", "1,x", "-o", t.TempDir()}, `"x" is not a seed`},
		{[]string{"study", "fip", "--default", "--engines", "nosuch", "-o", t.TempDir()}, "unknown engine"},
		{[]string{"study", "fip", "--default", "--slurm-array", t.TempDir()}, "needs a FABRIC file"},
		{[]string{"study", "fip", "merge", "-o", t.TempDir(), filepath.Join(t.TempDir(), "none.json")}, "no such file"},
	} {
		if _, _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want error containing %q, got %v", c.args, c.want, err)
		}
	}
}
