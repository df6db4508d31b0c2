package routing

import (
	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// earlyFinals is the Finals a chain gives an engine that reports final
// columns: a cdg.Early on the tables the engine builds walks the
// destinations it is done with on another core while it routes the
// rest. On small fabrics routed on one goroutine this takes the
// verifier's walks off the critical path; Early checks the tables it
// walked early against the final ones, so the report is Verify's.
type earlyFinals struct {
	g   *fabric.Graph
	opt cdg.Options
	ev  *cdg.Early
}

// Start begins the early walks of r, retiring those of any tables the
// engine started before (it routes afresh).
func (f *earlyFinals) Start(r *lft.Routing, vls int) {
	if f.ev != nil {
		f.ev.Stop()
	}
	f.ev = cdg.NewEarly(f.g, r, f.opt, vls)
}

// Final hands LID lid to the early walks.
func (f *earlyFinals) Final(lid int) {
	if f.ev != nil {
		f.ev.Final(lid)
	}
}

// take returns the early walks of r, the engine's result, or nil (after
// retiring any others) when there are none.
func (f *earlyFinals) take(r *lft.Routing) *cdg.Early {
	if f == nil || f.ev == nil {
		return nil
	}
	ev := f.ev
	f.ev = nil
	if r == nil || ev.Routing() != r {
		ev.Stop()
		return nil
	}
	return ev
}
