package slurm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// StateRunning is the state of a running job.
const StateRunning = "RUNNING"

// StateConfiguring is the state of a job whose nodes are allocated while
// its PrologSlurmctld (or node boot) still runs. squeue -t RUNNING does
// not list it, yet that is when nuesm's prolog hook asks for a reroute:
// the sources and the filter count it as running (see Allocated).
const StateConfiguring = "CONFIGURING"

// Allocated reports whether a job in state holds its nodes for running:
// RUNNING or CONFIGURING.
func Allocated(state string) bool { return state == StateRunning || state == StateConfiguring }

// Unlimited is the TimeLimit of a job without one (SLURM's UNLIMITED or
// INFINITE). It compares greater than every finite limit.
const Unlimited = time.Duration(math.MaxInt64)

// Job is one SLURM job as the sources report it.
type Job struct {
	// ID is the job id as squeue's %i prints it: "1234", "1234_7" for
	// task 7 of array job 1234, "1234+1" for component 1 of
	// heterogeneous job 1234.
	ID string
	// State is the base state in capitals: "RUNNING", "PENDING",
	// "COMPLETING"….
	State string
	// Nodes are the job's hosts, NodeList expanded (SLURM's order).
	Nodes []string
	// NodeList is the hostlist expression SLURM gave, e.g. "node[01-04]".
	NodeList string
	// TimeLimit is the job's time limit, Unlimited if it has none and 0
	// when SLURM did not say (NOT_SET, INVALID, N/A). SLURM itself never
	// gives a job a zero limit: "--time=0" means no limit.
	TimeLimit time.Duration
	// Partition is the partition the job runs in (for a pending job
	// possibly a comma-separated list).
	Partition string
	// Name and User are informational; the squeue source leaves them
	// empty.
	Name, User string
	// Line is the job's line in a jobs file (0: not from a file).
	Line int
}

// Source gives the running jobs. Implementations return only jobs whose
// state is Allocated (RUNNING or CONFIGURING), sorted by ID (see SortJobs);
// the caller owns the slice.
type Source interface {
	RunningJobs(ctx context.Context) ([]Job, error)
}

// ErrTimeLimit is wrapped by ParseTimeLimit's errors.
var ErrTimeLimit = errors.New("invalid time limit")

// ParseTimeLimit parses a time limit as squeue prints it (%l) or as
// sbatch --time accepts it:
//
//	UNLIMITED, INFINITE           → Unlimited
//	NOT_SET, INVALID, N/A, ""     → 0 (unknown)
//	M                             minutes
//	M:S                           minutes:seconds (squeue: "30:00", "5:00")
//	H:M:S                         hours:minutes:seconds
//	D-H, D-H:M, D-H:M:S           days-hours[:minutes[:seconds]] ("1-02:04:00")
//
// Fields are non-negative decimal numbers; a negative total or one that
// overflows time.Duration is an error wrapping ErrTimeLimit.
func ParseTimeLimit(s string) (time.Duration, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "UNLIMITED", "INFINITE":
		return Unlimited, nil
	case "NOT_SET", "INVALID", "N/A", "":
		return 0, nil
	}
	fail := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("time limit %q: %s: %w", s, why, ErrTimeLimit)
	}
	s = strings.TrimSpace(s)
	var days uint64
	rest := s
	hasDays := false
	if d, r, ok := strings.Cut(s, "-"); ok {
		v, err := parseField(d)
		if err != nil {
			return fail("days " + err.Error())
		}
		days, rest, hasDays = v, r, true
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return fail("more than three ':'-separated fields")
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := parseField(p)
		if err != nil {
			return fail(err.Error())
		}
		vals[i] = v
	}
	var h, m, sec uint64
	switch {
	case hasDays: // D-H, D-H:M, D-H:M:S
		h = vals[0]
		if len(vals) > 1 {
			m = vals[1]
		}
		if len(vals) > 2 {
			sec = vals[2]
		}
	case len(vals) == 1: // M
		m = vals[0]
	case len(vals) == 2: // M:S
		m, sec = vals[0], vals[1]
	default: // H:M:S
		h, m, sec = vals[0], vals[1], vals[2]
	}
	const maxSec = uint64(math.MaxInt64 / int64(time.Second))
	total := sec
	for _, add := range []struct{ v, unit uint64 }{{m, 60}, {h, 3600}, {days, 86400}} {
		if add.v > maxSec/add.unit || total > maxSec-add.v*add.unit {
			return fail("too large")
		}
		total += add.v * add.unit
	}
	return time.Duration(total) * time.Second, nil
}

func parseField(p string) (uint64, error) {
	if p == "" {
		return 0, errors.New("empty field")
	}
	for i := 0; i < len(p); i++ {
		if !isDigit(p[i]) {
			return 0, fmt.Errorf("field %q is not a number", p)
		}
	}
	v, err := strconv.ParseUint(p, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("field %q too large", p)
	}
	return v, nil
}

// FormatTimeLimit prints a limit the way squeue does: "UNLIMITED",
// "M:SS", "H:MM:SS" or "D-HH:MM:SS"; 0 prints as "NOT_SET".
func FormatTimeLimit(d time.Duration) string {
	switch {
	case d == Unlimited:
		return "UNLIMITED"
	case d <= 0:
		return "NOT_SET"
	}
	s := int64(d / time.Second)
	days, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, sec)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
}

// SortJobs sorts jobs by ID with CompareJobIDs: "2" < "10", "4_2" <
// "4_10", "6+0" < "6+1". Jobs with equal IDs keep their order.
func SortJobs(jobs []Job) {
	slices.SortStableFunc(jobs, func(a, b Job) int { return CompareJobIDs(a.ID, b.ID) })
}

// allocatedJobs keeps the Allocated jobs of jobs (in place) and sorts them
// by ID: what RunningJobs returns from either source.
func allocatedJobs(jobs []Job) []Job {
	running := jobs[:0]
	for _, j := range jobs {
		if Allocated(j.State) {
			running = append(running, j)
		}
	}
	SortJobs(running)
	return running
}

// CompareJobIDs compares two job ids numerically field by field (fields
// are runs of digits, compared as numbers, and runs of other bytes,
// compared as strings; "01" and "1" then compare as strings) and returns
// -1, 0 or +1.
func CompareJobIDs(a, b string) int {
	if c := compareIDFields(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func compareIDFields(a, b string) int {
	for a != "" && b != "" {
		fa, ra := idField(a)
		fb, rb := idField(b)
		da, db := isDigit(fa[0]), isDigit(fb[0])
		var c int
		switch {
		case da && db:
			ta, tb := strings.TrimLeft(fa, "0"), strings.TrimLeft(fb, "0")
			if c = len(ta) - len(tb); c == 0 {
				c = strings.Compare(ta, tb)
			}
		case da:
			c = -1
		case db:
			c = 1
		default:
			c = strings.Compare(fa, fb)
		}
		if c != 0 {
			if c < 0 {
				return -1
			}
			return 1
		}
		a, b = ra, rb
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

// idField splits s (non-empty) into its first run of digits or non-digits
// and the rest.
func idField(s string) (string, string) {
	d := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == d {
		i++
	}
	return s[:i], s[i:]
}
