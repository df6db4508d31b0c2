package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"

	_ "github.com/nuesm/nuesm/sar" // registers every engine (sar, nue, dfsssp)
)

// fabricFlags choose the fabric and its routing.
type fabricFlags struct {
	useDefault bool
	gen        string
	genParams  []string
	engines    string
	vls        int
	seed       uint64
	root       string
	lfts       string
	unsafe     bool
	fail       topo.FailureSpec
}

// loaded is a compiled fabric, its routing and, for generated fabrics,
// the generator's switch groups.
type loaded struct {
	name   string
	g      *fabric.Graph
	r      *lft.Routing
	groups []int
	kind   string  // generator kind ("" for dumps)
	coords [][]int // generator coordinates per switch, nil none
}

// load builds the fabric (file, embedded default or generator) and routes
// it (engine chain or tables read from --lfts).
func load(ctx context.Context, w io.Writer, args []string, ff fabricFlags) (*loaded, error) {
	l, err := loadFabric(w, args, ff)
	if err != nil {
		return nil, err
	}
	if ff.lfts != "" {
		l.r, err = lft.ReadTableSet(ff.lfts, l.g, lft.ReadOptions{})
		if err == nil {
			l.r.Engine = "tables " + ff.lfts
			err = checkTables(w, l, ff)
		}
	} else {
		l.r, err = route(ctx, w, l.g, ff)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// loadFabric builds and compiles the fabric, without routing it.
func loadFabric(w io.Writer, args []string, ff fabricFlags) (*loaded, error) {
	l := &loaded{}
	var f *fabric.Fabric
	sources := 0
	for _, set := range []bool{len(args) > 0, ff.useDefault, ff.gen != ""} {
		if set {
			sources++
		}
	}
	switch {
	case sources != 1:
		return nil, fmt.Errorf("give exactly one of FABRIC, --default or --gen KIND")
	case ff.gen != "":
		params := map[string]string{}
		for _, p := range ff.genParams {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("--gen-param %q, expected name=value", p)
			}
			params[k] = v
		}
		tp, err := topo.Generate(ff.gen, params)
		if err != nil {
			return nil, err
		}
		f, l.name, l.groups = tp.Fabric, tp.Kind+" "+tp.Params, tp.Group
		l.kind, l.coords = tp.Kind, tp.Coords
	default:
		var res *ibnetdiscover.Result
		var err error
		if ff.useDefault {
			res, err = defaults.Fabric()
		} else {
			res, err = ibnetdiscover.ParseFile(args[0])
		}
		if err != nil {
			return nil, err
		}
		f, l.name = res.Fabric, res.File
		missing := 0
		for _, r := range f.Endpoints() {
			if f.Port(r).LID == 0 {
				missing++
			}
		}
		if missing > 0 {
			if err := f.AssignLIDs(0); err != nil {
				return nil, err
			}
			fmt.Fprintf(w, "note: %s: %d endpoints had no LID; assigned LIDs in port GUID order\n", l.name, missing)
		}
	}
	if sp := ff.fail; sp.Links+sp.Switches > 0 || sp.LinkFraction+sp.SwitchFraction > 0 {
		var fails []topo.Failure
		var err error
		if f, fails, err = topo.InjectFailures(f, sp); err != nil {
			return nil, fmt.Errorf("%s: %w", l.name, err)
		}
		// Name the failures so that sweeps of failed fabrics stay apart.
		l.name += fmt.Sprintf(" fail=%d seed=%d", len(fails), sp.Seed)
	}
	g, err := fabric.Compile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.name, err)
	}
	l.g = g
	return l, nil
}

// checkTables verifies tables read with --lfts as engine output is
// verified (cdg.Verify: delivery, no loops, acyclic CDG per VL) and
// refuses tables that fail, unless --unsafe, which simulates them after a
// warning (to watch their deadlocks).
func checkTables(w io.Writer, l *loaded, ff fabricFlags) error {
	_, err := cdg.Verify(l.g, l.r, cdg.Options{})
	switch {
	case err == nil:
		return nil
	case ff.unsafe:
		fmt.Fprintf(w, "warning: %s: simulating tables that fail verification: %v\n", ff.lfts, err)
		return nil
	}
	return fmt.Errorf("%s: tables fail verification (give --unsafe to simulate them anyway): %w", ff.lfts, err)
}

// route routes the fabric with the engine chain and verifies the result
// (routing.RouteChain). With --unsafe the first engine that produced
// tables wins even when the verifier refused them (a warning says why),
// so that deadlock-prone routings can be simulated.
func route(ctx context.Context, w io.Writer, g *fabric.Graph, ff fabricFlags) (*lft.Routing, error) {
	engines, err := routing.ParseChain(ff.engines)
	if err != nil {
		return nil, err
	}
	opt := routing.Options{MaxVLs: ff.vls, Seed: ff.seed, Root: ff.root}
	r, _, attempts, err := routing.RouteChain(ctx, g, engines, opt)
	for _, a := range attempts {
		switch {
		case ff.unsafe && a.Rejected != nil:
			why := errors.Unwrap(a.Err)
			if why == nil {
				why = a.Err
			}
			fmt.Fprintf(w, "warning: %s: simulating tables that fail verification: %v\n", a.Engine, why)
			return a.Rejected, nil
		case a.Err != nil && !ff.unsafe:
			fmt.Fprintf(w, "%s: %v\n", a.Engine, a.Err)
		}
	}
	return r, err
}
