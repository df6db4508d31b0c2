package archtest

import (
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/nuesm/nuesm/"

// allowed is ARCHITECTURE.md's layer table: for each package (a path
// relative to the module root; a trailing "/..." covers the folder and
// everything under it), the module packages its non-test files may import.
// A package of the module that no row names fails the test, so a new
// package gets a row (and a line in ARCHITECTURE.md) on purpose.
var allowed = map[string][]string{
	// Leaves: standard library only.
	"internal/parallel":   nil,
	"internal/atomicfile": nil,
	"internal/buildinfo":  nil,
	"internal/ibtest":     nil,
	"internal/umad":       nil,
	"slurm":               nil,
	// Model and I/O.
	"fabric":            {"internal/parallel"},
	"ibnetdiscover":     {"fabric"},
	"topo":              {"fabric"},
	"internal/defaults": {"ibnetdiscover"},
	// Tables, verifier, plans.
	"lft":  {"fabric", "internal/atomicfile"},
	"cdg":  {"fabric", "lft", "internal/parallel"},
	"plan": {"fabric", "lft", "cdg", "internal/parallel"},
	// Engines.
	"routing": {"fabric", "lft", "cdg", "internal/parallel"},
	"nue":     {"fabric", "lft", "cdg", "routing", "internal/parallel"},
	"dfsssp":  {"fabric", "lft", "cdg", "routing", "internal/parallel"},
	"sar":     {"fabric", "lft", "cdg", "routing", "nue", "dfsssp", "slurm", "internal/parallel"},
	// The daemon and its OpenSM deployer.
	"sm": {"fabric", "ibnetdiscover", "lft", "cdg", "plan", "routing", "nue", "dfsssp", "sar",
		"slurm", "internal/atomicfile", "internal/buildinfo", "internal/defaults", "internal/parallel"},
	"sm/deploy": {"fabric", "ibnetdiscover", "lft", "cdg", "plan", "routing", "sm",
		"internal/atomicfile", "internal/parallel", "internal/umad"},
	// The simulator knows the model and the tables, nothing of routing or
	// the studies: policies reach it through its own interfaces.
	"flitsim":      {"fabric", "lft", "internal/parallel", "internal/atomicfile"},
	"flitsim/plot": {"flitsim"},
	// Test harnesses (imported by tests only).
	"internal/enginetest": {"fabric", "lft", "routing", "cdg", "topo", "ibnetdiscover", "internal/parallel"},
	"internal/slurmtest":  {"internal/ibtest"},
	"internal/interop":    nil,
	"internal/archtest":   nil,
	"internal/progress":   nil,
	"internal/tooltest":   nil,
	"internal/dumptest":   {"ibnetdiscover"},
	"internal/metrictest": nil,
	"internal/simtest":    {"fabric", "lft", "routing", "nue", "dfsssp", "topo"},
	// Command-line helpers.
	"internal/vlflag":     {"lft"},
	"internal/exitstatus": nil,
}

// isStudy reports whether p is in the studies wing; no product package
// may import one.
func isStudy(p string) bool { return p == "studies" || strings.HasPrefix(p, "studies/") }

// studyMay is what the studies may import: the product below the daemon,
// the simulator and each other — never the daemon or a command.
func studyMay(imp string) bool {
	switch {
	case imp == "sm" || strings.HasPrefix(imp, "sm/"), strings.HasPrefix(imp, "cmd/"),
		strings.HasPrefix(imp, "bench/"), imp == "internal/ibtest", imp == "internal/slurmtest":
		return false
	}
	return true
}

func TestImportRules(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := moduleImports(t, root)
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages under %s: is the test run from the module?", len(pkgs), root)
	}
	var names []string
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		imps := pkgs[p]
		switch {
		case strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "bench/"):
			continue // commands and bench programs wire everything
		case isStudy(p):
			for _, imp := range imps {
				if !studyMay(imp) {
					t.Errorf("%s imports %s: studies use the product below the daemon and the simulator only (ARCHITECTURE.md)", p, imp)
				}
			}
			continue
		}
		allow, ok := allowed[p]
		if !ok {
			t.Errorf("package %s has no row in the layer table (internal/archtest and ARCHITECTURE.md): add one", p)
			continue
		}
		for _, imp := range imps {
			if isStudy(imp) {
				t.Errorf("%s imports the study %s: the product never depends on a study", p, imp)
			} else if !slices.Contains(allow, imp) {
				t.Errorf("%s imports %s, outside its row of the layer table (allowed: %s)", p, imp, strings.Join(allow, ", "))
			}
		}
	}
}

// moduleImports parses the non-test Go files of every package under root
// and returns, per package path relative to the module, the module
// packages it imports (sorted, without duplicates).
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// umad2sim's sys-<pid> directories come and go while other
			// packages' tests run beside this one.
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin" || n == "out" || simSysDir(n)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, is := range f.Imports {
			imp := strings.Trim(is.Path.Value, `"`)
			if rest, ok := strings.CutPrefix(imp, module); ok && !slices.Contains(out[pkg], rest) {
				out[pkg] = append(out[pkg], rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range out {
		sort.Strings(out[p])
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s is not the module root: %v", root, err)
	}
	return out
}

// simSysDir reports whether n is one of the sys-<pid> directories the
// simulator's umad2sim library makes in a tool's working directory.
func simSysDir(n string) bool {
	d, ok := strings.CutPrefix(n, "sys-")
	if !ok || d == "" {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
