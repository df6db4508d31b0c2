package deploy

import (
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// stagedRead records a read back that found the switches holding exactly
// the staged LFT file: what OpenSM's file engine loads at every heavy
// sweep.
type stagedRead struct {
	logOff int64 // OpenSM's log size before the read
	file   stamp // the LFT file's size and time then
	pid    int   // OpenSM's process id then
}

// readStaged records that the last read (d.lastRead) equals the staged
// tables; off and pid are the log size and OpenSM's pid taken before it.
func (d *Deployer) readStaged(off int64, pid int) {
	d.staged = &stagedRead{logOff: off, file: stampOf(d.cfg.LFTsFile), pid: pid}
}

func (d *Deployer) pidOrZero() int {
	pid, _ := d.osm.pid()
	return pid
}

// knownHeld returns what the switches hold without reading them, bound
// to g, when that is known: the last read found them holding the staged
// LFT file, the file has not changed since, the same OpenSM runs, and
// its log since that read shows only sweeps in which the file engine
// configured the switches (it loads the file as it is, whatever the
// links: entries over a failed cable stay), no error and no fallback.
// Every switch of g must be one that read knows. Otherwise nil: the
// switches are read. A rollout after a cable failure thus plans at once
// from the state proven last; its first step's read back checks it.
func (d *Deployer) knownHeld(g *fabric.Graph) *lft.Routing {
	k := d.staged
	if k == nil || d.lastRead == nil || stampOf(d.cfg.LFTsFile) != k.file || k.file == (stamp{}) {
		return nil
	}
	if pid, err := d.osm.pid(); err != nil || pid != k.pid {
		return nil
	}
	lg, err := d.osm.readLog(k.logOff)
	if err != nil || logVerdict(lg) != nil || lg.end < k.logOff {
		return nil
	}
	known := KnownUnchanged(d.lastG, d.lastRead, d.lastG, d.lastRead)
	r := lft.New(g, "held")
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		guid := g.F.Nodes[g.Switches[s]].GUID
		for lid := 1; lid <= g.MaxLID(); lid++ {
			p, ok := known(guid, lid)
			if !ok {
				return nil
			}
			r.SetPort(s, lid, p)
		}
	}
	return r
}
