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
