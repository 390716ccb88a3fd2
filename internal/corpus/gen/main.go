// Command gen writes the published corpora (internal/corpus/*.v1.json) and
// internal/corpus/pins_gen.go, the pin of every embedded corpus file.
//
// It is an independent implementation of the criteria text: it builds the
// synthetic cases, reads the captured ones (internal/corpus/gen/captured/*.json),
// and computes every case's expected output with its own graders
// (grade_*.go), written from the criteria wording and docs/criteria-readings.md.
// It imports only the standard library and github.com/gowebpki/jcs — nothing
// of this module, so the graders under test never grade themselves.
//
//	go run ./internal/corpus/gen          # write the corpora and pins_gen.go
//	go run ./internal/corpus/gen -check   # exit 1 if the files on disk differ
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	check := flag.Bool("check", false, "regenerate in memory and exit non-zero if the files on disk differ")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "internal", "corpus")
	p, r, err := build(filepath.Join(dir, "gen", "captured"))
	if err != nil {
		return err
	}
	pins, err := corpusPins(dir, map[string][]byte{payabilityFile: p, railProbeFile: r})
	if err != nil {
		return err
	}
	pinsSrc, err := renderPins(pins)
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{{payabilityFile, p}, {railProbeFile, r}, {pinsFile, pinsSrc}}
	if check {
		stale := false
		for _, f := range files {
			have, err := os.ReadFile(filepath.Join(dir, f.name))
			if err != nil || !bytes.Equal(have, f.data) {
				fmt.Fprintf(os.Stderr, "gen: %s is not what gen writes; run go run ./internal/corpus/gen\n", f.name)
				stale = true
			}
		}
		if stale {
			return errors.New("corpus files are stale")
		}
		return nil
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod, so gen runs the same from the module root and from its own folder.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
