//go:build !unix

package slurm

import "os/exec"

// ownGroup leaves cmd as it is: without process groups only the program
// itself is killed on cancellation.
func ownGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) error { return nil }
