// Command npm writes payability's npm packages from a release's dist/
// (GoReleaser's output), the way esbuild ships a native binary: a small
// `payability` package whose launcher runs the binary of the platform, and
// one package per platform (@payability/linux-x64, …), each holding that
// platform's two binaries taken from the release archive (payability, the
// quick build the launcher runs, and payabilityd, the full build it hands
// serve, monitor, mcp, ledger and store to), selected by npm through `os`
// and `cpu` as an optional dependency of `payability`.
//
//	go run ./tools/npm -dist dist -out npm-out
//
// writes npm-out/payability/ and npm-out/<platform>-<arch>/, ready for
// `npm pack` or `npm publish` (docs/release.md). -only limits the platforms
// (a dist of one target); the main package then lists only those.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

//go:embed launcher.js
var launcher []byte

// platform is one npm platform package and the release archive it comes from.
type platform struct {
	GOOS, GOARCH string // the release's target
	OS, CPU      string // npm's process.platform and process.arch
}

// Key is the package's suffix: linux-x64, win32-arm64, …
func (p platform) Key() string { return p.OS + "-" + p.CPU }

// Package is the npm name of the platform's package.
func (p platform) Package() string { return "@payability/" + p.Key() }

// Binary is the quick build's file name in the archive and in the package:
// the executable the launcher runs.
func (p platform) Binary() string { return p.exe("payability") }

// FullBinary is the full build's file name in the archive and in the
// package, beside Binary, where the quick build looks for it.
func (p platform) FullBinary() string { return p.exe("payabilityd") }

// Binaries are the files a platform package takes from the archive into bin/.
func (p platform) Binaries() []string { return []string{p.Binary(), p.FullBinary()} }

func (p platform) exe(name string) string {
	if p.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// Archive is the release archive's file name (.goreleaser.yaml name_template).
func (p platform) Archive(version string) string {
	ext := ".tar.gz"
	if p.GOOS == "windows" {
		ext = ".zip"
	}
	return "payability_" + version + "_" + p.GOOS + "_" + p.GOARCH + ext
}

// platforms are the release's six targets in npm's names.
var platforms = []platform{
	{"linux", "amd64", "linux", "x64"},
	{"linux", "arm64", "linux", "arm64"},
	{"darwin", "amd64", "darwin", "x64"},
	{"darwin", "arm64", "darwin", "arm64"},
	{"windows", "amd64", "win32", "x64"},
	{"windows", "arm64", "win32", "arm64"},
}

const (
	repoURL = "git+https://github.com/exchangerebel/payability.git"
	license = "Apache-2.0"
	// mcpName ties the package to its MCP registry entry (server.json's name).
	mcpName = "io.github.exchangerebel/payability"
)

// semver is npm's version grammar (what `npm publish` accepts), without build metadata.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

type repository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// platformManifest is a platform package's package.json.
type platformManifest struct {
	Name            string     `json:"name"`
	Version         string     `json:"version"`
	Description     string     `json:"description"`
	License         string     `json:"license"`
	Repository      repository `json:"repository"`
	OS              []string   `json:"os"`
	CPU             []string   `json:"cpu"`
	Files           []string   `json:"files"`
	PreferUnplugged bool       `json:"preferUnplugged"`
}

// mainManifest is the payability package's package.json.
type mainManifest struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	License              string            `json:"license"`
	Repository           repository        `json:"repository"`
	Homepage             string            `json:"homepage"`
	Keywords             []string          `json:"keywords"`
	MCPName              string            `json:"mcpName"`
	Bin                  map[string]string `json:"bin"`
	Files                []string          `json:"files"`
	Engines              map[string]string `json:"engines"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

func main() {
	fs := flag.NewFlagSet("npm", flag.ContinueOnError)
	dist := fs.String("dist", "dist", "the release's `DIR` (GoReleaser's dist: metadata.json and the archives)")
	out := fs.String("out", "", "write the packages under `DIR` (must not exist)")
	root := fs.String("root", ".", "the repository `DIR` (its LICENSE goes into every package)")
	only := fs.String("only", "", "comma-separated `PLATFORMS` (linux-x64,…); default all six")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *out == "" || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./tools/npm -dist DIR -out DIR [-only PLATFORMS]")
		os.Exit(2)
	}
	sel, err := selectPlatforms(*only)
	if err == nil {
		err = generate(*dist, *out, *root, sel)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "npm:", err)
		os.Exit(1)
	}
}

func selectPlatforms(only string) ([]platform, error) {
	if only == "" {
		return platforms, nil
	}
	var sel []platform
	for _, k := range strings.Split(only, ",") {
		i := slices.IndexFunc(platforms, func(p platform) bool { return p.Key() == k })
		if i < 0 {
			return nil, fmt.Errorf("-only: unknown platform %q", k)
		}
		sel = append(sel, platforms[i])
	}
	return sel, nil
}

// releaseVersion reads the version GoReleaser recorded in dist/metadata.json.
func releaseVersion(dist string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	if err != nil {
		return "", err
	}
	var m struct {
		ProjectName string `json:"project_name"`
		Version     string `json:"version"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("metadata.json: %v", err)
	}
	if m.ProjectName != "payability" {
		return "", errors.New("metadata.json: not payability's release")
	}
	if !semver.MatchString(m.Version) {
		return "", errors.New("metadata.json: the version is not an npm version (semver)")
	}
	return m.Version, nil
}

func generate(dist, out, root string, sel []platform) error {
	version, err := releaseVersion(dist)
	if err != nil {
		return err
	}
	licenseText, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists", out)
	}
	optional := map[string]string{}
	for _, p := range sel {
		bins, err := binariesOf(filepath.Join(dist, p.Archive(version)), p.Binaries())
		if err != nil {
			return err
		}
		dir := filepath.Join(out, p.Key())
		m := platformManifest{
			Name: p.Package(), Version: version,
			Description: "The " + p.Key() + " binaries of payability (installed by the payability package).",
			License:     license, Repository: repository{"git", repoURL},
			OS: []string{p.OS}, CPU: []string{p.CPU}, Files: []string{"bin/"}, PreferUnplugged: true,
		}
		readme := "# " + p.Package() + "\n\nThe " + p.Key() + " binaries of [payability](https://github.com/exchangerebel/payability), " +
			"`" + p.Binary() + "` and `" + p.FullBinary() + "` (the full build it hands serve, monitor and mcp to), " +
			"from its release archive `" + p.Archive(version) + "`. Install `payability` instead; npm picks this package on " + p.Key() + ".\n"
		if err := writePackage(dir, m, readme, licenseText); err != nil {
			return err
		}
		for _, name := range p.Binaries() {
			if err := writeFile(filepath.Join(dir, "bin", name), bins[name], 0o755); err != nil {
				return err
			}
		}
		optional[p.Package()] = version
	}
	m := mainManifest{
		Name: "payability", Version: version,
		Description: "Before paying an x402 endpoint: GO, HOLD or STOP, bound to the exact terms; lint, check, probe; an MCP server (payability mcp).",
		License:     license, Repository: repository{"git", repoURL},
		Homepage: "https://github.com/exchangerebel/payability",
		Keywords: []string{"x402", "payments", "mcp", "lint", "preflight"},
		MCPName:  mcpName,
		Bin:      map[string]string{"payability": "bin/payability.js"},
		Files:    []string{"bin/"},
		Engines:  map[string]string{"node": ">=18"},

		OptionalDependencies: optional,
	}
	readme := "# payability\n\n`npx payability preflight URL` or `npm i -g payability`: payability without Go. " +
		"This package is a launcher; npm installs the binary of your platform from one of its optional dependencies " +
		"(" + strings.Join(keys(optional), ", ") + "). Documentation: https://github.com/exchangerebel/payability\n\n" +
		"As an MCP server: `npx -y payability mcp`.\n"
	dir := filepath.Join(out, "payability")
	if err := writePackage(dir, m, readme, licenseText); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "bin", "payability.js"), launcher, 0o755)
}

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

func writePackage(dir string, manifest any, readme string, licenseText []byte) error {
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return err
	}
	for name, content := range map[string][]byte{"package.json": append(b, '\n'), "README.md": []byte(readme), "LICENSE": licenseText} {
		if err := writeFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, b []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, mode)
}

// maxBinary bounds each binary read from an archive.
const maxBinary = 256 << 20

// binariesOf reads the files named names at the top of a .tar.gz or .zip
// archive, each bounded by maxBinary; every one must be there.
func binariesOf(archive string, names []string) (map[string][]byte, error) {
	base := filepath.Base(archive)
	got := map[string][]byte{}
	missing := func() error {
		for _, n := range names {
			if _, ok := got[n]; !ok {
				return fmt.Errorf("%s holds no %s", base, n)
			}
		}
		return nil
	}
	if strings.HasSuffix(archive, ".zip") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", base, err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if _, seen := got[f.Name]; seen || !slices.Contains(names, f.Name) {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return nil, fmt.Errorf("%s: %v", base, err)
			}
			b, err := readBounded(rc, base)
			rc.Close()
			if err != nil {
				return nil, err
			}
			got[f.Name] = b
		}
		return got, missing()
	}
	fh, err := os.Open(archive)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", base, err)
	}
	defer fh.Close()
	gz, err := gzip.NewReader(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", base, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got, missing()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", base, err)
		}
		if _, seen := got[h.Name]; seen || h.Typeflag != tar.TypeReg || !slices.Contains(names, h.Name) {
			continue
		}
		b, err := readBounded(tr, base)
		if err != nil {
			return nil, err
		}
		got[h.Name] = b
	}
}

func readBounded(r io.Reader, base string) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, maxBinary+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", base, err)
	}
	if n > maxBinary {
		return nil, fmt.Errorf("%s: the binary is over %d bytes", base, maxBinary)
	}
	return buf.Bytes(), nil
}
