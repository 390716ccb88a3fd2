package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/exchangerebel/payability/internal/buildinfo"
)

const (
	schemaFile   = "testdata/server.schema.2025-12-11.json"
	schemaSHA256 = "2e1e2dc758185bfc91023df4e5ace0e1c1bdb7b7b3d6614bb9ac6b9e9a9c2f68"
	schemaURL    = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
)

func registrySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != schemaSHA256 {
		t.Fatalf("%s is not the vendored schema (testdata/README.md)", schemaFile)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, raw []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

type serverJSON struct {
	Schema   string `json:"$schema"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Packages []struct {
		RegistryType     string                `json:"registryType"`
		Identifier       string                `json:"identifier"`
		Version          string                `json:"version"`
		Transport        struct{ Type string } `json:"transport"`
		PackageArguments []struct {
			Type, Value string
		} `json:"packageArguments"`
	} `json:"packages"`
	Meta map[string]map[string]string `json:"_meta"`
}

// server.json validates against the registry's published schema, names the
// npm package and the OCI image, both started as `payability mcp` over
// stdio, at the version of this source, under the Apache-2.0 licence.
func TestServerJSON(t *testing.T) {
	raw := repoFile(t, "server.json")
	if err := validate(t, registrySchema(t), raw); err != nil {
		t.Fatalf("server.json does not validate against the 2025-12-11 schema: %v", err)
	}
	var s serverJSON
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Schema != schemaURL || s.Version != buildinfo.Version {
		t.Errorf("$schema %q version %q, want %q and buildinfo.Version %q", s.Schema, s.Version, schemaURL, buildinfo.Version)
	}
	// The npm package proves its entry with mcpName (tools/npm).
	if gen := string(repoFile(t, "tools/npm/main.go")); !strings.Contains(gen, `mcpName = "`+s.Name+`"`) {
		t.Errorf("the npm package's mcpName is not %s", s.Name)
	}
	want := map[string]string{"npm": "payability", "oci": "ghcr.io/exchangerebel/payability:" + buildinfo.Version}
	if len(s.Packages) != len(want) {
		t.Fatalf("%d packages, want npm and oci", len(s.Packages))
	}
	for _, p := range s.Packages {
		if want[p.RegistryType] != p.Identifier {
			t.Errorf("%s package %q, want %q", p.RegistryType, p.Identifier, want[p.RegistryType])
		}
		if p.RegistryType == "npm" && p.Version != buildinfo.Version {
			t.Errorf("npm version %q, want %q", p.Version, buildinfo.Version)
		}
		if p.Transport.Type != "stdio" || len(p.PackageArguments) != 1 || p.PackageArguments[0].Type != "positional" || p.PackageArguments[0].Value != "mcp" {
			t.Errorf("%s: transport %q arguments %+v, want stdio and the one argument mcp", p.RegistryType, p.Transport.Type, p.PackageArguments)
		}
	}
	if l := s.Meta["io.modelcontextprotocol.registry/publisher-provided"]["license"]; l != "Apache-2.0" {
		t.Errorf("license %q", l)
	}
}

// The schema check has teeth: documents the registry refuses fail it.
func TestServerJSONSchemaRefuses(t *testing.T) {
	s := registrySchema(t)
	good := repoFile(t, "server.json")
	for name, edit := range map[string][2]string{
		"package version latest": {`"version": "0.1.0",
      "runtimeHint": "npx"`, `"version": "latest",
      "runtimeHint": "npx"`},
		"a name without a slash": {`"io.github.exchangerebel/payability"`, `"payability"`},
		"a description over 100": {`"Before paying`, `"` + strings.Repeat("x", 100) + ` Before paying`},
		"an unknown transport":   {`"type": "stdio"`, `"type": "carrier-pigeon"`},
		"no identifier":          {`"identifier": "payability",`, ``},
	} {
		bad := bytes.Replace(good, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(bad, good) {
			t.Fatalf("%s: the edit does not apply", name)
		}
		if err := validate(t, s, bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
