// Command simstudy runs the flit-level simulations of the seed
// reproductions and writes their report
// sections (Markdown), CSV data and SVG plots:
//
//	simstudy io -o DIR -md FILE        seed 003: I/O placement, router priority, I/O failures
//	simstudy novacube -o DIR -md FILE  seed 004: pora tables on NovaCube vs DOR on the torus
//	simstudy rsi -o DIR -md FILE       seed 000: RSI hop counts and latency–load, minimal routing
//	simstudy dragonfly -o DIR -md FILE seed 002: the paper's Dragonfly (Table III), MIN, VAL, conditional, UGAL
//
// -quick shrinks every study (for tests). The bench/seeds/*/sim.sh scripts
// call it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "simstudy:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: simstudy io|novacube|rsi|dragonfly -o DIR [-md FILE] [-workers N] [-quick]")
	}
	study := args[0]
	fs := flag.NewFlagSet("simstudy "+study, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("o", "", "directory for CSV and SVG files")
	mdPath := fs.String("md", "", "Markdown report (default: stdout)")
	workers := fs.Int("workers", 0, "parallel simulations (0 = GOMAXPROCS)")
	quick := fs.Bool("quick", false, "small sizes and few loads (tests)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-o DIR is required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	var md bytes.Buffer
	var err error
	switch study {
	case "io":
		s := fullIO()
		if *quick {
			s = quickIO()
		}
		s.workers = *workers
		err = runIO(ctx, s, *dir, &md)
	case "novacube":
		s := fullNova()
		if *quick {
			s = quickNova()
		}
		s.workers = *workers
		err = runNova(ctx, s, *dir, &md)
	case "rsi":
		s := fullRSI()
		if *quick {
			s = quickRSI()
		}
		s.workers = *workers
		err = runRSI(ctx, s, *dir, &md)
	case "dragonfly":
		s := fullDragonfly()
		if *quick {
			s = quickDragonfly()
		}
		s.workers = *workers
		err = runDragonfly(ctx, s, *dir, &md)
	default:
		return fmt.Errorf("unknown study %q, expected io, novacube, rsi or dragonfly", study)
	}
	if err != nil {
		return err
	}
	if *mdPath == "" {
		_, err = stdout.Write(md.Bytes())
		return err
	}
	return os.WriteFile(filepath.Clean(*mdPath), md.Bytes(), 0o644)
}
