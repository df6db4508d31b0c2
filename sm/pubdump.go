package sm

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
)

// publishedDump is what the daemon keeps of a published generation's
// dump (lft.FabricFile): enough to tell whether a new dump describes the
// same fabric (publishedSays; after a restart, repair) without reading
// and parsing the published file again for every changed dump.
type publishedDump struct {
	gen     int
	content *[32]byte     // ibnetdiscover.ContentHash of its text; nil: unreadable
	g       *fabric.Graph // its fabric; nil: unreadable or does not load
}

// keepDump records the dump of generation gen, just published with text
// (its fabric: g).
func (s *Server) keepDump(gen int, text []byte, g *fabric.Graph) {
	sum := ibnetdiscover.ContentHash(text)
	s.pubDump.Store(&publishedDump{gen: gen, content: &sum, g: g})
}

// publishedDump returns the published generation's dump, read and
// loaded once per generation when this daemon did not publish it (a
// restart); nil when nothing is published. A dump that cannot be read
// or loaded is logged once: its tables are then kept only for the text
// they were published for.
func (s *Server) publishedDump() *publishedDump {
	p := s.Status().Published
	if p == nil {
		return nil
	}
	if d := s.pubDump.Load(); d != nil && d.gen == p.Generation {
		return d
	}
	d := &publishedDump{gen: p.Generation}
	path := s.pub.currentPath(lft.FabricFile)
	b, err := ibnetdiscover.ReadFileLimited(path, s.cfg.MaxDumpBytes)
	if err == nil {
		sum := ibnetdiscover.ContentHash(b)
		d.content = &sum
		var l *ibnetdiscover.Loaded
		if l, err = ibnetdiscover.Load(b, path); err == nil {
			d.g = l.Graph
		}
	}
	if err != nil {
		s.log.Warn("published dump unreadable; the published tables are kept only for the text they were published for",
			"generation", p.Generation, "err", err)
	}
	s.pubDump.Store(d)
	return d
}

// publishedGraph is the fabric the published tables were last verified
// for: the last reroute's (pubGraph) or, after a restart until the first
// reroute that publishes or keeps tables, the published dump's when the
// tables were published under this routing configuration (nil: none, or
// the dump cannot be read).
func (s *Server) publishedGraph() *fabric.Graph {
	if g := s.pubGraph.Load(); g != nil {
		return g
	}
	p := s.Status().Published
	if p == nil || p.RoutingConfig != s.cfg.routingConfig() {
		return nil
	}
	if d := s.publishedDump(); d != nil {
		return d.g
	}
	return nil
}

// routingConfig names what the tables depend on besides the fabric and
// the jobs: the engine chain, its parameters, the VL limit and the seed.
func (c Config) routingConfig() string {
	var b strings.Builder
	fmt.Fprintf(&b, "engines=%q max_vls=%d seed=%d", c.Engines, c.MaxVLs, c.Seed)
	for _, k := range slices.Sorted(maps.Keys(c.Params)) {
		fmt.Fprintf(&b, " %s=%q", k, c.Params[k])
	}
	return b.String()
}
