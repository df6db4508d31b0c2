package main

import (
	"context"
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
		err = inputError(err)
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
		return nil, usageError(fmt.Errorf("give exactly one of FABRIC, --default or --gen KIND"))
	case ff.gen != "":
		params := map[string]string{}
		for _, p := range ff.genParams {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" {
				return nil, usageError(fmt.Errorf("--gen-param %q, expected name=value", p))
			}
			params[k] = v
		}
		tp, err := topo.Generate(ff.gen, params)
		if err != nil {
			return nil, usageError(err) // the generator's parameters are flags
		}
		f, l.name, l.groups = tp.Fabric, tp.Kind+" "+tp.Params, tp.Group
		l.kind, l.coords = tp.Kind, tp.Coords
	default:
		var ld *ibnetdiscover.Loaded
		var err error
		if ff.useDefault {
			ld, err = defaults.Load()
		} else if limit, lerr := defaults.MaxDumpBytes(); lerr != nil {
			err = usageError(lerr)
		} else {
			ld, err = ibnetdiscover.LoadFileLimited(args[0], limit)
		}
		if err != nil {
			return nil, inputError(err)
		}
		f, l.name, l.g = ld.Fabric, ld.File, ld.Graph
		if ld.AssignedLIDs > 0 {
			fmt.Fprintf(w, "note: %s: %d endpoints had no LID; assigned LIDs in port GUID order\n", l.name, ld.AssignedLIDs)
		}
	}
	if sp := ff.fail; sp.Links+sp.Switches > 0 || sp.LinkFraction+sp.SwitchFraction > 0 {
		var fails []topo.Failure
		var err error
		if f, fails, err = topo.InjectFailures(f, sp); err != nil {
			return nil, usageError(fmt.Errorf("%s: %w", l.name, err)) // a failure spec the fabric cannot meet
		}
		// Name the failures so that sweeps of failed fabrics stay apart.
		l.name += fmt.Sprintf(" fail=%d seed=%d", len(fails), sp.Seed)
		l.g = nil
	}
	if l.g == nil {
		g, err := fabric.Compile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.name, err)
		}
		l.g = g
	}
	return l, nil
}

// checkTables verifies tables read with --lfts for simulation: the CA
// traffic flitsim replays is delivered without loops and the CDG is
// acyclic per VL (cdg.Verify; switch-originated packets are not
// simulated, so their delivery is not required). It
// refuses tables that fail, unless --unsafe, which simulates them after
// a warning (to watch their deadlocks).
func checkTables(w io.Writer, l *loaded, ff fabricFlags) error {
	_, err := cdg.Verify(l.g, l.r, cdg.Options{})
	switch {
	case err == nil:
		return nil
	case ff.unsafe:
		fmt.Fprintf(w, "warning: %s: simulating tables that fail verification: %v\n", ff.lfts, err)
		return nil
	}
	return unsafeError(fmt.Errorf("%s: tables fail verification (give --unsafe to simulate them anyway): %w", ff.lfts, err))
}

// route runs the engine chain. With --unsafe the first engine that
// produces tables wins even if the verifier rejects them (a warning says
// why), so that deadlock-prone routings can be simulated.
func route(ctx context.Context, w io.Writer, g *fabric.Graph, ff fabricFlags) (*lft.Routing, error) {
	engines, err := routing.ParseChain(ff.engines)
	if err != nil {
		return nil, usageError(err)
	}
	if ff.root != "" {
		if _, err := routing.ResolveSwitch(g, ff.root); err != nil {
			return nil, usageError(fmt.Errorf("--root: %w", err))
		}
	}
	opt := routing.Options{MaxVLs: ff.vls, Seed: ff.seed, Root: ff.root}
	if !ff.unsafe {
		res, err := routing.RouteChain(ctx, g, engines, opt)
		if err != nil {
			return nil, err // it lists every engine's error
		}
		for _, a := range res.Attempts {
			if a.Err != nil {
				// The engine's name leads its own error already.
				fmt.Fprintf(w, "note: %s failed, the chain went on: %s\n", a.Engine, strings.TrimPrefix(a.Err.Error(), a.Engine+": "))
			}
		}
		return res.Routing, nil
	}
	res, err := routing.RouteUnverified(ctx, g, engines, opt)
	if err != nil {
		return nil, unsafeError(fmt.Errorf("no engine produced tables: %w", err))
	}
	if a := res.Attempts[len(res.Attempts)-1]; a.Err != nil {
		fmt.Fprintf(w, "warning: %s: simulating tables that fail verification: %v\n", a.Engine, a.Err)
	}
	return res.Routing, nil
}
