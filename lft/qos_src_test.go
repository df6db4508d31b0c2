package lft

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// policy is a parsed QoS policy as OpenSM evaluates it for PathRecords:
// the first rule whose source (if any) and destination groups hold the
// path's ends gives the SL; no rule: SL 0 (DEFAULT).
type policy struct {
	groups map[string]map[uint64]bool
	levels map[string]uint8
	rules  []struct{ src, dst, level string }
}

func parsePolicy(t *testing.T, text []byte) *policy {
	t.Helper()
	p := &policy{groups: map[string]map[uint64]bool{}, levels: map[string]uint8{}}
	var name, src, dst, level string
	var sl uint8
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		k, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "name":
			name = v
		case "port-guid":
			if p.groups[name] == nil {
				p.groups[name] = map[uint64]bool{}
			}
			for _, it := range strings.Split(v, ",") {
				lo, hi, rng := strings.Cut(strings.TrimSpace(it), "-")
				a, err := strconv.ParseUint(lo, 0, 64)
				if err != nil {
					t.Fatalf("bad guid %q", it)
				}
				b := a
				if rng {
					b, _ = strconv.ParseUint(hi, 0, 64)
				}
				for g := a; g <= b; g++ {
					p.groups[name][g] = true
				}
			}
		case "sl":
			n, _ := strconv.Atoi(v)
			sl = uint8(n)
		case "end-qos-level":
			p.levels[name] = sl
		case "source":
			src = v
		case "destination":
			dst = v
		case "qos-level-name":
			level = v
		case "end-qos-match-rule":
			p.rules = append(p.rules, struct{ src, dst, level string }{src, dst, level})
			src, dst, level = "", "", ""
		}
	}
	return p
}

func (p *policy) sl(t *testing.T, src, dst uint64) uint8 {
	for _, r := range p.rules {
		if (r.src == "" || p.groups[r.src][src]) && p.groups[r.dst][dst] {
			sl, ok := p.levels[r.level]
			if !ok {
				t.Fatalf("rule names undefined level %q", r.level)
			}
			return sl
		}
	}
	return 0
}

// TestQoSPolicyPaths evaluates the written policy as OpenSM's SA does for
// every (source port, destination LID) and compares with the routing's
// SLs: per destination, per source switch and per pair.
func TestQoSPolicyPaths(t *testing.T) {
	g := ringGraph(t, 5, 3, []int{1, 3}, 0)
	for _, o := range []randomOpts{{}, {bySrc: true}, {bySrc: true, pairs: 40}, {pairs: 25}} {
		for seed := uint64(1); seed <= 5; seed++ {
			r := randomRouting(g, seed, o)
			var buf bytes.Buffer
			if err := WriteQoSPolicyPaths(&buf, g, r); err != nil {
				t.Fatal(err)
			}
			p := parsePolicy(t, buf.Bytes())
			ports := lidPorts(g)
			for _, sp := range ports {
				sw, term := g.Owner(int(sp.lid))
				if term >= 0 {
					sw = g.Terms[term].Switch
				}
				for _, dp := range ports {
					want := r.SL.Of(sw, int(sp.lid), int(dp.lid))
					if got := p.sl(t, sp.guid, dp.guid); got != want {
						t.Fatalf("%+v seed %d: path LID %d -> %d: policy gives SL %d, routing %d", o, seed, sp.lid, dp.lid, got, want)
					}
				}
			}
			if o == (randomOpts{}) {
				var plain bytes.Buffer
				if err := WriteQoSPolicy(&plain, g, r); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(plain.Bytes(), buf.Bytes()) {
					t.Error("per-destination SLs: output differs from WriteQoSPolicy's")
				}
			}
		}
	}
}

// TestTableSetDropsUnwritablePolicy: SLs no policy can hold (two LIDs of
// one port with different SLs) give a set without qos-policy.conf, a
// stale one is removed, and OpenSMNotes says why.
func TestTableSetDropsUnwritablePolicy(t *testing.T) {
	g := ringGraph(t, 4, 2, nil, 1)
	r := randomRouting(g, 7, randomOpts{})
	term := g.Terms[0]
	r.SL.ByDest[term.LID], r.SL.ByDest[term.LID+1] = 1, 2
	dir := t.TempDir()
	stale := filepath.Join(dir, QoSPolicyFile)
	if err := os.WriteFile(stale, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := &TableSet{Graph: g, Routing: r}
	if err := set.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a stale qos-policy.conf survived a set without a policy")
	}
	notes := set.OpenSMNotes()
	if len(notes) == 0 || !strings.Contains(notes[0], "SL 0") {
		t.Errorf("notes %q do not say the hosts would use SL 0", notes)
	}
}
