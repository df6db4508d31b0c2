package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nuesm/nuesm/lft"
)

// TestServeAndRoutePublishTheSameFiles: "nuesm route FABRIC -o DIR" and
// "nuesm serve --fabric FABRIC -o DIR" with the same engine chain write
// the same table files, byte for byte: one table set (lft.TableSet), one
// route-and-verify (routing.RouteChain).
func TestServeAndRoutePublishTheSameFiles(t *testing.T) {
	dir := t.TempDir()
	torus, tree := filepath.Join(dir, "torus.topo"), filepath.Join(dir, "tree.topo")
	if _, _, err := run(t, "gen", "torus", "--dims", "4x4", "--hosts", "2", "-o", torus); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "gen", "fattree", "--k", "4", "--n", "2", "-o", tree); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ fab, chain, param string }{
		{torus, "nue:share=none", ""},           // SLs per destination: a QoS policy too
		{torus, "dor,updn", ""},                 // SLs per source switch: policy rules with source groups
		{torus, "dfsssp,updn", "vlbalance=off"}, // a shared parameter
		{tree, "ftree", ""},                     // a promise of CA traffic only
	} {
		fab := c.fab
		routed, served := filepath.Join(dir, "route", c.chain), filepath.Join(dir, "serve", c.chain)
		args := []string{"--engine", c.chain, "--vls", "4"}
		if c.param != "" {
			args = append(args, "--param", c.param)
		}
		if _, stderr, err := run(t, append([]string{"route", fab, "-q", "-o", routed}, args...)...); err != nil {
			t.Fatalf("%s: route: %v\n%s", c.chain, err, stderr)
		}
		serveOnce(t, append([]string{"serve", "--fabric", fab, "-o", served, "--listen", "127.0.0.1:0"}, args...), served)
		compared := 0
		for _, name := range []string{lft.LFTsFile, lft.SLFile, lft.SL2VLFile, lft.QoSPolicyFile, lft.FabricFile} {
			a, aerr := os.ReadFile(filepath.Join(routed, name))
			b, berr := os.ReadFile(filepath.Join(served, "current", name))
			switch {
			case errors.Is(aerr, fs.ErrNotExist) && errors.Is(berr, fs.ErrNotExist) && name == lft.QoSPolicyFile:
			case aerr != nil || berr != nil:
				t.Fatalf("%s: %s: route %v, serve %v", c.chain, name, aerr, berr)
			case !bytes.Equal(a, b):
				t.Fatalf("%s: %s differs between route and serve", c.chain, name)
			default:
				compared++
			}
		}
		if want := []int{5, 5, 5, 5}[i]; compared != want {
			t.Errorf("%s: %d files compared, want %d", c.chain, compared, want)
		}
	}
}

// serveOnce runs "nuesm serve" (args) until it has published into out,
// then stops it.
func serveOnce(t *testing.T, args []string, out string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := newRootCmd()
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Minute)
	}
	status := filepath.Join(out, "current", "status.json")
	for {
		if _, err := os.Stat(status); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve %v ended before publishing: %v\n%s", args, err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline.Add(-5 * time.Second)) {
			cancel()
			t.Fatalf("serve %v published nothing before the test's deadline\n%s", args, stderr.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve %v: %v\n%s", args, err, stderr.String())
	}
}
