package flitsim

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports: the simulator knows routing, not studies. Its non-test
// dependencies inside the module are fabric, lft and internal helpers
// only, never a seed study, an engine or the engine registry (the studies
// implement Policy and VCPolicy from their own packages and import
// flitsim, not the other way round).
func TestImports(t *testing.T) {
	const module = "github.com/nuesm/nuesm/"
	allowed := map[string]bool{"fabric": true, "lft": true, "flitsim": true}
	seen := map[string]bool{}
	var walk func(path, from string)
	walk = func(path, from string) {
		if seen[path] || !strings.HasPrefix(path, module) {
			return
		}
		seen[path] = true
		rel := strings.TrimPrefix(path, module)
		if !allowed[rel] && !strings.HasPrefix(rel, "internal/") {
			t.Errorf("flitsim depends on %s (imported by %s)", rel, from)
		}
		pkg, err := build.Default.Import(path, ".", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			walk(imp, rel)
		}
	}
	walk(module+"flitsim", "")
	if len(seen) < 3 {
		t.Fatalf("walked %d packages: the import walk found nothing", len(seen))
	}
}
