// Package slurm reads what SLURM knows about running jobs and reduces it to
// what scheduling-aware routing (SAR; seed 001 §3) needs: the running jobs
// whose hosts hang off two or more switches.
//
// It holds five things:
//
//   - Hostlist expressions: Expand ("node[001-004,010]" → node001 … node010),
//     Compress and CompressSorted (the inverse, as scontrol show hostlist and
//     hostlistsorted print it). The grammar is SLURM 22.05's; see Expand.
//   - Job sources: Squeue runs squeue(1) (no shell, bounded by a context,
//     killed with its whole process group), REST asks slurmrestd's
//     /slurm/v0.0.38/jobs over TCP or a unix socket (redirects not
//     followed, a token over plain http:// only when allowed). Both bound
//     what they read (MaxBytes) and implement Source, returning the running
//     jobs as Job values (RUNNING, and CONFIGURING while a PrologSlurmctld
//     runs).
//   - The host → fabric mapping: HostMap maps a SLURM host name to the CA
//     ports (Endpoints) whose node description starts with that name
//     ("stage114 mlx4_0" → stage114), with an override file for the rest.
//   - Jobs files: ParseJobsFile reads "job-id hostlist" lines, the jobs
//     `nuesm route --jobs FILE` routes for.
//   - The filter: Filter keeps running jobs that span at least two switches,
//     dropping short jobs and debug partitions as the SAR filter did, and
//     reports hosts it could not map instead of dropping them silently.
//
// The package imports the standard library only. It does not know the
// fabric package: callers describe the fabric's CA ports as a slice of
// Endpoint (index i = fabric.Graph.Terms[i]), which keeps the filter's
// output directly usable as routing.Job.Terms (see the package example).
//
// Nothing here keeps mutable global state; Squeue, REST and HostMap values
// are safe for concurrent use once built.
package slurm
