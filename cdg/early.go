package cdg

import (
	"runtime"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Early verifies a routing's destinations while its engine still routes
// others: the engine names each destination LID whose table column and SL
// it will no longer change (Final), one goroutine of Early's walks those
// on another core, and Finish walks the rest once the engine is done,
// then reports on the whole CDG as Verify does.
//
// The engine's word is never taken for the tables: every column and SL
// walked before Finish is kept as walked, and Finish compares them with
// the final tables; any difference (or a change of the SL2VL tables or
// of the VLs in use) discards the early walks and verifies the final
// tables afresh. The report is Verify's on the final tables in every
// case.
//
// Finish never waits for the goroutine unless it is walking at that
// moment: one it has not yet run, or that waits for work, is retired and
// Finish walks what is left itself. Final and Finish are called from one
// goroutine (the engine's).
type Early struct {
	v    *verifier
	r    *lft.Routing
	sl2v [lft.NumSLs]uint8 // SL2VL.Default when the early walks started
	lids []int32           // the LIDs given to Final, in order: lids[:nl]
	nl   int
	seen []bool       // per LID: given to Final
	pub  atomic.Int64 // len(lids) published to the goroutine
	next atomic.Int64 // lids[:next] claimed by a walker
	done atomic.Bool  // Finish started: no more LIDs will come
	// bad is set when a column handed over maps its SL outside the VLs
	// the walks were laid out for: the early walks are then discarded.
	bad atomic.Bool
	// state of the goroutine: idle (not yet run), running, parked
	// (waiting for work on wake) or retired (gone, or will return at
	// once); exited closes when it returns after running.
	state  atomic.Int32
	wake   chan struct{}
	exited chan struct{}
	wk     *walker // the goroutine's
	// snap holds the entries of the LIDs the goroutine walked as it
	// walked them, laid out as the tables (snap[x*stride+d]: switch x,
	// LID d), and their SLs (snapSL); early lists those LIDs.
	snap   []uint8
	snapSL []uint8
	early  []int32
	main   *walker // Finish's
	// retired and ran, on the engine's goroutine: retire has returned,
	// and what it returned.
	retired, ran bool
}

const (
	earlyIdle int32 = iota
	earlyRunning
	earlyParked
	earlyRetired
)

// earlyWake is how many LIDs wait unclaimed before Final wakes a parked
// goroutine: each wake-up costs the engine's goroutine a system call.
const earlyWake = 24

// earlySpin is how many times the goroutine yields, finding no work,
// before it parks.
const earlySpin = 64

// NewEarly prepares the early verification of r, whose SLs will map to
// VLs 0..vls-1, and starts its goroutine. It returns nil when r's tables
// do not suit early walks (SLs per source or per pair, SL2VL tables per
// port, VLs beyond the field): then the caller verifies with Verify.
func NewEarly(g *fabric.Graph, r *lft.Routing, opt Options, vls int) *Early {
	e := newEarly(g, r, opt, vls)
	if e != nil {
		go e.work()
	}
	return e
}

// newEarly is NewEarly without the goroutine.
func newEarly(g *fabric.Graph, r *lft.Routing, opt Options, vls int) *Early {
	if vls < 1 || vls > vlField || r.SL.BySrc != nil || len(r.SL.Pair) > 0 || !r.SL2VL.Uniform() {
		return nil
	}
	if r.CheckShape(g) != nil {
		return nil
	}
	v := newVerifierVLs(g, r, opt, vls)
	e := &Early{v: v, r: r, sl2v: r.SL2VL.Default, wake: make(chan struct{}, 1), exited: make(chan struct{})}
	e.lids = make([]int32, g.MaxLID()+1)
	e.seen = make([]bool, g.MaxLID()+1)
	return e
}

// Routing returns the tables e verifies.
func (e *Early) Routing() *lft.Routing { return e.r }

// Final tells e that LID lid's column and SL in e's tables are final.
func (e *Early) Final(lid int) {
	if lid <= 0 || lid >= len(e.seen) || e.seen[lid] {
		return
	}
	if sw, term := e.v.g.Owner(lid); sw < 0 && term < 0 {
		return
	}
	e.seen[lid] = true
	e.lids[e.nl] = int32(lid)
	e.nl++
	n := int64(e.nl)
	e.pub.Store(n)
	if e.state.Load() == earlyParked && n-e.next.Load() >= earlyWake {
		e.poke()
	}
}

// poke wakes the goroutine if it waits.
func (e *Early) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Stop retires the goroutine without a report (the engine failed, or
// made other tables).
func (e *Early) Stop() {
	e.done.Store(true)
	e.retire()
}

// claim returns the index of the next LID to walk, or -1 when every LID
// handed over so far is claimed.
func (e *Early) claim() int {
	for {
		i := e.next.Load()
		if i >= e.pub.Load() {
			return -1
		}
		if e.next.CompareAndSwap(i, i+1) {
			return int(i)
		}
	}
}

// work is the goroutine: it walks handed-over LIDs as they come, yields a
// little when there are none, then parks until Final or Finish wakes it.
func (e *Early) work() {
	if !e.state.CompareAndSwap(earlyIdle, earlyRunning) {
		return
	}
	defer close(e.exited)
	idle := 0
	for {
		if i := e.claim(); i >= 0 {
			e.walkEarly(int(e.lids[i]))
			idle = 0
			continue
		}
		if e.done.Load() {
			e.state.Store(earlyRetired)
			return
		}
		if idle++; idle < earlySpin {
			runtime.Gosched()
			continue
		}
		idle = 0
		if !e.state.CompareAndSwap(earlyRunning, earlyParked) {
			return
		}
		// Work may have come between the last claim and parking: then
		// take it up again unless Finish has retired the goroutine.
		if e.next.Load() < e.pub.Load() || e.done.Load() {
			if !e.state.CompareAndSwap(earlyParked, earlyRunning) {
				return
			}
			continue
		}
		<-e.wake
		if !e.state.CompareAndSwap(earlyParked, earlyRunning) {
			return
		}
	}
}

// walkEarly walks LID d on the goroutine, keeping its column and SL as
// walked.
func (e *Early) walkEarly(d int) {
	v := e.v
	if e.wk == nil {
		e.wk = newColumnWalker(v)
		e.snap = make([]uint8, len(e.seen)*v.g.NumSwitches())
		e.snapSL = make([]uint8, len(e.seen))
	}
	sl := e.r.SL.ByDest[d]
	if int(e.sl2v[sl&0xF]) >= v.V {
		e.bad.Store(true)
		return
	}
	e.snapSL[d] = sl
	e.early = append(e.early, int32(d))
	e.wk.column(d, e.snap)
}

// newColumnWalker is a walker for one destination at a time (column).
func newColumnWalker(v *verifier) *walker {
	S := v.g.NumSwitches()
	return &walker{v: v, cb: make([]int32, S), vls: make([]uint32, S), st: make([]uint32, S)}
}

// column walks destination d from its column of the tables, read now
// into ports (laid out as the tables; nil: not kept).
func (w *walker) column(d int, ports []uint8) {
	g, r := w.v.g, w.v.r
	S := g.NumSwitches()
	col := w.cb[:S]
	for x := int32(0); int(x) < S; x++ {
		p := r.Port(x, d)
		if ports != nil {
			ports[int(x)*r.Stride+d] = p
		}
		c := int32(-1)
		if pcs := g.PortChannels(x); int(p) < len(pcs) && p != lft.NoPort {
			c = pcs[p]
		}
		col[x] = c
	}
	w.inBlock = false
	w.check(d, col, nil)
}

// retire stops the goroutine: at once when it has not run or is parked,
// else when it has finished the LID it walks (it finds none left). It
// reports whether the goroutine walked anything whose results e must
// take (it ran).
func (e *Early) retire() bool {
	if !e.retired {
		e.retired = true
		e.ran = e.stop()
	}
	return e.ran
}

func (e *Early) stop() bool {
	for {
		switch s := e.state.Load(); s {
		case earlyIdle:
			if e.state.CompareAndSwap(s, earlyRetired) {
				return false
			}
		case earlyParked:
			if e.state.CompareAndSwap(s, earlyRetired) {
				e.poke() // it returns when it wakes
				return e.wk != nil
			}
		case earlyRunning:
			<-e.exited
			return e.wk != nil
		case earlyRetired:
			// It retired itself after running (done was set), and closes
			// exited right after.
			<-e.exited
			return e.wk != nil
		}
	}
}

// Finish verifies the rest of e's tables after the engine is done with
// them and reports as Verify does on them.
func (e *Early) Finish() (*Report, error) {
	v, g := e.v, e.v.g
	for lid := 1; lid <= g.MaxLID(); lid++ {
		if !e.seen[lid] {
			e.Final(lid)
		}
	}
	e.done.Store(true)
	for i := e.claim(); i >= 0; i = e.claim() {
		if e.main == nil {
			e.main = newColumnWalker(v)
		}
		e.main.column(int(e.lids[i]), nil)
	}
	ran := e.retire()
	if err := checkTables(g, e.r); err != nil {
		return nil, err
	}
	if e.bad.Load() || !e.unchanged(ran) {
		return Verify(g, e.r, v.opt)
	}
	if ran {
		e.wk.flush()
	}
	if e.main != nil {
		e.main.flush()
	}
	if v.deliv != v.pairs {
		// Each walker keeps its first failing pairs as examples, in the
		// order it walked: Verify's are the lowest LIDs'.
		return Verify(g, e.r, v.opt)
	}
	rep := v.report()
	return rep, rep.Err()
}

// unchanged reports whether the final tables are those the walks assumed:
// the VLs in use and SL2VL as laid out, and the goroutine's columns and
// SLs as it walked them.
func (e *Early) unchanged(ran bool) bool {
	r, S := e.r, e.v.g.NumSwitches()
	if r.MaxVL()+1 != e.v.V || r.SL2VL.Default != e.sl2v || !r.SL2VL.Uniform() || r.SL.BySrc != nil || len(r.SL.Pair) > 0 {
		return false
	}
	if !ran {
		return true
	}
	for _, d := range e.early {
		if r.SL.ByDest[d] != e.snapSL[d] {
			return false
		}
	}
	// Row by row: both rows are a few cache lines.
	for x := int32(0); int(x) < S; x++ {
		row, snap := r.Row(x), e.snap[int(x)*r.Stride:][:r.Stride]
		for _, d := range e.early {
			if row[d] != snap[d] {
				return false
			}
		}
	}
	return true
}
