package flitsim

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/nuesm/nuesm/fabric"
)

// linkLoadHeader are the columns of WriteLinkLoads.
var linkLoadHeader = []string{"link", "kind", "from", "from_port", "to", "to_port", "flits", "utilisation"}

// WriteLinkLoads writes the window's load of every link of r (a result of
// a run on n) as CSV, one row per link: its id, kind (channel, inject,
// eject), the switch or node it leaves and the port, the one it enters,
// the flits it carried and its utilisation (fraction of its bandwidth).
// ReadLinkLoads reads the channel rows back (nuesm dot --loads).
func (n *Network) WriteLinkLoads(w io.Writer, r *Result) error {
	if len(r.Links) != int(n.nLinks) {
		return fmt.Errorf("flitsim: a result of %d links for a network of %d: %w", len(r.Links), n.nLinks, ErrConfig)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(linkLoadHeader); err != nil {
		return err
	}
	end := func(l, sw int32, port uint8) (string, string) {
		if sw < 0 {
			return n.NodeName(n.lkNode[l]), "1"
		}
		return n.g.SwitchName(sw), strconv.Itoa(int(port))
	}
	for _, ls := range r.Links {
		l := ls.Link
		from, fp := end(l, n.lkSrcSw[l], n.lkSrcPort[l])
		to, tp := end(l, n.lkDstSw[l], n.lkDstPort[l])
		if err := cw.Write([]string{strconv.Itoa(int(l)), ls.Kind, from, fp, to, tp, strconv.FormatInt(ls.Flits, 10),
			strconv.FormatFloat(ls.Utilisation, 'g', 6, 64)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadLinkLoads reads a WriteLinkLoads file and returns the utilisation of
// every channel of g (by switch name and port; channels the file does not
// list get 0). name labels the errors.
func ReadLinkLoads(rd io.Reader, name string, g *fabric.Graph) ([]float64, error) {
	byName := map[string]int32{}
	for s := range g.Switches {
		byName[g.SwitchName(int32(s))] = int32(s)
	}
	cr := csv.NewReader(rd)
	cr.FieldsPerRecord = len(linkLoadHeader)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i, h := range linkLoadHeader {
		if head[i] != h {
			return nil, fmt.Errorf("%s:1: column %d is %q, expected %q (a flitsim run --link-loads file)", name, i+1, head[i], h)
		}
	}
	loads := make([]float64, g.NumChannels())
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return loads, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if rec[1] != Channel.String() {
			continue
		}
		sw, ok := byName[rec[2]]
		port, perr := strconv.Atoi(rec[3])
		u, uerr := strconv.ParseFloat(rec[7], 64)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s:%d: switch %q is not in the fabric", name, line, rec[2])
		case perr != nil || port < 0 || port > 255 || g.ChannelAt(sw, uint8(port)) < 0:
			return nil, fmt.Errorf("%s:%d: switch %q has no cable on port %q", name, line, rec[2], rec[3])
		case uerr != nil || u < 0:
			return nil, fmt.Errorf("%s:%d: utilisation %q, expected a number >= 0", name, line, rec[7])
		}
		loads[g.ChannelAt(sw, uint8(port))] = u
	}
}
