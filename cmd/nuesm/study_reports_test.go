package main

import (
	"strings"
	"testing"
)

// TestSeedReports runs the seed 000 / 002 report commands end to end on
// the hand-checked cases of their packages.
func TestSeedReports(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"study", "tables-report", "--layer1", "BR", "--supernodes", "3", "--links", "1,16"},
			[]string{"| BR 3 SN × 1 link | 48 | 3 | 47 | 96 | 15 | 2 | 17 |", "| BR 3 SN × 16 link | 48 | 3 | 47 | 96 | 15 | 2 | 17 |"}},
		{[]string{"study", "rsi-fdfr", "--layer1", "full-3", "--supernodes", "3", "--fail", "link:s0/n0:4"},
			[]string{"14 packets over 2 rounds", "18 lost every table route", "16 packets over 2 rounds"}},
		{[]string{"study", "rsi-fdfr", "--layer1", "full-3", "--supernodes", "3", "--sweep", "links"},
			[]string{"| link \"rsi sn0 n0\"[4] -> \"rsi sn1 n0\"[4] | 14 | 2 | 8 |"}},
		{[]string{"study", "rsi-fdfr", "--layer1", "HR", "--supernodes", "2", "--sweep", "nodes", "--summary", "--rule", "literal,healed"},
			[]string{"| HR 2 SN × 1 link | 32 nodes | literal | 0 (0) | 32 of 32 | 180 (5–15) | 640 (165) | 160 (16) |", "| HR 2 SN × 1 link | 32 nodes | healed | 0 (0) | 0 of 32 | 0 (–) |"}},
		{[]string{"study", "placement", "--dims", "8x8", "--method", "qp", "--fail-all", "2", "--header"},
			[]string{"| 8x8 | qp | 8 | 2 | 28 | 14.00 | 3.29 (4) | 1.724 (1.750) | 11.07 (12) |"}},
		{[]string{"study", "vc-audit", "dragonfly", "--param", "p=2", "--param", "a=4", "--param", "h=2", "--misroute", "source-global", "--policy", "one-vc,df-2vc"},
			[]string{"| one-vc | source-global | 1 | 1 | 4 |", "CYCLE of", "| df-2vc | source-global | 2 | 2 | 4 | 360 | 792 | acyclic: deadlock-free |", "VC0 G"}},
		{[]string{"study", "tables-report", "--layer1", "HR", "--supernodes", "3", "--local", "dor"},
			[]string{"| HR 3 SN × 1 link, dimension order | 48 | 3 | 47 | 96 | 15 | 2 | 17 | 0.362 | 0 | 17 | 4.085 (9) |"}},
		{[]string{"study", "vc-audit", "rsi", "--param", "layer1=BR", "--param", "supernodes=1", "--local", "dor", "--policy", "one-vc"},
			[]string{"minimal routing: tables (dimension order inside super nodes)", "| one-vc | none | 1 | 1 | 2 | 96 | 144 | acyclic: deadlock-free |"}},
		{[]string{"study", "rsi-vc", "--layer1", "BR", "--supernodes", "3", "--misroute", "none", "--policy", "phase,global-hops", "--cycles"},
			[]string{"| BR 3 SN × 1 link | none | phase | 2 | CYCLE of 4 inside 1 super node | CYCLE of 6 through 3 super nodes |",
				"| BR 3 SN × 1 link | none | global-hops | 3 | CYCLE of 4 inside 1 super node | acyclic: deadlock-free |",
				"BR 3 SN × 1 link, dimension order, phase + none:\ncdg: dependency cycle of 6 channels: VC0 L"}},
		{[]string{"study", "vc-audit", "fbfly", "--param", "dims=4x4", "--policy", "hops:1;hops:2"},
			[]string{"| hops:2 | none | 2 | 2 | 2 | 192 | 288 | acyclic: deadlock-free |", "| hops:1 | none | 1 | 2 | 2 |"}},
		{[]string{"study", "addressing-report", "--radix", "8", "--measure", "dragonfly:p=2,a=4,h=2"},
			[]string{"| dragonfly | 8 | 72 | 36 | 2 | 4 | 9 | 72 | 37 | 13 | 11 (bound 10) | 7 | yes |",
				"| 8 | 9 | 36 | 7 | 10 | 13 | 13 / 10 / 11.7 | 13 / 10 / 11.7 | 11 / 10 / 10.7 | 12 of 36 |",
				"| clos4 | 72 | 303264 | 29484 | 36 | 36 | 234 | 303264 | 8459 | 304 | 72 | 72 | yes |", "| clos3 | 8 | 128 | 80 | 4 | 4 | 8 | 128 | 35 | 14 | 8 | 8 | yes |", "324 (100.0 %)"}},
	}
	for _, c := range cases {
		out, _, err := run(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Fatalf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}

func TestSeedReportErrors(t *testing.T) {
	for _, args := range [][]string{
		{"study", "tables-report", "--supernodes", "x"},
		{"study", "tables-report", "--layer1", "nope-3"},
		{"study", "rsi-fdfr"},
		{"study", "rsi-fdfr", "--supernodes", "3,8", "--sweep", "nodes"},
		{"study", "rsi-fdfr", "--fail", "node:s0/n99"},
		{"study", "rsi-fdfr", "--fail", "link:s0/n0"},
		{"study", "rsi-fdfr", "--sweep", "nodes", "--rule", "lenient"},
		{"study", "vc-audit", "torus", "--param", "dims=4x4", "--minimal", "tables"},
		{"study", "vc-audit", "ring", "--policy", "vcs=0"},
		{"study", "vc-audit", "ring", "--misroute", "sideways"},
		{"study", "vc-audit", "ring", "--param", "switches"},
		{"study", "vc-audit", "rsi", "--local", "sideways"},
		{"study", "vc-audit", "rsi", "--param", "layer1=SR", "--local", "dor"},
		{"study", "vc-audit", "rsi", "--minimal", "shortest", "--local", "dor"},
		{"study", "tables-report", "--local", "x"},
		{"study", "rsi-vc", "--layer1", "SR"},
		{"study", "rsi-vc", "--policy", "vcs=0"},
		{"study", "addressing-report", "--radix", "abc"},
		{"study", "addressing-report", "--kinds", "torus"},
		{"study", "addressing-report", "--measure", "torus:dims=4x4"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Fatalf("%v accepted", args)
		}
	}
}
