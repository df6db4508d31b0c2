package buildinfo

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "5cff761afd2c7ea4f8bbc720484fea4656d892cb"},
		{Key: "vcs.time", Value: "2026-11-26T01:24:38Z"}, {Key: "vcs.modified", Value: "false"}}
	dirty := append(vcs[:3:3], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, tc := range []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261126012438-5cff761afd2c"}, Settings: vcs},
			"v0.0.0-20261126012438-5cff761afd2c (commit 5cff761afd2c7ea4f8bbc720484fea4656d892cb, 2026-11-26T01:24:38Z, go1.26.8)"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: dirty},
			"v1.2.3 (commit 5cff761afd2c7ea4f8bbc720484fea4656d892cb + local changes, 2026-11-26T01:24:38Z, go1.26.8)"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "(devel) (commit unknown, go1.26.8)"},
		{debug.BuildInfo{}, "(devel) (commit unknown)"},
	} {
		if got := format(&tc.info); got != tc.want {
			t.Errorf("format:\n got %s\nwant %s", got, tc.want)
		}
	}
}

// TestBinariesPrintTheirBuild builds nuesm and flitsim as a user does and
// checks that --version and -V print the module version and commit the
// toolchain stamped into each binary; in a git checkout (a .git
// directory, which the toolchain needs for stamping) that commit is HEAD.
func TestBinariesPrintTheirBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both commands")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command in $PATH to build the binaries: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := exec.Command(goTool, "build", "-buildvcs=auto", "-o", dir+string(filepath.Separator), "./cmd/nuesm", "./cmd/flitsim")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	head := ""
	if st, err := os.Stat(filepath.Join(root, ".git")); err == nil && st.IsDir() {
		git := exec.Command("git", "rev-parse", "HEAD")
		git.Dir = root
		if out, err := git.Output(); err == nil {
			head = strings.TrimSpace(string(out))
		}
	}
	for _, name := range []string{"nuesm", "flitsim"} {
		bin := filepath.Join(dir, name)
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		want := name + " version " + format(info) + "\n"
		for _, flag := range []string{"--version", "-V"} {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, flag)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s %s: %v\n%s", name, flag, err, stderr.String())
			}
			if stdout.String() != want {
				t.Errorf("%s %s:\n got %q\nwant %q", name, flag, stdout.String(), want)
			}
		}
		if head != "" && !strings.Contains(want, "commit "+head) {
			t.Errorf("%s built from the checkout at %s says %q", name, head, want)
		}
		if !strings.Contains(want, info.Main.Version) || info.Main.Version == "" {
			t.Errorf("%s: module version %q missing from %q", name, info.Main.Version, want)
		}
	}
	if head == "" {
		t.Logf("no .git directory at %s (a worktree or an export): the commit is not checked against HEAD", root)
	}
}
