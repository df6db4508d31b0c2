package placement

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrRoles is wrapped by every error of ReadRoles.
var ErrRoles = errors.New("placement: bad roles file")

// NodeRole is one node line of a roles file.
type NodeRole struct {
	Node   int
	Coords []int
	Role   string // io, compute or failed
	IO     int    // serving I/O node, itself for io, -1 for failed
	Dist   int
}

// Roles is a parsed roles file (format: see the package documentation).
type Roles struct {
	Torus  *Torus
	Method string
	T      int
	Nodes  []NodeRole // index order, one per node
}

// WriteRoles writes the assignment as a roles file.
func WriteRoles(w io.Writer, a *Assignment) error {
	t := a.P.Torus
	bw := bufio.NewWriter(w)
	healthy := 0
	for i := range a.Of {
		if a.Role(i) == "io" {
			healthy++
		}
	}
	fmt.Fprintf(bw, "# nuesm I/O placement: node index, coordinates, role, serving I/O node, Lee distance\n")
	fmt.Fprintf(bw, "roles v1 dims=%s method=%s t=%d io=%d\n", t, a.P.Method, a.P.T, healthy)
	for i := range a.Of {
		fmt.Fprintf(bw, "node %d %s %s %d %d\n", i, t.Label(i), a.Role(i), a.Of[i], a.Dist[i])
	}
	return bw.Flush()
}

// ReadRoles parses a roles file; errors name the line.
func ReadRoles(r io.Reader) (*Roles, error) {
	sc := bufio.NewScanner(r)
	var out *Roles
	line := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrRoles, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		s := sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		if out == nil {
			var err error
			if out, err = rolesHeader(f, bad); err != nil {
				return nil, err
			}
			continue
		}
		nr, err := out.nodeLine(f, bad)
		if err != nil {
			return nil, err
		}
		out.Nodes = append(out.Nodes, nr)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRoles, err)
	}
	if out == nil {
		return nil, fmt.Errorf("%w: empty", ErrRoles)
	}
	if len(out.Nodes) != out.Torus.N() {
		return nil, fmt.Errorf("%w: %d node lines for %d nodes", ErrRoles, len(out.Nodes), out.Torus.N())
	}
	for _, nr := range out.Nodes {
		if nr.Role == "compute" && (nr.IO < 0 || out.Nodes[nr.IO].Role != "io") {
			return nil, fmt.Errorf("%w: node %d is served by %d, which is no healthy I/O node", ErrRoles, nr.Node, nr.IO)
		}
	}
	return out, nil
}

// rolesHeader parses the header line "roles v1 dims=… method=… t=…";
// bad makes an error naming the line.
func rolesHeader(f []string, bad func(format string, args ...any) error) (*Roles, error) {
	if len(f) < 2 || f[0] != "roles" || f[1] != "v1" {
		return nil, bad("expected header \"roles v1 dims=…\"")
	}
	out := &Roles{}
	for _, kv := range f[2:] {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "dims":
			out.Torus, err = ParseDims(v)
		case "method":
			out.Method = v
		case "t":
			out.T, err = strconv.Atoi(v)
		}
		if err != nil {
			return nil, bad("%s: %v", kv, err)
		}
	}
	if out.Torus == nil {
		return nil, bad("header has no dims=")
	}
	return out, nil
}

// nodeLine parses "node INDEX (COORDS) ROLE IO DIST", the next node of r
// in index order; bad makes an error naming the line.
func (r *Roles) nodeLine(f []string, bad func(format string, args ...any) error) (NodeRole, error) {
	var nr NodeRole
	if len(f) != 6 || f[0] != "node" {
		return nr, bad("expected \"node INDEX (COORDS) ROLE IO DIST\"")
	}
	var err error
	if nr.Node, err = strconv.Atoi(f[1]); err != nil || nr.Node != len(r.Nodes) || nr.Node >= r.Torus.N() {
		return nr, bad("node index %q, expected %d", f[1], len(r.Nodes))
	}
	cs := strings.Trim(f[2], "()")
	for _, x := range strings.Split(cs, ",") {
		v, err := strconv.Atoi(x)
		if err != nil || v < 0 || len(nr.Coords) >= r.Torus.Dims() || v >= r.Torus.K[len(nr.Coords)] {
			return nr, bad("coordinates %q", f[2])
		}
		nr.Coords = append(nr.Coords, v)
	}
	if len(nr.Coords) != r.Torus.Dims() || r.Torus.Index(nr.Coords) != nr.Node {
		return nr, bad("coordinates %s do not match node %d of a %s torus", f[2], nr.Node, r.Torus)
	}
	nr.Role = f[3]
	if nr.Role != "io" && nr.Role != "compute" && nr.Role != "failed" {
		return nr, bad("role %q, expected io, compute or failed", nr.Role)
	}
	if nr.IO, err = strconv.Atoi(f[4]); err != nil || nr.IO < -1 || nr.IO >= r.Torus.N() {
		return nr, bad("I/O node %q", f[4])
	}
	if nr.Dist, err = strconv.Atoi(f[5]); err != nil || nr.Dist < 0 {
		return nr, bad("distance %q", f[5])
	}
	return nr, nil
}

// IONodes returns the healthy I/O nodes of a roles file.
func (r *Roles) IONodes() []int {
	var out []int
	for _, n := range r.Nodes {
		if n.Role == "io" {
			out = append(out, n.Node)
		}
	}
	return out
}
