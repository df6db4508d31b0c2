// Package sm is the nuesm daemon ("nuesm serve"): it watches a fabric
// dump (and optionally SLURM's running jobs), reroutes when either
// changes, and publishes verified tables atomically.
//
// Each reroute runs parse → route (engine chain with explicit fallback) →
// verify → diff against the published tables → update plan → publish. A
// failure at any step keeps the last good tables published and shows in
// the status, the logs and the metrics. Triggers arriving during a reroute
// coalesce into one more reroute; a reroute that changes nothing publishes
// nothing.
//
// Publishing writes every file of a new generation into a fresh directory
// (each file fsynced), then swaps the symlink "current" to it with one
// rename: readers (OpenSM's file engine with -U <out>/current/opensm-lfts.dump,
// people, scripts) always see one complete, verified set, even if the
// daemon is killed half way. Every generation keeps its LFTs as nuesm.lft;
// OpenSM's dump, nearly all of the bytes, is written only where OpenSM
// reads it (the current generation, per opensm_dump) and a fabric that did
// not change is linked from the generation before. The published status survives restarts, and
// a restart does not republish unchanged tables.
//
// Every reroute runs in a goroutine of its own under reroute_timeout; the
// Run loop starts them one at a time, watches the dump and the published
// files between them and stops at once when asked. SLURM is asked by a
// poller of its own (jobs.go); reroutes take its last answer and never
// wait for it. HTTP handlers, the poller and the reroutes share an
// immutable status snapshot, replaced under a mutex.
package sm
