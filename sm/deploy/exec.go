package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrOutputLimit is returned when a program writes more than the limit.
var ErrOutputLimit = errors.New("output limit exceeded")

// runner executes the infiniband-diags programs: without a shell, in a
// process group of their own (so that a timeout kills the program and
// anything it started), with a time limit and a cap on their output.
type runner struct {
	dir     string   // directory of the programs; "" = $PATH, then the sbin directories
	work    string   // working directory of the programs; "" = the daemon's
	env     []string // extra environment (e.g. LD_PRELOAD for a simulator)
	timeout time.Duration
	limit   int64 // bytes of standard output kept; more is an error
}

// sbinDirs are searched after $PATH: Debian installs the diags there.
var sbinDirs = []string{"/usr/sbin", "/sbin", "/usr/local/sbin"}

// path resolves a program name.
func (r *runner) path(name string) (string, error) {
	if r.dir != "" {
		return filepath.Join(r.dir, name), nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range sbinDirs {
		p := filepath.Join(d, name)
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in $PATH or %s (set opensm.tools_dir)", name, strings.Join(sbinDirs, ", "))
}

// run runs name with args and returns its standard output. A non-zero
// exit, a timeout or too much output is an error quoting the end of the
// program's standard error.
func (r *runner) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, _, err := r.runStderr(ctx, name, args...)
	return out, err
}

// runStderr is run that also returns the end of the program's standard
// error (its last 64 KiB): ibnetdiscover reports the queries that failed
// there and still exits 0.
func (r *runner) runStderr(ctx context.Context, name string, args ...string) ([]byte, string, error) {
	bin, err := r.path(name)
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cmd.Environ(), r.env...)
	cmd.Dir = r.work
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	stdout := &capped{limit: r.limit, cancel: cancel}
	stderr := &capped{limit: 64 << 10, tail: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	// Whatever happened, nothing of the group may outlive the call.
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	switch {
	case stdout.over:
		err = fmt.Errorf("%w (%d bytes)", ErrOutputLimit, r.limit)
	case ctx.Err() == context.DeadlineExceeded:
		err = fmt.Errorf("timed out (limit %v)", r.timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(lastLines(stderr.String(), 5))
		if msg != "" {
			msg = ": " + msg
		}
		return stdout.buf.Bytes(), stderr.String(), fmt.Errorf("%s %s: %w%s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.buf.Bytes(), stderr.String(), nil
}

// capped is an io.Writer keeping up to limit bytes: the first ones, or
// with tail the last ones. Without tail, going over the limit calls
// cancel (which kills the program).
type capped struct {
	buf    bytes.Buffer
	limit  int64
	tail   bool
	over   bool
	cancel func()
}

func (c *capped) Write(p []byte) (int, error) {
	if c.tail {
		c.buf.Write(p)
		if n := int64(c.buf.Len()); n > c.limit {
			b := append([]byte(nil), c.buf.Bytes()[n-c.limit:]...)
			c.buf.Reset()
			c.buf.Write(b)
		}
		return len(p), nil
	}
	if int64(c.buf.Len()+len(p)) > c.limit {
		c.over = true
		if c.cancel != nil {
			c.cancel()
		}
		return 0, ErrOutputLimit
	}
	return c.buf.Write(p)
}

func (c *capped) String() string { return c.buf.String() }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
