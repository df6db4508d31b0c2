package umad

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Agent runs an SMP agent co-process (a program serving Serve on its
// standard input and output) and sends it batches. It is started on the
// first call, kept, and restarted after a failure. Safe for concurrent
// use (calls are serialised).
type Agent struct {
	Bin  string   // the program
	Args []string // its arguments
	Env  []string // extra environment (e.g. LD_PRELOAD for a simulator)
	Dir  string   // its working directory ("": the caller's)

	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	exited chan struct{}
	stderr *tail
	id     int64
	starts int
}

// Starts returns how many times the co-process was started.
func (a *Agent) Starts() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.starts
}

// Call sends ops as one batch and returns their results in order. A
// batch whose co-process fails (it exits, writes garbage, does not answer
// within timeout) is sent once more to a restarted co-process; every op
// is a Get or an idempotent Set. None of the failed co-process's SMPs
// lands after that batch's or a later one's: it is killed and reaped
// first, the kernel releases its umad file only once the sends it posted
// completed, and a route's SMPs reach the switch in order (ibsim handles
// a dead client's queued MADs before it attaches the next client).
func (a *Agent) Call(ctx context.Context, ops []Op, timeout time.Duration) ([]Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	for try := 0; try < 2; try++ {
		var res []Result
		if res, err = a.call(ctx, ops, timeout); err == nil {
			return res, nil
		}
		a.stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, err
}

func (a *Agent) call(ctx context.Context, ops []Op, timeout time.Duration) ([]Result, error) {
	if a.cmd == nil {
		if err := a.start(); err != nil {
			return nil, err
		}
	}
	a.id++
	b, err := json.Marshal(Batch{ID: a.id, Ops: ops})
	if err != nil {
		return nil, err
	}
	if _, err := a.in.Write(append(b, '\n')); err != nil {
		// It may have exited at start: its status and last words say why.
		select {
		case <-a.exited:
			return nil, a.failed(fmt.Errorf("exited: %v", a.cmd.ProcessState))
		case <-time.After(time.Second):
			return nil, a.failed(fmt.Errorf("sending a batch: %w", err))
		}
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, a.failed(fmt.Errorf("no answer to a batch of %d SMPs within %v", len(ops), timeout))
	case line, ok := <-a.lines:
		if !ok {
			<-a.exited
			return nil, a.failed(fmt.Errorf("exited: %v", a.cmd.ProcessState))
		}
		var rep Reply
		if err := json.Unmarshal(line, &rep); err != nil {
			return nil, a.failed(fmt.Errorf("unreadable answer %q: %w", clip(line), err))
		}
		if rep.Err != "" || rep.ID != a.id || len(rep.Results) != len(ops) {
			return nil, a.failed(fmt.Errorf("answer to batch %d: id %d, %d results for %d ops, error %q", a.id, rep.ID, len(rep.Results), len(ops), rep.Err))
		}
		return rep.Results, nil
	}
}

// failed wraps err with what the co-process said on its standard error.
func (a *Agent) failed(err error) error {
	msg := ""
	if a.stderr != nil {
		if s := strings.TrimSpace(a.stderr.String()); s != "" {
			msg = ": " + s
		}
	}
	return fmt.Errorf("SMP agent %s: %w%s", a.Bin, err, msg)
}

func (a *Agent) start() error {
	cmd := exec.Command(a.Bin, a.Args...)
	cmd.Env = append(cmd.Environ(), a.Env...)
	cmd.Dir = a.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	a.stderr = &tail{limit: 4 << 10}
	cmd.Stderr = a.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the SMP agent: %w", err)
	}
	a.starts++
	lines, exited := make(chan []byte, 1), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			lines <- bytes.Clone(sc.Bytes())
		}
		close(lines)
		_ = cmd.Wait()
		close(exited)
	}()
	a.cmd, a.in, a.lines, a.exited = cmd, in, lines, exited
	return nil
}

// stop kills the co-process (its whole process group) and waits for it.
func (a *Agent) stop() {
	if a.cmd == nil {
		return
	}
	_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
	_ = a.in.Close()
	for range a.lines {
	}
	<-a.exited
	a.cmd = nil
}

// Close stops the co-process.
func (a *Agent) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stop()
}

// Pid returns the co-process's pid (0: not running).
func (a *Agent) Pid() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cmd == nil {
		return 0
	}
	return a.cmd.Process.Pid
}

// tail keeps the last limit bytes written.
type tail struct {
	mu    sync.Mutex
	buf   []byte
	limit int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.limit {
		t.buf = t.buf[len(t.buf)-t.limit:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
