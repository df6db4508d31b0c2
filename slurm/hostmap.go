package slurm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Endpoint is one CA (or router) port of the fabric as the host mapping
// and the filter see it. Callers build the list from their fabric model;
// with nuesm's, Endpoint i describes fabric.Graph.Terms[i], so endpoint
// indices are routing.Job.Terms.
type Endpoint struct {
	Desc     string // node description of the port's CA, e.g. "node0001 HCA-1"
	NodeGUID uint64 // the CA's node GUID
	PortGUID uint64 // the port's GUID (0 = unknown)
	Switch   int32  // the switch the port is cabled to, any stable id; < 0 = none
}

// DescHost returns the host a CA node description names: its first
// white-space-separated word ("stage114 mlx4_0" → "stage114", "node0001
// HCA-1" → "node0001"), or "" for a blank description.
func DescHost(desc string) string {
	f := strings.Fields(desc)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// ErrHostMap is wrapped by the errors of ParseHostMap.
var ErrHostMap = errors.New("invalid host map")

// HostOverride is one line of a host map file: SLURM host Host owns the
// CA (or CA port) named by GUID, or the CAs whose description is Desc.
type HostOverride struct {
	Host string
	GUID uint64 // a node GUID (all its ports) or a port GUID; 0 when Desc is set
	Desc string // a whole node description, matched exactly
	File string // where the line came from, for messages
	Line int
}

func (o HostOverride) String() string {
	target := fmt.Sprintf("%q", o.Desc)
	if o.GUID != 0 {
		target = fmt.Sprintf("0x%016x", o.GUID)
	}
	return fmt.Sprintf("%s:%d: %s %s", o.File, o.Line, o.Host, target)
}

// LoadHostMap reads a host map file; see ParseHostMap.
func LoadHostMap(path string) ([]HostOverride, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hostmap: %w", err)
	}
	defer f.Close()
	return ParseHostMap(f, path)
}

// ParseHostMap reads a host map: overrides of the description-derived
// mapping, one per line, name used in messages:
//
//	# SLURM host   CA: node GUID, port GUID, or node description
//	stage114       0x0002c903000a1b2c
//	stage115       "MT4099 ConnectX3 Mellanox Technologies"
//	login1         login1-ib mlx5_0        # the rest of the line
//
// A line holds a host name (no white space, ',', '[' or ']') and, after
// white space, the CA it owns: a GUID written 0x followed by 1 to 16 hex
// digits (a node GUID selects all ports of that CA, a port GUID one
// port), or a node description, matched exactly: the rest of the line, or
// a double-quoted string. '#' starts a comment at the start of a line or
// after white space outside quotes. Several lines for one host give it
// several CAs. Errors read "hostmap FILE:LINE: …" and wrap ErrHostMap.
func ParseHostMap(r io.Reader, name string) ([]HostOverride, error) {
	var out []HostOverride
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		o, ok, err := parseHostMapLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("hostmap %s:%d: %w: %w", name, ln, ErrHostMap, err)
		}
		if ok {
			o.File, o.Line = name, ln
			out = append(out, o)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("hostmap %s: %w", name, err)
	}
	return out, nil
}

func parseHostMapLine(line string) (HostOverride, bool, error) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return HostOverride{}, false, nil
	}
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return HostOverride{}, false, fmt.Errorf("host %q without a CA (want: host GUID-or-description)", line)
	}
	o := HostOverride{Host: line[:i]}
	if j := strings.IndexAny(o.Host, ",[]\""); j >= 0 {
		return HostOverride{}, false, fmt.Errorf("host %q: %q cannot be part of a SLURM host name", o.Host, o.Host[j])
	}
	rest := strings.TrimSpace(line[i:])
	if rest == "" || rest[0] == '#' {
		return HostOverride{}, false, fmt.Errorf("host %q without a CA", o.Host)
	}
	if rest[0] == '"' {
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return HostOverride{}, false, errors.New("unterminated quoted description")
		}
		o.Desc = rest[1 : 1+end]
		if tail := strings.TrimSpace(rest[2+end:]); tail != "" && tail[0] != '#' {
			return HostOverride{}, false, fmt.Errorf("text %q after the quoted description", tail)
		}
		if strings.TrimSpace(o.Desc) == "" {
			return HostOverride{}, false, errors.New("empty description")
		}
		return o, true, nil
	}
	for _, sep := range []string{" #", "\t#"} {
		if k := strings.Index(rest, sep); k >= 0 {
			rest = strings.TrimSpace(rest[:k])
		}
	}
	if len(rest) >= 2 && (rest[:2] == "0x" || rest[:2] == "0X") && !strings.ContainsAny(rest, " \t") {
		v, err := strconv.ParseUint(rest[2:], 16, 64)
		if err != nil || v == 0 {
			return HostOverride{}, false, fmt.Errorf("GUID %q: want 0x and 1 to 16 hex digits, not zero", rest)
		}
		o.GUID = v
		return o, true, nil
	}
	o.Desc = rest
	return o, true, nil
}

// HostMap maps SLURM host names to fabric endpoints: by default host h
// owns every endpoint whose CA description starts with the word h
// (DescHost); overrides then take CAs away from that and give them to
// the hosts they name, and a host named by an override owns exactly what
// its overrides name. A HostMap is read-only after NewHostMap and safe for
// concurrent use.
type HostMap struct {
	eps        []Endpoint
	hosts      map[string][]int32
	unresolved []HostOverride
}

// NewHostMap builds the mapping for endpoints (index = endpoint id) with
// the given overrides (nil for none). Overrides that match no endpoint
// are not an error (a CA may be down or cabled elsewhere today); they are
// listed by Unresolved. The map keeps eps; do not modify it afterwards.
func NewHostMap(eps []Endpoint, overrides []HostOverride) *HostMap {
	m := &HostMap{eps: eps, hosts: make(map[string][]int32)}
	byNode := make(map[uint64][]int32)
	byPort := make(map[uint64]int32)
	byDesc := make(map[string][]int32)
	for i, e := range eps {
		byNode[e.NodeGUID] = append(byNode[e.NodeGUID], int32(i))
		if e.PortGUID != 0 {
			byPort[e.PortGUID] = int32(i)
		}
		byDesc[e.Desc] = append(byDesc[e.Desc], int32(i))
	}
	claimed := make([]bool, len(eps))
	given := make(map[string][]int32)
	for _, o := range overrides {
		var ids []int32
		switch {
		case o.GUID != 0:
			if p, ok := byPort[o.GUID]; ok {
				ids = []int32{p}
			} else {
				ids = byNode[o.GUID]
			}
		default:
			ids = byDesc[o.Desc]
		}
		if len(ids) == 0 {
			m.unresolved = append(m.unresolved, o)
		}
		if _, ok := given[o.Host]; !ok {
			given[o.Host] = nil // named by an override, even if unresolved
		}
		for _, id := range ids {
			claimed[id] = true
			given[o.Host] = append(given[o.Host], id)
		}
	}
	for i, e := range eps {
		h := DescHost(e.Desc)
		if h == "" || claimed[i] {
			continue
		}
		if _, ok := given[h]; ok {
			continue
		}
		m.hosts[h] = append(m.hosts[h], int32(i))
	}
	for h, ids := range given {
		slices.Sort(ids)
		ids = slices.Compact(ids)
		if len(ids) > 0 {
			m.hosts[h] = ids
		}
	}
	return m
}

// Lookup returns the endpoints of host in increasing order, nil if the
// host is unknown. The slice belongs to the map: do not modify it.
func (m *HostMap) Lookup(host string) []int32 { return m.hosts[host] }

// Endpoint returns endpoint id.
func (m *HostMap) Endpoint(id int32) Endpoint { return m.eps[id] }

// NumEndpoints returns the number of endpoints the map was built for.
func (m *HostMap) NumEndpoints() int { return len(m.eps) }

// Hosts returns the known host names, sorted.
func (m *HostMap) Hosts() []string {
	out := make([]string, 0, len(m.hosts))
	for h := range m.hosts {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// Unresolved returns the overrides that matched no endpoint, in file
// order.
func (m *HostMap) Unresolved() []HostOverride { return slices.Clone(m.unresolved) }
