package nue

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/routing"
)

// TestSweepSwitchLIDs: switch LIDs' sweeps leave the switches only a new
// turn reaches to the Dijkstra, or hand over; on irregular fabrics where
// about half the switches hold no CA (so switch LIDs are searched on
// their own and such switches are common), with every search swept, the
// tables must be the Dijkstra's.
func TestSweepSwitchLIDs(t *testing.T) {
	t.Parallel()
	tune := defaultTuning()
	tune.sweepProbe = 1 << 30
	n := 60
	if testing.Short() {
		n = 15
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		res, err := ibnetdiscover.Parse(strings.NewReader(irregularDump(seed)), "irregular")
		g := compileParsed(t, res, err)
		for _, k := range []int{1, 2} {
			for _, share := range []Share{ShareAuto, ShareNone} {
				name := fmt.Sprintf("irregular seed %d/k=%d/share=%s", seed, k, share)
				routeBoth(t, name, g, routing.Options{MaxVLs: k}, Config{Share: share}, tune)
			}
		}
	}
}

// irregularDump is an ibnetdiscover dump of a random connected switch
// graph (8–19 switches, a spanning chain plus random cables, some of them
// parallel) in which each switch holds 0, 1 or 2 CAs, about half none.
func irregularDump(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	S := 8 + r.IntN(12)
	hosts := make([]int, S)
	for v := range hosts {
		if r.IntN(2) == 0 {
			hosts[v] = 1 + r.IntN(2)
		}
	}
	hosts[r.IntN(S)] = 1 // at least one CA
	type end struct{ peer, port int }
	ports := make([][]end, S) // per switch, after its CAs' ports
	link := func(a, b int) {
		pa, pb := hosts[a]+len(ports[a])+1, hosts[b]+len(ports[b])+1
		ports[a] = append(ports[a], end{b, pb})
		ports[b] = append(ports[b], end{a, pa})
	}
	for v := 1; v < S; v++ {
		link(r.IntN(v), v)
	}
	for range S + r.IntN(S) {
		if a, b := r.IntN(S), r.IntN(S); a != b {
			link(a, b)
		}
	}
	swGUID := func(v int) string { return fmt.Sprintf("%016x", 0x1000+v) }
	caGUID := func(v, h int) string { return fmt.Sprintf("%016x", 0x100000+v*16+h*2) }
	var b strings.Builder
	lid := S + 1
	caLID := make([][]int, S)
	for v := range S {
		for range hosts[v] {
			caLID[v] = append(caLID[v], lid)
			lid++
		}
	}
	for v := range S {
		fmt.Fprintf(&b, "switchguid=0x%s\nSwitch %d \"S-%s\" # \"s%d\" base port 0 lid %d lmc 0\n", swGUID(v), hosts[v]+len(ports[v]), swGUID(v), v, v+1)
		for h := range hosts[v] {
			fmt.Fprintf(&b, "[%d] \"H-%s\"[1](%x) # \"host\" lid %d 4xSDR\n", h+1, caGUID(v, h), 0x100000+v*16+h*2+1, caLID[v][h])
		}
		for i, e := range ports[v] {
			fmt.Fprintf(&b, "[%d] \"S-%s\"[%d] # \"s%d\" lid %d 4xSDR\n", hosts[v]+i+1, swGUID(e.peer), e.port, e.peer, e.peer+1)
		}
		b.WriteString("\n")
	}
	for v := range S {
		for h := range hosts[v] {
			fmt.Fprintf(&b, "caguid=0x%s\nCa 1 \"H-%s\" # \"host\"\n[1](%x) \"S-%s\"[%d] # lid %d lmc 0 \"s%d\" lid %d 4xSDR\n\n",
				caGUID(v, h), caGUID(v, h), 0x100000+v*16+h*2+1, swGUID(v), h+1, caLID[v][h], v, v+1)
		}
	}
	return b.String()
}
