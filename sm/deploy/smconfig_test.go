package deploy

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/nuesm/nuesm/sm"
)

// TestReorderNote: allow_reorder is ignored, and said so only to an admin
// who set it to false, not at every start.
func TestReorderNote(t *testing.T) {
	for _, c := range []struct {
		conf string
		want bool
	}{
		{"[opensm]\n", false},
		{"[opensm]\nallow_reorder = true\n", false},
		{"[opensm]\nallow_reorder = false\n", true},
	} {
		var cfg sm.Config
		if _, err := toml.Decode(c.conf, &cfg); err != nil {
			t.Fatal(err)
		}
		if got := reorderNote(cfg); (got != "") != c.want || (c.want && !strings.Contains(got, "allow_reorder = false")) {
			t.Errorf("%q: note %q", c.conf, got)
		}
	}
}
