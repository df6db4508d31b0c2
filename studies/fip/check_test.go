package fip

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestReadJSONRejects: results no study writes are refused with the
// reason, and a study's own results are read.
func TestReadJSONRejects(t *testing.T) {
	good := `{"fabric": "x", "config": {"engines": ["nue"], "years": 1, "seeds": [1], "patterns": ["shift"], "vls": 2, "load": 1},
	 "points": [POINT]}`
	point := `{"seed": 1, "year": 0, "engine": "nue", "pattern": "shift", "throughput": 0.5}`
	if _, err := ReadJSON(strings.NewReader(strings.Replace(good, "POINT", point, 1)), "good.json"); err != nil {
		t.Fatalf("good results: %v", err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"year": 0`, `"year": 2`, "good.json: point 0: year 2, expected 0..1 (config.years)"},
		{`"year": 0`, `"year": -1`, "year -1"},
		{`"engine": "nue"`, `"engine": "dfsssp"`, `engine "dfsssp", expected one of config.engines ["nue"]`},
		{`"pattern": "shift"`, `"pattern": "uniform"`, `pattern "uniform"`},
		{`"seed": 1`, `"seed": 2`, "seed 2, expected one of config.seeds [1]"},
		{`"years": 1`, `"years": 1000000000`, "config: 1000000000 years, expected 1..1000"},
		{`"years": 1`, `"years": -3`, "config: fip: -3 years"},
		{`"seeds": [1]`, `"seeds": [1, 1]`, "seed 1 given twice"},
		{`"engines": ["nue"]`, `"engines": ["nope"]`, "unknown engine"},
	} {
		in := strings.Replace(strings.Replace(good, "POINT", point, 1), tc.from, tc.to, 1)
		_, err := ReadJSON(strings.NewReader(in), "good.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.to, err, tc.want)
		}
	}
}

// TestWriteTextWithoutPoints: an engine and pattern without a point
// print as n/a instead of failing.
func TestWriteTextWithoutPoints(t *testing.T) {
	in := `{"fabric": "x", "config": {"engines": ["nue", "updn"], "years": 1, "seeds": [1], "patterns": ["shift"], "vls": 2, "load": 1},
	 "points": [{"seed": 1, "year": 0, "engine": "nue", "pattern": "shift", "throughput": 0.5}]}`
	r, err := ReadJSON(strings.NewReader(in), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.Summarize().WriteText(&buf, 1); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`updn +n/a +n/a +-`).MatchString(buf.String()) {
		t.Errorf("summary:\n%s", buf.String())
	}
}
