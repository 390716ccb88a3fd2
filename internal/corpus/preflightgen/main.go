// Command preflightgen writes the x402-preflight corpus
// (internal/corpus/preflight-corpus.v1.json): captures, a lint result given
// as data, probe answers and the decision each case must get.
//
// It is an independent implementation of the x402-preflight/v1 document: it
// imports only the standard library and github.com/gowebpki/jcs — nothing of
// this module — so the decision under test never grades itself.
//
//	go run ./internal/corpus/preflightgen          # write the file
//	go run ./internal/corpus/preflightgen -check   # exit 1 if the file on disk differs
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
	check := flag.Bool("check", false, "regenerate in memory and exit non-zero if the file on disk differs")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "preflightgen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	path := filepath.Join(root, "internal", "corpus", corpusFile)
	data, err := build(root)
	if err != nil {
		return err
	}
	if check {
		have, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(have, data) {
			return errors.New(corpusFile + " is not what preflightgen writes; run go run ./internal/corpus/preflightgen")
		}
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}

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
