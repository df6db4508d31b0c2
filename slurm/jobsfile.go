package slurm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ErrJobsFile is wrapped by the errors of ParseJobsFile.
var ErrJobsFile = errors.New("invalid jobs file")

// LoadJobsFile reads a jobs file; see ParseJobsFile.
func LoadJobsFile(path string) ([]Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("jobs file: %w", err)
	}
	defer f.Close()
	return ParseJobsFile(f, path)
}

// ParseJobsFile reads a jobs file: running jobs written by hand or saved
// from SLURM, for `nuesm route --engine sar-nue --jobs FILE`. One job a
// line, a job id then its hosts as a hostlist expression (the rest of the
// line; commas or blanks separate hosts):
//
//	# job id   hosts
//	1234       node[0001-0004,0017]
//	1235       node0005 node0021     # a comment
//	4_2        rack[1-2]n[01-04]
//
// '#' starts a comment; blank lines are skipped. Job ids hold no blanks
// and appear once; a job names at least one host. The jobs come back in
// file order, State RUNNING, with no time limit or partition (so the
// filter's time and partition rules keep them). Errors read
// "jobs FILE:LINE: …" and wrap ErrJobsFile (and ErrHostlist for a bad
// expression).
func ParseJobsFile(r io.Reader, name string) ([]Job, error) {
	var jobs []Job
	seen := make(map[string]int)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		fail := func(err error) ([]Job, error) {
			return nil, fmt.Errorf("jobs %s:%d: %w: %w", name, ln, ErrJobsFile, err)
		}
		id, expr := line, ""
		if k := strings.IndexAny(line, " \t\v\f\r"); k >= 0 {
			id, expr = line[:k], strings.TrimSpace(line[k:])
		}
		if expr == "" {
			return fail(fmt.Errorf("job %q without hosts (want: job-id hostlist)", id))
		}
		if first, ok := seen[id]; ok {
			return fail(fmt.Errorf("job %q again (first on line %d)", id, first))
		}
		seen[id] = ln
		nodes, err := Expand(expr)
		if err != nil {
			return fail(fmt.Errorf("job %s: %w", id, err))
		}
		if len(nodes) == 0 {
			return fail(fmt.Errorf("job %q without hosts", id))
		}
		jobs = append(jobs, Job{ID: id, State: StateRunning, Nodes: nodes, NodeList: expr, Line: ln})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("jobs %s: %w", name, err)
	}
	return jobs, nil
}
