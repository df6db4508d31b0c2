package main

import (
	"strings"
	"testing"
)

// TestVLsOutOfRange: --vls outside 1..15 is an error in run and sweep.
func TestVLsOutOfRange(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor", "--vls", "0"},
		{"run", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor", "--vls", "16"},
		{"sweep", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor", "--vls", "99", "-o", t.TempDir()},
	} {
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "expected 1..15") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestZeroCyclesRefused: --warmup, --cycles or --max-cycles 0 is an error
// in run and sweep, never the simulator's default in disguise.
func TestZeroCyclesRefused(t *testing.T) {
	base := []string{"--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor"}
	for _, flag := range []string{"--warmup", "--cycles", "--max-cycles"} {
		for _, cmd := range [][]string{{"run"}, {"sweep", "-o", t.TempDir()}} {
			args := append(append(append([]string{}, cmd...), base...), flag, "0")
			if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), flag+" 0: expected at least 1 cycle") {
				t.Errorf("%v: %v", args, err)
			}
		}
	}
}
