package sm

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nuesm/nuesm/topo"
)

// TestHelperPublishLoop is the child of TestKill9DuringPublish: it reroutes
// forever, alternating between two fabrics so every reroute publishes.
func TestHelperPublishLoop(t *testing.T) {
	dir := os.Getenv("NUESM_SM_CHILD_DIR")
	if dir == "" {
		t.Skip("child process of TestKill9DuringPublish")
	}
	fab := filepath.Join(dir, "fabric.topo")
	a, _ := topo.Torus([]int{6, 6}, 4, false)
	b, _ := topo.Torus([]int{5, 7}, 4, false)
	s, err := New(Config{Fabric: fab, Output: filepath.Join(dir, "out"), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		tp := a
		if i%2 == 1 {
			tp = b
		}
		writeFabric(t, fab, tp, nil)
		s.reroute(context.Background(), "loop")
	}
}

// TestKill9DuringPublish kills a publishing daemon at random moments: the
// published directory must always be a complete, verified set, and the
// next daemon must clean up and publish again.
func TestKill9DuringPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(9, 9))
	kills := 0
	for round := 0; round < 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPublishLoop$", "-test.count=1")
		cmd.Env = append(os.Environ(), "NUESM_SM_CHILD_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it publish at least once, then kill at a random moment.
		time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		kills++
		if _, err := os.Stat(filepath.Join(dir, "out", "current")); os.IsNotExist(err) {
			continue // killed before the first publish completed
		}
		checkPublished(t, filepath.Join(dir, "out"))
	}
	// A new daemon cleans up the leftovers and keeps publishing.
	s, err := New(Config{Fabric: filepath.Join(dir, "fabric.topo"), Output: filepath.Join(dir, "out"), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "out"))
	for _, e := range ents {
		if e.Name()[0] == '.' {
			t.Fatalf("leftover %s after restart", e.Name())
		}
	}
	s.reroute(context.Background(), "after-kill")
	if st := s.Status(); st.LastResult == resultFailed {
		t.Fatalf("reroute after kills: %s", st.LastError)
	}
	checkPublished(t, filepath.Join(dir, "out"))
	t.Logf("%d kills, published directory always complete and verified", kills)
}
