package slurm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// DefaultTimeout bounds one query of a source whose Timeout is 0.
const DefaultTimeout = 10 * time.Second

// SqueueFormat is the output format Squeue asks for: job id, state, node
// list, time limit, partition (FORMATS.md §6).
const SqueueFormat = "%i|%T|%N|%l|%P"

// SqueueArgs are the arguments Squeue passes to squeue. CONFIGURING is
// asked for too: see StateConfiguring.
var SqueueArgs = []string{"-h", "-t", StateRunning + "," + StateConfiguring, "-o", SqueueFormat}

// ErrMalformed is wrapped by the errors of the parsers of SLURM output
// (squeue lines, slurmrestd JSON).
var ErrMalformed = errors.New("malformed SLURM output")

// Squeue runs squeue(1) to list the running jobs:
//
//	squeue -h -t RUNNING,CONFIGURING -o '%i|%T|%N|%l|%P'
//
// It runs the program directly (no shell) with the process's environment,
// minus the SQUEUE_* variables that would change squeue's output, plus
// Env, in a process group of its own: on the deadline, or when its output
// passes MaxBytes, the whole group is killed, so a hung wrapper script
// leaves no children behind. The zero value runs "squeue" from $PATH with
// DefaultTimeout and DefaultSqueueMaxBytes. A Squeue is safe for
// concurrent use.
type Squeue struct {
	// Path is the squeue program; "" means "squeue" found in $PATH.
	Path string
	// Env holds extra NAME=value pairs, e.g. "SLURM_CONF=/etc/slurm/x.conf".
	Env []string
	// Timeout bounds one run (0 = DefaultTimeout); the context passed to
	// RunningJobs may end it sooner. On expiry squeue's process group is
	// killed.
	Timeout time.Duration
	// MaxBytes bounds squeue's standard output (0 =
	// DefaultSqueueMaxBytes); more is an error wrapping ErrTooLarge.
	MaxBytes int64
}

// RunningJobs runs squeue and returns the Allocated jobs it lists, sorted
// by ID. A failed run is an error quoting the end of squeue's standard
// error; a malformed line fails the whole call (wrapping ErrMalformed) so
// that a caller keeps its last good view rather than acting on half of
// one.
func (s *Squeue) RunningJobs(ctx context.Context) ([]Job, error) {
	out, err := s.run(ctx)
	if err != nil {
		return nil, err
	}
	jobs, err := ParseSqueue(bytes.NewReader(out))
	if err != nil {
		return nil, err
	}
	return allocatedJobs(jobs), nil
}

func (s *Squeue) run(ctx context.Context) ([]byte, error) {
	path := s.Path
	if path == "" {
		path = "squeue"
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	limit := s.MaxBytes
	if limit <= 0 {
		limit = DefaultSqueueMaxBytes
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, SqueueArgs...)
	cmd.Env = squeueEnv(os.Environ(), s.Env)
	ownGroup(cmd)
	cmd.WaitDelay = time.Second
	stdout := &cappedBuffer{limit: limit, over: cancel}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &limitedWriter{w: &stderr, n: 64 << 10}
	err := cmd.Run()
	waitDelay := errors.Is(err, exec.ErrWaitDelay)
	if waitDelay {
		// squeue is gone but members of its group still hold the output
		// open; the group id stays theirs while they live.
		_ = killGroup(cmd)
	}
	switch {
	case stdout.exceeded:
		return nil, tooLarge("squeue", limit)
	case parent.Err() != nil:
		return nil, fmt.Errorf("squeue: %w", parent.Err())
	case ctx.Err() != nil:
		return nil, fmt.Errorf("squeue: no answer within %v: %w", timeout, ctx.Err())
	case waitDelay:
		return nil, fmt.Errorf("squeue: exited, but processes it started kept its output open: %w", err)
	}
	if err != nil {
		msg := lastLines(stderr.String(), 5)
		if msg != "" {
			return nil, fmt.Errorf("squeue: %w: %s", err, msg)
		}
		return nil, fmt.Errorf("squeue: %w", err)
	}
	return stdout.buf.Bytes(), nil
}

// squeueEnv is base without SQUEUE_* (they set default formats, sorting
// and states that our arguments must not compete with) plus extra.
func squeueEnv(base, extra []string) []string {
	env := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if !strings.HasPrefix(kv, "SQUEUE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// ParseSqueue parses squeue output in SqueueFormat, one job per line, in
// input order and whatever the state. Blank lines and a header line
// ("JOBID|STATE|…", as printed without -h) are skipped; fields are
// trimmed of blanks (so "%.18i"-style padding is harmless). A line
// without exactly five fields, an empty job id or state, a malformed node
// list or time limit is an error naming the line and wrapping
// ErrMalformed (and ErrHostlist or ErrTimeLimit where one applies). A
// RUNNING or CONFIGURING job must have nodes.
func ParseSqueue(r io.Reader) ([]Job, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var jobs []Job
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 5 {
			return nil, squeueErr(ln, line, fmt.Errorf("%d fields, expected 5 (%s)", len(f), SqueueFormat))
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if ln == 1 && f[0] == "JOBID" && f[1] == "STATE" {
			continue
		}
		j := Job{ID: f[0], State: f[1], NodeList: f[2], Partition: f[4]}
		if j.ID == "" || strings.ContainsAny(j.ID, " \t") {
			return nil, squeueErr(ln, line, fmt.Errorf("job id %q", j.ID))
		}
		if j.State == "" {
			return nil, squeueErr(ln, line, errors.New("empty state"))
		}
		nodes, err := Expand(j.NodeList)
		if err != nil {
			return nil, squeueErr(ln, line, err)
		}
		if Allocated(j.State) && len(nodes) == 0 {
			return nil, squeueErr(ln, line, errors.New("running job without nodes"))
		}
		j.Nodes = nodes
		if j.TimeLimit, err = ParseTimeLimit(f[3]); err != nil {
			return nil, squeueErr(ln, line, err)
		}
		jobs = append(jobs, j)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("squeue output: %w", err)
	}
	return jobs, nil
}

// squeueErr wraps err for line ln of squeue's output.
func squeueErr(ln int, line string, err error) error {
	return &OutputError{Source: "squeue output", Line: ln, Text: line, Err: err}
}

// OutputError is a malformed piece of SLURM output: a squeue line or a
// job of slurmrestd's answer. It wraps ErrMalformed and the specific
// cause (ErrHostlist, ErrTimeLimit…), both visible to errors.Is.
type OutputError struct {
	Source string // "squeue output", "slurmrestd jobs"
	Line   int    // 1-based line number; 0 when not line-oriented
	Text   string // the offending line or job id
	Err    error  // what is wrong
}

// Error reads like: squeue output line 3 "1|RUNNING|n[1-": hostlist ….
// The quoted text is cut to 120 bytes.
func (e *OutputError) Error() string {
	text := e.Text
	if len(text) > 120 {
		text = text[:120] + "…"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d %q: %v", e.Source, e.Line, text, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Source, text, e.Err)
}

// Unwrap returns ErrMalformed and the cause.
func (e *OutputError) Unwrap() []error { return []error{ErrMalformed, e.Err} }
