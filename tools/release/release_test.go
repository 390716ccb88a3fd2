// Package release checks what tools/release/snapshot.sh (GoReleaser,
// `release --snapshot --clean`) wrote to dist/: the six archives with their
// files (both binaries: payability, the quick build, and payabilityd, the
// full build), checksums.txt, one SBOM per archive, static binaries stamped
// with the snapshot's version, and the container image's build context.
//
// The snapshot takes minutes (six cross-compiles), so these tests read a dist
// that exists: PAYABILITY_RELEASE_DIST names it (.ci/run runs the script, then
// these tests). Without the variable they skip, saying how to run them.
package release

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// platforms are the release's targets: GOOS/GOARCH.
var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

func dist(t *testing.T) string {
	t.Helper()
	d := os.Getenv("PAYABILITY_RELEASE_DIST")
	if d == "" {
		t.Skip("PAYABILITY_RELEASE_DIST is not set: run tools/release/snapshot.sh, then PAYABILITY_RELEASE_DIST=$PWD/dist go test ./tools/release/")
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

type metadata struct {
	ProjectName string `json:"project_name"`
	Version     string `json:"version"`
	Commit      string `json:"commit"`
}

func readMetadata(t *testing.T, d string) metadata {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m metadata
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.ProjectName != "payability" || !strings.Contains(m.Version, "-SNAPSHOT-") || len(m.Commit) != 40 {
		t.Fatalf("metadata.json: %+v, want project payability, a snapshot version, a full commit", m)
	}
	return m
}

// archiveName is the archive of one platform.
func archiveName(version, platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return "payability_" + version + "_" + goos + "_" + goarch + ext
}

// archiveFiles reads every regular file of a .tar.gz or .zip.
func archiveFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			files[f.Name] = b
		}
		return files
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	gz, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = b
		if (h.Name == "payability" || h.Name == "payabilityd") && h.Mode&0o111 == 0 {
			t.Errorf("%s: %s is not executable (mode %o)", path, h.Name, h.Mode)
		}
	}
	return files
}

func repoFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// binaries are a platform's two binaries: payability, the quick build, and
// payabilityd, the full build it hands serve, monitor, mcp, ledger and store
// to (.exe on windows).
func binaries(platform string) (quick, full string) {
	if strings.HasPrefix(platform, "windows/") {
		return "payability.exe", "payabilityd.exe"
	}
	return "payability", "payabilityd"
}

// checkBuilds checks that quick is the quick build and full the full build
// of the one main package: what `go version -m` prints of each (the same
// build information, read with debug/buildinfo) differs only in the quick
// build's `build	-tags=quick`, so the two share flags, ldflags and
// environment. It works on ELF, Mach-O and PE alike.
func checkBuilds(t *testing.T, where string, quick, full []byte) {
	t.Helper()
	settings := func(name string, b []byte) (map[string]string, string) {
		bi, err := buildinfo.Read(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %s has no build information: %v", where, name, err)
		}
		if bi.Path != "github.com/exchangerebel/payability/cmd/payability" {
			t.Errorf("%s: %s is a build of %s, want ./cmd/payability", where, name, bi.Path)
		}
		m := map[string]string{}
		for _, s := range bi.Settings {
			m[s.Key] = s.Value
		}
		tags := m["-tags"]
		delete(m, "-tags")
		return m, tags
	}
	q, qtags := settings("payability", quick)
	f, ftags := settings("payabilityd", full)
	if qtags != "quick" {
		t.Errorf("%s: payability is built with -tags=%q, want the quick build (-tags=quick)", where, qtags)
	}
	if ftags != "" {
		t.Errorf("%s: payabilityd is built with -tags=%q, want the full build (no tags)", where, ftags)
	}
	// (-trimpath keeps -ldflags out of the build information: the version
	// test and checkStatic's stripped symbols show the ldflags.)
	if q["CGO_ENABLED"] != "0" || q["-trimpath"] != "true" {
		t.Errorf("%s: payability's build settings lack the release's CGO_ENABLED=0 or -trimpath: %v", where, q)
	}
	for k := range f {
		if _, ok := q[k]; !ok {
			q[k] = ""
		}
	}
	for k, v := range q {
		if f[k] != v {
			t.Errorf("%s: build setting %s is %q in payability, %q in payabilityd: the builds differ beyond -tags", where, k, v, f[k])
		}
	}
}

// Six archives, each holding both binaries (the quick build payability,
// the full build payabilityd), README, LICENSE and CHANGELOG as they are in
// the repository; every Linux binary is static.
func TestArchives(t *testing.T) {
	d := dist(t)
	m := readMetadata(t, d)
	entries, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".zip") {
			got = append(got, n)
		}
	}
	for _, p := range platforms {
		want = append(want, archiveName(m.Version, p))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("archives %v, want %v", got, want)
	}
	for _, p := range platforms {
		name := archiveName(m.Version, p)
		files := archiveFiles(t, filepath.Join(d, name))
		quick, full := binaries(p)
		var names []string
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		wantNames := []string{"CHANGELOG.md", "LICENSE", "README.md", quick, full}
		slices.Sort(wantNames)
		if !slices.Equal(names, wantNames) {
			t.Errorf("%s holds %v, want %v", name, names, wantNames)
		}
		for _, doc := range []string{"README.md", "LICENSE", "CHANGELOG.md"} {
			if !bytes.Equal(files[doc], repoFile(t, doc)) {
				t.Errorf("%s: %s is not the repository's", name, doc)
			}
		}
		if files[quick] == nil || files[full] == nil {
			continue
		}
		checkBuilds(t, name, files[quick], files[full])
		if strings.HasPrefix(p, "linux/") {
			for _, bin := range []string{quick, full} {
				checkStatic(t, name+": "+bin, files[bin], p)
			}
		}
	}
}

// checkStatic checks that b is a static, stripped ELF binary of platform (linux/…).
func checkStatic(t *testing.T, where string, b []byte, platform string) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked (PT_INTERP): CGO_ENABLED=0 was not honoured", where)
		}
	}
	if f.Section(".symtab") != nil {
		t.Errorf("%s has a symbol table: the release's -ldflags -s was not honoured", where)
	}
	wantMachine := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}[platform]
	if f.Machine != wantMachine {
		t.Errorf("%s: machine %v, want %v", where, f.Machine, wantMachine)
	}
}

// checksums.txt lists every archive and SBOM with its SHA-256, and every
// line verifies.
func TestChecksums(t *testing.T) {
	d := dist(t)
	m := readMetadata(t, d)
	fh, err := os.Open(filepath.Join(d, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	line := regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)
	listed := map[string]bool{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		mm := line.FindStringSubmatch(sc.Text())
		if mm == nil {
			t.Fatalf("checksums.txt: line %q is not `SHA256  NAME`", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(d, mm[2]))
		if err != nil {
			t.Fatalf("checksums.txt names %s: %v", mm[2], err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != mm[1] {
			t.Errorf("checksums.txt: %s does not verify", mm[2])
		}
		listed[mm[2]] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, p := range platforms {
		a := archiveName(m.Version, p)
		for _, n := range []string{a, a + ".sbom.json"} {
			if !listed[n] {
				t.Errorf("checksums.txt does not list %s", n)
			}
		}
	}
}

// One SPDX SBOM per archive, naming the binary's Go modules.
func TestSBOMs(t *testing.T) {
	d := dist(t)
	m := readMetadata(t, d)
	for _, p := range platforms {
		name := archiveName(m.Version, p) + ".sbom.json"
		b, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			SPDXVersion string `json:"spdxVersion"`
			Packages    []struct {
				Name string `json:"name"`
			} `json:"packages"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.HasPrefix(doc.SPDXVersion, "SPDX-2.") {
			t.Errorf("%s: spdxVersion %q", name, doc.SPDXVersion)
		}
		var pkgs []string
		for _, pk := range doc.Packages {
			pkgs = append(pkgs, pk.Name)
		}
		for _, mod := range []string{"github.com/jackc/pgx/v5", "modernc.org/sqlite", "stdlib"} {
			if !slices.Contains(pkgs, mod) {
				t.Errorf("%s does not list %s (it lists %d packages)", name, mod, len(pkgs))
			}
		}
	}
}

// Both linux/amd64 binaries of the archive print the snapshot's version and
// commit, and unpacked side by side the quick build hands a full-only
// command to payabilityd beside it (and, alone, says it needs it).
func TestBinaryVersion(t *testing.T) {
	d := dist(t)
	m := readMetadata(t, d)
	files := archiveFiles(t, filepath.Join(d, archiveName(m.Version, "linux/amd64")))
	dir := t.TempDir()
	for _, name := range []string{"payability", "payabilityd"} {
		bin := filepath.Join(dir, name)
		if err := os.WriteFile(bin, files[name], 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatalf("%s version: %v", name, err)
		}
		lines := strings.Split(string(out), "\n")
		if lines[0] != "payability "+m.Version {
			t.Errorf("%s version: first line %q, want %q", name, lines[0], "payability "+m.Version)
		}
		if !strings.Contains(string(out), "revision   "+m.Commit) {
			t.Errorf("%s version does not name the commit %s:\n%s", name, m.Commit, out)
		}
	}
	// PATH names an empty directory, so payabilityd is found beside payability or not at all.
	run := func(bin string) (string, error) {
		cmd := exec.Command(bin, "store", "-h")
		cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(filepath.Join(dir, "payability")); err != nil || !strings.HasPrefix(out, "usage: payability store migrate") {
		t.Errorf("payability store -h beside payabilityd: %v\n%s", err, out)
	}
	alone := filepath.Join(t.TempDir(), "payability")
	if err := os.WriteFile(alone, files["payability"], 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := run(alone); err == nil || !strings.Contains(out, `"store" needs the full build, payabilityd`) {
		t.Errorf("payability store -h without payabilityd: %v\n%s", err, out)
	}
}

// The release notes are CHANGELOG.md's section of the version, without its
// heading (GoReleaser skips its changelog pipe in a snapshot, so this checks
// notes.sh, which snapshot.sh and a tag's release pass as --release-notes).
func TestReleaseNotes(t *testing.T) {
	changelog := string(repoFile(t, "CHANGELOG.md"))
	_, rest, ok := strings.Cut(changelog, "## [Unreleased]\n")
	if !ok {
		t.Fatal("CHANGELOG.md has no Unreleased section")
	}
	if i := strings.Index(rest, "\n## ["); i >= 0 {
		rest = rest[:i+1]
	}
	for _, v := range []string{"Unreleased", "vUnreleased"} {
		got, err := exec.Command("bash", "notes.sh", v).Output()
		if err != nil {
			t.Fatalf("notes.sh %s: %v", v, err)
		}
		if strings.TrimSpace(string(got)) != strings.TrimSpace(rest) {
			t.Errorf("notes.sh %s is not CHANGELOG.md's Unreleased section", v)
		}
	}
	out, err := exec.Command("bash", "notes.sh", "v9.9.9").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no section ## [9.9.9]") {
		t.Errorf("notes.sh of a version with no section: %v %q", err, out)
	}
	if !strings.Contains(string(repoFile(t, "tools/release/snapshot.sh")), `--release-notes "$notes"`) {
		t.Error("snapshot.sh does not pass the notes")
	}
}
