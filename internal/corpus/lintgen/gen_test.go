package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsAreIndependent: lintgen is an independent implementation of
// the published rules, so no file of it imports this module. Besides the
// standard library it uses only libraries made for the job: RFC 8785, the
// Keccak-256 of EIP-55, base58 and a JSON Schema validator.
func TestImportsAreIndependent(t *testing.T) {
	allowed := map[string]bool{
		"github.com/gowebpki/jcs":                  true,
		"golang.org/x/crypto/sha3":                 true,
		"github.com/mr-tron/base58":                true,
		"github.com/santhosh-tekuri/jsonschema/v6": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/exchangerebel/payability") {
				t.Errorf("%s imports %s: lintgen must not import this module", name, path)
				continue
			}
			stdlib := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
			if !stdlib && !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}

// TestCommittedCorpusIsRegenerated is `go run ./internal/corpus/lintgen -check`.
func TestCommittedCorpusIsRegenerated(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := build(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "internal", "corpus", outFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error(outFile + " is stale: run go run ./internal/corpus/lintgen")
	}
}

// TestEveryPublishedRuleHasACase: the generator's cases reach every rule.
func TestEveryPublishedRuleHasACase(t *testing.T) {
	root, _ := moduleRoot()
	b, err := build(root)
	if err != nil {
		t.Fatal(err)
	}
	for id := range severity {
		if !bytes.Contains(b, []byte(`"rule": "`+id+`"`)) {
			t.Errorf("no case expects %s", id)
		}
	}
}
