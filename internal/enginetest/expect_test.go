package enginetest

import (
	"maps"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/routing"
)

// variants are engine specs the suite runs besides the registered
// engines, each under a short label: best comparing two parameter sets of
// one engine.
var variants = map[string]string{
	"best-share": "best:of=(nue:share=switch)+(nue:share=switchlid)",
	// Layers dealt over the spare VLs by source and destination.
	"nue-layers":     "nue:layers=2",
	"sar-nue-layers": "sar-nue:spread=all:layers=3",
}

// suiteEngines lists the registered engines and the variants' labels.
func suiteEngines() []string {
	return append(routing.Names(), slices.Sorted(maps.Keys(variants))...)
}

// newEngine returns the engine of a registered name or a variant's label.
func newEngine(name string) (routing.Engine, error) {
	spec, ok := variants[name]
	if !ok {
		return routing.Lookup(name)
	}
	chain, err := routing.NewChain(spec, nil)
	if err != nil {
		return nil, err
	}
	return chain[0], nil
}

// engineContract says which refusals an engine's documentation allows and
// what its delivery promise covers.
type engineContract struct {
	shapes    bool // may refuse a fabric with routing.ErrNotApplicable
	vlBounded bool // may refuse with a *routing.VLError at MaxVLs = 8
	// caDeliveryOnly: the engine promises delivery from CA and router
	// ports only, not from the switches' own port 0.
	caDeliveryOnly bool
	// vlSensitive: the tables depend on the VL limit (the engine spreads
	// over the VLs it is given); the others give identical tables under
	// every limit they fit in.
	vlSensitive bool
	// exactNeeded: a VLError's Needed is the exact VL count, the one the
	// engine's tables use when the limit allows them.
	exactNeeded bool
}

// contract lists every engine the suite knows. A new engine must be
// added here (the suite fails otherwise).
var contract = map[string]engineContract{
	"minhop": {},
	"updn":   {},
	// ftree routes switch pairs only where up*/down* allows (two top
	// switches get no entry); its promise covers CA traffic.
	"ftree":          {shapes: true, caDeliveryOnly: true},
	"dor":            {shapes: true, vlBounded: true, exactNeeded: true},
	"dor-nodateline": {shapes: true},
	"lash":           {vlBounded: true, exactNeeded: true},
	"nue":            {vlSensitive: true},
	"sar-nue":        {vlSensitive: true},
	"sssp":           {},
	// By default DFSSSP stops where OpenSM stops and reports MaxVLs+1, a
	// lower bound; its spare VLs spread the layers.
	"dfsssp":     {vlBounded: true, vlSensitive: true},
	"sar-dfsssp": {vlBounded: true, vlSensitive: true},
	// best returns the best verified routing of nue, dor and dfsssp; the
	// pick may change with the limit, and nue always verifies.
	"best": {vlSensitive: true},
	// best-share compares two parameter sets of nue (variants).
	"best-share": {vlSensitive: true},
	// The layers take as many VLs as the limit gives.
	"nue-layers":     {vlSensitive: true},
	"sar-nue-layers": {vlSensitive: true},
	// pora routes NovaCubes only; the VLs it needs depend on k.
	"pora": {shapes: true, vlBounded: true, exactNeeded: true},
}

// knownAnswer is an outcome known for one engine on one fabric at the
// default limit of 8 VLs.
type knownAnswer struct {
	want []outcome
	vls  int // VL count of the tables (0: not checked)
	why  string
}

// known holds the outcomes known for particular (engine, fabric) pairs;
// they take precedence over the rules in expected. TestKnownEntries
// checks that every entry names an engine and a fabric that exist.
var known = map[[2]string]knownAnswer{
	{"dor", "fattree4-3"}: {[]outcome{notApplicable}, 0, "a fat tree is no torus or mesh"},
	{"dor", "torus4x4"}:   {[]outcome{ok}, 2, "rings of 4 need the dateline's second VL"},
	{"dor", "torus5x5"}:   {[]outcome{ok}, 2, "odd rings of 5 need the dateline too"},
	{"dor", "torus3x3x3"}: {[]outcome{ok}, 1, "rings of 3: minimal paths are single hops, no dateline"},
	{"dor", "mesh4x4"}:    {[]outcome{ok}, 1, "dimension order on a mesh is acyclic on one VL"},

	{"dor-nodateline", "torus4x4"}:   {[]outcome{cyclic}, 1, "rings of 4 without dateline close a cycle"},
	{"dor-nodateline", "torus3x3x3"}: {[]outcome{ok}, 1, "rings of 3 cannot close a cycle of minimal paths"},

	{"ftree", "torus4x4"}:       {[]outcome{notApplicable}, 0, "a torus is no fat tree"},
	{"ftree", "fattree4-3"}:     {[]outcome{ok}, 1, "d-mod-k on a complete 4-ary 3-tree"},
	{"ftree", "example-2.topo"}: {[]outcome{ok}, 1, "one switch is a fat tree of one level"},

	{"minhop", "ring5"}: {[]outcome{cyclic}, 1, "shortest paths on a 5-ring all turn the same way (thesis, Fig. 6)"},
	{"sssp", "ring5"}:   {[]outcome{cyclic}, 1, "shortest paths on a 5-ring all turn the same way"},
	{"updn", "ring5"}:   {[]outcome{ok}, 1, "up*/down* on one VL"},
	{"lash", "ring5"}:   {[]outcome{ok}, 2, "the five 2-hop paths of each direction need a second layer"},
	{"nue", "ring5"}:    {[]outcome{ok}, 0, "Nue is deadlock-free on any topology"},

	{"dfsssp", "torus4x4x4"}:     {[]outcome{needVLs}, 0, "DFSSSP needs 10 layers on the 4×4×4 torus (dfsssp tests, vlcount=exact)"},
	{"sar-dfsssp", "torus4x4x4"}: {[]outcome{needVLs}, 0, "as dfsssp without jobs"},
	{"dfsssp", "fattree4-3"}:     {[]outcome{ok}, 8, "shortest paths of a fat tree fit one layer, spread over the 8 VLs"},

	{"pora", "novacube4-2"}: {[]outcome{ok}, 1, "the 4x4 NovaCube's jump links replace every ring path that could close a cycle"},
	{"pora", "novacube5-2"}: {[]outcome{ok}, 4, "odd k: late jumps need their own dateline pair (both 2-VL schemes are cyclic)"},
}

// expected returns the outcomes allowed for an engine on a fabric under a
// VL limit where they are known, and why; nil means any outcome the
// contract allows.
func expected(engine string, c *fabricCase, limit int) ([]outcome, string) {
	if k, ok := known[[2]string{engine, c.name}]; ok && limit == maxVLs {
		return k.want, k.why
	}
	switch engine {
	case "dor", "dor-nodateline":
		if c.failed {
			return []outcome{notApplicable}, "a failed cable leaves a grid with a missing link"
		}
		switch c.shape {
		case torus:
			if engine == "dor" && limit < 2 {
				return []outcome{needVLs}, "the dateline needs a second VL"
			}
			if engine == "dor" {
				return []outcome{ok}, "dimension order with dateline"
			}
			return []outcome{cyclic}, "rings of 4 or more without dateline close cycles"
		case torusK3, mesh:
			return []outcome{ok}, "no ring of 4 or more: dimension order is acyclic on one VL"
		}
		return []outcome{notApplicable}, "the switch descriptions carry no torus or mesh coordinates, or the cables are no grid"
	case "ftree":
		switch c.shape {
		case tree:
			if c.failed {
				return []outcome{ok, notApplicable}, "a damaged tree is routed, or refused when switch-LID detours close a cycle"
			}
			return []outcome{ok}, "a complete fat tree"
		case maybeTree:
			return nil, ""
		}
		return []outcome{notApplicable}, "not a fat tree"
	case "updn":
		return []outcome{ok}, "up*/down* routes any topology deadlock-free on one VL"
	case "nue", "sar-nue":
		return []outcome{ok}, "Nue is deadlock-free on any topology with any number of layers"
	case "best", "best-share":
		return []outcome{ok}, "one of its engines, Nue, always gives verified tables"
	case "minhop", "sssp":
		switch {
		case c.shape == tree && !c.failed:
			return []outcome{ok}, "shortest paths between the CAs of a complete fat tree go up, then down"
		case c.shape == torus && !c.failed:
			return []outcome{cyclic}, "shortest paths on tori with rings of 4 or more close cycles"
		}
	case "lash":
		if c.shape == tree && !c.failed {
			return []outcome{ok}, "the shortest paths of a complete fat tree fit one layer"
		}
	case "pora":
		switch {
		case c.family != "novacube" || c.failed:
			return []outcome{notApplicable}, "not a complete NovaCube"
		case c.name == "novacube5-2" && limit < 4:
			return []outcome{needVLs}, "odd k needs 4 VLs"
		}
		return []outcome{ok}, "PORA tables on a NovaCube"
	}
	return nil, ""
}

// expectedVLs returns the VL count of an engine's tables (or the Needed of
// its VLError) on a fabric under a VL limit where it is known (0: not
// known).
func expectedVLs(engine string, c *fabricCase, limit int) (int, string) {
	if k, ok := known[[2]string{engine, c.name}]; ok && k.vls > 0 && limit == maxVLs {
		return k.vls, k.why
	}
	switch engine {
	case "dor":
		switch c.shape {
		case torus:
			return 2, "the dateline VL"
		case torusK3, mesh:
			return 1, "no dateline"
		}
	case "dor-nodateline", "updn", "minhop", "sssp", "ftree":
		return 1, "one VL, SL 0"
	case "lash":
		if c.shape == tree && !c.failed {
			return 1, "one layer"
		}
	case "pora":
		if c.name == "novacube5-2" {
			return 4, "odd k: dateline pair times late-jump layer"
		}
	}
	return 0, ""
}

// TestKnownEntries keeps the known-answer table honest: every entry
// names a registered engine and a fabric of the table.
func TestKnownEntries(t *testing.T) {
	fabrics := map[string]bool{}
	for _, c := range fabricCases() {
		fabrics[c.name] = true
	}
	for k := range known {
		if _, ok := contract[k[0]]; !ok {
			t.Errorf("known answer for unknown engine %q", k[0])
		}
		if !fabrics[k[1]] && !(k[1] == "example-2.topo" && len(corpusCases()) == 0) {
			t.Errorf("known answer for unknown fabric %q", k[1])
		}
	}
}
