package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
}

// load builds the fabric (file, embedded default or generator) and routes
// it (engine chain or tables read from --lfts).
func load(ctx context.Context, w io.Writer, args []string, ff fabricFlags) (*loaded, error) {
	l, err := loadFabric(w, args, ff)
	if err != nil {
		return nil, err
	}
	if ff.lfts != "" {
		l.r, err = readTables(ff.lfts, l.g)
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

// route runs the engine chain. With --unsafe the first engine that
// produces tables wins even if the verifier rejects them (a warning says
// why), so that deadlock-prone routings can be simulated.
func route(ctx context.Context, w io.Writer, g *fabric.Graph, ff fabricFlags) (*lft.Routing, error) {
	engines, err := routing.ParseChain(ff.engines)
	if err != nil {
		return nil, err
	}
	opt := routing.Options{MaxVLs: ff.vls, Seed: ff.seed, Root: ff.root}
	if !ff.unsafe {
		r, _, attempts, err := routing.RouteChain(ctx, g, engines, opt)
		for _, a := range attempts {
			if a.Err != nil {
				fmt.Fprintf(w, "%s: %v\n", a.Engine, a.Err)
			}
		}
		return r, err
	}
	var errs []error
	for _, e := range engines {
		r, err := e.Route(ctx, g, opt.WithDefaults())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if r.Engine == "" {
			r.Engine = e.Name()
		}
		if _, verr := cdg.Verify(g, r, cdg.Options{MaxVLs: max(ff.vls, r.NumVLs)}); verr != nil {
			fmt.Fprintf(w, "warning: %s: simulating tables that fail verification: %v\n", e.Name(), verr)
		}
		return r, nil
	}
	return nil, fmt.Errorf("no engine produced tables: %w", errors.Join(errs...))
}

// readTables reads DIR/opensm-lfts.dump (or another LFT dump given as a
// file) and, when present next to it, nuesm.sl and opensm-sl2vl.dump.
func readTables(path string, g *fabric.Graph) (*lft.Routing, error) {
	dir, file := path, filepath.Join(path, "opensm-lfts.dump")
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir, file = filepath.Dir(path), path
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := lft.ReadLFTs(f, file, g, lft.ReadOptions{})
	if err != nil {
		return nil, err
	}
	r.Engine = "tables " + file
	if p := filepath.Join(dir, "nuesm.sl"); exists(p) {
		sl, n, err := lft.ReadSLFile(p, g)
		if err != nil {
			return nil, err
		}
		r.SL, r.NumVLs = sl, n
	}
	if p := filepath.Join(dir, "opensm-sl2vl.dump"); exists(p) {
		m, err := lft.ReadOpenSMSL2VLFile(p, g)
		if err != nil {
			return nil, err
		}
		r.SL2VL = m
	}
	return r, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
