package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeDist writes a dist/ as GoReleaser lays it out: metadata.json and one
// archive per platform holding README.md and both binaries, each the text
// "NAME of KEY" (fakeBinary).
func fakeDist(t *testing.T, version string, sel []platform) string {
	t.Helper()
	return fakeDistOf(t, version, sel, platform.Binaries)
}

func fakeBinary(p platform, name string) string { return name + " of " + p.Key() }

// fakeDistOf is fakeDist with the binaries each archive holds.
func fakeDistOf(t *testing.T, version string, sel []platform, binaries func(platform) []string) string {
	t.Helper()
	d := t.TempDir()
	meta, _ := json.Marshal(map[string]string{"project_name": "payability", "version": version})
	if err := os.WriteFile(filepath.Join(d, "metadata.json"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range sel {
		var buf bytes.Buffer
		names := append([]string{"README.md"}, binaries(p)...)
		if p.GOOS == "windows" {
			zw := zip.NewWriter(&buf)
			for _, n := range names {
				w, _ := zw.Create(n)
				w.Write([]byte(fakeBinary(p, n)))
			}
			zw.Close()
		} else {
			gz := gzip.NewWriter(&buf)
			tw := tar.NewWriter(gz)
			for _, n := range names {
				content := []byte(fakeBinary(p, n))
				tw.WriteHeader(&tar.Header{Name: n, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg})
				tw.Write(content)
			}
			tw.Close()
			gz.Close()
		}
		if err := os.WriteFile(filepath.Join(d, p.Archive(version)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestGenerate(t *testing.T) {
	const version = "0.0.0-SNAPSHOT-abc1234"
	d := fakeDist(t, version, platforms)
	out := filepath.Join(t.TempDir(), "npm")
	if err := generate(d, out, "../..", platforms); err != nil {
		t.Fatal(err)
	}
	license, _ := os.ReadFile("../../LICENSE")
	var main mainManifest
	readJSON(t, filepath.Join(out, "payability", "package.json"), &main)
	if main.Name != "payability" || main.Version != version || main.License != "Apache-2.0" || main.MCPName != "io.github.exchangerebel/payability" ||
		main.Bin["payability"] != "bin/payability.js" || len(main.OptionalDependencies) != 6 {
		t.Errorf("payability/package.json: %+v", main)
	}
	if fi, err := os.Stat(filepath.Join(out, "payability", "bin", "payability.js")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("the launcher is missing or not executable: %v", err)
	}
	for _, p := range platforms {
		if main.OptionalDependencies[p.Package()] != version {
			t.Errorf("optionalDependencies[%s] = %q, want %q", p.Package(), main.OptionalDependencies[p.Package()], version)
		}
		var m platformManifest
		readJSON(t, filepath.Join(out, p.Key(), "package.json"), &m)
		if m.Name != p.Package() || m.Version != version || len(m.OS) != 1 || m.OS[0] != p.OS || len(m.CPU) != 1 || m.CPU[0] != p.CPU {
			t.Errorf("%s/package.json: %+v", p.Key(), m)
		}
		// bin/ holds the quick build the launcher runs and the full build
		// beside it, each the archive's, and nothing else.
		want := []string{"payability", "payabilityd"}
		if p.GOOS == "windows" {
			want = []string{"payability.exe", "payabilityd.exe"}
		}
		if got := p.Binaries(); !slices.Equal(got, want) {
			t.Fatalf("%s: binaries %v, want %v", p.Key(), got, want)
		}
		ents, _ := os.ReadDir(filepath.Join(out, p.Key(), "bin"))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s/bin holds %v, want %v", p.Key(), names, want)
		}
		for _, name := range want {
			bin := filepath.Join(out, p.Key(), "bin", name)
			b, err := os.ReadFile(bin)
			if err != nil || string(b) != fakeBinary(p, name) {
				t.Errorf("%s: %s is %q %v, want the archive's", p.Key(), name, b, err)
			}
			if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
				t.Errorf("%s: %s is not executable", p.Key(), name)
			}
		}
		if l, _ := os.ReadFile(filepath.Join(out, p.Key(), "LICENSE")); !bytes.Equal(l, license) {
			t.Errorf("%s: LICENSE is not the repository's", p.Key())
		}
	}
	// The output directory is never overwritten.
	if err := generate(d, out, "../..", platforms); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("second generate: %v", err)
	}
}

func TestGenerateRefuses(t *testing.T) {
	one, _ := selectPlatforms("linux-x64")
	for _, c := range []struct {
		name, version string
		dist          []platform
		sel           []platform
		want          string
	}{
		{"an archive missing", "1.2.3", one, platforms, "payability_1.2.3_linux_arm64.tar.gz: open"},
		{"not semver", "v1.2", platforms, platforms, "not an npm version"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := fakeDist(t, c.version, c.dist)
			err := generate(d, filepath.Join(t.TempDir(), "npm"), "../..", c.sel)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
	// An archive without one of the two binaries (a release built before
	// payabilityd) is refused, naming the missing file.
	for _, p := range platforms {
		for missing, keep := range map[string]string{p.FullBinary(): p.Binary(), p.Binary(): p.FullBinary()} {
			d := fakeDistOf(t, "1.2.3", []platform{p}, func(platform) []string { return []string{keep} })
			want := p.Archive("1.2.3") + " holds no " + missing
			if err := generate(d, filepath.Join(t.TempDir(), "npm"), "../..", []platform{p}); err == nil || err.Error() != want {
				t.Errorf("%s without %s: error %v, want %q", p.Key(), missing, err, want)
			}
		}
	}
	if _, err := selectPlatforms("linux-x64,plan9-x64"); err == nil {
		t.Error("an unknown platform was accepted")
	}
	// -only limits the main package's optional dependencies to what was written.
	d := fakeDist(t, "1.2.3", one)
	out := filepath.Join(t.TempDir(), "npm")
	if err := generate(d, out, "../..", one); err != nil {
		t.Fatal(err)
	}
	var main mainManifest
	readJSON(t, filepath.Join(out, "payability", "package.json"), &main)
	if len(main.OptionalDependencies) != 1 || main.OptionalDependencies["@payability/linux-x64"] != "1.2.3" {
		t.Errorf("optionalDependencies %v", main.OptionalDependencies)
	}
}
