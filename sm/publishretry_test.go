package sm

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// TestPublishRetried: tables routed for a new dump that cannot be
// published (here a file in the way of the generation's directory, as a
// full disk would be) are published again without another trigger once
// the cause is gone, and /healthz says 503 meanwhile: the published
// tables route the old fabric.
func TestPublishRetried(t *testing.T) {
	s, fab, out := startTorus(t)

	block := filepath.Join(out, fmt.Sprintf(".%s.tmp-%d", genName(2), os.Getpid()))
	if err := os.WriteFile(block, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tp2, err := topo.Torus([]int{4, 5}, 1, false)
	writeFabric(t, fab, tp2, err)
	st := waitFor(t, s, "the publish failing", func(st Status) bool {
		return st.LastResult == resultFailed && len(st.Problems) > 0
	})
	if st.Published.Generation != 1 || !strings.Contains(strings.Join(st.Problems, "\n"), "publishing") {
		t.Fatalf("generation %d, problems %q", st.Published.Generation, st.Problems)
	}
	if code, body := healthz(s); code != http.StatusServiceUnavailable || !strings.Contains(body, "publishing") {
		t.Fatalf("healthz %d %q while the publish fails", code, body)
	}

	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	st = waitFor(t, s, "generation 2 published by a retry", func(st Status) bool {
		return st.LastResult == resultPublished && st.Published.Generation == 2
	})
	if st.LastTrigger != "publish-retry" || len(st.Problems) != 0 {
		t.Fatalf("trigger %q, problems %q", st.LastTrigger, st.Problems)
	}
	if checkPublished(t, out).Switches != 20 {
		t.Fatal("generation 2 does not route the new dump")
	}
	if code, body := healthz(s); code != http.StatusOK {
		t.Fatalf("healthz %d %q after the retry", code, body)
	}
}
