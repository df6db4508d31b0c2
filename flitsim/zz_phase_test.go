package flitsim

import (
	"context"
	"testing"
	"time"
)

func TestZZPhase(t *testing.T) {
	n := network(t, torus(t, 8, "dor"), bookSimRouter)
	tr := Traffic{Pattern: Uniform, Load: 0.25}.withDefaults()
	opt := RunOptions{Seed: 1, Warmup: 1000, Measure: 40000, Drain: 1000}.withDefaults()
	w, _ := compile(n, tr, opt.Seed)
	s := newSim(context.Background(), n, w, opt)
	var d [6]time.Duration
	for !s.done {
		t0 := time.Now()
		s.st.window(s)
		s.st.advance(s.now)
		s.generate()
		t1 := time.Now()
		s.events()
		t2 := time.Now()
		s.injectAll()
		t3 := time.Now()
		s.switchAll()
		t4 := time.Now()
		s.checkDone()
		s.now++
		d[0] += t1.Sub(t0); d[1] += t2.Sub(t1); d[2] += t3.Sub(t2); d[3] += t4.Sub(t3)
	}
	tot := d[0] + d[1] + d[2] + d[3]
	c := float64(s.now)
	t.Logf("per cycle ns: gen %.0f events %.0f inject %.0f switch %.0f total %.0f", float64(d[0].Nanoseconds())/c, float64(d[1].Nanoseconds())/c, float64(d[2].Nanoseconds())/c, float64(d[3].Nanoseconds())/c, float64(tot.Nanoseconds())/c)
}
