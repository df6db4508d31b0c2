package sm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// genDirs lists the gen-* directories of out.
func genDirs(t *testing.T, out string) []string {
	t.Helper()
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var gens []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), genPrefix) {
			gens = append(gens, e.Name())
		}
	}
	return gens
}

// daemonOn makes a daemon (not running) on a generated fabric.
func daemonOn(t *testing.T, out string, tp *topo.Topology, cfg Config) (*Server, string) {
	t.Helper()
	fab := filepath.Join(t.TempDir(), "fabric.topo")
	writeFabric(t, fab, tp, nil)
	cfg.Fabric, cfg.Output, cfg.Listen = fab, out, "127.0.0.1:0"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, fab
}

// reroute runs one reroute and fails the test on a failure.
func mustReroute(t *testing.T, s *Server) Status {
	t.Helper()
	s.reroute(context.Background(), "test")
	st := s.Status()
	if st.LastResult == resultFailed {
		t.Fatalf("reroute: %s", st.LastError)
	}
	return st
}

// TestCurrentIsADirectory: a real directory in place of "current" (an
// admin's copy, a restore) is moved aside, not deleted and not left to
// block the publish; no generation is orphaned.
func TestCurrentIsADirectory(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "current"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "current", "note"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	tp, err := topo.Torus([]int{3, 3}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	s, fab := daemonOn(t, out, tp, Config{})
	mustReroute(t, s)
	checkPublished(t, out)
	if g := genDirs(t, out); !slices.Equal(g, []string{"gen-000001"}) {
		t.Fatalf("generations %v", g)
	}
	moved, _ := filepath.Glob(filepath.Join(out, displacedName+"*", "note"))
	if len(moved) != 1 {
		t.Fatalf("the displaced directory's file: %v", moved)
	}

	// Again after a publish: current replaced by a copy of itself.
	cur := filepath.Join(out, "current")
	if err := os.Remove(cur); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("cp", "-r", filepath.Join(out, "gen-000001"), cur).Run(); err != nil {
		t.Fatal(err)
	}
	tp2, err := topo.Torus([]int{3, 4}, 1, false)
	writeFabric(t, fab, tp2, err)
	st := mustReroute(t, s)
	if st.Published.Generation != 2 || !slices.Equal(genDirs(t, out), []string{"gen-000001", "gen-000002"}) {
		t.Fatalf("generation %d, directories %v", st.Published.Generation, genDirs(t, out))
	}
	checkPublished(t, out)
}

// TestPruneKeepsCurrentAndPrevious: at most keep generations stay, never
// fewer than the current and the previous one.
func TestPruneKeepsCurrentAndPrevious(t *testing.T) {
	for _, keep := range []int{1, 2, 3} {
		out := t.TempDir()
		tp, err := topo.Torus([]int{3, 3}, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		s, fab := daemonOn(t, out, tp, Config{Keep: keep})
		for i := 0; i < 5; i++ {
			tp, err := topo.Torus([]int{3, 3 + i}, 1, false)
			writeFabric(t, fab, tp, err)
			mustReroute(t, s)
		}
		want := []string{"gen-000004", "gen-000005"}
		if keep == 3 {
			want = []string{"gen-000003", "gen-000004", "gen-000005"}
		}
		if g := genDirs(t, out); !slices.Equal(g, want) {
			t.Errorf("keep %d: generations %v, want %v", keep, g, want)
		}
	}
}

// TestPruneBeforePublishWhenShort: when the disk lacks room for another
// generation, old ones go before the write (not after), so the publish
// succeeds.
func TestPruneBeforePublishWhenShort(t *testing.T) {
	out := t.TempDir()
	tp, err := topo.Torus([]int{4, 4}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	s, fab := daemonOn(t, out, tp, Config{Keep: 5})
	for i := 0; i < 3; i++ {
		tp, err := topo.Torus([]int{4, 4 + i}, 2, false)
		writeFabric(t, fab, tp, err)
		mustReroute(t, s)
	}
	var free uint64
	s.pub.free = func(string) (uint64, error) { return free, nil }
	free = 1 // short: everything but the current goes first
	tp, err = topo.Torus([]int{4, 7}, 2, false)
	writeFabric(t, fab, tp, err)
	mustReroute(t, s)
	if g := genDirs(t, out); !slices.Equal(g, []string{"gen-000003", "gen-000004"}) {
		t.Fatalf("generations %v", g)
	}
}

// TestPublishOnSmallDisk publishes on a real small file system (tmpfs,
// needs root) that holds two generations but not three: publishing keeps
// working because old generations go first.
func TestPublishOnSmallDisk(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	probe := t.TempDir()
	s, _ := daemonOn(t, probe, tp, Config{})
	mustReroute(t, s)
	size := dirBytes(t, filepath.Join(probe, "gen-000001"))
	mnt := t.TempDir()
	opt := fmt.Sprintf("size=%dk", (size*5/2)>>10)
	if err := exec.Command("mount", "-t", "tmpfs", "-o", opt, "tmpfs", mnt).Run(); err != nil {
		t.Skipf("SKIP (loud): cannot mount a small tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	s, fab := daemonOn(t, mnt, tp, Config{Keep: 5})
	for i := 0; i < 6; i++ {
		tp, err := topo.Torus([]int{4, 4}, 2, i%2 == 1)
		writeFabric(t, fab, tp, err)
		st := mustReroute(t, s)
		if st.Published.Generation != i+1 {
			t.Fatalf("round %d: generation %d (%s)", i, st.Published.Generation, st.LastResult)
		}
		checkPublished(t, mnt)
	}
	if g := genDirs(t, mnt); !slices.Equal(g, []string{"gen-000005", "gen-000006"}) {
		t.Fatalf("generations %v", g)
	}
}

// dirBytes is the space the files of dir take, in 4 KiB pages.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += (fi.Size() + 4095) &^ 4095
	}
	return n
}

// TestSwapFailsAfterCurrent: a publish that fails after "current" names
// the new generation (here: "previous" cannot be swapped) reports the
// failure but never deletes the generation "current" names; the next
// reroute publishes afresh.
func TestSwapFailsAfterCurrent(t *testing.T) {
	out := t.TempDir()
	tp, err := topo.Torus([]int{3, 3}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	s, fab := daemonOn(t, out, tp, Config{})
	mustReroute(t, s)
	// A directory with a file in the way of the "previous" symlink's
	// temporary name.
	block := filepath.Join(out, "."+previousLink+".tmp")
	if err := os.MkdirAll(filepath.Join(block, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	tp2, err := topo.Torus([]int{3, 4}, 1, false)
	writeFabric(t, fab, tp2, err)
	s.reroute(context.Background(), "test")
	if st := s.Status(); st.LastResult != resultFailed || st.Published.Generation != 1 {
		t.Fatalf("the publish whose previous link failed: %s, generation %d", st.LastResult, st.Published.Generation)
	}
	if _, err := os.Stat(filepath.Join(out, currentLink, statusFile)); err != nil {
		t.Fatalf("current names no generation after the failed swap: %v", err)
	}
	checkPublished(t, out)
	if err := os.RemoveAll(block); err != nil {
		t.Fatal(err)
	}
	if st := mustReroute(t, s); st.LastResult != resultPublished || st.Published.Generation != 3 {
		t.Fatalf("after the failed swap: %s, generation %d", st.LastResult, st.Published.Generation)
	}
	checkPublished(t, out)
}
