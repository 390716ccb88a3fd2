// Package release checks what tools/release/snapshot.sh (GoReleaser,
// `release --snapshot --clean`) wrote to dist/: the six archives with their
// files, checksums.txt, one SBOM per archive, static binaries stamped with the
// snapshot's version, and the container image's build context.
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
		if h.Name == "payability" && h.Mode&0o111 == 0 {
			t.Errorf("%s: payability is not executable (mode %o)", path, h.Mode)
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

// Six archives, each holding the binary, README, LICENSE and CHANGELOG as
// they are in the repository; every Linux binary is static.
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
		bin := "payability"
		if strings.HasPrefix(p, "windows/") {
			bin = "payability.exe"
		}
		var names []string
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		wantNames := []string{"CHANGELOG.md", "LICENSE", "README.md", bin}
		slices.Sort(wantNames)
		if !slices.Equal(names, wantNames) {
			t.Errorf("%s holds %v, want %v", name, names, wantNames)
		}
		for _, doc := range []string{"README.md", "LICENSE", "CHANGELOG.md"} {
			if !bytes.Equal(files[doc], repoFile(t, doc)) {
				t.Errorf("%s: %s is not the repository's", name, doc)
			}
		}
		if strings.HasPrefix(p, "linux/") {
			f, err := elf.NewFile(bytes.NewReader(files[bin]))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, prog := range f.Progs {
				if prog.Type == elf.PT_INTERP {
					t.Errorf("%s: the binary is dynamically linked (PT_INTERP): CGO_ENABLED=0 was not honoured", name)
				}
			}
			wantMachine := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}[p]
			if f.Machine != wantMachine {
				t.Errorf("%s: machine %v, want %v", name, f.Machine, wantMachine)
			}
		}
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

// The linux/amd64 binary of the archive prints the snapshot's version and
// commit.
func TestBinaryVersion(t *testing.T) {
	d := dist(t)
	m := readMetadata(t, d)
	files := archiveFiles(t, filepath.Join(d, archiveName(m.Version, "linux/amd64")))
	bin := filepath.Join(t.TempDir(), "payability")
	if err := os.WriteFile(bin, files["payability"], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("payability version: %v", err)
	}
	lines := strings.Split(string(out), "\n")
	if lines[0] != "payability "+m.Version {
		t.Errorf("first line %q, want %q", lines[0], "payability "+m.Version)
	}
	if !strings.Contains(string(out), "revision   "+m.Commit) {
		t.Errorf("version does not name the commit %s:\n%s", m.Commit, out)
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
