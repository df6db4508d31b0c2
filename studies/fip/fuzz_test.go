package fip

import (
	"bytes"
	"io"
	"reflect"
	"testing"
)

// fuzzSeed is a small, complete results file: every (seed, year, engine,
// pattern) of a study, some points refused or deadlocked.
func fuzzSeed(f *testing.F, seeds ...uint64) []byte {
	cfg := small(seeds...).WithDefaults()
	cfg.Workers = 0
	r := Results{Fabric: "torus 3x3", Config: cfg}
	for _, s := range cfg.Seeds {
		for y := 0; y <= cfg.Years; y++ {
			for i, e := range cfg.Engines {
				for _, pat := range cfg.Patterns {
					p := Point{Seed: s, Year: y, Engine: e, Pattern: pat, LinkFailures: y, Repaired: y / 2,
						Acyclic: true, VLs: 2, AvgHops: 2.5, MaxEFI: 3, Throughput: 0.5 - 0.1*float64(y), Bound: 0.9}
					switch {
					case e == "dor" && y > 0:
						p = Point{Seed: s, Year: y, Engine: e, Pattern: pat, Error: "dor: not a torus"}
					case i == 4 && y == cfg.Years:
						p.Deadlock, p.Throughput = true, 0
					}
					r.Points = append(r.Points, p)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzReadJSON: the fail-in-place results reader never panics, and what it
// accepts round-trips through WriteJSON and goes through every report
// (summary text, CSV, plot) without a panic.
func FuzzReadJSON(f *testing.F) {
	f.Add(fuzzSeed(f, 1))
	f.Add(fuzzSeed(f, 3, 7))
	f.Add([]byte(`{"fabric": "x", "config": {"engines": ["nue"], "years": 1, "seeds": [1], "patterns": ["shift"], "vls": 2, "load": 1},
	 "points": [{"seed": 1, "year": 0, "engine": "nue", "pattern": "shift", "throughput": 0.5}]}`))
	f.Add([]byte(`{"points": [{"year": -1}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ReadJSON(bytes.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatalf("accepted results cannot be written: %v", err)
		}
		r2, err := ReadJSON(&buf, "again")
		if err != nil {
			t.Fatalf("our own results are rejected: %v", err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("results changed in a round trip:\n%+v\n%+v", r, r2)
		}
		if _, err := Merge([]*Results{r}); err != nil {
			t.Fatalf("merging one accepted file: %v", err)
		}
		if err := r.WriteCSV(io.Discard); err != nil {
			t.Fatal(err)
		}
		s := r.Summarize()
		if err := s.WriteText(io.Discard, len(r.Config.Seeds)); err != nil {
			t.Fatal(err)
		}
		for _, pat := range r.Config.Patterns {
			_ = s.Plot(io.Discard, pat, "fuzz") // "no results" is an error, not a panic
		}
	})
}
